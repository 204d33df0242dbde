//! [`NonBlocking`]: a pipe or socket in non-blocking mode on the reactor, which a session may
//! read before the reactor has reported input.
//!
//! A read through the reactor waits for its report that input came: for a session that keeps
//! looking at its input while it works (busy polling), that report comes only at the runtime's
//! next look at the reactor, so the session finds nothing, and goes on finding nothing, until
//! then. Reading the descriptor at once costs one system call that may find nothing, and lets
//! a busy client's next requests in while the last ones are answered: over a Unix socket that
//! is an eighth more requests a second at 64 in flight (BENCHMARKS.md, "Unix sockets: reading
//! early while alone").
//!
//! A session that reads early never has to wait for the reactor, so beside other sessions it
//! would keep their input waiting: a flooding client's session, always finding more, leaves
//! the reactor unlooked-at for many of the runtime's turns, and a quiet client's one request
//! waits milliseconds. [`EarlyReads`] says when a descriptor may be read early: always for
//! stdio (one session per process), and for a connection of a listener only while it is the
//! one connection served.

use std::io::{self, IsTerminal};
use std::os::fd::{AsFd, OwnedFd};
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use rustix::fs::{fcntl_getfl, fcntl_setfl, fstat, FileType, OFlags};
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};

use crate::codec::PAGE_BYTES;
use crate::transport::{ConnectionSlots, EARLY_WRITE_BYTES};

/// The least [`NonBlocking::early_write_bytes`] answers.
pub const EARLY_WRITE_BYTES_AT_LEAST: usize = 256;

/// When a [`NonBlocking`] reads before the reactor has reported input (see the module docs).
#[derive(Debug, Clone)]
pub enum EarlyReads {
    /// Always: the descriptor's session is the only one on its thread (stdio). A server that
    /// serves stdio beside listeners (`examples/two_connections.rs`) still reads stdin early,
    /// so a stdio client that floods it can keep the listeners' clients waiting for a few of
    /// the runtime's turns.
    Always,
    /// While `slots` count one connection: this one.
    WhileAlone(ConnectionSlots),
    /// Never: every read waits for the reactor's report.
    Never,
}

impl EarlyReads {
    fn allowed(&self) -> bool {
        match self {
            EarlyReads::Always => true,
            EarlyReads::WhileAlone(slots) => slots.in_use() <= 1,
            EarlyReads::Never => false,
        }
    }
}

/// A pipe or socket switched to non-blocking mode and registered with the reactor. Its original
/// file status flags are put back when it drops.
#[derive(Debug)]
pub struct NonBlocking {
    fd: AsyncFd<OwnedFd>,
    original_flags: OFlags,
    /// A pipe, not a socket: the two ask differently whether the peer took everything.
    is_pipe: bool,
    early_reads: EarlyReads,
    /// A socket's writer: its sending side is shut down at `poll_shutdown` and when it drops.
    shuts_down: bool,
    /// The bytes the last read of a socket brought, shared by the two halves from
    /// [`NonBlocking::socket_halves`].
    last_read: Option<Arc<AtomicUsize>>,
}

impl NonBlocking {
    /// A duplicate of `handle` (a pipe or a socket, not a terminal), for reads and writes.
    /// `None` for anything else, or when it can't be registered.
    pub(crate) fn duplicate(
        handle: impl AsFd + IsTerminal,
        early_reads: EarlyReads,
    ) -> Option<Self> {
        let file_type = FileType::from_raw_mode(fstat(&handle).ok()?.st_mode);
        if !matches!(file_type, FileType::Fifo | FileType::Socket) || handle.is_terminal() {
            return None;
        }
        let owned = handle.as_fd().try_clone_to_owned().ok()?;
        let interest = Interest::READABLE | Interest::WRITABLE;
        match Self::register(owned, interest, file_type == FileType::Fifo, early_reads) {
            Ok(handle) => Some(handle),
            Err(error) => {
                tracing::debug!(%error, "stdio stays on the blocking pool");
                None
            }
        }
    }

