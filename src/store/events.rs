//! A job's events, as `kubectl describe` shows them: what happened to its runs (claimed, taken
//! over from which host, ended, skipped and why, superseded, released or replaced by whom) and
//! what operators did to it (release, pause, resume, run-now, trim, migrate), with who, when and
//! why.
//!
//! The two halves are kept differently, on purpose:
//!
//! - **Run events are not stored again.** Every claim outcome that changes a run is already
//!   recorded, atomically by the script that decided it, in the run's `:results` members (an
//!   attempt's claim and end, its runner, a takeover's `interrupted` member of the attempt before,
//!   a skip's reason, `superseded_by`, `released_by`, `replaced_by`) and in the runs in progress.
//!   [`run_events`] reads them back as events. A second record written beside them would cost
//!   every run a write (the server cost per run is unchanged by events) and could disagree with
//!   the first.
//! - **Operator actions are stored**, because nothing else records who did them: one entry per
//!   action in `{<prefix><job>}:events` ([`events_key`]), a stream whose entry ID is the server's
//!   time of the write, capped at [`KEPT`] entries (`XADD ... MAXLEN`), like history bounded by
//!   count. Both store formats and both layouts keep it under the same name; format 1 readers (the
//!   seed's RedisBackend) never read it, as they never read `:job` or `:registry`.
//!   docs/store-format.md, "Events".

use redis::Value;
use serde::Serialize;

use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::store::attempt::{Attempt, Outcome};
pub use crate::store::names::events_key;

/// How many operator actions a job's events stream keeps (the oldest go first).
pub const KEPT: usize = 100;

/// Where an event comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// A claimant's claim, end or skip of a run (read from the run's records).
    Run,
    /// An operator's command (read from the job's events stream).
    Operator,
}

/// One event of a job.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Event {
    /// When it happened, ms by the server's clock.
    pub at: i64,
    /// `at` as RFC 3339.
    pub at_time: String,
    pub source: Source,
    /// What happened. Runs: `claimed`, `took_over`, `finished`, `failed`, `handed_over` (its
    /// holder shut down and gave the run up: a deploy), `lease_expired` (also a
    /// status another writer recorded that this version does not know, said in `detail`),
    /// `superseded`, `released`, `replaced`, `skipped`. Operators: the command (`release`,
    /// `pause`, `resume`, `run-now`, `trim`, `migrate`).
    pub event: String,
    /// The run it is about, if one.
    pub slot: Option<i64>,
    /// `slot` as RFC 3339.
    pub slot_time: Option<String>,
    pub attempt: Option<u32>,
    /// Who: the runner (`host:pid`) of a run's event, `user@host:pid` of an operator's.
    pub by: String,
    /// Why, where it was said: a skip's or release's reason, an operator's `--reason`.
    pub reason: Option<String>,
    /// What else is known, in words: `late by 2m 5s`, `from host-a:12 (lease expired)`, `exit 3`,
    /// `by the run of 2026-12-02T14:10:00Z`, an operator action's outcome.
    pub detail: String,
}

impl Event {
    fn run(at: i64, event: &str, slot: i64, attempt: Option<u32>, by: &str) -> Self {
        Event {
            at,
            at_time: crate::time::rfc3339(at),
            source: Source::Run,
            event: event.to_string(),
            slot: Some(slot),
            slot_time: Some(crate::time::rfc3339(slot)),
            attempt,
            by: by.to_string(),
            reason: None,
            detail: String::new(),
        }
    }
}

/// An operator's action, as recorded (the time is the server's, given by the entry's ID).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Action {
    /// The command: `release`, `pause`, `resume`, `run-now`, `trim`, `migrate`.
    pub action: String,
    /// `user@host:pid` (or `--by`).
    pub by: String,
    pub reason: Option<String>,
    pub slot: Option<i64>,
    /// What it did, in words (`released attempt 2 of host-a:41 (its holder stopped)`).
    pub detail: String,
    /// A replica's answer to a run-now request it did not run (`overlap`, `paused`): the
    /// requester's exit code.
    pub outcome: Option<String>,
}

impl Action {
    pub fn new(action: &str, by: &str, reason: Option<&str>, detail: impl Into<String>) -> Self {
        Action {
            action: action.to_string(),
            by: by.to_string(),
            reason: reason.filter(|r| !r.is_empty()).map(str::to_string),
            slot: None,
            detail: detail.into(),
            outcome: None,
        }
    }

    pub fn with_outcome(mut self, outcome: &str) -> Self {
        self.outcome = Some(outcome.to_string());
        self
    }

