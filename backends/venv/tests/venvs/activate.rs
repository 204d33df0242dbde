//! The activation scripts, sourced by real shells: bash (and dash) for every pyenv Python 3,
//! fish and tcsh when they are installed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{block_on, for_each, python, python3_infos, run_ok};
use wsp_backend_venv::{create_venv, VenvOptions};

/// `KEY=value` lines of a shell's output.
fn fields(output: &str) -> BTreeMap<String, String> {
    output
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

fn make_env(dir: &Path, name: &str, prompt: Option<&str>) -> PathBuf {
    let root = dir.join(name);
    let options = VenvOptions {
        prompt: prompt.map(str::to_owned),
        ..VenvOptions::default()
    };
    block_on(create_venv(&root, &python("3.12"), &options)).expect("created");
    root
}

fn installed(shell: &str) -> bool {
    Command::new(shell)
        .args(["-c", "exit 0"])
        .status()
        .is_ok_and(|s| s.success())
}

const POSIX_SCRIPT: &str = r#"
PS1='$ '
PYTHONHOME=/nowhere; export PYTHONHOME
before="$PATH"
. "$1/bin/activate"
echo "PREFIX=$(python -c 'import sys; print(sys.prefix)')"
echo "VIRTUAL_ENV=$VIRTUAL_ENV"
echo "VIRTUAL_ENV_PROMPT=$VIRTUAL_ENV_PROMPT"
echo "FIRST=${PATH%%:*}"
echo "PS1=$PS1"
echo "HOME_WHILE_ACTIVE=${PYTHONHOME-unset}"
deactivate
[ "$PATH" = "$before" ] && echo "PATH_RESTORED=yes"
echo "VIRTUAL_ENV_AFTER=${VIRTUAL_ENV-unset}"
echo "PS1_AFTER=$PS1"
echo "HOME_AFTER=${PYTHONHOME-unset}"
type deactivate 2>/dev/null | grep -q function || echo "DEACTIVATE=gone"
"#;

fn check_posix(shell: &str, root: &Path) {
    let output = run_ok(
        Command::new(shell)
            .args(["-c", POSIX_SCRIPT, shell])
            .arg(root),
    );
    let f = fields(&output);
    let root_text = root.to_string_lossy();
    assert_eq!(f["PREFIX"], root_text, "{shell}: {output}");
    assert_eq!(f["VIRTUAL_ENV"], root_text);
    assert_eq!(f["FIRST"], format!("{root_text}/bin"));
    assert_eq!(f["PS1"], format!("({}) $ ", f["VIRTUAL_ENV_PROMPT"]));
    assert_eq!(f["HOME_WHILE_ACTIVE"], "unset");
    assert_eq!(
        f.get("PATH_RESTORED").map(String::as_str),
        Some("yes"),
        "{output}"
    );
    assert_eq!(f["VIRTUAL_ENV_AFTER"], "unset");
    assert_eq!(f["PS1_AFTER"], "$ ");
    assert_eq!(f["HOME_AFTER"], "/nowhere");
    assert_eq!(
        f.get("DEACTIVATE").map(String::as_str),
        Some("gone"),
        "{output}"
    );
}

#[test]
fn bash_activation_works_for_every_python3() {
    for_each(python3_infos(), |info| {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().join(format!("env-{}", info.version));
        block_on(create_venv(&root, info, &VenvOptions::default())).expect("created");
        check_posix("bash", &root);
    });
}

#[test]
fn dash_can_source_the_posix_script() {
    let dir = tempfile::tempdir().expect("tempdir");
    check_posix("dash", &make_env(dir.path(), "env", None));
}

#[test]
fn activating_another_environment_leaves_the_first() {
    let dir = tempfile::tempdir().expect("tempdir");
    let first = make_env(dir.path(), "first", None);
    let second = make_env(dir.path(), "second", None);
    let script = r#"
before="$PATH"
. "$1/bin/activate"
. "$2/bin/activate"
echo "VIRTUAL_ENV=$VIRTUAL_ENV"
case "$PATH" in *"$1/bin"*) echo "FIRST_ON_PATH=yes" ;; *) echo "FIRST_ON_PATH=no" ;; esac
deactivate
[ "$PATH" = "$before" ] && echo "PATH_RESTORED=yes"
"#;
    let output = run_ok(
        Command::new("bash")
            .args(["-c", script, "bash"])
            .args([&first, &second]),
    );
    let f = fields(&output);
    assert_eq!(f["VIRTUAL_ENV"], second.to_string_lossy());
    assert_eq!(f["FIRST_ON_PATH"], "no");
    assert_eq!(
        f.get("PATH_RESTORED").map(String::as_str),
        Some("yes"),
        "{output}"
    );
}

