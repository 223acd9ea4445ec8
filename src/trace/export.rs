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
    let protocol = [
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
    ]
    .into_iter()
    .find_map(|name| set(name).map(|v| (name, v)));
    match protocol {
        None => Ok(Wanted::Otlp { endpoint }),
        Some((_, v))
            if matches!(
                v.to_ascii_lowercase().as_str(),
                "http/protobuf" | "http/json"
            ) =>
        {
            Ok(Wanted::Otlp { endpoint })
        }
        Some((name, other)) => Err(format!(
            "{name}={other}: anarchon sends OTLP over HTTP only\n  hint: set {name}=http/protobuf (or http/json) and point the endpoint at the collector's HTTP receiver (port 4318 by convention)"
        )),
    }
}

/// Where spans go: a handle, cheap to clone (every job of a daemon shares one), on a queue that
/// a thread of its own empties into the SDK's batch processor. That thread, started by the first
/// span, also builds the OTLP exporter, whose HTTP client reads the system's certificates (some
/// 100 ms of CPU): a run neither waits for it nor shares a core with it before its first span,
/// which for a host that wins is its command's end.
#[derive(Clone)]
pub struct Exporter {
    inner: Arc<Inner>,
}

struct Inner {
    /// The queue's sending end; taken (closed) by [`Exporter::finish`].
    queue: std::sync::Mutex<Option<SyncSender<SpanData>>>,
    /// The thread, until the first span starts it.
    unstarted: std::sync::Mutex<Option<Worker>>,
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
            endpoint: shown(&endpoint),
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
        Ok(Some(Exporter {
            inner: Arc::new(Inner {
                queue: std::sync::Mutex::new(Some(queue)),
                unstarted: std::sync::Mutex::new(Some(worker)),
                done: std::sync::Mutex::new(done),
                last_wait,
                health,
            }),
        }))
    }

    /// Queues a span: never waits (a full queue drops it). The first starts the thread.
    pub fn send(&self, span: SpanData) {
        let mut queue = lock(&self.inner.queue);
        if let Some(worker) = lock(&self.inner.unstarted).take() {
            let started = std::thread::Builder::new()
                .name("anarchon-trace".to_string())
                .spawn(move || worker.run());
            if let Err(e) = started {
                crate::errln!(
                    "anarchon: warning: traces are off: cannot start the thread that sends them: {e}"
                );
                queue.take();
            }
        }
        let queued = queue.as_ref().is_some_and(|q| q.try_send(span).is_ok());
        if !queued {
            self.inner.health.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Spans the collector took, since the process started.
    pub fn exported(&self) -> u64 {
        self.inner.health.exported.load(Ordering::Relaxed)
    }

    /// Spans lost, since the process started: the collector did not take their batch (down,
    /// refusing, or no answer within the timeout), or the queue was full.
    pub fn dropped(&self) -> u64 {
        self.inner.health.dropped.load(Ordering::Relaxed)
    }

    /// Sends what is queued and stops, waiting `within` at most (the process is ending).
    pub fn finish(&self, within: Duration) {
        *lock(&self.inner.last_wait) = within;
        drop(lock(&self.inner.queue).take());
        if lock(&self.inner.unstarted).is_some() {
            // No span was made: nothing to send.
            return;
        }
        let waited = lock(&self.inner.done).recv_timeout(within + Duration::from_millis(100));
        if waited.is_err() {
            say_dropped(&self.inner.health.endpoint, within);
        }
    }
}

/// Said when the process ends before the collector took its last spans.
fn say_dropped(endpoint: &str, within: Duration) {
    crate::errln!(
        "anarchon: warning: the trace collector at {endpoint} did not take the last spans within {}; they are dropped (the runs are recorded as ever)",
        humantime::format_duration(within)
    );
}

/// A lock, whether or not a thread panicked holding it (what it guards stays usable).
fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
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
                // The builder's words may quote the endpoint, credentials and all.
                let why = e.to_string();
                let why = match std::env::var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
                    .or_else(|_| std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT"))
                {
                    Ok(raw) if !raw.is_empty() => why.replace(&raw, &self.health.endpoint),
                    _ => why,
                };
                crate::errln!(
                    "anarchon: warning: traces are off: cannot send them to {}: {why}",
                    self.health.endpoint
                );
                // Drained until the queue closes, so that senders never fill it for nothing;
                // each span is one lost.
                for _ in self.spans.iter() {
                    self.health.dropped.fetch_add(1, Ordering::Relaxed);
                }
                let _ = self.stopped.send(());
                return;
            }
        };
        let counted = Counted {
            inner: otlp,
            health: self.health.clone(),
        };
        let mut processor = BatchSpanProcessor::builder(counted)
            .with_batch_config(batch_config())
            .build();
        processor.set_resource(&resource(&self.host));
        for span in self.spans.iter() {
            processor.on_end(span);
        }
        let within = *lock(&self.last_wait);
        let ended = processor.shutdown_with_timeout(within);
        if let Err(opentelemetry_sdk::error::OTelSdkError::Timeout(_)) = ended {
            say_dropped(&self.health.endpoint, within);
        }
        let _ = self.stopped.send(());
    }
}

