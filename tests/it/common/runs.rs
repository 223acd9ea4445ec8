//! The one judgement of how a scheduled slot ended, from what the command itself did (its copies,
//! `common::ticker`) against what the store records of the slot. A soak and a fault test ask it
//! slot by slot, and fail on its defects; what they may excuse (a skip, a fault) they decide
//! themselves, narrowly, from what they did to the fleet.

use crate::common::ticker::Copy;
use anarchon::store::read::ResultEntry;

/// How a slot ended when nothing is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// One attempt ran to its end (finished or failed), its command's log backs it, and no copy
    /// ran after it.
    Ran,
    /// No copy of the command ran for it, and a record says it was skipped, with its reason (the
    /// caller judges whether one host alone would have written that reason).
    Skipped(String),
    /// Its run was ended by a policy or an operator (replaced, released, no permit): what.
    ByPolicy(&'static str),
}

/// How a slot ended whose command ran to its end but whose record, its holder cut off, was then
/// ended by a newer run (`superseded_by`): ran, by the command's log; lost, by `check`, which
/// cannot know better from the store.
pub const SUPERSEDED_AFTER_ITS_END: &str =
    "superseded after its command ran to its end (unrecorded)";

/// A slot the checker cannot call ended: what is there. A run lost, unless the caller can pin it
/// on a fault it dealt (only an attempt the store says was interrupted can be).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unended(pub String);

fn is_ended(r: &ResultEntry) -> bool {
    r.status == "finished" || r.status == "failed"
}

/// A failed attempt whose retry was due (`--retries`): it ended, the slot's run did not (unless
/// its retry never ran).
fn retried(r: &ResultEntry) -> bool {
    r.retry_due().is_some()
}

fn describe(records: &[&ResultEntry]) -> Vec<String> {
    records
        .iter()
        .map(|r| {
            format!(
                "{} #{} by {} ({})",
                r.status,
                r.attempt.map_or("-".into(), |a| a.to_string()),
                r.runner,
                r.result
            )
        })
        .collect()
}

