//! The run `wait` and `logs -f` wait for: where it is, and what its end exits with.

use crate::error::{ExitStatus, Result};
use crate::store::JobKeys;
use crate::store::history::{HistoryEntry, HistoryFilter, read_history};

/// Where the awaited run is.
pub enum Seen {
    /// Not claimed yet, or in progress (running, or expired until a backup takes it over).
    Waiting(Option<HistoryEntry>),
    /// Ended: its newest attempt.
    Ended(HistoryEntry),
}

/// Reads the awaited run: the run of `slot`, or (the first time, `slot` None) the newest run in
/// progress, whose slot is then kept; with none in progress, the newest ended run.
pub async fn look(
    conn: &mut crate::connection::Connection,
    keys: &JobKeys,
    slot: &mut Option<i64>,
    now: i64,
) -> Result<Seen> {
    let filter = HistoryFilter {
        since: *slot,
        status: None,
        last: 100,
    };
    let entries = read_history(conn, keys, &filter, now).await?;
    let in_progress =
        |e: &HistoryEntry| matches!(e.status.as_str(), "running" | "expired" | "claimed");
    let target = match *slot {
        Some(s) => s,
        None => match entries.iter().find(|e| in_progress(e)).or(entries.first()) {
            Some(e) => {
                *slot = Some(e.slot);
                e.slot
            }
            None => return Ok(Seen::Waiting(None)),
        },
    };
    let of_slot: Vec<&HistoryEntry> = entries.iter().filter(|e| e.slot == target).collect();
    if let Some(running) = of_slot.iter().find(|e| in_progress(e)) {
        return Ok(Seen::Waiting(Some((*running).clone())));
    }
    Ok(match of_slot.iter().max_by_key(|e| e.attempt) {
        Some(ended) => Seen::Ended((*ended).clone()),
        None => Seen::Waiting(None),
    })
}

/// What `wait` (and `logs -f`) exits with for an ended attempt: 0 finished or skipped; the
/// command's exit code when it failed with one, else 1.
pub fn exit_status_of(e: &HistoryEntry) -> ExitStatus {
    ExitStatus::External(match e.status.as_str() {
        "finished" | "skipped" => 0,
        _ => e
            .result
            .get("exit_code")
            .and_then(|c| c.as_i64())
            .filter(|c| (1..=255).contains(c))
            .map_or(1, |c| c as i32),
    })
}

/// [`exit_status_of`] as the number a report prints.
pub fn exit_code_of(e: &HistoryEntry) -> i32 {
    exit_status_of(e).code()
}
