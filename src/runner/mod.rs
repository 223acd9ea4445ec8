//! The runner: claims one run, runs the command under the lease, and records how it ended.
//!
//! ```text
//! claim ──won──────────────────────────────► run the command ─► finish (ok | failed)
//!   │                                          ▲  heartbeats every --heartbeat (keeper)
//!   └─running──► stand by: re-claim when the ──┘  lease lost or local deadline near ─►
//!                holder's lease ends (attempt+1)    stop it (SIGTERM, SIGKILL by the deadline)
//! ```
//!
//! The guarantees under faults, each with its mechanism:
//! - the command never outlives anarchon: a guard process kills its group ([`guard`]);
//! - the command never outlives the lease: a local deadline counted from each confirmed request's
//!   send time, minus a margin ([`deadline`]);
//! - a dead holder is replaced for as long as attempts remain: backups stand by while the holder
//!   renews its lease and re-claim the moment it expires ([`backup`]);
//! - a claim whose reply was lost is retried with the same token and answered `won` again.
//!
//! `anarchon run` (scheduled slots, catch-up) and `anarchon run-now` (manual runs) both go through
//! [`run_slot`], so a run is claimed, kept and recorded the same way wherever it comes from.

pub mod backup;
pub mod child;
pub mod children;
pub mod deadline;
pub mod event;
pub mod guard;
mod handed;
pub mod keeper;
pub mod live;
pub mod notify;
pub mod overlap;
pub mod permits;
pub mod ping;
pub mod proctitle;
pub mod record;
pub mod report;

pub use report::{Recorded, SlotOutcome, SlotReport};

use backup::wait_as_backup;
use record::{Claimed, record};

use std::io::IsTerminal;
use std::time::{Duration, SystemTime};

use opentelemetry::KeyValue;

use tokio::time::Instant;

use crate::connection::Connection;
use crate::connection::retry::{Retry, SLOT_RETRY_FOR};
use crate::error::Result;
use crate::strategy;
use crate::strategy::claim::{ClaimOutcome, ClaimRequest};
use crate::strategy::lease::ClaimReply;
use crate::time::rfc3339;
use child::CommandSpec;
use deadline::{BootTime, LeaseDeadline, Loss};
use keeper::HeldLease;

/// How long the end of a run waits for its last lines of `--live-output` to be written.
const LIVE_OUTPUT_DRAIN: Duration = Duration::from_secs(5);

/// How to run one slot, beyond the claim itself.
#[derive(Debug, Clone)]
pub struct RunnerOptions {
    pub command: CommandSpec,
    /// Heartbeat interval (less than the lease).
    pub heartbeat: Duration,
    /// Whether to stand by as a backup when another runner holds the run.
    pub backup: Backup,
    /// No progress or notes on stderr (errors and lost leases still are).
    pub quiet: bool,
    /// Wait for replicas to hold a won claim before the command starts (`--wait-replicas`).
    pub replicas: Option<ReplicaWait>,
    /// What a scheduled slot does when an older run still holds the job (`--overlap`).
    pub on_overlap: overlap::OnOverlap,
    /// A dead man's switch to tell of each attempt this host runs (`--ping`).
    pub ping: Option<ping::Ping>,
    /// `Some(max_late)`: a slot stands behind an older run that some host caught up (first
    /// claimed more than `max_late` after its own slot, and after this slot was due) instead of
    /// acting by `on_overlap`: `run --catch-up` and `--backfill` (see [`run_in_turn`]), whose
    /// hosts go through missed runs in order. None: never.
    pub in_turn: Option<std::time::Duration>,
    /// `Some(max_late)`: a scheduled slot's claim that the server refuses for a reason that passes
    /// (full: OOM under noeviction; BUSY, LOADING) is retried until this long after the slot by
    /// the server's clock, as an outage is ridden out; None: for [`SLOT_RETRY_FOR`] (commands
    /// other than `run` and `cron`).
    pub max_late: Option<std::time::Duration>,
    /// How long a backup first sleeps between claims while the holder's lease lives: how soon it
    /// notices a run ended early or handed over ([`backup::STANDBY_POLL_MAX`] for `run`), growing
    /// to [`backup::STANDBY_POLL_SETTLED`] while the same holder keeps its lease; with
    /// [`Self::wakeups`], [`backup::STANDBY_POLL_WOKEN`] from the first.
    pub standby_poll: Duration,
    /// Where a holder's hand-over wakes this process's backups (`anarchon cron`'s requests
    /// stream); None: they look by [`Self::standby_poll`] alone.
    pub wakeups: Option<std::sync::Arc<backup::Wakeups>>,
    /// `--live-output`: each attempt's output goes to the store as it prints ([`live`]).
    pub live_output: Option<live::LiveOutput>,
    /// Where the run's events go ([`event`]): `run`'s terminal, or the daemon's log.
    pub events: event::Events,
    /// `--retries`: a failed command is tried again, by any host, after a delay (None: never).
    pub retry: Option<crate::strategy::retry::RetryPolicy>,
    /// `--limit NAME=N`: permits a won run takes before its command starts (lease strategy).
    pub limits: Vec<crate::store::limit::Limit>,
    /// Where the run's spans go (`OTEL_EXPORTER_OTLP_*`); None: tracing is off, and no span is
    /// made.
    pub trace: Option<crate::trace::Exporter>,
}

/// `run --wait-replicas N`: after winning, `WAIT` until N replicas acknowledged the claim (and the
/// same after finish) before the command starts. Redis replicates asynchronously: a claim the
/// primary acknowledged but no replica received is lost if the primary fails then, and a host
/// asking the promoted replica would run the slot again. Waiting narrows that window to a run
/// whose claim no replica holds, which `run_anyway` decides about.
#[derive(Debug, Clone, Copy)]
pub struct ReplicaWait {
    pub replicas: u32,
    pub timeout: Duration,
    /// When fewer replicas acknowledged in time: run anyway, with a warning (true), or end the run
    /// as failed without starting the command (false): then a failover can at worst lose the run,
    /// never run it twice.
    pub run_anyway: bool,
}

/// What a runner does when another one holds the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backup {
    /// Exit at once (82).
    No,
    /// Stand by while the holder renews its lease, and take over when it expires, for as long as
    /// attempts remain; give up after `limit` if one is set (`--backup-for`).
    Standby { limit: Option<Duration> },
}

/// The job and strategy a slot is claimed under.
pub use crate::strategy::Target;

