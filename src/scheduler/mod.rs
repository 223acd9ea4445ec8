//! The scheduler: a slot's whole life below the commands that start it. `run` (a crontab line),
//! `cron` (each job of a daemon), `next` and `run-now` use it: the slot by the server's clock, the
//! jitter, the catch-up of missed runs, the job's old names ([`lineage`]), then the claim, the run
//! and its records through [`crate::runner`]. Opening the store for a slot (the format check and the
//! registry in one round trip) is [`open`]; one line about a slot for a person is [`describe`].

pub mod catch_up;
pub mod describe;
pub mod known;
pub mod lineage;
pub mod open;

use std::time::Duration;

use serde::Serialize;

use crate::connection::Connection;
use crate::error::{Error, ExitStatus, Result};
use crate::runner::{SlotOutcome, SlotReport, Target, run_in_turn};
use crate::schedule::Schedule;
use crate::settings::run::RunSettings;
use crate::store::{LeaseKeys, RunKind, StoreCheck};
use crate::strategy::claim::ClaimRequest;
use crate::strategy::lease;
use crate::time::rfc3339;

pub use describe::{describe, event as slot_event};
pub use open::{check_and_register, open_and_register};

/// A missed run the catch-up policy did not run.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Skipped {
    pub slot: i64,
    slot_time: String,
    pub reason: String,
    /// Whether the store now records it as skipped (false: another host claimed it meanwhile, the
    /// job is paused over it, or a format 1 store, which has no place for it).
    pub recorded: bool,
}

/// One scheduled slot taken as `run` takes it, once the store is open and `check` read: the
/// jitter, the catch-up of missed runs (each in turn), then the slot itself, claimed, run and
/// recorded by [`run_in_turn`], and `--on-failure` for each attempt that failed here. `anarchon
/// cron` takes each of its slots through here too: one code path for a crontab line run by cron
/// and one run by the daemon.
pub async fn take_slot(
    conn: &mut Connection,
    prefix: &str,
    run: &RunSettings,
    check: &StoreCheck,
    current: i64,
) -> Result<Outcome> {
    let now = check.server_now_ms;
    let target = Target::new(prefix, &run.job, run.strategy, check);
    // The server's clock now (the opening's may be old: a replica waited for room, or woke
    // early), read only for a job with a jitter.
    let clock = if run.jitter.is_zero() {
        now
    } else {
        conn.server_ms().await.unwrap_or(now).max(now)
    };
    let delay = jitter_wait(&run.job, current, run.jitter, clock);
    if !delay.is_zero() {
        let since = std::time::SystemTime::now();
        tokio::time::sleep(delay).await;
        if let Some(trace) = run_trace(prefix, run, current) {
            trace.wait("jitter", since, Vec::new());
        }
    }
    let keys = target.lease_keys();
    let old = lineage::old_keys(prefix, run, check);

    // Reads and skip records, all idempotent: retried through a stall as a claim is.
    let plan = crate::runner::retrying(conn, async |conn| {
        plan_catch_up(conn, run, (&keys, &old), current, now).await
    })
    .await?;
    // Missed runs, oldest first, each in turn: a host that finds one held stands by for it (its
    // backup) and one whose older run is still in progress waits for it (`run_in_turn`), so the
    // hosts of a fleet coming back go through them together, each once, one at a time.
    let mut caught_up = Vec::new();
    for &slot in plan.to_run.iter().filter(|s| **s != current) {
        let report = take_in_turn(conn, prefix, run, check, slot, &mut caught_up).await?;
        caught_up.push(report);
    }
    let (skipped, runs_current) = (plan.skipped, plan.runs_current);

    let report = if runs_current {
        take_in_turn(conn, prefix, run, check, current, &mut caught_up).await?
    } else {
        SlotReport::too_late(&run.job, current)
    };
    let exit_status = exit_status(run, &caught_up, &report);
    notify_failures(prefix, run, caught_up.iter().chain([&report])).await;
    Ok(Outcome {
        skipped,
        caught_up,
        report,
        exit_status,
    })
}

