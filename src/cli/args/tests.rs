//! Tests of `args`.

use super::*;
use clap::CommandFactory;

#[test]
fn command_line_definition_is_consistent() {
    Cli::command().debug_assert();
}

#[test]
fn env_pairs() {
    assert_eq!(parse_env_pair("A=b=c"), Ok(("A".into(), "b=c".into())));
    assert_eq!(parse_env_pair("A="), Ok(("A".into(), String::new())));
    assert!(parse_env_pair("=x").is_err());
    assert!(parse_env_pair("novalue").is_err());
}

#[test]
fn options_before_and_after_the_subcommand_merge() {
    let cli = Cli::try_parse_from([
        "wsp",
        "--backend",
        "conda",
        "--channel",
        "a",
        "create",
        "demo",
        "--python",
        "3.12",
        "--channel",
        "b",
        "--json",
    ])
    .unwrap();
    let Command::Create {
        name,
        python,
        client,
        ..
    } = cli.command
    else {
        panic!("not create");
    };
    assert_eq!((name.as_str(), python.as_deref()), ("demo", Some("3.12")));
    let client = cli.client.merge(client);
    assert!(client.json);
    let merged = client.server;
    assert_eq!(merged.backend, Some(BackendArg::Conda));
    assert_eq!(merged.channel, ["a", "b"]);
    let flags: Vec<String> = merged
        .to_serve_flags()
        .into_iter()
        .map(|f| f.into_string().unwrap())
        .collect();
    assert_eq!(
        flags,
        ["--backend", "conda", "--channel", "a", "--channel", "b"]
    );
}

#[test]
fn exec_takes_argv_after_double_dash() {
    let cli = Cli::try_parse_from([
        "wsp", "exec", "demo", "--env", "A=1", "--cwd", "/x", "--", "python", "-c", "pass",
    ])
    .unwrap();
    let Command::Exec(exec) = cli.command else {
        panic!("not exec");
    };
    assert_eq!(exec.argv, ["python", "-c", "pass"]);
    assert_eq!(exec.env, [("A".to_owned(), "1".to_owned())]);
    assert_eq!(exec.cwd.as_deref(), Some("/x"));
    assert!(Cli::try_parse_from(["wsp", "exec", "demo"]).is_err());
}

#[test]
fn keep_bytes_takes_integers_and_binary_units() {
    assert_eq!(parse_bytes("0"), Ok(0));
    assert_eq!(parse_bytes("1500"), Ok(1500));
    assert_eq!(parse_bytes("2K"), Ok(2048));
    assert_eq!(parse_bytes("3MiB"), Ok(3 << 20));
    assert_eq!(parse_bytes("10G"), Ok(10 << 30));
    assert_eq!(parse_bytes("1TB"), Ok(1 << 40));
    assert!(parse_bytes("").is_err());
    assert!(parse_bytes("-1").is_err());
    assert!(parse_bytes("5X").is_err());
    assert!(parse_bytes("99999999999T").is_err());
}