/// Claims `req.slot` and, when won (now or later as a backup), runs the command under the claim.
pub async fn run_slot(
    conn: &mut Connection,
    target: Target<'_>,
    req: ClaimRequest,
    opts: &RunnerOptions,
    server_now: i64,
) -> Result<SlotReport> {
    crate::lines::note_slot(req.slot);
    if let Some(report) = skip_behind_a_waiting_slot(conn, target, &req, opts, server_now).await? {
        return Ok(report);
    }
    let (mut reply, mut sent) = claim_with_retry(conn, target, &req, server_now, opts).await?;
    // A scheduled slot refused by an older run: skipped, or (replace, buffer) claimed again once
    // that run has ended. A manual run (run-now) answers at once.
    let run = Run {
        target,
        req: &req,
        opts,
    };
    let mut overlap = None;
    if let Some(older) = opts
        .in_turn
        .and_then(|max_late| ahead_of(&reply, &req, max_late))
        .or_else(|| owed_takeover(&reply, &req))
    {
        let mut report =
            SlotReport::skipped(target.job, req.slot, SlotOutcome::Overlap, Some(&reply));
        report.behind = Some(older);
        return Ok(report);
    }
    if reply.outcome == ClaimOutcome::Overlap && req.kind == crate::store::RunKind::Scheduled {
        let since = SystemTime::now();
        let settled =
            overlap::settle(conn, target, &req, reply, opts.on_overlap, opts.quiet).await?;
        if let (Some(wait), Some(trace)) = (&settled.wait, run.trace()) {
            trace.wait("waiting for the older run", since, overlap_attributes(wait));
        }
        if settled.wait.is_some() {
            sent = settled.sent;
        }
        (reply, overlap) = (settled.reply, Some((settled.skip_reason, settled.wait)));
    }
    let stood;
    (reply, sent, stood) = run.stand_by(conn, reply, sent).await?;
    if reply.outcome == ClaimOutcome::Won && target.strategy.has_leases() {
        (reply, sent) = with_time_to_run(conn, target, &req, reply, sent, opts).await?;
    }
    let (skip_reason, wait) = overlap.unwrap_or_default();
    let outcome = match reply.outcome {
        ClaimOutcome::Won => {
            // Listened for from before the command runs: a stop asked during it, or between its
            // end and the wait for its retry, is not lost.
            let mut stop = StopListener::new(opts);
            let report = run.won(conn, &reply, sent, &stood, wait).await;
            return see_retries_through(conn, run, report, &mut stop).await;
        }
        ClaimOutcome::Overlap => SlotOutcome::Overlap,
        ClaimOutcome::Done => SlotOutcome::Done,
        ClaimOutcome::Running => SlotOutcome::Running,
        ClaimOutcome::Paused => SlotOutcome::Paused,
    };
    let mut report = SlotReport::skipped(target.job, req.slot, outcome, Some(&reply));
    report.backup = stood.backup;
    report.overlap = wait;
    if outcome == SlotOutcome::Overlap && req.kind == crate::store::RunKind::Scheduled {
        report.skip_recorded = Some(record_overlap_skip(conn, target, &req, &skip_reason).await?);
        report.skip_reason = Some(skip_reason);
    }
    run.trace_slot_end(&report);
    Ok(report)
}

/// A slot being run: its job and strategy, its claim request, and the runner's options.
#[derive(Clone, Copy)]
struct Run<'a> {
    target: Target<'a>,
    req: &'a ClaimRequest,
    opts: &'a RunnerOptions,
}

/// What standing by for another host's run came to: whether this host stood by as its backup,
/// and the holder it stood by for (the last one seen: a takeover may pass the run on).
struct Stood {
    backup: bool,
    held_by: Option<String>,
}

