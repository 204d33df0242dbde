//! Showing a request's `$/progress`: a progress bar when stderr is a terminal, plain lines
//! (the title, each step, the end) when it is not.

use std::io::{IsTerminal, Write};

use indicatif::{ProgressBar, ProgressStyle};
use wsp_protocol::{methods, ProgressToken, WorkDoneProgress};
use wsp_server::client::ServerNotification;

use super::output::printable;

/// The `work_done_token` the CLI sends.
pub const TOKEN: &str = "wsp-cli";

/// Draws the progress of the requests that carry [`TOKEN`].
pub struct ProgressView {
    bar: Option<ProgressBar>,
    terminal: bool,
}

impl Default for ProgressView {
    fn default() -> Self {
        ProgressView::new(std::io::stderr().is_terminal())
    }
}

impl ProgressView {
    /// A view drawing bars (`terminal`) or lines.
    pub fn new(terminal: bool) -> Self {
        ProgressView {
            bar: None,
            terminal,
        }
    }

    /// The `work_done_token` to put in a request's params.
    pub fn token() -> ProgressToken {
        ProgressToken::String(TOKEN.to_owned())
    }

    /// Shows `notification` if it is progress for [`TOKEN`]; ignores anything else.
    pub fn show(&mut self, notification: &ServerNotification) {
        if notification.method != methods::PROGRESS {
            return;
        }
        let token = notification
            .params
            .get("token")
            .and_then(ProgressToken::from_value);
        if token != Some(ProgressToken::String(TOKEN.to_owned())) {
            return;
        }
        let Some(value) = notification.params.get("value") else {
            return;
        };
        let Ok(value) = serde_json::from_value::<WorkDoneProgress>(value.clone()) else {
            return;
        };
        if self.terminal {
            self.draw(value);
        } else {
            Self::print(value);
        }
    }

    fn draw(&mut self, value: WorkDoneProgress) {
        match value {
            WorkDoneProgress::Begin {
                title,
                message,
                percentage,
            } => {
                let bar = ProgressBar::new(100);
                let style =
                    ProgressStyle::with_template("{prefix} [{bar:30}] {pos:>3}% {wide_msg}")
                        .unwrap_or_else(|_| ProgressStyle::default_bar())
                        .progress_chars("=> ");
                bar.set_style(style);
                bar.set_prefix(printable(&title));
                bar.set_message(printable(message.as_deref().unwrap_or("")));
                bar.set_position(percentage.map_or(0, u64::from));
                self.bar = Some(bar);
            }
            WorkDoneProgress::Report {
                message,
                percentage,
            } => {
                if let Some(bar) = &self.bar {
                    if let Some(message) = message {
                        bar.set_message(printable(&message));
                    }
                    if let Some(percentage) = percentage {
                        bar.set_position(u64::from(percentage));
                    }
                }
            }
            WorkDoneProgress::End { message } => {
                if let Some(bar) = self.bar.take() {
                    bar.finish_and_clear();
                }
                if let Some(message) = message {
                    line(&message);
                }
            }
        }
    }

    fn print(value: WorkDoneProgress) {
        match value {
            WorkDoneProgress::Begin { title, message, .. } => {
                line(&title);
                if let Some(message) = message {
                    line(&format!("  {message}"));
                }
            }
            WorkDoneProgress::Report {
                message: Some(message),
                percentage,
            } => match percentage {
                Some(p) => line(&format!("  [{p:>3}%] {message}")),
                None => line(&format!("  {message}")),
            },
            WorkDoneProgress::Report { message: None, .. } => {}
            WorkDoneProgress::End { message } => {
                if let Some(message) = message {
                    line(&message);
                }
            }
        }
    }
}

impl Drop for ProgressView {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

/// One line on stderr; a closed stderr is not worth failing the command for.
fn line(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = writeln!(stderr, "{}", printable(text));
}