/// One slot of `run`'s job, in turn ([`run_in_turn`]: behind an older run a host catching up put
/// ahead of it), claimed under the job's old names first when it has any ([`lineage`]): the one
/// way a slot is taken, on time, caught up, or stood by for by a replica that starts while it is
/// in progress. `ahead`: the older runs this host ran first, pushed oldest first.
pub async fn take_in_turn(
    conn: &mut Connection,
    prefix: &str,
    run: &RunSettings,
    check: &StoreCheck,
    slot: i64,
    ahead: &mut Vec<SlotReport>,
) -> Result<SlotReport> {
    if let Some(report) = excluded(conn, prefix, run, check, slot).await? {
        return Ok(report);
    }
    let held = match old_names_first(conn, prefix, run, check, slot, ahead).await? {
        Ok(held) => held,
        Err(report) => return Ok(*report),
    };
    let target = Target::new(prefix, &run.job, run.strategy, check);
    let continues = lineage::continues(&held);
    // A run that holds an old name's claims (a rename under way) is not retried: while its retry
    // waited, the holder of those claims could die and a replica of the old name take them over
    // and run the slot again (the mixed soak, seed 32: "ran under soak after ... soak-g16").
    let retryless;
    let runner = if held.is_empty() || run.runner.retry.is_none() {
        &run.runner
    } else {
        retryless = crate::runner::RunnerOptions {
            retry: None,
            ..run.runner.clone()
        };
        &retryless
    };
    // (An older slot a host catching up put ahead of this one is claimed as its own.)
    // A renamed job's own claims owe no takeover: `run_in_turn` would claim the older slot under
    // the new name alone, past the old names that may have run it (rename::a_new_replica_killed
    // ...: the slot ran to its end under the old name, then again under the new one). Its old
    // names' claims owe it, and take the older slot through `take_in_turn`, old names first.
    let request = |s: i64| -> ClaimRequest {
        let mut req = run.claim.request(s, RunKind::Scheduled);
        req.continues = continues && s == slot;
        if !run.lineage.is_empty() {
            req.owed_within = std::time::Duration::ZERO;
        }
        req
    };
    let taken = loop {
        let taken = run_in_turn(
            conn,
            target,
            &request,
            slot,
            runner,
            check.server_now_ms,
            ahead,
        )
        .await;
        // Refused only because the claim came during a short pause (the slot itself is before
        // it): the old names' claims are held through it, and the slot claimed again after.
        if let Ok(r) = &taken
            && r.outcome == SlotOutcome::Paused
            && !held.is_empty()
            && let Some(wait) = lineage::pause_passes(conn, &target.lease_keys(), run, slot).await
        {
            tokio::time::sleep(wait).await;
            continue;
        }
        break taken;
    };
    // The old names' claims end once the slot is decided (or are handed on when it is not).
    lineage::after_slot(conn, &target.lease_keys(), run, held, &taken).await;
    taken
}

/// The slot's claims under the job's old names ([`lineage::before_slot`]): those held while the
/// job takes the slot, or what became of the slot. An old name's older run whose holder is gone
/// is taken over first (as `run_in_turn` does under the job's own name), then the slot claimed
/// again; `ahead` gets what ran.
///
/// An older slot that comes back owed after this host took it (not run here: a later old name
/// paused over it, its exclusion, --max-late) would be stood behind without end, its old names'
/// claims taken over and handed on each time (the mixed soak, format 1, seed 13: one slot
/// handed over twelve times by one replica, then superseded). The slot's old names then owe it
/// nothing: their claims supersede it, as before owed takeovers, and monitoring counts it lost.
async fn old_names_first(
    conn: &mut Connection,
    prefix: &str,
    run: &RunSettings,
    check: &StoreCheck,
    slot: i64,
    ahead: &mut Vec<SlotReport>,
) -> Result<std::result::Result<Vec<lineage::Held>, Box<SlotReport>>> {
    let mut owing = std::borrow::Cow::Borrowed(run);
    let mut taken = Vec::new();
    loop {
        let older = match lineage::before_slot(conn, prefix, &owing, check, slot).await? {
            lineage::Before::Take(held) => return Ok(Ok(held)),
            lineage::Before::Skip(report) => return Ok(Err(report)),
            lineage::Before::Behind(older) => older,
        };
        if taken.contains(&older) {
            owing.to_mut().claim.owed_within = std::time::Duration::ZERO;
            continue;
        }
        let report = Box::pin(take_in_turn(conn, prefix, run, check, older, ahead)).await?;
        // Still held by another host (waited for, then asked again), or taken here.
        if !matches!(report.outcome, SlotOutcome::Running | SlotOutcome::Overlap) {
            taken.push(older);
        }
        crate::runner::went_ahead(report, ahead).await;
    }
}

/// How far before a fire time a `run` may start and still be for it (a host whose clock runs a
/// little ahead of the server's: cron starts it just before the server's clock reaches the
/// slot). It then waits for the server's clock. Only for schedules whose fire times are at least
/// ten times this apart.
const EARLY: i64 = 1_000;

