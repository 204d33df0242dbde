//! The trace layer opens one `request` span per request and records its outcome.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use crate::common::{request, send};
use serde_json::json;
use tower::Layer;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id as SpanId, Record};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use wsp_middleware::TraceLayer;
use wsp_protocol::{error, Request, Response};

type Fields = BTreeMap<String, String>;

/// What the recorder saw: spans by id (name and fields), and events (level, fields, the name
/// and fields of the span they happened in).
#[derive(Default)]
struct Seen {
    spans: BTreeMap<u64, (String, Fields)>,
    events: Vec<(Level, Fields, Option<u64>)>,
}

#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Seen>>);

struct FieldVisitor<'a>(&'a mut Fields);

impl Visit for FieldVisitor<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> tracing_subscriber::Layer<S> for Recorder {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &SpanId, _: Context<'_, S>) {
        let mut fields = Fields::new();
        attrs.record(&mut FieldVisitor(&mut fields));
        let mut seen = self.0.lock().expect("recorder");
        seen.spans
            .insert(id.into_u64(), (attrs.metadata().name().to_owned(), fields));
    }

    fn on_record(&self, id: &SpanId, values: &Record<'_>, _: Context<'_, S>) {
        let mut seen = self.0.lock().expect("recorder");
        if let Some((_, fields)) = seen.spans.get_mut(&id.into_u64()) {
            values.record(&mut FieldVisitor(fields));
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let mut fields = Fields::new();
        event.record(&mut FieldVisitor(&mut fields));
        let span = ctx.event_span(event).map(|s| s.id().into_u64());
        let level = *event.metadata().level();
        self.0
            .lock()
            .expect("recorder")
            .events
            .push((level, fields, span));
    }
}

async fn traced(request: Request, answer: Response) -> Seen {
    traced_under(LevelFilter::TRACE, request, answer).await
}

async fn traced_under(filter: LevelFilter, request: Request, answer: Response) -> Seen {
    let recorder = Recorder::default();
    let subscriber = tracing_subscriber::registry()
        .with(filter)
        .with(recorder.clone());
    let _default = tracing::subscriber::set_default(subscriber);
    let handler = tower::service_fn(move |_: wsp_middleware::Call| {
        let answer = answer.clone();
        async move {
            tracing::trace!("inside the handler");
            Ok::<_, std::convert::Infallible>(answer)
        }
    });
    send(&mut TraceLayer::new().layer(handler), request).await;
    drop(_default);
    Arc::try_unwrap(recorder.0)
        .ok()
        .expect("the subscriber is gone")
        .into_inner()
        .expect("recorder")
}

fn only_span(seen: &Seen) -> (u64, &Fields) {
    assert_eq!(seen.spans.len(), 1, "one span per request");
    let (id, (name, fields)) = seen.spans.iter().next().expect("a span");
    assert_eq!(name, "request");
    (*id, fields)
}

#[tokio::test]
async fn a_result_records_ok_and_one_debug_event() {
    let seen = traced(
        request(7, "environment/list", None),
        Response::ok(7.into(), json!([])),
    )
    .await;
    let (span, fields) = only_span(&seen);
    assert_eq!(fields["method"], "environment/list");
    assert_eq!(fields["id"], "7");
    assert_eq!(fields["outcome"], "ok");
    assert!(fields["duration_ms"].parse::<f64>().expect("a number") >= 0.0);
    assert!(!fields.contains_key("code"));

    let handler_event = &seen.events[0];
    assert_eq!(
        handler_event.2,
        Some(span),
        "the handler runs inside the span"
    );
    let completions: Vec<_> = seen.events.iter().filter(|e| e.0 != Level::TRACE).collect();
    assert_eq!(completions.len(), 1);
    assert_eq!(completions[0].0, Level::DEBUG);
    assert_eq!(completions[0].1["outcome"], "ok");
    assert_eq!(completions[0].2, Some(span));
}

#[tokio::test]
async fn an_error_records_its_code_and_level() {
    for (answer, level) in [
        (error::method_not_found("nope"), Level::INFO),
        (error::internal_error("boom"), Level::WARN),
    ] {
        let code = answer.code().to_string();
        let seen = traced(
            request(8, "nope", None),
            Response::error("x".into(), answer),
        )
        .await;
        let (span, fields) = only_span(&seen);
        assert_eq!(fields["outcome"], "error");
        assert_eq!(fields["code"], code);
        let completions: Vec<_> = seen.events.iter().filter(|e| e.0 != Level::TRACE).collect();
        assert_eq!(completions.len(), 1);
        assert_eq!(completions[0].0, level);
        assert_eq!(completions[0].1["code"], code);
        assert_eq!(completions[0].2, Some(span));
    }
}

#[tokio::test]
async fn under_the_default_filter_a_success_logs_nothing_and_an_internal_error_its_duration() {
    let seen = traced_under(
        LevelFilter::WARN,
        request(9, "fine", None),
        Response::ok(9.into(), json!(1)),
    )
    .await;
    assert!(seen.spans.is_empty() && seen.events.is_empty());
    let seen = traced_under(
        LevelFilter::WARN,
        request(10, "broken", None),
        Response::error("x".into(), error::internal_error("boom")),
    )
    .await;
    assert_eq!(seen.events.len(), 1);
    let (level, fields, _) = &seen.events[0];
    assert_eq!(*level, Level::WARN);
    assert!(fields["duration_ms"].parse::<f64>().expect("a number") >= 0.0);
}