    pub fn at_slot(mut self, slot: i64) -> Self {
        self.slot = Some(slot);
        self
    }

    /// The `XADD` that records it: the server stamps the entry with its own time, and the stream
    /// keeps the newest [`KEPT`] (exact `MAXLEN`: a stream of 100 entries trims one per add).
    pub fn command(&self, key: &str) -> redis::Cmd {
        let mut cmd = redis::cmd("XADD");
        cmd.arg(key)
            .arg("MAXLEN")
            .arg(KEPT)
            .arg("*")
            .arg("action")
            .arg(&self.action)
            .arg("by")
            .arg(&self.by);
        if let Some(reason) = &self.reason {
            cmd.arg("reason").arg(reason);
        }
        if let Some(slot) = self.slot {
            cmd.arg("slot").arg(slot);
        }
        cmd.arg("detail").arg(&self.detail);
        if let Some(outcome) = &self.outcome {
            cmd.arg("outcome").arg(outcome);
        }
        cmd
    }
}

/// Records an operator's action in `job`'s events. The action has been done by then: a failure
/// to record it is said on stderr as a warning and does not undo or fail the action (an audit
/// that cannot be written must not turn a release that happened into one that seems not to have).
pub async fn record(conn: &mut Connection, prefix: &str, job: &str, action: &Action) {
    let key = events_key(prefix, job);
    if let Err(e) = conn.query::<Value>(&action.command(&key)).await {
        crate::errln!(
            "warning: {} of {job} was done, but its entry in the job's events ({key}) could not be written: {e}",
            action.action
        );
    }
}

/// The newest `count` operator actions of a job, newest first (an absent key: none).
pub async fn read_actions(
    conn: &mut Connection,
    prefix: &str,
    job: &str,
    count: usize,
) -> Result<Vec<Event>> {
    let key = events_key(prefix, job);
    let value: Value = match conn
        .query(
            redis::cmd("XREVRANGE")
                .arg(&key)
                .arg("+")
                .arg("-")
                .arg("COUNT")
                .arg(count.max(1)),
        )
        .await
    {
        Err(e) if e.to_string().contains("WRONGTYPE") => {
            return Err(Error::corrupt(
                &key,
                "is not a stream: the job's events cannot be read (another program wrote it)",
            ));
        }
        read => read?,
    };
    decode_actions(&key, value)
}

/// The replies of `XREVRANGE` on an events stream, as events.
pub fn decode_actions(key: &str, value: Value) -> Result<Vec<Event>> {
    let entries: redis::streams::StreamRangeReply = redis::FromRedisValue::from_redis_value(value)
        .map_err(|e| Error::corrupt(key, format!("not a stream of events ({e})")))?;
    entries
        .ids
        .into_iter()
        .map(|entry| {
            let at = entry
                .id
                .split_once('-')
                .and_then(|(ms, _)| ms.parse::<i64>().ok())
                .ok_or_else(|| {
                    Error::corrupt(key, format!("entry ID {} is not a time", entry.id))
                })?;
            let text = |field: &str| -> Option<String> {
                entry
                    .map
                    .get(field)
                    .and_then(|v| redis::FromRedisValue::from_redis_value(v.clone()).ok())
            };
            let slot = text("slot").and_then(|s| s.parse().ok());
            Ok(Event {
                at,
                at_time: crate::time::rfc3339(at),
                source: Source::Operator,
                event: text("action").unwrap_or_else(|| "unknown".to_string()),
                slot,
                slot_time: slot.map(crate::time::rfc3339),
                attempt: None,
                by: text("by").unwrap_or_default(),
                reason: text("reason"),
                detail: text("detail").unwrap_or_default(),
            })
        })
        .collect()
}

