//! Whether this machine can enforce the sandbox, found once by trying it in a forked child.

use std::sync::OnceLock;

use landlock::ABI;

use super::child::{failure_pipe, read_failure, ChildSandbox};
use super::{rules, tmpdir};
use crate::containment_mode;

/// Set to `1`, this variable makes the probe fail, so that tests can see what a machine
/// without the sandbox answers. It is meant for tests only.
pub const TEST_UNAVAILABLE_VAR: &str = "WSP_TEST_SANDBOX_UNAVAILABLE";

/// The oldest Landlock ABI the sandbox accepts: 3 is the first to handle truncation, without
/// which a file outside the writable trees could still be emptied.
const OLDEST_ABI: i64 = 3;

/// `Ok` when sandboxed runs can be enforced here, else why not. Probed once per process (a
/// forked child enters a sandbox as a run would and checks that a read outside its rules is
/// refused); later calls return the same answer.
pub fn sandbox_availability() -> Result<(), &'static str> {
    enforceable_abi().map(|_| ())
}

/// The Landlock ABI rulesets are built for, when the sandbox can be enforced.
pub(super) fn enforceable_abi() -> Result<ABI, &'static str> {
    static PROBED: OnceLock<Result<ABI, String>> = OnceLock::new();
    PROBED
        .get_or_init(probe)
        .as_ref()
        .map(|abi| *abi)
        .map_err(String::as_str)
}

fn probe() -> Result<ABI, String> {
    if std::env::var_os(TEST_UNAVAILABLE_VAR).is_some_and(|value| value == "1") {
        return Err(format!(
            "{TEST_UNAVAILABLE_VAR}=1 is set (a switch for tests only)"
        ));
    }
    let abi = kernel_abi()?;
    let mode = containment_mode();
    if !mode.contains_new_sessions() {
        return Err(format!(
            "the best containment here ({}) cannot hold everything a sandboxed command starts",
            mode.as_str()
        ));
    }
    let tmp = tmpdir::PrivateTmp::create_in(None)
        .map_err(|error| format!("cannot make a private TMPDIR: {error}"))?;
    // Nothing is hidden: what the probe checks (namespaces, mounts, Landlock enforced) does
    // not depend on it, and hiding the TMPDIR base as a run does grants each other entry of
    // its parent on its own, a walk of every entry of /tmp at every server's start.
    let writable = [tmp.path()];
    let ruleset = rules::ruleset(abi, &writable, &[], None)?;
    let (failures, report) =
        failure_pipe().map_err(|error| format!("cannot make a pipe: {error}"))?;
    let mut child = ChildSandbox::new(ruleset, &writable, false, report)
        .map_err(|error| format!("cannot prepare the mounts: {error}"))?;
    // SAFETY: the child makes only the sandbox's own system calls, then `_exit`s.
    let pid = unsafe { libc::fork() };
    match pid {
        -1 => return Err(format!("cannot fork: {}", std::io::Error::last_os_error())),
        // SAFETY: in the child, right after the fork.
        0 => unsafe { libc::_exit(enter_and_check(&mut child)) },
        _ => {}
    }
    drop(child);
    let status = crate::spawn::wait_blocking(pid)
        .ok()
        .and_then(|status| status.code());
    drop(tmp);
    if let Some(failure) = read_failure(&failures) {
        return Err(failure);
    }
    match status {
        Some(0) => Ok(abi),
        Some(PROBE_NOT_CONFINED) => {
            Err("Landlock reported the ruleset enforced, but a read outside it succeeded".into())
        }
        _ => Err("the sandbox probe did not finish".into()),
    }
}

/// The probe child's exit code when the read it tried was not refused.
const PROBE_NOT_CONFINED: i32 = 3;

/// Enters the sandbox; returns the probe child's exit code.
///
/// # Safety
/// Call only in a freshly forked child.
unsafe fn enter_and_check(child: &mut ChildSandbox) -> i32 {
    if child.enter_namespaces().is_err()
        || child.confine_mounts(false).is_err()
        || child.restrict().is_err()
    {
        return 1;
    }
    // Nothing grants reading `/` itself.
    let fd = libc::open(
        c"/".as_ptr(),
        libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
    );
    if fd >= 0 {
        return PROBE_NOT_CONFINED;
    }
    0
}

/// The kernel's Landlock ABI, as one of those this code was tested with (3 to 7; a newer
/// kernel is used as 7).
fn kernel_abi() -> Result<ABI, String> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: asking for the version passes no attribute (null, size 0), as documented.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if version < 0 {
        let error = std::io::Error::last_os_error();
        return Err(match error.raw_os_error() {
            Some(libc::EOPNOTSUPP) => "Landlock is built into this kernel but not enabled".into(),
            _ => format!("this kernel has no Landlock: {error}"),
        });
    }
    Ok(match version {
        v if v < OLDEST_ABI => {
            return Err(format!(
                "this kernel's Landlock ABI is {v}; the sandbox needs {OLDEST_ABI} or later"
            ))
        }
        3 => ABI::V3,
        4 => ABI::V4,
        5 => ABI::V5,
        6 => ABI::V6,
        _ => ABI::V7,
    })
}
