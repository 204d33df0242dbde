//! How the client shows results and errors: tables and `key: value` lines for people, JSON for
//! `--json`.

use std::fmt::Write as _;

use serde_json::Value;
use wsp_protocol::{EnvironmentDetails, EnvironmentSummary, ErrorObjectOwned, Package};

/// `text` with control characters escaped, so a name can't break a table or a line.
pub fn printable(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_owned();
    }
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().collect()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// Rows under a header, columns padded to their widest cell (in characters), two spaces apart;
/// the last column is not padded.
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let header: Vec<String> = header.iter().map(|h| (*h).to_owned()).collect();
    for row in std::iter::once(&header).chain(rows) {
        let last = row.len().saturating_sub(1);
        for (i, (cell, width)) in row.iter().zip(&widths).enumerate() {
            if i == last {
                out.push_str(cell);
            } else {
                let pad = width - cell.chars().count();
                let _ = write!(out, "{cell}{:pad$}  ", "");
            }
        }
        out.push('\n');
    }
    out
}

/// The `environment/list` table: ID, NAME, PYTHON.
pub fn summaries(list: &[EnvironmentSummary]) -> String {
    if list.is_empty() {
        return "no environments\n".into();
    }
    let rows: Vec<Vec<String>> = list
        .iter()
        .map(|s| {
            vec![
                printable(&s.id),
                printable(&s.name),
                printable(&s.python_version),
            ]
        })
        .collect();
    table(&["ID", "NAME", "PYTHON"], &rows)
}

/// An extra value as a line shows it: strings bare, anything else as compact JSON.
fn extra_value(value: &Value) -> String {
    match value {
        Value::String(s) => printable(s),
        other => other.to_string(),
    }
}

/// An environment in full: `key: value` lines, then its packages as a table.
pub fn details(env: &EnvironmentDetails) -> String {
    let mut lines: Vec<(String, String)> = Vec::new();
    let full_version = env.extra.get("python_full_version").map(extra_value);
    let python = match full_version {
        Some(full) if full != env.python_version => format!("{} ({full})", env.python_version),
        _ => env.python_version.clone(),
    };
    lines.push(("id".into(), printable(&env.id)));
    lines.push(("name".into(), printable(&env.name)));
    lines.push(("python".into(), printable(&python)));
    lines.push(("interpreter".into(), printable(&env.interpreter_path)));
    for key in ["path", "backend"] {
        if let Some(value) = env.extra.get(key) {
            lines.push((key.into(), extra_value(value)));
        }
    }
    let shown = ["path", "backend", "python_full_version"];
    for (key, value) in &env.extra {
        if !shown.contains(&key.as_str()) {
            lines.push((printable(key), extra_value(value)));
        }
    }
    let packages = match env.installed_packages.len() {
        0 => "(none)".to_owned(),
        n => n.to_string(),
    };
    lines.push(("packages".into(), packages));
    let width = lines
        .iter()
        .map(|(k, _)| k.chars().count())
        .max()
        .unwrap_or(0)
        + 1;
    let mut out = String::new();
    for (key, value) in &lines {
        let label = format!("{key}:");
        let _ = writeln!(out, "{label:width$} {value}");
    }
    if !env.installed_packages.is_empty() {
        out.push_str(&indent(&packages_table(&env.installed_packages), "  "));
    }
    out
}

fn packages_table(packages: &[Package]) -> String {
    let rows: Vec<Vec<String>> = packages
        .iter()
        .map(|p| vec![printable(&p.name), printable(&p.version)])
        .collect();
    table(&["NAME", "VERSION"], &rows)
}

fn indent(text: &str, prefix: &str) -> String {
    text.lines()
        .map(|line| format!("{prefix}{line}\n"))
        .collect()
}

