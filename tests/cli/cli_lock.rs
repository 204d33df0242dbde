//! `wsp lock ENV > pylock.toml` and `wsp create NAME --lock pylock.toml` over the real binary,
//! offline: the environment made from the lock lists the same packages, and `--lock` with `-p`
//! is a usage error.

use crate::install_support::{wheels, With};
use crate::run::{assert_ok, text, wsp_installing};

#[test]
fn wsp_lock_prints_a_pylock_that_wsp_create_makes_again() {
    let temp = tempfile::tempdir().unwrap();
    let links = temp.path().join("wheels");
    wheels(&links);
    let links = links.display().to_string();
    let state = temp.path().join("state");
    let args = [
        "create",
        "original",
        "--python",
        "3.12",
        "-p",
        "wsp-beta",
        "--find-links",
        &links,
        "--no-index",
    ];
    assert_ok(&wsp_installing(None, &state, With::Uv, &args), "create");
    let locked = wsp_installing(None, &state, With::Uv, &["lock", "original"]);
    let lock = assert_ok(&locked, "lock");
    assert!(lock.starts_with("lock-version = \"1.0\""), "{lock}");
    let file = temp.path().join("pylock.toml");
    std::fs::write(&file, &lock).unwrap();

    let file = file.display().to_string();
    let args = [
        "--json", "create", "again", "--python", "3.12", "--lock", &file,
    ];
    let again = assert_ok(
        &wsp_installing(None, &state, With::Uv, &args),
        "create --lock",
    );
    let again: serde_json::Value = serde_json::from_str(&again).expect("JSON details");
    let original = wsp_installing(None, &state, With::Uv, &["--json", "get", "original"]);
    let original: serde_json::Value = serde_json::from_str(&text(&original.stdout)).unwrap();
    assert_eq!(again["installed_packages"], original["installed_packages"]);

    let args = [
        "create",
        "both",
        "--python",
        "3.12",
        "--lock",
        &file,
        "-p",
        "wsp-alpha",
    ];
    let refused = wsp_installing(None, &state, With::Uv, &args);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
}