    /// The reading side of a connected socket: registered for input only, so the reactor is
    /// not told each time the peer makes room for more output.
    fn socket_reader(socket: OwnedFd, early_reads: EarlyReads) -> io::Result<Self> {
        Self::register(socket, Interest::READABLE, false, early_reads)
    }

    /// The writing side of a connected socket (a duplicate of the reader's descriptor):
    /// registered for output only; its sending side is shut down when it is closed or drops.
    fn socket_writer(socket: OwnedFd) -> io::Result<Self> {
        let mut writer = Self::register(socket, Interest::WRITABLE, false, EarlyReads::Never)?;
        writer.shuts_down = true;
        Ok(writer)
    }

    /// The reading and the writing side of a connected socket, on two descriptors: the reader
    /// registered for input only, so the reactor is not told each time the peer makes room for
    /// more output; the writer for output only, its sending side shut down when it is closed
    /// or drops. The writer learns from the reader what the last read brought
    /// ([`early_write_bytes`](Self::early_write_bytes)). Must be called inside a tokio runtime.
    pub fn socket_halves(socket: OwnedFd, early_reads: EarlyReads) -> io::Result<(Self, Self)> {
        let writer = socket.try_clone()?;
        let mut reader = Self::socket_reader(socket, early_reads)?;
        let mut writer = Self::socket_writer(writer)?;
        let last_read = Arc::new(AtomicUsize::new(0));
        reader.last_read = Some(Arc::clone(&last_read));
        writer.last_read = Some(last_read);
        Ok((reader, writer))
    }

    /// How many bytes of answers to let wait before asking whether to write them early (see
    /// [`FrameWriter::with_early_bytes_from`](crate::codec::FrameWriter::with_early_bytes_from)):
    /// half of what the last read of the socket brought, between
    /// [`EARLY_WRITE_BYTES_AT_LEAST`] and a page. A client then gets the answers to a batch of
    /// its requests in about two writes, whatever it keeps in flight: after a fixed count
    /// instead, a client with fewer requests in flight than that got none before the batch was
    /// done, and one with many got them in more writes than needed (BENCHMARKS.md, "Unix
    /// sockets: early writes by what the last read brought"). [`EARLY_WRITE_BYTES`], a byte
    /// stream's default, before the first read or for a descriptor of its own.
    pub fn early_write_bytes(&self) -> usize {
        match self
            .last_read
            .as_ref()
            .map(|read| read.load(Ordering::Relaxed))
        {
            Some(read) if read > 0 => (read / 2).clamp(EARLY_WRITE_BYTES_AT_LEAST, PAGE_BYTES),
            _ => EARLY_WRITE_BYTES,
        }
    }

    fn register(
        fd: OwnedFd,
        interest: Interest,
        is_pipe: bool,
        early_reads: EarlyReads,
    ) -> io::Result<Self> {
        let original_flags = fcntl_getfl(&fd)?;
        fcntl_setfl(&fd, original_flags | OFlags::NONBLOCK)?;
        // SAFETY: the `OwnedFd` owns its descriptor for as long as the `AsyncFd` holds it, and
        // always reports that same descriptor.
        match unsafe { AsyncFd::register_with_interest(fd, interest) } {
            Ok(fd) => Ok(NonBlocking {
                fd,
                original_flags,
                is_pipe,
                early_reads,
                shuts_down: false,
                last_read: None,
            }),
            Err(error) => {
                let (fd, error) = error.into_parts();
                let _ = fcntl_setfl(&fd, original_flags);
                Err(error)
            }
        }
    }

    /// Whether the peer has read everything written: a pipe holding no unread byte, or a
    /// socket with nothing sent that its peer has not taken (`SIOCOUTQ`; never on systems
    /// other than Linux).
    pub fn is_drained(&self) -> bool {
        let fd = self.fd.get_ref();
        if self.is_pipe {
            return rustix::io::ioctl_fionread(fd).is_ok_and(|unread| unread == 0);
        }
        #[cfg(target_os = "linux")]
        {
            use rustix::ioctl::{ioctl, Getter, Opcode};
            // SAFETY: `SIOCOUTQ` (`TIOCOUTQ`) is a getter opcode that gets a `c_int`.
            let unsent = unsafe {
                ioctl(
                    fd,
                    Getter::<{ libc::TIOCOUTQ as Opcode }, libc::c_int>::new(),
                )
            };
            unsent.is_ok_and(|unsent| unsent == 0)
        }
        #[cfg(not(target_os = "linux"))]
        false
    }

