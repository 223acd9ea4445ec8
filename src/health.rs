//! Whether a job is healthy, from what the store holds: its schedule (the job registry), its
//! recent runs, its runs in progress and its pause, judged by the server's clock. `list`,
//! `inspect`, `check` and `metrics` all ask here, so they agree.
//!
//! A scheduled slot is **due** once its grace has passed (`--max-late` + `--jitter` + 1 minute
//! unless told otherwise: after that no host will claim it any more). A due slot is **claimed**
//! when it has a run in progress or any result (a skipped slot counts: a policy decided), or when
//! a pause covered it. The state, first that applies:
//!
//! | state | when |
//! |---|---|
//! | `renamed` | the job runs under another name now (`renamed_to`): its runs count there |
//! | `retired` | an operator retired it (`anarchon forget`) and no run of it was claimed since |
//! | `paused` | the job is paused now |
//! | `unknown` | no schedule is known (never run by a `run --schedule` that records it), and no run is in progress |
//! | `missed` | a due slot was never claimed, and it is not only the newest one |
//! | `expired` | a run in progress whose lease ended over [`EXPIRED_AFTER`] ago, and nobody took it over: its holder died with no backup standing by, and nothing will finish it |
//! | `late` | the newest due slot has no claim |
//! | `running` | a run is in progress |
//! | `failing` | the newest run failed (`failed_in_a_row` says how many in a row) |
//! | `ok` | otherwise |

use std::time::Duration;

use serde::Serialize;

use crate::schedule::Schedule;
use crate::store::pause::Pause;
use crate::store::read::ResultEntry;
use crate::store::state::RunState;
use crate::store::view::JobView;
pub use crate::store::view::RECENT_RESULTS;
use crate::time::millis;

/// How many of the newest due slots are looked at for `missed`.
pub const DUE_LOOKBACK: usize = 10;

/// The most due slots `check --window` looks at (a guard against `* * * * * *` over weeks).
pub const WINDOW_MAX_SLOTS: usize = 100_000;

/// How long after its lease ended a run nobody took over counts as `expired`: backups standing by
/// re-claim within about a second of the lease's end, and a later claim of any slot ends a run
/// abandoned for good, so a run still in progress this long after is one nobody will finish.
pub const EXPIRED_AFTER: Duration = Duration::from_secs(10);

/// The two ways out of an `expired` run (its holder died with no backup standing by), in the
/// words `check` and `inspect` both give: end it, or run the slot again, which takes it over.
pub fn expired_way_out(job: &str, slot: i64) -> String {
    format!(
        "`anarchon release {job} --slot {slot}` records it interrupted, or run the slot again (`anarchon run --job {job} --slot {slot} -- ...` takes it over)"
    )
}

/// Added to a job's `--max-late` + `--jitter` for the default grace.
pub const GRACE_SLACK: Duration = Duration::from_secs(60);

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum HealthState {
    Ok,
    Renamed,
    Retired,
    Running,
    Paused,
    Unknown,
    Failing,
    Late,
    Expired,
    Missed,
}

impl HealthState {
    pub fn as_str(self) -> &'static str {
        match self {
            HealthState::Ok => "ok",
            HealthState::Renamed => "renamed",
            HealthState::Retired => "retired",
            HealthState::Running => "running",
            HealthState::Paused => "paused",
            HealthState::Unknown => "unknown",
            HealthState::Failing => "failing",
            HealthState::Late => "late",
            HealthState::Expired => "expired",
            HealthState::Missed => "missed",
        }
    }

    /// Whether a person should look (`list --unhealthy`).
    pub fn needs_a_person(self) -> bool {
        matches!(
            self,
            HealthState::Failing | HealthState::Late | HealthState::Expired | HealthState::Missed
        )
    }
}

/// What a health judgement reads.
pub struct Inputs<'a> {
    /// The server's clock.
    pub now: i64,
    pub schedule: Option<&'a Schedule>,
    pub grace: Duration,
    /// When the store first saw the job: no slot before it is due.
    pub first_seen: Option<i64>,
    /// The newest results, newest slot first ([`RECENT_RESULTS`] at most).
    pub recent: &'a [ResultEntry],
    /// Whether `recent` is the whole history (fewer came back than were asked for).
    pub recent_is_all: bool,
    pub in_progress: &'a [RunState],
    /// The job's pauses as recorded (the newest of each of its names: a pause of any name
    /// pauses a renamed job); then, for slots before now only, the pauses before them that its
    /// events tell of (over a window: [`crate::store::pause::history`]).
    pub pauses: &'a [&'a Pause],
    pub past_pauses: &'a [&'a Pause],
    /// Look at every due slot from this time (server ms; `check --window`) instead of the newest
    /// [`DUE_LOOKBACK`]. `recent` must then hold every result from it on.
    pub window_start: Option<i64>,
}

impl Inputs<'_> {
    /// Whether a pause covers `at` (now, or a slot).
    fn paused(&self, at: i64) -> bool {
        self.pauses.iter().any(|p| p.is_paused(at))
    }

    /// Whether a pause, now or past, covered the slot at `slot`.
    fn paused_over(&self, slot: i64) -> bool {
        self.paused(slot) || self.past_pauses.iter().any(|p| p.is_paused(slot))
    }
}

