//! Sandboxed commands: what `environment/execute` with `sandbox: true` may touch.
//!
//! A sandboxed command
//! - writes only inside its environment's root and a private temporary directory made for
//!   this one run (`TMPDIR` points at it; it is removed when the run ends);
//! - reads the rest of the system, except the hidden trees ([`SandboxPolicy::hidden`], the
//!   state directory: the other environments, the index, the trash) and the other runs'
//!   temporary directories;
//! - has no network: it runs in a network namespace of its own, whose only interface is a
//!   loopback that is down.
//!
//! # How
//! Before the fork, the parent builds a Landlock ruleset (module `rules`): it handles every
//! file-system right of the kernel's Landlock ABI (3 at least, up to 7), plus the signal and
//! abstract-socket scopes from ABI 6. Landlock only allows, so "everything but the hidden
//! trees" is spelt as the complement along each hidden path: read (and execute) on every
//! entry of `/` except the first component of a hidden path, then on every entry of that
//! directory except the next component, and so on down to the hidden directory itself, inside
//! which nothing is granted. The environment's root and the private temporary directory get
//! every right, wherever they lie. `/dev` is never granted as a tree (as root that would
//! expose the raw disks): only `null`, `zero`, `full`, `random` and `urandom` are. Every path
//! is opened without following symlinks, so a symlink planted next to a hidden path cannot
//! widen a rule.
//!
//! Between fork and exec the child (module `child`) first unshares, together, a user
//! namespace, a mount namespace, an IPC namespace and (unless the policy keeps the network)
//! a network namespace. The user namespace gives it the right to make the others when it is
//! not root; when it is root it still takes one, so that the command holds no capability
//! over the host's namespaces and cannot `setns` back into them through `/proc/1/ns/*`. It
//! maps every id the server has to itself (only its own uid and gid when it is not root),
//! so files keep their owners. The IPC namespace gives the command SysV shared memory,
//! semaphores and message queues of its own, which die with the run. Then the containment's
//! PID namespace is entered (inside the sandbox's user namespace, needing none of its own),
//! and the mounts are confined (module `mounts`): every mount of the private mount namespace
//! becomes read-only and `nosuid`, except the root and the `TMPDIR`, bind-mounted onto
//! themselves, so `chmod`, `chown`, `utime` and extended attributes fail outside them
//! whoever owns the file. Stdin (the null device) is opened again inside, and the working
//! directory is entered again by path and checked to be the same directory, so that no
//! descriptor of a writable host mount is left to the command. Last come the rlimits and
//! `landlock_restrict_self` (with `no_new_privs`), which must report the ruleset fully
//! enforced: Landlock is the second wall, denying writes outside the writable trees and
//! reads of the hidden ones. After it comes a seccomp filter (module `seccomp`) that refuses
//! setuid and setgid modes and extended attributes (file capabilities), which would give
//! privilege to whoever runs such a file outside the sandbox. Any failure in the child ends the spawn with reason
//! [`FailureReason::SandboxUnavailable`]; nothing runs unconfined.
//!
//! A policy may keep the host's network ([`SandboxNetwork::TcpConnect`], for an installer
//! that reaches its index): then TCP connections go only to the listed ports and no TCP port
//! can be bound (Landlock ABI 4 and later), abstract UNIX sockets outside the sandbox are out
//! of reach (ABI 6 and later), and name lookups over UDP work.
//!
//! A sandbox needs a containment that holds new sessions (a cgroup or a PID namespace): a
//! process that outlived its run would go on writing into the environment after the answer,
//! and race the removal of its `TMPDIR`. Any machine that can make the sandbox's user namespace can make such a PID
//! namespace, so this only refuses an explicitly chosen process-group containment.
//!
//! # What is not covered
//! - `stat` works everywhere, and directories on the way to a hidden tree (`/`, `/tmp`, ...)
//!   cannot be listed.
//! - Connecting to a pathname UNIX socket the user may write (Landlock ABI 9 adds a right
//!   for it; this code does not use ABIs it was not tested with). Abstract UNIX sockets
//!   belong to the network namespace and are cut off with it.
//! - A tree the state directory is also mounted at (a bind mount elsewhere) is readable there.
//! - A file of the root that is a hard link of a file outside it shares its contents: writing
//!   it writes the outside file. The server copies such files before a sandboxed run (see
//!   module `links` of `execute`).
//! - A root server's sandbox runs as root inside its user namespace: it owns the root's
//!   files. Outside the root and `TMPDIR` every mount is read-only, and the seccomp filter
//!   keeps it from making setuid, setgid or capability-bearing files in them.

