//! Python distributions for tests and demos, built without a network or a build tool: wheels,
//! sdists with an in-tree build backend, and a PEP 503 simple index over them.
//!
//! A [`Distribution`] is a name, a version, requirements and some files (by default one module,
//! `<name>.py`, that sets `VERSION`). [`Distribution::write_wheel`] writes a
//! `py3-none-any` wheel (a zip with a `.dist-info` holding `METADATA`, `WHEEL` and `RECORD`);
//! [`Distribution::write_sdist`] a `.tar.gz` whose `pyproject.toml` names a build backend
//! shipped inside it (`backend-path = ["."]`, no build requirements), so pip and uv build it
//! offline. Its `build_hook` is Python run at the start of each build: a test can make a build
//! block, record when it ran, or fail. [`write_simple_index`] lays files out as an index that
//! any static HTTP server (`python -m http.server`) serves.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use base64::Engine;
use sha2::{Digest, Sha256};

/// A distribution to build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Distribution {
    /// The name as `METADATA` spells it.
    pub name: String,
    /// The version.
    pub version: String,
    /// `Requires-Dist` lines (PEP 508 requirements).
    pub requires: Vec<String>,
    /// `Provides-Extra` lines.
    pub extras: Vec<String>,
    /// Files installed into site-packages: relative path and contents.
    pub files: Vec<(String, String)>,
}

impl Distribution {
    /// `name` at `version`, with one module, [`Distribution::module`]`.py`, whose `VERSION` is
    /// the version.
    pub fn new(name: &str, version: &str) -> Self {
        let mut distribution = Distribution {
            name: name.to_owned(),
            version: version.to_owned(),
            requires: Vec::new(),
            extras: Vec::new(),
            files: Vec::new(),
        };
        let module = format!("{}.py", distribution.module());
        distribution
            .files
            .push((module, format!("VERSION = {version:?}\n")));
        distribution
    }

    /// Adds a requirement.
    pub fn requires(mut self, requirement: &str) -> Self {
        self.requires.push(requirement.to_owned());
        self
    }

    /// Declares an extra (`Provides-Extra`), which requirements can then depend on with
    /// `; extra == "<extra>"`.
    pub fn provides_extra(mut self, extra: &str) -> Self {
        self.extras.push(extra.to_owned());
        self
    }

    /// The module the default file defines: the name with `-` and `.` as `_`, lowercased.
    pub fn module(&self) -> String {
        self.name.replace(['-', '.'], "_").to_lowercase()
    }

    /// The name as distribution file names spell it (PEP 427: runs of `-_.` as `_`).
    fn file_stem(&self) -> String {
        format!("{}-{}", self.name.replace(['-', '.'], "_"), self.version)
    }

    fn metadata(&self) -> String {
        let mut text = format!(
            "Metadata-Version: 2.1\nName: {}\nVersion: {}\n",
            self.name, self.version
        );
        for extra in &self.extras {
            text.push_str(&format!("Provides-Extra: {extra}\n"));
        }
        for requirement in &self.requires {
            text.push_str(&format!("Requires-Dist: {requirement}\n"));
        }
        text
    }

    /// The wheel's entries: the files, then `METADATA`, `WHEEL` and `RECORD`.
    fn wheel_entries(&self) -> Vec<(String, String)> {
        let dist_info = format!("{}.dist-info", self.file_stem());
        let mut entries = self.files.clone();
        entries.push((format!("{dist_info}/METADATA"), self.metadata()));
        let wheel = "Wheel-Version: 1.0\nGenerator: wsp-testing\nRoot-Is-Purelib: true\n\
                     Tag: py3-none-any\n";
        entries.push((format!("{dist_info}/WHEEL"), wheel.to_owned()));
        let mut record = String::new();
        for (path, contents) in &entries {
            let digest = Sha256::digest(contents.as_bytes());
            let hash = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest);
            record.push_str(&format!("{path},sha256={hash},{}\n", contents.len()));
        }
        record.push_str(&format!("{dist_info}/RECORD,,\n"));
        entries.push((format!("{dist_info}/RECORD"), record));
        entries
    }

    /// Writes `<name>-<version>-py3-none-any.whl` into `dir` (created if missing).
    pub fn write_wheel(&self, dir: &Path) -> io::Result<PathBuf> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(format!("{}-py3-none-any.whl", self.file_stem()));
        let mut zip = zip::ZipWriter::new(std::fs::File::create(&path)?);
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated);
        for (name, contents) in self.wheel_entries() {
            zip.start_file(name, options).map_err(io::Error::other)?;
            zip.write_all(contents.as_bytes())?;
        }
        zip.finish().map_err(io::Error::other)?;
        Ok(path)
    }

    /// Writes `<name>-<version>.tar.gz` into `dir` (created if missing): an sdist built by the
    /// backend it ships, which first runs `build_hook` (Python; may be empty).
    pub fn write_sdist(&self, dir: &Path, build_hook: &str) -> io::Result<PathBuf> {
        std::fs::create_dir_all(dir)?;
        let stem = self.file_stem();
        let path = dir.join(format!("{stem}.tar.gz"));
        let gz = flate2::write::GzEncoder::new(
            std::fs::File::create(&path)?,
            flate2::Compression::fast(),
        );
        let mut tar = tar::Builder::new(gz);
        let entries = self.wheel_entries();
        let backend = build_backend(&stem, build_hook, &entries);
        let mut members = vec![
            ("PKG-INFO".to_owned(), self.metadata()),
            ("pyproject.toml".to_owned(), self.pyproject()),
            ("wsp_build_backend.py".to_owned(), backend),
        ];
        members.extend(self.files.iter().cloned());
        for (name, contents) in members {
            let mut header = tar::Header::new_gnu();
            header.set_size(contents.len() as u64);
            header.set_mode(0o644);
            header.set_mtime(1_700_000_000);
            tar.append_data(&mut header, format!("{stem}/{name}"), contents.as_bytes())?;
        }
        tar.into_inner()?.finish()?;
        Ok(path)
    }

    fn pyproject(&self) -> String {
        format!(
            "[build-system]\nrequires = []\nbuild-backend = \"wsp_build_backend\"\n\
             backend-path = [\".\"]\n\n[project]\nname = {:?}\nversion = {:?}\n",
            self.name, self.version
        )
    }
}

