//! Panics said through the log, never written to stderr directly.
//!
//! Rust's default hook writes a panic's message to stderr itself, and waits for the write. A
//! server whose client never reads its stderr would stop at the first panic once the pipe is
//! full, even though the request's panic is caught and answered. This hook hands the message,
//! its place and the thread to the log instead, which drops lines rather than wait.

use std::backtrace::{Backtrace, BacktraceStatus};
use std::panic::PanicHookInfo;

use wsp_middleware::catch_panic::panic_message;

/// Replaces the panic hook with one that logs at `error` (target `wsp::panic`).
pub fn log_panics() {
    std::panic::set_hook(Box::new(log_panic));
}

fn log_panic(info: &PanicHookInfo<'_>) {
    let thread = std::thread::current();
    let thread = thread.name().unwrap_or("<unnamed>");
    let location = info
        .location()
        .map(|at| format!("{}:{}:{}", at.file(), at.line(), at.column()))
        .unwrap_or_default();
    let message = panic_message(info.payload());
    // Captured only when RUST_BACKTRACE asks for it, as the default hook does.
    let backtrace = Backtrace::capture();
    match backtrace.status() {
        BacktraceStatus::Captured => tracing::error!(
            target: "wsp::panic",
            thread,
            location,
            %backtrace,
            "panicked: {message}"
        ),
        _ => tracing::error!(target: "wsp::panic", thread, location, "panicked: {message}"),
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    use super::*;

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_panic_is_logged_with_its_message_place_and_thread() {
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        let previous = std::panic::take_hook();
        log_panics();
        let panicked = std::thread::Builder::new()
            .name("panicking-handler".into())
            .spawn(move || {
                tracing::subscriber::with_default(subscriber, || {
                    let _ = std::panic::catch_unwind(|| panic!("bad state {}", 7));
                })
            })
            .unwrap()
            .join();
        std::panic::set_hook(previous);
        panicked.unwrap();
        let logged = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
        assert!(
            logged.contains("ERROR wsp::panic: panicked: bad state 7"),
            "{logged}"
        );
        assert!(logged.contains("thread=\"panicking-handler\""), "{logged}");
        assert!(logged.contains("src/logging/panics.rs:"), "{logged}");
    }
}