    fn poll_write_io<R>(
        &self,
        cx: &mut Context<'_>,
        mut io: impl FnMut(&OwnedFd) -> io::Result<R>,
    ) -> Poll<io::Result<R>> {
        loop {
            let mut guard = ready!(self.fd.poll_write_ready(cx))?;
            match guard.try_io(|fd| io(fd.get_ref())) {
                Ok(result) => return Poll::Ready(result),
                Err(_would_block) => continue,
            }
        }
    }
}

impl Drop for NonBlocking {
    fn drop(&mut self) {
        if self.shuts_down {
            let _ = rustix::net::shutdown(self.fd.get_ref(), rustix::net::Shutdown::Write);
        }
        let _ = fcntl_setfl(self.fd.get_ref(), self.original_flags);
    }
}

impl AsyncRead for NonBlocking {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let early = self.early_reads.allowed();
        let mut found_nothing = false;
        let read = loop {
            match self.fd.poll_read_ready(cx) {
                Poll::Ready(guard) => {
                    let mut guard = guard?;
                    let wanted = buf.remaining();
                    match guard.try_io(|fd| read_unfilled(fd.get_ref(), buf)) {
                        // A read that did not fill the buffer most likely took all there was:
                        // without early reads, the next one waits for the reactor's report
                        // (as tokio's own sockets do), so a client that keeps writing can't
                        // keep its session reading while other sessions' input waits.
                        Ok(Ok(read)) if read < wanted && !early => {
                            guard.clear_ready();
                            break read;
                        }
                        Ok(read) => break read?,
                        Err(_would_block) => found_nothing = true,
                    }
                }
                Poll::Pending if !early || found_nothing => return Poll::Pending,
                // The reactor has not seen input since the last read found none: read early
                // (the waker is registered, so nothing can be missed). The read takes from the
                // task's budget as the reactor's reads do.
                Poll::Pending => {
                    let coop = ready!(tokio::task::coop::poll_proceed(cx));
                    match read_unfilled(self.fd.get_ref(), buf) {
                        Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                            return Poll::Pending
                        }
                        read => {
                            coop.made_progress();
                            break read?;
                        }
                    }
                }
            }
        };
        if let (Some(last_read), true) = (&self.last_read, read > 0) {
            last_read.store(read, Ordering::Relaxed);
        }
        // SAFETY: `read(2)` initialized the first `read` bytes of the unfilled part.
        unsafe { buf.assume_init(read) };
        buf.advance(read);
        Poll::Ready(Ok(()))
    }
}

/// Reads straight into the unfilled part of `buf`: zeroing it first (`initialize_unfilled`)
/// cost a memset of the whole read buffer, up to 64 KiB, for every read.
fn read_unfilled(fd: &OwnedFd, buf: &mut ReadBuf<'_>) -> io::Result<usize> {
    // SAFETY: `read(2)` only writes into these bytes; nothing de-initializes them.
    let unfilled = unsafe { buf.unfilled_mut() };
    rustix::io::read(fd, unfilled)
        .map(|(filled, _)| filled.len())
        .map_err(io::Error::from)
}

impl AsyncWrite for NonBlocking {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_io(cx, |fd| rustix::io::write(fd, buf).map_err(io::Error::from))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.poll_write_io(cx, |fd| {
            rustix::io::writev(fd, bufs).map_err(io::Error::from)
        })
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    /// A socket's writer shuts its sending side down (the peer reads EOF even while the
    /// reader's descriptor stays open); a pipe or stdio's socket is left as it is.
    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.shuts_down {
            rustix::net::shutdown(self.fd.get_ref(), rustix::net::Shutdown::Write)?;
        }
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests;
