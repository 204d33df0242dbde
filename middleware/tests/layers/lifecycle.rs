//! Every edge of the lifecycle state machine, through the standard stack.

use crate::common::{ask as send, init_params, request, violations, Dispatch};
use serde_json::json;
use tower::{Service, ServiceExt};
use wsp_middleware::{standard_stack, Lifecycle, LifecycleState, StackConfig};
use wsp_protocol::error::{
    INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, SERVER_NOT_INITIALIZED,
};
use wsp_protocol::{methods, Response};

fn gate(
    lifecycle: &Lifecycle,
    dispatch: &Dispatch,
) -> impl Service<wsp_protocol::Request, Response = Response, Error = std::convert::Infallible> {
    let config = StackConfig::default().lifecycle(lifecycle.clone());
    standard_stack(dispatch.router(), config).0
}

async fn initialized() -> (Lifecycle, Dispatch) {
    let (lifecycle, dispatch) = (Lifecycle::new(), Dispatch::default());
    let response = send(
        &mut gate(&lifecycle, &dispatch),
        request(1, methods::INITIALIZE, init_params()),
    )
    .await;
    assert!(response.outcome.is_ok(), "{response:?}");
    assert_eq!(lifecycle.state(), LifecycleState::Initialized);
    (lifecycle, dispatch)
}

async fn shutting_down() -> (Lifecycle, Dispatch) {
    let (lifecycle, dispatch) = initialized().await;
    let response = send(
        &mut gate(&lifecycle, &dispatch),
        request(2, methods::SHUTDOWN, None),
    )
    .await;
    assert!(response.outcome.is_ok(), "{response:?}");
    assert_eq!(lifecycle.state(), LifecycleState::ShuttingDown);
    (lifecycle, dispatch)
}

#[tokio::test]
async fn uninitialized_rejects_other_methods_with_32002() {
    let (lifecycle, dispatch) = (Lifecycle::new(), Dispatch::default());
    let mut gate = gate(&lifecycle, &dispatch);
    for (id, method) in [(1, methods::LIST), (2, methods::SHUTDOWN), (3, "no/such")] {
        let response = send(&mut gate, request(id, method, None)).await;
        assert_eq!(
            response.error_code(),
            Some(SERVER_NOT_INITIALIZED),
            "{method}"
        );
        assert_eq!(response.id, id.into());
    }
    assert_eq!(lifecycle.state(), LifecycleState::Uninitialized);
    assert_eq!(dispatch.calls(), 0);
}

#[tokio::test]
async fn invalid_initialize_params_answer_32602_and_stay_uninitialized() {
    let (lifecycle, dispatch) = (Lifecycle::new(), Dispatch::default());
    let mut gate = gate(&lifecycle, &dispatch);
    let response = send(
        &mut gate,
        request(1, methods::INITIALIZE, Some(json!({"client_name": 5}))),
    )
    .await;
    assert_eq!(response.error_code(), Some(INVALID_PARAMS));
    assert_eq!(
        violations(&response),
        [
            ("client_name".to_owned(), "type".to_owned()),
            ("client_protocol_version".to_owned(), "required".to_owned())
        ]
    );
    let response = send(&mut gate, request(2, methods::INITIALIZE, None)).await;
    assert_eq!(response.error_code(), Some(INVALID_PARAMS));
    assert_eq!(violations(&response).len(), 2);
    assert_eq!(lifecycle.state(), LifecycleState::Uninitialized);
    assert_eq!(dispatch.calls(), 0);

    let response = send(&mut gate, request(3, methods::LIST, None)).await;
    assert_eq!(response.error_code(), Some(SERVER_NOT_INITIALIZED));
    let response = send(&mut gate, request(4, methods::INITIALIZE, init_params())).await;
    assert_eq!(response.outcome, Ok(json!({"method": "initialize"})));
    assert_eq!(lifecycle.state(), LifecycleState::Initialized);
}

#[tokio::test]
async fn initialized_forwards_methods_and_rejects_a_second_initialize() {
    let (lifecycle, dispatch) = initialized().await;
    let mut gate = gate(&lifecycle, &dispatch);
    let response = send(&mut gate, request(2, methods::LIST, None)).await;
    assert_eq!(response.outcome, Ok(json!({"method": "environment/list"})));
    let response = send(&mut gate, request(3, "no/such", None)).await;
    assert_eq!(response.error_code(), Some(METHOD_NOT_FOUND));
    let calls = dispatch.calls();
    let response = send(&mut gate, request(4, methods::INITIALIZE, init_params())).await;
    assert_eq!(response.error_code(), Some(INVALID_REQUEST));
    assert_eq!(
        dispatch.calls(),
        calls,
        "the initialize handler must not run twice"
    );
    assert_eq!(lifecycle.state(), LifecycleState::Initialized);
}

