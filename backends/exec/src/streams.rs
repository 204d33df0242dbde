//! The child's standard streams as the run uses them: pipes, or a pseudo-terminal's master
//! (its output as stdout, its input, its size).

use std::io;
use std::os::fd::OwnedFd;

use rustix::fs::{Mode, OFlags};
use rustix::pipe::{pipe_with, PipeFlags};
use tokio::io::AsyncRead;
use tokio::net::unix::pipe;
use tokio::sync::watch;
use wsp_protocol::interactive::PtySize;

use super::pty::{self, Pty, PtyResizer};
use super::stdin::InputWriter;

/// The child's standard streams, and whether it leads a process group of its own.
pub(crate) struct ChildStdio {
    pub(crate) fds: [OwnedFd; 3],
    pub(crate) process_group: bool,
}

/// The server's ends of the child's pipes.
#[derive(Default)]
pub(crate) struct PipeEnds {
    stdin: Option<OwnedFd>,
    stdout: Option<OwnedFd>,
    stderr: Option<OwnedFd>,
}

/// The child's standard streams: the slave of `pty` for all three (the command then makes a
/// session of its own, which leads its own process group; a PID namespace's forwarder,
/// `namespaced`, still leads a group of its own), else pipes (stdin the null device without
/// `input`) in a process group of its own.
pub(crate) fn connect(
    pty: Option<&Pty>,
    input: bool,
    namespaced: bool,
) -> io::Result<(ChildStdio, PipeEnds)> {
    if let Some(pty) = pty {
        let stdio = ChildStdio {
            fds: [pty.slave()?, pty.slave()?, pty.slave()?],
            process_group: namespaced,
        };
        return Ok((stdio, PipeEnds::default()));
    }
    let (stdin, input) = if input {
        let (read, write) = pipe_with(PipeFlags::CLOEXEC)?;
        (read, Some(write))
    } else {
        let null = rustix::fs::open(
            c"/dev/null",
            OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        (null, None)
    };
    let (stdout_read, stdout) = pipe_with(PipeFlags::CLOEXEC)?;
    let (stderr_read, stderr) = pipe_with(PipeFlags::CLOEXEC)?;
    let stdio = ChildStdio {
        fds: [stdin, stdout, stderr],
        process_group: true,
    };
    let ends = PipeEnds {
        stdin: input,
        stdout: Some(stdout_read),
        stderr: Some(stderr_read),
    };
    Ok((stdio, ends))
}

/// A stream of the child's output.
pub(crate) type Output = Box<dyn AsyncRead + Unpin + Send>;

/// What the terminal's size follows.
pub(crate) type Terminal = (PtyResizer, watch::Receiver<PtySize>);

/// The child's streams, for the run to read and write.
pub(crate) struct ChildStreams {
    pub(crate) stdout: Option<Output>,
    pub(crate) stderr: Option<Output>,
    /// Where its input goes: its stdin pipe, or the terminal.
    pub(crate) input: Option<InputWriter>,
    /// What ends the input once it is written: nothing for a pipe (it is closed), the
    /// terminal's end-of-file character for a terminal.
    pub(crate) end: &'static [u8],
    /// The terminal's size and the sizes it follows.
    pub(crate) terminal: Option<Terminal>,
}

impl ChildStreams {
    /// The server's ends of the pipes, or the master of `pty` (whose size follows `sizes`);
    /// call inside the runtime.
    pub(crate) fn take(
        ends: PipeEnds,
        pty: Option<Pty>,
        sizes: Option<watch::Receiver<PtySize>>,
    ) -> io::Result<ChildStreams> {
        match pty {
            Some(pty) => {
                let (reader, writer) = pty.into_master();
                let terminal = sizes.map(|sizes| (writer.resizer(), sizes));
                Ok(ChildStreams {
                    stdout: Some(Box::new(reader)),
                    stderr: None,
                    input: Some(Box::new(writer)),
                    end: pty::END_OF_INPUT,
                    terminal,
                })
            }
            None => {
                let output = |end: Option<OwnedFd>| -> io::Result<Option<Output>> {
                    Ok(match end {
                        Some(end) => Some(Box::new(pipe::Receiver::from_owned_fd(end)?)),
                        None => None,
                    })
                };
                let input = match ends.stdin {
                    Some(end) => Some(Box::new(pipe::Sender::from_owned_fd(end)?) as InputWriter),
                    None => None,
                };
                Ok(ChildStreams {
                    stdout: output(ends.stdout)?,
                    stderr: output(ends.stderr)?,
                    input,
                    end: b"",
                    terminal: None,
                })
            }
        }
    }
}

/// Gives the command's terminal the sizes the client asks for, until the command exits.
pub(crate) async fn resize_until_exit(
    terminal: Option<Terminal>,
    mut exited: watch::Receiver<bool>,
) {
    let Some((resizer, sizes)) = terminal else {
        return;
    };
    tokio::select! {
        () = resizer.follow(sizes) => {}
        _ = exited.wait_for(|exited| *exited) => {}
    }
}
