//! What `timeline` draws, judged from the read model (`store::view`'s [`ResultEntry`] and
//! [`RunState`], a claim-only job's claims with their results): each slot's attempts with how
//! they ended, takeovers, late starts, and every instant at which two attempts of one job held it
//! at once. Pure: the text and the SVG draw this, and `--json` prints it.

use std::collections::BTreeMap;

use serde::Serialize;

pub use crate::health::NoRun;
use crate::health::SlotWithoutRun;
use crate::store::Layout;
use crate::store::pause::Pause;
use crate::store::registry::{Registry, host_of};
use crate::time::{humanize, rfc3339};

/// The range drawn, and the server's clock (ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub since: i64,
    pub until: i64,
    pub now: i64,
}

pub use crate::store::attempt::{Attempt as Seen, Outcome};

/// The attempt a takeover took the run over from.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct TakenFrom {
    pub attempt: u32,
    pub runner: String,
    pub host: String,
    /// How the picture names it ([`name_holders`]).
    #[serde(skip)]
    pub shown: String,
}

/// One attempt of a slot, judged.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Attempt {
    /// 1 for the first attempt, +1 for each takeover; 0 for a skip; null for a claim-only job's
    /// claim.
    pub attempt: Option<u32>,
    pub runner: String,
    /// The runner's host (the runner without its `:pid`).
    pub host: String,
    /// How the picture names its holder: the host, or the runner where hosts collide
    /// ([`name_holders`]).
    #[serde(skip)]
    pub shown: String,
    pub outcome: Outcome,
    /// The status as recorded (`running` for a run in progress, `claimed` for a claim with no
    /// result).
    pub status: String,
    pub claimed_at: Option<i64>,
    pub claimed_at_time: Option<String>,
    /// Null while the attempt is open (running, expired, claimed).
    pub ended_at: Option<i64>,
    pub ended_at_time: Option<String>,
    /// The lease's end of a run in progress (server clock).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease_end: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease_end_time: Option<String>,
    /// Why it ended as it did: a skip's or a release's reason, `lease expired`, or a failed
    /// command's exit (`exit 3`, `timed out`).
    pub reason: Option<String>,
    /// The newer slot that replaced or superseded it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub newer_slot: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub newer_slot_time: Option<String>,
    /// Who released it (`anarchon release --by`, or the replacing host).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub released_by: Option<String>,
    /// A takeover: the attempt before, whose lease expired.
    pub takeover_from: Option<TakenFrom>,
    /// Whether it held the job at an instant another attempt of the job held it too (see the
    /// job's `overlaps`).
    pub overlapping: bool,
    /// The spans (ms) at which it overlapped another attempt, and whether surely.
    #[serde(skip)]
    pub overlap_spans: Vec<(i64, i64, bool)>,
    /// Whether its recorded end is when its holder stopped (false: when a later claim or a
    /// release recorded it, its holder silent).
    #[serde(skip)]
    pub end_is_sure: bool,
}

impl Attempt {
    /// When it began, as drawn: its claim (a member with no claim time: its end, or its slot).
    pub fn start(&self, slot: i64) -> i64 {
        self.claimed_at.or(self.ended_at).unwrap_or(slot)
    }

    /// When it ended, as drawn: its end, or now while it is open.
    pub fn end(&self, slot: i64, now: i64) -> i64 {
        let start = self.start(slot);
        if self.outcome.open() {
            now.max(start)
        } else {
            self.ended_at.unwrap_or(start).max(start)
        }
    }

    /// The span during which it held the job, and whether that span is sure: None for a skip.
    /// An attempt whose lease expired ends in the store when a later claim recorded it, which
    /// may be well after its holder stopped (the store keeps no lease end for it), so its span is
    /// only an upper bound; so is a released run's whose holder never reported, and a claim-only
    /// claim's with no result.
    fn held(&self, slot: i64, now: i64) -> Option<(i64, i64, bool)> {
        let start = self.start(slot);
        let (end, sure) = match self.outcome {
            Outcome::Skipped => return None,
            Outcome::Running => (now, true),
            Outcome::Expired => (self.lease_end.unwrap_or(start).min(now), true),
            Outcome::Claimed => (now, false),
            _ => (self.end(slot, now), self.end_is_sure),
        };
        (end > start).then_some((start, end, sure))
    }
}