/// A PEP 517 build backend that writes the wheel whose entries it was given.
fn build_backend(stem: &str, hook: &str, entries: &[(String, String)]) -> String {
    // Base64 keeps any text a valid Python literal.
    let encode = |text: &str| base64::engine::general_purpose::STANDARD.encode(text);
    let entries = encode(&serde_json::to_string(entries).unwrap_or_else(|_| "[]".to_owned()));
    let hook = encode(hook);
    format!(
        r#""""The build backend of a test sdist: runs its hook, then writes its wheel."""
import base64, json, os, zipfile

ENTRIES = json.loads(base64.b64decode("{entries}").decode())
HOOK = base64.b64decode("{hook}").decode()
WHEEL = "{stem}-py3-none-any.whl"


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    exec(HOOK, {{}})
    with zipfile.ZipFile(os.path.join(wheel_directory, WHEEL), "w") as wheel:
        for name, contents in ENTRIES:
            wheel.writestr(name, contents)
    return WHEEL
"#
    )
}

/// Copies `files` (wheels, sdists) into `dir/files/` and writes a PEP 503 simple index of them
/// at `dir/simple/`: `index.html` listing each project, and `<project>/index.html` linking to
/// its files. Served over HTTP from `dir`, the index URL is `http://<host>/simple/`.
pub fn write_simple_index(dir: &Path, files: &[PathBuf]) -> io::Result<()> {
    let store = dir.join("files");
    std::fs::create_dir_all(&store)?;
    let mut projects: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for file in files {
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| io::Error::other(format!("{} has no UTF-8 name", file.display())))?;
        std::fs::copy(file, store.join(name))?;
        let project = name.split('-').next().unwrap_or(name);
        projects
            .entry(wsp_install::packages::normalize_name(project))
            .or_default()
            .push(name.to_owned());
    }
    let simple = dir.join("simple");
    std::fs::create_dir_all(&simple)?;
    let mut root = String::from("<!DOCTYPE html>\n<html><body>\n");
    for (project, names) in &projects {
        root.push_str(&format!("<a href=\"{project}/\">{project}</a>\n"));
        let mut page = String::from("<!DOCTYPE html>\n<html><body>\n");
        for name in names {
            page.push_str(&format!("<a href=\"../../files/{name}\">{name}</a>\n"));
        }
        page.push_str("</body></html>\n");
        std::fs::create_dir_all(simple.join(project))?;
        std::fs::write(simple.join(project).join("index.html"), page)?;
    }
    root.push_str("</body></html>\n");
    std::fs::write(simple.join("index.html"), root)
}

/// A backend's request to install `packages` from the wheels in `links` only (`find_links`,
/// no index), unsandboxed and with no progress, into the environment at `root`.
pub fn offline_install(
    root: &Path,
    links: &Path,
    packages: &[&str],
) -> wsp_install::InstallRequest {
    wsp_install::InstallRequest {
        root: root.to_owned(),
        environment_id: "env-000000000000".into(),
        packages: packages.iter().map(|name| name.to_string()).collect(),
        source: wsp_install::InstallSource {
            find_links: vec![links.display().to_string()],
            index_url: None,
            no_index: true,
        },
        upgrade: false,
        progress: None,
        sandbox: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wheel_records_every_entry() {
        let dir = tempfile::tempdir().unwrap();
        let wheel = Distribution::new("Demo-Pkg", "1.0")
            .requires("other>=2")
            .write_wheel(dir.path())
            .unwrap();
        assert_eq!(wheel.file_name().unwrap(), "Demo_Pkg-1.0-py3-none-any.whl");
        let mut archive = zip::ZipArchive::new(std::fs::File::open(&wheel).unwrap()).unwrap();
        let mut record = String::new();
        io::Read::read_to_string(
            &mut archive.by_name("Demo_Pkg-1.0.dist-info/RECORD").unwrap(),
            &mut record,
        )
        .unwrap();
        assert!(record.contains("demo_pkg.py,sha256="), "{record}");
        assert!(record.ends_with("Demo_Pkg-1.0.dist-info/RECORD,,\n"));
        let mut metadata = String::new();
        io::Read::read_to_string(
            &mut archive.by_name("Demo_Pkg-1.0.dist-info/METADATA").unwrap(),
            &mut metadata,
        )
        .unwrap();
        assert!(metadata.contains("Name: Demo-Pkg\nVersion: 1.0\nRequires-Dist: other>=2\n"));
    }
}
