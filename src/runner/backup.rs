//! Standing by as a backup: following the holder's lease and taking over the moment it expires.

use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::{Instant, sleep, timeout};

use crate::connection::Connection;
use crate::error::Result;
use crate::runner::deadline::BootTime;
use crate::store::LeaseKeys;
use crate::strategy::claim::{ClaimOutcome, ClaimRequest};
use crate::strategy::lease::{self, ClaimReply};
use crate::time::{humanize, rfc3339};

/// The longest a backup of `anarchon run` sleeps between looks at the holder: it notices an early
/// finish (or a hand-over) within this.
pub const STANDBY_POLL_MAX: Duration = Duration::from_secs(5);

/// How a backup stands by.
#[derive(Debug, Clone, Copy)]
pub struct Standing<'a> {
    /// Give up after this (`--backup-for`); None: for as long as attempts remain.
    pub limit: Option<Duration>,
    /// The longest sleep between claims while the holder's lease lives.
    pub poll: Duration,
    /// Where a holder's hand-over wakes this backup (`anarchon cron`: its requests stream), if
    /// anywhere: its looks then settle at [`STANDBY_POLL_WOKEN`] instead of
    /// [`STANDBY_POLL_SETTLED`].
    pub wakeups: Option<&'a Wakeups>,
}

/// How often a backup looks when a hand-over wakes it ([`Wakeups`]), from its first look on: what
/// it still looks for is a lease that ends without a word (its holder killed, stopped, cut off),
/// whose end it knows from the last look (the nap is cut to it), and a hand-over by a holder that
/// sends no wake-up (a replica of an older anarchon, during the deploy that replaces it). A loser
/// of a 20 s run looks 3 times in all, not 13 (bench/per_run.sh).
pub const STANDBY_POLL_WOKEN: Duration = Duration::from_secs(10);

/// The backups standing by in one process (`anarchon cron`), by run, for the wake-ups its
/// requests stream brings ([`crate::store::requests::Wake`]): a holder that hands its run over
/// (its lease ends now) wakes them, and one takes the run over at once.
#[derive(Debug, Default)]
pub struct Wakeups {
    waiting: std::sync::Mutex<std::collections::HashMap<RunId, Vec<Weak<Notify>>>>,
}

/// A run: its job and slot.
type RunId = (String, i64);

impl Wakeups {
    /// A backup of `job`'s run at `slot` waits on the handle this returns (while it holds it).
    pub fn register(&self, job: &str, slot: i64) -> Arc<Notify> {
        let notify = Arc::new(Notify::new());
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        waiting.retain(|_, list| {
            list.retain(|w| w.strong_count() > 0);
            !list.is_empty()
        });
        waiting
            .entry((job.to_string(), slot))
            .or_default()
            .push(Arc::downgrade(&notify));
        notify
    }

    /// Wakes the backups of `job`'s run at `slot` (a wake-up that comes while one is looking
    /// is kept for its next nap).
    pub fn wake(&self, job: &str, slot: i64) {
        let waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        for notify in waiting
            .get(&(job.to_string(), slot))
            .into_iter()
            .flatten()
            .filter_map(Weak::upgrade)
        {
            notify.notify_one();
        }
    }
}

/// How slow a backup's polls grow while the holder keeps renewing its lease (from
/// [`Standing::poll`], doubling each look that finds it still held, never past the lease's end):
/// a backup of the daemon starts at 500 ms, which a run handed over at a replica's shutdown needs,
/// and settles at this, so that a herd of losers standing by for a thousand runs in progress
/// costs the server a look per run every two seconds rather than three round trips a second. A
/// lease that ends is still noticed at its end (the nap is cut to it); a hand-over within this.
pub const STANDBY_POLL_SETTLED: Duration = Duration::from_secs(2);