mod availability;
mod child;
mod mounts;
mod rules;
mod seccomp;
mod tmpdir;

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use wsp_protocol::FailureReason;

use wsp_backend::BackendError;

use crate::{ContainmentMode, SandboxNetwork, SandboxPolicy};

use availability::enforceable_abi;
pub use availability::{sandbox_availability, TEST_UNAVAILABLE_VAR};
pub(super) use child::ChildSandbox;

/// One run's sandbox, from before the spawn until the run ends.
#[derive(Debug)]
pub(super) struct Prepared {
    tmp: tmpdir::PrivateTmp,
    child: Option<ChildSandbox>,
    failures: OwnedFd,
}

impl Prepared {
    /// Checks that the sandbox can be enforced, makes the private temporary directory and
    /// builds the ruleset. Every failure is [`FailureReason::SandboxUnavailable`].
    pub(super) fn prepare(
        policy: &SandboxPolicy,
        mode: ContainmentMode,
    ) -> Result<Self, BackendError> {
        let unavailable =
            |detail: String| BackendError::failed(FailureReason::SandboxUnavailable, detail);
        let unavailable_by = |doing: &str, error: std::io::Error| {
            BackendError::caused_by(FailureReason::SandboxUnavailable, doing, error)
        };
        let abi = enforceable_abi().map_err(|reason| unavailable(reason.to_owned()))?;
        if !mode.contains_new_sessions() {
            return Err(unavailable(format!(
                "the {} containment cannot hold everything a sandboxed command starts",
                mode.as_str()
            )));
        }
        let root = canonical(&policy.root)?;
        let mut hidden = Vec::with_capacity(policy.hidden.len() + 1);
        for path in &policy.hidden {
            hidden.push(canonical(path)?);
        }
        let tmp = tmpdir::PrivateTmp::create_in(policy.private_tmp_in.as_deref())
            .map_err(|error| unavailable_by("cannot make the private TMPDIR", error))?;
        // A base inside a hidden tree is hidden with it; one elsewhere (the system's temporary
        // directory) is hidden on its own, which grants each of its siblings one by one.
        let base = canonical(tmp.base())?;
        if !hidden.iter().any(|tree| base.starts_with(tree)) {
            hidden.push(base);
        }
        let writable = [root.as_path(), tmp.path()];
        let connect = match &policy.network {
            SandboxNetwork::None => None,
            SandboxNetwork::TcpConnect(ports) => Some(ports.as_slice()),
        };
        let ruleset = rules::ruleset(abi, &writable, &hidden, connect).map_err(unavailable)?;
        let (failures, report) =
            child::failure_pipe().map_err(|error| unavailable_by("cannot make a pipe", error))?;
        let child = ChildSandbox::new(ruleset, &writable, connect.is_some(), report)
            .map_err(|error| unavailable_by("cannot prepare the mounts", error))?;
        Ok(Prepared {
            tmp,
            child: Some(child),
            failures,
        })
    }

    /// [`prepare`](Prepared::prepare) on the blocking pool: it walks the directories above
    /// the hidden trees, a few system calls per entry, which would hold up every other
    /// request of the server on an async thread.
    pub(super) async fn prepare_off_thread(
        policy: SandboxPolicy,
        mode: ContainmentMode,
    ) -> Result<Self, BackendError> {
        tokio::task::spawn_blocking(move || Prepared::prepare(&policy, mode))
            .await
            .map_err(|error| {
                BackendError::failed(
                    FailureReason::SandboxUnavailable,
                    format!("preparing the sandbox did not finish: {error}"),
                )
            })?
    }

    /// The private temporary directory, which `TMPDIR` names.
    pub(super) fn tmpdir(&self) -> &Path {
        self.tmp.path()
    }

    /// What the child runs between fork and exec; taken once.
    pub(super) fn take_child(&mut self) -> Option<ChildSandbox> {
        self.child.take()
    }

    /// Removes the private temporary directory (the run has ended, everything it started is
    /// gone).
    pub(super) async fn finish(self) {
        self.tmp.remove().await;
    }

    /// Why the child could not enter its sandbox, when that is why the spawn failed.
    pub(super) fn failure(&self) -> Option<String> {
        child::read_failure(&self.failures)
    }
}

fn canonical(path: &Path) -> Result<PathBuf, BackendError> {
    path.canonicalize().map_err(|error| {
        BackendError::caused_by(
            FailureReason::SandboxUnavailable,
            format!("cannot resolve {}", path.display()),
            error,
        )
    })
}
