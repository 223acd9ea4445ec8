//! `anarchon cron --listen ADDR`: `/metrics` (every job's health as `anarchon metrics` renders
//! it, read from the store at each scrape, and the daemon's own counters), `/healthz` (liveness:
//! the daemon answers) and `/readyz` (its store answers and takes writes, by a probe every second:
//! [`super::probe`]).

use std::convert::Infallible;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Request, Response, StatusCode};

use super::probe::{self, Probed, Store};
use super::shared::Shared;
use crate::error::{Error, Result};
use crate::metrics::store_unreadable;
use crate::page::admission::{Admission, Serving, connections_allowed};

/// The daemon, once it has reached the store; until then (a replica may start before Redis) the
/// endpoints answer for a daemon that is starting: alive, not ready. With it, what the readiness
/// probe ([`probe`]) last saw of the store.
#[derive(Clone, Default)]
pub(super) struct Started {
    shared: Arc<tokio::sync::OnceCell<Arc<Shared>>>,
    probed: Arc<Probed>,
}

impl Started {
    /// The daemon has reached the store.
    pub(super) fn set(
        &self,
        shared: Arc<Shared>,
    ) -> std::result::Result<(), tokio::sync::SetError<Arc<Shared>>> {
        self.shared.set(shared)
    }
}

/// How long `/metrics` waits for the store's part of a scrape: the daemon's own series must come
/// within Prometheus's scrape timeout while the store hangs (10 s by default; 2 s is asked of us).
const SCRAPE_STORE_FOR: Duration = Duration::from_millis(1_500);