/// Judges one slot: `records` are the store's results of it, `copies` the command's copies that
/// were run for it (labelled `<slot>/<attempt>`).
///
/// A defect (two copies given one attempt, a copy after a completed one, a copy under a skip, two
/// ended records, an ended record no completed copy backs) is `Err(Ok(defect))`; a slot with no
/// end is `Err(Err(Unended))`, for the caller to excuse or count lost.
pub fn judge_slot(
    records: &[&ResultEntry],
    copies: &[&Copy],
) -> Result<Ended, Result<String, Unended>> {
    let defect = |what: String| {
        Err(Ok(format!(
            "{what}; copies {copies:?}; recorded {:?}",
            describe(records)
        )))
    };
    // Each attempt is one copy of the command, and nothing runs after a copy that completed.
    for (i, c) in copies.iter().enumerate() {
        if let Some(twin) = copies[..i].iter().find(|o| o.label == c.label) {
            return defect(format!(
                "attempt {:?} was run by two copies ({} and {})",
                c.label, twin.id, c.id
            ));
        }
        // A copy that ran to its end, but whose holder could not record it (killed, stopped or
        // cut off just then), ends `interrupted` when its lease runs out, and the next attempt
        // runs the slot again: the lease's design, which the caller pins on a fault it dealt
        // ([`reruns_after_an_unrecorded_end`]). After an end the store recorded, it is a defect.
        // A copy that failed and was given a retry (`--retries`: its record says when) is
        // followed by the retry's: after it, and not before the retry was due.
        if let Some(done) = copies[..i].iter().find(|o| {
            o.completed
                && o.last <= c.first
                && !records.iter().any(|r| {
                    r.attempt == o.attempt()
                        && (r.status == "interrupted"
                            || r.retry_due().is_some_and(|due| c.first >= due - 100))
                })
        }) {
            return defect(format!(
                "{} ran again after {} had run to its end",
                c.id, done.id
            ));
        }
        // A copy is an attempt the store knows of, never one it says was skipped.
        let of_attempt: Vec<&&ResultEntry> = records
            .iter()
            .filter(|r| r.attempt.is_some() && r.attempt == c.attempt())
            .collect();
        if of_attempt.iter().any(|r| r.status == "skipped")
            || (!records.is_empty() && records.iter().all(|r| r.status == "skipped"))
        {
            return defect(format!("{} ran under a skipped record", c.id));
        }
    }
    // A failed attempt that was retried ended no run: the slot's end is a later attempt's.
    let later = |r: &ResultEntry| records.iter().any(|o| o.attempt > r.attempt);
    let ended: Vec<&&ResultEntry> = records
        .iter()
        .filter(|r| is_ended(r) && !(retried(r) && later(r)))
        .collect();
    if ended.len() > 1 {
        return defect(format!("recorded ended {} times", ended.len()));
    }
    if let Some(r) = ended.first().filter(|r| retried(r)) {
        // Its retry never ran: the run was ended while it waited (released, superseded by a newer
        // run, or abandoned when nobody took it over): a run lost unless the caller pins it on
        // what it did to the fleet.
        return Err(Err(Unended(format!(
            "failed #{:?} and its retry, due at {:?}, never ran; copies {copies:?}",
            r.attempt,
            r.retry_due()
        ))));
    }
    if let Some(r) = ended.first() {
        let backed = copies
            .iter()
            .any(|c| c.attempt() == r.attempt && (c.completed || r.status == "failed"));
        if !backed {
            return defect(format!(
                "recorded {} #{:?} but no copy of that attempt ran{}",
                r.status,
                r.attempt,
                if r.status == "finished" {
                    " to its end"
                } else {
                    ""
                }
            ));
        }
        return Ok(Ended::Ran);
    }
    if copies.is_empty()
        && let Some(r) = records.iter().find(|r| r.status == "skipped")
    {
        let reason = r.result["reason"].as_str().unwrap_or_default().to_string();
        return Ok(Ended::Skipped(reason));
    }
    for r in records.iter().filter(|r| r.status == "interrupted") {
        for (field, why) in [
            ("replaced_by", "replaced (--overlap replace)"),
            // (Not `superseded_by`: a newer run ended it because nobody had taken it over, its
            // command never ran to an end, and its attempts left were never given: a run lost,
            // for the caller to pin on what it did to the fleet, as `check` counts it.)
            ("released_by", "released by the operator"),
            // Won, but its --limit had no room (the caller checks that the runs it names held
            // the permits then).
            ("limit", "no permit (its limit was full)"),
        ] {
            if r.result.get(field).is_some() {
                return Ok(Ended::ByPolicy(why));
            }
        }
        // Superseded after its command ran to its end, its holder cut off before it could record
        // that end: the run happened (the command's own log says so), though the store, which
        // cannot know, has it interrupted and `check` counts it lost. (Without such a copy it is
        // a run lost, above.)
        if r.result.get("superseded_by").is_some()
            && copies
                .iter()
                .any(|c| c.attempt() == r.attempt && c.completed)
        {
            return Ok(Ended::ByPolicy(SUPERSEDED_AFTER_ITS_END));
        }
    }
    if records.is_empty() {
        return Err(Err(Unended(format!(
            "no record at all: never claimed, never skipped; copies {copies:?}"
        ))));
    }
    Err(Err(Unended(format!(
        "{:?}: nobody finished it; copies {copies:?}",
        describe(records)
    ))))
}

/// The copies of a slot that ran to their end while the store recorded their attempt
/// `interrupted`, with a later copy after them: runs again that only a fault of the holder (a
/// kill, a stop, a cut network just as the command ended) can explain. The caller checks that one
/// of its faults does.
pub fn reruns_after_an_unrecorded_end<'a>(
    records: &[&ResultEntry],
    copies: &[&'a Copy],
) -> Vec<(&'a Copy, String)> {
    copies
        .iter()
        .filter(|o| o.completed && copies.iter().any(|c| o.last <= c.first))
        .filter_map(|o| {
            let r = records
                .iter()
                .find(|r| r.attempt == o.attempt() && r.status == "interrupted")?;
            Some((*o, r.runner.clone()))
        })
        .collect()
}