#[tokio::test]
async fn invalid_shutdown_params_answer_32602_and_stay_initialized() {
    let (lifecycle, dispatch) = initialized().await;
    let mut gate = gate(&lifecycle, &dispatch);
    for params in [json!([1]), json!("x"), json!(3)] {
        let response = send(&mut gate, request(2, methods::SHUTDOWN, Some(params))).await;
        assert_eq!(response.error_code(), Some(INVALID_PARAMS));
        assert_eq!(violations(&response).len(), 1);
        assert_eq!(lifecycle.state(), LifecycleState::Initialized);
    }
    let response = send(&mut gate, request(3, methods::LIST, None)).await;
    assert!(response.outcome.is_ok());
}

#[tokio::test]
async fn shutdown_accepts_every_form_of_no_params() {
    for params in [None, Some(json!(null)), Some(json!({})), Some(json!([]))] {
        let (lifecycle, dispatch) = initialized().await;
        let response = send(
            &mut gate(&lifecycle, &dispatch),
            request(2, methods::SHUTDOWN, params.clone()),
        )
        .await;
        assert_eq!(
            response.outcome,
            Ok(json!({"method": "shutdown"})),
            "{params:?}"
        );
        assert_eq!(lifecycle.state(), LifecycleState::ShuttingDown);
    }
}

#[tokio::test]
async fn shutting_down_rejects_every_request_with_32600() {
    let (lifecycle, dispatch) = shutting_down().await;
    let calls = dispatch.calls();
    let mut gate = gate(&lifecycle, &dispatch);
    for method in [
        methods::INITIALIZE,
        methods::SHUTDOWN,
        methods::LIST,
        methods::EXIT,
        "no/such",
    ] {
        let response = send(&mut gate, request(9, method, init_params())).await;
        assert_eq!(response.error_code(), Some(INVALID_REQUEST), "{method}");
    }
    assert_eq!(dispatch.calls(), calls);
    assert_eq!(lifecycle.state(), LifecycleState::ShuttingDown);
}

#[tokio::test]
async fn exit_status_is_0_only_after_shutdown() {
    let uninitialized = Lifecycle::new();
    assert_eq!(uninitialized.exit(), 1);
    assert_eq!(uninitialized.state(), LifecycleState::Exited);

    let (initialized, _) = initialized().await;
    assert_eq!(initialized.exit(), 1);
    assert_eq!(initialized.state(), LifecycleState::Exited);

    let (shutting_down, _) = shutting_down().await;
    assert_eq!(shutting_down.exit(), 0);
    assert_eq!(shutting_down.state(), LifecycleState::Exited);

    assert_eq!(
        shutting_down.exit(),
        1,
        "a second exit is not after shutdown"
    );
}

#[tokio::test]
async fn exited_rejects_every_request_with_32600() {
    let (lifecycle, dispatch) = (Lifecycle::new(), Dispatch::default());
    lifecycle.exit();
    let mut gate = gate(&lifecycle, &dispatch);
    for method in [methods::INITIALIZE, methods::LIST] {
        let response = send(&mut gate, request(1, method, init_params())).await;
        assert_eq!(response.error_code(), Some(INVALID_REQUEST), "{method}");
    }
    assert_eq!(dispatch.calls(), 0);
}

/// The state that decides a request is the state when it was called (read), not when an
/// earlier handler runs: here no handler future is polled before all four are called.
#[tokio::test]
async fn pipelined_requests_see_the_state_at_call_time() {
    let (lifecycle, dispatch) = (Lifecycle::new(), Dispatch::default());
    let mut gate = gate(&lifecycle, &dispatch);
    let mut pending = Vec::new();
    for (id, method, params) in [
        (1, methods::INITIALIZE, init_params()),
        (2, methods::LIST, None),
        (3, methods::SHUTDOWN, None),
        (4, methods::LIST, None),
    ] {
        let Ok(future) = gate
            .ready()
            .await
            .map(|g| g.call(request(id, method, params)));
        pending.push(future);
    }
    assert_eq!(lifecycle.state(), LifecycleState::ShuttingDown);
    let mut outcomes = Vec::new();
    for future in pending {
        let Ok(response) = future.await;
        outcomes.push(response.error_code());
    }
    assert_eq!(outcomes, [None, None, None, Some(INVALID_REQUEST)]);
}