impl Run<'_> {
    /// Stands by as the backup of the host that holds the run (`reply` running, `--backup`), until
    /// its run ends or this host takes it over; the claim then, and what standing by came to.
    async fn stand_by(
        &self,
        conn: &mut Connection,
        reply: ClaimReply,
        sent: BootTime,
    ) -> Result<(ClaimReply, BootTime, Stood)> {
        let (target, req, opts) = (self.target, self.req, self.opts);
        // Only the lease strategy answers running; the others cannot tell running from done.
        let (ClaimOutcome::Running, Backup::Standby { limit }) = (reply.outcome, opts.backup)
        else {
            let stood = Stood {
                backup: false,
                held_by: None,
            };
            return Ok((reply, sent, stood));
        };
        opts.events.emit(&event::RunEvent::standing_by(
            target.job,
            req.slot,
            &reply.runner,
            reply.attempt.unwrap_or(0),
        ));
        let since = SystemTime::now();
        let held = (reply.runner.clone(), reply.attempt.unwrap_or(0));
        let (reply, sent, holder) = wait_as_backup(
            conn,
            &target.lease_keys(),
            target.job,
            req,
            reply,
            backup::Standing {
                limit,
                poll: opts.standby_poll,
                wakeups: opts.wakeups.as_deref(),
            },
            opts.quiet,
        )
        .await?;
        if let Some(trace) = self.trace() {
            trace.wait(
                "standing by",
                since,
                vec![
                    KeyValue::new("anarchon.held_by", held.0),
                    KeyValue::new("anarchon.held_attempt", i64::from(held.1)),
                    KeyValue::new(
                        "anarchon.then",
                        if reply.outcome == ClaimOutcome::Won {
                            "took over"
                        } else {
                            "ended elsewhere"
                        },
                    ),
                ],
            );
        }
        let stood = Stood {
            backup: true,
            held_by: Some(holder),
        };
        Ok((reply, sent, stood))
    }

    /// Claims the retry of this host's failed attempt, standing by (as any backup) until it is
    /// due and taken, here or elsewhere.
    async fn wait_for_retry(
        &self,
        conn: &mut Connection,
        server_now: i64,
    ) -> Result<(ClaimReply, BootTime, Stood)> {
        let (reply, sent) =
            claim_with_retry(conn, self.target, self.req, server_now, self.opts).await?;
        // Its own wait is traced as one for the retry (by the caller), not as standing by.
        let untraced = RunnerOptions {
            trace: None,
            ..self.opts.clone()
        };
        let standing = Run {
            opts: &untraced,
            ..*self
        };
        standing.stand_by(conn, reply, sent).await
    }

    /// The run's spans, when tracing is on (`OTEL_EXPORTER_OTLP_*`).
    fn trace(&self) -> Option<crate::trace::RunTrace<'_>> {
        let exporter = self.opts.trace.as_ref()?;
        Some(crate::trace::RunTrace {
            exporter,
            prefix: self.target.prefix,
            job: self.target.job,
            slot: self.req.slot,
            kind: self.req.kind,
            runner: &self.req.runner,
        })
    }

    /// This host's attempt's span, when this host recorded its end (finished, failed, a retry
    /// due, released, or ended before its command started); otherwise the host whose claim
    /// records it sends it ([`crate::trace::RunTrace::attempt_ended_by_takeover`]).
    fn trace_attempt(&self, won: &ClaimReply, claimed_at: SystemTime, report: &SlotReport) {
        let Some(trace) = self.trace() else {
            return;
        };
        let why = match &report.recorded {
            Some(Recorded::Yes) => match (&report.command, report.outcome) {
                (Some(outcome), _) => attempt_end(outcome),
                (None, SlotOutcome::NoPermit) => {
                    "not started: no permit of its --limit came free in time".to_string()
                }
                (None, SlotOutcome::Unreplicated) => {
                    "not started: too few replicas acknowledged the claim".to_string()
                }
                (None, _) => String::new(),
            },
            Some(Recorded::Retry { nth, at }) => {
                format!("retry {nth} due at {}", rfc3339(*at))
            }
            Some(Recorded::Released { reason, .. }) => reason.clone(),
            _ => return,
        };
        let status = match &report.recorded {
            Some(Recorded::Retry { .. }) => "failed",
            _ => report.status.as_str(),
        };
        trace.attempt(
            &crate::trace::spans::AttemptSpan {
                attempt: won.attempt.unwrap_or(1),
                runner: self.req.runner.clone(),
                fence: won.fence,
                claimed: claimed_at,
                ended: SystemTime::now(),
                status: status.to_string(),
                how: crate::trace::spans::Ended::of_status(status, &why),
            },
            Vec::new(),
        );
    }

    /// The command's span (when it started).
    fn trace_command(&self, attempt: u32, outcome: &child::CommandOutcome, ended: SystemTime) {
        if let Some(trace) = self.trace()
            && outcome.spawn_error.is_none()
        {
            let ran = Duration::from_millis(outcome.duration_ms);
            trace.command(attempt, ran, ended, (outcome.exit_code, outcome.signal));
        }
    }

    /// This host's wait for retry `nth` of its failed attempt, from `since` until the retry's
    /// claim answered `reply`.
    fn trace_retry_wait(&self, since: SystemTime, nth: u32, reply: &ClaimReply) {
        let Some(trace) = self.trace() else {
            return;
        };
        let then = match reply.outcome {
            ClaimOutcome::Won => "took it",
            _ => "another host took it",
        };
        trace.wait(
            "waiting for the retry",
            since,
            vec![
                KeyValue::new("anarchon.retry", i64::from(nth)),
                KeyValue::new("anarchon.then", then),
            ],
        );
    }

    /// After a takeover: the span of the attempt it took over from, whose end its claim recorded
    /// `interrupted` (the attempt's host was killed or cut off, or handed the run over), to be
    /// sent on that host's behalf, as the store has it: one read, only when tracing is on, made
    /// before the command starts (about a millisecond; half a second at most).
    fn attempt_taken_over(&self, attempt: u32) -> Option<(TakenOver, crate::trace::Exporter)> {
        let exporter = self.opts.trace.clone().filter(|_| attempt > 1)?;
        let taken = TakenOver {
            prefix: self.target.prefix.to_string(),
            job: self.target.job.to_string(),
            keys: crate::store::JobKeys::Lease(self.target.lease_keys()),
            slot: self.req.slot,
            kind: self.req.kind,
            runner: self.req.runner.clone(),
            attempt: attempt - 1,
        };
        Some((taken, exporter))
    }

    /// The run's own span, sent by the host that recorded its final end: this one, when `report`
    /// says so (ran and recorded, not waiting for a retry; or a skip recorded here).
    fn trace_slot_end(&self, report: &SlotReport) {
        let Some(trace) = self.trace() else {
            return;
        };
        let ended_here = match (report.outcome, &report.recorded) {
            (SlotOutcome::Ran | SlotOutcome::NoPermit | SlotOutcome::Unreplicated, Some(r)) => {
                matches!(r, Recorded::Yes | Recorded::Released { .. })
            }
            (SlotOutcome::Overlap, _) => report.skip_recorded == Some(true),
            _ => false,
        };
        if !ended_here {
            return;
        }
        if report.outcome == SlotOutcome::Overlap {
            // The status and attempt the report carries are the older run's, which held the job.
            let reason = report.skip_reason.as_deref();
            trace.slot_ended("skipped", crate::trace::spans::Ended::Unset, None, reason);
        } else {
            let how = crate::trace::spans::Ended::of_status(&report.status, "");
            trace.slot_ended(&report.status, how, report.attempt, None);
        }
    }

    /// Runs the won claim: a takeover said, the command run and its end recorded, the ping told.
    async fn won(
        &self,
        conn: &mut Connection,
        reply: &ClaimReply,
        sent: BootTime,
        stood: &Stood,
        wait: Option<overlap::OverlapWait>,
    ) -> SlotReport {
        let (target, req, opts) = (self.target, self.req, self.opts);
        if let Some(report) = handed::to_a_newer_name(conn, *self, reply).await {
            return report;
        }
        let started = opts.ping.as_ref().map(|p| p.start(&req.token));
        if let (Some(from), true) = (&stood.held_by, stood.backup) {
            opts.events
                .emit(&event::RunEvent::took_over(target.job, req.slot, from));
        }
        // Read before the command starts rather than after its end is recorded: then the
        // scheduler goes on at once (a renamed job's old-name claim ends next).
        if let Some((taken, exporter)) = self
            .attempt_taken_over(reply.attempt.unwrap_or(1))
            .filter(|_| stood.backup)
        {
            taken.send(conn.clone(), exporter).await;
        }
        let mut report = execute(conn, *self, reply, sent, stood.backup).await;
        report.overlap = wait;
        if let (Some(ping), Some(started)) = (&opts.ping, started)
            && let Some(problem) = ping.end(&report, started).await
        {
            crate::errln!("anarchon: {}: {problem}", target.job);
        }
        report
    }

    /// Starts publishing the attempt's output to the store (`--live-output`), its sink given to
    /// `spec`; the publisher, if asked for.
    fn live_output(
        &self,
        conn: &Connection,
        attempt: u32,
        spec: &mut CommandSpec,
    ) -> Option<live::Publisher> {
        let (target, req) = (self.target, self.req);
        self.opts.live_output.map(|live| {
            let key =
                crate::store::output::output_key(target.prefix, target.job, req.slot, attempt);
            // The output goes with the history: never kept longer than the history's TTL, but an
            // hour at least, so a quiet stretch of a run never expires its first lines.
            let ttl = req.history.ttl.map_or(crate::store::output::TTL, |t| {
                t.clamp(crate::store::output::TTL_FLOOR, crate::store::output::TTL)
            });
            let (sink, task) = live::start(conn.clone(), key, req.runner.clone(), live, ttl);
            spec.live = Some(sink);
            task
        })
    }

    /// Records the command's end as the claim and the outcome say.
    async fn record_end(
        &self,
        conn: &mut Connection,
        claimed: &Claimed,
        outcome: &child::CommandOutcome,
        stopped_for_lease: bool,
    ) -> Recorded {
        let (target, req) = (self.target, self.req);
        match claimed {
            // Stopped by the daemon's shutdown (its grace over): handed over to a replica standing by,
            // which takes it over at once as the next attempt.
            Claimed::Lease(_) if outcome.stopped_for_shutdown && !outcome.released => {
                record::hand_over(conn, target, req, claimed, outcome).await
            }
            // The command was stopped because the lease could not be kept: that is no failure of the
            // run. Finishing it `failed` would take the run from the backups; left alone, its lease
            // ends, the attempt is recorded `interrupted` and a backup (or a later claim) takes over.
            Claimed::Lease(held) if stopped_for_lease => {
                Recorded::LeaseLost(held.deadline.lost_reason(Duration::MAX).unwrap_or_default())
            }
            Claimed::Lease(_) | Claimed::ClaimOnly { .. } => {
                record(
                    conn,
                    target,
                    req,
                    claimed,
                    outcome,
                    self.opts.retry.as_ref(),
                )
                .await
            }
        }
    }
}

/// After an attempt this host ran failed with a retry due (`--retries`, [`Recorded::Retry`]): this
/// host stands by for the retry as any backup of the run does (whatever `--no-backup` says: the
/// retry is of its own run) and runs it if it wins its takeover when due; another host that wins
/// it runs it, and this one stands by until the run ends. The report: of the last attempt this
/// host ran, or, when another host's attempt ended the run, of that end (as a backup's).
async fn see_retries_through(
    conn: &mut Connection,
    run: Run<'_>,
    mut report: SlotReport,
    stop: &mut StopListener,
) -> Result<SlotReport> {
    let Run { target, req, opts } = run;
    let retry_opts = RunnerOptions {
        backup: Backup::Standby { limit: None },
        ..opts.clone()
    };
    let mut req = req.clone();
    while let Some(Recorded::Retry { at, nth }) = report.recorded {
        let since = SystemTime::now();
        // While it waits this task holds no run: a daemon shutting down ends it at once (and
        // claims nothing more), leaving the retry to the replicas standing by.
        crate::lines::note_attempt(0);
        // The retry is a new attempt: a new token, claimed as a takeover once it is due.
        req.token = crate::strategy::new_token();
        let server_now = server_ms(conn).await.unwrap_or(at);
        let run = Run {
            target,
            req: &req,
            opts: &retry_opts,
        };
        let waited = run.wait_for_retry(conn, server_now);
        // `run` stopped while it waits (SIGTERM, SIGINT: systemd, cron, a person) goes at once:
        // the retry is left to the hosts standing by, or to the job's next run. (Under `cron`
        // the daemon's shutdown ends this task itself.)
        let (reply, sent, stood) = tokio::select! {
            waited = waited => waited?,
            () = stop.asked() => {
                opts.events.emit(&event::RunEvent::stopped_before_retry(target.job, req.slot));
                return Ok(report);
            }
        };
        run.trace_retry_wait(since, nth, &reply);
        let (reply, sent) = match reply.outcome {
            ClaimOutcome::Won => with_time_to_run(conn, target, &req, reply, sent, opts).await?,
            _ => (reply, sent),
        };
        // Its own retry is no takeover from another host.
        let stood = Stood {
            backup: stood.held_by.as_deref() != Some(req.runner.as_str()),
            ..stood
        };
        report = match reply.outcome {
            ClaimOutcome::Won => run.won(conn, &reply, sent, &stood, None).await,
            // Another host's attempt ended the run well: done elsewhere.
            ClaimOutcome::Done if reply.status == "finished" => {
                let mut ended =
                    SlotReport::skipped(target.job, req.slot, SlotOutcome::Done, Some(&reply));
                ended.backup = true;
                ended
            }
            // Ended otherwise (its retries spent elsewhere, or the retry not run: released,
            // replaced, superseded): the failure this host ran stands, with its exit code. The
            // run's end is another host's record, and so is its slot span.
            ClaimOutcome::Done => {
                report.status = reply.status.clone();
                report.recorded = Some(Recorded::Yes);
                return Ok(report);
            }
            // Refused otherwise (the run's end unreadable meanwhile): what this host ran stands.
            _ => return Ok(report),
        };
    }
    // The slot's span, when this host's record ended the run (not when another host's retry
    // did, above: that host sends it).
    run.trace_slot_end(&report);
    Ok(report)
}

