//! A replica's own cap (`cron --max-running N`, issue 50 item 3): a replica running N commands
//! claims no new slot, so that the other replicas take the runs; a slot that finds every replica
//! at its cap waits for room up to its `--max-late`, and is then recorded skipped with why.
//!
//! The cap is taken before a slot's claim, never after: a replica never wins a run it cannot
//! start, so the cap changes who runs a slot, never whether two do. A takeover of a run in
//! progress (standing by) and a `run-now` request are not held back: the first is a run already
//! under way elsewhere, which must not be lost to the cap; the second an operator's word.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How often a slot waiting for room looks whether another replica took it meanwhile.
pub(super) const LOOK_EVERY: Duration = Duration::from_secs(1);

/// The replica's room for commands: `max` permits, one held by each slot task from its claim to
/// its end.
pub(super) struct Cap {
    permits: Arc<Semaphore>,
    pub(super) max: usize,
    /// Slots that found no room here (`anarchon_cron_slots_without_room_total`).
    pub(super) without_room: std::sync::atomic::AtomicU64,
}

impl Cap {
    pub(super) fn new(max: Option<usize>) -> Option<Cap> {
        max.map(|max| Cap {
            permits: Arc::new(Semaphore::new(max)),
            max,
            without_room: Default::default(),
        })
    }

    /// Room now, if there is.
    pub(super) fn room(&self) -> Option<OwnedSemaphorePermit> {
        self.permits.clone().try_acquire_owned().ok()
    }

    /// Room when a command here ends.
    pub(super) async fn freed(&self) -> Option<OwnedSemaphorePermit> {
        self.permits.clone().acquire_owned().await.ok()
    }

    /// How many commands hold room now.
    pub(super) fn running(&self) -> usize {
        self.max - self.permits.available_permits()
    }
}

use crate::connection::Connection;
use crate::runner::event::{Audience, EventKind, RunEvent};
use crate::settings::run::RunSettings;
use crate::store::StoreCheck;
use crate::time::{millis, rfc3339};

/// What a slot task holds while it claims and runs: room under the cap, or no cap at all.
pub(super) enum Room {
    Unlimited,
    /// Given back when dropped, at the slot task's end: held, never read.
    Held(#[allow(dead_code)] OwnedSemaphorePermit),
}

/// The daemon's prefix and its reading of the server's clock (ms).
type Store<'a> = (&'a str, &'a dyn Fn() -> i64);

impl Cap {
    /// Room for `slot` of `job` under the replica's cap: at once when it has some; else the slot
    /// is left to the other replicas, and taken here when a command here ends within the slot's
    /// `--max-late` (the claim then decides, as for any late replica). None when it is no longer
    /// this replica's to take: another replica took it (looked every [`LOOK_EVERY`]), or
    /// `--max-late` passed with nobody taking it, which is recorded (a skip, with why) where the
    /// store keeps skips and the job has no old names (a run under an old name is not looked for).
    pub(super) async fn room_for(
        &self,
        job: &RunSettings,
        conn: &mut Connection,
        check: &StoreCheck,
        slot: i64,
        (prefix, server_now): Store<'_>,
    ) -> Option<OwnedSemaphorePermit> {
        if let Some(room) = self.room() {
            return Some(room);
        }
        self.without_room
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let at = format!("{} @ {}", job.job, rfc3339(slot));
        let full = format!(
            "this replica runs {} command(s), its --max-running {}",
            self.running(),
            self.max
        );
        let said = format!(
            "{at}: {full}: left to the other replicas (taken here if room frees within --max-late {})",
            humantime::format_duration(job.max_late)
        );
        job.runner
            .events
            .emit(&RunEvent::new(EventKind::NotRunHere, &job.job, slot, said).to(Audience::Note));
        let keys = job.strategy.has_leases().then(|| {
            crate::strategy::Target::new(prefix, &job.job, job.strategy, check).lease_keys()
        });
        let until = slot + millis(job.max_late);
        loop {
            tokio::select! {
                room = self.freed() => return room,
                () = tokio::time::sleep(LOOK_EVERY) => {}
            }
            if let Some(keys) = &keys {
                let taken = crate::strategy::lease::slot_statuses(conn, keys, &[slot])
                    .await
                    .is_ok_and(|s| s.first().is_some_and(Option::is_some));
                if taken {
                    let said = format!(
                        "{at}: taken by another replica while this one was full; not run here"
                    );
                    job.runner.events.emit(
                        &RunEvent::new(EventKind::NotRunHere, &job.job, slot, said)
                            .to(Audience::Note),
                    );
                    return None;
                }
            }
            if server_now() > until {
                record_no_room(job, conn, keys.as_ref(), slot, &full).await;
                return None;
            }
        }
    }
}

/// `--max-late` passed with no replica taking the slot while this one was full: said, and
/// recorded skipped where it can be (a lease job with no old names).
async fn record_no_room(
    job: &RunSettings,
    conn: &mut Connection,
    keys: Option<&crate::store::LeaseKeys>,
    slot: i64,
    full: &str,
) {
    let reason = format!(
        "no replica took it within --max-late {}: {full}",
        humantime::format_duration(job.max_late)
    );
    use crate::strategy::lease::SkipOutcome;
    let outcome = match keys.filter(|_| job.lineage.is_empty()) {
        Some(keys) => crate::runner::retrying(conn, async |c| {
            crate::strategy::lease::skip(c, keys, slot, &job.claim.runner, &reason).await
        })
        .await
        .ok(),
        None => None,
    };
    // Claimed at the last moment, or paused over: not this replica's to say.
    if matches!(outcome, Some(SkipOutcome::Claimed(_) | SkipOutcome::Paused)) {
        return;
    }
    let recorded = outcome == Some(SkipOutcome::Skipped);
    let said = format!(
        "{} @ {}: skipped ({reason}){}",
        job.job,
        rfc3339(slot),
        if recorded {
            "; recorded as skipped"
        } else {
            ""
        }
    );
    job.runner
        .events
        .emit(&RunEvent::new(EventKind::Skipped, &job.job, slot, said));
}
