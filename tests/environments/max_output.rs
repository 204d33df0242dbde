//! `wsp serve --max-output-bytes N` sets the default per-stream cap of `environment/execute`;
//! a request's own `max_output_bytes` still wins.

use crate::support::Server;
use serde_json::json;

#[tokio::test]
async fn the_server_default_caps_each_stream_and_a_request_overrides_it() {
    let mut server = Server::start(&["--max-output-bytes", "5"]);
    server.initialize().await;
    let created = server
        .call(
            1,
            "environment/create",
            json!({"name": "capped", "python_version": "3.12"}),
        )
        .await;
    let env = created["result"]["id"].clone();
    let argv = json!([
        "python",
        "-c",
        "import sys; print('0123456789'); sys.stderr.write('abcdefghij')"
    ]);
    let capped = server
        .call(2, "environment/execute", json!({"id": env, "argv": argv}))
        .await;
    let result = &capped["result"];
    assert_eq!(result["stdout"], json!("01234"), "{capped}");
    assert_eq!(result["stderr"], json!("abcde"));
    assert_eq!(result["stdout_truncated"], json!(true));
    assert_eq!(result["stderr_truncated"], json!(true));

    let wider = server
        .call(
            3,
            "environment/execute",
            json!({"id": env, "argv": argv, "max_output_bytes": 100}),
        )
        .await;
    assert_eq!(wider["result"]["stdout"], json!("0123456789\n"), "{wider}");
    assert_eq!(wider["result"]["stdout_truncated"], json!(false));
}