#[test]
fn prompts_and_roots_cannot_inject_commands() {
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("pwned");
    let hostile = format!("$(touch {0}) `touch {0}` '\"", marker.display());
    let root = make_env(dir.path(), "it's $(a) \"root\"", Some(&hostile));
    let script = r#"
PS1='$ '
. "$1/bin/activate"
echo "VIRTUAL_ENV=$VIRTUAL_ENV"
echo "VIRTUAL_ENV_PROMPT=$VIRTUAL_ENV_PROMPT"
echo "PS1=$PS1"
"#;
    let output = run_ok(Command::new("bash").args(["-c", script, "bash"]).arg(&root));
    let f = fields(&output);
    assert_eq!(f["VIRTUAL_ENV"], root.to_string_lossy());
    assert_eq!(f["VIRTUAL_ENV_PROMPT"], hostile);
    let prefix = f["PS1"].strip_suffix("$ ").expect("the old prompt follows");
    assert!(!prefix.contains(['$', '`', '\'', '"']), "{prefix}");
    // Show the prompt the way an interactive shell would expand it.
    let shown = run_ok(
        Command::new("bash")
            .args([
                "-c",
                &format!("{script}\necho \"SHOWN=${{PS1@P}}\""),
                "bash",
            ])
            .arg(&root),
    );
    assert!(fields(&shown).contains_key("SHOWN"));
    assert!(!marker.exists(), "the prompt ran a command");
}

#[test]
fn fish_activation_works() {
    if !installed("fish") {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI installs fish (.ci/run); it is missing"
        );
        eprintln!("fish is not installed; skipped");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let root = make_env(dir.path(), "it's fish", None);
    let script = r#"
set -l before "$PATH"
source $argv[1]/bin/activate.fish
echo "PREFIX="(python -c 'import sys; print(sys.prefix)')
echo "VIRTUAL_ENV=$VIRTUAL_ENV"
echo "FIRST=$PATH[1]"
echo "PROMPT="(fish_prompt | string collect)
deactivate
test "$PATH" = "$before"; and echo "PATH_RESTORED=yes"
set -q VIRTUAL_ENV; or echo "VIRTUAL_ENV_AFTER=unset"
functions -q deactivate; or echo "DEACTIVATE=gone"
"#;
    let output = run_ok(
        Command::new("fish")
            .args(["--no-config", "-c", script])
            .arg(&root),
    );
    let f = fields(&output);
    let root_text = root.to_string_lossy();
    assert_eq!(f["PREFIX"], root_text, "{output}");
    assert_eq!(f["VIRTUAL_ENV"], root_text);
    assert_eq!(f["FIRST"], format!("{root_text}/bin"));
    assert!(f["PROMPT"].starts_with("(it's fish) "), "{output}");
    assert_eq!(
        f.get("PATH_RESTORED").map(String::as_str),
        Some("yes"),
        "{output}"
    );
    assert_eq!(f["VIRTUAL_ENV_AFTER"], "unset");
    assert_eq!(f["DEACTIVATE"], "gone");
}

#[test]
fn tcsh_activation_works() {
    if !installed("tcsh") {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI installs tcsh (.ci/run); it is missing"
        );
        eprintln!("tcsh is not installed; skipped");
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let root = make_env(dir.path(), "csh-env!", None);
    let other = make_env(dir.path(), "other", None);
    let script_path = dir.path().join("check.csh");
    let quoted = root.to_string_lossy().replace('!', "\\!");
    let script = format!(
        r#"set prompt='> '
set before="$PATH"
source '{quoted}/bin/activate.csh'
echo "PREFIX=`python -c 'import sys; print(sys.prefix)'`"
echo "VIRTUAL_ENV=$VIRTUAL_ENV"
echo "PROMPT=$prompt"
source '{other}/bin/activate.csh'
echo "PROMPT_OTHER=$prompt"
echo "PATH_OTHER=$PATH"
deactivate
if ("$PATH" == "$before") echo "PATH_RESTORED=yes"
if (! $?VIRTUAL_ENV) echo "VIRTUAL_ENV_AFTER=unset"
echo "PROMPT_AFTER=$prompt"
if (`alias deactivate | wc -c` == 0) echo "DEACTIVATE=gone"
"#,
        other = other.display()
    );
    std::fs::write(&script_path, script).expect("script written");
    let output = run_ok(Command::new("tcsh").arg("-f").arg(&script_path));
    let f = fields(&output);
    let root_text = root.to_string_lossy();
    assert_eq!(f["PREFIX"], root_text, "{output}");
    assert_eq!(f["VIRTUAL_ENV"], root_text);
    assert_eq!(f["PROMPT"], "(csh-env_) > ", "{output}");
    assert_eq!(f["PROMPT_OTHER"], "(other) > ", "{output}");
    assert!(!f["PATH_OTHER"].contains(&*root_text), "{output}");
    assert_eq!(
        f.get("PATH_RESTORED").map(String::as_str),
        Some("yes"),
        "{output}"
    );
    assert_eq!(f["VIRTUAL_ENV_AFTER"], "unset");
    assert_eq!(f["PROMPT_AFTER"], "> ");
    assert_eq!(
        f.get("DEACTIVATE").map(String::as_str),
        Some("gone"),
        "{output}"
    );
}