/// The events of a job's runs, read back from what the claim scripts recorded: its attempts,
/// ended or in progress, in any order; a first claim more than `late_after` ms after its slot is
/// said to be late ([`crate::store::attempt::late_after_ms`]). Each attempt gives its claim (`claimed`, or `took_over`
/// for an attempt after the first) and, once ended, its end; a skip gives `skipped`. Oldest
/// first.
pub fn run_events(attempts: &[Attempt], late_after: i64) -> Vec<Event> {
    let mut events = Vec::new();
    // Who held each attempt, to say whom a takeover took the run from, and whether they handed
    // it over (a deploy) or their lease expired (a crash, a stall).
    let holder = |slot: i64, attempt: u32| -> Option<(&str, bool)> {
        attempts
            .iter()
            .find(|r| r.slot == slot && r.number() == attempt)
            .map(|r| {
                let handed = r
                    .ended_at
                    .is_some_and(|at| r.outcome(at) == Outcome::HandedOver);
                (r.runner.as_str(), handed)
            })
    };
    for r in attempts {
        let attempt = r.number();
        if r.status == "skipped" {
            let mut e = Event::run(
                r.ended_at.or(r.claimed_at).unwrap_or(r.slot),
                "skipped",
                r.slot,
                None,
                &r.runner,
            );
            e.reason = reason_of(&r.result);
            events.push(e);
            continue;
        }
        if let Some(at) = r.claimed_at {
            let event = if attempt > 1 { "took_over" } else { "claimed" };
            let mut e = Event::run(at, event, r.slot, Some(attempt), &r.runner);
            let mut words = Vec::new();
            if attempt > 1 {
                match holder(r.slot, attempt - 1) {
                    Some((from, true)) => {
                        words.push(format!("from {from}, which handed it over"));
                    }
                    Some((from, false)) => words.push(format!("from {from}, whose lease expired")),
                    None => words.push("after its lease expired".to_string()),
                }
            }
            if r.manual {
                words.push("manual run".to_string());
            } else if r.is_late(late_after) {
                words.push(format!(
                    "late by {}",
                    crate::time::humanize(u64::try_from(at - r.slot).unwrap_or(0))
                ));
            }
            e.detail = words.join(", ");
            events.push(e);
        }
        if let Some(at) = r.ended_at {
            events.push(end_event(r, attempt, at));
        }
    }
    events.sort_by_key(order);
    events
}

/// Events in the order they happened: by time, then, at one instant, a run's attempts in turn
/// (an expired attempt's end before the takeover's claim), a claim before its end.
fn order(e: &Event) -> (i64, Option<i64>, Option<u32>, u8) {
    (e.at, e.slot, e.attempt, end_rank(&e.event))
}

/// A claim sorts before an end at the same instant.
fn end_rank(event: &str) -> u8 {
    u8::from(!matches!(event, "claimed" | "took_over"))
}

/// The event an ended attempt's member says: its [`Outcome`], as every view judges it.
fn end_event(r: &Attempt, attempt: u32, at: i64) -> Event {
    let result = &r.result;
    let field = |name: &str| result.get(name).filter(|v| !v.is_null());
    let mut e = Event::run(at, "ended", r.slot, Some(attempt), &r.runner);
    e.reason = reason_of(result);
    match r.outcome(at) {
        Outcome::Replaced => {
            e.event = "replaced".into();
            e.by = text(field("released_by")).unwrap_or_else(|| r.runner.clone());
            e.detail = format!("attempt {attempt} of {}", r.runner);
        }
        Outcome::Released => {
            e.event = "released".into();
            e.by = text(field("released_by")).unwrap_or_default();
            e.detail = format!("attempt {attempt} of {}, recorded {}", r.runner, r.status);
        }
        Outcome::Superseded => {
            e.event = "superseded".into();
            e.detail = match field("superseded_by").and_then(|v| v.as_i64()) {
                Some(slot) => format!("by the run of {}", crate::time::rfc3339(slot)),
                None => "by a newer run".to_string(),
            };
        }
        Outcome::Finished | Outcome::Failed => {
            e.event = r.status.clone();
            e.detail = command_words(result);
        }
        Outcome::HandedOver => {
            e.event = "handed_over".into();
            // Why: `shutdown` (the member's reason, `handed over`, is the event's name).
            e.reason = text(field("why"));
            e.detail = format!("attempt {attempt} of {}, recorded {}", r.runner, r.status);
        }
        // Interrupted (its lease expired), or a status another writer recorded that this build
        // does not know (judged interrupted too, with the status said).
        _ => {
            e.event = "lease_expired".into();
            // The member's reason is the event's name.
            e.reason = e.reason.filter(|r| r != "lease expired");
            e.detail = match r.status.as_str() {
                "interrupted" => format!("attempt {attempt} of {}", r.runner),
                other => format!("attempt {attempt} of {}, recorded {other}", r.runner),
            };
        }
    }
    e
}

fn text(value: Option<&serde_json::Value>) -> Option<String> {
    value.map(|v| match v.as_str() {
        Some(s) => s.to_string(),
        None => v.to_string(),
    })
}

/// A result's `reason`, if it says one.
fn reason_of(result: &serde_json::Value) -> Option<String> {
    result
        .get("reason")
        .and_then(|r| r.as_str())
        .map(str::to_string)
}

