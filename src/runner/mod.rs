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
//!   renews its lease and re-claim the moment it expires ([`wait_as_backup`]);
//! - a claim whose reply was lost is retried with the same token and answered `won` again.
//!
//! `anarchon run` (scheduled slots, catch-up) and `anarchon run-now` (manual runs) both go through
//! [`run_slot`], so a run is claimed, kept and recorded the same way wherever it comes from.

pub mod child;
pub mod deadline;
pub mod guard;
pub mod keeper;

use std::io::IsTerminal;
use std::time::Duration;

use serde::Serialize;
use tokio::time::{Instant, sleep, timeout};

use crate::connection::Connection;
use crate::error::{ExitCode, Result};
use crate::store::{ClaimKeys, LeaseKeys};
use crate::strategy::lease::{
    self, ClaimOutcome, ClaimReply, ClaimRequest, FinishStatus, TokenOutcome,
};
use crate::strategy::{self, Strategy, claim_only};
use crate::time::{humanize, rfc3339};
use child::{CommandOutcome, CommandSpec};
use deadline::{BootTime, LeaseDeadline};
use keeper::HeldLease;

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

/// What became of one slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SlotOutcome {
    /// We won it and ran the command.
    Ran,
    Overlap,
    Done,
    Running,
    /// Older than `--max-late`: not run.
    TooLate,
}

/// Whether the end of the run reached the store.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "snake_case", tag = "state", content = "detail")]
pub enum Recorded {
    /// finished / failed is stored.
    Yes,
    /// The token was no longer current: someone else holds or ended the run.
    LeaseLost(String),
    /// Redis could not be reached before the lease expired.
    Unreachable(String),
    /// Redis refused the finish (permissions, memory, bad data): retrying cannot help.
    Refused { reason: String, exit_code: i32 },
}

/// The summary of one slot (`run --json` prints it).
#[derive(Debug, Clone, Serialize)]
pub struct SlotReport {
    pub job: String,
    pub slot: i64,
    pub slot_time: String,
    pub outcome: SlotOutcome,
    /// Ours when we ran it; the holder's when skipped.
    pub attempt: Option<u32>,
    pub runner: String,
    /// Whether we took the run over as a backup.
    pub backup: bool,
    /// The run's status after us (`finished`, `failed`, ... or the holder's view when skipped).
    pub status: String,
    pub command: Option<CommandOutcome>,
    pub recorded: Option<Recorded>,
}

impl SlotReport {
    fn skipped(job: &str, slot: i64, outcome: SlotOutcome, reply: Option<&ClaimReply>) -> Self {
        SlotReport {
            job: job.to_string(),
            slot,
            slot_time: rfc3339(slot),
            outcome,
            attempt: reply.and_then(|r| r.attempt),
            runner: reply.map(|r| r.runner.clone()).unwrap_or_default(),
            backup: false,
            status: reply.map(|r| r.status.clone()).unwrap_or_default(),
            command: None,
            recorded: None,
        }
    }

    pub fn too_late(job: &str, slot: i64) -> Self {
        SlotReport::skipped(job, slot, SlotOutcome::TooLate, None)
    }

    /// The process exit code this slot stands for (see the table in error.rs).
    pub fn exit_code(&self) -> i32 {
        match self.outcome {
            SlotOutcome::Overlap => ExitCode::Overlap.code(),
            SlotOutcome::Done => ExitCode::Done.code(),
            SlotOutcome::Running => ExitCode::Running.code(),
            SlotOutcome::TooLate => ExitCode::TooLate.code(),
            SlotOutcome::Ran => {
                let command = self
                    .command
                    .as_ref()
                    .map_or(1, CommandOutcome::process_exit_code);
                match (&self.recorded, command) {
                    // A failing command's own code is what cron and monitoring must see.
                    (_, code) if code != 0 => code,
                    (Some(Recorded::LeaseLost(_)), _) => ExitCode::LeaseLost.code(),
                    (Some(Recorded::Unreachable(_)), _) => ExitCode::Connection.code(),
                    (Some(Recorded::Refused { exit_code, .. }), _) => *exit_code,
                    _ => 0,
                }
            }
        }
    }
}

/// The job and strategy a slot is claimed under.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    pub prefix: &'a str,
    pub job: &'a str,
    pub strategy: Strategy,
}

impl Target<'_> {
    fn lease_keys(&self) -> LeaseKeys {
        LeaseKeys::new(self.prefix, self.job)
    }
}

