//! `wsp delete`'s question. Only a person at a terminal is asked: when stdin or stderr is not a
//! terminal (a script, a pipe, CI) nothing is asked and the delete goes ahead, as `--yes` does.

use std::io::{BufRead, IsTerminal, Write};

use super::commands::CliError;
use super::output::printable;

/// Whether to delete `id` (named `name`): `true` without asking when no terminal is there to
/// ask; otherwise the answer to `Delete ID (NAME) and its files? [y/N]`, `y` or `yes`.
pub async fn delete(id: &str, name: &str) -> Result<bool, CliError> {
    if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        return Ok(true);
    }
    let question = format!(
        "Delete {} ({}) and its files? [y/N] ",
        printable(id),
        printable(name)
    );
    let answer = tokio::task::spawn_blocking(move || ask(&question))
        .await
        .map_err(|e| CliError::Output(std::io::Error::other(e)))?
        .map_err(CliError::Output)?;
    let yes = matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes");
    if !yes {
        eprintln!("wsp: not deleted");
    }
    Ok(yes)
}

fn ask(question: &str) -> std::io::Result<String> {
    let mut stderr = std::io::stderr().lock();
    stderr.write_all(question.as_bytes())?;
    stderr.flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(answer)
}
