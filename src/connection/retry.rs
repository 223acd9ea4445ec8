//! One retry policy for trouble that passes, for every place that opens the store or repeats an
//! idempotent call: a server that does not answer for a moment (transient: a stall, a failover, a
//! cut connection) is retried for one span, a server that answers but refuses for a reason that
//! passes (full: OOM under noeviction; BUSY, LOADING) for another, each with the same doubling
//! back-off. Any other error ends the retries at once. Whoever retries says it, once, its own way;
//! after a transient error it opens a fresh connection ([`super::Connection::reconnect`]), since
//! after a server restart or a cut connection the old one stays broken.

use std::time::Duration;

use tokio::time::Instant;

use super::Connection;
use crate::error::{Error, Result};

/// How long, and how often, trouble that passes is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    /// The first pause, doubled after each try up to `cap`.
    pub first: Duration,
    pub cap: Duration,
    /// How long a server that does not answer is retried (None: until the caller stops).
    pub transient_for: Option<Duration>,
    /// How long a refusal that passes is retried (None: until the caller stops).
    pub refused_for: Option<Duration>,
}

impl Retry {
    /// Opening the store for a slot (`run`, each slot of `anarchon cron`) and the small idempotent
    /// calls around a claim: every host of a fleet meets the same stall at once, and giving up at
    /// the first timeout lost the slot on all of them. A refusal is waited for until `max_late`
    /// after the slot (cron started the run about at the slot): a full Redis is an outage too.
    pub fn for_a_slot(max_late: Duration) -> Retry {
        Retry {
            first: Duration::from_millis(100),
            cap: Duration::from_secs(1),
            transient_for: Some(SLOT_RETRY_FOR),
            refused_for: Some(SLOT_RETRY_FOR.max(max_late)),
        }
    }

    /// The daemon's first connection: until the store answers (a replica may start before Redis
    /// does; exiting instead put an orchestrator into a restart loop) or the daemon is stopped.
    pub const UNTIL_STOPPED: Retry = Retry {
        first: Duration::from_millis(200),
        cap: Duration::from_secs(5),
        transient_for: None,
        refused_for: None,
    };

    /// The small idempotent writes and reads around a claim (a slot's skip record, the waiting
    /// place, a release for `--overlap replace`, an old name's claim), and any span of retries
    /// bounded by a moment ([`Retry::until`]): a host that gave up on one at the first timeout
    /// left its slot with no record; when a stall hits every host of a fleet at once, nobody
    /// records it (found by the soak's loss checker).
    pub const AROUND_A_CLAIM: Retry = Retry {
        first: Duration::from_millis(100),
        cap: Duration::from_secs(2),
        transient_for: Some(SLOT_RETRY_FOR),
        refused_for: Some(SLOT_RETRY_FOR),
    };

    /// A reader in the background that nobody waits for (the daemon's run-now requests): every
    /// error is retried, with back-off, until the daemon stops; a success starts the back-off
    /// anew. Its pauses come from [`Tries::next_pause`], whatever the error.
    pub const IN_THE_BACKGROUND: Retry = Retry {
        first: Duration::from_millis(200),
        cap: Duration::from_secs(5),
        transient_for: None,
        refused_for: None,
    };

    /// This policy's pauses, with both spans ending at `give_up` (a lease's end, a record's last
    /// moment).
    pub fn until(self, give_up: Instant) -> Retry {
        let left = Some(give_up.saturating_duration_since(Instant::now()));
        Retry {
            transient_for: left,
            refused_for: left,
            ..self
        }
    }

    /// Runs `call` again through trouble that passes, as this policy says, with a fresh
    /// connection after a transient error ([`Tries::pause_after`]); the first error that does not
    /// pass, or the last of the span, is returned. For idempotent calls only.
    pub async fn run<T>(
        self,
        conn: &mut Connection,
        mut call: impl AsyncFnMut(&mut Connection) -> Result<T>,
    ) -> Result<T> {
        let mut tries = self.start();
        loop {
            match call(conn).await {
                Err(e) => {
                    if !tries.pause_after(conn, &e).await {
                        return Err(e);
                    }
                }
                done => return done,
            }
        }
    }

    /// The tries of one call, from now.
    pub fn start(self) -> Tries {
        Tries {
            policy: self,
            started: Instant::now(),
            next: self.first,
        }
    }
}

/// How long a slot's opening and the calls around its claim are retried through connection
/// trouble ([`Retry::for_a_slot`]).
pub const SLOT_RETRY_FOR: Duration = Duration::from_secs(10);

/// The tries of one call under a [`Retry`].
#[derive(Debug)]
pub struct Tries {
    policy: Retry,
    started: Instant,
    next: Duration,
}

impl Tries {
    /// How long to pause before trying again after `error`, or None when it ends the retries (an
    /// error that does not pass, or one retried for its whole span).
    pub fn after(&mut self, error: &Error) -> Option<Duration> {
        let span = if error.is_transient() {
            self.policy.transient_for
        } else if error.can_pass() {
            self.policy.refused_for
        } else {
            return None;
        };
        let left = match span {
            Some(span) if self.started.elapsed() >= span => return None,
            Some(span) => span - self.started.elapsed(),
            None => Duration::MAX,
        };
        Some(self.next_pause().min(left))
    }