/// Claims `req.slot` and, when won (now or later as a backup), runs the command under the claim.
pub async fn run_slot(
    conn: &mut Connection,
    target: Target<'_>,
    req: ClaimRequest,
    opts: &RunnerOptions,
    server_now: i64,
) -> Result<SlotReport> {
    let (mut reply, mut sent) = claim_with_retry(conn, target, &req, server_now).await?;
    let mut backup = false;
    // Only the lease strategy answers running; the others cannot tell running from done.
    if let (ClaimOutcome::Running, Backup::Standby { limit }) = (reply.outcome, opts.backup) {
        backup = true;
        (reply, sent) = wait_as_backup(
            conn,
            &target.lease_keys(),
            target.job,
            &req,
            reply,
            limit,
            opts.quiet,
        )
        .await?;
    }
    let outcome = match reply.outcome {
        ClaimOutcome::Won => {
            return Ok(execute(conn, target, &req, &reply, sent, backup, opts).await);
        }
        ClaimOutcome::Overlap => SlotOutcome::Overlap,
        ClaimOutcome::Done => SlotOutcome::Done,
        ClaimOutcome::Running => SlotOutcome::Running,
    };
    let mut report = SlotReport::skipped(target.job, req.slot, outcome, Some(&reply));
    report.backup = backup;
    Ok(report)
}

/// How long a claim is retried through connection trouble (at least; a longer lease extends it).
const CLAIM_RETRY_FOR: Duration = Duration::from_secs(10);

/// Claims, retrying through connection trouble with the same token: the claim is idempotent per
/// token, so if an earlier try was applied and only its reply was lost, the retry is answered
/// `won` again instead of leaving a run that nobody runs until its lease expires. Returns the reply
/// and when the answered request was sent (the lease deadline counts from there).
async fn claim_with_retry(
    conn: &mut Connection,
    target: Target<'_>,
    req: &ClaimRequest,
    server_now: i64,
) -> Result<(ClaimReply, BootTime)> {
    // A claim-only manual run appends a new entry each time: not safe to repeat.
    let idempotent = target.strategy.has_leases() || req.kind != crate::store::RunKind::Manual;
    let give_up = Instant::now() + CLAIM_RETRY_FOR.max(req.lease);
    let mut backoff = Duration::from_millis(100);
    loop {
        let sent = BootTime::now();
        let error = match strategy::claim(
            conn,
            target.prefix,
            target.job,
            target.strategy,
            req,
            server_now,
        )
        .await
        {
            Ok(reply) => return Ok((reply, sent)),
            Err(e) if idempotent && e.is_transient() && Instant::now() < give_up => e,
            Err(e) => return Err(e),
        };
        if !req_quiet() {
            eprintln!("anarchon: the claim got no answer ({error}); retrying with the same token");
        }
        sleep(backoff.min(give_up.saturating_duration_since(Instant::now()))).await;
        backoff = (backoff * 2).min(Duration::from_secs(2));
        let _ = timeout(
            give_up.saturating_duration_since(Instant::now()),
            conn.reconnect(),
        )
        .await;
    }
}

/// Retries are worth a line on a terminal only.
fn req_quiet() -> bool {
    !std::io::stderr().is_terminal()
}

/// The longest a backup sleeps between looks at the holder: it notices an early finish within this.
const STANDBY_POLL_MAX: Duration = Duration::from_secs(5);

