//! Shared helpers of the venv backend's tests: the real pyenv interpreters, running processes
//! in environments, and a tiny wheel to install.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use wsp_interpreters::{InterpreterInfo, PythonVersion};

/// Prints the facts `InterpreterInfo` holds, as JSON; works on Python 2.7 too.
const QUERY: &str = r#"
import json, os, sys
impl = getattr(sys, "implementation", None)
print(json.dumps({
    "executable": os.path.realpath(sys.executable),
    "version": {"major": sys.version_info[0], "minor": sys.version_info[1],
                "patch": sys.version_info[2]},
    "base_prefix": getattr(sys, "base_prefix", sys.prefix),
    "base_exec_prefix": getattr(sys, "base_exec_prefix", sys.exec_prefix),
    "implementation": impl.name if impl else "cpython",
    "abiflags": getattr(sys, "abiflags", ""),
}))
"#;

/// `$PYENV_ROOT/versions`; fails the test when there is none.
pub fn pyenv_versions() -> PathBuf {
    let root = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".pyenv")))
        .expect("PYENV_ROOT or HOME is set");
    let versions = root.join("versions");
    assert!(versions.is_dir(), "{} is missing", versions.display());
    versions
}

/// The `bin/pythonX.Y` of every pyenv version whose name starts with `prefix` (`"3."`),
/// ascending by version.
pub fn pyenv_pythons(prefix: &str) -> Vec<PathBuf> {
    let mut found: Vec<(Vec<u64>, PathBuf)> = std::fs::read_dir(pyenv_versions())
        .expect("pyenv versions are listable")
        .filter_map(|entry| {
            let name = entry.ok()?.file_name().into_string().ok()?;
            let key: Vec<u64> = name
                .split('.')
                .map(|p| p.parse().ok())
                .collect::<Option<_>>()?;
            if !name.starts_with(prefix) || key.len() < 2 {
                return None;
            }
            let exe = pyenv_versions()
                .join(&name)
                .join("bin")
                .join(format!("python{}.{}", key[0], key[1]));
            Some((key, exe))
        })
        .collect();
    found.sort();
    let pythons: Vec<PathBuf> = found.into_iter().map(|(_, exe)| exe).collect();
    assert!(!pythons.is_empty(), "no pyenv Python {prefix}* found");
    pythons
}

/// Every pyenv Python 3, queried.
pub fn python3_infos() -> Vec<InterpreterInfo> {
    pyenv_pythons("3.").iter().map(|exe| query(exe)).collect()
}

/// The pyenv Python 3s at which `ensurepip` changes what it installs, queried: the oldest, the
/// last that installs setuptools beside pip (3.11), the first that installs pip alone (3.12),
/// and the newest. (Filling a seed cache costs ~10 CPU-seconds a version.)
pub fn python3_seeding_boundaries() -> Vec<InterpreterInfo> {
    let pythons = pyenv_pythons("3.");
    let is_minor = |exe: &PathBuf, minor: &str| {
        exe.file_name()
            .is_some_and(|name| name.to_string_lossy() == format!("python3.{minor}"))
    };
    let mut chosen: Vec<&PathBuf> = pythons.first().into_iter().collect();
    chosen.extend(
        pythons
            .iter()
            .filter(|exe| is_minor(exe, "11") || is_minor(exe, "12")),
    );
    chosen.extend(pythons.last());
    chosen.dedup();
    chosen.into_iter().map(|exe| query(exe)).collect()
}

/// The pyenv interpreter `X.Y`, queried.
pub fn python(minor_version: &str) -> InterpreterInfo {
    let exe = pyenv_pythons(minor_version)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("no pyenv Python {minor_version}"));
    query(&exe)
}

/// Runs `exe` once and builds its `InterpreterInfo`.
pub fn query(exe: &Path) -> InterpreterInfo {
    let stdout = run_ok(Command::new(exe).args(["-c", QUERY]));
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{}: {e}: {stdout}", exe.display()))
}

/// Gives `command` a predictable environment: no PYTHONHOME/PYTHONPATH/VIRTUAL_ENV, stdin null.
pub fn clean(command: &mut Command) -> &mut Command {
    command
        .env_remove("PYTHONHOME")
        .env_remove("PYTHONPATH")
        .env_remove("VIRTUAL_ENV")
        .env_remove("PIP_REQUIRE_VIRTUALENV")
        .stdin(Stdio::null())
}

