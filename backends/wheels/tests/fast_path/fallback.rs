//! Requests the fast path leaves to pip: each says why, and changes nothing.

use std::path::Path;

use wsp_testing::Distribution;
use wsp_wheels::Outcome;

use crate::support::*;

fn not_applicable(outcome: Outcome, expected: &str) {
    match outcome {
        Outcome::NotApplicable(reason) => assert!(reason.contains(expected), "{reason}"),
        other => panic!("expected not-applicable ({expected}), got {other:?}"),
    }
}

fn write_wheels(dir: &Path) {
    Distribution::new("c-dep", "1.0").write_wheel(dir).unwrap();
    Distribution::new("c-dep", "2.0").write_wheel(dir).unwrap();
    Distribution::new("c-dep2", "1.0").write_wheel(dir).unwrap();
    Distribution::new("c-dep2", "2.0").write_wheel(dir).unwrap();
    Distribution::new("c-a", "1.0")
        .requires("c-dep2")
        .write_wheel(dir)
        .unwrap();
    Distribution::new("c-b", "1.0")
        .requires("c-dep2<2")
        .write_wheel(dir)
        .unwrap();
    Distribution::new("c-unsure", "1.0")
        .write_wheel(dir)
        .unwrap();
    let musllinux = Distribution::new("c-unsure", "2.0")
        .write_wheel(dir)
        .unwrap();
    let renamed = "c_unsure-2.0-cp312-cp312-musllinux_1_2_x86_64.whl";
    std::fs::rename(musllinux, dir.join(renamed)).unwrap();
    Distribution::new("c-sdist", "1.0")
        .write_wheel(dir)
        .unwrap();
    Distribution::new("c-sdist", "1.1")
        .write_sdist(dir, "")
        .unwrap();
    Distribution::new("c-new-python", "1.0")
        .write_wheel(dir)
        .unwrap();
}

#[tokio::test]
async fn requests_pip_must_handle_change_nothing() {
    let Scratch {
        dir: _dir,
        links,
        root,
    } = scratch(write_wheels);
    let installed = fast_install(&request(&root, &["c-dep==1.0"], &[&links]))
        .await
        .unwrap();
    assert_eq!(installed, Outcome::Installed(1));
    let before = files(&root);
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["c-a", "c-b"], "excludes"),
        (vec!["c-nothing"], "no wheel of c-nothing"),
        (vec!["c-dep==2.0"], "is installed"),
        (vec!["c-unsure"], "only pip can judge"),
        (vec!["c-sdist"], "source distribution"),
        (
            vec!["c-dep @ file:///nowhere/c_dep-1.0-py3-none-any.whl"],
            "direct reference",
        ),
        (vec!["c-dep>=2.0a1"], "pre-release"),
    ];
    for (packages, why) in cases {
        let outcome = fast_install(&request(&root, &packages, &[&links]))
            .await
            .unwrap();
        not_applicable(outcome, why);
        assert_eq!(files(&root), before, "{packages:?}");
    }
    let mut upgrade = request(&root, &["c-a"], &[&links]);
    upgrade.upgrade = true;
    not_applicable(fast_install(&upgrade).await.unwrap(), "upgrade");
    let mut index = request(&root, &["c-a"], &[&links]);
    index.source.no_index = false;
    not_applicable(fast_install(&index).await.unwrap(), "index");
    let mut remote = request(&root, &["c-a"], &[]);
    remote.source.find_links = vec!["https://example.com/wheels/".to_owned()];
    not_applicable(
        fast_install(&remote).await.unwrap(),
        "not a local directory",
    );
    assert_eq!(files(&root), before);
}

#[tokio::test]
async fn wheels_for_another_python_or_platform_are_skipped() {
    let scratch = tempfile::tempdir().unwrap();
    let links = scratch.path().join("wheels");
    std::fs::create_dir(&links).unwrap();
    let names = [
        "s_skip-1.0-py2-none-any.whl",
        "s_skip-1.0-cp313-cp313-linux_x86_64.whl",
        "s_skip-1.0-cp312-cp312-win_amd64.whl",
        "s_skip-1.0-cp312-cp312-macosx_11_0_arm64.whl",
        "s_skip-1.0-cp312-cp312-linux_aarch64.whl",
        "s_skip-1.0-pp310-pypy310_pp73-linux_x86_64.whl",
    ];
    for name in names {
        let wheel = Distribution::new("s-skip", "1.0")
            .write_wheel(&links)
            .unwrap();
        std::fs::rename(wheel, links.join(name)).unwrap();
    }
    let root = scratch.path().join("env");
    venv(&root);
    let before = files(&root);
    let outcome = fast_install(&request(&root, &["s-skip"], &[&links]))
        .await
        .unwrap();
    not_applicable(outcome, "no wheel of s-skip fits");
    Distribution::new("s-skip", "0.9")
        .write_wheel(&links)
        .unwrap();
    let outcome = fast_install(&request(&root, &["s-skip"], &[&links]))
        .await
        .unwrap();
    assert_eq!(outcome, Outcome::Installed(1));
    let listed = wsp_install::packages::installed_packages(&root).unwrap();
    assert_eq!(
        (listed[0].name.as_str(), listed[0].version.as_str()),
        ("s-skip", "0.9")
    );
    assert_ne!(files(&root), before);
}

/// The request's own constraints on one project, given apart, hold together for its pick (as
/// pip's resolver makes them), instead of leaving the request to pip.
#[tokio::test]
async fn the_requests_own_constraints_on_a_project_hold_together() {
    let Scratch {
        dir: _dir,
        links,
        root,
    } = scratch(write_wheels);
    let outcome = fast_install(&request(&root, &["c-dep2>=1", "c-dep2<2"], &[&links]))
        .await
        .unwrap();
    assert_eq!(outcome, Outcome::Installed(1));
    let listed = wsp_install::packages::installed_packages(&root).unwrap();
    let dep2: Vec<_> = listed.iter().filter(|p| p.name == "c-dep2").collect();
    assert_eq!(dep2.len(), 1, "{listed:?}");
    assert_eq!(dep2[0].version, "1.0");
}
