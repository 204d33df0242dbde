//! Wheels that are broken or hostile: a clear error, nothing left behind, no panic; and an
//! install dropped part-way leaves all or nothing.

use std::path::Path;

use wsp_wheels::Outcome;

use crate::support::*;

fn failed_with(result: Result<Outcome, wsp_backend::BackendError>, expected: &str) {
    match result {
        Err(error) => {
            let text = error.to_string();
            assert!(text.contains(expected), "{text}");
        }
        Ok(outcome) => panic!("expected an error ({expected}), got {outcome:?}"),
    }
}

/// Sets the declared uncompressed size of `name` in the zip's central directory.
fn declare_size(path: &Path, name: &str, size: u32) {
    let mut bytes = std::fs::read(path).unwrap();
    let signature = [0x50, 0x4b, 0x01, 0x02];
    let mut at = 0;
    while at + 46 <= bytes.len() {
        if bytes[at..at + 4] == signature {
            let name_len = u16::from_le_bytes([bytes[at + 28], bytes[at + 29]]) as usize;
            if &bytes[at + 46..at + 46 + name_len] == name.as_bytes() {
                bytes[at + 24..at + 28].copy_from_slice(&size.to_le_bytes());
                std::fs::write(path, bytes).unwrap();
                return;
            }
        }
        at += 1;
    }
    panic!("no central directory entry {name}");
}

/// Flips the stored contents `marker` of an entry, so its CRC no longer matches.
fn corrupt(path: &Path, marker: &[u8]) {
    let mut bytes = std::fs::read(path).unwrap();
    let at = bytes
        .windows(marker.len())
        .position(|w| w == marker)
        .unwrap();
    bytes[at] ^= 0xff;
    std::fs::write(path, bytes).unwrap();
}

#[tokio::test]
async fn hostile_wheels_are_refused_and_leave_nothing() {
    let scratch = tempfile::tempdir().unwrap();
    let root = scratch.path().join("env");
    venv(&root);
    let before = files(&root);
    let cases: Vec<(&str, Vec<ZipEntry>, &str)> = vec![
        (
            "h_up",
            vec![("../evil.py", b"x", 0o644)],
            "outside its directory",
        ),
        (
            "h_deep",
            vec![("h_deep/../../evil.py", b"x", 0o644)],
            "outside its directory",
        ),
        (
            "h_abs",
            vec![("/tmp/wsp-evil.py", b"x", 0o644)],
            "outside its directory",
        ),
        (
            "h_link",
            vec![("h_link_link", b"/etc/passwd", 0o120777)],
            "symbolic link",
        ),
    ];
    for (name, extra, why) in cases {
        let links = scratch.path().join(name);
        std::fs::create_dir(&links).unwrap();
        wheel_with(&links, name, &extra, false);
        failed_with(fast_install(&request(&root, &[name], &[&links])).await, why);
        assert_eq!(files(&root), before, "{name}");
    }

    let links = scratch.path().join("h_huge");
    std::fs::create_dir(&links).unwrap();
    let wheel = wheel_with(&links, "h_huge", &[("h_huge_big.py", b"x", 0o644)], true);
    declare_size(&wheel, "h_huge_big.py", 0xffff_fff0);
    failed_with(
        fast_install(&request(&root, &["h_huge"], &[&links])).await,
        "past the limit",
    );

    let links = scratch.path().join("h_garbage");
    std::fs::create_dir(&links).unwrap();
    std::fs::write(
        links.join("h_garbage-1.0-py3-none-any.whl"),
        b"not a zip at all",
    )
    .unwrap();
    failed_with(
        fast_install(&request(&root, &["h_garbage"], &[&links])).await,
        "not a valid",
    );

    // The corrupt entry comes after the module, which is written first, then removed.
    let links = scratch.path().join("h_crc");
    std::fs::create_dir(&links).unwrap();
    let payload: &[u8] = b"CORRUPT_ME = 'xxxxxxxxxxxxxxxx'\n";
    let wheel = wheel_with(
        &links,
        "h_crc",
        &[("h_crc_pkg/late.py", payload, 0o644)],
        true,
    );
    corrupt(&wheel, b"CORRUPT_ME");
    failed_with(
        fast_install(&request(&root, &["h_crc"], &[&links])).await,
        "h_crc_pkg/late.py",
    );
    assert_eq!(files(&root), before);
    assert_eq!(dirs(&root), dirs_of_fresh_venv(scratch.path()));
}

fn dirs_of_fresh_venv(scratch: &Path) -> Vec<String> {
    let fresh = scratch.join("fresh");
    venv(&fresh);
    dirs(&fresh)
}

#[tokio::test]
async fn a_dropped_install_leaves_all_or_nothing() {
    let scratch = tempfile::tempdir().unwrap();
    let links = scratch.path().join("wheels");
    std::fs::create_dir(&links).unwrap();
    let modules: Vec<(String, Vec<u8>, u32)> = (0..400)
        .map(|i| {
            (
                format!("d_many_pkg/m{i}.py"),
                format!("N = {i}\n").into_bytes(),
                0o644,
            )
        })
        .collect();
    let borrowed: Vec<ZipEntry> = modules
        .iter()
        .map(|(n, c, m)| (n.as_str(), c.as_slice(), *m))
        .collect();
    wheel_with(&links, "d_many", &borrowed, false);
    for delay_ms in [1, 10, 30, 60, 120, 250, 500] {
        let root = scratch.path().join(format!("env-{delay_ms}"));
        venv(&root);
        let before = files(&root);
        let wanted = request(&root, &["d_many"], &[&links]);
        let delay = std::time::Duration::from_millis(delay_ms);
        let finished = tokio::time::timeout(delay, fast_install(&wanted))
            .await
            .is_ok();
        // The blocking work notices the drop between files and removes what it wrote.
        wsp_wheels::settled(&root).await;
        let after = files(&root);
        let record = root.join("lib/python3.12/site-packages/d_many-1.0.dist-info/RECORD");
        if after == before {
            assert!(!finished, "{delay_ms} ms: finished but installed nothing");
        } else {
            let text = std::fs::read_to_string(&record).unwrap_or_default();
            let listed = text.lines().filter(|l| !l.is_empty()).count();
            let left: Vec<_> = after
                .keys()
                .filter(|k| !before.contains_key(*k))
                .take(5)
                .collect();
            assert!(
                listed > 400,
                "{delay_ms} ms: a partial install is left: {left:?}"
            );
            for line in text.lines() {
                let path = line.split(',').next().unwrap();
                let full = root.join("lib/python3.12/site-packages").join(path);
                assert!(full.exists(), "{delay_ms} ms: {path} is listed but missing");
            }
        }
    }
}
