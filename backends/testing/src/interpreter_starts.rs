//! [`InterpreterStarts`]: counts how often a virtual environment's interpreter starts.

use std::path::{Path, PathBuf};

/// Counts the starts of the interpreter of a virtual environment: a `sitecustomize` in its
/// `site-packages`, which `site` imports at every start (including the isolated ones installers
/// make to look at an interpreter), appends a line to a file beside the environment.
#[derive(Debug)]
pub struct InterpreterStarts {
    counter: PathBuf,
}

impl InterpreterStarts {
    /// Starts counting for the venv at `root` (it must have one `lib/python*/site-packages`);
    /// the count goes to `<root>.starts`.
    pub fn count_in(root: &Path) -> InterpreterStarts {
        let counter = root.with_extension("starts");
        let lib = root.join("lib");
        let site_packages = std::fs::read_dir(&lib)
            .unwrap_or_else(|error| panic!("{} cannot be read: {error}", lib.display()))
            .filter_map(|entry| entry.ok().map(|entry| entry.path().join("site-packages")))
            .find(|dir| dir.is_dir())
            .unwrap_or_else(|| panic!("no site-packages under {}", lib.display()));
        let hook = format!(
            "with open({:?}, 'a') as counter:\n    counter.write('start\\n')\n",
            counter.display().to_string()
        );
        std::fs::write(site_packages.join("sitecustomize.py"), hook)
            .unwrap_or_else(|error| panic!("writing sitecustomize.py: {error}"));
        InterpreterStarts { counter }
    }

    /// The starts so far.
    pub fn count(&self) -> usize {
        std::fs::read_to_string(&self.counter).map_or(0, |text| text.lines().count())
    }
}
