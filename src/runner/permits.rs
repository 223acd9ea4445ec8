//! A won run's permits of its named limits (`--limit NAME=N`, [`crate::store::limit`]): taken
//! after the claim is won and before the command starts, while the keeper already holds the lease;
//! renewed by the keeper with each heartbeat; given back when the run's end is recorded. A run that
//! finds no room waits for it up to its `--max-late` (from its slot, or from now for a takeover or
//! a retry), then ends without starting its command, recorded `interrupted` with the limit and who
//! held its permits: never run beside the limit, never lost without a record.

use std::time::Duration;

use tokio::time::Instant;

use crate::connection::Connection;
use crate::runner::deadline::LeaseDeadline;
use crate::runner::event::{EventKind, RunEvent};
use crate::store::limit::{Holder, Permits, Taken, holders_text};

/// How often a run waiting for room asks again.
const LOOK_EVERY: Duration = Duration::from_millis(500);

/// Why a run did not start: limit `name` had no room until the run's deadline.
#[derive(Debug, Clone)]
pub struct NoPermit {
    pub name: String,
    pub max: u32,
    pub holders: Vec<Holder>,
}

impl NoPermit {
    /// The result the run is recorded with: it waited up to `max_late` after its slot.
    pub fn result_json(&self, max_late: Duration) -> String {
        serde_json::json!({
            "reason": format!(
                "no permit of --limit {}={} within --max-late {} of its slot",
                self.name,
                self.max,
                humantime::format_duration(Duration::from_secs(max_late.as_secs()))
            ),
            "limit": self.name,
            "held_by": self.holders.iter().map(Holder::to_string).collect::<Vec<_>>(),
        })
        .to_string()
    }
}

/// Takes the run's permits, waiting for room until `until` or the lease is lost: Ok(()) when they
/// are the run's, Err(why) when not (limit full to the end; or the lease lost, None).
pub async fn take(
    conn: &mut Connection,
    permits: &Permits,
    until: Instant,
    lease: &LeaseDeadline,
    said: impl Fn(RunEvent),
    (job, slot): (&str, i64),
) -> Result<(), Option<NoPermit>> {
    let mut waiting = false;
    let mut last_full = None;
    loop {
        if lease.lost_reason(Duration::ZERO).is_some() {
            return Err(None);
        }
        match permits.take(conn).await {
            Ok(Taken::Yes) => {
                if waiting {
                    said(RunEvent::new(
                        EventKind::Started,
                        job,
                        slot,
                        "a permit came free: running the command".to_string(),
                    ));
                }
                return Ok(());
            }
            Ok(Taken::Full { name, max, holders }) => {
                if !waiting {
                    said(RunEvent::new(
                        EventKind::WaitingForPermit,
                        job,
                        slot,
                        format!(
                            "--limit {name}={max} is full ({}); waiting for a permit",
                            holders_text(&holders)
                        ),
                    ));
                    waiting = true;
                }
                last_full = Some(NoPermit { name, max, holders });
            }
            // Trouble is ridden out as every wait here is: until the deadline.
            Err(_) => {}
        }
        if Instant::now() >= until {
            // No longer waiting (`give` takes it off the waiting list; it holds no permit).
            let _ = tokio::time::timeout(Duration::from_secs(2), permits.give(conn)).await;
            return Err(last_full.or_else(|| {
                Some(NoPermit {
                    name: permits.limits[0].name.clone(),
                    max: permits.limits[0].max,
                    holders: Vec::new(),
                })
            }));
        }
        tokio::time::sleep(LOOK_EVERY.min(until.saturating_duration_since(Instant::now()))).await;
    }
}