/// One name of a job (a rename keeps earlier ones, `--was`): the store's records of a slot under
/// it, and the copies that ran under it (labelled `<job>@<slot>/<attempt>`).
pub struct Named<'a> {
    pub job: &'a str,
    pub records: Vec<&'a ResultEntry>,
    pub copies: Vec<&'a Copy>,
}

/// Whether a skip under a new name was written by the rename's own step (the slot taken under an
/// old name): "ran as OLD, its old name (...)", "skipped under OLD, its old name", or an overlap
/// of the run "under OLD, its old name". Returns OLD.
pub fn lineage_skip(record: &ResultEntry) -> Option<String> {
    if record.status != "skipped" {
        return None;
    }
    old_name_of(record.result["reason"].as_str()?)
}

/// OLD, of a skip reason the rename's own step writes: "ran as OLD, its old name (...)",
/// "skipped under OLD, its old name" (not an overlap policy's, which names a run).
fn old_name_of(reason: &str) -> Option<String> {
    if reason.starts_with("--overlap") {
        return None; // an overlap policy's skip: the caller checks the run it names
    }
    let (before, _) = reason.split_once(", its old name")?;
    let old = before
        .rsplit_once(" as ")
        .or_else(|| before.rsplit_once(" under "))?
        .1;
    Some(old.to_string())
}