/// A job's health.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Health {
    pub state: HealthState,
    /// The next slot of the schedule after now.
    pub next_due: Option<i64>,
    /// The newest slot whose grace has passed.
    pub last_due: Option<i64>,
    /// When the newest finished run ended, and the newest failed or interrupted one.
    pub last_success: Option<i64>,
    pub last_failure: Option<i64>,
    /// The newest ended run's duration and exit code (when `run` recorded them).
    pub last_duration_ms: Option<i64>,
    pub last_exit_code: Option<i64>,
    /// How many of the newest ended runs failed, in a row.
    pub failed_in_a_row: u32,
    /// Due slots nobody claimed, among the newest [`DUE_LOOKBACK`], oldest first.
    pub missed_slots: Vec<i64>,
    /// The oldest due slot nobody claimed since the newest one decided (uncapped, unlike
    /// `missed_slots`): where a job that stopped stopped.
    pub oldest_missed: Option<i64>,
    /// Slots that were claimed but never ran to an end: every attempt ended `interrupted` with no
    /// policy or operator behind it (its holder died, its lease was lost, its attempts ran out, a
    /// newer run superseded it, it was handed over and never taken), oldest first; among the due
    /// slots `missed_slots` looks at, and any slot of the schedule whose run ended so before it
    /// was due (nothing more can happen to it). Lost runs, as missed ones are.
    pub lost_slots: Vec<i64>,
    /// Runs in progress whose lease ended over [`EXPIRED_AFTER`] ago with nobody to take them over,
    /// oldest first: lost unless an operator acts (`anarchon release`, or run the slot again).
    pub expired_slots: Vec<i64>,
    /// How long ago the oldest of them lost its lease, in ms (0 when none).
    pub expired_for_ms: i64,
    /// How long past its slot the oldest undecided due slot is (0 when none), in ms: the age of
    /// the first slot missed since the last one decided, uncapped.
    pub late_ms: i64,
    /// The same in whole seconds (as the Prometheus gauge `anarchon_job_late_seconds`).
    pub late_seconds: i64,
    /// The name the job runs under now (state `renamed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub renamed_to: Option<String>,
    /// Who retired the job, when and why (state `retired`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retired: Option<crate::store::registry::Retired>,
    /// How long after its slot a run may start before it counts late, in ms (--max-late +
    /// --jitter + 60 s by default; `check --grace` sets it).
    pub grace_ms: i64,
}

/// The default grace of a job: its `--max-late` + `--jitter` + [`GRACE_SLACK`].
pub fn default_grace(max_late_ms: i64, jitter_ms: i64) -> Duration {
    Duration::from_millis(u64::try_from(max_late_ms.max(0) + jitter_ms.max(0)).unwrap_or(0))
        + GRACE_SLACK
}

fn is_failure(status: &str) -> bool {
    matches!(status, "failed" | "interrupted")
}

/// A failed or interrupted run, but not one `run --overlap replace` stopped on purpose for a newer
/// slot ([`ResultEntry::was_replaced`]): the policy did what it was asked; nor one a deploy handed
/// over to a replica standing by ([`ResultEntry::was_handed_over`]): planned, not a failure.
fn failed(r: &ResultEntry) -> bool {
    is_failure(&r.status) && !r.was_replaced() && !r.was_handed_over()
}

/// Why a slot of a job's schedule has no run, as health judges it (`timeline` draws these).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum NoRun {
    /// Due (its grace passed) and never claimed: one of `missed_slots`, a lost run.
    Missed,
    /// A pause covered it (the job's pause, or a past one its events tell of): nothing was due.
    Paused,
    /// Its grace has not passed: a host may still claim it.
    Pending,
}

impl NoRun {
    pub fn as_str(self) -> &'static str {
        match self {
            NoRun::Missed => "missed",
            NoRun::Paused => "paused",
            NoRun::Pending => "pending",
        }
    }
}

/// A slot of a job's schedule with no run, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotWithoutRun {
    pub slot: i64,
    pub why: NoRun,
    /// The pause that covered it (`paused`).
    pub pause: Option<Pause>,
}

/// Why `slot` has no run, judged at `i.now` with the slots up to `due_until` due: None when it
/// has one (a result, a run in progress) or is older than the results read (`oldest_known`, when
/// they are not all: not known to be missed).
fn no_run(i: &Inputs, oldest_known: Option<i64>, slot: i64, due_until: i64) -> Option<NoRun> {
    let has_run =
        i.recent.iter().any(|r| r.slot == slot) || i.in_progress.iter().any(|r| r.slot == slot);
    let unknown = !i.recent_is_all && oldest_known.is_some_and(|o| slot < o);
    if has_run || unknown {
        None
    } else if i.paused_over(slot) {
        Some(NoRun::Paused)
    } else if slot <= due_until {
        Some(NoRun::Missed)
    } else {
        Some(NoRun::Pending)
    }
}

/// Every slot of the schedule from `i.window_start` (and not before the job was first seen) to
/// `to` (not after now) with no run, oldest first, and why: the slots `judge` over the same
/// inputs lists in `missed_slots` are the `missed` ones here, by the same rule ([`no_run`]).
pub fn slots_without_a_run(i: &Inputs, to: i64) -> Vec<SlotWithoutRun> {
    let Some(schedule) = i.schedule else {
        return Vec::new();
    };
    let since = i
        .first_seen
        .unwrap_or(i64::MAX)
        .max(i.window_start.unwrap_or(i64::MIN));
    let to = to.min(i.now);
    if since > to {
        return Vec::new();
    }
    let due_until = i.now - millis(i.grace);
    let oldest_known = i.recent.iter().map(|r| r.slot).min();
    schedule
        .newest_between(since - 1, to, WINDOW_MAX_SLOTS)
        .into_iter()
        .filter_map(|slot| {
            let why = no_run(i, oldest_known, slot, due_until)?;
            let pause = (why == NoRun::Paused)
                .then(|| {
                    i.pauses
                        .iter()
                        .chain(i.past_pauses)
                        .find(|p| p.is_paused(slot))
                        .map(|p| (*p).clone())
                })
                .flatten();
            Some(SlotWithoutRun { slot, why, pause })
        })
        .collect()
}