/// Stands by while the holder renews its lease: re-claims just after the holder's lease should end
/// (and at least every [`Standing::poll`], growing to [`STANDBY_POLL_SETTLED`] while nothing
/// changes, to notice an early end), until we win, the run is over or out of attempts, or `limit`
/// has passed. The claim script decides each time, so two backups can't both win; a claim of a
/// live run writes nothing. Each poll is one round trip: the announcement that this backup stands
/// by and the claim's look go together ([`lease::claim_sending`]). Returns the last reply, when its
/// claim was sent, and the last holder seen (whom a takeover takes the run from).
pub async fn wait_as_backup(
    conn: &mut Connection,
    keys: &LeaseKeys,
    job: &str,
    req: &ClaimRequest,
    mut reply: ClaimReply,
    how: Standing<'_>,
    quiet: bool,
) -> Result<(ClaimReply, BootTime, String)> {
    let Standing {
        limit,
        poll,
        wakeups,
    } = how;
    let woken = wakeups.map(|w| w.register(job, req.slot));
    let mut holder = reply.runner.clone();
    let give_up = limit.map(|l| Instant::now() + l);
    let spinner = crate::lines::stderr_spinner(quiet);
    let mut sent = BootTime::now();
    let mut trouble = Trouble::default();
    let mut pace = Pace::standing(poll, woken.is_some());
    let settled = pace.settled;
    // Said to the holder, so that its hand-over can tell whether anyone takes the run over: at
    // once, on its own (a holder handing over now must find it), then again with a look once the
    // last saying is half its life old, each saying lasting two of the slowest polls and a second.
    let announce_ttl = settled * 2 + Duration::from_secs(1);
    let announcement = lease::standby_announcement(keys, req.slot, &req.runner, announce_ttl);
    let said = lease::announce_standby(conn, keys, req.slot, &req.runner, announce_ttl);
    let _ = timeout(Duration::from_secs(1), said).await;
    let mut announced = Instant::now();
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
        let nap = pace.nap(left_ms);
        let nap = match give_up {
            Some(g) => nap.min(g.saturating_duration_since(Instant::now())),
            None => nap,
        };
        if nap_or_wake(nap, woken.as_deref()).await && !quiet {
            crate::errln!(
                "anarchon: {job} @ {}: woken: {} handed the run over; looking at once",
                rfc3339(req.slot),
                reply.runner
            );
        }
        sent = BootTime::now();
        let what = format!("standing by for {job} @ {}", rfc3339(req.slot));
        let due = announced.elapsed() >= settled;
        let also = due.then_some(&announcement);
        let claimed = trouble.claim_sending(conn, keys, req, &what, quiet, also);
        if let Some(r) = claimed.await? {
            if due {
                announced = Instant::now();
            }
            pace.saw(&reply, &r);
            reply = r;
            if reply.outcome == ClaimOutcome::Running {
                holder.clone_from(&reply.runner);
            }
        }
    }
    if let Some(bar) = spinner {
        bar.finish_and_clear();
    }
    Ok((reply, sent, holder))
}

/// Sleeps for `nap`, or until `woken` is told (a hand-over): whether it was.
async fn nap_or_wake(nap: Duration, woken: Option<&Notify>) -> bool {
    let Some(woken) = woken else {
        sleep(nap).await;
        return false;
    };
    tokio::select! {
        () = sleep(nap) => false,
        () = woken.notified() => true,
    }
}

/// How long a backup sleeps between looks: from `first`, doubling while each look finds the run
/// as before (the same holder and attempt, its lease renewed), up to `settled`; back to `first`
/// when the run changes hands. Never past the holder's lease end (plus 25 ms for the server's
/// clock to pass it), nor under 25 ms.
#[derive(Debug, Clone, Copy)]
struct Pace {
    first: Duration,
    settled: Duration,
    now: Duration,
}

impl Pace {
    /// A backup's pace: from `poll`, settling at [`STANDBY_POLL_SETTLED`]; or, `woken` by a
    /// hand-over ([`Wakeups`]), [`STANDBY_POLL_WOKEN`] from the first look: a run that ends by
    /// itself needs nothing of its backup, and a lease that ends without a word ends when the last
    /// look said.
    fn standing(poll: Duration, woken: bool) -> Pace {
        if woken {
            let settled = poll.max(STANDBY_POLL_WOKEN);
            Pace::new(settled, settled)
        } else {
            Pace::new(poll, poll.max(STANDBY_POLL_SETTLED))
        }
    }

