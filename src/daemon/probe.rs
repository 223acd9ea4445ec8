//! The store as `cron --listen`'s readiness sees it: a probe with a connection of its own asks the
//! server every second, under a timeout, so that `/readyz` and `anarchon_cron_store_connected`
//! follow the store itself, not the last slot's opening (with only hourly jobs, a store lost
//! between slots went unnoticed for up to an hour; a hung one, SIGSTOP, never failed an opening
//! fast enough to be seen).
//!
//! The probe is one read, `INFO memory`: answered, the store answers (as a PING would say); and
//! its fields tell a full server, whose writes are refused (OOM) though it answers every read:
//! memory used (less what eviction does not count) above `maxmemory` under a policy that then
//! refuses writes. Nothing is written: a format 1 store holds only what its readers expect.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use super::shared::Shared;
use crate::connection::Connection;

/// How often the probe asks.
pub(super) const EVERY: Duration = Duration::from_secs(1);

/// How long a probe waits for its answer (connecting included).
pub(super) const TIMEOUT: Duration = Duration::from_secs(1);

/// Probes failed in a row before the store is said not to answer: one slow answer (a fork) is no
/// outage; a store that hangs is seen within about three seconds.
const FAILS: u32 = 2;

/// What the probe last saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Store {
    /// No probe has ended yet.
    Unknown,
    /// It answers and takes writes.
    Answers,
    /// It answers, but is at maxmemory under a policy that refuses writes: no run can be claimed
    /// or recorded until memory is freed.
    RefusesWrites,
    /// No answer within [`TIMEOUT`], [`FAILS`] times in a row, or the connection failed.
    Unreachable,
}

impl Store {
    /// Whether the store answers (`anarchon_cron_store_connected`); a full store answers.
    pub(super) fn answers(self) -> Option<bool> {
        match self {
            Store::Unknown => None,
            Store::Answers | Store::RefusesWrites => Some(true),
            Store::Unreachable => Some(false),
        }
    }
}

/// The probe's last finding, shared with the endpoints.
#[derive(Default)]
pub(super) struct Probed(AtomicU8);

impl Probed {
    pub(super) fn get(&self) -> Store {
        match self.0.load(Ordering::Relaxed) {
            1 => Store::Answers,
            2 => Store::RefusesWrites,
            3 => Store::Unreachable,
            _ => Store::Unknown,
        }
    }

    /// Sets the finding; the one before it.
    fn set(&self, store: Store) -> Store {
        let n = match store {
            Store::Unknown => 0,
            Store::Answers => 1,
            Store::RefusesWrites => 2,
            Store::Unreachable => 3,
        };
        match self.0.swap(n, Ordering::Relaxed) {
            1 => Store::Answers,
            2 => Store::RefusesWrites,
            3 => Store::Unreachable,
            _ => Store::Unknown,
        }
    }
}

/// Probes the store every [`EVERY`] until the daemon ends, setting `probed` and the daemon's
/// connected flag (said once when lost, once when back, once when full).
pub(super) async fn watch(shared: Arc<Shared>, probed: Arc<Probed>) {
    let mut conn: Option<Connection> = None;
    let mut failed = 0;
    let mut tick = tokio::time::interval(EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let found = match tokio::time::timeout(TIMEOUT, probe(&shared, &mut conn)).await {
            Ok(Ok(found)) => {
                failed = 0;
                found
            }
            failed_now => {
                // A connection that failed or hung is not trusted again: a new one next time.
                conn = None;
                failed += 1;
                if failed < FAILS {
                    continue;
                }
                let why = match failed_now {
                    Ok(Err(e)) => e.to_string().lines().next().unwrap_or_default().to_string(),
                    _ => format!("no answer within {}", humantime::format_duration(TIMEOUT)),
                };
                shared.note_lost(&why);
                Store::Unreachable
            }
        };
        if found != Store::Unreachable {
            shared.note_connected();
        }
        let before = probed.set(found);
        if found == Store::RefusesWrites && before != found {
            crate::errln!(
                "anarchon: the store refuses writes (OOM): {}; not ready until memory is freed",
                crate::error::OOM_HINT
            );
        } else if before == Store::RefusesWrites && found == Store::Answers {
            crate::errln!("anarchon: the store takes writes again");
        }
    }
}

/// One probe: `INFO memory` on the probe's connection (opened when there is none).
async fn probe(shared: &Shared, conn: &mut Option<Connection>) -> crate::error::Result<Store> {
    if conn.is_none() {
        *conn = Some(Connection::open(&shared.options).await?);
    }
    let Some(c) = conn.as_mut() else {
        return Ok(Store::Unknown);
    };
    let info: String = c.query(redis::cmd("INFO").arg("memory")).await?;
    Ok(if refuses_writes(&info) {
        Store::RefusesWrites
    } else {
        Store::Answers
    })
}

/// Whether `INFO memory` tells a server that refuses writes: memory used, less what eviction does
/// not count (replication and AOF buffers), above `maxmemory` under `noeviction` or a `volatile-*`
/// policy (whose keys without a TTL cannot be evicted: anarchon's are). The server tried to evict
/// before answering INFO, so what is over now stays over for the next write.
pub(super) fn refuses_writes(info: &str) -> bool {
    let field = |name: &str| {
        info.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .map(str::trim)
    };
    let number = |name: &str| field(name).and_then(|v| v.parse::<u64>().ok());
    let (Some(max), Some(used)) = (number("maxmemory"), number("used_memory")) else {
        return false;
    };
    let counted = used.saturating_sub(number("mem_not_counted_for_evict").unwrap_or(0));
    let policy = field("maxmemory_policy").unwrap_or("noeviction");
    max > 0 && counted > max && (policy == "noeviction" || policy.starts_with("volatile-"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_server_under_a_refusing_policy_refuses_writes() {
        let info = |used: u64, max: u64, policy: &str| {
            format!(
                "# Memory\r\nused_memory:{used}\r\nused_memory_human:1M\r\nmaxmemory:{max}\r\nmaxmemory_policy:{policy}\r\nmem_not_counted_for_evict:100\r\n"
            )
        };
        assert!(refuses_writes(&info(2_000, 1_000, "noeviction")));
        assert!(refuses_writes(&info(2_000, 1_000, "volatile-lru")));
        assert!(!refuses_writes(&info(2_000, 1_000, "allkeys-lru")));
        assert!(!refuses_writes(&info(1_050, 1_000, "noeviction")));
        assert!(!refuses_writes(&info(2_000, 0, "noeviction")));
        assert!(!refuses_writes("# Memory\r\n"));
    }
}