/// Runs `command` cleaned, asserts success, returns stdout.
pub fn run_ok(command: &mut Command) -> String {
    let output = clean(command).output().expect("command starts");
    assert!(
        output.status.success(),
        "{command:?} failed: {}\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("UTF-8 output")
}

/// Runs `python -c code` and returns its trimmed stdout.
pub fn python_says(python: &Path, code: &str) -> String {
    run_ok(Command::new(python).args(["-c", code]))
        .trim()
        .to_owned()
}

/// What a venv interpreter reports about itself.
#[derive(Debug, serde::Deserialize)]
pub struct Reported {
    pub prefix: PathBuf,
    pub base_prefix: PathBuf,
    pub purelib: PathBuf,
    pub site_packages: Vec<PathBuf>,
    pub executable: PathBuf,
}

/// Asks the environment's interpreter where it lives.
pub fn report(python: &Path) -> Reported {
    let code = "import sys, json, site, sysconfig; print(json.dumps({\
        'prefix': sys.prefix, 'base_prefix': sys.base_prefix, \
        'purelib': sysconfig.get_paths()['purelib'], \
        'site_packages': site.getsitepackages(), 'executable': sys.executable}))";
    let text = python_says(python, code);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

/// `<root>/lib/pythonX.Y[t]/site-packages` for `info`.
pub fn site_packages(root: &Path, info: &InterpreterInfo) -> PathBuf {
    let PythonVersion { major, minor, .. } = info.version;
    let t = if info.abiflags.contains('t') { "t" } else { "" };
    root.join("lib")
        .join(format!("python{major}.{minor}{t}"))
        .join("site-packages")
}

/// Asserts that the environment at `root` over `info` is a working venv.
pub fn assert_is_venv(root: &Path, info: &InterpreterInfo) {
    let python = root.join("bin").join("python");
    let reported = report(&python);
    let label = format!("{} at {}", info.version, root.display());
    assert_eq!(reported.prefix, root, "sys.prefix of {label}");
    assert_eq!(
        reported.base_prefix, info.base_prefix,
        "sys.base_prefix of {label}"
    );
    assert_eq!(reported.executable, python, "sys.executable of {label}");
    let site = site_packages(root, info);
    assert_eq!(reported.purelib, site, "purelib of {label}");
    assert!(
        reported.site_packages.contains(&site),
        "site.getsitepackages() of {label} is {:?}",
        reported.site_packages
    );
    for name in [
        "python3".to_owned(),
        format!("python{}.{}", info.version.major, info.version.minor),
    ] {
        let alias = root.join("bin").join(&name);
        assert_eq!(
            std::fs::canonicalize(&alias).ok().as_deref(),
            Some(info.executable.as_path()),
            "bin/{name} of {label}"
        );
    }
}

/// Builds `pkg-0.1-py3-none-any.whl` (module `pkg`) in `dir` with `python`'s zipfile.
pub fn build_wheel(python: &Path, dir: &Path) -> PathBuf {
    let wheel = dir.join("pkg-0.1-py3-none-any.whl");
    let code = r#"
import base64, hashlib, sys, zipfile
files = {
    "pkg/__init__.py": b"GREETING = 'hello from pkg'\n",
    "pkg-0.1.dist-info/METADATA": b"Metadata-Version: 2.1\nName: pkg\nVersion: 0.1\n",
    "pkg-0.1.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: wsp-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
record = []
for name, data in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    record.append("%s,sha256=%s,%d" % (name, digest, len(data)))
record.append("pkg-0.1.dist-info/RECORD,,")
files["pkg-0.1.dist-info/RECORD"] = ("\n".join(record) + "\n").encode()
with zipfile.ZipFile(sys.argv[1], "w") as archive:
    for name, data in files.items():
        archive.writestr(name, data)
"#;
    let mut command = Command::new(python);
    command.args(["-c", code]).arg(&wheel);
    run_ok(&mut command);
    wheel
}

/// Installs the test wheel with the environment's pip and checks that it imports from the
/// environment.
pub fn install_and_import(root: &Path, wheel: &Path, site: &Path) {
    let python = root.join("bin/python");
    run_ok(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--no-index",
                "--disable-pip-version-check",
            ])
            .arg(wheel),
    );
    let imported = python_says(
        &python,
        "import pkg; print(pkg.GREETING + '|' + pkg.__file__)",
    );
    let (greeting, file) = imported.split_once('|').expect("two fields");
    assert_eq!(greeting, "hello from pkg");
    assert!(
        Path::new(file).starts_with(site),
        "{file} is outside {}",
        site.display()
    );
}

/// Runs `check` for every interpreter in `infos` on its own thread; fails listing every
/// interpreter for which it panicked.
pub fn for_each<F>(infos: Vec<InterpreterInfo>, check: F)
where
    F: Fn(&InterpreterInfo) + Send + Sync + 'static,
{
    let check = std::sync::Arc::new(check);
    let handles: Vec<_> = infos
        .into_iter()
        .map(|info| {
            let check = check.clone();
            let version = info.version.to_string();
            (version, std::thread::spawn(move || check(&info)))
        })
        .collect();
    let failed: Vec<String> = handles
        .into_iter()
        .filter_map(|(version, handle)| handle.join().is_err().then_some(version))
        .collect();
    assert!(failed.is_empty(), "failed for Python {failed:?}");
}

/// Runs a future to completion on a fresh current-thread runtime.
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(future)
}