/// SIGTERM and SIGINT, listened for by `run` with `--retries` (not under `cron`, whose daemon
/// owns its signals) from before its command runs, so that one asked at any moment ends its wait
/// for a retry.
struct StopListener {
    signals: Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>,
}

impl StopListener {
    fn new(opts: &RunnerOptions) -> StopListener {
        use tokio::signal::unix::{SignalKind, signal};
        let wanted = opts.retry.is_some() && opts.command.supervised.is_none();
        let signals = wanted
            .then(|| {
                Some((
                    signal(SignalKind::terminate()).ok()?,
                    signal(SignalKind::interrupt()).ok()?,
                ))
            })
            .flatten();
        StopListener { signals }
    }

    /// Resolves once a stop was asked (at once if it was already); never without listeners.
    async fn asked(&mut self) {
        match &mut self.signals {
            Some((term, int)) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                }
            }
            None => std::future::pending().await,
        }
    }
}

/// How often a slot standing behind an older run that this host does not take over (`--no-backup`)
/// claims again.
const BEHIND_POLL: Duration = Duration::from_secs(1);

/// Runs `slot` in turn: as [`run_slot`], but when the job is held by an older run that some host
/// caught up (first claimed more than `--max-late` after its own slot, and after this slot was
/// due), this host stands by for that run first (its backup, taking it over if its holder dies,
/// unless `--no-backup`) and claims again once it has ended. Such a run was put ahead of this slot
/// by a host catching up missed runs (or a backfill): one host alone would have run it, then this
/// slot, so neither `--overlap forbid` skips this slot nor `replace` stops that run. A run that
/// started within `--max-late` of its slot is an ordinary one, whatever held it up (it waited
/// under `buffer`, say): the policy applies to it as ever, or runs longer than the interval would
/// queue behind each other without end. With several hosts, each goes through the runs in that order, and together they
/// run what one host would (issue #35). The runs this host ran while standing behind are pushed on
/// `ahead`, oldest first.
pub async fn run_in_turn(
    conn: &mut Connection,
    target: Target<'_>,
    request: &(dyn Fn(i64) -> ClaimRequest + Sync),
    slot: i64,
    opts: &RunnerOptions,
    server_now: i64,
    ahead: &mut Vec<SlotReport>,
) -> Result<SlotReport> {
    loop {
        let report = run_slot(conn, target, request(slot), opts, server_now).await?;
        let Some(older) = report.behind else {
            return Ok(report);
        };
        let older_report = Box::pin(run_in_turn(
            conn, target, request, older, opts, server_now, ahead,
        ))
        .await?;
        went_ahead(older_report, ahead).await;
    }
}

/// What came of an older slot a slot stood behind ([`SlotReport::behind`]), before that slot is
/// claimed again: pushed on `ahead` when this host ran it; a short wait while it is still held
/// (this host does not stand by: --no-backup) so that the claim is not sent again at once.
pub(crate) async fn went_ahead(older_report: SlotReport, ahead: &mut Vec<SlotReport>) {
    match older_report.outcome {
        SlotOutcome::Ran | SlotOutcome::Unreplicated | SlotOutcome::NoPermit => {
            ahead.push(older_report)
        }
        SlotOutcome::Running | SlotOutcome::Overlap => tokio::time::sleep(BEHIND_POLL).await,
        SlotOutcome::Done | SlotOutcome::TooLate | SlotOutcome::Paused | SlotOutcome::Excluded => {}
    }
}

/// The older slot whose run holds the job when a host caught it up: first claimed more than
/// `max_late` after its own slot, and after `req`'s slot was due (see [`run_in_turn`]); None for
/// any other answer, and for manual runs.
pub(crate) fn ahead_of(
    reply: &ClaimReply,
    req: &ClaimRequest,
    max_late: std::time::Duration,
) -> Option<i64> {
    if reply.outcome != ClaimOutcome::Overlap || req.kind != crate::store::RunKind::Scheduled {
        return None;
    }
    let older = reply.other_slot.filter(|other| *other < req.slot)?;
    reply
        .other_started_at
        .is_some_and(|started| {
            started > req.slot && started - older > crate::time::millis(max_late)
        })
        .then_some(older)
}

/// The older slot whose run's holder is gone, with attempts left, that the claim script answered
/// as holding the job ([`ClaimRequest::owed_within`]): this host takes that run over first (as
/// its backups would have, had any stood by), then claims `req`'s slot again ([`run_in_turn`]).
/// A fleet back after the next fire time, or a holder cut off while the replicas that stood by
/// were replaced, so leaves no run lost to the next fire time while its attempts and
/// `--max-late` allow it. None for any other answer.
pub(crate) fn owed_takeover(reply: &ClaimReply, req: &ClaimRequest) -> Option<i64> {
    if reply.outcome != ClaimOutcome::Overlap || req.owed_within.is_zero() {
        return None;
    }
    let older = reply.other_slot.filter(|other| *other < req.slot)?;
    reply
        .lease_end
        .is_some_and(|end| end <= reply.server_now)
        .then_some(older)
}

/// BufferOne (`--overlap buffer`): while another slot waits for an older run, this one is
/// skipped and recorded so, even in the moment the older run has ended and the waiting slot is
/// not claimed yet (this slot would win that race and start first). None: claim as usual.
async fn skip_behind_a_waiting_slot(
    conn: &mut Connection,
    target: Target<'_>,
    req: &ClaimRequest,
    opts: &RunnerOptions,
    server_now: i64,
) -> Result<Option<SlotReport>> {
    if !matches!(opts.on_overlap, overlap::OnOverlap::Buffer { .. })
        || req.kind != crate::store::RunKind::Scheduled
    {
        return Ok(None);
    }
    let keys = target.lease_keys();
    let waiting = retrying(conn, async |conn| {
        strategy::lease::waiting_slot(conn, &keys, req.slot, server_now).await
    })
    .await?;
    let Some(waiting) = waiting else {
        return Ok(None);
    };
    // A waiter that died keeps the place a few seconds: its slot must not cost this one too.
    let alive = retrying(conn, async |conn| {
        strategy::lease::waiter_alive(conn, &keys).await
    });
    if !alive.await? {
        return Ok(None);
    }
    let reason = format!(
        "--overlap buffer: the run of {} already waits for an older run (one waits at most)",
        rfc3339(waiting)
    );
    let mut report = SlotReport::skipped(target.job, req.slot, SlotOutcome::Overlap, None);
    report.skip_recorded = Some(record_overlap_skip(conn, target, req, &reason).await?);
    report.skip_reason = Some(reason);
    Ok(Some(report))
}

