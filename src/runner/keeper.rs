//! The lease keeper: a task that heartbeats a held run while its command works.
//!
//! It reports a lost lease once, and then stops: when a heartbeat finds another token or no state,
//! or when Redis stays unreachable until the lease would have expired (past that point another
//! runner may rightly have taken the run over).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::{Instant, sleep, timeout};

use crate::connection::Connection;
use crate::error::Error;
use crate::store::LeaseKeys;
use crate::strategy::lease::{self, TokenOutcome};

/// The lease a runner holds: what to heartbeat, and until when it is surely ours.
#[derive(Clone)]
pub struct HeldLease {
    pub keys: LeaseKeys,
    pub slot: i64,
    pub token: String,
    pub lease: Duration,
    /// When the lease ends by our monotonic clock (server lease end minus server now, from now).
    /// Shared with the runner, which needs it to bound the finish's retries.
    pub expires: Arc<Mutex<Instant>>,
}

impl HeldLease {
    pub fn new(
        keys: LeaseKeys,
        slot: i64,
        token: String,
        lease: Duration,
        lease_end: i64,
        server_now: i64,
    ) -> Self {
        let held = HeldLease {
            keys,
            slot,
            token,
            lease,
            expires: Arc::new(Mutex::new(Instant::now())),
        };
        held.renewed(lease_end, server_now);
        held
    }

    /// Records a lease end the server granted, converted to our monotonic clock.
    pub fn renewed(&self, lease_end: i64, server_now: i64) {
        let left = Duration::from_millis(u64::try_from(lease_end - server_now).unwrap_or(0));
        *self.expires.lock().unwrap() = Instant::now() + left;
    }

    pub fn expires_at(&self) -> Instant {
        *self.expires.lock().unwrap()
    }
}

/// Why the keeper gave up the lease.
#[derive(Debug, Clone)]
pub struct LeaseLost {
    pub reason: String,
}

/// Heartbeats every `every` until the task is aborted; sends one [`LeaseLost`] and returns if the
/// lease cannot be kept.
pub async fn keep(
    mut conn: Connection,
    held: HeldLease,
    every: Duration,
    lost: mpsc::Sender<LeaseLost>,
) {
    loop {
        sleep(every).await;
        if let Err(reason) = heartbeat_until_expiry(&mut conn, &held).await {
            let _ = lost.send(LeaseLost { reason }).await;
            return;
        }
    }
}

/// One heartbeat, retried with backoff (and a fresh connection) while the lease still lives.
async fn heartbeat_until_expiry(conn: &mut Connection, held: &HeldLease) -> Result<(), String> {
    let mut backoff = Duration::from_millis(100);
    loop {
        let left = held.expires_at().saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err("Redis could not be reached before the lease expired".to_string());
        }
        let attempt = timeout(
            left,
            lease::heartbeat(conn, &held.keys, held.slot, &held.token, held.lease),
        )
        .await;
        match attempt {
            Ok(Ok(reply)) if reply.outcome == TokenOutcome::Ok => {
                if let Some(end) = reply.lease_end {
                    held.renewed(end, reply.server_now);
                }
                return Ok(());
            }
            Ok(Ok(reply)) => return Err(reply.lost_reason()),
            Ok(Err(e)) if !e.is_connection() && !matches!(e, Error::Redis(_)) => {
                return Err(e.to_string());
            }
            Ok(Err(_)) | Err(_) => {
                // Unreachable, stalled or restarting: try again with a fresh connection.
                let pause =
                    backoff.min(held.expires_at().saturating_duration_since(Instant::now()));
                sleep(pause).await;
                backoff = (backoff * 2).min(Duration::from_secs(2));
                let left = held.expires_at().saturating_duration_since(Instant::now());
                if !left.is_zero() {
                    let _ = timeout(left, conn.reconnect()).await;
                }
            }
        }
    }
}