/// Judges one job (see the module doc).
pub fn judge(i: &Inputs) -> Health {
    let ended = ended_runs(i);
    let grace_ms = millis(i.grace);
    let due = due_runs(i, grace_ms);
    let (expired_slots, expired_for_ms) = expired_runs(i);
    let late_seconds = due.late_ms / 1000;
    let running = i.in_progress.iter().any(|r| r.lease_end > i.now);
    let state = state_of(
        i,
        &due.missed_slots,
        &due.lost_slots,
        &expired_slots,
        due.last_due,
        running,
        ended.failed_in_a_row,
    );
    Health {
        state,
        next_due: due.next_due,
        last_due: due.last_due,
        last_success: ended.last_success,
        last_failure: ended.last_failure,
        last_duration_ms: ended.last_duration_ms,
        last_exit_code: ended.last_exit_code,
        failed_in_a_row: ended.failed_in_a_row,
        missed_slots: due.missed_slots,
        oldest_missed: due.oldest_missed,
        lost_slots: due.lost_slots,
        expired_slots,
        expired_for_ms,
        late_ms: due.late_ms,
        late_seconds,
        renamed_to: None,
        retired: None,
        grace_ms,
    }
}

/// What the ended runs say: the newest success and failure, the newest run's duration and exit
/// code, and how many failed in a row.
struct Ended {
    last_success: Option<i64>,
    last_failure: Option<i64>,
    last_duration_ms: Option<i64>,
    last_exit_code: Option<i64>,
    failed_in_a_row: u32,
}

/// Reads the ended runs of a job's recent results.
fn ended_runs(i: &Inputs) -> Ended {
    // A slot whose last attempt failed and waits for its retry has not ended (`--retries`): it
    // fails only when its retries are spent.
    let ended: Vec<&ResultEntry> = final_attempts(i.recent)
        .into_iter()
        .filter(|r| !r.was_retried(i.recent, i.in_progress))
        .collect();
    let failed_in_a_row = ended.iter().take_while(|r| failed(r)).count() as u32;
    let newest_ended_at = |pred: &dyn Fn(&ResultEntry) -> bool| {
        i.recent
            .iter()
            .filter(|r| pred(r))
            .filter_map(|r| r.ended_at)
            .max()
    };
    let last_success = newest_ended_at(&|r| r.status == "finished");
    let last_failure = newest_ended_at(&failed);
    let (last_duration_ms, last_exit_code) = ended.first().map_or((None, None), |r| {
        (
            r.result.get("duration_ms").and_then(|v| v.as_i64()),
            r.result.get("exit_code").and_then(|v| v.as_i64()),
        )
    });
    Ended {
        last_success,
        last_failure,
        last_duration_ms,
        last_exit_code,
        failed_in_a_row,
    }
}

/// What the due slots say: the next and the newest due, the missed ones, the oldest missed,
/// the lost ones, and how late the job is.
struct Due {
    next_due: Option<i64>,
    last_due: Option<i64>,
    missed_slots: Vec<i64>,
    oldest_missed: Option<i64>,
    lost_slots: Vec<i64>,
    late_ms: i64,
}

/// Judges the slots due by now, less the grace.
fn due_runs(i: &Inputs, grace_ms: i64) -> Due {
    let due_until = i.now - grace_ms;
    let (next_due, due) = due_slots(i, due_until);
    let oldest_known = i.recent.iter().map(|r| r.slot).min();
    // Claimed, or decided otherwise (a pause, or not known): every due slot but a missed one.
    let claimed = |slot: i64| no_run(i, oldest_known, slot, due_until) != Some(NoRun::Missed);
    let missed_slots: Vec<i64> = due.iter().copied().filter(|s| !claimed(*s)).collect();
    // Lost among the due slots, and sooner: a slot of the schedule whose run has ended without
    // ever running to its end (its attempts spent, handed over again and again, superseded) is
    // lost at once, whatever its grace says; nothing more can happen to it, and a monitor that
    // waited for the grace called it OK meanwhile (a hand-over storm, issue 61 item 4).
    let ended_lost_early = i
        .schedule
        .map(|s| s.newest_between(due_until, i.now, DUE_LOOKBACK))
        .unwrap_or_default()
        .into_iter()
        .filter(|slot| i.recent.iter().any(|r| r.slot == *slot));
    let mut lost_slots: Vec<i64> = due
        .iter()
        .copied()
        .chain(ended_lost_early)
        .filter(|s| never_ran_to_an_end(i, *s))
        .collect();
    lost_slots.sort_unstable();
    lost_slots.dedup();
    let last_due = due.last().copied();
    let oldest_missed = match (i.schedule, last_due) {
        (Some(s), Some(newest_due)) if !claimed(newest_due) => oldest_undecided(s, i, due_until),
        _ => None,
    }
    .into_iter()
    .chain(missed_slots.first().copied())
    .min();
    let late_ms = match (i.schedule, last_due) {
        (Some(_), Some(newest_due)) if !claimed(newest_due) => {
            oldest_missed.map_or(0, |slot| (i.now - slot).max(0))
        }
        _ => 0,
    };
    Due {
        next_due,
        last_due,
        missed_slots,
        oldest_missed,
        lost_slots,
        late_ms,
    }
}

/// The runs in progress whose lease expired over [`EXPIRED_AFTER`] ago: their slots, and how
/// long the oldest lease has been expired.
fn expired_runs(i: &Inputs) -> (Vec<i64>, i64) {
    let expired_before = i.now - millis(EXPIRED_AFTER);
    let expired: Vec<&RunState> = i
        .in_progress
        .iter()
        .filter(|r| r.lease_end <= expired_before)
        .collect();
    let mut expired_slots: Vec<i64> = expired.iter().map(|r| r.slot).collect();
    expired_slots.sort_unstable();
    let expired_for_ms = expired
        .iter()
        .map(|r| r.lease_end)
        .min()
        .map_or(0, |end| i.now - end);
    (expired_slots, expired_for_ms)
}

impl Health {
    /// A job judged elsewhere or not at all (renamed, retired): no slot of it is missed, lost or
    /// expired here.
    fn not_judged(&mut self) {
        self.missed_slots.clear();
        self.lost_slots.clear();
        self.expired_slots.clear();
        (self.oldest_missed, self.late_ms, self.late_seconds) = (None, 0, 0);
        self.expired_for_ms = 0;
        // No run of it is expected here: no next one either (a retired job showed a NEXT time).
        self.next_due = None;
    }
}

