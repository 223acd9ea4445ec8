//! Run-now requests: `anarchon run-now JOB` (no command) asks the replicas to run a crontab line
//! now (docs/store-format.md, "Run-now requests and replicas"; [`crate::store::requests`]).
//!
//! ```text
//! run-now ── XADD {<prefix>}:requests ──► each daemon: one XREAD BLOCK (own connection)
//!                                           └─► job in its crontab? claim the manual run at the
//!                                               request's slot (runner::run_slot): one wins and
//!                                               runs the line's command, the others stand by
//! daemon ── HSET {<prefix>}:replicas <runner> {seen, jobs} every 2 s ──► run-now refuses a job
//!                                                                        no live daemon runs
//! ```
//!
//! The blocking read has a connection of its own (the shared one multiplexes every job's calls,
//! and a blocked read would hold them up), and one read serves every job of the daemon: an idle
//! daemon costs the server one `XREAD` every [`BLOCK`] and one `HSET` every
//! [`PRESENCE_EVERY`]. Who runs a request is decided by the manual run's claim, as for any run:
//! with three replicas, one wins and runs it, the others stand by as its backups (a holder
//! killed with -9 is taken over when its lease ends, as any run is), and a replica that reads
//! the request after the run ended is answered `done`.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use redis::Value;
use tokio::task::JoinHandle;

use super::shared::{Shared, SlotTask};
use crate::connection::Connection;
use crate::connection::retry::Retry;
use crate::lines::RunLabel;
use crate::runner::{SlotOutcome, Target, run_slot};
use crate::settings::run::RunSettings;
use crate::store::RunKind;
use crate::store::events::{self, Action};
use crate::store::requests::{
    PRESENCE_EVERY, Presence, REQUEST_STALE, Request, decode_read, newest_request_id,
    presence_command, prune_replicas, replicas_key, requests_key,
};
use crate::time::{millis, rfc3339};

/// How long one `XREAD` blocks (the dedicated connection's reply timeout is this longer than the
/// daemon's `--command-timeout`, so a read that returns nothing is no timeout).
const BLOCK: Duration = Duration::from_secs(5);

/// How often the presences of daemons gone for good are pruned.
const PRUNE_EVERY: Duration = Duration::from_secs(600);

/// The listener and the presence, running.
pub(super) struct Requests {
    listener: JoinHandle<()>,
    presence: JoinHandle<()>,
    runner: String,
}

/// Starts reading requests and writing this replica's presence.
pub(super) fn start(shared: &Arc<Shared>) -> Requests {
    let runner = crate::strategy::default_runner();
    Requests {
        listener: tokio::task::spawn_local(listen(shared.clone())),
        presence: tokio::task::spawn_local(keep_presence(shared.clone(), runner.clone())),
        runner,
    }
}

impl Requests {
    /// The shutdown: no more requests are taken here, and the presence is deleted at once, so a
    /// request made now is refused (or taken by another replica) rather than waited for. The runs
    /// of requests in progress are slot tasks: the shutdown hands them over as any run.
    pub(super) async fn stop(self, shared: &Shared) {
        self.listener.abort();
        self.presence.abort();
        let (mut conn, _) = shared.connection().await;
        let del = redis::cmd("HDEL")
            .arg(replicas_key(&shared.prefix))
            .arg(&self.runner)
            .clone();
        let _ = tokio::time::timeout(Duration::from_secs(2), conn.query::<Value>(&del)).await;
    }
}