/// Stands by while the holder renews its lease: re-claims just after the holder's lease should end
/// (and at least every [`STANDBY_POLL_MAX`], to notice an early end), until we win, the run is over
/// or out of attempts, or `limit` has passed. The claim script decides each time, so two backups
/// can't both win; a claim of a live run writes nothing.
async fn wait_as_backup(
    conn: &mut Connection,
    keys: &LeaseKeys,
    job: &str,
    req: &ClaimRequest,
    mut reply: ClaimReply,
    limit: Option<Duration>,
    quiet: bool,
) -> Result<(ClaimReply, BootTime)> {
    let give_up = limit.map(|l| Instant::now() + l);
    let spinner = (!quiet && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.enable_steady_tick(Duration::from_millis(120));
        bar
    });
    let mut sent = BootTime::now();
    let mut backoff = Duration::from_millis(100);
    while reply.outcome == ClaimOutcome::Running && give_up.is_none_or(|g| Instant::now() < g) {
        let left_ms = reply.lease_end.unwrap_or(reply.server_now) - reply.server_now;
        if let Some(bar) = &spinner {
            bar.set_message(format!(
                "standing by for {job} @ {}: held by {} (attempt {}), lease ends in {}",
                rfc3339(req.slot),
                reply.runner,
                reply.attempt.unwrap_or(0),
                humanize(u64::try_from(left_ms).unwrap_or(0))
            ));
        }
        let nap = Duration::from_millis(u64::try_from(left_ms + 25).unwrap_or(0))
            .clamp(Duration::from_millis(25), STANDBY_POLL_MAX);
        let nap = match give_up {
            Some(g) => nap.min(g.saturating_duration_since(Instant::now())),
            None => nap,
        };
        sleep(nap).await;
        sent = BootTime::now();
        reply = match lease::claim(conn, keys, req).await {
            Ok(r) => {
                backoff = Duration::from_millis(100);
                r
            }
            Err(e) if e.is_transient() => {
                sleep(backoff).await;
                backoff = (backoff * 2).min(STANDBY_POLL_MAX);
                let _ = timeout(Duration::from_secs(1), conn.reconnect()).await;
                continue;
            }
            Err(e) => return Err(e),
        };
    }
    if let Some(bar) = spinner {
        bar.finish_and_clear();
    }
    Ok((reply, sent))
}

/// How a won run is recorded at its end.
enum Claimed {
    /// Heartbeated while the command runs; finished with its token before its deadline.
    Lease(HeldLease),
    /// No lease: the result is added to `:results` when the command ends.
    ClaimOnly { started: Instant, server_now: i64 },
}

/// Runs the command for a won claim and records its end. `sent`: when the winning claim was sent.
async fn execute(
    conn: &mut Connection,
    target: Target<'_>,
    req: &ClaimRequest,
    won: &ClaimReply,
    sent: BootTime,
    backup: bool,
    opts: &RunnerOptions,
) -> SlotReport {
    let job = target.job;
    let attempt = won.attempt.unwrap_or(1);
    let (claimed, keeper) = if target.strategy.has_leases() {
        let held = HeldLease {
            keys: target.lease_keys(),
            slot: req.slot,
            token: req.token.clone(),
            deadline: LeaseDeadline::new(req.lease, sent),
        };
        let keeper = tokio::spawn(keeper::keep(conn.clone(), held.clone(), opts.heartbeat));
        (Claimed::Lease(held), Some(keeper))
    } else {
        let started = Instant::now();
        (
            Claimed::ClaimOnly {
                started,
                server_now: won.server_now,
            },
            None,
        )
    };

    let mut spec = opts.command.clone();
    spec.env.extend([
        ("ANARCHON_JOB".to_string(), job.to_string()),
        ("ANARCHON_SLOT".to_string(), req.slot.to_string()),
        ("ANARCHON_ATTEMPT".to_string(), attempt.to_string()),
        ("ANARCHON_RUNNER".to_string(), req.runner.clone()),
    ]);
    let deadline = match &claimed {
        Claimed::Lease(held) => Some(&held.deadline),
        Claimed::ClaimOnly { .. } => None,
    };
    let outcome = child::run(&spec, deadline, opts.quiet).await;
    if let Some(keeper) = keeper {
        keeper.abort();
    }

    let stopped_for_lease = outcome.lease_lost && spec.stop_on_lease_lost;
    let recorded = match &claimed {
        // The command was stopped because the lease could not be kept: that is no failure of the
        // run. Finishing it `failed` would take the run from the backups; left alone, its lease
        // ends, the attempt is recorded `interrupted` and a backup (or a later claim) takes over.
        Claimed::Lease(held) if stopped_for_lease => {
            Recorded::LeaseLost(held.deadline.lost_reason(Duration::MAX).unwrap_or_default())
        }
        _ => record(conn, target, req, &claimed, attempt, &outcome).await,
    };
    match &recorded {
        Recorded::Yes => {}
        Recorded::LeaseLost(why) if stopped_for_lease => eprintln!(
            "anarchon: the run's end was not recorded: the command was stopped because the lease was lost ({why}); attempt {attempt} of {job} @ {} ends interrupted when its lease ends, and a backup takes over if attempts remain",
            rfc3339(req.slot)
        ),
        Recorded::LeaseLost(why) => eprintln!(
            "error: the run's end was not recorded: {why}; this runner no longer held {job} @ {}",
            rfc3339(req.slot)
        ),
        Recorded::Unreachable(why) => eprintln!(
            "error: the run's end was not recorded: {why}\n  hint: the lease will expire; a backup may run {job} @ {} again",
            rfc3339(req.slot)
        ),
        Recorded::Refused { reason, .. } => eprintln!(
            "error: the run's end was not recorded: {reason}\n  hint: the lease will expire; a backup may run {job} @ {} again",
            rfc3339(req.slot)
        ),
    }
    SlotReport {
        job: job.to_string(),
        slot: req.slot,
        slot_time: rfc3339(req.slot),
        outcome: SlotOutcome::Ran,
        attempt: Some(attempt),
        runner: req.runner.clone(),
        backup,
        status: match (&recorded, outcome.succeeded()) {
            (Recorded::Yes, true) => "finished".to_string(),
            (Recorded::Yes, false) => "failed".to_string(),
            _ => "unknown".to_string(),
        },
        command: Some(outcome),
        recorded: Some(recorded),
    }
}