/// The resource of this process's spans: `service.name` anarchon, `host.name` this machine's,
/// `service.instance.id` the runner (a replica, a host's `run`), `service.version` this build's;
/// then what `OTEL_RESOURCE_ATTRIBUTES` says over them, and `OTEL_SERVICE_NAME` over all (as the
/// specification orders them).
fn resource(runner: &str) -> Resource {
    use opentelemetry_sdk::resource::{EnvResourceDetector, TelemetryResourceDetector};
    let host = gethostname::gethostname().to_string_lossy().into_owned();
    let builder = Resource::builder_empty()
        .with_attributes([
            KeyValue::new("service.name", "anarchon"),
            KeyValue::new("host.name", host),
            KeyValue::new("service.instance.id", runner.to_string()),
            KeyValue::new("service.version", env!("CARGO_PKG_VERSION")),
        ])
        .with_detector(Box::new(TelemetryResourceDetector))
        .with_detector(Box::new(EnvResourceDetector::new()));
    match std::env::var("OTEL_SERVICE_NAME") {
        Ok(name) if !name.trim().is_empty() => builder.with_service_name(name.trim().to_string()),
        _ => builder,
    }
    .build()
}

/// The batch processor's settings: the `OTEL_BSP_*` variables, but batches sent 200 ms after a
/// span rather than the SDK's 5 s unless `OTEL_BSP_SCHEDULE_DELAY` says otherwise: a run's spans
/// are few, and a host killed soon after recording an attempt's end (whose span nobody else
/// sends) loses them only within that window.
fn batch_config() -> opentelemetry_sdk::trace::BatchConfig {
    let builder = opentelemetry_sdk::trace::BatchConfigBuilder::default();
    if std::env::var("OTEL_BSP_SCHEDULE_DELAY").is_ok_and(|v| !v.trim().is_empty()) {
        builder.build()
    } else {
        builder
            .with_scheduled_delay(Duration::from_millis(200))
            .build()
    }
}

/// The endpoint as said on stderr: without credentials (a user and password in the URL, an API
/// key in its query), which stderr must not carry to cron's mail or a log collector.
fn shown(endpoint: &str) -> String {
    match url::Url::parse(endpoint) {
        Ok(mut url) if matches!(url.scheme(), "http" | "https") => {
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.set_query(None);
            url.set_fragment(None);
            url.to_string()
        }
        _ => {
            "the endpoint the OTEL_EXPORTER_OTLP_* variables name (not an http(s) URL)".to_string()
        }
    }
}

/// Whether the collector takes the batches: said on stderr once per outage (the
/// first failure after a success, or ever), and counted for `cron`'s /metrics.
#[derive(Debug, Default)]
struct Health {
    endpoint: String,
    failing: AtomicBool,
    exported: AtomicU64,
    dropped: AtomicU64,
}

/// The OTLP exporter, its failures said ([`Health`]).
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
        let spans_u64 = spans as u64;
        match &sent {
            Ok(()) => {
                health.failing.store(false, Ordering::Relaxed);
                health.exported.fetch_add(spans_u64, Ordering::Relaxed);
            }
            Err(e) => {
                health.dropped.fetch_add(spans_u64, Ordering::Relaxed);
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
    fn an_endpoint_is_said_without_its_credentials() {
        assert_eq!(
            shown("http://user:pw@127.0.0.1:4318/v1/traces?api_key=k"),
            "http://127.0.0.1:4318/v1/traces"
        );
        assert!(!shown("htp:/user:pw@x").contains("pw"));
    }

    #[test]
    fn what_it_cannot_do_is_said_with_what_to_do() {
        let traces_grpc = wanted_with(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
            ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc"),
        ]);
        assert!(
            traces_grpc
                .as_ref()
                .is_err_and(|e| e.starts_with("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=grpc")),
            "{traces_grpc:?}"
        );
        let grpc = wanted_with(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ]);
        assert!(grpc.as_ref().is_err_and(|e| e.contains("4318")), "{grpc:?}");
        let zipkin = wanted_with(&[("OTEL_TRACES_EXPORTER", "zipkin")]);
        assert!(zipkin.is_err_and(|e| e.contains("hint")));
    }
}
