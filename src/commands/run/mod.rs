//! `anarchon run --job JOB (--schedule CRON | --slot S) -- COMMAND...`: the crontab wrapper.
//!
//! The slot comes from the schedule evaluated at the *server's* clock, so hosts whose clocks
//! disagree still name the same run. Then [`crate::runner::run_slot`] claims it and runs the command.

mod backfill;
pub(crate) mod catch_up;
pub(crate) mod lineage;

use std::io::IsTerminal;
use std::time::Duration;

use serde::Serialize;

use crate::commands::Context;
use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::runner::{SlotOutcome, SlotReport, Target, run_in_turn};
use crate::schedule::Schedule;
use crate::settings::run::RunSettings;
use crate::store::{LeaseKeys, RunKind, StoreCheck, registry};
use crate::strategy::Strategy;
use crate::strategy::claim::ClaimRequest;
use crate::strategy::lease;
use crate::time::rfc3339;

/// How long `run` retries opening the store through connection trouble before it gives up (as a
/// claim is retried: [`crate::runner`]'s `CLAIM_RETRY_FOR`).
const OPEN_RETRY_FOR: Duration = Duration::from_secs(10);

/// `run --json`: one line, the current slot's report plus the caught-up and skipped ones.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct RunSummary<'a> {
    #[serde(flatten)]
    current: &'a SlotReport,
    catch_up: &'a [SlotReport],
    skipped: &'a [Skipped],
    exit_code: i32,
}

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

