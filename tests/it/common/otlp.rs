//! A trace collector for the tests: an OTLP/HTTP receiver on loopback (the test HTTP server of
//! [`super::http`]) whose exports are decoded with the protocol's own messages
//! (opentelemetry-proto), protobuf or JSON as sent; and a collector that takes connections and
//! never answers, or none at all.

use std::collections::HashMap;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use prost::Message;

use super::http::HttpServer;

/// One span as the collector received it.
#[derive(Debug, Clone)]
pub struct Span {
    pub trace_id: String,
    pub span_id: String,
    /// Empty for a root span.
    pub parent: String,
    pub name: String,
    pub start_ns: u64,
    pub end_ns: u64,
    pub attributes: HashMap<String, String>,
    /// 0 unset, 1 ok, 2 error (OTLP's codes).
    pub status: i32,
    pub status_message: String,
    /// The resource's `service.name`, `host.name` and `service.instance.id` (the runner that
    /// sent it).
    pub service: String,
    pub host: String,
    pub instance: String,
}

impl Span {
    pub fn attr(&self, name: &str) -> &str {
        self.attributes.get(name).map_or("", String::as_str)
    }
}

pub struct Collector {
    http: HttpServer,
}

impl Collector {
    pub fn start() -> Collector {
        Collector {
            http: HttpServer::start(&[]),
        }
    }

    /// The base URL, for `OTEL_EXPORTER_OTLP_ENDPOINT` (the exporter adds `/v1/traces`).
    pub fn endpoint(&self) -> String {
        self.http.url("")
    }

    /// Every span received so far, in the order received.
    pub fn spans(&self) -> Vec<Span> {
        let mut spans = Vec::new();
        for request in self.http.requests() {
            assert_eq!(request.path(), "/v1/traces", "{request:?}");
            let export = if request.content_type.contains("json") {
                serde_json::from_slice::<ExportTraceServiceRequest>(&request.bytes)
                    .unwrap_or_else(|e| panic!("an OTLP/JSON export: {e}: {}", request.body))
            } else {
                assert_eq!(request.content_type, "application/x-protobuf");
                ExportTraceServiceRequest::decode(request.bytes.as_slice()).unwrap()
            };
            decode(export, &mut spans);
        }
        spans
    }

    /// The content types the exports came in (`application/x-protobuf`, `application/json`).
    pub fn content_types(&self) -> std::collections::BTreeSet<String> {
        self.http
            .requests()
            .into_iter()
            .map(|r| r.content_type)
            .collect()
    }

    /// The spans once `done` holds for them, within 60 s.
    pub fn wait_for(&self, what: &str, done: impl Fn(&[Span]) -> bool) -> Vec<Span> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let spans = self.spans();
            if done(&spans) {
                return spans;
            }
            assert!(
                Instant::now() < deadline,
                "the collector never received {what}; it has: {spans:#?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn decode(export: ExportTraceServiceRequest, into: &mut Vec<Span>) {
    let text = |v: &Option<opentelemetry_proto::tonic::common::v1::AnyValue>| match v
        .as_ref()
        .and_then(|v| v.value.as_ref())
    {
        Some(Value::StringValue(s)) => s.clone(),
        Some(Value::IntValue(i)) => i.to_string(),
        Some(Value::BoolValue(b)) => b.to_string(),
        Some(Value::DoubleValue(d)) => d.to_string(),
        other => format!("{other:?}"),
    };
    for resource_spans in export.resource_spans {
        let resource: HashMap<String, String> = resource_spans
            .resource
            .map(|r| r.attributes)
            .unwrap_or_default()
            .into_iter()
            .map(|kv| (kv.key, text(&kv.value)))
            .collect();
        for scope in resource_spans.scope_spans {
            for span in scope.spans {
                into.push(Span {
                    trace_id: hex(&span.trace_id),
                    span_id: hex(&span.span_id),
                    parent: hex(&span.parent_span_id),
                    name: span.name,
                    start_ns: span.start_time_unix_nano,
                    end_ns: span.end_time_unix_nano,
                    attributes: span
                        .attributes
                        .into_iter()
                        .map(|kv| (kv.key, text(&kv.value)))
                        .collect(),
                    status: span.status.as_ref().map_or(0, |s| s.code),
                    status_message: span.status.map(|s| s.message).unwrap_or_default(),
                    service: resource.get("service.name").cloned().unwrap_or_default(),
                    host: resource.get("host.name").cloned().unwrap_or_default(),
                    instance: resource
                        .get("service.instance.id")
                        .cloned()
                        .unwrap_or_default(),
                });
            }
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A collector that takes connections and never reads or answers them: a hung collector.
pub struct Stalled {
    pub port: u16,
}

impl Stalled {
    pub fn start() -> Stalled {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for stream in listener.incoming().flatten() {
                held.push(stream);
            }
        });
        Stalled { port }
    }

    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}
