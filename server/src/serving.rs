//! Serving until the process is told to stop: [`Server::run_stdio`] and
//! [`Server::run_listeners`].
//!
//! Every connection a listener yields is a session in a task of its own. When the stop comes
//! (`SIGTERM` or `SIGINT` for [`Server::run_listeners`]), accepting stops, every session's
//! input ends as at EOF, so each drains (its requests get the drain deadline, then what still
//! runs is dropped), and the server returns once every session has ended; then the method
//! groups' shutdown hooks run.

use std::future::Future;
use std::io;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use wsp_middleware::ExitStatus;

use crate::builder::is_about_one_peer;
use crate::stdio::UntilTerminated;
use crate::transport::{BoxConnection, BoxListener};
use crate::Server;

impl Server {
    /// Runs a stdio server to completion on a runtime of its own: serves stdin and stdout
    /// (see [`Server::serve_stdio`]), then runs the method groups' shutdown hooks (see
    /// [`Server::shutdown`]); returns the exit status the process should end with (2 when
    /// no runtime can be started).
    pub fn run_stdio(self) -> ExitStatus {
        let server = self.clone();
        self.run_to_completion(async move {
            server.start();
            server.serve_stdio().await
        })
    }

    /// Serves every connection of the listeners `bind` makes (it is polled inside the
    /// server's runtime, so it may bind tokio sockets) until `SIGTERM` or `SIGINT`, on a runtime of its
    /// own; then drains every session, runs the method groups' shutdown hooks and returns the
    /// exit status the process should end with: 0, or 2 when the runtime can't start or
    /// `bind` fails (its error is logged and printed).
    pub fn run_listeners(
        self,
        bind: impl Future<Output = io::Result<Vec<BoxListener>>>,
    ) -> ExitStatus {
        let server = self.clone();
        self.run_to_completion(async move {
            match bind.await {
                Ok(listeners) => {
                    let stop = crate::stdio::termination();
                    server.serve_listeners(listeners, stop).await
                }
                Err(error) => {
                    tracing::error!(%error, "cannot listen");
                    eprintln!("{}: cannot listen: {error}", server.name());
                    2
                }
            }
        })
    }

    /// Runs `serve` on a current-thread runtime of its own, then the shutdown hooks in it.
    fn run_to_completion(&self, serve: impl Future<Output = ExitStatus>) -> ExitStatus {
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(error) => {
                tracing::error!(%error, "cannot start the async runtime");
                eprintln!("{}: cannot start the async runtime: {error}", self.name());
                return 2;
            }
        };
        let status = runtime.block_on(async {
            let status = serve.await;
            self.shutdown().await;
            status
        });
        // A stdin that is not a pipe is read on the blocking pool, whose thread may still be
        // blocked in read(2); don't wait for it.
        runtime.shutdown_background();
        status
    }

    /// Serves every connection of `listeners`, each a session in a task of its own, until
    /// `stop` completes; then stops accepting, ends every session's input as at EOF (each
    /// drains) and returns 0 once every session has ended, or 1 when every
    /// listener failed for good before the stop (each failure is logged).
    pub async fn serve_listeners(
        self,
        listeners: Vec<BoxListener>,
        stop: impl Future<Output = ()>,
    ) -> ExitStatus {
        self.start();
        let stopping = CancellationToken::new();
        let sessions = TaskTracker::new();
        let accepting = TaskTracker::new();
        for listener in listeners {
            accepting.spawn(accept(
                self.clone(),
                listener,
                stopping.clone(),
                sessions.clone(),
            ));
        }
        accepting.close();
        let status = tokio::select! {
            () = stop => 0,
            () = accepting.wait() => 1,
        };
        stopping.cancel();
        accepting.wait().await;
        sessions.close();
        sessions.wait().await;
        status
    }

    /// Serves one connection until its session ends or `stopping` is cancelled, whichever
    /// comes first; a cancellation ends the input as EOF does.
    async fn serve_until(self, connection: BoxConnection, stopping: CancellationToken) {
        let (input, output, facts) = connection.open_described(self.max_frame_bytes());
        let input = UntilTerminated::until(input, stopping.cancelled_owned());
        self.serve_transport_with(input, output, facts).await;
    }
}

async fn accept(
    server: Server,
    mut listener: BoxListener,
    stopping: CancellationToken,
    sessions: TaskTracker,
) {
    loop {
        let accepted = tokio::select! {
            () = stopping.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok(connection) => {
                sessions.spawn(server.clone().serve_until(connection, stopping.clone()));
            }
            Err(error) if is_about_one_peer(&error) => {
                tracing::debug!(listener = listener.name(), %error, "a connection failed while being accepted");
            }
            Err(error) => {
                tracing::error!(listener = listener.name(), %error, "stopped accepting");
                return;
            }
        }
    }
}
