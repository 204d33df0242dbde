//! Wheel file names (PEP 427) and whether a wheel's tags fit the target interpreter as pip's
//! `packaging.tags.sys_tags()` would say, or whether that cannot be told without guessing.

use std::str::FromStr;

use pep440_rs::Version;
use pep508_rs::PackageName;

use crate::interpreter::Interpreter;

/// What a wheel file's name says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WheelName {
    pub name: PackageName,
    pub version: Version,
    python: Vec<String>,
    abi: Vec<String>,
    platform: Vec<String>,
}

/// Whether a wheel can be installed for the target interpreter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Fit {
    /// pip would never pick it.
    No,
    /// pip might pick it (a `musllinux` wheel, a `manylinux` one on a glibc that did not say
    /// its version, a non-CPython interpreter): only pip can tell.
    Unsure,
    /// pip would consider it.
    Yes,
}

impl WheelName {
    /// Parses `{name}-{version}(-{build})?-{python}-{abi}-{platform}.whl`.
    pub fn parse(file_name: &str) -> Option<WheelName> {
        let stem = file_name.strip_suffix(".whl")?;
        let parts: Vec<&str> = stem.split('-').collect();
        let (name, version, tags) = match parts.as_slice() {
            [name, version, tags @ ..] if tags.len() == 3 => (name, version, tags),
            [name, version, build, tags @ ..] if tags.len() == 3 => {
                if !build.starts_with(|c: char| c.is_ascii_digit()) {
                    return None;
                }
                (name, version, tags)
            }
            _ => return None,
        };
        let split = |tag: &str| -> Vec<String> { tag.split('.').map(str::to_owned).collect() };
        Some(WheelName {
            name: PackageName::from_str(name).ok()?,
            version: Version::from_str(version).ok()?,
            python: split(tags[0]),
            abi: split(tags[1]),
            platform: split(tags[2]),
        })
    }

    /// The best fit of any of the name's tag triples.
    pub fn fit(&self, target: &Interpreter) -> Fit {
        let mut best = Fit::No;
        for python in &self.python {
            for abi in &self.abi {
                for platform in &self.platform {
                    best = best.max(triple_fit(target, python, abi, platform));
                }
            }
        }
        best
    }
}

/// Whether a `manylinux` platform tag (without its `_<arch>`) fits a glibc of `glibc`, as
/// `packaging.tags` decides: the glibc must be at least the policy's (the legacy names are
/// `manylinux1` = 2.5 and `manylinux2010` = 2.12 on x86_64 and i686, `manylinux2014` = 2.17).
/// An unknown glibc, or a name it does not know, is left to pip.
fn manylinux_fit(policy: &str, arch: &str, glibc: Option<(u32, u32)>) -> Fit {
    let legacy_arch = matches!(arch, "x86_64" | "i686");
    let needed = match policy {
        "manylinux1" if legacy_arch => Some((2, 5)),
        "manylinux2010" if legacy_arch => Some((2, 12)),
        "manylinux2014" => Some((2, 17)),
        "manylinux1" | "manylinux2010" => return Fit::No,
        other => other.strip_prefix("manylinux_").and_then(|version| {
            let (major, minor) = version.split_once('_')?;
            Some((major.parse().ok()?, minor.parse().ok()?))
        }),
    };
    match (needed, glibc) {
        (Some(needed), Some(ours)) if needed <= ours => Fit::Yes,
        (Some(_), Some(_)) => Fit::No,
        _ => Fit::Unsure,
    }
}

/// The minor version `X` of a tag `{prefix}3X` (`py3` has none).
fn python3_minor(tag: &str, prefix: &str) -> Option<Option<u32>> {
    let rest = tag.strip_prefix(prefix)?.strip_prefix('3')?;
    if rest.is_empty() {
        return Some(None);
    }
    if !rest.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    rest.parse().ok().map(Some)
}

