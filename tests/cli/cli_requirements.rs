//! Requirements files over the real binary: `wsp install -r` and `wsp create -r` read the file in
//! the CLI (comments, blank lines, continuations, `-r` nesting taken from the including file's
//! directory, relative paths from the working directory) and refuse what they can't send.

use crate::install_support::wheels;
use crate::run::{expect_status, text, wsp_in};

#[test]
fn requirements_files_with_comments_nesting_and_local_paths() {
    let temp = tempfile::tempdir().unwrap();
    let work = temp.path().join("work");
    let state = temp.path().join("state");
    wheels(&work.join("wheels"));
    let nested = work.join("reqs/more");
    std::fs::create_dir_all(&nested).unwrap();
    // `-r more/extra.txt` is taken from reqs/; the wheel path in extra.txt from the CLI's
    // working directory, as pip takes it.
    std::fs::write(
        work.join("reqs/base.txt"),
        "# the base\n\nwsp-beta  # needs wsp-alpha\n-r more/extra.txt\n",
    )
    .unwrap();
    std::fs::write(
        nested.join("extra.txt"),
        "./wheels/wsp_gamma-1.0-py3-none-any.whl \\\n  # a continued comment\n",
    )
    .unwrap();
    let links = ["--find-links", "wheels", "--no-index"];

    let create = [
        &["create", "demo", "--python", "3.12", "-r", "reqs/base.txt"][..],
        &links,
    ]
    .concat();
    let created = expect_status(&wsp_in(&work, &state, &create), 0, "create -r");
    for name in ["wsp-alpha", "wsp-beta", "wsp-gamma"] {
        assert!(created.contains(name), "{name} missing in\n{created}");
    }

    std::fs::write(work.join("upgrade.txt"), "wsp-alpha>=2\n").unwrap();
    let install = [&["install", "demo", "-r", "upgrade.txt"][..], &links].concat();
    let installed = expect_status(&wsp_in(&work, &state, &install), 0, "install -r");
    assert!(installed.contains("2.0"), "{installed}");
}

#[test]
fn requirements_files_refuse_what_they_cannot_send() {
    let temp = tempfile::tempdir().unwrap();
    let work = temp.path();
    let state = work.join("state");
    let refused = |file: &str, content: &str, expected: &str| {
        std::fs::write(work.join(file), content).unwrap();
        let output = wsp_in(work, &state, &["install", "demo", "-r", file]);
        expect_status(&output, 2, file);
        let stderr = text(&output.stderr);
        assert!(stderr.contains(expected), "{file}: {stderr}");
        assert!(!state.exists(), "no server was started for {file}");
    };
    refused(
        "constraints.txt",
        "six\n-c pins.txt\n",
        "constraints.txt:2: `-c` is not supported in a requirements file",
    );
    refused(
        "hashes.txt",
        "six --hash=sha256:00\n",
        "hashes.txt:1: `--hash=sha256:00` is not supported",
    );
    refused(
        "index.txt",
        "--index-url https://example.invalid\n",
        "give --find-links, --index-url or --no-index on the command line",
    );
    refused("loop.txt", "-r loop.txt\n", "loop.txt includes itself");
    refused("empty.txt", "# nothing\n\n", "no packages to install");
    refused(
        "missing.txt",
        "-r absent.txt\n",
        "cannot read the requirements file",
    );
}