    fn new(first: Duration, settled: Duration) -> Pace {
        Pace {
            first,
            settled,
            now: first,
        }
    }

    /// The next nap, the holder's lease ending in `left_ms` by the last look.
    fn nap(&self, left_ms: i64) -> Duration {
        Duration::from_millis(u64::try_from(left_ms + 25).unwrap_or(0))
            .clamp(Duration::from_millis(25), self.now)
    }

    /// A look answered `after` where the one before answered `before`.
    fn saw(&mut self, before: &ClaimReply, after: &ClaimReply) {
        let same = after.outcome == before.outcome
            && after.attempt == before.attempt
            && after.runner == before.runner;
        self.now = if same {
            (self.now * 2).min(self.settled)
        } else {
            self.first
        };
    }
}

/// How often a waiter whose claims keep failing says so again (with how long and how often).
const TROUBLE_REMINDER: Duration = Duration::from_secs(60);

/// Claims again while waiting (as a backup, or for an older run under `--overlap buffer` or
/// `replace`), riding out trouble that passes: the connection, OOM at maxmemory, LOADING, BUSY,
/// READONLY after a failover. A waiter that gave up would leave nobody to take over when the holder
/// dies (or the slot unrun), so it keeps waiting, backing off; it says so at once, again every
/// [`TROUBLE_REMINDER`] while it lasts (a server out of memory can refuse for hours, and one line
/// at the start of it is easy to miss), and when it has passed.
#[derive(Debug)]
pub struct Trouble {
    /// Failed claims in a row.
    refusals: u32,
    backoff: Duration,
    /// When the failures began, and when this waiter last said so.
    since: Option<Instant>,
    said_at: Option<Instant>,
}

impl Default for Trouble {
    fn default() -> Self {
        Trouble {
            refusals: 0,
            backoff: Duration::from_millis(100),
            since: None,
            said_at: None,
        }
    }
}

/// What a waiter says of a failed claim: the first failure at once, then a reminder.
#[derive(Debug, PartialEq, Eq)]
enum Say {
    First,
    /// Failing for `for_ms`, over `tries` claims.
    Still {
        for_ms: u64,
        tries: u32,
    },
}

impl Trouble {
    /// Counts one failed claim at `now`, and says what to tell the operator, if anything: the
    /// first failure, then once every [`TROUBLE_REMINDER`] while the failures last.
    fn failed_at(&mut self, now: Instant) -> Option<Say> {
        let since = *self.since.get_or_insert(now);
        self.refusals += 1;
        let say = match self.said_at {
            None => Some(Say::First),
            Some(at) if now.duration_since(at) >= TROUBLE_REMINDER => Some(Say::Still {
                for_ms: u64::try_from(now.duration_since(since).as_millis()).unwrap_or(u64::MAX),
                tries: self.refusals,
            }),
            Some(_) => None,
        };
        if say.is_some() {
            self.said_at = Some(now);
        }
        say
    }

    /// The claim's reply, or None after trouble that passes (backed off; the caller loops).
    /// `what`: what the waiter is doing, for its lines on stderr.
    pub async fn claim(
        &mut self,
        conn: &mut Connection,
        keys: &LeaseKeys,
        req: &ClaimRequest,
        what: &str,
        quiet: bool,
    ) -> Result<Option<ClaimReply>> {
        self.claim_sending(conn, keys, req, what, quiet, None).await
    }