/// A scheduled slot that `--overlap` refused (forbid, or replace and buffer when they gave up) is
/// decided, not missed: it is recorded as skipped (the skip scripts of both formats, as catch-up's
/// skips) with `reason`, which names the run that held the job, so that history shows it and
/// health does not count it missed. Only a slot no claim reached is recorded; whether it was is
/// the answer.
async fn record_overlap_skip(
    conn: &mut Connection,
    target: Target<'_>,
    req: &ClaimRequest,
    reason: &str,
) -> Result<bool> {
    let keys = target.lease_keys();
    let outcome = retrying(conn, async |conn| {
        crate::strategy::lease::skip(conn, &keys, req.slot, &req.runner, reason).await
    })
    .await?;
    Ok(outcome == crate::strategy::lease::SkipOutcome::Skipped)
}

/// Runs `call` again through trouble that passes (the connection, a server stalled by CLIENT
/// PAUSE, OOM, LOADING...), with back-off and a fresh connection, as the calls around a claim are
/// ([`Retry::AROUND_A_CLAIM`]): they are idempotent, and a host that gave up on one at the first
/// timeout left its slot with no record.
pub(crate) async fn retrying<T>(
    conn: &mut Connection,
    call: impl AsyncFnMut(&mut Connection) -> Result<T>,
) -> Result<T> {
    Retry::AROUND_A_CLAIM.run(conn, call).await
}

/// Claims, retrying through connection trouble with the same token: the claim is idempotent per
/// token, so if an earlier try was applied and only its reply was lost, the retry is answered
/// `won` again instead of leaving a run that nobody runs until its lease expires. A claim the
/// server refused for a reason that passes (a full server: OOM) wrote nothing (a Function that
/// writes is refused before it starts; an EVALSHA script at its first write that may grow memory,
/// and only when nothing before it wrote: never half-applied), and is retried the same way until
/// `--max-late` after its slot ([`RunnerOptions::max_late`]; the server's clock, read with TIME,
/// which a full server answers): a full Redis is an outage like any other, and every host giving
/// up at the first refusal lost the slot. Returns the reply and when the answered request was sent
/// (the lease deadline counts from there).
async fn claim_with_retry(
    conn: &mut Connection,
    target: Target<'_>,
    req: &ClaimRequest,
    server_now: i64,
    opts: &RunnerOptions,
) -> Result<(ClaimReply, BootTime)> {
    // A claim-only manual run appends a new entry each time: not safe to repeat.
    let idempotent = target.strategy.has_leases() || req.kind != crate::store::RunKind::Manual;
    // Unanswered, as long as the calls around it, but at least a lease (a claim answered after
    // its lease would be claimed again: `with_time_to_run`); refused, until --max-late below.
    let mut tries = Retry {
        transient_for: Some(SLOT_RETRY_FOR.max(req.lease)),
        refused_for: None,
        ..Retry::AROUND_A_CLAIM
    }
    .start();
    let refused_until = opts
        .max_late
        .filter(|_| req.kind == crate::store::RunKind::Scheduled)
        .map(|max_late| req.slot + crate::time::millis(max_late));
    // Without a --max-late (a manual run), as long as other trouble, but never a whole lease.
    let refused_give_up = Instant::now() + SLOT_RETRY_FOR;
    let mut said_refused = false;
    loop {
        let sent = BootTime::now();
        let error = match strategy::claim(conn, target, req, server_now).await {
            Ok(reply) => return Ok((reply, sent)),
            Err(e) if idempotent && e.is_transient() => e,
            Err(e) if idempotent && e.can_pass() => {
                let in_time = match refused_until {
                    // No answer to TIME: an outage now, ridden out as one.
                    Some(until) => server_ms(conn)
                        .await
                        .map_or(tries.elapsed() < SLOT_RETRY_FOR.max(req.lease), |now| {
                            now < until
                        }),
                    None => Instant::now() < refused_give_up,
                };
                if !in_time {
                    return Err(refused_too_long(e, req, opts));
                }
                // In a daemon's log, or for a person at a terminal (as the other retries).
                let say = crate::lines::daemon_log().is_some()
                    || (!opts.quiet && std::io::stderr().is_terminal());
                if !said_refused && say {
                    crate::errln!(
                        "anarchon: the store refuses the claim for now; retrying until {}: {}",
                        refused_until.map_or_else(
                            || "the claim's retry time is over".to_string(),
                            |until| format!("--max-late after the slot ({})", rfc3339(until))
                        ),
                        e.with_hint()
                    );
                    said_refused = true;
                }
                // The server answers: no new connection, only a pause.
                tokio::time::sleep(tries.next_pause()).await;
                continue;
            }
            Err(e) => return Err(e),
        };
        // Worth a line for a person at a terminal, unless --quiet.
        if !opts.quiet && std::io::stderr().is_terminal() {
            crate::errln!(
                "anarchon: the claim got no answer ({error}); retrying with the same token"
            );
        }
        if !tries.pause_after(conn, &error).await {
            return Err(error);
        }
    }
}

/// The server's clock (TIME, a read: a full server answers it), ms; None when it does not answer.
async fn server_ms(conn: &mut Connection) -> Option<i64> {
    conn.server_ms().await.ok()
}

/// A refusal that lasted past the slot's `--max-late`: the slot is not run (said with why).
fn refused_too_long(
    e: crate::error::Error,
    req: &ClaimRequest,
    opts: &RunnerOptions,
) -> crate::error::Error {
    match opts
        .max_late
        .filter(|_| req.kind == crate::store::RunKind::Scheduled)
    {
        Some(max_late) => e.missed(&rfc3339(req.slot), max_late),
        None => e,
    }
}
/// A won claim whose lease, counted from when its request was sent, is already (nearly) over by
/// the time its answer arrived (the server stalled longer than the lease: `CLIENT PAUSE`, a slow
/// fork, a stopped VM) leaves no time to run the command, and started, it would be stopped at once.
/// Left so, the attempt would stay `running` with nobody to finish or take it over. The claim is
/// idempotent per token: sending it again renews the lease from a fresh send without using an
/// attempt. Retried while the answer keeps coming too late, within the claim's retry time.
async fn with_time_to_run(
    conn: &mut Connection,
    target: Target<'_>,
    req: &ClaimRequest,
    mut reply: ClaimReply,
    mut sent: BootTime,
    opts: &RunnerOptions,
) -> Result<(ClaimReply, BootTime)> {
    let needed = lease_to_start(req.lease, opts.heartbeat, opts.command.kill_after);
    let give_up = Instant::now() + SLOT_RETRY_FOR.max(req.lease);
    while reply.outcome == ClaimOutcome::Won
        && LeaseDeadline::new(req.lease, sent).deadline().left() < needed
        && Instant::now() < give_up
    {
        if !opts.quiet {
            crate::errln!(
                "anarchon: the claim of {} @ {} was answered {} after it was sent, with too little of its lease left to run the command until its first heartbeat; claiming again with the same token",
                target.job,
                rfc3339(req.slot),
                humantime::format_duration(Duration::from_millis(
                    u64::try_from(sent.elapsed().as_millis()).unwrap_or(u64::MAX)
                ))
            );
        }
        (reply, sent) = claim_with_retry(conn, target, req, reply.server_now, opts).await?;
    }
    Ok((reply, sent))
}