/// The result stored with the run: how the command ended (see docs/store-format.md).
fn result_json(runner: &str, attempt: u32, outcome: &CommandOutcome) -> String {
    serde_json::json!({
        "exit_code": outcome.exit_code,
        "signal": outcome.signal,
        "duration_ms": outcome.duration_ms,
        "timed_out": outcome.timed_out,
        "lease_lost": outcome.lease_lost,
        "runner": runner,
        "attempt": attempt,
        "stderr_tail": outcome.stderr_tail,
        "spawn_error": outcome.spawn_error,
    })
    .to_string()
}

/// How long a claim-only run's end is retried through connection trouble (it has no lease to
/// bound the retries).
const CLAIM_ONLY_RECORD_FOR: Duration = Duration::from_secs(10);

/// Finishes the run, retrying through connection trouble while our lease still lives.
async fn record(
    conn: &mut Connection,
    target: Target<'_>,
    req: &ClaimRequest,
    claimed: &Claimed,
    attempt: u32,
    outcome: &CommandOutcome,
) -> Recorded {
    let status = if outcome.succeeded() {
        FinishStatus::Finished
    } else {
        FinishStatus::Failed
    };
    let result = result_json(&req.runner, attempt, outcome);
    // Even past the deadline the finish is worth trying once: if nobody took over, it is ours (the
    // script checks the token, so a late finish can never overwrite another attempt).
    let give_up = match claimed {
        Claimed::Lease(held) => {
            Instant::now() + held.deadline.deadline().left().max(Duration::from_secs(1))
        }
        Claimed::ClaimOnly { .. } => Instant::now() + CLAIM_ONLY_RECORD_FOR,
    };
    let mut backoff = Duration::from_millis(100);
    loop {
        let left = give_up.saturating_duration_since(Instant::now());
        let finish = async {
            match claimed {
                Claimed::Lease(held) => {
                    lease::finish(conn, &held.keys, held.slot, &held.token, status, &result).await
                }
                Claimed::ClaimOnly {
                    started,
                    server_now,
                } => {
                    let ended_at = server_now + crate::time::millis(started.elapsed());
                    let keys = ClaimKeys::new(target.prefix, target.job);
                    claim_only::finish(
                        conn,
                        &keys,
                        target.strategy,
                        req.kind,
                        req.slot,
                        &req.token,
                        status,
                        &result,
                        ended_at,
                    )
                    .await
                }
            }
        };
        let error = match timeout(left.max(Duration::from_millis(100)), finish).await {
            Ok(Ok(reply)) if reply.outcome == TokenOutcome::Ok => return Recorded::Yes,
            Ok(Ok(reply)) => return Recorded::LeaseLost(reply.lost_reason()),
            Ok(Err(e)) if !e.is_transient() => {
                return Recorded::Refused {
                    reason: e.to_string(),
                    exit_code: e.exit_code().code(),
                };
            }
            Ok(Err(e)) => e.to_string(),
            Err(_) => "Redis did not answer in time".to_string(),
        };
        if Instant::now() >= give_up {
            return Recorded::Unreachable(error);
        }
        sleep(backoff.min(give_up.saturating_duration_since(Instant::now()))).await;
        backoff = (backoff * 2).min(Duration::from_secs(2));
        let _ = timeout(
            give_up.saturating_duration_since(Instant::now()),
            conn.reconnect(),
        )
        .await;
    }
}