/// `run` with its settings resolved (from the command line, or a crontab line).
pub async fn execute(run: &RunSettings, ctx: &Context) -> Result<i32> {
    ctx.lease_keys(&run.job)?;
    let (mut conn, check) = open_and_register(ctx, run, run.strategy).await?;
    let (current, early) = current_slot(run, &check)?;
    if !early.is_zero() {
        // Started just before the slot by the server's clock: its run waits for it.
        tokio::time::sleep(early).await;
    }
    if let (Some(b), Some(schedule)) = (run.backfill, run.schedule.as_ref()) {
        let request = |slot: i64| -> ClaimRequest { run.claim.request(slot, RunKind::Scheduled) };
        let backfill = backfill::Backfill {
            target: Target::new(ctx.prefix(), &run.job, run.strategy, &check),
            schedule,
            flags: b,
            opts: &run.runner,
            request: &request,
            now: check.server_now_ms,
        };
        return backfill::execute(&mut conn, ctx, run, backfill).await;
    }
    let outcome = take_slot(&mut conn, ctx.prefix(), run, &check, current).await?;
    print_outcome(run, ctx, &outcome, check.server_now_ms);
    Ok(outcome.exit_code)
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
    let delay = jitter_delay(&run.job, current, run.jitter);
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
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
    let exit_code = exit_code(run, &caught_up, &report);
    notify_failures(run, caught_up.iter().chain([&report])).await;
    Ok(Outcome {
        skipped,
        caught_up,
        report,
        exit_code,
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
    let held = match lineage::before_slot(conn, prefix, run, check, slot).await? {
        lineage::Before::Take(held) => held,
        lineage::Before::Skip(report) => return Ok(*report),
    };
    let target = Target::new(prefix, &run.job, run.strategy, check);
    let request = |slot: i64| -> ClaimRequest { run.claim.request(slot, RunKind::Scheduled) };
    let taken = loop {
        let taken = run_in_turn(
            conn,
            target,
            &request,
            slot,
            &run.runner,
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
fn current_slot(run: &RunSettings, check: &StoreCheck) -> Result<(i64, Duration)> {
    let now = check.server_now_ms;
    match (run.schedule.as_ref(), run.slot) {
        (Some(s), _) => {
            scheduled_slot(s, check.server_ms_at_process_start(), now).ok_or_else(|| {
                Error::usage(format!(
                    "--schedule {:?} has never fired before now",
                    s.source()
                ))
            })
        }
        (None, Some(slot)) => Ok((slot.resolve(now), Duration::ZERO)),
        (None, None) => Err(Error::usage("give --schedule or --slot")),
    }
}

/// [`current_slot`] of a schedule, for a process started at `started` (server ms) that read the
/// server's clock as `now`.
pub(crate) fn scheduled_slot(s: &Schedule, started: i64, now: i64) -> Option<(i64, Duration)> {
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
async fn notify_failures(run: &RunSettings, reports: impl Iterator<Item = &SlotReport>) {
    let Some(hook) = &run.on_failure else {
        return;
    };
    for r in reports.filter(|r| crate::runner::notify::failed_here(r)) {
        if let Some(problem) = crate::runner::notify::run_hook(hook, r).await {
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
    pub exit_code: i32,
}

/// What a run did: the JSON summary line, or on a terminal a line per missed run skipped and per
/// slot (nothing with `--quiet`, or when stderr is a file: the command's output is the log there).
fn print_outcome(run: &RunSettings, ctx: &Context, outcome: &Outcome, now: i64) {
    let Outcome {
        skipped,
        caught_up,
        report,
        exit_code,
    } = outcome;
    let exit_code = *exit_code;
    if ctx.out.json {
        let summary = RunSummary {
            current: report,
            catch_up: caught_up,
            skipped,
            exit_code,
        };
        ctx.out.print_json_line(&summary);
    } else if !run.quiet() && std::io::stderr().is_terminal() {
        // A line per reason: those older than the window, then the policy's.
        let mut rest = &skipped[..];
        while let Some(first) = rest.first() {
            let n = rest.iter().take_while(|s| s.reason == first.reason).count();
            let last = &rest[n - 1];
            crate::errln!(
                "anarchon: {}: {} missed run(s) from {} to {} not run ({}); recorded as skipped",
                run.job,
                n,
                rfc3339(first.slot),
                rfc3339(last.slot),
                first.reason
            );
            rest = &rest[n..];
        }
        for r in caught_up.iter().chain(std::iter::once(report)) {
            crate::errln!("anarchon: {}", describe(r, now, run.max_late));
        }
    }
}

/// Connects, checks the format key and records the job in the registry when due
/// ([`check_and_register`]), retrying through a server that does not answer for a moment.
async fn open_and_register(
    ctx: &Context,
    run: &RunSettings,
    strategy: Strategy,
) -> Result<(Connection, StoreCheck)> {
    ctx.lease_keys(&run.job)?;
    // A server that does not answer for a moment (a stall: CLIENT PAUSE, a slow fork, a failover;
    // a network hiccup) must not cost the slot: every host of a fleet would give up at once, and
    // nobody would run or record it. The opening is retried as a claim is; the slot is still
    // the one cron started this process for (`current_slot`).
    // A server that refuses for a reason that passes (full: OOM under noeviction; BUSY, LOADING)
    // is retried until `--max-late` after the slot, which is about when cron started this process:
    // a full Redis is an outage too, and giving up at once lost the slot on every host.
    let started = tokio::time::Instant::now();
    let give_up = started + OPEN_RETRY_FOR;
    let refused_until = started + OPEN_RETRY_FOR.max(run.max_late);
    let mut backoff = Duration::from_millis(100);
    let mut said = false;
    loop {
        let opened = async {
            let mut conn = ctx.connect_for(strategy).await?;
            let check = check_and_register(&mut conn, ctx.prefix(), run, true).await?;
            Ok::<_, crate::error::Error>((conn, check))
        };
        match opened.await {
            Ok(opened) => return Ok(opened),
            Err(e)
                if (e.is_transient() && tokio::time::Instant::now() < give_up)
                    || (e.can_pass() && tokio::time::Instant::now() < refused_until) =>
            {
                if !said && !run.quiet() && std::io::stderr().is_terminal() {
                    let until = if e.is_transient() {
                        give_up
                    } else {
                        refused_until
                    };
                    crate::errln!(
                        "anarchon: {}; retrying for up to {}",
                        e.with_hint(),
                        humantime::format_duration(until - started)
                    );
                    said = true;
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(1));
            }
            // Refused past --max-late: the slot is missed, and the error says so.
            Err(e) if e.can_pass() && run.schedule.is_some() => {
                return Err(e.missed("cron started this run for", run.max_late));
            }
            Err(e) => return Err(e),
        }
    }
}

/// The reads sent with the format check when a run opens the store ([`check_and_register`]), and
/// the check of their replies that refuses keys of another type. `eviction`: the server's
/// eviction policy is read too.
fn opening_reads<'a>(
    strategy: Strategy,
    registration: &registry::Registration<'_>,
    keys: &'a LeaseKeys,
    eviction: bool,
) -> (
    Vec<redis::Cmd>,
    impl FnOnce(&[redis::Value]) -> Result<()> + 'a,
) {
    let mut reads = vec![registration.read()];
    if eviction {
        reads.push(crate::server::eviction_policy_read());
    }
    let types_from = reads.len();
    if strategy.has_leases() {
        reads.extend(keys.type_reads());
    }
    let refuse = move |replies: &[redis::Value]| match replies.get(types_from..) {
        Some(types) if strategy.has_leases() => keys.refuse_other_types(types),
        _ => Ok(()),
    };
    (reads, refuse)
}

/// The registry's reply among the opening reads; a warning about the eviction policy, when it was
/// read and evicts.
fn opening_read_back(reads: Vec<redis::Value>, eviction: bool) -> Option<redis::Value> {
    let mut reads = reads.into_iter();
    let registry_read = reads.next();
    if eviction
        && let Some(warning) = reads
            .next()
            .as_ref()
            .and_then(crate::server::eviction_warning)
    {
        crate::errln!("anarchon: {warning}");
    }
    registry_read
}

/// What `run` does when it opens the store, on a connection already open: the format check (the
/// server's clock with it); monitoring's record of the job (the registry), the server's eviction
/// policy (with `eviction`: each `run`, and `anarchon cron` once, since it opens the store at
/// every slot and CONFIG GET is no cheap read) and the types of the job's keys are read in the same
/// round trip, so most runs add no round trip. A job whose keys hold another type than its scripts
/// write is refused there, before the format key, the registry or a claim writes anything and
/// before the command runs (a `:runs` of another type was found only when the finish failed,
/// after the command had run). The registry is written when something changed
/// ([`register_if_due`]; not for a backfill: an operator's one-off is not the crontab line whose
/// settings monitoring reads). `anarchon cron` does this at each slot it takes, on its one
/// connection.
pub async fn check_and_register(
    conn: &mut Connection,
    prefix: &str,
    run: &RunSettings,
    eviction: bool,
) -> Result<StoreCheck> {
    let registration = registry::Registration::new(
        prefix,
        &run.job,
        &run.registry,
        registry::host_of(&run.claim.runner),
        &run.lineage,
    );
    let keys = LeaseKeys::new(prefix, &run.job);
    let (reads, refuse) = opening_reads(run.strategy, &registration, &keys, eviction);
    let (check, reads) =
        crate::store::format::check_for_write_and_read(conn, prefix, &reads, refuse).await?;
    let registry_read = opening_read_back(reads, eviction);
    if run.backfill.is_none() {
        register_if_due(conn, &registration, registry_read, check.server_now_ms).await;
    }
    Ok(check)
}

/// Writes the registry (a script) only when something changed since `registry_read`. A failure
/// here (a registry key of another type) must not keep the job from running.
async fn register_if_due(
    conn: &mut Connection,
    registration: &registry::Registration<'_>,
    registry_read: Option<redis::Value>,
    now: i64,
) {
    if registration.is_due(registry_read, now)
        && let Err(e) = registration.write(conn).await
    {
        crate::errln!("anarchon: warning: the job registry was not updated: {e}");
    }
}

/// The exit code of a `run`: a failed catch-up run must not hide behind a successful current one;
/// `--skipped-ok` makes a slot another host ran, runs, overlaps or a pause skipped a success.
fn exit_code(run: &RunSettings, caught_up: &[SlotReport], report: &SlotReport) -> i32 {
    first_failure(caught_up).unwrap_or_else(|| match report.outcome {
        SlotOutcome::Done | SlotOutcome::Running | SlotOutcome::Overlap | SlotOutcome::Paused
            if run.skipped_ok =>
        {
            0
        }
        SlotOutcome::Done
        | SlotOutcome::Running
        | SlotOutcome::Overlap
        | SlotOutcome::Paused
        | SlotOutcome::Ran
        | SlotOutcome::TooLate
        | SlotOutcome::Unreplicated => report.exit_code(),
    })
}

/// The exit code of the first slot this host ran that did not succeed, if any (a failed run must not
/// hide behind later ones that succeeded).
fn first_failure(reports: &[SlotReport]) -> Option<i32> {
    reports
        .iter()
        .filter(|r| r.outcome == SlotOutcome::Ran)
        .map(SlotReport::exit_code)
        .find(|code| *code != 0)
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

/// One line about a slot, for a person at a terminal, with the next step when it was not run.
pub fn describe(r: &SlotReport, now: i64, max_late: Duration) -> String {
    let at = format!("{} @ {}", r.job, rfc3339(r.slot));
    match r.outcome {
        SlotOutcome::Ran => format!(
            "{at}: {} as attempt {}{}{} (exit {})",
            r.status,
            r.attempt.unwrap_or(1),
            if r.backup {
                " after taking over as backup"
            } else {
                ""
            },
            waited_for_older(r),
            r.exit_code()
        ),
        SlotOutcome::Running => format!(
            "{at}: held by {} (attempt {}); not run here (`anarchon inspect {}` shows it)",
            r.runner,
            r.attempt.unwrap_or(0),
            r.job
        ),
        // Decided under an old name of the job (`lineage`): ran or skipped there.
        SlotOutcome::Done if r.skip_reason.is_some() => format!(
            "{at}: not run here ({}){}",
            r.skip_reason.as_deref().unwrap_or_default(),
            if r.skip_recorded == Some(true) {
                "; recorded as skipped"
            } else {
                ""
            }
        ),
        SlotOutcome::Done => format!(
            "{at}: already {}; not run here (`anarchon logs {}` shows how it ended)",
            r.status, r.job
        ),
        SlotOutcome::Overlap => format!(
            "{at}: skipped{} ({}; --overlap allow runs it anyway; `anarchon release {}` ends a stuck one)",
            if r.skip_recorded == Some(true) {
                ", recorded as skipped"
            } else {
                ""
            },
            r.skip_reason
                .clone()
                .unwrap_or_else(|| format!("an older run is still held by {}", r.runner)),
            r.job
        ),
        SlotOutcome::Unreplicated => format!(
            "{at}: won, but too few replicas acknowledged the claim; the command did not start and the run is recorded failed (--if-unreplicated run starts it anyway)"
        ),
        SlotOutcome::Paused => match &r.skip_reason {
            Some(why) => format!("{at}: the job is paused ({why}); skipped"),
            None => format!(
                "{at}: the job is paused; skipped (`anarchon inspect {}` says by whom and why)",
                r.job
            ),
        },
        SlotOutcome::TooLate => format!(
            "{at}: {}s late, more than --max-late {}; skipped",
            (now - r.slot) / 1000,
            humantime::format_duration(max_late)
        ),
    }
}

/// ", after replacing the run of X" / ", after waiting 12s for the run of X" (`--overlap`).
fn waited_for_older(r: &SlotReport) -> String {
    use crate::runner::overlap::WaitedAs;
    let Some(w) = &r.overlap else {
        return String::new();
    };
    let older = w.older_slot.map_or("an older run".to_string(), |s| {
        format!("the run of {} ({})", rfc3339(s), w.older_runner)
    });
    let waited = crate::time::humanize(w.waited_ms);
    match w.policy {
        WaitedAs::Replace => format!(", after stopping {older} ({waited})"),
        WaitedAs::Buffer | WaitedAs::Wait => format!(", after waiting {waited} for {older}"),
    }
}

/// The JSON Schema of this command's `--json` output (docs/schemas/, checked by tests/it/schemas.rs).
pub(crate) fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![
        (
            "run",
            crate::commands::output_schema::<RunSummary<'static>>(),
        ),
        (
            "run-backfill",
            crate::commands::output_schema::<backfill::Summary<'static>>(),
        ),
        ("run-now", crate::commands::output_schema::<SlotReport>()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

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
