//! `environment/execute` with `stream: true` over the real binary: `environment/output`
//! notifications arrive as the command prints, in order, all before the answer, which still
//! carries the output.

use crate::support::{request, Server};
use serde_json::{json, Value};

#[tokio::test]
async fn output_is_streamed_in_order_before_the_answer() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    let created = server
        .call(
            1,
            "environment/create",
            json!({"name": "stream", "python_version": "3.12"}),
        )
        .await;
    let env = created["result"]["id"].clone();
    let scratch = tempfile::tempdir().expect("scratch");
    let fifo = scratch.path().join("step");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    // After each step the command blocks until the test opens the FIFO, which the test does
    // only once it has seen that step's output: each notification provably came while the
    // command ran.
    let script = format!(
        "import sys\nfor i in range(5):\n    print(i, flush=True)\n    sys.stderr.write(f'e{{i}}\\n'); sys.stderr.flush()\n    open({:?}).read()\n",
        fifo.display().to_string()
    );
    server
        .send(&request(
            "run",
            "environment/execute",
            json!({"id": env, "argv": ["python", "-c", script], "stream": true}),
        ))
        .await;
    let mut stdout = String::new();
    let mut stderr = String::new();
    let mut released = 0;
    let answer: Value = loop {
        let message = server.recv().await;
        if message.get("id").is_some() {
            break message;
        }
        assert_eq!(message["method"], json!("environment/output"), "{message}");
        assert_eq!(message["params"]["request_id"], json!("run"));
        let data = message["params"]["data"].as_str().expect("data");
        match message["params"]["stream"].as_str() {
            Some("stdout") => stdout.push_str(data),
            Some("stderr") => stderr.push_str(data),
            other => panic!("unknown stream {other:?}"),
        }
        while released < 5 && stdout.lines().count() > released && stderr.lines().count() > released
        {
            let fifo = fifo.clone();
            tokio::task::spawn_blocking(move || std::fs::write(fifo, b""))
                .await
                .expect("join")
                .expect("release the next step");
            released += 1;
        }
    };
    assert_eq!(
        released, 5,
        "every step was released after its output arrived"
    );
    assert_eq!(stdout, "0\n1\n2\n3\n4\n");
    assert_eq!(stderr, "e0\ne1\ne2\ne3\ne4\n");
    assert_eq!(answer["id"], json!("run"));
    assert_eq!(answer["result"]["stdout"], json!(stdout), "{answer}");
    assert_eq!(answer["result"]["stderr"], json!(stderr));
    assert_eq!(answer["result"]["exit_code"], json!(0));
}

#[tokio::test]
async fn without_stream_no_notification_is_sent() {
    let mut server = Server::start(&[]);
    server.initialize().await;
    let created = server
        .call(
            1,
            "environment/create",
            json!({"name": "quiet", "python_version": "3.12"}),
        )
        .await;
    let env = created["result"]["id"].clone();
    let answer = server
        .call(
            2,
            "environment/execute",
            json!({"id": env, "argv": ["python", "-c", "print('hi')"]}),
        )
        .await;
    assert_eq!(answer["result"]["stdout"], json!("hi\n"), "{answer}");
}