/// One slot (a run) and its attempts, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct SlotRow {
    pub slot: i64,
    pub slot_time: String,
    /// A manual run (`run-now`): its slot is its claim's time.
    pub manual: bool,
    /// How long after its slot its first attempt was claimed (null for a skip alone).
    pub start_delay_ms: Option<i64>,
    /// Whether that was more than the job's `late_after_ms`.
    pub late: bool,
    pub attempts: Vec<Attempt>,
    /// A slot of the job's schedule in the range that has no run: why (null for a slot that ran).
    pub no_run: Option<NoRunRow>,
}

/// Why a slot of the job's schedule has no run, as `check --window` from `since` judges it
/// (`crate::health`: one judgement for both).
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct NoRunRow {
    /// `missed`: due (its grace passed) and never claimed, as `check` counts it; `paused`: a
    /// pause covered it, nothing was due; `pending`: its grace has not passed, a host may still
    /// claim it.
    pub reason: NoRun,
    /// The same in words.
    pub why: String,
    /// When its grace ends (server ms): no host claims it after.
    pub due_by: i64,
    pub due_by_time: String,
    /// The pause that covered it (`paused`).
    pub pause: Option<Pause>,
}

impl NoRunRow {
    fn of(s: &SlotWithoutRun, grace_ms: i64) -> Self {
        let due_by = s.slot + grace_ms;
        let why = match (s.why, &s.pause) {
            (NoRun::Missed, _) => format!(
                "missed: never claimed, and its grace ({}) ended at {}",
                humanize(grace_ms.max(0) as u64),
                rfc3339(due_by)
            ),
            (NoRun::Paused, Some(p)) => format!("paused {}", p.describe()),
            (NoRun::Paused, None) => "paused".to_string(),
            (NoRun::Pending, _) => format!(
                "pending: not claimed yet, a host may claim it until {}",
                rfc3339(due_by)
            ),
        };
        NoRunRow {
            reason: s.why,
            why,
            due_by,
            due_by_time: rfc3339(due_by),
            pause: s.pause.clone(),
        }
    }
}

/// What a picture draws of a job, in slot order: a slot's attempts, or a run of consecutive
/// slots with no run for one reason (one line for many: a job stopped for a day at `* * * * *`
/// is one line, not 1,440).
pub enum Drawn<'a> {
    Slot(&'a SlotRow),
    NoRun(Vec<&'a SlotRow>),
}

impl JobTimeline {
    /// The job's lines ([`Drawn`]). A slot with attempts that health still counts missed (a
    /// claim-only claim with no result) is drawn with its attempts.
    pub fn drawn(&self) -> Vec<Drawn<'_>> {
        let mut out: Vec<Drawn> = Vec::new();
        for row in &self.slots {
            let Some(no_run) = row.no_run.as_ref().filter(|_| row.attempts.is_empty()) else {
                out.push(Drawn::Slot(row));
                continue;
            };
            let same = |prev: &SlotRow| {
                prev.no_run.as_ref().is_some_and(|p| {
                    p.reason == no_run.reason
                        && p.pause.as_ref().map(|p| p.paused_at)
                            == no_run.pause.as_ref().map(|p| p.paused_at)
                })
            };
            match out.last_mut() {
                Some(Drawn::NoRun(rows)) if rows.last().is_some_and(|r| same(r)) => rows.push(row),
                _ => out.push(Drawn::NoRun(vec![row])),
            }
        }
        out
    }

    /// Adds the slots of the job's schedule in the range with no run, as health judged them
    /// (`without`; `grace_ms` the grace it judged by): a row each, or the reason on the row of a
    /// slot drawn already (a claim-only claim with no result, which health counts missed).
    pub fn add_slots_without_a_run(&mut self, without: &[SlotWithoutRun], grace_ms: i64) {
        for s in without {
            let no_run = Some(NoRunRow::of(s, grace_ms));
            match self.slots.iter_mut().find(|r| r.slot == s.slot) {
                // Only `missed` can be of a slot with attempts: pending or paused there says
                // nothing the attempts do not.
                Some(row) if s.why == NoRun::Missed => row.no_run = no_run,
                Some(_) => {}
                None => self.slots.push(SlotRow {
                    slot: s.slot,
                    slot_time: rfc3339(s.slot),
                    manual: false,
                    start_delay_ms: None,
                    late: false,
                    attempts: Vec::new(),
                    no_run,
                }),
            }
        }
        self.slots.sort_by_key(|r| r.slot);
        self.summary = count(&self.slots, &self.overlaps);
    }
}

