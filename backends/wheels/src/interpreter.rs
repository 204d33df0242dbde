//! What the target interpreter is: its PEP 508 marker environment and the facts its wheel tags
//! depend on, asked of the interpreter once (`python -I -S -c`) and kept for the life of the
//! process, keyed by the interpreter's resolved path, size and modification time.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use pep508_rs::{MarkerEnvironment, MarkerEnvironmentBuilder};
use serde::Deserialize;

use crate::python::run_python;
use crate::{NotApplicable, Step};

/// Prints the marker environment as `packaging.markers.default_environment()` computes it,
/// and the facts `packaging.tags` uses (the C library's version as `packaging._manylinux`
/// first asks for it; `None` where that fails, and manylinux wheels are then left to pip).
const QUERY: &str = r#"
import json, os, platform, sys, sysconfig
try:
    glibc = os.confstr("CS_GNU_LIBC_VERSION").rsplit()[1]
except Exception:
    glibc = None
i = sys.implementation
v = "{0.major}.{0.minor}.{0.micro}".format(i.version)
if i.version.releaselevel != "final":
    v += i.version.releaselevel[0] + str(i.version.serial)
print(json.dumps({
    "implementation_name": i.name,
    "implementation_version": v,
    "os_name": os.name,
    "platform_machine": platform.machine(),
    "platform_python_implementation": platform.python_implementation(),
    "platform_release": platform.release(),
    "platform_system": platform.system(),
    "platform_version": platform.version(),
    "python_full_version": platform.python_version(),
    "python_version": ".".join(platform.python_version_tuple()[:2]),
    "sys_platform": sys.platform,
    "sysconfig_platform": sysconfig.get_platform(),
    "abiflags": getattr(sys, "abiflags", ""),
    "platlibdir": getattr(sys, "platlibdir", "lib"),
    "version_info": list(sys.version_info[:2]),
    "is_64bit": sys.maxsize > 2 ** 32,
    "cache_tag": i.cache_tag,
    "glibc": glibc,
}))
"#;

/// What the interpreter said about itself.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Facts {
    implementation_name: String,
    implementation_version: String,
    os_name: String,
    platform_machine: String,
    platform_python_implementation: String,
    platform_release: String,
    platform_system: String,
    platform_version: String,
    python_full_version: String,
    python_version: String,
    sys_platform: String,
    sysconfig_platform: String,
    abiflags: String,
    platlibdir: String,
    version_info: (u32, u32),
    is_64bit: bool,
    cache_tag: Option<String>,
    glibc: Option<String>,
}

/// The target interpreter, as far as finding and installing wheels for it needs.
#[derive(Debug, Clone)]
pub(crate) struct Interpreter {
    /// Its marker environment.
    pub markers: MarkerEnvironment,
    /// `python_full_version`, as a version.
    pub full_version: pep440_rs::Version,
    /// `(major, minor)`.
    pub version: (u32, u32),
    /// CPython, with no ABI flags, 64-bit: the only one whose binary wheels are judged.
    pub plain_cpython: bool,
    /// `linux_<arch>` (PEP 425 spelling of `sysconfig.get_platform()`), on Linux.
    pub linux_platform: Option<String>,
    /// Where its venvs keep purelib and platlib: `lib/pythonX.Y/site-packages`.
    pub site_packages: PathBuf,
    /// `sys.implementation.cache_tag` (`cpython-312`), in the names of its `.pyc` files.
    pub cache_tag: String,
    /// The glibc it runs on, `(major, minor)`, when it could say.
    pub glibc: Option<(u32, u32)>,
}

impl Interpreter {
    fn from_facts(facts: Facts) -> Result<Interpreter, String> {
        let markers = MarkerEnvironment::try_from(MarkerEnvironmentBuilder {
            implementation_name: &facts.implementation_name,
            implementation_version: &facts.implementation_version,
            os_name: &facts.os_name,
            platform_machine: &facts.platform_machine,
            platform_python_implementation: &facts.platform_python_implementation,
            platform_release: &facts.platform_release,
            platform_system: &facts.platform_system,
            platform_version: &facts.platform_version,
            python_full_version: &facts.python_full_version,
            python_version: &facts.python_version,
            sys_platform: &facts.sys_platform,
        })
        .map_err(|error| format!("the interpreter's marker environment: {error}"))?;
        let full_version = facts
            .python_full_version
            .parse()
            .map_err(|error| format!("the interpreter's version: {error}"))?;
        let linux_platform = (facts.sys_platform == "linux")
            .then(|| facts.sysconfig_platform.replace(['-', '.'], "_"))
            .filter(|platform| platform.starts_with("linux_"));
        let (major, minor) = facts.version_info;
        Ok(Interpreter {
            markers,
            full_version,
            version: facts.version_info,
            plain_cpython: facts.implementation_name == "cpython"
                && facts.abiflags.is_empty()
                && facts.is_64bit
                && facts.platlibdir == "lib",
            linux_platform,
            site_packages: PathBuf::from(format!("lib/python{major}.{minor}/site-packages")),
            cache_tag: facts
                .cache_tag
                .ok_or("the interpreter writes no bytecode cache (no cache_tag)")?,
            glibc: facts.glibc.as_deref().and_then(major_minor),
        })
    }
}

/// `X.Y` (and anything after) as `(X, Y)`.
fn major_minor(version: &str) -> Option<(u32, u32)> {
    let mut parts = version.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

type Key = (PathBuf, u64, Option<SystemTime>);

fn cache() -> &'static Mutex<HashMap<Key, Arc<Interpreter>>> {
    static CACHE: OnceLock<Mutex<HashMap<Key, Arc<Interpreter>>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// The interpreter `step.python`, asked once per resolved interpreter file.
pub(crate) async fn interpreter(step: &Step<'_>) -> Result<Arc<Interpreter>, NotApplicable> {
    let key = key(step.python);
    if let Some(key) = &key {
        if let Some(known) = cache().lock().ok().and_then(|c| c.get(key).cloned()) {
            return Ok(known);
        }
    }
    let argv = ["-I", "-S", "-c", QUERY].map(String::from);
    let output = run_python(step, &argv, None)
        .await
        .map_err(|error| NotApplicable(format!("the interpreter could not be asked: {error}")))?;
    let facts: Facts = serde_json::from_str(output.trim())
        .map_err(|error| NotApplicable(format!("the interpreter's answer: {error}")))?;
    let known = Arc::new(Interpreter::from_facts(facts).map_err(NotApplicable)?);
    if let (Some(key), Ok(mut cache)) = (key, cache().lock()) {
        cache.insert(key, known.clone());
    }
    Ok(known)
}

/// The interpreter file behind `python` (a venv's is a symlink to its base), with its size and
/// modification time: a rebuilt interpreter is asked again.
fn key(python: &Path) -> Option<Key> {
    let resolved = python.canonicalize().ok()?;
    let metadata = std::fs::metadata(&resolved).ok()?;
    Some((resolved, metadata.len(), metadata.modified().ok()))
}
