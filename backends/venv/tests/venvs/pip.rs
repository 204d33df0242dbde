//! pip inside native environments: `python -m ensurepip`, then installing a local wheel with
//! `pip install --no-index`, then importing it. On the oldest and the newest pyenv Python 3
//! here; `seed.rs` runs `ensurepip` inside a native environment for every Python 3 (that is how
//! the seed cache is filled) and installs the wheel with the seeded pip.

use std::process::Command;

use crate::common::{
    block_on, build_wheel, for_each, install_and_import, python3_infos, run_ok, site_packages,
};
use wsp_backend_venv::{create_venv, VenvOptions};

#[test]
fn ensurepip_and_pip_install_work_on_the_oldest_and_newest_python3() {
    let mut infos = python3_infos();
    let newest = infos.pop().expect("one Python 3");
    let oldest = infos.into_iter().next();
    for_each(oldest.into_iter().chain([newest]).collect(), |info| {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join("env");
        block_on(create_venv(&root, info, &VenvOptions::default())).expect("created");
        let python = root.join("bin/python");
        run_ok(Command::new(&python).args(["-m", "ensurepip"]));
        let wheel = build_wheel(&info.executable, dir.path());
        install_and_import(&root, &wheel, &site_packages(&root, info));
    });
}