/// An attempt, named.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct AttemptRef {
    pub slot: i64,
    pub slot_time: String,
    pub attempt: Option<u32>,
    pub runner: String,
    pub host: String,
    /// How the picture names it ([`name_holders`]).
    #[serde(skip)]
    pub shown: String,
}

/// A span during which two attempts of one job held it at once.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Overlap {
    /// Server ms.
    pub from: i64,
    pub from_time: String,
    pub to: i64,
    pub to_time: String,
    pub duration_ms: i64,
    /// False when one of the two ended in the store only when a later claim recorded it (its
    /// lease expired, or its holder never reported a release): it held the job for some unknown
    /// part of its span, so the two may not have run at once.
    pub certain: bool,
    /// The two attempts, older claim first.
    pub attempts: Vec<AttemptRef>,
}

/// Names every holder as the picture shows it: its host, or its runner (`host:pid`) where hosts
/// collide ([`colliding_hosts`]), so that replicas on one machine can be told apart ("vm:41 →
/// vm:57", not "vm → vm"). JSON keeps both, as they are.
pub fn name_holders(jobs: &mut [JobTimeline]) {
    let colliding = colliding_hosts(jobs);
    let shown = |host: &str, runner: &str| {
        if colliding.contains(host) {
            runner
        } else {
            host
        }
        .to_string()
    };
    for job in jobs.iter_mut() {
        for a in job.slots.iter_mut().flat_map(|r| r.attempts.iter_mut()) {
            a.shown = shown(&a.host, &a.runner);
            if let Some(from) = &mut a.takeover_from {
                from.shown = shown(&from.host, &from.runner);
            }
        }
        for a in job.overlaps.iter_mut().flat_map(|o| o.attempts.iter_mut()) {
            a.shown = shown(&a.host, &a.runner);
        }
    }
}

/// The hosts whose name alone would not tell the rows drawn apart: a host with two runners in one
/// slot (a takeover from one replica to another), or with several runners of which one drew more
/// than one row (a long-lived process: an `anarchon cron` replica). A host whose every run is a
/// process of its own (`run` from cron: a new pid a slot) stays its name.
fn colliding_hosts(jobs: &[JobTimeline]) -> std::collections::BTreeSet<String> {
    let mut runners_of: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
    let mut colliding = std::collections::BTreeSet::new();
    for row in jobs.iter().flat_map(|j| j.slots.iter()) {
        let mut in_slot: BTreeMap<&str, &str> = BTreeMap::new();
        for a in &row.attempts {
            *runners_of
                .entry(&a.host)
                .or_default()
                .entry(&a.runner)
                .or_default() += 1;
            if in_slot
                .insert(&a.host, &a.runner)
                .is_some_and(|r| r != a.runner)
            {
                colliding.insert(a.host.clone());
            }
        }
    }
    for (host, runners) in runners_of {
        if runners.len() > 1 && runners.values().any(|rows| *rows > 1) {
            colliding.insert(host.to_string());
        }
    }
    colliding
}