/// Whether `slot` was claimed but never ran to an end: it has results, every one an attempt that
/// ended `interrupted` without a policy or an operator behind it (`--overlap replace`, `anarchon
/// release`), and it is not in progress. Such a run is lost as surely as one never claimed.
///
/// A run a newer one superseded (`superseded_by`: its lease had lapsed with nobody to take it
/// over, and under `--overlap forbid` the newer slot's claim ended it) is lost too: nobody decided
/// to drop it, its command never ran to an end, and the attempts it had left were never given (a
/// fleet back after the next fire time, killed two seconds into a slot, called that OK). Nor do
/// hand-overs excuse a slot: one whose every attempt was handed over never ran either.
///
/// A renamed job's newer name that decided the slot from an old name's run records a skip, "ran
/// as OLD, its old name (...)": that skip defers to the old name's attempts, which decide (when
/// every one of them died the slot is lost, though a skip stands beside them: `check` called such
/// a slot OK, the soak's checker found, format 1, seed 13). A skip for a reason of its own (an
/// overlap, a pause, "skipped under OLD") decides the slot.
///
/// A failed attempt given a retry (`--retries`: its result says when the retry was due) is no
/// end of the run either: the retry is. A run whose retry was then interrupted, or superseded
/// before it ran, never ran to an end (the soak's checker counted such a slot lost while `check`
/// called it OK: format 1, seed 13, run hosts, once superseded runs were counted lost).
fn never_ran_to_an_end(i: &Inputs, slot: i64) -> bool {
    let mut attempts = i
        .recent
        .iter()
        .filter(|r| r.slot == slot && !defers_to_an_old_name(r))
        .peekable();
    attempts.peek().is_some()
        && !i.in_progress.iter().any(|r| r.slot == slot)
        && attempts.all(|r| {
            (r.status == "interrupted"
                && ["replaced_by", "released_by"]
                    .iter()
                    .all(|why| r.result.get(why).is_none()))
                || r.retry_due().is_some()
        })
}

/// A renamed job's skip "ran as OLD, its old name (...)" ([`never_ran_to_an_end`]), as the new
/// name recorded it or as the old name's hand-over says (`{"handed_to", "skipped"}`, read as a
/// skip with that reason by [`JobRuns::of`]).
fn defers_to_an_old_name(r: &ResultEntry) -> bool {
    let reason = ["reason", "skipped"]
        .iter()
        .find_map(|field| r.result.get(*field).and_then(|v| v.as_str()));
    r.status == "skipped" && reason.is_some_and(|why| why.starts_with("ran as "))
}

/// Ended runs, newest first, a slot's final attempt only; skipped runs did not run.
fn final_attempts(recent: &[ResultEntry]) -> Vec<&ResultEntry> {
    let mut ended: Vec<&ResultEntry> = Vec::new();
    for r in recent {
        if r.status == "skipped" {
            continue;
        }
        match ended.last() {
            Some(last) if last.slot == r.slot => {
                if r.attempt > last.attempt {
                    *ended.last_mut().unwrap() = r;
                }
            }
            _ => ended.push(r),
        }
    }
    ended
}

/// The schedule's next slot after now, and its slots due by `due_until` since the job was first
/// seen (the newest [`DUE_LOOKBACK`]); none without a schedule.
fn due_slots(i: &Inputs, due_until: i64) -> (Option<i64>, Vec<i64>) {
    let Some(s) = i.schedule else {
        return (None, Vec::new());
    };
    let since = i.first_seen.unwrap_or(i64::MAX);
    let (since, lookback) = match i.window_start {
        Some(start) => (since.max(start), WINDOW_MAX_SLOTS),
        None => (since, DUE_LOOKBACK),
    };
    let due = if since <= due_until {
        s.newest_between(since - 1, due_until, lookback)
    } else {
        Vec::new()
    };
    (s.next_after(i.now), due)
}

/// The verdict, in order of what an operator must hear first: paused, missed (a due slot never
/// claimed, not only the newest, or any lost: claimed but never run to an end), expired (a run
/// nobody will finish, with or without a schedule), then (without a schedule) running or unknown,
/// then late, running, failing, ok.
fn state_of(
    i: &Inputs,
    missed_slots: &[i64],
    lost_slots: &[i64],
    expired_slots: &[i64],
    last_due: Option<i64>,
    running: bool,
    failed_in_a_row: u32,
) -> HealthState {
    // (Without a schedule nothing is missed: missed_slots is empty.)
    if i.paused(i.now) {
        HealthState::Paused
    } else if missed_slots.len() > 1
        || missed_slots.first().is_some_and(|s| Some(*s) != last_due)
        || !lost_slots.is_empty()
    {
        HealthState::Missed
    } else if !expired_slots.is_empty() {
        HealthState::Expired
    } else if i.schedule.is_none() && running {
        HealthState::Running
    } else if i.schedule.is_none() {
        HealthState::Unknown
    } else if !missed_slots.is_empty() {
        HealthState::Late
    } else if running {
        HealthState::Running
    } else if failed_in_a_row > 0 {
        HealthState::Failing
    } else {
        HealthState::Ok
    }
}

/// The oldest due slot after the newest one a claim, a result or a pause decided (or after the
/// job was first seen): how late a job that stopped is, however long ago it stopped. (The missed
/// slots above look at the newest [`DUE_LOOKBACK`] only, for a list; this is not capped.)
fn oldest_undecided(schedule: &Schedule, i: &Inputs, due_until: i64) -> Option<i64> {
    let newest_decided = i
        .recent
        .iter()
        .map(|r| r.slot)
        .chain(i.in_progress.iter().map(|r| r.slot))
        .filter(|slot| *slot <= due_until)
        .max();
    let mut after = newest_decided.or(i.first_seen.map(|f| f - 1))?;
    // Slots a pause covered were decided too (skipped by it): step over them, a bounded walk.
    for _ in 0..100_000 {
        let next = schedule.next_after(after)?;
        if next > due_until {
            return None;
        }
        if !i.paused_over(next) {
            return Some(next);
        }
        after = next;
    }
    None
}

