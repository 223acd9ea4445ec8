//! `run --catch-up`'s decision: which of a schedule's missed runs one `run` runs, which it records
//! skipped and why, from what the store says of the job (when it first saw it, which slots were
//! ever claimed). Reads only: `run` then records the skips and runs the rest (its `take_slot`),
//! and `anarchon next --after-outage` asks the same question of an outage it supposes, so what
//! it shows is what `run` decides.

use std::time::Duration;

use crate::connection::Connection;
use crate::error::Result;
use crate::schedule::Schedule;
use crate::settings::run::{CatchUp, RunSettings};
use crate::store::LeaseKeys;
use crate::strategy::lease;
use crate::time::millis;

/// How many of a window's newest slots one `--catch-up` looks at (a guard against `* * * * * *`
/// over days: older ones are neither run nor recorded). The same bound for the missed runs before
/// the window that are recorded skipped.
pub const MAX_CATCH_UP_SLOTS: usize = 1000;

/// What the decision needs to know of the job's past.
pub(crate) trait Claims {
    /// When the store first saw the job (None: never; then nothing is caught up).
    async fn first_seen(&mut self) -> Result<Option<i64>>;
    /// For each of `slots`, whether any claim of it ever reached the store.
    async fn were_claimed(&mut self, slots: &[i64]) -> Result<Vec<bool>>;
}

/// The store's answers, for a real `run`.
pub(crate) struct Store<'a> {
    pub conn: &'a mut Connection,
    pub keys: &'a LeaseKeys,
}

impl Claims for Store<'_> {
    async fn first_seen(&mut self) -> Result<Option<i64>> {
        lease::first_seen(self.conn, self.keys).await
    }

    async fn were_claimed(&mut self, slots: &[i64]) -> Result<Vec<bool>> {
        lease::were_claimed(self.conn, self.keys, slots).await
    }
}

/// The settings the decision follows: a run's schedule, `--catch-up` (with its policy and
/// `--catch-up-max`) and `--max-late`.
#[derive(Debug, Clone, Copy)]
pub struct Rule<'a> {
    pub schedule: Option<&'a Schedule>,
    pub catch_up: Option<CatchUp>,
    pub max_late: Duration,
}

impl<'a> Rule<'a> {
    pub fn of(run: &'a RunSettings) -> Self {
        Rule {
            schedule: run.schedule.as_ref(),
            catch_up: run.catch_up,
            max_late: run.max_late,
        }
    }

    /// Whether the scheduled slot `current` is too late to run at `now` (more than --max-late).
    pub fn too_late(&self, current: i64, now: i64) -> bool {
        self.schedule.is_some() && now - current > millis(self.max_late)
    }

    fn window(&self) -> Duration {
        self.catch_up.map_or(Duration::ZERO, |c| c.window)
    }
}

/// What `--catch-up` decided for one run, before anything is recorded or run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decision {
    /// The missed runs to run, oldest first (the current slot among them when it is missed).
    pub to_run: Vec<i64>,
    /// The missed runs to record skipped, each with why: those before the window first ("older
    /// than --catch-up"), then those the policy does not run; oldest first within each.
    pub to_skip: Vec<(i64, String)>,
    /// Whether the current slot is itself a missed run: too late, and nobody claimed it.
    pub current_missed: bool,
    /// Whether the current slot is older than --max-late (it runs only when missed).
    pub too_late: bool,
    /// When the store first saw the job, as read (None: not read, or never seen).
    pub first_seen: Option<i64>,
}

impl Decision {
    /// Whether the current slot is run (claimed) at all: on time, or too late but missed.
    pub fn runs_current(&self) -> bool {
        !self.too_late || self.current_missed
    }
}

/// `--catch-up` for the slot `current` of a run at `now` (server ms): the schedule's runs in the
/// window that no host claimed ([`missed_runs`]), split by the policy into those run and those
/// skipped, and the missed runs before the window when the hosts were down longer than it.
pub(crate) async fn decide(
    rule: &Rule<'_>,
    current: i64,
    now: i64,
    claims: &mut impl Claims,
) -> Result<Decision> {
    let too_late = rule.too_late(current, now);
    let window = rule.window();
    let nothing = Decision {
        too_late,
        ..Decision::default()
    };
    let Some(schedule) = rule.schedule.filter(|_| !window.is_zero()) else {
        return Ok(nothing);
    };
    let window_start = now - millis(window);
    let Some(first_seen) = claims.first_seen().await? else {
        return Ok(nothing);
    };
    let missed = missed_runs(
        claims,
        schedule,
        window_start.max(first_seen),
        current,
        too_late,
    )
    .await?;
    // The current slot is among them only when it is too late and nobody claimed it.
    let current_missed = missed.last() == Some(&current);
    let runs = rule
        .catch_up
        .map_or(0, |c| c.runs(missed.len(), current_missed));
    let (to_skip, to_run) = missed.split_at(missed.len() - runs);
    let reason = rule.catch_up.map_or(String::new(), |c| c.skip_reason());
    let mut skipped = before_window(
        claims,
        schedule,
        (window_start, window),
        first_seen,
        &missed,
    )
    .await?;
    skipped.extend(to_skip.iter().map(|slot| (*slot, reason.clone())));
    Ok(Decision {
        to_run: to_run.to_vec(),
        to_skip: skipped,
        current_missed,
        too_late,
        first_seen: Some(first_seen),
    })
}

/// The schedule's runs from `since` (the window's start, or when the store first saw the job if
/// later: a first deployment catches up nothing) to before `current`, and `current` too when it
/// is `too_late` (it would not run otherwise), that no host claimed, oldest first; at most the
/// newest [`MAX_CATCH_UP_SLOTS`] are looked at.
async fn missed_runs(
    claims: &mut impl Claims,
    schedule: &Schedule,
    since: i64,
    current: i64,
    too_late: bool,
) -> Result<Vec<i64>> {
    let until = if too_late { current } else { current - 1 };
    let slots = schedule.newest_between(since - 1, until, MAX_CATCH_UP_SLOTS);
    let claimed = claims.were_claimed(&slots).await?;
    Ok(slots
        .into_iter()
        .zip(claimed)
        .filter_map(|(slot, claimed)| (!claimed).then_some(slot))
        .collect())
}

/// When the hosts were down for longer than `--catch-up` (the window's first slot was missed too),
/// the missed runs before the window are to be recorded skipped, "older than --catch-up": the
/// policy decided not to run them, and history and monitoring must say so rather than show
/// nothing, as if they had never been due. At most the newest [`MAX_CATCH_UP_SLOTS`] of them, none
/// from before the store first saw the job; nothing is looked at while the window's first slot was
/// claimed (the usual case: no outage, or a short one).
/// `window`: its start (server ms) and length (`--catch-up`).
async fn before_window(
    claims: &mut impl Claims,
    schedule: &Schedule,
    (window_start, catch_up): (i64, Duration),
    first_seen: i64,
    missed: &[i64],
) -> Result<Vec<(i64, String)>> {
    let window_first = schedule.next_after(window_start.max(first_seen) - 1);
    if first_seen >= window_start || missed.first().copied() != window_first {
        return Ok(Vec::new());
    }
    let before = schedule.newest_between(first_seen - 1, window_start - 1, MAX_CATCH_UP_SLOTS);
    let claimed = claims.were_claimed(&before).await?;
    let reason = format!(
        "older than --catch-up {} (the hosts were down longer)",
        humantime::format_duration(catch_up)
    );
    Ok(before
        .into_iter()
        .zip(claimed)
        .filter(|(_, claimed)| !claimed)
        .map(|(slot, _)| (slot, reason.clone()))
        .collect())
}