/// A job's attempts counted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Summary {
    pub slots: u64,
    pub attempts: u64,
    /// Attempts by outcome.
    pub outcomes: BTreeMap<Outcome, u64>,
    pub takeovers: u64,
    pub late: u64,
    /// Overlaps that surely happened.
    pub overlaps: u64,
    /// Overlaps of a span that is only an upper bound (see `overlaps[].certain`).
    pub possible_overlaps: u64,
    /// Slots with no run, by why (`slots[].no_run.reason`).
    pub no_run: BTreeMap<NoRun, u64>,
}

/// One job's timeline.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct JobTimeline {
    pub job: String,
    pub layout: Layout,
    /// The job's `--overlap` as its job registry records it (null: no registry).
    pub overlap_policy: Option<String>,
    /// A run is late when its first claim came more than this after its slot (ms).
    pub late_after_ms: i64,
    /// Slots with an attempt in the range (or whose time is in it), and the slots of its schedule
    /// in the range with no run (`no_run` says why), oldest first.
    pub slots: Vec<SlotRow>,
    pub overlaps: Vec<Overlap>,
    pub summary: Summary,
    /// False when the job has more results in the range than are read at once: only the newest
    /// were.
    pub complete: bool,
}

impl JobTimeline {
    /// Whether the job's overlap policy forbids two runs at once (forbid, replace and buffer
    /// all claim as forbid does).
    pub fn forbids_overlap(&self) -> bool {
        matches!(
            self.overlap_policy.as_deref(),
            Some("forbid" | "replace" | "buffer")
        )
    }
}

/// The late threshold of a job: `late_after` if given, else its `--jitter` (job registry) and
/// the slack every view allows ([`crate::store::attempt::late_after_ms`]).
pub fn late_after_ms(registry: Option<&Registry>, late_after: Option<i64>) -> i64 {
    late_after
        .unwrap_or_else(|| {
            crate::store::attempt::late_after_ms(registry.map_or(0, |r| r.settings.jitter_ms))
        })
        .max(0)
}

/// A job's timeline over `window` from every attempt read (`seen`: any order; slots that have
/// nothing in the window are left out).
pub fn build(
    job: &str,
    layout: Layout,
    registry: Option<&Registry>,
    seen: Vec<Seen>,
    window: Window,
    late_after_ms: i64,
    complete: bool,
) -> JobTimeline {
    let mut by_slot: BTreeMap<i64, Vec<Seen>> = BTreeMap::new();
    for s in seen {
        by_slot.entry(s.slot).or_default().push(s);
    }
    let mut slots = Vec::new();
    for (slot, mut seen) in by_slot {
        seen.sort_by_key(|s| (s.attempt, s.claimed_at));
        let row = judge_slot(slot, seen, window, late_after_ms);
        let shows = (window.since..=window.until).contains(&slot)
            || row
                .attempts
                .iter()
                .any(|a| a.start(slot) <= window.until && a.end(slot, window.now) >= window.since);
        if shows {
            slots.push(row);
        }
    }
    let overlaps = find_overlaps(&mut slots, window.now);
    let summary = count(&slots, &overlaps);
    JobTimeline {
        job: job.to_string(),
        layout,
        overlap_policy: registry
            .map(|r| r.settings.overlap.clone())
            .filter(|p| !p.is_empty()),
        late_after_ms,
        slots,
        overlaps,
        summary,
        complete,
    }
}

/// A slot's attempts judged: outcomes, reasons, takeovers, and whether it started late.
fn judge_slot(slot: i64, seen: Vec<Seen>, window: Window, late_after_ms: i64) -> SlotRow {
    let manual = seen.iter().any(|s| s.manual);
    let mut attempts: Vec<Attempt> = Vec::with_capacity(seen.len());
    for s in seen {
        let attempt = attempt_of(&s, window.now, attempts.last());
        attempts.push(attempt);
    }
    // The first attempt that ran (not a skip) tells how late the run started.
    let start_delay_ms = attempts
        .iter()
        .filter(|a| a.outcome != Outcome::Skipped)
        .find_map(|a| a.claimed_at)
        .map(|at| at - slot);
    SlotRow {
        slot,
        slot_time: rfc3339(slot),
        manual,
        start_delay_ms,
        late: !manual && start_delay_ms.is_some_and(|d| d > late_after_ms),
        attempts,
        no_run: None,
    }
}

