//! A pseudo-terminal for one command: the server keeps the master (close-on-exec, so no child
//! ever holds it), the command gets the slave as stdin, stdout and stderr and as its
//! controlling terminal (see `ChildSetup::pty_session`).
//!
//! The master is non-blocking on the reactor: its reader is the command's output, its writer
//! the command's input, and its size follows a `watch` channel (the kernel tells the command's
//! foreground process group with `SIGWINCH`).

use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use rustix::pty::OpenptFlags;
use rustix::termios::Winsize;
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::watch;
use wsp_protocol::interactive::PtySize;

/// What a command writes to its terminal's input to end it: the default `VEOF`, Ctrl-D.
pub(crate) const END_OF_INPUT: &[u8] = b"\x04";

/// A freshly opened pseudo-terminal.
pub(crate) struct Pty {
    master: Arc<AsyncFd<OwnedFd>>,
    slave: OwnedFd,
}

impl Pty {
    /// Opens one of `size`.
    pub(crate) fn open(size: PtySize) -> io::Result<Pty> {
        let flags = OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC;
        let master = rustix::pty::openpt(flags)?;
        rustix::pty::grantpt(&master)?;
        rustix::pty::unlockpt(&master)?;
        let slave = match rustix::pty::ioctl_tiocgptpeer(&master, flags) {
            Ok(slave) => slave,
            // Kernels before 4.13: by name.
            Err(_) => {
                use rustix::fs::{Mode, OFlags};
                let name = rustix::pty::ptsname(&master, Vec::new())?;
                let flags = OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC;
                rustix::fs::open(name.as_c_str(), flags, Mode::empty())?
            }
        };
        set_size(&master, size)?;
        rustix::io::ioctl_fionbio(&master, true)?;
        // SAFETY: the `OwnedFd` owns its descriptor for as long as the `AsyncFd` holds it, and
        // always reports that same descriptor.
        let master = unsafe { AsyncFd::register(master) }.map_err(|error| error.into_parts().1)?;
        Ok(Pty {
            master: Arc::new(master),
            slave,
        })
    }

    /// The slave, for one of the child's standard streams.
    pub(crate) fn slave(&self) -> io::Result<OwnedFd> {
        self.slave.try_clone()
    }

    /// The master's halves; the server's copy of the slave is closed, so the reader sees the
    /// end once every process of the command has closed it.
    pub(crate) fn into_master(self) -> (PtyReader, PtyWriter) {
        let Pty { master, slave } = self;
        drop(slave);
        (PtyReader(master.clone()), PtyWriter(master))
    }
}

fn set_size(master: impl AsFd, size: PtySize) -> io::Result<()> {
    let winsize = Winsize {
        ws_row: size.rows,
        ws_col: size.cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    Ok(rustix::termios::tcsetwinsize(master, winsize)?)
}

/// Sets the terminal's size.
#[derive(Clone)]
pub(crate) struct PtyResizer(Arc<AsyncFd<OwnedFd>>);

impl PtyResizer {
    /// Applies the size `sizes` holds if it changed since it was last seen: called before each
    /// write of input, so a resize the client sent before that input is in place when the
    /// command reads it.
    pub(crate) fn catch_up(&self, sizes: &mut watch::Receiver<PtySize>) {
        if sizes.has_changed().unwrap_or(false) {
            let size = *sizes.borrow_and_update();
            if let Err(error) = set_size(self.0.get_ref(), size) {
                tracing::debug!(%error, "resizing a command's terminal failed");
            }
        }
    }

    /// Gives the terminal every size `sizes` takes, until its sender is gone.
    pub(crate) async fn follow(self, mut sizes: watch::Receiver<PtySize>) {
        while sizes.changed().await.is_ok() {
            let size = *sizes.borrow_and_update();
            if let Err(error) = set_size(self.0.get_ref(), size) {
                tracing::debug!(%error, "resizing a command's terminal failed");
            }
        }
    }
}

/// The command's output, from the master.
pub(crate) struct PtyReader(Arc<AsyncFd<OwnedFd>>);

impl AsyncRead for PtyReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            let mut guard = ready!(self.0.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            let read = guard.try_io(|fd| Ok(rustix::io::read(fd.get_ref(), &mut *unfilled)?));
            match read {
                Ok(Ok(count)) => {
                    buf.advance(count);
                    return Poll::Ready(Ok(()));
                }
                // Linux answers EIO once no process holds the slave: that is the end.
                Ok(Err(error))
                    if error.raw_os_error() == Some(rustix::io::Errno::IO.raw_os_error()) =>
                {
                    return Poll::Ready(Ok(()))
                }
                Ok(Err(error)) => return Poll::Ready(Err(error)),
                Err(_would_block) => continue,
            }
        }
    }
}

/// The command's input, to the master.
pub(crate) struct PtyWriter(Arc<AsyncFd<OwnedFd>>);

impl PtyWriter {
    /// What sets the terminal's size.
    pub(crate) fn resizer(&self) -> PtyResizer {
        PtyResizer(self.0.clone())
    }
}

impl AsyncWrite for PtyWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            let mut guard = ready!(self.0.poll_write_ready(cx))?;
            match guard.try_io(|fd| Ok(rustix::io::write(fd.get_ref(), data)?)) {
                Ok(written) => return Poll::Ready(written),
                Err(_would_block) => continue,
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
