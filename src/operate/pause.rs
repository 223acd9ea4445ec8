//! Pause and resume a job across the fleet: the pause is in the job's `:job` hash, where every
//! claimant's claim script reads it (lua/lease/pause.lua). Each action reads the pause, decides,
//! writes it and records itself in the job's events in one script (lua/store/pause.lua,
//! lua/store/resume.lua): the audit is true however many operators act at once.

use super::Who;
use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::store::LeaseKeys;
use crate::store::events;
use crate::store::pause::{self, Decided, Pause};
use crate::time::rfc3339;

/// A pause done.
#[derive(Debug)]
pub struct Paused {
    /// The pause now in force, as the store has it.
    pub record: Pause,
    /// The pause in force it replaced (the store keeps one), if another was.
    pub replaced: Option<Pause>,
    /// The server's time of the pause.
    pub now: i64,
    /// The events stream's error, when the pause was done but could not be recorded.
    pub audit_error: Option<String>,
}

/// Pauses `job` until `until` (server ms), or for `for_ms` from the pause's own start, or until
/// resumed. Refused when the job has no lease keys, when its pause fields hold garbage (before
/// anything is written), or when `until` is not after the server's clock.
pub async fn pause(
    conn: &mut Connection,
    prefix: &str,
    job: &str,
    who: Who<'_>,
    (until, for_ms): (Option<i64>, Option<i64>),
) -> Result<Paused> {
    let keys = opened(conn, prefix, job).await?;
    let decided = pause::pause(
        conn,
        &keys,
        (&events::events_key(prefix, job), events::KEPT),
        (who.by, who.reason),
        until,
        for_ms,
    )
    .await?;
    if decided.outcome == "past" {
        return Err(not_in_the_future(until.unwrap_or_default(), decided.now));
    }
    Ok(Paused {
        record: Pause {
            paused_at: Some(decided.now),
            paused_until: until.or(for_ms.map(|f| decided.now + f)),
            resumed_at: None,
            paused_by: Some(who.by.to_string()),
            paused_reason: who.reason.filter(|r| !r.is_empty()).map(str::to_string),
        },
        replaced: decided
            .pause
            .is_paused(decided.now)
            .then_some(decided.pause),
        now: decided.now,
        audit_error: decided.audit_error,
    })
}

/// Resumes `job`: the decision, whose `outcome` is `resumed` (its `pause` the one ended) or
/// `not_paused` (nothing written).
pub async fn resume(
    conn: &mut Connection,
    prefix: &str,
    job: &str,
    who: Who<'_>,
) -> Result<Decided> {
    let keys = opened(conn, prefix, job).await?;
    pause::resume(
        conn,
        &keys,
        (&events::events_key(prefix, job), events::KEPT),
        (who.by, who.reason),
    )
    .await
}

/// `--until` that is not after the server's clock: refused, nothing written.
pub fn not_in_the_future(until: i64, now: i64) -> Error {
    Error::usage(format!(
        "--until {} is not in the future (the server's clock says {})",
        rfc3339(until),
        rfc3339(now)
    ))
}

/// The job's lease keys, once the job is known (its keys, or a live replica's crontab: a job that
/// has not run yet can be paused before its first run) and its pause fields read.
async fn opened(conn: &mut Connection, prefix: &str, job: &str) -> Result<LeaseKeys> {
    let now = conn.server_ms().await?;
    crate::store::job::locate_lease_job_or_scheduled(conn, prefix, job, now).await?;
    let keys = LeaseKeys::new(prefix, job);
    // Garbage in the pause's fields is refused before anything is written.
    pause::read_pause(conn, &keys).await?;
    Ok(keys)
}