/// How much of its lease a won claim must have left, by the local deadline, for its command to
/// start: enough to reach its first heartbeat's answer before the command would be stopped
/// (`--heartbeat` after the start, plus the stop's grace), or half of what a lease gives at most
/// (a `--heartbeat` near the lease). A claim answered later than that (a server stalled near the
/// lease's end: CLIENT PAUSE, a slow fork) claims again with the same token, which renews the
/// lease from a fresh send: a command never starts only to be stopped at once.
fn lease_to_start(lease: Duration, heartbeat: Duration, kill_after: Duration) -> Duration {
    let usable = lease.saturating_sub(deadline::safety_margin(lease));
    (heartbeat + deadline::stop_grace(lease, kill_after)).min(usable / 2)
}

/// Runs the command for a won claim and records its end. `sent`: when the winning claim was sent.
async fn execute(
    conn: &mut Connection,
    run: Run<'_>,
    won: &ClaimReply,
    sent: BootTime,
    backup: bool,
) -> SlotReport {
    let Run { target, req, opts } = run;
    let job = target.job;
    let attempt = won.attempt.unwrap_or(1);
    let claimed_at = SystemTime::now();
    crate::lines::note_attempt(attempt);
    opts.events
        .emit(&event::RunEvent::started(job, req.slot, attempt, backup));
    let unreplicated = match &opts.replicas {
        Some(wait) => replicas_missing(conn, wait, target, req, "claim", opts.quiet).await,
        None => None,
    };
    let (claimed, keeper) = hold(conn, target, req, won, sent, opts);
    let spec = command_spec(opts, target, req, attempt, won.fence);
    let deadline = match &claimed {
        Claimed::Lease(held) => Some(&held.deadline),
        Claimed::ClaimOnly { .. } => None,
    };
    if let Some(report) = not_to_start(
        conn,
        run,
        won,
        (&claimed, keeper.as_ref()),
        backup,
        unreplicated,
    )
    .await
    {
        run.trace_attempt(won, claimed_at, &report);
        return report;
    }
    let mut spec = spec;
    let publisher = run.live_output(conn, attempt, &mut spec);
    let outcome = child::run(&spec, deadline, opts.quiet).await;
    let command_ended = SystemTime::now();
    // From here the lease is renewed by the record's own tries (record::answered), on this one
    // connection: a keeper's request beside them could take the answer of theirs that a cut
    // connection lost.
    if let Some(keeper) = keeper {
        keeper.abort();
    }
    if let Some(publisher) = publisher {
        // The last lines and the `end` entry go before the run's end is recorded, so a reader
        // sees all of the output before the status; bounded, so a server that does not answer
        // does not hold the record back for long.
        drop(spec.live.take());
        publisher.finish(LIVE_OUTPUT_DRAIN).await;
    }

    let stopped_for_lease = outcome.lease_lost && spec.stop_on_lease_lost;
    let recorded = run
        .record_end(conn, &claimed, &outcome, stopped_for_lease)
        .await;
    give_permits(conn, &claimed).await;
    if let (Recorded::Yes, Some(wait)) = (&recorded, &opts.replicas) {
        replicas_missing(conn, wait, target, req, "result", opts.quiet).await;
    }
    if let Some(said) = recorded_event(
        &recorded,
        &claimed,
        stopped_for_lease,
        job,
        attempt,
        req.slot,
    ) {
        opts.events
            .emit(&said.for_attempt(attempt).to(event::Audience::Always));
    }
    run.trace_command(attempt, &outcome, command_ended);
    let report = ran_report(run, won, backup, outcome, recorded);
    run.trace_attempt(won, claimed_at, &report);
    report
}

/// The report of a slot whose command ran here.
fn ran_report(
    run: Run<'_>,
    won: &ClaimReply,
    backup: bool,
    outcome: child::CommandOutcome,
    recorded: Recorded,
) -> SlotReport {
    let Run { target, req, .. } = run;
    SlotReport {
        job: target.job.to_string(),
        slot: req.slot,
        slot_time: rfc3339(req.slot),
        outcome: SlotOutcome::Ran,
        attempt: Some(won.attempt.unwrap_or(1)),
        runner: req.runner.clone(),
        backup,
        status: status_of(&recorded, outcome.succeeded()),
        command: Some(outcome),
        recorded: Some(recorded),
        fence: won.fence,
        skip_recorded: None,
        skip_reason: None,
        overlap: None,
        behind: None,
    }
}

/// Why a won run's command must not start, as the slot's report (its end recorded): too few
/// replicas acknowledged its claim (`--if-unreplicated skip`), or no `--limit` permit came free
/// in time. None: start it (its permits taken).
async fn not_to_start(
    conn: &mut Connection,
    run: Run<'_>,
    won: &ClaimReply,
    (claimed, keeper): (&Claimed, Option<&tokio::task::JoinHandle<()>>),
    backup: bool,
    unreplicated: Option<String>,
) -> Option<SlotReport> {
    let Run { target, req, opts } = run;
    if let Some(why) = unreplicated.filter(|_| opts.replicas.is_some_and(|w| !w.run_anyway)) {
        keeper.inspect(|k| k.abort());
        return Some(not_started(conn, target, req, won, claimed, backup, why).await);
    }
    let since = SystemTime::now();
    let permits = take_permits(conn, run, won, claimed).await;
    if let Some(trace) = run.trace().filter(|_| !opts.limits.is_empty()) {
        let names = opts
            .limits
            .iter()
            .map(|l| l.name.clone())
            .collect::<Vec<_>>();
        trace.wait_in_attempt(
            won.attempt.unwrap_or(1),
            "waiting for a permit",
            since,
            vec![
                KeyValue::new("anarchon.limits", names.join(",")),
                KeyValue::new(
                    "anarchon.then",
                    if permits.is_ok() {
                        "taken"
                    } else {
                        "none came free"
                    },
                ),
            ],
        );
    }
    if let Err(why) = permits {
        keeper.inspect(|k| k.abort());
        return Some(no_permit(conn, run, won, backup, why).await);
    }
    None
}

/// Takes the won run's permits of its `--limit`s before its command starts (its keeper holds the
/// lease meanwhile), waiting for room up to the slot's `--max-late` ([`permits::take`]); from a
/// takeover, a retry or a manual run, `--max-late` from now at least.
async fn take_permits(
    conn: &mut Connection,
    run: Run<'_>,
    won: &ClaimReply,
    claimed: &Claimed,
) -> Result<(), Option<permits::NoPermit>> {
    let (Claimed::Lease(held), Run { target, req, opts }) = (claimed, run) else {
        return Ok(());
    };
    let Some(held_permits) = &held.permits else {
        return Ok(());
    };
    let max_late = crate::time::millis(permit_wait(opts));
    let mut left = req.slot + max_late - won.server_now;
    if won.attempt.unwrap_or(1) > 1 || req.kind == crate::store::RunKind::Manual {
        left = left.max(max_late);
    }
    let until = Instant::now() + Duration::from_millis(u64::try_from(left).unwrap_or(0));
    let said = |e: event::RunEvent| opts.events.emit(&e);
    permits::take(
        conn,
        &held_permits.permits,
        until,
        &held.deadline,
        said,
        (target.job, req.slot),
    )
    .await?;
    held_permits
        .taken
        .store(true, std::sync::atomic::Ordering::SeqCst);
    Ok(())
}

/// How long after its slot a run waits for a `--limit` permit: its `--max-late` (`run`'s default
/// where the options have none: a manual run).
fn permit_wait(opts: &RunnerOptions) -> Duration {
    opts.max_late.unwrap_or(Duration::from_secs(60))
}