/// Judges one slot of a job that ran under several names (a rolling deploy that renamed it): each
/// name by [`judge_slot`], without the records the rename's own steps wrote (the old name's
/// `finished` `{"handed_to": NEW}`, the new name's skip for a slot taken under the old one, each
/// checked against the other name), and then the slot as a whole: it ran under one name at most,
/// and no copy ran, under any name, after an end the store recorded under another.
pub fn judge_slot_across_names(named: &[Named]) -> Result<Ended, Result<String, Unended>> {
    let defect = |what: String| Err(Ok(what));
    let mut outcomes = Vec::new();
    for n in named {
        let mut own: Vec<&ResultEntry> = Vec::new();
        if !n.copies.is_empty() && n.records.iter().any(|r| lineage_skip(r).is_some()) {
            return defect(format!(
                "{:?} ran under {}, which skipped it as taken under an old name",
                n.copies, n.job
            ));
        }
        for r in &n.records {
            if let Some(to) = r.result.get("handed_to").and_then(|t| t.as_str()) {
                // Handed to its new name: that name decided it (an attempt, or a skip it
                // recorded: the old name's claim ends `finished` once the new name's claim of the
                // slot is decided, whether it ran the slot or skipped it).
                let taken = named.iter().any(|m| m.job == to && !m.records.is_empty());
                // Skipped by the new name where its store keeps no skip (format 1): the reason is
                // in this record, for the caller to judge, and no copy ran under the new name.
                if let Some(reason) = r.result.get("skipped").and_then(|s| s.as_str())
                    && !taken
                    && named.iter().all(|m| m.job != to || m.copies.is_empty())
                {
                    // "ran as OLD, its old name (...)": the new name deferred to OLD's records,
                    // which decide the slot (judged under OLD, below), not this skip.
                    let deferred = old_name_of(reason).is_some_and(|old| {
                        named.iter().any(|m| m.job == old && !m.records.is_empty())
                    });
                    if !deferred {
                        outcomes.push((n.job, Ok(Ended::Skipped(reason.to_string()))));
                    }
                    continue;
                }
                if !taken {
                    return defect(format!(
                        "{} recorded it handed to {to}, which has no attempt of it",
                        n.job
                    ));
                }
                continue;
            }
            if let Some(old) = lineage_skip(r) {
                // Taken under the old name: the old name has an attempt of it, or skipped it.
                let there = named.iter().any(|m| m.job == old && !m.records.is_empty());
                if !there {
                    return defect(format!(
                        "{} skipped it as taken under {old}, which has no record of it",
                        n.job
                    ));
                }
                continue;
            }
            own.push(r);
        }
        if own.is_empty() && n.copies.is_empty() {
            continue;
        }
        match judge_slot(&own, &n.copies) {
            Err(Ok(d)) => return defect(format!("under {}: {d}", n.job)),
            other => outcomes.push((n.job, other)),
        }
    }
    // No copy after an end recorded under another name (but the retry of a failed attempt, not
    // before it was due: a renamed job's replica takes an old name's pending retry over and runs
    // it under the new name).
    for n in named {
        for o in n.copies.iter().filter(|o| o.completed) {
            let ended = n.records.iter().find(|r| {
                r.attempt == o.attempt()
                    && (r.status == "finished" || r.status == "failed")
                    && r.result.get("handed_to").is_none()
            });
            let Some(ended) = ended else {
                continue;
            };
            let retry_due = ended.retry_due();
            for m in named.iter().filter(|m| m.job != n.job) {
                if let Some(c) = m
                    .copies
                    .iter()
                    .find(|c| o.last <= c.first && retry_due.is_none_or(|due| c.first < due - 100))
                {
                    return defect(format!(
                        "{c:?} ran under {} after {o:?} ran to its end under {}",
                        m.job, n.job
                    ));
                }
            }
        }
    }
    let ran: Vec<&str> = outcomes
        .iter()
        .filter(|(_, o)| *o == Ok(Ended::Ran))
        .map(|(j, _)| *j)
        .collect();
    if ran.len() > 1 {
        return defect(format!("ran under two names: {ran:?}"));
    }
    if !ran.is_empty() {
        return Ok(Ended::Ran);
    }
    if let Some((_, decided)) = outcomes.iter().find(|(_, o)| o.is_ok()) {
        return decided.clone();
    }
    match outcomes.into_iter().next() {
        Some((_, unended)) => unended,
        None if named.iter().any(|n| !n.records.is_empty()) => {
            // Only the rename's own records: each names the other, and nothing ran.
            Err(Err(Unended(
                "only a rename's records of it, and no copy ran".into(),
            )))
        }
        None => Err(Err(Unended(
            "no record at all: never claimed, never skipped".into(),
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(slot: i64, attempt: u32, status: &str, result: serde_json::Value) -> ResultEntry {
        ResultEntry {
            slot,
            attempt: Some(attempt),
            token: format!("t{attempt}"),
            runner: "h1".into(),
            status: status.into(),
            claimed_at: Some(slot),
            ended_at: Some(slot + 1_000),
            result,
            kind: None,
            fence: None,
        }
    }

    /// A new name's hand-over record that skipped the slot as "ran as OLD (interrupted)" defers
    /// to OLD's records: released there (an operator), the slot is decided by that; every
    /// attempt under OLD died, or a newer run superseded it, it is lost, whatever the skip says
    /// (the checker is not fooled).
    #[test]
    fn a_skip_that_defers_to_an_old_name_is_judged_by_the_old_name_s_records() {
        let slot = 1_000_000;
        let handed = record(
            slot,
            1,
            "finished",
            serde_json::json!({"handed_to": "c", "skipped": "ran as b, its old name (interrupted, by h2)"}),
        );
        let superseded = record(
            slot,
            1,
            "interrupted",
            serde_json::json!({"reason": "lease expired", "superseded_by": slot + 3_000}),
        );
        let died = record(
            slot,
            1,
            "interrupted",
            serde_json::json!({"reason": "lease expired"}),
        );
        let released = record(
            slot,
            1,
            "interrupted",
            serde_json::json!({"reason": "stuck", "released_by": "ops"}),
        );
        for (b, expected) in [
            (&released, Some(Ended::ByPolicy("released by the operator"))),
            (&superseded, None),
            (&died, None),
        ] {
            let named = [
                Named {
                    job: "a",
                    records: vec![&handed],
                    copies: vec![],
                },
                Named {
                    job: "b",
                    records: vec![b],
                    copies: vec![],
                },
                Named {
                    job: "c",
                    records: vec![],
                    copies: vec![],
                },
            ];
            match (judge_slot_across_names(&named), &expected) {
                (Ok(got), Some(want)) => assert_eq!(&got, want),
                (Err(Err(Unended(_))), None) => {}
                (other, _) => panic!("{b:?}: {other:?}, expected {expected:?}"),
            }
        }
    }
}
