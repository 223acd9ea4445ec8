//! What a run left behind (`anarchon logs`, and top's logs view, which calls this rather than
//! running `anarchon logs`): the ended attempts a selection picks, and each attempt in the lines a
//! person reads (its end, and the stored stderr tail).

use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::output::Output;
use crate::store::JobKeys;
use crate::store::history::{HistoryEntry, HistoryFilter, read_history};
use crate::time::humanize;

/// Which ended attempts of a job to read.
#[derive(Debug, Clone, Copy, Default)]
pub struct Selection {
    /// Every ended attempt of this run (ms).
    pub slot: Option<i64>,
    /// The newest N ended attempts, whatever their status.
    pub last: Option<u64>,
}

/// A failed attempt, or an interrupted one that `--overlap replace` did not stop on purpose and
/// no deploy handed over (planned stops, not failures).
fn is_failure(e: &HistoryEntry) -> bool {
    match e.status.as_str() {
        "failed" => true,
        "interrupted" => {
            !crate::store::read::replaced(&e.status, &e.result)
                && !crate::store::state::handed_over(&e.status, &e.result)
        }
        _ => false,
    }
}

/// The ended attempts `selection` picks, newest first; the newest failure when it picks none
/// (NotFound, with a hint, when there is nothing to show).
pub async fn read(
    conn: &mut Connection,
    keys: &JobKeys,
    job: &str,
    selection: Selection,
    now: i64,
) -> Result<Vec<HistoryEntry>> {
    let Selection { slot, last } = selection;
    let newest_failure = slot.is_none() && last.is_none();
    let filter = HistoryFilter {
        since: slot,
        status: None,
        last: match (slot, last) {
            (Some(_), _) => 10_000,
            (None, Some(n)) => n as usize,
            // The whole history (about 1000 runs by default) to find the newest failure.
            (None, None) => 10_000,
        } + 1,
    };
    let mut entries: Vec<HistoryEntry> = read_history(conn, keys, &filter, now)
        .await?
        .into_iter()
        .filter(|e| e.status != "running")
        .filter(|e| slot.is_none_or(|s| e.slot == s))
        .filter(|e| !newest_failure || is_failure(e))
        .collect();
    entries.truncate(if slot.is_some() {
        usize::MAX
    } else {
        last.unwrap_or(1) as usize
    });
    if entries.is_empty() {
        return Err(Error::NotFound(
            match slot {
                Some(s) => format!(
                    "{} @ {} has no ended attempt\n  hint: `anarchon history {}` lists its runs",
                    job,
                    crate::time::rfc3339(s),
                    job
                ),
                None if last.is_none() => format!(
                    "{} has no failed or interrupted run in its history\n  hint: `anarchon logs {} --last 5` shows the newest attempts whatever their status",
                    job, job
                ),
                None => format!("{} has no ended attempt", job),
            }
            .into(),
        ));
    }
    Ok(entries)
}

/// One attempt in the lines a person reads: how it ended (status painted as `out` says), who
/// released it, and what it left on stdout and stderr.
pub fn lines(out: &Output, job: &str, e: &HistoryEntry, now: i64) -> Vec<String> {
    let mut lines = Vec::new();
    macro_rules! push {
        ($($arg:tt)*) => {
            lines.push(format!($($arg)*))
        };
    }

    let r = &e.result;
    let how = match (
        r.get("exit_code").and_then(|v| v.as_i64()),
        r.get("signal").and_then(|v| v.as_i64()),
    ) {
        _ if r.get("timed_out").and_then(|v| v.as_bool()) == Some(true) => {
            "timed out (--timeout)".to_string()
        }
        (Some(code), _) => format!("exit {code}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => match r.get("reason").and_then(|v| v.as_str()) {
            Some(reason) => reason.to_string(),
            None => String::new(),
        },
    };
    let took = e.duration_ms.map_or(String::new(), |d| {
        format!(" after {}", humanize(d.max(0) as u64))
    });
    push!(
        "{} @ {}, attempt {} on {}: {}{}{took}, ended {}",
        job,
        e.slot_time,
        e.attempt.map_or("-".to_string(), |a| a.to_string()),
        e.runner,
        out.paint(&e.status, crate::output::status_tone(&e.status)),
        if how.is_empty() {
            String::new()
        } else {
            format!(", {how}")
        },
        out.when(e.ended_at, now),
    );
    for (key, label) in [
        ("spawn_error", "could not start"),
        ("released_by", "released by"),
    ] {
        if let Some(v) = r.get(key).and_then(|v| v.as_str()) {
            push!("  {label}: {v}");
        }
    }
    if r.get("lease_lost").and_then(|v| v.as_bool()) == Some(true) {
        push!("  the lease was lost while it ran");
    }
    // Kept only with `run --keep-stdout`.
    if let Some(tail) = r.get("stdout_tail").and_then(|v| v.as_str()) {
        push!("  stdout (its last 4 KiB):");
        for line in tail.lines() {
            push!("    {line}");
        }
    }
    match r.get("stderr_tail").and_then(|v| v.as_str()) {
        Some(tail) if !tail.is_empty() => {
            push!("  stderr (its last 4 KiB):");
            for line in tail.lines() {
                push!("    {line}");
            }
        }
        _ if r.is_object() && (r.get("exit_code").is_some() || r.get("signal").is_some()) => {
            push!("  (no stderr)")
        }
        _ if !r.is_null() && r.get("reason").is_none() => push!("  result: {r}"),
        _ => {}
    }
    lines
}