/// A field of an attempt's result as text (absent when null).
fn result_text(s: &Seen, name: &str) -> Option<String> {
    s.result.get(name).and_then(|v| match v {
        serde_json::Value::String(t) => Some(t.clone()),
        serde_json::Value::Null => None,
        other => Some(other.to_string()),
    })
}

/// Why an attempt ended as it did, for every outcome but a plain finish or one still open.
fn reason_of(s: &Seen, outcome: Outcome) -> Option<String> {
    match outcome {
        Outcome::Finished | Outcome::Running | Outcome::Claimed => None,
        Outcome::Expired => Some("lease expired, not taken over".to_string()),
        Outcome::Failed => Some(crate::output::result_summary(Some(&s.result))),
        Outcome::HandedOver => Some(format!(
            "handed over ({})",
            result_text(s, "why").unwrap_or_else(|| "shutdown".to_string())
        )),
        _ => result_text(s, "reason").or_else(|| Some(s.status.clone())),
    }
}

/// The attempt an attempt took over from, if `prev` (the attempt before it of the same slot) is
/// one it took over.
fn takeover_of(s: &Seen, prev: Option<&Attempt>) -> Option<TakenFrom> {
    // A takeover: the attempt before this one of the same slot ended with its lease expired
    // (or handed over).
    prev.filter(|prev| {
        matches!(prev.outcome, Outcome::Interrupted | Outcome::HandedOver)
            && s.attempt.is_some_and(|n| n > 1)
            && prev.attempt.is_some_and(|p| Some(p + 1) == s.attempt)
    })
    .map(|prev| TakenFrom {
        attempt: prev.attempt.unwrap_or_default(),
        runner: prev.runner.clone(),
        host: prev.host.clone(),
        shown: prev.shown.clone(),
    })
}

/// An attempt as drawn, judged at `now`, after `prev` (the attempt before it of the same slot).
fn attempt_of(s: &Seen, now: i64, prev: Option<&Attempt>) -> Attempt {
    let outcome = s.outcome(now);
    let newer_slot = s
        .result
        .get("replaced_by")
        .or_else(|| s.result.get("superseded_by"))
        .and_then(serde_json::Value::as_i64)
        .filter(|_| matches!(outcome, Outcome::Replaced | Outcome::Superseded));
    Attempt {
        attempt: s.attempt,
        host: host_of(&s.runner).to_string(),
        shown: host_of(&s.runner).to_string(),
        runner: s.runner.clone(),
        outcome,
        status: s.status.clone(),
        claimed_at: s.claimed_at,
        claimed_at_time: s.claimed_at.map(rfc3339),
        ended_at: s.ended_at.filter(|_| !outcome.open()),
        ended_at_time: s.ended_at.filter(|_| !outcome.open()).map(rfc3339),
        lease_end: s.lease_end,
        lease_end_time: s.lease_end.map(rfc3339),
        reason: reason_of(s, outcome),
        newer_slot,
        newer_slot_time: newer_slot.map(rfc3339),
        released_by: result_text(s, "released_by")
            .filter(|_| matches!(outcome, Outcome::Released | Outcome::Replaced)),
        takeover_from: takeover_of(s, prev),
        overlapping: false,
        overlap_spans: Vec::new(),
        end_is_sure: match outcome {
            Outcome::Interrupted | Outcome::HandedOver | Outcome::Superseded => false,
            // The holder reported how its command ended (`"command"`), or never did.
            Outcome::Replaced | Outcome::Released => s.result.get("command").is_some(),
            _ => true,
        },
    }
}

