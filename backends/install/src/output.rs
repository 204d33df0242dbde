//! Running an installer: its output read as it comes, step lines sent as progress, and its
//! own error message kept for the answer when it fails.

use std::collections::BTreeMap;
use wsp_protocol::FailureReason;

use tokio::sync::mpsc;
use wsp_protocol::results::OutputStream;

use super::steps::{step, StepKind};
use super::{ProgressSink, ProgressStep};
use wsp_backend::BackendError;
use wsp_exec::{resolve_cwd, run, Activation, OutputChunk, RunOptions, RunSpec, SandboxPolicy};

/// The most bytes of the installer's message an error carries (its end, where installers put
/// the error).
pub const MAX_DETAIL_BYTES: usize = 64 * 1024;

/// The most bytes of each stream read from an installer; past it, output is discarded.
const CAPTURE_BYTES: u64 = 4 * 1024 * 1024;

/// The longest partial line held while waiting for its end.
const LINE_LIMIT: usize = 4096;

/// Output chunks in flight between the installer's pipes and this reader.
const CHUNKS_IN_FLIGHT: usize = 16;

/// The environment every installer run gets on top of the server's.
pub(super) const INSTALLER_ENV: [(&str, &str); 4] = [
    // pip's log reaches its pipe line by line, not at exit.
    ("PYTHONUNBUFFERED", "1"),
    ("UV_PYTHON_DOWNLOADS", "never"),
    ("UV_NO_PROGRESS", "1"),
    ("PIP_NO_INPUT", "1"),
];

/// Runs `argv` as a command of the environment and turns a failure into [`FailureReason::InstallFailed`].
pub(super) async fn run_installer(
    activation: &Activation,
    environment_id: &str,
    argv: &[String],
    kind: StepKind,
    progress: Option<ProgressSink>,
    sandbox: Option<SandboxPolicy>,
) -> Result<(), BackendError> {
    let cwd = resolve_cwd(&activation.root, None)
        .map_err(|message| BackendError::failed(FailureReason::InstallFailed, message))?;
    let env: BTreeMap<String, String> = INSTALLER_ENV
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    let (sink, mut chunks) = mpsc::channel::<OutputChunk>(CHUNKS_IN_FLIGHT);
    let options = RunOptions {
        max_output_bytes: Some(CAPTURE_BYTES),
        output: Some(sink),
        sandbox,
        ..RunOptions::default()
    };
    let command = run(RunSpec {
        activation,
        environment_id,
        argv,
        cwd: &cwd,
        env: &env,
        options,
    });
    let mut reader = Reader::new(kind, progress);
    let read = async {
        while let Some(chunk) = chunks.recv().await {
            reader.take(chunk).await;
        }
        reader.finish().await;
    };
    let (ran, ()) = tokio::join!(command, read);
    let ran = ran.map_err(|error| error.with_reason(FailureReason::InstallFailed))?;
    if ran.exit_code == 0 {
        return Ok(());
    }
    let message = if ran.stderr.trim().is_empty() {
        &ran.stdout
    } else {
        &ran.stderr
    };
    let mut detail = tail(message.trim(), MAX_DETAIL_BYTES).to_owned();
    if detail.is_empty() {
        detail = format!("`{}` exited with {}", argv.join(" "), ran.exit_code);
    }
    Err(BackendError::failed(FailureReason::InstallFailed, detail))
}

/// The last at most `limit` bytes of `text`, starting on a character boundary.
pub(crate) fn tail(text: &str, limit: usize) -> &str {
    if text.len() <= limit {
        return text;
    }
    let mut start = text.len() - limit;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// Splits the installer's output into lines and sends its step lines on.
struct Reader {
    kind: StepKind,
    progress: Option<ProgressSink>,
    partial: [String; 2],
    percentage: u32,
}

impl Reader {
    fn new(kind: StepKind, progress: Option<ProgressSink>) -> Self {
        Reader {
            kind,
            progress,
            partial: [String::new(), String::new()],
            percentage: 0,
        }
    }

    async fn take(&mut self, chunk: OutputChunk) {
        let index = match chunk.stream {
            OutputStream::Stdout => 0,
            OutputStream::Stderr => 1,
        };
        let mut rest = chunk.data.as_str();
        while let Some(end) = rest.find(['\n', '\r']) {
            let mut line = std::mem::take(&mut self.partial[index]);
            push_bounded(&mut line, &rest[..end]);
            self.line(&line).await;
            rest = &rest[end + 1..];
        }
        push_bounded(&mut self.partial[index], rest);
    }

    async fn finish(&mut self) {
        for index in 0..2 {
            let line = std::mem::take(&mut self.partial[index]);
            self.line(&line).await;
        }
    }

    async fn line(&mut self, line: &str) {
        let Some(progress) = &self.progress else {
            return;
        };
        let Some(ProgressStep {
            message,
            percentage,
        }) = step(self.kind, line)
        else {
            return;
        };
        // Percentages never go back.
        let percentage = percentage.filter(|p| *p >= self.percentage);
        if let Some(p) = percentage {
            self.percentage = p;
        }
        let _ = progress
            .send(ProgressStep {
                message,
                percentage,
            })
            .await;
    }
}

fn push_bounded(line: &mut String, text: &str) {
    let room = LINE_LIMIT.saturating_sub(line.len());
    line.push_str(head(text, room));
}

/// The first at most `limit` bytes of `text`, ending on a character boundary.
fn head(text: &str, limit: usize) -> &str {
    if text.len() <= limit {
        return text;
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tails_start_on_character_boundaries() {
        assert_eq!(tail("abc", 10), "abc");
        assert_eq!(tail("abcdef", 3), "def");
        assert_eq!(tail("aé", 1), "");
        assert_eq!(tail("aéb", 2), "b");
        assert_eq!(head("éa", 1), "");
    }

    #[tokio::test]
    async fn lines_split_across_chunks_are_whole_steps() {
        let (sink, mut steps) = mpsc::channel(8);
        let mut reader = Reader::new(StepKind::Uv, Some(sink));
        let chunk = |data: &str| OutputChunk {
            stream: OutputStream::Stderr,
            data: data.to_owned(),
        };
        reader.take(chunk("Resol")).await;
        reader.take(chunk("ved 1 package in 1ms\nPrepared 1")).await;
        reader
            .take(chunk(" package in 2ms\nInstalled 1 package"))
            .await;
        reader.finish().await;
        drop(reader);
        let mut seen = Vec::new();
        while let Some(step) = steps.recv().await {
            seen.push((step.message, step.percentage));
        }
        assert_eq!(
            seen,
            [
                ("Resolved 1 package in 1ms".to_owned(), Some(30)),
                ("Prepared 1 package in 2ms".to_owned(), Some(60)),
                ("Installed 1 package".to_owned(), Some(90)),
            ]
        );
    }
}