    /// The next pause of the back-off (doubled after each, up to the policy's cap), whatever
    /// the error: for a caller that decides itself when to give up.
    pub fn next_pause(&mut self) -> Duration {
        let pause = self.next;
        self.next = (self.next * 2).min(self.policy.cap);
        pause
    }

    /// After `error`: pauses as [`Tries::after`] says, then, after a transient error, opens a
    /// fresh connection in place of `conn` (after a server restart or a cut connection the old
    /// one stays broken; one that answered with a refusal is good). False, at once, when the
    /// retries are over.
    pub async fn pause_after(&mut self, conn: &mut Connection, error: &Error) -> bool {
        let Some(pause) = self.after(error) else {
            return false;
        };
        tokio::time::sleep(pause).await;
        if error.is_transient() {
            let left = self
                .span_for(error)
                .map(|span| span.saturating_sub(self.elapsed()));
            self.reconnect(conn, left).await;
        }
        true
    }

    /// The next pause, never past `until`, then a fresh connection if there is time left: the
    /// step of a caller that keeps its own deadline (the heartbeats, until the lease's end) or
    /// has no error to judge (an answer that did not come in time).
    pub async fn pause_and_reconnect(&mut self, conn: &mut Connection, until: Instant) {
        let left = || until.saturating_duration_since(Instant::now());
        tokio::time::sleep(self.next_pause().min(left())).await;
        if !left().is_zero() {
            self.reconnect(conn, Some(left())).await;
        }
    }

    /// The one reconnect of every retry: a fresh connection, waited for at most `within` (or the
    /// policy's cap when the span is open); a failure is the next try's to meet.
    async fn reconnect(&self, conn: &mut Connection, within: Option<Duration>) {
        let within = within.unwrap_or(self.policy.cap.max(Duration::from_secs(1)));
        if !within.is_zero() {
            let _ = tokio::time::timeout(within, conn.reconnect()).await;
        }
    }

    /// How long errors of `error`'s kind are retried in all (None: until the caller stops).
    pub fn span_for(&self, error: &Error) -> Option<Duration> {
        if error.is_transient() {
            self.policy.transient_for
        } else {
            self.policy.refused_for
        }
    }

    /// How long the retries have gone on.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transient() -> Error {
        Error::Connection {
            url: "redis://127.0.0.1:1".into(),
            detail: "connection refused".into(),
        }
    }

    #[test]
    fn pauses_double_up_to_the_cap_and_end_with_the_span() {
        let mut tries = Retry::for_a_slot(Duration::ZERO).start();
        let pauses: Vec<Duration> = (0..5).filter_map(|_| tries.after(&transient())).collect();
        let ms = |n| Duration::from_millis(n);
        assert_eq!(pauses, [ms(100), ms(200), ms(400), ms(800), ms(1000)]);
        let spent = Retry {
            transient_for: Some(Duration::ZERO),
            ..Retry::UNTIL_STOPPED
        };
        assert_eq!(
            spent.start().after(&transient()),
            None,
            "retried past its span"
        );
        // An error that does not pass ends the retries at once; until stopped, the rest go on.
        let mut tries = Retry::UNTIL_STOPPED.start();
        assert_eq!(tries.after(&Error::usage("bad flag")), None);
        assert_eq!(tries.after(&transient()), Some(ms(200)));
        assert_eq!(tries.span_for(&transient()), None);
    }

    #[test]
    fn a_pause_never_runs_past_the_span_and_until_bounds_both_spans() {
        // 10 s of span: the pauses are the back-off's, capped at 2 s around a claim.
        let mut tries = Retry::AROUND_A_CLAIM.start();
        let pauses: Vec<Duration> = (0..6).filter_map(|_| tries.after(&transient())).collect();
        let ms = |n| Duration::from_millis(n);
        assert_eq!(
            pauses,
            [ms(100), ms(200), ms(400), ms(800), ms(1600), ms(2000)]
        );
        // A span of 150 ms: the second pause is cut to what is left of it.
        let short = Retry::AROUND_A_CLAIM.until(Instant::now() + ms(150));
        assert_eq!(short.transient_for, short.refused_for);
        let mut tries = short.start();
        assert_eq!(tries.after(&transient()), Some(ms(100)));
        assert!(tries.after(&transient()).is_some_and(|p| p <= ms(150)));
        // In the background every error is retried, the back-off's pauses whatever it was.
        let mut tries = Retry::IN_THE_BACKGROUND.start();
        let pauses: Vec<Duration> = (0..7).map(|_| tries.next_pause()).collect();
        assert_eq!(
            pauses,
            [
                ms(200),
                ms(400),
                ms(800),
                ms(1600),
                ms(3200),
                ms(5000),
                ms(5000)
            ]
        );
    }
}
