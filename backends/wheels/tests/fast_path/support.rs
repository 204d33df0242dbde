//! Interpreters, venvs, wheels and file listings for the fast path's tests.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use wsp_backend::{InstallRequest, InstallSource};
use wsp_exec::Activation;
use wsp_wheels::{Environment, Outcome};

/// pyenv's CPython 3.12, by absolute path.
pub fn python312() -> PathBuf {
    let root = std::env::var("PYENV_ROOT").unwrap_or_else(|_| "/root/.pyenv".to_owned());
    let versions = Path::new(&root).join("versions");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&versions)
        .expect("pyenv versions")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("3.12.")
        })
        .collect();
    found.sort();
    found.pop().expect("a pyenv 3.12").join("bin/python3.12")
}

/// The directory holding the `pip` package of the base interpreter (run as an external pip).
pub fn base_pip_dir() -> PathBuf {
    let python = python312();
    let lib = python
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("lib/python3.12/site-packages");
    assert!(
        lib.join("pip/__pip-runner__.py").is_file(),
        "{}",
        lib.display()
    );
    lib
}

/// The version of that pip.
pub fn base_pip_version() -> String {
    let packages = wsp_install::packages::scan(&[base_pip_dir()]).unwrap();
    let pip = packages.iter().find(|p| p.name == "pip").expect("pip");
    pip.version.clone()
}

/// A scratch directory with wheels in `links` and a new venv without pip at `root`.
pub struct Scratch {
    /// The directory; bind it (`dir: _dir`) to keep it for the whole test.
    pub dir: tempfile::TempDir,
    /// `<scratch>/wheels`, filled by [`scratch`]'s `write`.
    pub links: PathBuf,
    /// `<scratch>/env`, the venv.
    pub root: PathBuf,
}

/// A [`Scratch`] whose wheels `write` writes into its `links` directory.
pub fn scratch(write: impl FnOnce(&Path)) -> Scratch {
    let dir = tempfile::tempdir().unwrap();
    let links = dir.path().join("wheels");
    std::fs::create_dir(&links).unwrap();
    write(&links);
    let root = dir.path().join("env");
    venv(&root);
    Scratch { dir, links, root }
}

/// A new venv without pip at `root`.
pub fn venv(root: &Path) {
    std::fs::create_dir_all(root.parent().unwrap()).unwrap();
    let status = Command::new(python312())
        .args(["-m", "venv", "--without-pip"])
        .arg(root)
        .status()
        .unwrap();
    assert!(status.success());
}

/// Runs the base pip in the venv at `root`: `pip <args>`.
pub fn pip(root: &Path, args: &[&str]) -> std::process::Output {
    let output = Command::new(root.join("bin/python"))
        .arg(base_pip_dir().join("pip/__pip-runner__.py"))
        .args(args)
        .args(["--disable-pip-version-check", "--isolated"])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "pip {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// An install request for `packages` from `links`, no index.
pub fn request(root: &Path, packages: &[&str], links: &[&Path]) -> InstallRequest {
    InstallRequest {
        root: root.to_path_buf(),
        environment_id: "env-000000000001".to_owned(),
        packages: packages.iter().map(|p| p.to_string()).collect(),
        source: InstallSource {
            find_links: links.iter().map(|l| l.display().to_string()).collect(),
            index_url: None,
            no_index: true,
        },
        upgrade: false,
        progress: None,
        sandbox: None,
    }
}

/// The venv at `root` as the fast path sees it.
pub fn environment(root: &Path) -> Environment {
    Environment {
        root: root.to_path_buf(),
        python: root.join("bin/python"),
        activation: Activation::venv(root),
        site_packages: wsp_install::packages::site_packages_dirs(root),
        installed: wsp_install::packages::installed_packages(root).unwrap(),
        pip_version: Some(base_pip_version()),
    }
}

/// Runs the fast path for `request`.
pub async fn fast_install(request: &InstallRequest) -> Result<Outcome, wsp_backend::BackendError> {
    wsp_wheels::install(&environment(&request.root), request).await
}

/// Every file and symlink under `root` (relative path → mode), directories left out.
pub fn files(root: &Path) -> BTreeMap<String, u32> {
    let mut found = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                stack.push(entry.path());
                continue;
            }
            let rel = entry
                .path()
                .strip_prefix(root)
                .unwrap()
                .display()
                .to_string();
            let mode = std::fs::symlink_metadata(entry.path())
                .unwrap()
                .permissions()
                .mode();
            found.insert(rel, mode & 0o7777);
        }
    }
    found
}

/// Every directory under `root`, relative.
pub fn dirs(root: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            if entry.file_type().unwrap().is_dir() {
                found.push(
                    entry
                        .path()
                        .strip_prefix(root)
                        .unwrap()
                        .display()
                        .to_string(),
                );
                stack.push(entry.path());
            }
        }
    }
    found.sort();
    found
}

/// A zip entry: name, contents, Unix mode (a symlink's contents are its target).
pub type ZipEntry<'a> = (&'a str, &'a [u8], u32);

/// A zip at `path` with `entries`: name, contents, Unix mode (a symlink's contents are its
/// target).
pub fn write_zip(path: &Path, entries: &[ZipEntry], stored: bool) {
    let mut zip = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    for (name, contents, mode) in entries {
        let method = if stored {
            zip::CompressionMethod::Stored
        } else {
            zip::CompressionMethod::Deflated
        };
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(method)
            .unix_permissions(*mode & 0o777);
        if mode & 0o170000 == 0o120000 {
            let target = std::str::from_utf8(contents).unwrap();
            zip.add_symlink(*name, target, options).unwrap();
        } else {
            zip.start_file(*name, options).unwrap();
            zip.write_all(contents).unwrap();
        }
    }
    zip.finish().unwrap();
}

/// A minimal valid wheel of `name` 1.0 with `extra` entries besides its module and metadata.
pub fn wheel_with(dir: &Path, name: &str, extra: &[ZipEntry], stored: bool) -> PathBuf {
    let stem = format!("{name}-1.0");
    let metadata = format!("Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n");
    let module = format!("{name}.py");
    let info = |file: &str| format!("{stem}.dist-info/{file}");
    let wheel = b"Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n";
    let mut entries: Vec<(String, Vec<u8>, u32)> = vec![
        (module, b"VERSION = '1.0'\n".to_vec(), 0o644),
        (info("METADATA"), metadata.into_bytes(), 0o644),
        (info("WHEEL"), wheel.to_vec(), 0o644),
        (info("RECORD"), Vec::new(), 0o644),
    ];
    entries.extend(
        extra
            .iter()
            .map(|(n, c, m)| (n.to_string(), c.to_vec(), *m)),
    );
    let borrowed: Vec<ZipEntry> = entries
        .iter()
        .map(|(n, c, m)| (n.as_str(), c.as_slice(), *m))
        .collect();
    let path = dir.join(format!("{stem}-py3-none-any.whl"));
    write_zip(&path, &borrowed, stored);
    path
}
