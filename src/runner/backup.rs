//! Standing by as a backup: following the holder's lease and taking over the moment it expires.

use std::io::IsTerminal;
use std::time::Duration;

use tokio::time::{Instant, sleep, timeout};

use crate::connection::Connection;
use crate::error::Result;
use crate::runner::deadline::BootTime;
use crate::store::LeaseKeys;
use crate::strategy::lease::{self, ClaimOutcome, ClaimReply, ClaimRequest};
use crate::time::{humanize, rfc3339};

/// The longest a backup sleeps between looks at the holder: it notices an early finish within this.
const STANDBY_POLL_MAX: Duration = Duration::from_secs(5);

/// Stands by while the holder renews its lease: re-claims just after the holder's lease should end
/// (and at least every [`STANDBY_POLL_MAX`], to notice an early end), until we win, the run is over
/// or out of attempts, or `limit` has passed. The claim script decides each time, so two backups
/// can't both win; a claim of a live run writes nothing.
pub async fn wait_as_backup(
    conn: &mut Connection,
    keys: &LeaseKeys,
    job: &str,
    req: &ClaimRequest,
    mut reply: ClaimReply,
    limit: Option<Duration>,
    quiet: bool,
) -> Result<(ClaimReply, BootTime)> {
    let give_up = limit.map(|l| Instant::now() + l);
    let spinner = (!quiet && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.enable_steady_tick(Duration::from_millis(120));
        bar
    });
    let mut sent = BootTime::now();
    let mut backoff = Duration::from_millis(100);
    // Failed looks in a row: the first is reported, and the recovery.
    let mut refusals = 0u32;
    while reply.outcome == ClaimOutcome::Running && give_up.is_none_or(|g| Instant::now() < g) {
        let left_ms = reply.lease_end.unwrap_or(reply.server_now) - reply.server_now;
        if let Some(bar) = &spinner {
            bar.set_message(format!(
                "standing by for {job} @ {}: held by {} (attempt {}), lease ends in {}",
                rfc3339(req.slot),
                reply.runner,
                reply.attempt.unwrap_or(0),
                humanize(u64::try_from(left_ms).unwrap_or(0))
            ));
        }
        let nap = Duration::from_millis(u64::try_from(left_ms + 25).unwrap_or(0))
            .clamp(Duration::from_millis(25), STANDBY_POLL_MAX);
        let nap = match give_up {
            Some(g) => nap.min(g.saturating_duration_since(Instant::now())),
            None => nap,
        };
        sleep(nap).await;
        sent = BootTime::now();
        reply = match lease::claim(conn, keys, req).await {
            Ok(r) => {
                if refusals > 0 && !quiet {
                    crate::errln!(
                        "anarchon: standing by for {job} @ {}: Redis answers again",
                        rfc3339(req.slot)
                    );
                }
                refusals = 0;
                backoff = Duration::from_millis(100);
                r
            }
            // Trouble that passes (the connection, OOM at maxmemory, LOADING, BUSY, READONLY
            // after a failover): a backup that gave up would leave nobody to take over when the
            // holder dies, so it keeps standing by, backing off, and says so.
            Err(e) if e.is_transient() || e.can_pass() => {
                if !quiet && refusals == 0 {
                    crate::errln!(
                        "anarchon: standing by for {job} @ {}: {e}; retrying (every {} at most)",
                        rfc3339(req.slot),
                        humantime::format_duration(STANDBY_POLL_MAX)
                    );
                }
                refusals += 1;
                sleep(backoff).await;
                backoff = (backoff * 2).min(STANDBY_POLL_MAX);
                let _ = timeout(Duration::from_secs(1), conn.reconnect()).await;
                continue;
            }
            Err(e) => return Err(e),
        };
    }
    if let Some(bar) = spinner {
        bar.finish_and_clear();
    }
    Ok((reply, sent))
}