fn triple_fit(target: &Interpreter, python: &str, abi: &str, platform: &str) -> Fit {
    let (major, minor) = target.version;
    if major != 3 {
        return Fit::Unsure;
    }
    let platform_fit = match (&target.linux_platform, platform) {
        (_, "any") => Fit::Yes,
        (Some(ours), theirs) if ours == theirs => Fit::Yes,
        (Some(ours), theirs) => {
            let arch = ours.trim_start_matches("linux_");
            match theirs.strip_suffix(&format!("_{arch}")) {
                Some(policy) if policy.starts_with("manylinux") => {
                    manylinux_fit(policy, arch, target.glibc)
                }
                Some(policy) if policy.starts_with("musllinux") => Fit::Unsure,
                _ => Fit::No,
            }
        }
        (None, _) => Fit::Unsure,
    };
    if platform_fit == Fit::No {
        return Fit::No;
    }
    // A pure wheel: `py3`, `py3X` (X up to ours), no ABI.
    if let Some(tag_minor) = python3_minor(python, "py") {
        if tag_minor.is_some_and(|x| x > minor) || abi != "none" {
            return Fit::No;
        }
        return if platform == "any" {
            Fit::Yes
        } else if target.plain_cpython {
            platform_fit
        } else {
            Fit::Unsure
        };
    }
    if !target.plain_cpython {
        return Fit::Unsure;
    }
    // CPython's own: `cpXY-cpXY`, `cpXY-none`, `cpXY-none-any`, `cp3X-abi3` (X up to ours).
    let Some(Some(tag_minor)) = python3_minor(python, "cp") else {
        return Fit::No;
    };
    let ours = format!("cp3{minor}");
    let fits = match abi {
        "abi3" => tag_minor <= minor && tag_minor >= 2 && platform != "any",
        "none" => tag_minor == minor,
        abi => tag_minor == minor && abi == ours && platform != "any",
    };
    if fits {
        platform_fit
    } else {
        Fit::No
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn cpython312() -> Interpreter {
        let markers = pep508_rs::MarkerEnvironment::try_from(pep508_rs::MarkerEnvironmentBuilder {
            implementation_name: "cpython",
            implementation_version: "3.12.1",
            os_name: "posix",
            platform_machine: "x86_64",
            platform_python_implementation: "CPython",
            platform_release: "",
            platform_system: "Linux",
            platform_version: "",
            python_full_version: "3.12.1",
            python_version: "3.12",
            sys_platform: "linux",
        })
        .unwrap();
        Interpreter {
            markers,
            full_version: "3.12.1".parse().unwrap(),
            version: (3, 12),
            plain_cpython: true,
            linux_platform: Some("linux_x86_64".to_owned()),
            site_packages: PathBuf::from("lib/python3.12/site-packages"),
            cache_tag: "cpython-312".to_owned(),
            glibc: Some((2, 36)),
        }
    }

    #[test]
    fn names_and_fits() {
        let target = cpython312();
        let fit = |name: &str| WheelName::parse(name).map(|w| w.fit(&target));
        assert_eq!(fit("demo-1.0-py3-none-any.whl"), Some(Fit::Yes));
        assert_eq!(fit("demo-1.0-1build-py2.py3-none-any.whl"), Some(Fit::Yes));
        assert_eq!(fit("demo-1.0-py312-none-any.whl"), Some(Fit::Yes));
        assert_eq!(fit("demo-1.0-py313-none-any.whl"), Some(Fit::No));
        assert_eq!(fit("demo-1.0-py2-none-any.whl"), Some(Fit::No));
        assert_eq!(fit("demo-1.0-cp312-cp312-linux_x86_64.whl"), Some(Fit::Yes));
        assert_eq!(fit("demo-1.0-cp311-cp311-linux_x86_64.whl"), Some(Fit::No));
        assert_eq!(fit("demo-1.0-cp38-abi3-linux_x86_64.whl"), Some(Fit::Yes));
        assert_eq!(fit("demo-1.0-cp312-none-any.whl"), Some(Fit::Yes));
        assert_eq!(fit("demo-1.0-cp312-cp312-linux_aarch64.whl"), Some(Fit::No));
        assert_eq!(fit("demo-1.0-cp312-cp312-win_amd64.whl"), Some(Fit::No));
        assert_eq!(
            fit("demo-1.0-cp312-cp312-macosx_11_0_arm64.whl"),
            Some(Fit::No)
        );
        assert_eq!(
            fit("demo-1.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"),
            Some(Fit::Yes)
        );
        assert_eq!(
            fit("demo-1.0-cp312-cp312-manylinux_2_36_x86_64.whl"),
            Some(Fit::Yes)
        );
        assert_eq!(
            fit("demo-1.0-cp312-cp312-manylinux_2_37_x86_64.whl"),
            Some(Fit::No)
        );
        assert_eq!(
            fit("demo-1.0-cp312-cp312-manylinux_3_0_x86_64.whl"),
            Some(Fit::No)
        );
        assert_eq!(
            fit("demo-1.0-cp312-cp312-manylinux1_x86_64.whl"),
            Some(Fit::Yes)
        );
        assert_eq!(
            fit("demo-1.0-cp312-cp312-manylinux2010_x86_64.whl"),
            Some(Fit::Yes)
        );
        assert_eq!(
            fit("demo-1.0-cp312-cp312-manylinux_2_17_aarch64.whl"),
            Some(Fit::No)
        );
        assert_eq!(
            fit("demo-1.0-cp312-cp312-manylinux_x_y_x86_64.whl"),
            Some(Fit::Unsure)
        );
        assert_eq!(
            fit("demo-1.0-cp312-cp312-musllinux_1_2_x86_64.whl"),
            Some(Fit::Unsure)
        );
        let unknown_glibc = Interpreter {
            glibc: None,
            ..cpython312()
        };
        let name = WheelName::parse("demo-1.0-cp312-cp312-manylinux_2_17_x86_64.whl").unwrap();
        assert_eq!(name.fit(&unknown_glibc), Fit::Unsure);
        let aarch64 = Interpreter {
            linux_platform: Some("linux_aarch64".to_owned()),
            ..cpython312()
        };
        let legacy = WheelName::parse("demo-1.0-cp312-cp312-manylinux2010_aarch64.whl").unwrap();
        assert_eq!(legacy.fit(&aarch64), Fit::No);
        assert_eq!(fit("demo-1.0-pp310-pypy310_pp73-any.whl"), Some(Fit::No));
        assert_eq!(fit("demo-1.0-py3-none.whl"), None);
        assert_eq!(fit("demo-1.0-x-py3-none-any.whl"), None);
    }
}
