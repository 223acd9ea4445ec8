//! Sending anarchon's spans to a collector over OTLP, as the standard `OTEL_*` variables say; off
//! unless they name an endpoint.
//!
//! A run never waits on the collector: a span goes into a bounded queue ([`Exporter::send`]: a
//! `try_send`, dropped when full) that a thread of anarchon's hands to the SDK's batch processor,
//! whose own thread sends batches with the OTLP exporter (HTTP, `http/protobuf` or `http/json`;
//! reqwest's blocking client on that thread). The only wait is at the process's end ([`Exporter::finish`]), after
//! every run is recorded, and it is bounded ([`EXIT_WAIT`]). A collector that is slow or gone
//! costs the spans, never a run: anarchon says so once per outage on stderr.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{BatchSpanProcessor, SpanData, SpanExporter, SpanProcessor};
use std::sync::mpsc::{Receiver, SyncSender};

/// How long a process that ends waits for its last spans to reach the collector, at most (its
/// runs are recorded by then; a `run` from a crontab exits this much later at worst).
pub const EXIT_WAIT: Duration = Duration::from_secs(2);

/// What the standard variables ask for, read once at the start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wanted {
    /// No endpoint named, `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`: no span is made.
    Off,
    /// Spans to this endpoint (as named: the exporter adds `/v1/traces` to a base URL).
    Otlp { endpoint: String },
}

/// Reads the standard variables through `var` (the process's environment, or a test's).
pub fn wanted(var: impl Fn(&str) -> Option<String>) -> Result<Wanted, String> {
    let set = |name: &str| {
        var(name)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    if set("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
        return Ok(Wanted::Off);
    }
    match set("OTEL_TRACES_EXPORTER").map(|v| v.to_ascii_lowercase()) {
        None => {}
        Some(v) if v == "none" => return Ok(Wanted::Off),
        Some(v) if v == "otlp" => {}
        Some(other) => {
            return Err(format!(
                "OTEL_TRACES_EXPORTER={other}: anarchon sends traces over OTLP only\n  hint: set it to otlp (or none), and OTEL_EXPORTER_OTLP_ENDPOINT to the collector's address"
            ));
        }
    }
    let endpoint =
        set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").or_else(|| set("OTEL_EXPORTER_OTLP_ENDPOINT"));
    let Some(endpoint) = endpoint else {
        return Ok(Wanted::Off);
    };
    let protocol =
        set("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL").or_else(|| set("OTEL_EXPORTER_OTLP_PROTOCOL"));
    match protocol.as_deref().map(str::to_ascii_lowercase).as_deref() {
        None | Some("http/protobuf" | "http/json") => Ok(Wanted::Otlp { endpoint }),
        Some(other) => Err(format!(
            "OTEL_EXPORTER_OTLP_PROTOCOL={other}: anarchon sends OTLP over HTTP (http/protobuf, the default, or http/json)\n  hint: point OTEL_EXPORTER_OTLP_ENDPOINT at the collector's HTTP receiver (port 4318 by convention)"
        )),
    }
}

/// Where spans go: a handle, cheap to clone (every job of a daemon shares one), on a queue that
/// a thread of its own empties into the SDK's batch processor. That thread also builds the OTLP
/// exporter, whose HTTP client reads the system's certificates (some 100 ms): a run starts
/// without waiting for it.
#[derive(Clone)]
pub struct Exporter {
    inner: Arc<Inner>,
}

struct Inner {
    /// The queue's sending end; taken (closed) by [`Exporter::finish`].
    queue: std::sync::Mutex<Option<SyncSender<SpanData>>>,
    /// Told when the thread has sent what was queued and stopped.
    done: std::sync::Mutex<Receiver<()>>,
    /// How long the thread may still spend at the end (set by `finish`).
    last_wait: Arc<std::sync::Mutex<Duration>>,
    health: Arc<Health>,
}

impl std::fmt::Debug for Exporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Exporter")
    }
}

/// Spans queued before the batch processor takes them, at most (then dropped, as its own queue
/// does).
const QUEUE: usize = 2048;

impl Exporter {
    /// The exporter the environment asks for (None: tracing is off), its spans said to come from
    /// `host` (the runner name) unless `OTEL_RESOURCE_ATTRIBUTES` says otherwise.
    pub fn from_env(host: &str) -> Result<Option<Exporter>, String> {
        let endpoint = match wanted(|name| std::env::var(name).ok())? {
            Wanted::Off => return Ok(None),
            Wanted::Otlp { endpoint } => endpoint,
        };
        let health = Arc::new(Health {
            endpoint,
            ..Health::default()
        });
        let (queue, spans) = std::sync::mpsc::sync_channel(QUEUE);
        let (stopped, done) = std::sync::mpsc::channel();
        let last_wait = Arc::new(std::sync::Mutex::new(EXIT_WAIT));
        let worker = Worker {
            spans,
            stopped,
            last_wait: last_wait.clone(),
            health: health.clone(),
            host: host.to_string(),
        };
        std::thread::Builder::new()
            .name("anarchon-trace".to_string())
            .spawn(move || worker.run())
            .map_err(|e| format!("cannot start the thread that sends traces: {e}"))?;
        Ok(Some(Exporter {
            inner: Arc::new(Inner {
                queue: std::sync::Mutex::new(Some(queue)),
                done: std::sync::Mutex::new(done),
                last_wait,
                health,
            }),
        }))
    }