/// What a job's monitoring data says of its health: judged here, above the store that read it.
impl JobView {
    /// The grace after a slot before it counts as missed: `grace`, or the job's default.
    pub fn grace(&self, grace: Option<Duration>) -> Duration {
        grace.unwrap_or_else(|| {
            let s = self.registry.as_ref().map(|r| &r.settings);
            default_grace(s.map_or(0, |s| s.max_late_ms), s.map_or(0, |s| s.jitter_ms))
        })
    }

    /// The job's health at `now` (see [`crate::health`]).
    pub fn health(&self, now: i64, grace: Option<Duration>) -> Health {
        self.health_over(now, grace, None)
    }

    /// The job's health at `now`, looking at every due slot from `window_start` (`check
    /// --window`; the monitor must have read every result from it on).
    pub fn health_over(
        &self,
        now: i64,
        grace: Option<Duration>,
        window_start: Option<i64>,
    ) -> Health {
        let (mut health, retired) = self.judged(now, grace, window_start, |i, runs| {
            (judge(i), self.retired_and_not_run_since(runs).cloned())
        });
        if let Some(retired) = retired {
            // Nobody runs it any more, by an operator's word: not judged, as a renamed name.
            health.state = HealthState::Retired;
            health.retired = Some(retired);
            health.not_judged();
        } else if let Some(new_name) = self.renamed_to() {
            // Its slots are the new name's now, judged there (with this name's runs counted):
            // judged here too, every slot since the rename would read as missed.
            health.state = HealthState::Renamed;
            health.renamed_to = Some(new_name.to_string());
            health.not_judged();
        }
        health
    }

    /// The slots of the job's schedule from `from` to `to` with no run under any of its names,
    /// and why, judged at `now` as `check --window` from `from` judges them
    /// ([`slots_without_a_run`]: a slot is `missed` here exactly when `health_over(now, grace,
    /// Some(from))` lists it in `missed_slots`). None for a job judged nowhere (renamed: its
    /// slots are its new name's; retired: none is expected), as [`Health::not_judged`].
    pub fn slots_without_a_run(
        &self,
        now: i64,
        grace: Option<Duration>,
        from: i64,
        to: i64,
    ) -> Vec<SlotWithoutRun> {
        self.judged(now, grace, Some(from), |i, runs| {
            let judged_nowhere =
                self.retired_and_not_run_since(runs).is_some() || self.renamed_to().is_some();
            if judged_nowhere {
                Vec::new()
            } else {
                slots_without_a_run(i, to)
            }
        })
    }

    /// `judgement` of the job's inputs: its runs under all its names ([`JobRuns`]) at `now`.
    fn judged<R>(
        &self,
        now: i64,
        grace: Option<Duration>,
        window_start: Option<i64>,
        judgement: impl FnOnce(&Inputs, &JobRuns) -> R,
    ) -> R {
        let schedule = self.schedule();
        let runs = JobRuns::of(self, now);
        let inputs = Inputs {
            now,
            schedule: schedule.as_ref(),
            grace: self.grace(grace),
            first_seen: runs.first_seen,
            recent: &runs.recent,
            recent_is_all: runs.recent_is_all,
            in_progress: &runs.in_progress,
            pauses: &runs.pauses,
            past_pauses: &runs.past_pauses,
            window_start,
        };
        judgement(&inputs, &runs)
    }

    /// The job's retirement (`anarchon forget`), unless a run of it was claimed at or after it or
    /// one is in progress, under any of its names (a replica of an old name started again runs
    /// the job too): a host that runs it again brings it back, its runs judged again.
    fn retired_and_not_run_since(
        &self,
        runs: &JobRuns,
    ) -> Option<&crate::store::registry::Retired> {
        let retired = self.registry.as_ref()?.retired.as_ref()?;
        let run_since = runs
            .recent
            .iter()
            .any(|r| r.claimed_at.unwrap_or(r.slot) >= retired.at || r.slot >= retired.at);
        (runs.in_progress.is_empty() && !run_since).then_some(retired)
    }
}

/// What health reads of a job's runs: its own, and those of its earlier names
/// ([`JobView::lineage`]), as one job's. A slot is the job's under whichever name claimed it. An
/// old name's claim handed to a newer name (`{"handed_to": ...}`, lineage of `run`) is no run of
/// its own: the newer name's record of that slot says what happened, so it is left out, unless it
/// says the slot was skipped there (a pause under the new name), which decides the slot.
struct JobRuns<'a> {
    recent: std::borrow::Cow<'a, [ResultEntry]>,
    recent_is_all: bool,
    in_progress: std::borrow::Cow<'a, [RunState]>,
    first_seen: Option<i64>,
    pauses: Vec<&'a Pause>,
    past_pauses: Vec<&'a Pause>,
}

