//! Relative paths given to the CLI's `install` and `create -p` are taken from the CLI's own
//! working directory, not from the environment's root where the server runs the installer:
//! a wheel, a bare wheel file name, an sdist, a project directory and `--find-links`, with uv
//! and with pip, over the real binary. A name that happens to match a local directory is
//! still a name.

use std::path::Path;
use std::process::Command;

use crate::install_support::{wheels, With};
use crate::run::{assert_ok, wsp_installing};
use wsp_testing::Distribution;

/// A project directory `dir` holding `distribution`'s sources, made by unpacking its sdist.
fn project_dir(distribution: &Distribution, dir: &Path) {
    let sdist = distribution
        .write_sdist(dir, "")
        .expect("the sdist is written");
    let unpacked = Command::new("tar")
        .arg("-xzf")
        .arg(&sdist)
        .arg("-C")
        .arg(dir)
        .status()
        .expect("tar runs");
    assert!(unpacked.success(), "the sdist unpacks");
    std::fs::remove_file(sdist).expect("the sdist is removed");
}

#[test]
fn relative_package_paths_are_taken_from_the_cli_working_directory() {
    for with in With::BOTH {
        let temp = tempfile::tempdir().unwrap();
        let work = temp.path().join("work");
        let state = temp.path().join("state");
        wheels(&work.join("wheels"));
        Distribution::new("wsp-delta", "1.0")
            .write_sdist(&work.join("dists"), "")
            .expect("the sdist is written");
        project_dir(&Distribution::new("wsp-epsilon", "1.0"), &work.join("src"));
        // A directory whose name is a package's: `wsp-beta` below must stay a name.
        std::fs::create_dir_all(work.join("wsp-beta")).unwrap();

        let create = [
            "create",
            "demo",
            "--python",
            "3.12",
            "-p",
            "./wheels/wsp_alpha-1.0-py3-none-any.whl",
        ];
        assert_ok(
            &wsp_installing(Some(&work), &state, with, &create),
            "create -p ./wheel",
        );
        let wheels_dir = work.join("wheels");
        let bare = ["install", "demo", "wsp_gamma-1.0-py3-none-any.whl"];
        assert_ok(
            &wsp_installing(Some(&wheels_dir), &state, with, &bare),
            "a bare wheel name",
        );
        let sdist_and_dir = [
            "install",
            "demo",
            "dists/wsp_delta-1.0.tar.gz",
            "./src/wsp_epsilon-1.0",
        ];
        assert_ok(
            &wsp_installing(Some(&work), &state, with, &sdist_and_dir),
            "an sdist, a dir",
        );
        let by_name = [
            "install",
            "demo",
            "wsp-beta",
            "--find-links",
            "wheels",
            "--no-index",
        ];
        let shown = assert_ok(
            &wsp_installing(Some(&work), &state, with, &by_name),
            "a name, relative links",
        );
        for name in [
            "wsp-alpha",
            "wsp-beta",
            "wsp-gamma",
            "wsp-delta",
            "wsp-epsilon",
        ] {
            assert!(shown.contains(name), "{with:?}: {name} missing in\n{shown}");
        }
        let code = "import wsp_alpha, wsp_beta, wsp_gamma, wsp_delta, wsp_epsilon; print('ok')";
        let exec = ["exec", "demo", "--", "python", "-c", code];
        let ran = assert_ok(&wsp_installing(Some(&work), &state, with, &exec), "exec");
        assert_eq!(ran, "ok\n", "{with:?}");
    }
}