/// Binds `addr` (refused at once when it cannot: a second daemon on the port) and serves it on a
/// task of its own, from the daemon's start: a liveness probe must get its answer while the
/// daemon waits for the store, or an orchestrator restarts every replica of a fleet that starts
/// during a Redis outage, again and again. Once the daemon has reached the store, the readiness
/// probe starts ([`probe::watch`]).
pub(super) async fn serve(addr: SocketAddr, started: Started) -> Result<()> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| Error::Other(format!("cannot listen on {addr}: {e}")))?;
    let at = listener.local_addr().map_or(addr, |a| a);
    crate::errln!(
        "anarchon: serving the status page, /metrics, /healthz and /readyz on http://{at}"
    );
    // Said, not warned: an orchestrator's probes need an address it reaches (a pod's), the
    // usual case for a replica.
    if let Some(exposed) = crate::page::server::exposure(at) {
        crate::errln!("anarchon: {exposed}");
    }
    let watched = started.clone();
    tokio::task::spawn_local(async move {
        // Until the daemon has reached the store, /readyz says it is starting.
        let shared = loop {
            if let Some(shared) = watched.shared.get() {
                break shared.clone();
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        probe::watch(shared, watched.probed).await;
    });
    // Its connections capped, the idle ones making room for newcomers (`page::admission`): a
    // flood of slow clients must neither take the descriptors the daemon's commands and store
    // connections need, nor keep an orchestrator's probe out.
    let admission = Admission::new(connections_allowed());
    tokio::task::spawn_local(async move {
        loop {
            admission.room().await;
            let stream = match listener.accept().await {
                Ok((stream, _)) => stream,
                // Out of descriptors (EMFILE) or a connection reset before it was taken: a
                // pause, not a spin.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let started = started.clone();
            let admitted = admission.admit();
            let serving = admitted.serving_flag();
            tokio::task::spawn_local(async move {
                let service = hyper::service::service_fn(move |req: Request<_>| {
                    let (started, serving) = (started.clone(), serving.clone());
                    async move {
                        let _serving = Serving::on(&serving);
                        Ok::<_, Infallible>(
                            respond(&req, started.shared.get(), started.probed.get()).await,
                        )
                    }
                });
                crate::page::server::serve_connection(stream, service, admitted).await;
            });
        }
    });
    Ok(())
}

async fn respond(
    req: &Request<hyper::body::Incoming>,
    shared: Option<&Arc<Shared>>,
    store: Store,
) -> Response<Full<Bytes>> {
    let reply = crate::metrics::text_reply;
    let Some(shared) = shared else {
        return match req.uri().path() {
            "/healthz" => reply(StatusCode::OK, "ok\n".to_string()),
            "/readyz" => reply(
                StatusCode::SERVICE_UNAVAILABLE,
                "not ready: starting, the store has not answered yet\n".to_string(),
            ),
            "/metrics" => reply(StatusCode::OK, store_unreadable("not reached yet", 0.0)),
            _ => reply(
                StatusCode::NOT_FOUND,
                "not found: try /, /metrics, /healthz or /readyz\n".to_string(),
            ),
        };
    };
    let connected = store
        .answers()
        .unwrap_or_else(|| shared.connected.load(Ordering::Relaxed));
    // The status page (`/`, `/job/<name>`), as `anarchon serve` serves it.
    if let Some(page) = shared.pages.answer(req).await {
        return page;
    }
    match req.uri().path() {
        "/healthz" => reply(StatusCode::OK, "ok\n".to_string()),
        "/readyz" => readyz(store, connected),
        "/metrics" => reply(StatusCode::OK, metrics(shared, store, connected).await),
        _ => reply(
            StatusCode::NOT_FOUND,
            "not found: try /, /metrics, /healthz or /readyz\n".to_string(),
        ),
    }
}

/// `/readyz`: 200 while the store answers and takes writes, by the probe's last look (every
/// second); 503 when it does not answer, or answers but refuses writes (full: OOM), with why.
fn readyz(store: Store, connected: bool) -> Response<Full<Bytes>> {
    let reply = crate::metrics::text_reply;
    let not_ready = |why: String| reply(StatusCode::SERVICE_UNAVAILABLE, why);
    match store {
        Store::Answers => reply(StatusCode::OK, "ok: the store answers\n".to_string()),
        Store::RefusesWrites => not_ready(
            "not ready: the store answers but refuses writes (OOM: used memory above maxmemory under a policy that does not evict anarchon's keys); no run can be claimed until memory is freed\n"
                .to_string(),
        ),
        Store::Unreachable => not_ready(format!(
            "not ready: the store does not answer (no answer to a probe within {})\n",
            humantime::format_duration(probe::TIMEOUT)
        )),
        Store::Unknown if connected => {
            reply(StatusCode::OK, "ok: the store answers\n".to_string())
        }
        Store::Unknown => not_ready("not ready: the store does not answer\n".to_string()),
    }
}

/// The store's metrics (as `anarchon metrics`), then the daemon's own. The store's part is read
/// only while the probe finds it answering, and for [`SCRAPE_STORE_FOR`] at most: a store that
/// hangs must not hold the daemon's own series past a scrape's timeout.
async fn metrics(shared: &Shared, store: Store, connected: bool) -> String {
    let mut text = store_metrics(shared, store).await;
    // What the store's part could not say in time: the store does not answer now.
    let connected = connected && !text.contains("\nanarchon_up 0");
    let series = daemon_series(shared, connected)
        .into_iter()
        .chain(trace_series(shared.trace.as_ref()));
    for (name, kind, help, value) in series {
        let _ = write!(
            text,
            "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}\n"
        );
    }
    shared.lateness.render(&mut text);
    text
}

/// The store's part, as `anarchon metrics` renders it, or `anarchon_up 0` with why when the
/// store does not answer in time.
async fn store_metrics(shared: &Shared, store: Store) -> String {
    let started = std::time::Instant::now();
    let took = || started.elapsed().as_secs_f64() * 1000.0;
    let scrape = async {
        let (mut conn, _) = shared.connection().await;
        crate::metrics::scrape(&mut conn, &shared.prefix).await
    };
    if store == Store::Unreachable {
        store_unreadable("the store does not answer the daemon's probe", took())
    } else {
        match tokio::time::timeout(SCRAPE_STORE_FOR, scrape).await {
            Ok(Ok(text)) => text,
            Ok(Err(e)) => {
                store_unreadable(e.to_string().lines().next().unwrap_or_default(), took())
            }
            Err(_) => store_unreadable(
                &format!(
                    "no answer within {}",
                    humantime::format_duration(SCRAPE_STORE_FOR)
                ),
                took(),
            ),
        }
    }
}

/// A series of the daemon's own: name, type, help, value.
type Series = (&'static str, &'static str, &'static str, u64);

/// The daemon's own series: its jobs, its connection, what it ran.
fn daemon_series(shared: &Shared, connected: bool) -> [Series; 11] {
    let stats = &shared.stats;
    let running = crate::runner::children::signal_groups_count();
    [
        (
            "anarchon_cron_jobs",
            "gauge",
            "Jobs this daemon runs from its crontab.",
            stats.jobs.load(Ordering::Relaxed),
        ),
        (
            "anarchon_cron_store_connected",
            "gauge",
            "1 while the store answers the daemon (a probe every second with --listen).",
            u64::from(connected),
        ),
        (
            "anarchon_cron_running_commands",
            "gauge",
            "Commands running under this daemon now.",
            running as u64,
        ),
        (
            "anarchon_cron_max_running",
            "gauge",
            "This replica's --max-running: the commands it runs at once at most (0: no cap).",
            shared.cap.as_ref().map_or(0, |c| c.max as u64),
        ),
        (
            "anarchon_cron_slots_without_room_total",
            "counter",
            "Slots that came due while this replica ran --max-running commands (left to the others).",
            shared
                .cap
                .as_ref()
                .map_or(0, |c| c.without_room.load(Ordering::Relaxed)),
        ),
        (
            "anarchon_cron_slots_taken_total",
            "counter",
            "Slots this daemon went to take (claimed, or found taken).",
            stats.slots_taken.load(Ordering::Relaxed),
        ),
        (
            "anarchon_cron_runs_started_total",
            "counter",
            "Runs this daemon won and ran.",
            stats.runs_started.load(Ordering::Relaxed),
        ),
        (
            "anarchon_cron_reloads_total",
            "counter",
            "Reloads of the crontab (SIGHUP, or the file changed).",
            stats.reloads.load(Ordering::Relaxed),
        ),
        (
            "anarchon_cron_reload_errors_total",
            "counter",
            "Reloads refused because the file did not read (the jobs ran on as they were).",
            stats.reload_errors.load(Ordering::Relaxed),
        ),
        (
            "anarchon_cron_reconnects_total",
            "counter",
            "Times the connection to the store was opened again.",
            stats.reconnects.load(Ordering::Relaxed),
        ),
        (
            "anarchon_cron_orphans_reaped_total",
            "counter",
            "Exited processes left by commands that the daemon reaped.",
            stats.orphans_reaped.load(Ordering::Relaxed),
        ),
    ]
}

/// The daemon's trace export: what the collector took and what was lost (0 while tracing is off).
fn trace_series(trace: Option<&crate::trace::Exporter>) -> [Series; 2] {
    [
        (
            "anarchon_cron_trace_spans_exported_total",
            "counter",
            "Spans of runs the trace collector took (0 while tracing is off).",
            trace.map_or(0, |t| t.exported()),
        ),
        (
            "anarchon_cron_trace_spans_dropped_total",
            "counter",
            "Spans of runs lost: the collector did not take them (down, refusing, or too slow), or too many waited.",
            trace.map_or(0, |t| t.dropped()),
        ),
    ]
}