impl<'a> JobRuns<'a> {
    fn of(job: &'a JobView, now: i64) -> Self {
        use std::borrow::Cow;
        if job.lineage.is_empty() {
            return JobRuns {
                recent: Cow::Borrowed(&job.recent),
                recent_is_all: job.recent_is_all,
                in_progress: Cow::Borrowed(&job.in_progress),
                first_seen: job.first_seen,
                pauses: job.pause.iter().collect(),
                past_pauses: job.past_pauses.iter().collect(),
            };
        }
        let names = || std::iter::once(job).chain(&job.lineage);
        let mut recent: Vec<ResultEntry> = names()
            .flat_map(|name| &name.recent)
            .filter_map(|r| match r.result.get("handed_to") {
                None => Some(r.clone()),
                Some(_) if r.result.get("skipped").is_some() => Some(ResultEntry {
                    status: "skipped".to_string(),
                    ..r.clone()
                }),
                Some(_) => None,
            })
            .collect();
        // A name whose newest results were not all read leaves older slots unknown: keep only
        // what every name was read for, so that none of them reads as missed.
        let known_from = names()
            .filter(|name| !name.recent_is_all)
            .filter_map(|name| name.recent.iter().map(|r| r.slot).min())
            .max();
        if let Some(from) = known_from {
            recent.retain(|r| r.slot >= from);
        }
        recent.sort_by_key(|r| std::cmp::Reverse(r.slot));
        // A claim left in progress under one name, its lease lapsed, of a slot another name ran
        // to an end (not a hand-over to this name: then this name's run is the one): a replica of
        // the new name killed during a renamed run, whose old name's claim was taken over and
        // run there. Nobody ends it but a later slot's claim under that name; it is no run
        // nobody will finish, and the slot ran (not `expired`, not lost).
        let decided_elsewhere = |name: &str, run: &RunState| {
            run.lease_end <= now
                && names().filter(|other| other.job != name).any(|other| {
                    other.recent.iter().any(|r| {
                        r.slot == run.slot
                            && matches!(r.status.as_str(), "finished" | "failed")
                            && r.result.get("handed_to").and_then(|t| t.as_str()) != Some(name)
                    })
                })
        };
        JobRuns {
            recent: Cow::Owned(recent),
            recent_is_all: names().all(|name| name.recent_is_all),
            in_progress: Cow::Owned(
                names()
                    .flat_map(|name| {
                        name.in_progress
                            .iter()
                            .filter(|run| !decided_elsewhere(&name.job, run))
                            .cloned()
                            .collect::<Vec<_>>()
                    })
                    .collect(),
            ),
            first_seen: names().filter_map(|name| name.first_seen).min(),
            // A pause of any of the job's names pauses the job (lineage of `run`).
            pauses: names().filter_map(|name| name.pause.as_ref()).collect(),
            past_pauses: names().flat_map(|name| &name.past_pauses).collect(),
        }
    }
}

