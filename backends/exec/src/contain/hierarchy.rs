//! Where this process sits in the cgroup hierarchies: the cgroup v2 directory, and the one of
//! the cgroup v1 hierarchy that holds the `pids` controller when that is not on v2.

use std::path::{Path, PathBuf};

/// Which hierarchy a cgroup directory belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// The unified (v2) hierarchy: `cgroup.kill`, `cgroup.events`, controllers delegated
    /// through `cgroup.subtree_control`.
    V2,
    /// A cgroup v1 hierarchy with the `pids` controller (and nothing to kill with).
    V1Pids,
}

/// This process's cgroup v2 directory: its path from `/proc/self/cgroup` under a `cgroup2`
/// mount from `/proc/self/mountinfo`.
pub(super) fn own_v2() -> Option<PathBuf> {
    own(|controllers| controllers.is_empty(), "cgroup2", |_| true)
}

/// This process's directory in the cgroup v1 hierarchy of the `pids` controller, when the
/// controller is bound to v1.
pub(super) fn own_v1_pids() -> Option<PathBuf> {
    let has_pids = |list: &str| list.split(',').any(|name| name == "pids");
    own(
        |controllers| has_pids(controllers),
        "cgroup",
        |options| has_pids(options),
    )
}

/// The directory of the hierarchy whose `/proc/self/cgroup` line has `controllers` matching
/// `line_matches`, mounted with filesystem type `filesystem` and super options matching
/// `options_match`.
fn own(
    line_matches: impl Fn(&str) -> bool,
    filesystem: &str,
    options_match: impl Fn(&str) -> bool,
) -> Option<PathBuf> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let own = cgroups.lines().find_map(|line| {
        let mut fields = line.splitn(3, ':');
        let (_, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        line_matches(controllers).then_some(path)
    })?;
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    mounts.lines().find_map(|line| {
        let (fields, rest) = line.split_once(" - ")?;
        let mut rest = rest.split(' ');
        let (kind, _source, options) = (rest.next()?, rest.next()?, rest.next()?);
        if kind != filesystem || !options_match(options) {
            return None;
        }
        let mut fields = fields.split(' ').skip(3);
        let root = unescape(fields.next()?);
        let mount_point = unescape(fields.next()?);
        let inside = Path::new(own).strip_prefix(&root).ok()?;
        let dir = Path::new(&mount_point).join(inside);
        dir.join("cgroup.procs").exists().then_some(dir)
    })
}

/// Whether `name` is listed in the space-separated `file` of `dir` (`cgroup.controllers`,
/// `cgroup.subtree_control`).
pub(super) fn lists(dir: &Path, file: &str, name: &str) -> bool {
    std::fs::read_to_string(dir.join(file))
        .is_ok_and(|text| text.split_whitespace().any(|listed| listed == name))
}

/// Whether the process `pid` is a member of the cgroup `dir` itself (not of a cgroup below).
pub(super) fn has_member(dir: &Path, pid: u32) -> bool {
    std::fs::read_to_string(dir.join("cgroup.procs"))
        .is_ok_and(|text| text.lines().any(|line| line.trim().parse() == Ok(pid)))
}

/// Undoes mountinfo's octal escapes (`\040` for a space).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).and_then(|digits| {
            std::str::from_utf8(digits)
                .ok()
                .and_then(|digits| u8::from_str_radix(digits, 8).ok())
        });
        match (bytes[i], octal) {
            (b'\\', Some(byte)) => {
                out.push(byte);
                i += 4;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::unescape;

    #[test]
    fn mountinfo_escapes() {
        assert_eq!(unescape(r"/a\040b"), "/a b");
        assert_eq!(unescape(r"/plain"), "/plain");
        assert_eq!(unescape(r"/x\"), r"/x\");
    }
}