/// Every pair of attempts whose spans intersect, marked on both attempts.
fn find_overlaps(slots: &mut [SlotRow], now: i64) -> Vec<Overlap> {
    // (start, end, sure, row, attempt index)
    let mut spans: Vec<(i64, i64, bool, usize, usize)> = Vec::new();
    for (r, row) in slots.iter().enumerate() {
        for (i, a) in row.attempts.iter().enumerate() {
            if let Some((start, end, sure)) = a.held(row.slot, now) {
                spans.push((start, end, sure, r, i));
            }
        }
    }
    spans.sort_by_key(|s| (s.0, s.1));
    let mut found = Vec::new();
    for (i, a) in spans.iter().enumerate() {
        for b in spans[i + 1..].iter().take_while(|b| b.0 < a.1) {
            let (from, to) = (b.0.max(a.0), a.1.min(b.1));
            if from >= to {
                continue;
            }
            let certain = a.2 && b.2;
            for &(r, k) in &[(a.3, a.4), (b.3, b.4)] {
                let attempt = &mut slots[r].attempts[k];
                attempt.overlapping = true;
                attempt.overlap_spans.push((from, to, certain));
            }
            let name = |r: usize, k: usize| {
                let (row, attempt) = (&slots[r], &slots[r].attempts[k]);
                AttemptRef {
                    slot: row.slot,
                    slot_time: row.slot_time.clone(),
                    attempt: attempt.attempt,
                    runner: attempt.runner.clone(),
                    host: attempt.host.clone(),
                    shown: attempt.shown.clone(),
                }
            };
            found.push(Overlap {
                from,
                from_time: rfc3339(from),
                to,
                to_time: rfc3339(to),
                duration_ms: to - from,
                certain,
                attempts: vec![name(a.3, a.4), name(b.3, b.4)],
            });
        }
    }
    found.sort_by_key(|o| (o.from, o.to));
    found
}

