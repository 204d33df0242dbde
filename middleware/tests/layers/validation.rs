//! Typed handlers: params validated first, every violation listed, results serialized.

/// An initialized stack serving `handler` as `method`.
async fn serving<P: Params + Send + 'static, K>(
    method: &str,
    handler: impl IntoHandler<P, K>,
) -> StandardStack {
    let router = Router::new().route(method, handler);
    let (mut stack, _) = standard_stack(router, StackConfig::default());
    send(&mut stack, request(0, "initialize", init_params())).await;
    stack
}

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use crate::common::{ask as send, init_params, request, violations};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use tower::Service;
use wsp_middleware::{handler_fn, standard_stack, IntoHandler, Router, StackConfig, StandardStack};
use wsp_protocol::error::{self, INTERNAL_ERROR, INVALID_PARAMS};
use wsp_protocol::validation::from_serde;
use wsp_protocol::{ErrorObjectOwned, ExecuteParams, Params, Violation};

#[derive(Debug, Serialize, Deserialize)]
struct EchoParams {
    text: String,
}

impl Params for EchoParams {
    fn from_params(params: Option<&Value>) -> Result<Self, Vec<Violation>> {
        from_serde(params)
    }

    fn schema() -> Value {
        json!({"type": "object", "properties": {"text": {"type": "string"}}})
    }
}

#[tokio::test]
async fn a_custom_method_is_one_line() {
    let echo = handler_fn(|p: EchoParams, _| async move { Ok(p.text) });
    let mut echo = serving("echo", echo).await;
    let response = send(&mut echo, request(7, "echo", Some(json!({"text": "hi"})))).await;
    assert_eq!(response.id, 7.into());
    assert_eq!(response.outcome, Ok(json!("hi")));
}

#[tokio::test]
async fn invalid_params_list_every_violation_and_skip_the_handler() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let execute = handler_fn(move |p: ExecuteParams, _| {
        counted.fetch_add(1, Ordering::SeqCst);
        async move { Ok(p.argv) }
    });
    let mut execute = serving("environment/execute", execute).await;
    let params = json!({"argv": [], "cwd": "relative", "env": {"A=B": "x", "C": 1}});
    let response = send(
        &mut execute,
        request(1, "environment/execute", Some(params)),
    )
    .await;
    assert_eq!(response.error_code(), Some(INVALID_PARAMS));
    let mut found = violations(&response);
    found.sort();
    let expected = [
        ("argv", "non_empty"),
        ("cwd", "absolute"),
        ("env.A=B", "env_key"),
        ("env.C", "type"),
        ("id", "required"),
    ];
    assert_eq!(
        found,
        expected.map(|(f, r)| (f.to_owned(), r.to_owned())),
        "{response:?}"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0);

    let params = json!({"id": "env-000000000000", "argv": ["python", "-V"]});
    let response = send(
        &mut execute,
        request(2, "environment/execute", Some(params)),
    )
    .await;
    assert_eq!(response.outcome, Ok(json!(["python", "-V"])));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_handler_error_becomes_that_error_response() {
    let failing = handler_fn(|p: EchoParams, _| async move {
        Err::<(), _>(error::environment_not_found(&p.text))
    });
    let mut failing = serving("echo", failing).await;
    let response = send(
        &mut failing,
        request(3, "echo", Some(json!({"text": "env-x"}))),
    )
    .await;
    assert_eq!(response.id, 3.into());
    assert_eq!(response.outcome, Err(error::environment_not_found("env-x")));
}

#[tokio::test]
async fn an_unserializable_result_is_32603() {
    let bad = handler_fn(|_: EchoParams, _| async move {
        Ok(BTreeMap::from([(
            (1, 2),
            "tuple keys are not JSON object keys".to_owned(),
        )]))
    });
    let mut bad = serving("echo", bad).await;
    let response = send(&mut bad, request(4, "echo", Some(json!({"text": ""})))).await;
    assert_eq!(response.error_code(), Some(INTERNAL_ERROR));
}

#[tokio::test]
async fn any_service_of_params_is_a_handler() {
    let handler =
        tower::service_fn(|p: EchoParams| async move { Ok::<_, ErrorObjectOwned>(p.text.len()) });
    let mut service = serving("echo", handler).await;
    let response = send(
        &mut service,
        request(5, "echo", Some(json!({"text": "four"}))),
    )
    .await;
    assert_eq!(response.outcome, Ok(json!(4)));
    let response = send(&mut service, request(6, "echo", Some(json!({"text": 4})))).await;
    assert_eq!(response.error_code(), Some(INVALID_PARAMS));
    assert_eq!(
        violations(&response),
        [("params".to_owned(), "type".to_owned())]
    );
}

/// A handler whose readiness fails once.
#[derive(Clone)]
struct FailsToGetReady {
    failed: bool,
}

impl Service<EchoParams> for FailsToGetReady {
    type Response = String;
    type Error = ErrorObjectOwned;
    type Future = std::future::Ready<Result<String, ErrorObjectOwned>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        if self.failed {
            Poll::Ready(Ok(()))
        } else {
            self.failed = true;
            Poll::Ready(Err(error::internal_error("not today")))
        }
    }

    fn call(&mut self, params: EchoParams) -> Self::Future {
        std::future::ready(Ok(params.text))
    }
}

#[tokio::test]
async fn a_readiness_error_answers_the_next_request() {
    let mut service = serving::<EchoParams, _>("echo", FailsToGetReady { failed: false }).await;
    let params = Some(json!({"text": "t"}));
    let response = send(&mut service, request(1, "echo", params.clone())).await;
    assert_eq!(response.outcome, Err(error::internal_error("not today")));
    let response = send(&mut service, request(2, "echo", params)).await;
    assert_eq!(response.outcome, Ok(json!("t")));
}