/// Writes this replica's presence every [`PRESENCE_EVERY`] and at once when the crontab changes,
/// on the shared connection (trouble there is the job loops' to report and mend).
async fn keep_presence(shared: Arc<Shared>, runner: String) {
    let mut pruned_at: Option<tokio::time::Instant> = None;
    loop {
        let (service, crontab) = service_jobs(&shared);
        let presence = Presence {
            seen: shared.server_now(),
            jobs: lease_jobs(&shared),
            service,
            crontab,
        };
        let (mut conn, _) = shared.connection().await;
        let write = presence_command(&shared.prefix, &runner, &presence);
        let _ = tokio::time::timeout(PRESENCE_EVERY, conn.query::<Value>(&write)).await;
        if pruned_at.is_none_or(|at| at.elapsed() >= PRUNE_EVERY) {
            pruned_at = Some(tokio::time::Instant::now());
            let _ = tokio::time::timeout(
                PRESENCE_EVERY,
                prune_replicas(&mut conn, &shared.prefix, presence.seen),
            )
            .await;
        }
        tokio::select! {
            () = tokio::time::sleep(PRESENCE_EVERY) => {}
            () = shared.crontab_changed.notified() => {}
        }
    }
}

/// The service the crontab's jobs are of (`cron --service`) and, with one, every job of the
/// crontab: monitoring reads a job of the service that no live replica has as removed.
fn service_jobs(shared: &Shared) -> (Option<String>, Vec<String>) {
    let crontab = shared.crontab.lock().unwrap_or_else(|e| e.into_inner());
    let Some(service) = crontab.iter().find_map(|j| j.registry.service.clone()) else {
        return (None, Vec::new());
    };
    let mut jobs: Vec<String> = crontab.iter().map(|j| j.job.clone()).collect();
    jobs.sort();
    (Some(service), jobs)
}

/// The crontab's jobs a request may name: those of the lease strategy (a manual claim of the
/// claim-only strategies appends a run each time, so every replica would run it).
fn lease_jobs(shared: &Shared) -> Vec<String> {
    let mut jobs: Vec<String> = shared
        .crontab
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .filter(|j| j.strategy.has_leases())
        .map(|j| j.job.clone())
        .collect();
    jobs.sort();
    jobs
}

/// Reads the requests stream with one blocking read at a time, on a connection of its own,
/// opened again with back-off when it fails; each request goes on from the last entry read (a
/// replica that starts reads from the newest entry then: what was asked before it is not its).
async fn listen(shared: Arc<Shared>) {
    let mut options = shared.options.clone();
    options.command_timeout += BLOCK;
    let key = requests_key(&shared.prefix);
    let mut from: Option<String> = None;
    let mut tries = Retry::IN_THE_BACKGROUND.start();
    let mut said = false;
    loop {
        let opened = async {
            let mut conn = Connection::open(&options).await?;
            if from.is_none() {
                from = Some(newest_request_id(&mut conn, &shared.prefix).await?);
            }
            Ok::<_, crate::error::Error>(conn)
        };
        let mut conn = match opened.await {
            Ok(conn) => conn,
            Err(e) => {
                if !said {
                    said = true;
                    crate::errln!(
                        "anarchon: run-now requests: cannot read {key} ({}); retrying with back-off",
                        e.to_string().lines().next().unwrap_or_default()
                    );
                }
                tokio::time::sleep(tries.next_pause()).await;
                continue;
            }
        };
        loop {
            let read = redis::cmd("XREAD")
                .arg("COUNT")
                .arg(100)
                .arg("BLOCK")
                .arg(millis(BLOCK))
                .arg("STREAMS")
                .arg(&key)
                .arg(from.as_deref().unwrap_or("$"))
                .clone();
            match conn.query::<Value>(&read).await.and_then(decode_read) {
                Ok(read) => {
                    tries = Retry::IN_THE_BACKGROUND.start();
                    said = false;
                    if let Some(last) = read.last {
                        from = Some(last);
                    }
                    for request in read.requests {
                        shared.on_request(request);
                    }
                    for wake in read.wakes {
                        shared.wakeups.wake(&wake.job, wake.slot);
                    }
                }
                Err(e) => {
                    if !said {
                        said = true;
                        crate::errln!(
                            "anarchon: run-now requests: cannot read {key} ({}); retrying with back-off",
                            e.to_string().lines().next().unwrap_or_default()
                        );
                    }
                    tokio::time::sleep(tries.next_pause()).await;
                    break;
                }
            }
        }
    }
}