/// The slot this `run` is for, and how long to wait for it: the schedule's latest fire time at or
/// before the moment cron started this process, by the server's clock
/// ([`StoreCheck::server_ms_at_process_start`]: a server that stalled answers with a clock already
/// past the next fire time, and taking its clock as it answered would attribute this run to the
/// next slot and leave this one to nobody), or the next one when it is less than [`EARLY`] after
/// that moment; or `--slot`.
pub fn current_slot(run: &RunSettings, check: &StoreCheck) -> Result<(i64, Duration)> {
    let now = check.server_now_ms;
    match (run.schedule.as_ref(), run.slot) {
        (Some(s), _) => {
            scheduled_slot(s, check.server_ms_at_process_start(), now).ok_or_else(|| {
                Error::usage(if s.next_after(now).is_none() {
                    // As `cron --check` says it of the same line.
                    crate::schedule::never_fires(s.source())
                } else {
                    format!(
                        "--schedule {:?} has never fired before now\n  hint: its first fire time is still to come; `anarchon next --schedule {:?}` shows it",
                        s.source(),
                        s.source()
                    )
                })
            })
        }
        (None, Some(slot)) => Ok((slot.resolve(now), Duration::ZERO)),
        (None, None) => Err(Error::usage("give --schedule or --slot")),
    }
}

/// [`current_slot`] of a schedule, for a process started at `started` (server ms) that read the
/// server's clock as `now`.
pub fn scheduled_slot(s: &Schedule, started: i64, now: i64) -> Option<(i64, Duration)> {
    let started = started.min(now);
    let latest = s.latest_at_or_before(started);
    if let (Some(next), Some(latest)) = (s.next_after(started), latest)
        && next - started < EARLY
        && started - latest >= 10 * EARLY
    {
        let wait = u64::try_from((next - now).max(0)).unwrap_or(0);
        return Some((next, Duration::from_millis(wait)));
    }
    latest.map(|slot| (slot, Duration::ZERO))
}

/// `--on-failure`: the hook for each attempt this host ran that failed; a hook's own trouble is
/// said on stderr and changes nothing else.
async fn notify_failures(
    prefix: &str,
    run: &RunSettings,
    reports: impl Iterator<Item = &SlotReport>,
) {
    let Some(hook) = &run.on_failure else {
        return;
    };
    for r in reports.filter(|r| crate::runner::notify::failed_here(r)) {
        // The failed attempt's trace context, as its command had it (a scheduled run's).
        let traceparent = r.attempt.map(|attempt| {
            crate::trace::TraceContext::of_attempt(
                prefix,
                &r.job,
                r.slot,
                RunKind::Scheduled,
                attempt,
            )
            .traceparent()
        });
        if let Some(problem) = crate::runner::notify::run_hook(hook, r, traceparent).await {
            crate::errln!("anarchon: {}: {problem}", run.job);
        }
    }
}

/// What `--catch-up` found and decided before anything runs.
struct CatchUpPlan {
    /// The missed runs to run, oldest first (the current slot among them when it is missed).
    to_run: Vec<i64>,
    /// Those the policy does not run, recorded as skipped (each with why).
    skipped: Vec<Skipped>,
    /// Whether the current slot is claimed: on time, or too late but itself a missed run.
    runs_current: bool,
}

/// `--catch-up`: what [`catch_up::decide`] decides from the store (the schedule's runs in the
/// window that no host claimed, and those before it when the hosts were down longer); those it
/// does not run are recorded as skipped here, so that no later claim runs them.
async fn plan_catch_up(
    conn: &mut Connection,
    run: &RunSettings,
    (keys, old): (&LeaseKeys, &[LeaseKeys]),
    current: i64,
    now: i64,
) -> Result<CatchUpPlan> {
    let rule = catch_up::Rule::of(run);
    // A renamed job's past is under all its names (lineage.rs).
    let decision = if old.is_empty() {
        catch_up::decide(&rule, current, now, &mut catch_up::Store { conn, keys }).await?
    } else {
        let mut claims = lineage::Claims {
            conn,
            own: keys,
            old,
        };
        catch_up::decide(&rule, current, now, &mut claims).await?
    };
    let runner = &run.claim.runner;
    let mut skipped = Vec::new();
    for (slot, reason) in &decision.to_skip {
        let outcome = lease::skip(conn, keys, *slot, runner, reason).await?;
        skipped.push(Skipped {
            slot: *slot,
            slot_time: rfc3339(*slot),
            reason: reason.clone(),
            recorded: outcome == lease::SkipOutcome::Skipped,
        });
    }
    Ok(CatchUpPlan {
        runs_current: decision.runs_current(),
        to_run: decision.to_run,
        skipped,
    })
}

