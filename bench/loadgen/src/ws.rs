//! WebSocket servers (tokio-tungstenite): one JSON-RPC message per text frame, no
//! `Content-Length`. The same handshake, window and checks as on pipes; the writer feeds a
//! window's requests and flushes once, the reader matches every text frame as it comes.

use std::os::fd::AsFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures_util::stream::{SplitSink, SplitStream};
use futures_util::{SinkExt, StreamExt};
use tokio::net::TcpStream;
use tokio::sync::Notify;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::frame::scan;
use crate::load::{self, Io, Outcome, Plan};
use crate::many;
use crate::report::Report;
use crate::requests::{RequestShape, SendTimes};
use crate::responses::Responses;
use crate::sampler::Watch;
use crate::session::{Ending, Stopper};

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// Where and as whom to connect.
pub struct Target {
    pub url: String,
    /// Sent as `Authorization: Bearer <token>`.
    pub token: Option<String>,
    /// The server's pid, for its memory and CPU figures.
    pub pid: u32,
}

/// What one WebSocket run yields: the handshake's failure, or the figures.
pub struct Run {
    pub idle_rss_kib: Option<u64>,
    pub outcome: Option<Outcome>,
    pub ending: Option<Ending>,
}

/// Connects, shakes hands, runs the measured phase and ends the session with `shutdown` and
/// `exit`. A window of 1 (`Io::Single`) reads and writes on one thread; wider windows write
/// on a thread of their own, as on pipes.
pub fn run(target: &Target, plan: &Plan, init_params: &str, lsp: bool) -> Result<Run, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| err.to_string())?;
    let socket = runtime.block_on(async {
        tokio::time::timeout(plan.timeout, open(target, init_params, lsp))
            .await
            .map_err(|_| "timed out".to_string())
            .and_then(|opened| opened)
    });
    let socket = socket.map_err(|err| format!("handshake: {err}"))?;
    let idle_rss_kib = crate::procfs::rss(target.pid).map(|rss| rss.current_kib);
    let stopper = match socket.get_ref() {
        MaybeTlsStream::Plain(tcp) => tcp.as_fd().try_clone_to_owned().map(Stopper::Socket),
        _ => Err(std::io::Error::other("TLS is not supported")),
    }
    .map_err(|err| err.to_string())?;
    let (mut sink, mut stream) = socket.split();
    let outcome = load::measure(target.pid, stopper, plan, |watch, times, responses| {
        let credits = Credits::default();
        match plan.io {
            Io::Single => runtime.block_on(async {
                let (written, read) = tokio::join!(
                    write_requests(&mut sink, plan, times, &credits),
                    read_responses(&mut stream, watch, times, responses, &credits)
                );
                read.and(written)
            }),
            Io::Threads => std::thread::scope(|scope| {
                let writer = scope.spawn(|| {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .map_err(|err| err.to_string())?;
                    runtime.block_on(write_requests(&mut sink, plan, times, &credits))
                });
                let read = runtime.block_on(read_responses(
                    &mut stream,
                    watch,
                    times,
                    responses,
                    &credits,
                ));
                if read.is_err() {
                    credits.abort();
                }
                let written = writer
                    .join()
                    .unwrap_or_else(|_| Err("the writer thread panicked".into()));
                read.and(written)
            }),
        }
    });
    if outcome.timed_out {
        return Ok(Run {
            idle_rss_kib,
            outcome: Some(outcome),
            ending: None,
        });
    }
    let socket = sink
        .reunite(stream)
        .map_err(|_| "the socket's halves do not match".to_string())?;
    let ending = runtime.block_on(finish(socket, plan.requests + 1));
    Ok(Run {
        idle_rss_kib,
        outcome: Some(outcome),
        ending: Some(ending),
    })
}

/// Opens `count` connections, each initialized before the next, and holds them `hold` while
/// the server's memory is sampled (see [`many::hold_idle`]).
pub fn idle(
    target: &Target,
    count: usize,
    init_params: &str,
    lsp: bool,
    timeout: Duration,
    hold: Duration,
    report: &mut Report,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => return report.failures.push(err.to_string()),
    };
    many::hold_idle(report, target.pid, hold, || {
        runtime.block_on(async {
            let mut sockets = Vec::with_capacity(count);
            for index in 0..count {
                let socket = tokio::time::timeout(timeout, open(target, init_params, lsp))
                    .await
                    .map_err(|_| "timed out".to_string())
                    .and_then(|opened| opened)
                    .map_err(|err| format!("connection {index}: {err}"))?;
                sockets.push(socket);
            }
            Ok(sockets)
        })
    });
}

/// Connects and shakes hands: `initialize`, then `initialized` for LSP servers.
async fn open(target: &Target, init_params: &str, lsp: bool) -> Result<Socket, String> {
    let mut socket = connect(target).await?;
    if !call(&mut socket, 0, "initialize", Some(init_params)).await? {
        return Err("initialize was answered with an error".to_string());
    }
    if lsp {
        let initialized = r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#;
        send(&mut socket, initialized).await?;
    }
    Ok(socket)
}