/// How a command ended, in words (`exit 3 after 1.5s`, `signal 9`, `timed out`); empty for a
/// result that is not a command's.
fn command_words(result: &serde_json::Value) -> String {
    let took = result
        .get("duration_ms")
        .and_then(|d| d.as_u64())
        .map(|ms| format!(" after {}", crate::time::humanize(ms)))
        .unwrap_or_default();
    crate::store::attempt::command_end(result).map_or(String::new(), |end| end + &took)
}

/// Run events and operator actions together, newest first, at most `count`.
pub fn newest_first(mut events: Vec<Event>, actions: Vec<Event>, count: usize) -> Vec<Event> {
    events.extend(actions);
    events.sort_by_key(|e| std::cmp::Reverse(order(e)));
    events.truncate(count);
    events
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::store::read::ResultEntry;

    const LATE: i64 = 60_000;

    fn ended(
        slot: i64,
        attempt: u32,
        runner: &str,
        status: &str,
        claimed: i64,
        end: i64,
        result: serde_json::Value,
    ) -> ResultEntry {
        ResultEntry {
            slot,
            attempt: Some(attempt),
            token: format!("t{attempt}"),
            runner: runner.into(),
            status: status.into(),
            claimed_at: Some(claimed),
            ended_at: Some(end),
            result,
            kind: None,
            fence: None,
        }
    }

    #[test]
    fn a_takeover_says_whom_it_took_the_run_from() {
        let slot = 1_000_000;
        let results = [
            ended(
                slot,
                1,
                "a:1",
                "interrupted",
                slot + 10,
                slot + 40_000,
                json!({"reason":"lease expired"}),
            ),
            ended(
                slot,
                2,
                "b:2",
                "finished",
                slot + 40_000,
                slot + 41_000,
                json!({"exit_code":0,"duration_ms":1000}),
            ),
        ];
        let attempts: Vec<Attempt> = results.iter().cloned().map(Attempt::from).collect();
        let events = run_events(&attempts, LATE);
        let words: Vec<(&str, &str, &str)> = events
            .iter()
            .map(|e| (e.event.as_str(), e.by.as_str(), e.detail.as_str()))
            .collect();
        assert_eq!(
            words,
            [
                ("claimed", "a:1", ""),
                ("lease_expired", "a:1", "attempt 1 of a:1"),
                ("took_over", "b:2", "from a:1, whose lease expired"),
                ("finished", "b:2", "exit 0 after 1s"),
            ]
        );
    }

    #[test]
    fn skips_releases_replacements_and_supersessions_say_why_and_who() {
        let s = 10_000_000;
        let results = [
            ended(
                s,
                0,
                "c:3",
                "skipped",
                s + 5,
                s + 5,
                json!({"reason":"--catch-up-policy latest"}),
            ),
            ended(
                s + 1,
                1,
                "a:1",
                "interrupted",
                s + 1,
                s + 9,
                json!({"released_by":"ops@x:9","reason":"hung"}),
            ),
            ended(
                s + 2,
                1,
                "a:1",
                "interrupted",
                s + 2,
                s + 9,
                json!({"released_by":"b:2","reason":"replaced by X (--overlap replace)","replaced_by": s + 3}),
            ),
            ended(
                s + 4,
                1,
                "a:1",
                "interrupted",
                s + 4,
                s + 9,
                json!({"reason":"lease expired","superseded_by": s + 5}),
            ),
            ended(
                s + 6,
                1,
                "a:1",
                "failed",
                s + 6 + LATE + 1,
                s + 6 + LATE + 1 + 1,
                json!({"exit_code":3}),
            ),
        ];
        let attempts: Vec<Attempt> = results.iter().cloned().map(Attempt::from).collect();
        let events = run_events(&attempts, LATE);
        let find = |event: &str| events.iter().find(|e| e.event == event).unwrap();
        assert_eq!(
            find("skipped").reason.as_deref(),
            Some("--catch-up-policy latest")
        );
        assert_eq!(find("released").by, "ops@x:9");
        assert_eq!(find("released").reason.as_deref(), Some("hung"));
        assert_eq!(find("replaced").by, "b:2");
        assert!(find("superseded").detail.starts_with("by the run of "));
        assert_eq!(find("failed").detail, "exit 3");
        let late = events
            .iter()
            .find(|e| e.slot == Some(s + 6) && e.event == "claimed")
            .unwrap();
        assert_eq!(late.detail, "late by 1m");
    }
}
