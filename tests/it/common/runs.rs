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
    /// Its run was ended by a policy or an operator (replaced, superseded, released): what.
    ByPolicy(&'static str),
}

/// A slot the checker cannot call ended: what is there. A run lost, unless the caller can pin it
/// on a fault it dealt (only an attempt the store says was interrupted can be).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unended(pub String);

fn is_ended(r: &ResultEntry) -> bool {
    r.status == "finished" || r.status == "failed"
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
        if let Some(done) = copies[..i].iter().find(|o| {
            o.completed
                && o.last <= c.first
                && !records
                    .iter()
                    .any(|r| r.attempt == o.attempt() && r.status == "interrupted")
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
    let ended: Vec<&&ResultEntry> = records.iter().filter(|r| is_ended(r)).collect();
    if ended.len() > 1 {
        return defect(format!("recorded ended {} times", ended.len()));
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
            ("superseded_by", "superseded by a newer run"),
            ("released_by", "released by the operator"),
        ] {
            if r.result.get(field).is_some() {
                return Ok(Ended::ByPolicy(why));
            }
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
