//! A panicking handler answers `-32603` with the request's id, and the service keeps working.

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::common::{request, send, DropFlag};
use serde_json::json;
use tower::Layer;
use wsp_middleware::CatchPanicLayer;
use wsp_protocol::error::INTERNAL_ERROR;
use wsp_protocol::Response;

fn message(response: &Response) -> String {
    match &response.outcome {
        Err(e) => e.message().to_owned(),
        Ok(v) => panic!("expected an error, got {v}"),
    }
}

#[tokio::test]
async fn a_panic_while_polling_answers_32603_and_the_next_request_works() {
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&dropped);
    let handler = tower::service_fn(move |req: wsp_middleware::Call| {
        let guard = DropFlag(Arc::clone(&flag));
        async move {
            let _guard = guard;
            if req.method == "boom" {
                panic!("kaboom");
            }
            Ok::<_, Infallible>(Response::ok(req.id.clone(), json!("fine")))
        }
    });
    let mut service = CatchPanicLayer::new().layer(handler);

    let response = send(&mut service, request(1, "boom", None)).await;
    assert_eq!(response.id, 1.into());
    assert_eq!(response.error_code(), Some(INTERNAL_ERROR));
    assert!(message(&response).contains("kaboom"), "{response:?}");
    assert!(
        dropped.load(Ordering::SeqCst),
        "the panicked future was dropped"
    );

    let response = send(&mut service, request(2, "ok", None)).await;
    assert_eq!(response.outcome, Ok(json!("fine")));
}

#[tokio::test]
async fn a_panic_inside_call_answers_32603_with_a_formatted_message() {
    let handler = tower::service_fn(|req: wsp_middleware::Call| {
        if req.method == "boom" {
            panic!("call failed for {}", req.id);
        }
        async move { Ok::<_, Infallible>(Response::ok(req.id.clone(), json!(null))) }
    });
    let mut service = CatchPanicLayer::new().layer(handler);

    let response = send(&mut service, request(3, "boom", None)).await;
    assert_eq!(response.id, 3.into());
    assert_eq!(response.error_code(), Some(INTERNAL_ERROR));
    assert!(
        message(&response).contains("call failed for 3"),
        "{response:?}"
    );

    let response = send(&mut service, request(4, "ok", None)).await;
    assert_eq!(response.outcome, Ok(json!(null)));
}

#[tokio::test]
async fn a_non_string_payload_still_answers_32603() {
    let handler = tower::service_fn(|_: wsp_middleware::Call| async move {
        std::panic::panic_any(42_u8);
        #[allow(unreachable_code)]
        Ok::<_, Infallible>(Response::ok(0.into(), json!(null)))
    });
    let response = send(
        &mut CatchPanicLayer::new().layer(handler),
        request(5, "boom", None),
    )
    .await;
    assert_eq!(response.id, 5.into());
    assert_eq!(response.error_code(), Some(INTERNAL_ERROR));
}
