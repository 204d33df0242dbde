//! Reading an installer's own step lines as progress.
//!
//! uv prints one line on stderr as it finishes each phase (`Resolved 3 packages in 4ms`,
//! `Prepared …`, `Installed …`) and one per package changed (` + demo==1.0`); pip prints a
//! line on stdout as it starts each thing (`Collecting demo`, `Downloading …`, `Installing
//! collected packages: …`). Those lines, and only those, become steps; a phase that ends the
//! work also moves the percentage.

use super::ProgressStep;

/// Whose lines are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StepKind {
    /// uv's summary lines.
    Uv,
    /// pip's log lines.
    Pip,
}

/// The longest line kept as a step's message, in characters.
const MESSAGE_LIMIT: usize = 300;

/// Line starts that are steps, with the percentage each phase reaches.
const UV_STEPS: &[(&str, Option<u32>)] = &[
    ("Resolved ", Some(30)),
    ("Prepared ", Some(60)),
    ("Uninstalled ", Some(75)),
    ("Installed ", Some(90)),
    ("Checked ", Some(90)),
    ("Audited ", Some(90)),
    ("Building ", None),
    ("Built ", None),
    ("Downloading ", None),
    ("Downloaded ", None),
    ("+ ", None),
    ("- ", None),
    ("~ ", None),
];

const PIP_STEPS: &[(&str, Option<u32>)] = &[
    ("Looking in ", None),
    ("Processing ", None),
    ("Collecting ", None),
    ("Requirement already satisfied", None),
    ("Downloading ", None),
    ("Building wheel", None),
    ("Created wheel", None),
    ("Installing collected packages", Some(60)),
    ("Attempting uninstall", None),
    ("Successfully uninstalled", None),
    ("Successfully installed", Some(90)),
];

/// The step `line` reports, if it is one of the installer's step lines.
pub(crate) fn step(kind: StepKind, line: &str) -> Option<ProgressStep> {
    let text = line.trim();
    let table = match kind {
        StepKind::Uv => UV_STEPS,
        StepKind::Pip => PIP_STEPS,
    };
    let (_, percentage) = table.iter().find(|(start, _)| text.starts_with(start))?;
    let message = if text.chars().count() > MESSAGE_LIMIT {
        let kept: String = text.chars().take(MESSAGE_LIMIT).collect();
        format!("{kept}…")
    } else {
        text.to_owned()
    };
    Some(ProgressStep {
        message,
        percentage: *percentage,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uv_phases_and_changes_are_steps() {
        let lines = [
            "Using Python 3.12.1 environment at: env",
            "Resolved 2 packages in 4ms",
            "Prepared 2 packages in 1ms",
            "Installed 2 packages in 0.69ms",
            " + alpha==2.0",
            "warning: something",
        ];
        let steps: Vec<_> = lines
            .iter()
            .filter_map(|l| step(StepKind::Uv, l))
            .map(|s| (s.message, s.percentage))
            .collect();
        assert_eq!(
            steps,
            [
                ("Resolved 2 packages in 4ms".to_owned(), Some(30)),
                ("Prepared 2 packages in 1ms".to_owned(), Some(60)),
                ("Installed 2 packages in 0.69ms".to_owned(), Some(90)),
                ("+ alpha==2.0".to_owned(), None),
            ]
        );
    }

    #[test]
    fn pip_log_lines_are_steps_and_long_ones_are_cut() {
        assert!(step(StepKind::Pip, "Collecting demo==1.0").is_some());
        assert_eq!(
            step(StepKind::Pip, "Successfully installed demo-1.0").and_then(|s| s.percentage),
            Some(90)
        );
        assert!(step(StepKind::Pip, "ERROR: No matching distribution").is_none());
        let long = format!("Processing {}", "x".repeat(1000));
        let cut = step(StepKind::Pip, &long).unwrap().message;
        assert_eq!(cut.chars().count(), MESSAGE_LIMIT + 1);
    }
}