/// A JSON-RPC error for people, each fact said once.
///
/// A failure with a `reason` and a `detail` (`-31004`) is `wsp: VERB failed: DETAIL`, the reason
/// in parentheses when the verb doesn't already say it (`wsp: create failed (channel-unavailable):
/// ...`). Any other error is `wsp: error CODE: MESSAGE`. Then the data's other members, one per
/// line (each violation's message; lists joined), leaving out what the message already says.
pub fn rpc_error(error: &ErrorObjectOwned, verb: Option<&str>) -> String {
    let data: Option<Value> = error
        .data()
        .and_then(|d| serde_json::from_str(d.get()).ok());
    let failure = data
        .as_ref()
        .and_then(|data| Some((data.get("reason")?.as_str()?, data.get("detail")?.as_str()?)));
    let (mut out, said) = match (failure, verb) {
        (Some((reason, detail)), Some(verb)) => {
            let qualifier = if reason == format!("{verb}-failed") {
                String::new()
            } else {
                format!(" ({reason})")
            };
            let line = format!("wsp: {verb} failed{qualifier}:{}", multi_line(detail));
            (line, vec!["reason", "detail"])
        }
        _ => (
            format!("wsp: error {}: {}\n", error.code(), error.message()),
            Vec::new(),
        ),
    };
    let Some(data) = data else {
        return out;
    };
    let Value::Object(members) = data else {
        let _ = writeln!(out, "  {data}");
        return out;
    };
    for (key, value) in members {
        if said.contains(&key.as_str()) {
            continue;
        }
        match (&*key, &value) {
            ("violations", Value::Array(violations)) => {
                for violation in violations {
                    let message = violation.get("message").unwrap_or(violation);
                    let _ = writeln!(out, "  - {}", extra_value(message));
                }
            }
            (_, Value::String(text)) if out.contains(text.as_str()) => {}
            (_, Value::Array(items)) => {
                let items: Vec<String> = items.iter().map(extra_value).collect();
                let _ = writeln!(out, "  {}: {}", printable(&key), items.join(", "));
            }
            _ => {
                let _ = writeln!(out, "  {}: {}", printable(&key), extra_value(&value));
            }
        }
    }
    out
}

/// `text` after a colon: on the same line when it is one line, else each of its lines
/// indented on lines of their own.
fn multi_line(text: &str) -> String {
    let text = text.trim_end();
    if !text.contains('\n') {
        return format!(" {}\n", printable(text));
    }
    let mut out = String::from("\n");
    for line in text.lines() {
        let _ = writeln!(out, "  {}", printable(line));
    }
    out
}

/// A JSON-RPC error for `--json`: the error object on one line.
pub fn rpc_error_json(error: &ErrorObjectOwned) -> String {
    match serde_json::to_string(error) {
        Ok(json) => format!("{json}\n"),
        Err(_) => rpc_error(error, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tables_pad_every_column_but_the_last() {
        let rows = vec![vec!["env-1".into(), "démo".into(), "3.12".into()]];
        assert_eq!(
            table(&["ID", "NAME", "PYTHON"], &rows),
            "ID     NAME  PYTHON\nenv-1  démo  3.12\n"
        );
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(printable("a\tb\nc"), "a\\tb\\nc");
        assert_eq!(printable("plain é"), "plain é");
    }

    #[test]
    fn details_show_version_paths_backend_and_packages() {
        let env: EnvironmentDetails = serde_json::from_value(json!({
            "id": "env-0123456789ab", "name": "demo", "python_version": "3.12",
            "interpreter_path": "/s/envs/x/bin/python",
            "installed_packages": [{"name": "pip", "version": "24.0"}],
            "extra": {"backend": "venv", "path": "/s/envs/x", "python_full_version": "3.12.8",
                      "seeded": true}
        }))
        .unwrap();
        let text = details(&env);
        assert!(text.contains("python:      3.12 (3.12.8)\n"), "{text}");
        assert!(
            text.contains("interpreter: /s/envs/x/bin/python\n"),
            "{text}"
        );
        assert!(text.contains("backend:     venv\n"), "{text}");
        assert!(text.contains("seeded:      true\n"), "{text}");
        assert!(
            text.ends_with("packages:    1\n  NAME  VERSION\n  pip   24.0\n"),
            "{text}"
        );
    }

    #[test]
    fn errors_show_code_message_and_data() {
        let error = wsp_protocol::error::python_version_unavailable("3.99", &["3.12.8".into()]);
        let text = rpc_error(&error, Some("create"));
        assert_eq!(
            text,
            "wsp: error -31003: Python 3.99 is not available\n  available: 3.12.8\n"
        );
        let parsed: Value = serde_json::from_str(&rpc_error_json(&error)).unwrap();
        assert_eq!(parsed["data"]["available"], json!(["3.12.8"]));
    }

    #[test]
    fn a_failure_is_said_once_naming_the_command() {
        let reason = wsp_protocol::FailureReason::InstallFailed;
        let error = wsp_protocol::error::execution_failed(&reason, "no six", None);
        assert_eq!(
            rpc_error(&error, Some("install")),
            "wsp: install failed: no six\n"
        );
        assert_eq!(
            rpc_error(&error, Some("create")),
            "wsp: create failed (install-failed): no six\n"
        );
        let two_lines = wsp_protocol::error::execution_failed(&reason, "a\nb\n", None);
        assert_eq!(
            rpc_error(&two_lines, Some("install")),
            "wsp: install failed:\n  a\n  b\n"
        );
        let missing = wsp_protocol::error::environment_not_found("env-000000000000");
        assert_eq!(
            rpc_error(&missing, Some("get")),
            "wsp: error -31001: Environment not found: env-000000000000\n"
        );
    }
}
