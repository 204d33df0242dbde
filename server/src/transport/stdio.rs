//! This process's stdin and stdout as a [`Connection`](super::Connection) (on the reactor
//! when they are pipes or sockets, see [`crate::stdio`]).

use super::ByteStream;
use crate::stdio::{Stdin, Stdout};

/// stdin and stdout, `Content-Length` framed.
pub type Stdio = ByteStream<Stdin, Stdout>;

/// This process's stdin and stdout. Must be called inside a tokio runtime.
pub fn stdio() -> Stdio {
    let (stdin, stdout) = (crate::stdio::stdin(), crate::stdio::stdout());
    tracing::debug!(
        stdin_on_reactor = stdin.is_reactor(),
        stdout_on_reactor = stdout.is_reactor(),
        "serving stdio"
    );
    ByteStream::new(stdin, stdout)
        .of_kind(super::TransportName::Stdio)
        .with_drain_probe(Stdout::is_drained)
}
