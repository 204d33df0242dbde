//! The fast path against real pip, on real wheels (wsp-testing's `Distribution`) and pyenv's
//! CPython 3.12: the same files, scripts and RECORD; pip uninstalls what it installed; what
//! it leaves to pip, and what it refuses, changes nothing.

mod fallback;
mod hostile;
mod support;

use std::path::Path;
use std::process::Command;

use support::*;
use wsp_testing::Distribution;
use wsp_wheels::Outcome;

/// The request of the comparison: a project with a dependency (two versions), an extra (whose
/// project has 250 modules), a marker that excludes a dependency, console and GUI scripts, a
/// `.data/scripts` script, a `.data/data` file, a package; and wheels that do not fit.
fn write_wheels(dir: &Path) {
    let mut top = Distribution::new("wsp-top", "1.0")
        .provides_extra("fancy")
        .provides_extra("unused")
        .requires("wsp-dep>=1")
        .requires("wsp-extra-dep; extra == \"fancy\"")
        .requires("wsp-never; extra == \"unused\"")
        .requires("wsp-excluded; python_version < \"3\"");
    let info = "wsp_top-1.0.dist-info";
    let data = "wsp_top-1.0.data";
    top.files.extend([
        (
            "wsp_top.py".to_owned(),
            "def main():\n    print('top main')\n\ndef gui():\n    print('top gui')\n".to_owned(),
        ),
        ("wsp_top_pkg/__init__.py".to_owned(), "X = 1\n".to_owned()),
        ("wsp_top_pkg/sub/mod.py".to_owned(), "Y = 2\n".to_owned()),
        ("wsp_top_pkg/data.json".to_owned(), "{}\n".to_owned()),
        (
            format!("{info}/entry_points.txt"),
            "[console_scripts]\nwsp-top = wsp_top:main\n\n[gui_scripts]\nwsp-top-gui = wsp_top:gui\n"
                .to_owned(),
        ),
        (format!("{data}/scripts/wsp-tool"), "#!python\nprint('tool ran')\n".to_owned()),
        (format!("{data}/data/share/wsp-top/data.txt"), "data\n".to_owned()),
        (format!("{data}/purelib/wsp_top_extra.py"), "Z = 3\n".to_owned()),
    ]);
    // `Distribution::new` added `wsp_top.py` already; keep the one with the functions.
    top.files.remove(0);
    top.write_wheel(dir).unwrap();
    for version in ["1.0", "2.0"] {
        Distribution::new("wsp-dep", version)
            .write_wheel(dir)
            .unwrap();
    }
    // Enough modules for the bytecode compile to be split among several interpreter runs.
    let mut many = Distribution::new("wsp-extra-dep", "1.0");
    many.files
        .extend((0..250).map(|i| (format!("wsp_many/m{i}.py"), format!("N = {i}\n"))));
    many.write_wheel(dir).unwrap();
    Distribution::new("wsp-excluded", "1.0")
        .write_wheel(dir)
        .unwrap();
    let newer = Distribution::new("wsp-dep", "3.0")
        .write_wheel(dir)
        .unwrap();
    std::fs::rename(&newer, dir.join("wsp_dep-3.0-cp311-cp311-linux_x86_64.whl")).unwrap();
    let py2 = Distribution::new("wsp-dep", "4.0")
        .write_wheel(dir)
        .unwrap();
    std::fs::rename(&py2, dir.join("wsp_dep-4.0-py2-none-any.whl")).unwrap();
}

/// `text` with `root` replaced by `ROOT`.
fn rooted(text: &str, root: &Path) -> String {
    text.replace(&root.display().to_string(), "ROOT")
}

/// RECORD rows with the root-dependent hashes (INSTALLER, scripts with shebangs) blanked.
fn record_rows(root: &Path, dist_info: &str) -> Vec<String> {
    let site = root.join("lib/python3.12/site-packages");
    let text = std::fs::read_to_string(site.join(dist_info).join("RECORD")).unwrap();
    assert!(text.ends_with("\r\n"), "{text}");
    text.lines()
        .map(|line| {
            let path = line.split(',').next().unwrap();
            if path.ends_with("/INSTALLER") || path.starts_with("../../../bin/") {
                format!("{path},<varies>")
            } else {
                line.to_owned()
            }
        })
        .collect()
}

