//! The EOF drain through the real binary: in-flight answers are written, what outlives the
//! deadline is cancelled with its whole process group, and the exit status is 0.

use std::time::{Duration, Instant};

use crate::support::{request, Server};
use serde_json::json;

async fn environment(server: &mut Server) -> serde_json::Value {
    server.initialize().await;
    let created = server
        .call(
            1,
            "environment/create",
            json!({"name": "drain", "python_version": "3.12"}),
        )
        .await;
    created["result"]["id"].clone()
}

#[tokio::test]
async fn in_flight_requests_are_answered_after_eof() {
    let mut server = Server::start(&[]);
    let id = environment(&mut server).await;
    for n in 0..3 {
        let script = format!("sleep 0.{n}; echo done-{n}");
        server
            .send(&request(
                10 + n,
                "environment/execute",
                json!({"id": id, "argv": ["sh", "-c", script]}),
            ))
            .await;
    }
    server.close();
    let mut outputs = Vec::new();
    for _ in 0..3 {
        outputs.push(
            server.recv().await["result"]["stdout"]
                .as_str()
                .unwrap()
                .to_owned(),
        );
    }
    outputs.sort();
    assert_eq!(outputs, ["done-0\n", "done-1\n", "done-2\n"]);
    assert_eq!(server.finish().await.0, 0);
}

#[tokio::test]
async fn what_outlives_the_deadline_is_cancelled_with_its_process_group() {
    let mut server = Server::start(&["--drain-timeout", "1s"]);
    let id = environment(&mut server).await;
    let temp = tempfile::tempdir().unwrap();
    let pid = crate::support::start_sleeper(&mut server, 2, &id, temp.path()).await;
    assert!(
        std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "the grandchild runs"
    );
    let closed_at = Instant::now();
    server.close();
    let response = server.recv().await;
    assert_eq!(response["id"], 2);
    assert_eq!(response["error"]["code"], -32603, "cancelled: {response}");
    let (status, _) = server.finish().await;
    assert_eq!(status, 0);
    assert!(closed_at.elapsed() < Duration::from_secs(30));
    crate::support::assert_gone(pid, "the grandchild that outlived the server").await;
}
