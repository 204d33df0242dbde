//! The child's standard streams as the run uses them: pipes, or a pseudo-terminal's master
//! (its output as stdout, its input, its size).

use std::process::Stdio;

use tokio::io::AsyncRead;
use tokio::process::{Child, Command};
use tokio::sync::watch;
use wsp_protocol::interactive::PtySize;

use super::pty::{self, Pty, PtyResizer};
use super::stdin::InputWriter;

/// Gives `command` its standard streams: the slave of `pty` for all three (the command then
/// makes a session of its own, which leads its own process group; a PID namespace's forwarder,
/// `namespaced`, still leads a group of its own), else pipes (stdin the null device without
/// `input`) in a process group of its own.
pub(crate) fn connect(
    command: &mut Command,
    pty: Option<&Pty>,
    input: bool,
    namespaced: bool,
) -> std::io::Result<()> {
    match pty {
        Some(pty) => {
            command
                .stdin(pty.slave()?)
                .stdout(pty.slave()?)
                .stderr(pty.slave()?);
            if namespaced {
                command.process_group(0);
            }
        }
        None => {
            let stdin = if input { Stdio::piped() } else { Stdio::null() };
            command
                .stdin(stdin)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .process_group(0);
        }
    }
    Ok(())
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
    /// The pipes of `child`, or the master of `pty` (whose size follows `sizes`).
    pub(crate) fn take(
        child: &mut Child,
        pty: Option<Pty>,
        sizes: Option<watch::Receiver<PtySize>>,
    ) -> ChildStreams {
        match pty {
            Some(pty) => {
                let (reader, writer) = pty.into_master();
                let terminal = sizes.map(|sizes| (writer.resizer(), sizes));
                ChildStreams {
                    stdout: Some(Box::new(reader)),
                    stderr: None,
                    input: Some(Box::new(writer)),
                    end: pty::END_OF_INPUT,
                    terminal,
                }
            }
            None => ChildStreams {
                stdout: child.stdout.take().map(|pipe| Box::new(pipe) as Output),
                stderr: child.stderr.take().map(|pipe| Box::new(pipe) as Output),
                input: child.stdin.take().map(|pipe| Box::new(pipe) as InputWriter),
                end: b"",
                terminal: None,
            },
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