/// Gives the run's permits back once its end is recorded (those its attempt still holds: a
/// takeover's are its own).
async fn give_permits(conn: &mut Connection, claimed: &Claimed) {
    if let Claimed::Lease(held) = claimed
        && let Some(p) = &held.permits
        && p.taken()
    {
        let _ = tokio::time::timeout(Duration::from_secs(2), p.permits.give(conn)).await;
    }
}

/// Ends a won run that found no room under its `--limit` in time without starting its command:
/// recorded `interrupted` with the limit and who held its permits (`why`; None: the lease was lost
/// while it waited, and the run is left to a takeover).
async fn no_permit(
    conn: &mut Connection,
    run: Run<'_>,
    won: &ClaimReply,
    backup: bool,
    why: Option<permits::NoPermit>,
) -> SlotReport {
    let Run { target, req, opts } = run;
    let attempt = won.attempt.unwrap_or(1);
    let mut report = SlotReport::skipped(target.job, req.slot, SlotOutcome::NoPermit, Some(won));
    report.runner = req.runner.clone();
    report.backup = backup;
    report.fence = won.fence;
    let Some(why) = why else {
        report.status = "unknown".to_string();
        report.recorded = Some(Recorded::LeaseLost(
            "the lease was lost while the run waited for a permit".to_string(),
        ));
        return report;
    };
    let result = why.result_json(permit_wait(opts));
    let ended = retrying(conn, async |c| {
        strategy::lease::release(
            c,
            &target.lease_keys(),
            req.slot,
            Some(attempt),
            "interrupted",
            &result,
            true,
        )
        .await
    })
    .await;
    let _ = tokio::time::timeout(
        Duration::from_secs(2),
        crate::store::limit::count_refused(conn, target.prefix, &why.name),
    )
    .await;
    opts.events.emit(
        &event::RunEvent::new(
            event::EventKind::NoPermit,
            target.job,
            req.slot,
            format!(
                "no permit of --limit {}={} came free in time (held by {}); attempt {attempt} of {} @ {} is recorded interrupted, its command not started",
                why.name,
                why.max,
                crate::store::limit::holders_text(&why.holders),
                target.job,
                rfc3339(req.slot)
            ),
        )
        .for_attempt(attempt)
        .to(event::Audience::Always),
    );
    report.status = "interrupted".to_string();
    report.recorded = Some(match ended {
        Ok(_) => Recorded::Yes,
        Err(e) => Recorded::Unreachable(e.to_string()),
    });
    report
}

/// The status a ran slot's report gives: as recorded, or `unknown` when its end was not.
fn status_of(recorded: &Recorded, succeeded: bool) -> String {
    match (recorded, succeeded) {
        (Recorded::Released { status, .. }, _) => status.clone(),
        (Recorded::Yes, true) => "finished".to_string(),
        (Recorded::Yes, false) => "failed".to_string(),
        // The attempt failed; the run waits for its retry.
        (Recorded::Retry { .. }, _) => "retrying".to_string(),
        (Recorded::HandedOver { .. }, _) => "interrupted".to_string(),
        (Recorded::LeaseLost(_) | Recorded::Unreachable(_) | Recorded::Refused { .. }, _) => {
            "unknown".to_string()
        }
    }
}

/// The run as this host holds it: with a lease, the keeper that heartbeats it (started here);
/// claim-only, when it started.
fn hold(
    conn: &Connection,
    target: Target<'_>,
    req: &ClaimRequest,
    won: &ClaimReply,
    sent: BootTime,
    opts: &RunnerOptions,
) -> (Claimed, Option<tokio::task::JoinHandle<()>>) {
    if target.strategy.has_leases() {
        let permits = (!opts.limits.is_empty()).then(|| {
            std::sync::Arc::new(keeper::HeldPermits {
                permits: crate::store::limit::Permits {
                    prefix: target.prefix.to_string(),
                    limits: opts.limits.clone(),
                    run: crate::store::limit::run_member(target.job, req.slot),
                    token: req.token.clone(),
                    runner: req.runner.clone(),
                    lease_ms: crate::time::millis(req.lease),
                },
                taken: Default::default(),
            })
        });
        let held = HeldLease {
            keys: target.lease_keys(),
            slot: req.slot,
            token: req.token.clone(),
            deadline: LeaseDeadline::new(req.lease, sent),
            permits,
        };
        let keeper = tokio::spawn(keeper::keep(conn.clone(), held.clone(), opts.heartbeat));
        (Claimed::Lease(Box::new(held)), Some(keeper))
    } else {
        let started = Instant::now();
        (
            Claimed::ClaimOnly {
                started,
                server_now: won.server_now,
            },
            None,
        )
    }
}

/// The command as it runs for this attempt: the options' command with the run's facts in its
/// environment.
fn command_spec(
    opts: &RunnerOptions,
    target: Target<'_>,
    req: &ClaimRequest,
    attempt: u32,
    fence: Option<i64>,
) -> child::CommandSpec {
    let job = target.job;
    let mut spec = opts.command.clone();
    // The run's trace context, which every host derives alike (crate::trace): the command's own
    // spans join the one trace of this slot, whichever host runs which attempt. It replaces a
    // TRACEPARENT anarchon itself was started with: the run belongs to its slot's trace.
    let trace =
        crate::trace::TraceContext::of_attempt(target.prefix, job, req.slot, req.kind, attempt);
    spec.env.retain(|(name, _)| name != "TRACEPARENT");
    spec.env.extend([
        ("ANARCHON_JOB".to_string(), job.to_string()),
        ("ANARCHON_SLOT".to_string(), req.slot.to_string()),
        ("ANARCHON_ATTEMPT".to_string(), attempt.to_string()),
        ("ANARCHON_RUNNER".to_string(), req.runner.clone()),
        ("TRACEPARENT".to_string(), trace.traceparent()),
    ]);
    // The fencing token (both store formats): pass it to the system the command writes to, which
    // refuses a write carrying a lower one than it has seen (docs/guide.md, "Fencing tokens").
    if let Some(fence) = fence {
        spec.env
            .push(("ANARCHON_FENCE".to_string(), fence.to_string()));
    }
    spec
}