impl Shared {
    /// A request read: started here when the job is this replica's (its crontab, the lease
    /// strategy) and the request is not stale; any other is another replica's, or nobody's.
    fn on_request(self: &Arc<Self>, request: Request) {
        let Some(job) = self
            .crontab_job(&request.job)
            .filter(|j| j.strategy.has_leases())
        else {
            return;
        };
        let label = RunLabel::new(&job.job, request.slot);
        let age = self.server_now() - request.slot;
        let shared = self.clone();
        let task = async move {
            if age > millis(REQUEST_STALE) {
                crate::errln!(
                    "anarchon: run-now request by {} of {} is {} old (read late: the connection to the store was lost); not taken",
                    request.by,
                    rfc3339(request.slot),
                    humantime::format_duration(Duration::from_millis(age.unsigned_abs()))
                );
                return;
            }
            shared.take_request(&job, &request).await;
        };
        let handle = tokio::task::spawn_local(crate::lines::in_run(label.clone(), task));
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        slots.retain(|t| !t.handle.is_finished());
        slots.push(SlotTask { label, handle });
    }

    /// Claims the request's manual run under the job's own line and runs it when won, as
    /// `run-now JOB -- COMMAND` would run it on this host; a claim answered `overlap` or `paused`
    /// is recorded in the job's events, where the requester reads why.
    async fn take_request(&self, job: &RunSettings, request: &Request) {
        crate::errln!(
            "anarchon: run-now requested by {}{}: claiming the manual run",
            request.by,
            request
                .reason
                .as_deref()
                .map_or(String::new(), |r| format!(" ({r})"))
        );
        let (mut conn, generation) = self.connection().await;
        let prefix = self.prefix.as_str();
        let check = crate::runner::retrying(&mut conn, async |conn| {
            crate::store::format::check_for_write(conn, prefix).await
        })
        .await;
        let check = match check {
            Ok(check) => check,
            Err(e) => {
                self.reconnect(generation, &e).await;
                crate::errln!(
                    "anarchon: cannot open the store for this run-now request ({}); not taken here (another replica may have)",
                    e.with_hint()
                );
                return;
            }
        };
        self.note_connected();
        self.note_clock(&check);
        let target = Target::new(prefix, &job.job, job.strategy, &check);
        let req = job.claim.request(request.slot, RunKind::Manual);
        let runner = req.runner.clone();
        match run_slot(&mut conn, target, req, &job.runner, check.server_now_ms).await {
            Ok(report) => {
                if report.outcome == SlotOutcome::Ran {
                    self.stats.runs_started.fetch_add(1, Ordering::Relaxed);
                }
                // As a scheduled slot's end: an event, so a collector finds a manual run's failure
                // by its level and exit code, and a replica that did not run it says so at debug.
                let event = crate::scheduler::slot_event(&report, self.server_now(), job.max_late);
                let words = event.message.clone();
                job.runner.events.emit(&event);
                let outcome = match report.outcome {
                    SlotOutcome::Overlap => Some("overlap"),
                    SlotOutcome::Paused => Some("paused"),
                    _ => None,
                };
                // Why, without `run`'s flags to change it (the requester names its own way out:
                // a manual run on a replica takes no --overlap).
                let words = match report.outcome {
                    SlotOutcome::Overlap => report.skip_reason.clone().unwrap_or_else(|| {
                        format!("an older run is still held by {}", report.runner)
                    }),
                    SlotOutcome::Paused => "the job is paused".to_string(),
                    _ => words,
                };
                if let Some(outcome) = outcome {
                    let action = Action::new(
                        "run-now",
                        &runner,
                        None,
                        format!("not run on {runner}: {words}"),
                    )
                    .at_slot(request.slot)
                    .with_outcome(outcome);
                    events::record(&mut conn, prefix, &job.job, &action).await;
                }
            }
            Err(e) => crate::errln!("error: {}", e.with_hint()),
        }
    }
}