/// What one `run` did, slot by slot.
pub struct Outcome {
    pub skipped: Vec<Skipped>,
    pub caught_up: Vec<SlotReport>,
    /// The current slot's.
    pub report: SlotReport,
    pub exit_status: ExitStatus,
}

/// The exclusion window of `run`'s job (`--exclude`, its calendars) that covers `slot`, read in the
/// schedule's zone (UTC without a schedule); None when none does.
pub async fn exclusion_of(
    conn: &mut Connection,
    prefix: &str,
    run: &RunSettings,
    slot: i64,
) -> Result<Option<crate::exclusion::Exclusion>> {
    let windows = run.exclusions(conn, prefix).await?;
    if windows.is_empty() {
        return Ok(None);
    }
    let local = match &run.schedule {
        Some(schedule) => schedule.local(slot).map(|t| t.naive_local()),
        None => chrono::DateTime::from_timestamp_millis(slot).map(|t| t.naive_utc()),
    };
    Ok(local.and_then(|at| crate::exclusion::covering(&windows, at).cloned()))
}

/// A slot in one of the job's exclusion windows (`--exclude`, `--calendar`) is not claimed: it is
/// recorded skipped, with the window's name as the reason (`excluded: <name>`), by every host
/// that comes to it (the first writes the record; the others find it written). Its local time is
/// read in the schedule's zone (UTC without a schedule).
async fn excluded(
    conn: &mut Connection,
    prefix: &str,
    run: &RunSettings,
    check: &StoreCheck,
    slot: i64,
) -> Result<Option<SlotReport>> {
    let Some(window) = exclusion_of(conn, prefix, run, slot).await? else {
        return Ok(None);
    };
    let reason = format!("excluded: {}", window.name);
    let mut report = SlotReport::skipped(&run.job, slot, SlotOutcome::Excluded, None);
    if run.strategy.has_leases() {
        let keys = check.lease_keys(prefix, &run.job);
        let outcome = crate::runner::retrying(conn, async |c| {
            crate::strategy::lease::skip(c, &keys, slot, &run.claim.runner, &reason).await
        })
        .await?;
        report.skip_recorded = Some(outcome == crate::strategy::lease::SkipOutcome::Skipped);
    }
    if let (Some(trace), Some(true)) = (run_trace(prefix, run, slot), report.skip_recorded) {
        trace.slot_ended(
            "skipped",
            crate::trace::spans::Ended::Unset,
            None,
            Some(&reason),
        );
    }
    report.skip_reason = Some(reason);
    Ok(Some(report))
}

/// The spans of `run`'s scheduled `slot` as this host sees them, when tracing is on.
fn run_trace<'a>(
    prefix: &'a str,
    run: &'a RunSettings,
    slot: i64,
) -> Option<crate::trace::RunTrace<'a>> {
    Some(crate::trace::RunTrace {
        exporter: run.runner.trace.as_ref()?,
        prefix,
        job: &run.job,
        slot,
        kind: RunKind::Scheduled,
        runner: &run.claim.runner,
    })
}

/// The exit code of a `run`: a failed catch-up run must not hide behind a successful current one;
/// `--skipped-ok` makes a slot another host ran, runs, overlaps or a pause skipped a success.
fn exit_status(run: &RunSettings, caught_up: &[SlotReport], report: &SlotReport) -> ExitStatus {
    first_failure(caught_up).unwrap_or_else(|| match report.outcome {
        SlotOutcome::Done | SlotOutcome::Running | SlotOutcome::Overlap | SlotOutcome::Paused
            if run.skipped_ok =>
        {
            ExitStatus::OK
        }
        SlotOutcome::Done
        | SlotOutcome::Running
        | SlotOutcome::Overlap
        | SlotOutcome::Paused
        | SlotOutcome::Ran
        | SlotOutcome::TooLate
        | SlotOutcome::Unreplicated
        | SlotOutcome::NoPermit
        | SlotOutcome::Excluded => report.exit_status(),
    })
}

/// The exit code of the first slot this host ran that did not succeed, if any (a failed run must not
/// hide behind later ones that succeeded).
pub fn first_failure(reports: &[SlotReport]) -> Option<ExitStatus> {
    reports
        .iter()
        .filter(|r| r.outcome == SlotOutcome::Ran)
        .map(SlotReport::exit_status)
        .find(|status| !status.is_success())
}