#[tokio::test]
async fn the_fast_path_installs_what_pip_installs() {
    let scratch = tempfile::tempdir().unwrap();
    let links = scratch.path().join("wheels");
    std::fs::create_dir(&links).unwrap();
    write_wheels(&links);
    // One base name, which the venvs' activation scripts spell.
    let (fast, slow) = (
        scratch.path().join("fast/env"),
        scratch.path().join("pip/env"),
    );
    venv(&fast);
    venv(&slow);
    let wanted = ["wsp-top[fancy]"];
    let outcome = fast_install(&request(&fast, &wanted, &[&links]))
        .await
        .unwrap();
    assert_eq!(outcome, Outcome::Installed(3));
    let links_text = links.display().to_string();
    pip(
        &slow,
        &[
            "install",
            "--no-index",
            "--find-links",
            &links_text,
            wanted[0],
        ],
    );

    let (fast_files, slow_files) = (files(&fast), files(&slow));
    assert_eq!(
        fast_files, slow_files,
        "the same files, with the same modes"
    );
    assert_eq!(dirs(&fast), dirs(&slow));
    assert_eq!(fast_files["bin/wsp-top"], 0o755);
    for (rel, _) in fast_files.iter().filter(|(rel, _)| !rel.ends_with(".pyc")) {
        if let Ok(target) = std::fs::read_link(fast.join(rel)) {
            assert_eq!(target, std::fs::read_link(slow.join(rel)).unwrap(), "{rel}");
            continue;
        }
        let a = std::fs::read(fast.join(rel)).unwrap();
        let b = std::fs::read(slow.join(rel)).unwrap();
        if rel.ends_with("/INSTALLER") {
            assert_eq!((a.as_slice(), b.as_slice()), (&b"wsp\n"[..], &b"pip\n"[..]));
        } else if rel.ends_with("/RECORD") {
            let dist_info = Path::new(rel).parent().unwrap().file_name().unwrap();
            let dist_info = dist_info.to_str().unwrap();
            assert_eq!(
                record_rows(&fast, dist_info),
                record_rows(&slow, dist_info),
                "{rel}"
            );
        } else {
            let (a, b) = (String::from_utf8_lossy(&a), String::from_utf8_lossy(&b));
            assert_eq!(rooted(&a, &fast), rooted(&b, &slow), "{rel}");
        }
    }
    let script = std::fs::read_to_string(fast.join("bin/wsp-top")).unwrap();
    assert!(
        script.starts_with(&format!("#!{}/bin/python\n", fast.display())),
        "{script}"
    );
    let tool = std::fs::read_to_string(fast.join("bin/wsp-tool")).unwrap();
    assert_eq!(
        tool,
        format!("#!{}/bin/python\nprint('tool ran')\n", fast.display())
    );

    let ran = Command::new(fast.join("bin/wsp-top")).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "top main\n");
    let ran = Command::new(fast.join("bin/python"))
        .arg(fast.join("bin/wsp-tool"))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "tool ran\n");
    let imports = "import wsp_top, wsp_dep, wsp_extra_dep, wsp_top_pkg.sub.mod, wsp_top_extra; \
                   print(wsp_dep.VERSION)";
    let ran = Command::new(fast.join("bin/python"))
        .args(["-c", imports])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "2.0\n", "{ran:?}");

    let listed = wsp_install::packages::installed_packages(&fast).unwrap();
    let listed: Vec<(String, String)> = listed.into_iter().map(|p| (p.name, p.version)).collect();
    let expected = [
        ("wsp-dep", "2.0"),
        ("wsp-extra-dep", "1.0"),
        ("wsp-top", "1.0"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect();
    assert_eq!(listed, expected);
}

#[tokio::test]
async fn pip_uninstalls_what_the_fast_path_installed() {
    let Scratch {
        dir: _dir,
        links,
        root,
    } = scratch(write_wheels);
    let pristine = files(&root);
    let outcome = fast_install(&request(&root, &["wsp-top[fancy]"], &[&links]))
        .await
        .unwrap();
    assert_eq!(outcome, Outcome::Installed(3));
    pip(
        &root,
        &["uninstall", "--yes", "wsp-top", "wsp-dep", "wsp-extra-dep"],
    );
    assert_eq!(
        files(&root),
        pristine,
        "pip removed every file RECORD lists"
    );
}

#[tokio::test]
async fn an_installed_version_that_satisfies_is_kept() {
    let Scratch {
        dir: _dir,
        links,
        root,
    } = scratch(write_wheels);
    let first = fast_install(&request(&root, &["wsp-dep==1.0"], &[&links]))
        .await
        .unwrap();
    assert_eq!(first, Outcome::Installed(1));
    let before = files(&root);
    let again = fast_install(&request(&root, &["wsp-dep"], &[&links]))
        .await
        .unwrap();
    assert_eq!(again, Outcome::Installed(0));
    assert_eq!(files(&root), before);
}

#[tokio::test]
async fn the_installer_takes_the_fast_path_with_pip() {
    let Scratch {
        dir: _dir,
        links,
        root,
    } = scratch(write_wheels);
    let installer = wsp_install::Installer::ExternalPip(base_pip_dir());
    let (sink, mut steps) = tokio::sync::mpsc::channel(8);
    let mut wanted = request(&root, &["wsp-top"], &[&links]);
    wanted.progress = Some(sink);
    let python = root.join("bin/python");
    let activation = wsp_exec::Activation::venv(&root);
    wsp_install::install(&installer, &python, &activation, &wanted)
        .await
        .unwrap();
    drop(wanted);
    let installer_file = root.join("lib/python3.12/site-packages/wsp_top-1.0.dist-info/INSTALLER");
    assert_eq!(std::fs::read_to_string(installer_file).unwrap(), "wsp\n");
    let mut messages = Vec::new();
    while let Some(step) = steps.recv().await {
        messages.push(step.message);
    }
    assert!(
        messages[0].starts_with("Resolved 2 packages"),
        "{messages:?}"
    );
    assert!(
        messages[1].starts_with("Installed 2 packages"),
        "{messages:?}"
    );
    let sources = wsp_install::sources::read_sources(&root);
    assert!(sources.contains_key("wsp-top"), "{sources:?}");
}
