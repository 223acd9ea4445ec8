//! One retry policy for trouble that passes, for every place that opens the store or repeats an
//! idempotent call: a server that does not answer for a moment (transient: a stall, a failover, a
//! cut connection) is retried for one span, a server that answers but refuses for a reason that
//! passes (full: OOM under noeviction; BUSY, LOADING) for another, each with the same doubling
//! back-off. Any other error ends the retries at once. Whoever retries says it, once, its own way;
//! after a transient error it opens a fresh connection ([`super::Connection::reconnect`]), since
//! after a server restart or a cut connection the old one stays broken.

use std::time::Duration;

use tokio::time::Instant;

use crate::error::Error;

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
        if span.is_some_and(|span| self.started.elapsed() >= span) {
            return None;
        }
        let pause = self.next;
        self.next = (self.next * 2).min(self.policy.cap);
        Some(pause)
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
}