/// The order of health (`list --sort health`, `top`): what needs a person first, unreadable health last.
pub fn health_rank(health: Option<HealthState>) -> u8 {
    match health {
        Some(HealthState::Missed) => 0,
        Some(HealthState::Expired) => 0,
        Some(HealthState::Failing) => 1,
        Some(HealthState::Late) => 2,
        Some(HealthState::Unknown) => 3,
        Some(HealthState::Running) => 4,
        Some(HealthState::Paused) => 5,
        Some(HealthState::Ok) => 6,
        Some(HealthState::Renamed) => 7,
        Some(HealthState::Retired) => 8,
        None => 9,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: i64 = 60_000;
    const T: i64 = 1_796_220_000_000; // a whole minute

    fn result(slot: i64, status: &str) -> ResultEntry {
        ResultEntry {
            slot,
            attempt: Some(1),
            token: format!("t{slot}"),
            runner: "h:1".into(),
            status: status.into(),
            claimed_at: Some(slot),
            ended_at: Some(slot + 1000),
            result: serde_json::json!({"exit_code": 0, "duration_ms": 5}),
            kind: None,
            fence: None,
        }
    }

    fn judge_at(now: i64, recent: &[ResultEntry]) -> Health {
        let s = Schedule::parse("* * * * *", "UTC").unwrap();
        judge(&Inputs {
            now,
            schedule: Some(&s),
            grace: Duration::from_secs(120),
            first_seen: Some(T - 60 * MIN),
            recent,
            recent_is_all: true,
            in_progress: &[],
            pauses: &[],
            past_pauses: &[],
            window_start: None,
        })
    }

    #[test]
    fn a_stopped_host_is_late_then_missed() {
        // Every minute ran up to T; the host stops.
        let recent: Vec<ResultEntry> = (0..30).map(|i| result(T - i * MIN, "finished")).collect();
        assert_eq!(judge_at(T + 2 * MIN, &recent).state, HealthState::Ok);
        let late = judge_at(T + 3 * MIN + 1000, &recent);
        assert_eq!(late.state, HealthState::Late);
        assert_eq!(late.missed_slots, vec![T + MIN]);
        assert_eq!(late.late_seconds, 121);
        let missed = judge_at(T + 4 * MIN + 1000, &recent);
        assert_eq!(missed.state, HealthState::Missed);
        assert_eq!(missed.missed_slots, vec![T + MIN, T + 2 * MIN]);
        assert_eq!(missed.next_due, Some(T + 5 * MIN));
        // Dead for 28 minutes: late counts from the first slot it missed, not from the newest
        // few looked at for `missed` (an alert "late > 20m" must be able to fire).
        let dead = judge_at(T + 29 * MIN + 1000, &recent);
        assert_eq!(dead.state, HealthState::Missed);
        assert_eq!(dead.missed_slots.len(), DUE_LOOKBACK);
        assert_eq!(dead.late_seconds, 28 * 60 + 1);
    }

    #[test]
    fn a_run_superseded_before_it_ran_to_an_end_is_lost() {
        // Slot T's holder died; nobody took it over; slot T + 1m's claim superseded it.
        let mut superseded = result(T, "interrupted");
        superseded.result =
            serde_json::json!({"reason": "lease expired", "superseded_by": T + MIN});
        let mut recent = vec![result(T + MIN, "finished"), superseded];
        recent.extend((1..30).map(|i| result(T - i * MIN, "finished")));
        let h = judge_at(T + 4 * MIN, &recent);
        assert_eq!((h.state, h.lost_slots), (HealthState::Missed, vec![T]));
    }

    #[test]
    fn a_slot_whose_every_attempt_was_handed_over_is_lost_at_once() {
        // Slot T: attempts 1 to 11 handed over, the last ended by the claim that found the
        // budget spent. Nothing more can happen to it: lost now, not once its grace has passed.
        let mut recent: Vec<ResultEntry> = (1..=11)
            .rev()
            .map(|n| {
                let mut r = result(T, "interrupted");
                r.attempt = Some(n);
                r.result =
                    serde_json::json!({"reason": "handed over", "handed_over_by": format!("r{n}")});
                r
            })
            .collect();
        recent.extend((1..30).map(|i| result(T - i * MIN, "finished")));
        let h = judge_at(T + 30_000, &recent);
        assert_eq!(
            (h.state, h.lost_slots),
            (HealthState::Missed, vec![T]),
            "within its grace"
        );
        let h = judge_at(T + 4 * MIN, &recent);
        assert_eq!(h.lost_slots, vec![T], "once due");
    }

    #[test]
    fn a_retry_that_never_ran_to_an_end_leaves_its_slot_lost() {
        // Attempt 1 failed and was given a retry; the retry (attempt 2) was superseded.
        let mut failed = result(T, "failed");
        failed.result = serde_json::json!({"exit_code": 3, "retry_at": T + 2_000, "retry": 1});
        let mut superseded = result(T, "interrupted");
        superseded.attempt = Some(2);
        superseded.result =
            serde_json::json!({"reason": "lease expired", "superseded_by": T + MIN});
        let mut recent = vec![result(T + MIN, "finished"), superseded, failed.clone()];
        recent.extend((1..30).map(|i| result(T - i * MIN, "finished")));
        assert_eq!(judge_at(T + 4 * MIN, &recent).lost_slots, vec![T]);
        // Its retry finished: the run ended, nothing lost.
        let mut finished = result(T, "finished");
        finished.attempt = Some(2);
        recent[1] = finished;
        assert!(judge_at(T + 4 * MIN, &recent).lost_slots.is_empty());
    }

    #[test]
    fn a_hand_over_is_no_failure() {
        // A deploy stopped attempt 1 and handed it over; attempt 2 ran the slot to its end.
        let mut handed = result(T, "interrupted");
        handed.result = serde_json::json!({"reason": "handed over", "handed_over_by": "r1"});
        let mut taken = result(T, "finished");
        taken.attempt = Some(2);
        let mut recent = vec![taken, handed];
        recent.extend((1..30).map(|i| result(T - i * MIN, "finished")));
        let h = judge_at(T + MIN, &recent);
        assert_eq!(
            (h.state, h.failed_in_a_row, h.last_failure),
            (HealthState::Ok, 0, None),
            "{h:?}"
        );
    }

    #[test]
    fn failures_in_a_row_and_skips() {
        let mut recent = vec![result(T, "failed"), result(T - MIN, "interrupted")];
        recent[1].result = serde_json::json!({"released_by": "ops", "reason": "stuck"});
        recent.extend((2..30).map(|i| result(T - i * MIN, "finished")));
        let h = judge_at(T + MIN, &recent);
        assert_eq!((h.state, h.failed_in_a_row), (HealthState::Failing, 2));
        assert!(h.lost_slots.is_empty());
        // Interrupted with nobody behind it (the lease expired, attempts ran out): a lost run,
        // reported as missed runs are, whatever came after it.
        let mut lost = recent.clone();
        lost[1].result = serde_json::json!({"reason": "lease expired"});
        lost[0] = result(T, "finished");
        let l = judge_at(T + MIN, &lost);
        assert_eq!(
            (l.state, l.lost_slots),
            (HealthState::Missed, vec![T - MIN])
        );
        assert_eq!(h.last_success, Some(T - 2 * MIN + 1000));
        assert_eq!(h.last_failure, Some(T + 1000));
        // A skipped slot is claimed (a policy decided) and no failure.
        recent[0] = result(T, "skipped");
        recent[1] = result(T - MIN, "finished");
        assert_eq!(judge_at(T + MIN, &recent).state, HealthState::Ok);
        // A run `--overlap replace` stopped for the next slot is the policy at work.
        let mut replaced = result(T, "interrupted");
        replaced.result = serde_json::json!({"reason": "replaced by ...", "replaced_by": T + MIN});
        recent[0] = replaced;
        let h = judge_at(T + MIN, &recent);
        assert_eq!(
            (h.state, h.failed_in_a_row, h.last_failure),
            (HealthState::Ok, 0, None)
        );
    }

    /// A job `new`, every minute, renamed from `old` (its registry's `was`), and `old`: neither
    /// with runs yet.
    fn renamed_from_old() -> (JobView, JobView) {
        let mut new = JobView::unread("new", crate::store::Layout::Lease);
        new.registry = Some(crate::store::registry::Registry {
            settings: crate::store::registry::JobSettings {
                schedule: Some("* * * * *".into()),
                tz: "UTC".into(),
                ..Default::default()
            },
            was: vec!["old".into()],
            ..Default::default()
        });
        (new, JobView::unread("old", crate::store::Layout::Lease))
    }

    /// A job renamed from `old`: judged by the runs of both names. A slot run under the old name
    /// is claimed; an old claim handed to the new name is no run of its own (the new name's
    /// failure decides), unless it says the slot was skipped there; an old name read only in
    /// part leaves its older slots unknown, not missed.
    #[test]
    fn a_renamed_job_is_judged_by_the_runs_of_all_its_names() {
        let (mut new, mut old) = renamed_from_old();
        // The old name ran T-5..T-3; T-2 was handed to the new name, which failed it; T-1 the new
        // name skipped under its pause (the old claim says so); T ran under the new name.
        old.recent = (3..=5).map(|i| result(T - i * MIN, "finished")).collect();
        let mut handed = result(T - 2 * MIN, "finished");
        handed.result = serde_json::json!({"handed_to": "new"});
        let mut handed_skipped = result(T - MIN, "finished");
        handed_skipped.result =
            serde_json::json!({"handed_to": "new", "skipped": "paused under new"});
        old.recent.splice(0..0, [handed_skipped, handed]);
        old.first_seen = Some(T - 5 * MIN);
        new.first_seen = Some(T - 2 * MIN);
        new.recent = vec![result(T, "finished"), result(T - 2 * MIN, "failed")];
        new.lineage = vec![old.clone()];
        let h = new.health_over(
            T + MIN + 1000,
            Some(Duration::from_secs(60)),
            Some(T - 10 * MIN),
        );
        assert!(h.missed_slots.is_empty(), "{h:?}");
        assert_eq!((h.state, h.failed_in_a_row), (HealthState::Ok, 0), "{h:?}");
        assert_eq!(h.last_failure, Some(T - 2 * MIN + 1000));
        // A slot whose every attempt under the old name died, which the new name then skipped
        // as decided there ("ran as old, its old name (interrupted)"): lost, not skipped.
        let mut lost = new.clone();
        lost.lineage[0].recent[2] = result(T - 3 * MIN, "interrupted");
        let mut skip = result(T - 3 * MIN, "skipped");
        skip.result = serde_json::json!({"reason": "ran as old, its old name (interrupted)"});
        lost.recent.push(skip);
        let h = lost.health_over(
            T + MIN + 1000,
            Some(Duration::from_secs(60)),
            Some(T - 10 * MIN),
        );
        assert_eq!(h.lost_slots, vec![T - 3 * MIN], "{h:?}");
        assert_eq!(h.state, HealthState::Missed, "{h:?}");
        // Skipped there for a reason of its own (an overlap under the old name): decided.
        let mut overlap = result(T - 3 * MIN, "skipped");
        overlap.result = serde_json::json!({"reason": "--overlap forbid: the run of ... under old, its old name (attempt 1, h1), was still in progress"});
        *lost.recent.last_mut().unwrap() = overlap;
        let h = lost.health_over(
            T + MIN + 1000,
            Some(Duration::from_secs(60)),
            Some(T - 10 * MIN),
        );
        assert!(h.lost_slots.is_empty(), "{h:?}");
        // Without its lineage the new name reads the old name's slots as missed.
        new.lineage.clear();
        let alone = new.health_over(
            T + MIN + 1000,
            Some(Duration::from_secs(60)),
            Some(T - 10 * MIN),
        );
        assert_eq!(alone.missed_slots, vec![T - MIN], "{alone:?}");
        // The old name read in part (its newest 2): slots before them are unknown, not missed.
        old.recent.truncate(2);
        old.recent_is_all = false;
        new.lineage = vec![old.clone()];
        let part = new.health_over(T + MIN + 1000, Some(Duration::from_secs(60)), None);
        assert!(part.missed_slots.is_empty(), "{part:?}");
        // The old name itself, once marked, is renamed and judged nowhere.
        old.registry = Some(crate::store::registry::Registry {
            renamed_to: Some("new".into()),
            ..Default::default()
        });
        let renamed = old.health(T + 60 * MIN, None);
        assert_eq!(renamed.state, HealthState::Renamed);
        assert_eq!(renamed.renamed_to.as_deref(), Some("new"));
        assert!(renamed.missed_slots.is_empty());
        // Retired under its new name, then run again by a replica of the old one: back, judged.
        new.registry.as_mut().unwrap().retired = Some(crate::store::registry::Retired {
            at: T - 30 * MIN,
            by: "ops".into(),
            reason: None,
            removed: false,
        });
        old.recent = vec![result(T, "finished")];
        new.lineage = vec![old.clone()];
        let back = new.health(T + MIN + 1000, Some(Duration::from_secs(60)));
        assert_ne!(back.state, HealthState::Retired, "{back:?}");
        new.lineage[0].recent = vec![result(T - 40 * MIN, "finished")];
        new.recent.clear();
        let still = new.health(T + MIN + 1000, Some(Duration::from_secs(60)));
        assert_eq!(still.state, HealthState::Retired, "{still:?}");
    }

    /// A new name's claim left in progress by a replica killed during a renamed run, whose slot
    /// the old name then ran to its end (taken over there): not expired, not lost. Handed to the
    /// new name instead, the old name's record leaves the new name's run the one: expired.
    #[test]
    fn a_new_name_s_lapsed_claim_of_a_slot_the_old_name_ran_is_not_expired() {
        let (mut new, mut old) = renamed_from_old();
        let slot = T - 2 * MIN;
        new.first_seen = Some(slot);
        new.in_progress = vec![RunState {
            slot,
            status: crate::store::RunStatus::Running,
            attempt: 1,
            token: "t".into(),
            runner: "new-pod:1".into(),
            lease_end: slot + 3_000,
            claimed_at: slot,
            started_at: slot,
            finished_at: None,
            kind: crate::store::RunKind::Scheduled,
            lease_ms: None,
            fence: None,
        }];
        new.recent = vec![result(T, "finished"), result(T - MIN, "finished")];
        new.recent_is_all = true;
        old.recent = vec![result(slot, "interrupted"), result(slot, "finished")];
        old.recent[1].attempt = Some(2);
        old.recent_is_all = true;
        new.lineage = vec![old.clone()];
        let h = new.health(T + 1_000, Some(Duration::from_secs(60)));
        assert!(
            h.expired_slots.is_empty() && h.lost_slots.is_empty(),
            "{h:?}"
        );
        assert_eq!(h.state, HealthState::Ok, "{h:?}");
        // Handed to the new name: the new name's run is the slot's, and nobody finishes it.
        new.lineage[0].recent[1].result = serde_json::json!({"handed_to": "new"});
        let h = new.health(T + 1_000, Some(Duration::from_secs(60)));
        assert_eq!(h.expired_slots, vec![slot], "{h:?}");
    }

    #[test]
    fn a_first_deployment_is_not_missed_before_it_was_seen() {
        let s = Schedule::parse("* * * * *", "UTC").unwrap();
        let h = judge(&Inputs {
            now: T + 10 * MIN,
            schedule: Some(&s),
            grace: Duration::from_secs(120),
            first_seen: Some(T + 9 * MIN),
            recent: &[result(T + 9 * MIN, "finished")],
            recent_is_all: true,
            in_progress: &[],
            pauses: &[],
            past_pauses: &[],
            window_start: None,
        });
        assert_eq!(h.state, HealthState::Ok);
        let unknown = judge(&Inputs {
            schedule: None,
            ..Inputs {
                now: T,
                schedule: None,
                grace: Duration::ZERO,
                first_seen: None,
                recent: &[],
                recent_is_all: true,
                in_progress: &[],
                pauses: &[],
                past_pauses: &[],
                window_start: None,
            }
        });
        assert_eq!(unknown.state, HealthState::Unknown);
    }
}