    /// Queues a span: never waits (a full queue drops it).
    pub fn send(&self, span: SpanData) {
        let queue = self.inner.queue.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(queue) = queue.as_ref() {
            let _ = queue.try_send(span);
        }
    }

    /// Sends what is queued and stops, waiting `within` at most (the process is ending).
    pub fn finish(&self, within: Duration) {
        *self
            .inner
            .last_wait
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = within;
        drop(
            self.inner
                .queue
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take(),
        );
        let done = self.inner.done.lock().unwrap_or_else(|e| e.into_inner());
        let _ = done.recv_timeout(within + Duration::from_millis(100));
    }

    /// Batches the collector did not take so far.
    pub fn failed_batches(&self) -> u64 {
        self.inner.health.failed.load(Ordering::Relaxed)
    }
}

/// The thread that builds the OTLP exporter and feeds the batch processor.
struct Worker {
    spans: Receiver<SpanData>,
    stopped: std::sync::mpsc::Sender<()>,
    last_wait: Arc<std::sync::Mutex<Duration>>,
    health: Arc<Health>,
    host: String,
}

impl Worker {
    fn run(self) {
        let built = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .build();
        let otlp = match built {
            Ok(otlp) => otlp,
            Err(e) => {
                crate::errln!(
                    "anarchon: warning: traces are off: cannot send them to {}: {e}",
                    self.health.endpoint
                );
                // Drained until the queue closes, so that senders never fill it for nothing.
                for _ in self.spans.iter() {}
                let _ = self.stopped.send(());
                return;
            }
        };
        let counted = Counted {
            inner: otlp,
            health: self.health.clone(),
        };
        let mut processor = BatchSpanProcessor::builder(counted).build();
        processor.set_resource(&resource(&self.host));
        for span in self.spans.iter() {
            processor.on_end(span);
        }
        let within = *self.last_wait.lock().unwrap_or_else(|e| e.into_inner());
        let _ = processor.shutdown_with_timeout(within);
        let _ = self.stopped.send(());
    }
}

/// `service.name` anarchon unless the environment names one (`OTEL_SERVICE_NAME`, or
/// `service.name` in `OTEL_RESOURCE_ATTRIBUTES`, which the SDK's detectors read); `host.name` the
/// runner; `service.version` this build's.
fn resource(host: &str) -> Resource {
    let named = std::env::var("OTEL_SERVICE_NAME").is_ok_and(|v| !v.is_empty())
        || std::env::var("OTEL_RESOURCE_ATTRIBUTES").is_ok_and(|v| v.contains("service.name="));
    let builder = Resource::builder().with_attributes([
        KeyValue::new("host.name", host.to_string()),
        KeyValue::new("service.version", env!("CARGO_PKG_VERSION")),
    ]);
    if named {
        builder.build()
    } else {
        builder.with_service_name("anarchon").build()
    }
}

/// Whether the collector takes the batches: counted, and said on stderr once per outage (the
/// first failure after a success, or ever).
#[derive(Debug, Default)]
struct Health {
    endpoint: String,
    failed: AtomicU64,
    failing: AtomicBool,
}

/// The OTLP exporter, with its failures counted.
#[derive(Debug)]
struct Counted<E> {
    inner: E,
    health: Arc<Health>,
}

impl<E: SpanExporter> SpanExporter for Counted<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let spans = batch.len();
        let sent = self.inner.export(batch).await;
        let health = &self.health;
        match &sent {
            Ok(()) => health.failing.store(false, Ordering::Relaxed),
            Err(e) => {
                health.failed.fetch_add(1, Ordering::Relaxed);
                if !health.failing.swap(true, Ordering::Relaxed) {
                    crate::errln!(
                        "anarchon: warning: {spans} span(s) could not be sent to the trace collector at {}: {e}; runs go on as ever, their spans are dropped until it takes them again",
                        health.endpoint
                    );
                }
            }
        }
        sent
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wanted_with(vars: &[(&str, &str)]) -> Result<Wanted, String> {
        wanted(|name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn off_unless_an_endpoint_is_named() {
        assert_eq!(wanted_with(&[]), Ok(Wanted::Off));
        assert_eq!(
            wanted_with(&[("OTEL_EXPORTER_OTLP_ENDPOINT", " ")]),
            Ok(Wanted::Off)
        );
        let on = Wanted::Otlp {
            endpoint: "http://127.0.0.1:4318".to_string(),
        };
        assert_eq!(
            wanted_with(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")]),
            Ok(on.clone())
        );
        assert_eq!(
            wanted_with(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
                ("OTEL_SDK_DISABLED", "TRUE")
            ]),
            Ok(Wanted::Off)
        );
        assert_eq!(
            wanted_with(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
                ("OTEL_TRACES_EXPORTER", "none")
            ]),
            Ok(Wanted::Off)
        );
    }

    #[test]
    fn what_it_cannot_do_is_said_with_what_to_do() {
        let grpc = wanted_with(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ]);
        assert!(grpc.as_ref().is_err_and(|e| e.contains("4318")), "{grpc:?}");
        let zipkin = wanted_with(&[("OTEL_TRACES_EXPORTER", "zipkin")]);
        assert!(zipkin.is_err_and(|e| e.contains("hint")));
    }
}