fn count(slots: &[SlotRow], overlaps: &[Overlap]) -> Summary {
    let mut s = Summary {
        slots: slots.len() as u64,
        ..Summary::default()
    };
    for row in slots {
        s.late += u64::from(row.late);
        if let Some(no_run) = &row.no_run {
            *s.no_run.entry(no_run.reason).or_default() += 1;
        }
        for a in &row.attempts {
            s.attempts += 1;
            *s.outcomes.entry(a.outcome).or_default() += 1;
            s.takeovers += u64::from(a.takeover_from.is_some());
        }
    }
    s.overlaps = overlaps.iter().filter(|o| o.certain).count() as u64;
    s.possible_overlaps = overlaps.len() as u64 - s.overlaps;
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SLOT: i64 = 1_796_220_000_000;
    const MIN: i64 = 60_000;

    fn window() -> Window {
        Window {
            since: SLOT - 10 * MIN,
            until: SLOT + 30 * MIN,
            now: SLOT + 30 * MIN,
        }
    }

    fn ended(slot: i64, attempt: u32, runner: &str, status: &str, at: (i64, i64)) -> Seen {
        Seen {
            slot,
            attempt: Some(attempt),
            runner: runner.into(),
            status: status.into(),
            claimed_at: Some(at.0),
            ended_at: Some(at.1),
            lease_end: None,
            result: json!({"exit_code": if status == "failed" { 3 } else { 0 }}),
            manual: false,
        }
    }

    fn with(mut s: Seen, result: serde_json::Value) -> Seen {
        s.result = result;
        s
    }

    #[test]
    fn a_takeover_says_from_which_host_and_does_not_overlap() {
        let seen = vec![
            with(
                ended(
                    SLOT,
                    1,
                    "host-a:1",
                    "interrupted",
                    (SLOT + 1000, SLOT + 40_000),
                ),
                json!({"reason": "lease expired"}),
            ),
            ended(
                SLOT,
                2,
                "host-b:2",
                "finished",
                (SLOT + 40_000, SLOT + 70_000),
            ),
        ];
        let t = build("j", Layout::Lease, None, seen, window(), 10_000, true);
        assert_eq!(t.slots.len(), 1);
        let row = &t.slots[0];
        assert_eq!(row.attempts[0].outcome, Outcome::Interrupted);
        assert_eq!(row.attempts[0].reason.as_deref(), Some("lease expired"));
        let from = row.attempts[1].takeover_from.as_ref().unwrap();
        assert_eq!((from.attempt, from.host.as_str()), (1, "host-a"));
        assert!(!row.late, "claimed 1s after its slot");
        assert!(t.overlaps.is_empty(), "{:?}", t.overlaps);
        assert_eq!(t.summary.takeovers, 1);
    }

    #[test]
    fn outcomes_tell_the_policies_and_the_operator_apart() {
        let replaced = with(
            ended(SLOT, 1, "a:1", "interrupted", (SLOT, SLOT + MIN)),
            json!({"reason": "replaced by x (--overlap replace)", "released_by": "b:2",
                   "replaced_by": SLOT + MIN, "command": {"signal": 15}}),
        );
        let superseded = with(
            ended(
                SLOT + 2 * MIN,
                1,
                "a:1",
                "interrupted",
                (SLOT + 2 * MIN, SLOT + 4 * MIN),
            ),
            json!({"reason": "lease expired", "superseded_by": SLOT + 4 * MIN}),
        );
        let released = with(
            ended(
                SLOT + 5 * MIN,
                1,
                "a:1",
                "failed",
                (SLOT + 5 * MIN, SLOT + 6 * MIN),
            ),
            json!({"reason": "INC-1", "released_by": "ops@x:1"}),
        );
        let skipped = with(
            ended(
                SLOT + 7 * MIN,
                0,
                "c:3",
                "skipped",
                (SLOT + 7 * MIN, SLOT + 7 * MIN),
            ),
            json!({"reason": "--overlap forbid: the run of 1 was still in progress"}),
        );
        let failed = ended(
            SLOT + 8 * MIN,
            1,
            "a:1",
            "failed",
            (SLOT + 8 * MIN, SLOT + 9 * MIN),
        );
        let seen = vec![replaced, superseded, released, skipped, failed];
        let t = build("j", Layout::Lease, None, seen, window(), 10_000, true);
        let outcomes: Vec<Outcome> = t.slots.iter().map(|r| r.attempts[0].outcome).collect();
        assert_eq!(
            outcomes,
            [
                Outcome::Replaced,
                Outcome::Superseded,
                Outcome::Released,
                Outcome::Skipped,
                Outcome::Failed
            ]
        );
        assert_eq!(t.slots[0].attempts[0].newer_slot, Some(SLOT + MIN));
        assert_eq!(
            t.slots[2].attempts[0].released_by.as_deref(),
            Some("ops@x:1")
        );
        assert_eq!(t.slots[4].attempts[0].reason.as_deref(), Some("exit 3"));
        assert_eq!(t.slots[3].start_delay_ms, None, "a skip alone never ran");
    }

    #[test]
    fn late_is_past_the_threshold_and_manual_runs_never_are() {
        let late = ended(SLOT, 1, "a:1", "finished", (SLOT + 11_000, SLOT + 12_000));
        let on_time = ended(
            SLOT + MIN,
            1,
            "a:1",
            "finished",
            (SLOT + MIN + 9_000, SLOT + 2 * MIN),
        );
        let mut manual = ended(
            SLOT + 3 * MIN,
            1,
            "a:1",
            "finished",
            (SLOT + 4 * MIN, SLOT + 5 * MIN),
        );
        manual.manual = true;
        let t = build(
            "j",
            Layout::Lease,
            None,
            vec![late, on_time, manual],
            window(),
            10_000,
            true,
        );
        let late: Vec<bool> = t.slots.iter().map(|r| r.late).collect();
        assert_eq!(late, [true, false, false]);
        assert_eq!(t.slots[0].start_delay_ms, Some(11_000));
        let registry = Registry {
            settings: crate::store::registry::JobSettings {
                jitter_ms: 30_000,
                ..Default::default()
            },
            ..Default::default()
        };
        assert_eq!(late_after_ms(Some(&registry), None), 40_000);
        assert_eq!(late_after_ms(Some(&registry), Some(5)), 5);
    }

    #[test]
    fn two_attempts_at_once_are_an_overlap_and_touching_ones_are_not() {
        let a = ended(SLOT, 1, "a:1", "finished", (SLOT, SLOT + 5 * MIN));
        let b = ended(
            SLOT + MIN,
            1,
            "b:2",
            "finished",
            (SLOT + 2 * MIN, SLOT + 3 * MIN),
        );
        let c = ended(
            SLOT + 5 * MIN,
            1,
            "c:3",
            "finished",
            (SLOT + 5 * MIN, SLOT + 6 * MIN),
        );
        let t = build(
            "j",
            Layout::Lease,
            None,
            vec![a, b, c],
            window(),
            10_000,
            true,
        );
        assert_eq!(t.overlaps.len(), 1, "{:?}", t.overlaps);
        let o = &t.overlaps[0];
        assert_eq!(
            (o.from, o.to, o.certain),
            (SLOT + 2 * MIN, SLOT + 3 * MIN, true)
        );
        assert_eq!(o.attempts[0].host, "a");
        assert_eq!(o.attempts[1].host, "b");
        assert!(t.slots[0].attempts[0].overlapping && t.slots[1].attempts[0].overlapping);
        assert!(!t.slots[2].attempts[0].overlapping);
        assert_eq!((t.summary.overlaps, t.summary.possible_overlaps), (1, 0));
    }

    #[test]
    fn an_expired_lease_bounds_a_run_in_progress_and_a_recorded_expiry_is_only_possible() {
        let w = window();
        let hung = Seen {
            slot: SLOT,
            attempt: Some(1),
            runner: "a:1".into(),
            status: "running".into(),
            claimed_at: Some(SLOT),
            ended_at: None,
            lease_end: Some(SLOT + MIN),
            result: serde_json::Value::Null,
            manual: false,
        };
        // Claimed after the hung run's lease ended: no overlap.
        let after = ended(
            SLOT + 2 * MIN,
            1,
            "b:2",
            "finished",
            (SLOT + 2 * MIN, SLOT + 3 * MIN),
        );
        // An attempt recorded interrupted late, whose span covers another run.
        let recorded = with(
            ended(
                SLOT + 4 * MIN,
                1,
                "c:3",
                "interrupted",
                (SLOT + 4 * MIN, SLOT + 9 * MIN),
            ),
            json!({"reason": "lease expired"}),
        );
        let inside = ended(
            SLOT + 5 * MIN,
            1,
            "d:4",
            "finished",
            (SLOT + 5 * MIN, SLOT + 6 * MIN),
        );
        let t = build(
            "j",
            Layout::Lease,
            None,
            vec![hung, after, recorded, inside],
            w,
            10_000,
            true,
        );
        assert_eq!(t.slots[0].attempts[0].outcome, Outcome::Expired);
        assert_eq!(t.slots[0].attempts[0].end(SLOT, w.now), w.now);
        assert_eq!(t.overlaps.len(), 1, "{:?}", t.overlaps);
        assert!(!t.overlaps[0].certain);
        assert_eq!((t.summary.overlaps, t.summary.possible_overlaps), (0, 1));
    }

    #[test]
    fn slots_with_nothing_in_the_window_are_left_out() {
        let w = window();
        let before = ended(
            SLOT - 60 * MIN,
            1,
            "a:1",
            "finished",
            (SLOT - 60 * MIN, SLOT - 59 * MIN),
        );
        // An old slot caught up inside the window shows.
        let caught_up = ended(SLOT - 50 * MIN, 1, "a:1", "finished", (SLOT, SLOT + MIN));
        let t = build(
            "j",
            Layout::Lease,
            None,
            vec![before, caught_up],
            w,
            10_000,
            true,
        );
        assert_eq!(t.slots.len(), 1);
        assert_eq!(t.slots[0].slot, SLOT - 50 * MIN);
        assert!(t.slots[0].late);
    }
}