/// What became of the run's end when it was not simply recorded, as an event (always said: at a
/// terminal, to cron's mail, in the daemon's log).
fn recorded_event(
    recorded: &Recorded,
    claimed: &Claimed,
    stopped_for_lease: bool,
    job: &str,
    attempt: u32,
    slot: i64,
) -> Option<event::RunEvent> {
    use event::{EventKind, RunEvent};
    let at = rfc3339(slot);
    let said = |kind, message: String| Some(RunEvent::new(kind, job, slot, message));
    match recorded {
        Recorded::Yes => None,
        Recorded::Retry { nth, at: due } => {
            Some(RunEvent::retry_pending(job, slot, attempt, *nth, *due))
        }
        Recorded::HandedOver {
            standing_by: Some(backup),
        } => said(
            EventKind::HandedOver,
            format!(
                "the command was stopped for the shutdown; attempt {attempt} of {job} @ {at} is handed over: its lease ended now, and a replica standing by takes the run over as the next attempt ({backup} said last that it stands by; with several, any of them may)"
            ),
        ),
        Recorded::HandedOver { standing_by: None } => said(
            EventKind::GivenUp,
            format!(
                "the command was stopped for the shutdown; attempt {attempt} of {job} @ {at} is given up, and no replica is standing by for it: its lease ended now; a replica of this job that starts (or reloads its crontab) takes the run over as the next attempt if attempts remain, and so does the job's next run within --max-late under --overlap forbid or buffer (under replace it ends interrupted, superseded by that run)"
            ),
        ),
        Recorded::Released { reason, status } => said(
            EventKind::Released,
            format!(
                "{reason}; the command was stopped, and attempt {attempt} of {job} @ {at} is recorded {status}"
            ),
        ),
        Recorded::LeaseLost(why) if stopped_for_lease => {
            // What happens next depends on how the lease was lost: say only what is true.
            let next = match claimed {
                Claimed::Lease(held) if held.deadline.loss() == Loss::StoreLost => {
                    "the server no longer has the run, so another host may claim it again (a persistent server, appendonly yes, keeps claims across restarts)".to_string()
                }
                Claimed::Lease(held) if held.deadline.loss() == Loss::Taken => {
                    "the run is no longer this host's".to_string()
                }
                Claimed::Lease(_) | Claimed::ClaimOnly { .. } => format!(
                    "attempt {attempt} of {job} @ {at} ends interrupted when its lease ends, and a backup takes over if attempts remain"
                ),
            };
            said(
                EventKind::LeaseLost,
                format!(
                    "the run's end was not recorded: the command was stopped because the lease was lost ({why}); {next}"
                ),
            )
        }
        Recorded::LeaseLost(why) => said(
            EventKind::LeaseLost,
            format!(
                "the run's end was not recorded: {why}; this runner no longer held {job} @ {at}"
            ),
        )
        .map(|e| e.at(event::Level::Error)),
        Recorded::Unreachable(why) => said(
            EventKind::NotRecorded,
            format!(
                "the run's end was not recorded: {why}\n  hint: the lease will expire; a backup may run {job} @ {at} again"
            ),
        ),
        Recorded::Refused { reason, .. } => said(
            EventKind::NotRecorded,
            format!(
                "the run's end was not recorded: {reason}\n  hint: the lease will expire; a backup may run {job} @ {at} again"
            ),
        ),
    }
}

/// Waits (`WAIT`) for `wait.replicas` replicas to hold this connection's writes so far (the claim,
/// or the result). None when they do; else why not, after a warning on stderr.
async fn replicas_missing(
    conn: &mut Connection,
    wait: &ReplicaWait,
    target: Target<'_>,
    req: &ClaimRequest,
    what: &str,
    quiet: bool,
) -> Option<String> {
    let why = match conn.wait_for_replicas(wait.replicas, wait.timeout).await {
        Ok(acked) if acked >= wait.replicas => return None,
        Ok(acked) => format!(
            "{acked} of {} replica(s) acknowledged the {what} within {}",
            wait.replicas,
            humantime::format_duration(wait.timeout)
        ),
        Err(e) => format!("WAIT for replicas failed: {e}"),
    };
    let next = match (what, wait.run_anyway) {
        ("claim", true) => {
            "running anyway (--if-unreplicated run): a failover now could let another host run it again"
        }
        ("claim", false) => "not running the command (--if-unreplicated skip)",
        _ => "a failover now could lose this result",
    };
    if !quiet || !wait.run_anyway || what != "claim" {
        crate::errln!(
            "anarchon: {} @ {}: {why}; {next}",
            target.job,
            rfc3339(req.slot)
        );
    }
    Some(why)
}

/// Ends a won run whose claim no replica acknowledged without starting the command
/// (`--if-unreplicated skip`): recorded as failed, with the reason, so no backup runs it either.
async fn not_started(
    conn: &mut Connection,
    target: Target<'_>,
    req: &ClaimRequest,
    won: &ClaimReply,
    claimed: &Claimed,
    backup: bool,
    why: String,
) -> SlotReport {
    let result = serde_json::json!({ "reason": format!("not started: {why}") }).to_string();
    let end = record::End {
        status: crate::strategy::lease::FinishStatus::Failed,
        result: &result,
        by_itself: false,
        retry: None,
    };
    let recorded = record::record_result(conn, target, req, claimed, &end).await;
    SlotReport {
        job: target.job.to_string(),
        slot: req.slot,
        slot_time: rfc3339(req.slot),
        outcome: SlotOutcome::Unreplicated,
        attempt: Some(won.attempt.unwrap_or(1)),
        runner: req.runner.clone(),
        backup,
        status: match recorded {
            Recorded::Yes | Recorded::Retry { .. } => "failed".to_string(),
            Recorded::LeaseLost(_)
            | Recorded::Unreachable(_)
            | Recorded::Refused { .. }
            | Recorded::Released { .. }
            | Recorded::HandedOver { .. } => "unknown".to_string(),
        },
        command: None,
        recorded: Some(recorded),
        fence: won.fence,
        skip_recorded: None,
        skip_reason: None,
        overlap: None,
        behind: None,
    }
}

/// What a wait for an older run's end says of it, as span attributes.
fn overlap_attributes(wait: &overlap::OverlapWait) -> Vec<KeyValue> {
    let mut attributes = vec![KeyValue::new(
        "anarchon.older_runner",
        wait.older_runner.clone(),
    )];
    if let Some(slot) = wait.older_slot {
        attributes.push(KeyValue::new("anarchon.older_slot", rfc3339(slot)));
    }
    attributes
}

/// How a command's attempt ended, in words, for its span.
fn attempt_end(outcome: &child::CommandOutcome) -> String {
    match (outcome.exit_code, outcome.signal, &outcome.spawn_error) {
        (_, _, Some(e)) => format!("not started: {e}"),
        (_, _, None) if outcome.timed_out => "timed out".to_string(),
        (Some(code), _, None) => format!("exit code {code}"),
        (None, Some(signal), None) => format!("ended by signal {signal}"),
        (None, None, None) => String::new(),
    }
}

/// The attempt a takeover ended, to be sent on its host's behalf ([`Run::attempt_taken_over`]).
struct TakenOver {
    prefix: String,
    job: String,
    keys: crate::store::JobKeys,
    slot: i64,
    kind: crate::store::RunKind,
    /// The host that took it over (this one).
    runner: String,
    /// The attempt taken over.
    attempt: u32,
}

impl TakenOver {
    async fn send(self, mut conn: Connection, exporter: crate::trace::Exporter) {
        let filter = crate::store::history::HistoryFilter {
            since: Some(self.slot),
            status: None,
            last: 50,
        };
        // `now` judges runs in progress, which this one is not.
        let read = crate::store::history::read_history(&mut conn, &self.keys, &filter, i64::MAX);
        let Ok(Ok(entries)) = tokio::time::timeout(Duration::from_millis(500), read).await else {
            return;
        };
        let kind = (self.kind == crate::store::RunKind::Manual).then_some("manual");
        let Some(before) = entries.into_iter().find(|e| {
            e.slot == self.slot && e.attempt == Some(self.attempt) && e.kind.as_deref() == kind
        }) else {
            return;
        };
        if before.status != "interrupted" {
            // Its own host recorded it (a failure with a retry due) and sent its span.
            return;
        }
        let at = |ms: Option<i64>| ms.and_then(crate::trace::spans::time_of_ms);
        let reason = before.result.get("reason").and_then(|r| r.as_str());
        let why = format!(
            "{}; taken over by {}",
            reason.unwrap_or("lease expired"),
            self.runner
        );
        let trace = crate::trace::RunTrace {
            exporter: &exporter,
            prefix: &self.prefix,
            job: &self.job,
            slot: self.slot,
            kind: self.kind,
            runner: &self.runner,
        };
        trace.attempt_ended_by_takeover(&crate::trace::spans::AttemptSpan {
            attempt: self.attempt,
            runner: before.runner,
            fence: before.fence,
            claimed: at(before.claimed_at).unwrap_or_else(SystemTime::now),
            ended: at(before.ended_at).unwrap_or_else(SystemTime::now),
            status: before.status.clone(),
            how: crate::trace::spans::Ended::of_status(&before.status, &why),
        });
    }
}
