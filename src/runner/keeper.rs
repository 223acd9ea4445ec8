//! The lease keeper: a task that heartbeats a held run while its command works.
//!
//! Every heartbeat that the server confirms moves the local deadline forward, counted from the
//! moment the heartbeat was *sent* ([`LeaseDeadline::confirmed`]). A failed attempt (unreachable,
//! stalled, restarting) is retried with a fresh connection and backoff; the keeper never decides on
//! its own that the lease is lost by time: the command's watcher does, from the deadline. When the
//! server answers that the run is no longer ours, the keeper records why and stops.

use std::time::Duration;

use tokio::time::{sleep, timeout};

use crate::connection::Connection;
use crate::connection::retry::{Retry, Tries};
use crate::runner::deadline::{BootTime, LeaseDeadline, Loss};
use crate::store::LeaseKeys;
use crate::strategy::lease::{self, TokenOutcome};

/// The run a runner holds: what to heartbeat.
#[derive(Clone)]
pub struct HeldLease {
    pub keys: LeaseKeys,
    pub slot: i64,
    pub token: String,
    /// Until when the lease is surely ours, by this machine's clock.
    pub deadline: LeaseDeadline,
    /// The run's permits of its `--limit`s, renewed with each heartbeat once taken (None: no
    /// limits).
    pub permits: Option<std::sync::Arc<HeldPermits>>,
}

/// A run's permits, and whether it has taken them yet (the keeper renews them from then on).
#[derive(Debug)]
pub struct HeldPermits {
    pub permits: crate::store::limit::Permits,
    pub taken: std::sync::atomic::AtomicBool,
}

impl HeldPermits {
    pub fn taken(&self) -> bool {
        self.taken.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// Heartbeats every `every` (from the previous send) until the task is aborted, the server says the
/// run is no longer ours, or the local deadline has passed.
pub async fn keep(mut conn: Connection, held: HeldLease, every: Duration) {
    let mut last_sent = BootTime::now();
    let mut tries = HEARTBEAT_RETRY.start();
    loop {
        beat_or_release(&mut conn, &held, last_sent + every).await;
        let deadline = held.deadline.deadline();
        if deadline.left().is_zero() {
            return; // the watcher stops the command; a heartbeat now would prove nothing
        }
        let sent = BootTime::now();
        held.deadline.sending(sent);
        let reply = timeout(
            deadline.left(),
            lease::heartbeat(
                &mut conn,
                &held.keys,
                held.slot,
                &held.token,
                held.deadline.lease(),
            ),
        )
        .await;
        let Some(reply) = with_permits(&mut conn, &held, reply, deadline.left()).await else {
            return;
        };
        match reply {
            Ok(Ok(reply)) if reply.outcome == TokenOutcome::Ok => {
                held.deadline.confirmed(sent);
                last_sent = sent;
                tries = HEARTBEAT_RETRY.start();
            }
            Ok(Ok(reply)) if reply.outcome == TokenOutcome::Released => {
                held.deadline.lost(reply.lost_reason(), Loss::Released);
                return;
            }
            Ok(Ok(reply)) if reply.status.is_empty() => {
                // Claimed, confirmed, and now unknown to the server: not taken by another token,
                // gone. The server lost its data (restarted without persistence, flushed,
                // evicted), and any host may claim the run again at once.
                held.deadline.lost(
                    "the server no longer has this run at all: it lost its data (a restart without persistence, FLUSHALL, or eviction), and another host may claim the run now".to_string(),
                    Loss::StoreLost,
                );
                return;
            }
            Ok(Ok(reply)) => {
                held.deadline.lost(reply.lost_reason(), Loss::Taken);
                return;
            }
            Ok(Err(e)) if e.can_pass() => {
                // The server is there but refuses for now (OOM at maxmemory, BUSY, LOADING after
                // a restart, READONLY during a failover): retry like a connection problem.
                held.deadline
                    .failed(format!("Redis refused the heartbeat for now: {e}"));
                retry_later(&mut conn, &held, &mut tries).await;
                last_sent = BootTime::now().saturating_sub(every);
            }
            Ok(Err(e)) if !e.is_transient() => {
                // A refusal that retrying cannot change (permissions, bad data): the lease will
                // not be renewed, so the run must stop before it ends.
                held.deadline.lost(e.to_string(), Loss::Taken);
                return;
            }
            Ok(Err(e)) => {
                held.deadline
                    .failed(format!("Redis could not be reached: {e}"));
                retry_later(&mut conn, &held, &mut tries).await;
                // Try again at once after the pause, not a whole heartbeat interval later.
                last_sent = BootTime::now().saturating_sub(every);
            }
            Err(_) => {
                held.deadline
                    .failed("Redis did not answer the heartbeat in time".to_string());
                retry_later(&mut conn, &held, &mut tries).await;
                last_sent = BootTime::now().saturating_sub(every);
            }
        }
    }
}

/// A heartbeat's reply, once the run's permits are renewed too (when it has taken them): the lease
/// counts as renewed only when they are, for a permit that lapsed while the lease lived would let
/// another run take its room. None: a permit is no longer this attempt's (the lease is lost).
async fn with_permits<E>(
    conn: &mut Connection,
    held: &HeldLease,
    reply: std::result::Result<crate::error::Result<lease::TokenReply>, E>,
    left: Duration,
) -> Option<std::result::Result<crate::error::Result<lease::TokenReply>, E>>
where
    E: From<tokio::time::error::Elapsed>,
{
    let (Ok(Ok(beat)), Some(held_permits)) = (&reply, &held.permits) else {
        return Some(reply);
    };
    if beat.outcome != TokenOutcome::Ok || !held_permits.taken() {
        return Some(reply);
    }
    match timeout(left, held_permits.permits.renew(conn)).await {
        Ok(Ok(None)) => Some(reply),
        Ok(Ok(Some(limit))) => {
            held.deadline.lost(
                format!("its permit of --limit {limit} lapsed and was taken"),
                Loss::Taken,
            );
            None
        }
        Ok(Err(e)) => Some(Ok(Err(e))),
        Err(elapsed) => Some(Err(elapsed.into())),
    }
}

/// How often the keeper looks for a release mark between heartbeats.
const RELEASE_POLL: Duration = Duration::from_secs(1);

/// Sleeps until `beat`, looking every [`RELEASE_POLL`] whether the run was released (`anarchon
/// release`, another slot's `--overlap replace`): then returns at once, and the heartbeat that
/// follows hears of it (the heartbeat says who and why). A look that fails is left to the
/// heartbeat, which retries and tells.
async fn beat_or_release(conn: &mut Connection, held: &HeldLease, beat: BootTime) {
    loop {
        let left = beat.left();
        if left.is_zero() {
            return;
        }
        sleep(left.min(RELEASE_POLL)).await;
        if beat.left().is_zero() {
            return;
        }
        let look = lease::is_released(conn, &held.keys, held.slot);
        if let Ok(Ok(true)) = timeout(RELEASE_POLL, look).await {
            return;
        }
    }
}

/// The heartbeats' retries: the pauses of the calls around a claim, for as long as the lease
/// lives (the deadline, not a span, ends them: [`retry_later`]); a heartbeat answered starts them
/// anew.
const HEARTBEAT_RETRY: Retry = Retry::AROUND_A_CLAIM;

/// Waits a growing pause and reconnects, never past the lease deadline.
async fn retry_later(conn: &mut Connection, held: &HeldLease, tries: &mut Tries) {
    let until = tokio::time::Instant::now() + held.deadline.deadline().left();
    tries.pause_and_reconnect(conn, until).await;
}
