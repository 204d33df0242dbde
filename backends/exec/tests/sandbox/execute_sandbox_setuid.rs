//! A sandboxed command cannot make a file that gains privilege when run outside the sandbox
//! (where its mounts are not `nosuid`): no setuid or setgid bit by `chmod`, `fchmod`,
//! creation, `mkdir` or `mknod`, in the environment's root or its `TMPDIR`, and no file
//! capabilities. Checked from outside too, in every containment mode, as root and as an
//! unprivileged user; unsandboxed, the same calls succeed.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

use crate::execute_sandbox_support::execute_support::contained;
use crate::execute_sandbox_support::{containing_modes, Fixture};

const PRIVILEGED_BITS: u32 = 0o6000;

fn attempt(op: &str, path: &Path, mode: &str) -> String {
    format!("{op}|{}|{mode}", path.display())
}

fn in_tmpdir(op: &str, name: &str, mode: &str) -> String {
    format!("{op}|$TMPDIR/{name}|{mode}")
}

fn file_capability(path: &Path) -> String {
    format!("file-capability|{}", path.display())
}

fn has_file_capability(path: &Path) -> bool {
    let name = c"security.capability";
    let path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a size query (no buffer) of a NUL-terminated path and name.
    unsafe { libc::lgetxattr(path.as_ptr(), name.as_ptr(), std::ptr::null_mut(), 0) >= 0 }
}

fn privileged_bits(path: &Path) -> Option<u32> {
    std::fs::symlink_metadata(path)
        .ok()
        .map(|meta| meta.mode() & PRIVILEGED_BITS)
}

#[tokio::test]
async fn setuid_setgid_and_file_capabilities_are_refused() {
    for mode in containing_modes() {
        let fixture = Fixture::new();
        let existing = [
            "suid.txt",
            "sgid.txt",
            "fchmod.txt",
            "plain.txt",
            "fcap.txt",
        ]
        .map(|name| fixture.root.join(name));
        for path in &existing {
            std::fs::write(path, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(path, PermissionsExt::from_mode(0o755)).unwrap();
        }
        let [suid, sgid, fchmod, plain, fcap] = &existing;
        let created = ["new-suid", "new-sgid-dir", "new-suid-node"].map(|n| fixture.root.join(n));
        let [new_suid, new_sgid_dir, new_suid_node] = &created;

        let refused = [
            attempt("chmod-mode", suid, "4755"),
            attempt("chmod-mode", sgid, "2755"),
            attempt("fchmod-mode", fchmod, "6755"),
            attempt("create-mode", new_suid, "4755"),
            attempt("mkdir-mode", new_sgid_dir, "2755"),
            attempt("mknod-mode", new_suid_node, "4755"),
            file_capability(fcap),
            in_tmpdir("create-mode", "new-suid", "4755"),
            in_tmpdir("chmod-mode", "plain", "4755"),
            in_tmpdir("mkdir-mode", "new-sgid-dir", "2755"),
        ];
        let allowed = [
            attempt("chmod-mode", plain, "0700"),
            attempt("create-mode", &fixture.root.join("new-plain"), "0755"),
            attempt("mkdir-mode", &fixture.root.join("new-dir"), "0755"),
            in_tmpdir("create-mode", "plain", "0755"),
            in_tmpdir("chmod-mode", "plain", "0700"),
        ];
        // `$TMPDIR/plain` is made (allowed) before it is chmodded (refused).
        let attempts: Vec<String> = allowed.iter().chain(&refused).cloned().collect();
        let (_, results) = fixture.attempt(&attempts, fixture.sandboxed(mode)).await;
        for attempt in &refused {
            assert_eq!(results[attempt], "EPERM", "{mode:?}: {attempt}");
        }
        for attempt in &allowed {
            assert_eq!(results[attempt], "ok", "{mode:?}: {attempt}");
        }
        // From outside: nothing gained a privileged bit or a capability, nothing was made.
        for path in &existing {
            assert_eq!(
                privileged_bits(path),
                Some(0),
                "{mode:?}: {}",
                path.display()
            );
        }
        for path in &created {
            assert_eq!(privileged_bits(path), None, "{mode:?}: {}", path.display());
        }
        assert!(!has_file_capability(fcap), "{mode:?}");
        assert_eq!(privileged_bits(&fixture.root.join("new-plain")), Some(0));

        // Unsandboxed, the same calls make setuid and setgid files: the checks can fail.
        let (_, unconfined) = fixture.attempt(&refused[..6], contained(mode)).await;
        assert!(
            unconfined.values().all(|outcome| outcome == "ok"),
            "{mode:?}: {unconfined:?}"
        );
        assert_eq!(privileged_bits(suid), Some(0o4000));
        assert_eq!(privileged_bits(new_suid), Some(0o4000));
    }
}

#[test]
fn as_an_unprivileged_user_too() {
    crate::execute_sandbox_support::execute_support::rerun_unprivileged(
        module_path!(),
        &["setuid_setgid_and_file_capabilities_are_refused"],
    );
}