    /// [`Trouble::claim`], with `also` sent in the claim's first round trip
    /// ([`lease::claim_sending`]).
    pub async fn claim_sending(
        &mut self,
        conn: &mut Connection,
        keys: &LeaseKeys,
        req: &ClaimRequest,
        what: &str,
        quiet: bool,
        also: Option<&redis::Cmd>,
    ) -> Result<Option<ClaimReply>> {
        match lease::claim_sending(conn, keys, req, also).await {
            Ok(r) => {
                if self.refusals > 0 && !quiet {
                    crate::errln!("anarchon: {what}: Redis answers again");
                }
                *self = Trouble::default();
                Ok(Some(r))
            }
            Err(e) if e.is_transient() || e.can_pass() => {
                match self.failed_at(Instant::now()) {
                    _ if quiet => {}
                    Some(Say::First) => crate::errln!(
                        "anarchon: {what}: {e}; retrying (every {} at most)",
                        humantime::format_duration(STANDBY_POLL_MAX)
                    ),
                    Some(Say::Still { for_ms, tries }) => crate::errln!(
                        "anarchon: {what}: still failing after {} ({tries} tries): {e}; still retrying",
                        humanize(for_ms)
                    ),
                    None => {}
                }
                sleep(self.backoff).await;
                self.backoff = (self.backoff * 2).min(STANDBY_POLL_MAX);
                let _ = timeout(Duration::from_secs(1), conn.reconnect()).await;
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(runner: &str, attempt: u32) -> ClaimReply {
        ClaimReply {
            outcome: ClaimOutcome::Running,
            attempt: Some(attempt),
            lease_end: None,
            runner: runner.into(),
            status: "running".into(),
            server_now: 0,
            other_slot: None,
            other_started_at: None,
            retry: None,
            fence: None,
            released: None,
        }
    }

    /// A backup's naps grow while the run stays as it was, come back when it changes hands, and
    /// never pass the holder's lease end: a lease that ends is noticed as soon as before.
    #[test]
    fn a_backup_polls_slower_while_nothing_changes_but_never_past_the_lease() {
        let ms = Duration::from_millis;
        let mut pace = Pace::new(ms(500), STANDBY_POLL_SETTLED);
        assert_eq!(pace.nap(30_000), ms(500));
        for want in [1_000, 2_000, 2_000] {
            pace.saw(&held("a:1", 1), &held("a:1", 1));
            assert_eq!(pace.nap(30_000), ms(want));
        }
        // The lease ends in 300 ms: the nap ends 25 ms after it, however settled the pace.
        assert_eq!(pace.nap(300), ms(325));
        assert_eq!(pace.nap(-5_000), ms(25));
        // Taken over (attempt 2 elsewhere): back to the first pace.
        pace.saw(&held("a:1", 1), &held("b:1", 2));
        assert_eq!(pace.nap(30_000), ms(500));
        // `run`'s backup (5 s polls) never polls faster than it did.
        let pace = Pace::new(STANDBY_POLL_MAX, STANDBY_POLL_MAX.max(STANDBY_POLL_SETTLED));
        assert_eq!(pace.nap(60_000), STANDBY_POLL_MAX);
    }

    /// A server out of memory can refuse for hours: the waiter says so at once, then again every
    /// minute with how long and how many tries, not once and then nothing (#35, item 12).
    #[test]
    fn a_waiter_reminds_every_minute_while_claims_keep_failing() {
        let mut trouble = Trouble::default();
        let t0 = Instant::now();
        let at = |secs: u64| t0 + Duration::from_secs(secs);
        assert_eq!(trouble.failed_at(at(0)), Some(Say::First));
        // Backed off up to STANDBY_POLL_MAX between tries: nothing more within the minute.
        for secs in [1, 3, 7, 15, 30, 45, 59] {
            assert_eq!(trouble.failed_at(at(secs)), None, "at {secs} s");
        }
        assert_eq!(
            trouble.failed_at(at(61)),
            Some(Say::Still {
                for_ms: 61_000,
                tries: 9
            })
        );
        assert_eq!(trouble.failed_at(at(90)), None);
        assert_eq!(
            trouble.failed_at(at(121)),
            Some(Say::Still {
                for_ms: 121_000,
                tries: 11
            })
        );
        // Once a claim succeeds the trouble is forgotten: the next failure is a first again.
        let mut trouble = Trouble::default();
        assert_eq!(trouble.failed_at(at(200)), Some(Say::First));
    }
}