async fn connect(target: &Target) -> Result<Socket, String> {
    let mut request = target
        .url
        .as_str()
        .into_client_request()
        .map_err(|err| format!("{}: {err}", target.url))?;
    if let Some(token) = &target.token {
        let value = HeaderValue::from_str(&format!("Bearer {token}"))
            .map_err(|_| "the token is not a header value".to_string())?;
        request.headers_mut().insert("authorization", value);
    }
    let (socket, _) = tokio_tungstenite::connect_async_with_config(request, None, true)
        .await
        .map_err(|err| format!("connecting to {}: {err}", target.url))?;
    Ok(socket)
}

async fn send(socket: &mut Socket, body: &str) -> Result<(), String> {
    socket
        .send(Message::text(body))
        .await
        .map_err(|err| format!("writing: {err}"))
}

/// Writes one request and waits for its response, skipping anything else; whether it was a
/// result.
async fn call(
    socket: &mut Socket,
    id: u64,
    method: &str,
    params: Option<&str>,
) -> Result<bool, String> {
    let params = params.map_or(String::new(), |params| format!(r#","params":{params}"#));
    let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}"{params}}}"#);
    send(socket, &body).await?;
    loop {
        let message = socket
            .next()
            .await
            .ok_or_else(|| format!("the connection ended before the {method} response"))?
            .map_err(|err| format!("reading the {method} response: {err}"))?;
        let Message::Text(text) = message else {
            continue;
        };
        let found = scan(text.as_bytes()).ok_or_else(|| format!("malformed message: {text}"))?;
        if found.id == Some(id) && !found.has_method {
            return Ok(found.has_result && found.error.is_none());
        }
    }
}

async fn finish(mut socket: Socket, shutdown_id: u64) -> Ending {
    let mut ending = Ending {
        connected: true,
        ..Ending::default()
    };
    let grace = Duration::from_secs(10);
    match tokio::time::timeout(grace, call(&mut socket, shutdown_id, "shutdown", None)).await {
        Ok(Ok(ok)) => ending.shutdown_ok = ok,
        Ok(Err(err)) => ending.error = Some(err),
        Err(_) => ending.error = Some("shutdown was not answered within 10 s".into()),
    }
    let _ = send(&mut socket, r#"{"jsonrpc":"2.0","method":"exit"}"#).await;
    let _ = tokio::time::timeout(grace, socket.close(None)).await;
    ending
}

/// Responses received so far, handed from the reader to the writer.
#[derive(Default)]
struct Credits {
    received: AtomicU64,
    aborted: std::sync::atomic::AtomicBool,
    changed: Notify,
}

impl Credits {
    fn abort(&self) {
        self.aborted.store(true, Ordering::SeqCst);
        self.changed.notify_one();
    }
}

async fn write_requests(
    sink: &mut SplitSink<Socket, Message>,
    plan: &Plan,
    times: &SendTimes,
    credits: &Credits,
) -> Result<(), String> {
    let shape = RequestShape::new(&plan.method, &plan.params);
    let mut next_id = 1;
    while next_id <= plan.requests {
        if credits.aborted.load(Ordering::SeqCst) {
            return Err("stopped writing: the reader gave up".into());
        }
        let in_flight = (next_id - 1) - credits.received.load(Ordering::SeqCst);
        let free = plan
            .window
            .saturating_sub(in_flight)
            .min(plan.requests + 1 - next_id);
        if free == 0 {
            credits.changed.notified().await;
            continue;
        }
        times.stamp(next_id, next_id + free);
        for id in next_id..next_id + free {
            let mut body = Vec::with_capacity(96);
            shape.push_body(&mut body, id);
            let text = String::from_utf8(body).map_err(|err| err.to_string())?;
            sink.feed(Message::text(text))
                .await
                .map_err(|err| format!("writing requests: {err}"))?;
        }
        sink.flush()
            .await
            .map_err(|err| format!("writing requests: {err}"))?;
        next_id += free;
    }
    Ok(())
}

async fn read_responses(
    stream: &mut SplitStream<Socket>,
    watch: &Watch,
    times: &SendTimes,
    responses: &mut Responses,
    credits: &Credits,
) -> Result<(), String> {
    while !responses.complete() {
        if watch.timed_out.load(Ordering::SeqCst) {
            credits.abort();
            return Err("timed out".into());
        }
        let message = match stream.next().await {
            Some(Ok(message)) => message,
            Some(Err(err)) => {
                credits.abort();
                return Err(format!("reading responses: {err}"));
            }
            None => {
                credits.abort();
                return Err("the connection ended before every response arrived".into());
            }
        };
        if let Message::Text(text) = message {
            responses.take_body(text.as_bytes(), times, times.now_ns());
            credits
                .received
                .store(responses.counts.unique, Ordering::SeqCst);
            credits.changed.notify_one();
        }
    }
    Ok(())
}