/// The jitter delay of one run: a fraction of `jitter` derived from the job and the slot (FNV-1a),
/// so every host of the job waits the same for the same slot and different jobs spread out.
pub fn jitter_delay(job: &str, slot: i64, jitter: Duration) -> Duration {
    if jitter.is_zero() {
        return Duration::ZERO;
    }
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in job.bytes().chain(slot.to_le_bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let span = u64::try_from(jitter.as_millis()).unwrap_or(u64::MAX);
    Duration::from_millis(hash % span)
}

/// How long a host that takes `slot` at `now` (the server's clock, ms) waits for its jitter: until
/// the slot's claim time, `slot` + [`jitter_delay`] (what `next` shows as CLAIMS AT), and not at
/// all once that has passed. Counted from the slot, not from the start: a run started late (a
/// catch-up, a host back after an outage, `--max-late` hours) would otherwise wait its whole
/// jitter again, past the moment every other host of the fleet claims. Never longer than the
/// delay itself: a slot taken before its time (`run --slot` of a later
/// one, a replica woken early) waits no more than it always did.
pub fn jitter_wait(job: &str, slot: i64, jitter: Duration, now: i64) -> Duration {
    let delay = jitter_delay(job, slot, jitter);
    let claim_at = slot.saturating_add(crate::time::millis(delay));
    Duration::from_millis(u64::try_from(claim_at.saturating_sub(now)).unwrap_or(0)).min(delay)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_jitter_is_waited_for_from_the_slot_not_from_a_late_start() {
        let (job, slot, j) = ("nightly", 1_796_220_300_000, Duration::from_secs(600));
        let delay = crate::time::millis(jitter_delay(job, slot, j));
        assert_eq!(
            jitter_wait(job, slot, j, slot),
            jitter_delay(job, slot, j),
            "started at the slot, the whole delay"
        );
        assert_eq!(
            jitter_wait(job, slot, j, slot + delay / 2),
            Duration::from_millis(u64::try_from(delay - delay / 2).unwrap()),
            "started within it, the rest"
        );
        assert_eq!(
            jitter_wait(job, slot, j, slot + 3 * 3_600_000),
            Duration::ZERO,
            "started hours late, none"
        );
        assert_eq!(
            jitter_wait(job, slot, j, slot - 60_000),
            jitter_delay(job, slot, j),
            "taken before its time, never more than the delay"
        );
        assert_eq!(
            jitter_wait(job, slot, Duration::ZERO, slot - 60_000),
            Duration::ZERO
        );
    }

    #[test]
    fn the_slot_is_the_one_cron_started_the_process_for() {
        let minute = Schedule::parse("* * * * *", "UTC").unwrap();
        let t = 1_796_220_000_000; // a whole minute
        // On time, and answered late by a server that stalled past the next fire time.
        assert_eq!(
            scheduled_slot(&minute, t + 20, t + 25),
            Some((t, Duration::ZERO))
        );
        assert_eq!(
            scheduled_slot(&minute, t + 20, t + 61_000),
            Some((t, Duration::ZERO))
        );
        // Started 300 ms before the fire time (a host clock a little ahead): that slot, after a
        // wait for the server's clock.
        assert_eq!(
            scheduled_slot(&minute, t - 300, t - 290),
            Some((t, Duration::from_millis(290)))
        );
        // Half a minute after: late for this slot, not early for the next.
        assert_eq!(
            scheduled_slot(&minute, t + 30_000, t + 30_001),
            Some((t, Duration::ZERO))
        );
        // A schedule of seconds has no early start: fire times are too close together.
        let seconds = Schedule::parse("*/3 * * * * *", "UTC").unwrap();
        assert_eq!(
            scheduled_slot(&seconds, t + 2_900, t + 2_905),
            Some((t, Duration::ZERO))
        );
    }

    #[test]
    fn jitter_is_the_same_for_a_job_and_slot_and_within_bounds() {
        let j = Duration::from_secs(30);
        let a = jitter_delay("sync", 1_796_220_300_000, j);
        assert_eq!(a, jitter_delay("sync", 1_796_220_300_000, j));
        assert!(a < j);
        assert_eq!(jitter_delay("sync", 1, Duration::ZERO), Duration::ZERO);
        let spread: std::collections::HashSet<Duration> = (0..50)
            .map(|i| jitter_delay(&format!("job{i}"), 1_796_220_300_000, j))
            .collect();
        assert!(spread.len() > 40, "jobs spread out: {}", spread.len());
    }
}
