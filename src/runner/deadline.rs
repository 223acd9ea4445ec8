//! The local lease deadline: until when this process may be sure that its lease still lives.
//!
//! The server decides a lease's end (`lease_end = server TIME + lease`, inside the script). This
//! process cannot read the server's clock, but it knows when it *sent* each claim or heartbeat that
//! the server confirmed: the server executed it afterwards, so the lease it granted ends at least
//! `lease` after the send. The local deadline is therefore
//!
//! ```text
//! deadline = (send time of the newest confirmed claim/heartbeat) + lease − safety margin
//! margin   = max(1 s, lease / 10), at most lease / 4
//! ```
//!
//! measured on the boot clock ([`BootTime`]), so neither a slow reply (the deadline does not start
//! when the reply arrives) nor a suspended machine (the boot clock keeps counting) can make the
//! command outlive the lease. The margin covers clock-rate differences and the time a takeover
//! needs to be noticed. When the deadline approaches without a confirmed heartbeat, the runner stops
//! the command: SIGTERM at `deadline − grace`, SIGKILL at `deadline` at the latest, where
//! `grace = min(--kill-after, lease / 10)`. So the command is gone before any other host can win the
//! next attempt.

use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A point on the machine's boot clock: CLOCK_BOOTTIME on Linux, which, unlike the monotonic clock
/// behind [`std::time::Instant`], keeps counting while the machine is suspended. Elsewhere the
/// monotonic clock (documented limit: a suspended machine's command may outlive its lease there).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct BootTime(Duration);

impl BootTime {
    pub fn now() -> BootTime {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        let id = nix::time::ClockId::CLOCK_BOOTTIME;
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        let id = nix::time::ClockId::CLOCK_MONOTONIC;
        // clock_gettime cannot fail for a clock the kernel has; zero would only make deadlines earlier.
        let ts = nix::time::clock_gettime(id).unwrap_or(nix::sys::time::TimeSpec::new(0, 0));
        BootTime(Duration::new(
            u64::try_from(ts.tv_sec()).unwrap_or(0),
            u32::try_from(ts.tv_nsec()).unwrap_or(0),
        ))
    }

    /// Nanoseconds on the boot clock (what the guard process compares against).
    pub fn as_nanos(self) -> u64 {
        u64::try_from(self.0.as_nanos()).unwrap_or(u64::MAX)
    }

    pub fn from_nanos(nanos: u64) -> BootTime {
        BootTime(Duration::from_nanos(nanos))
    }

    pub fn saturating_sub(self, d: Duration) -> BootTime {
        BootTime(self.0.saturating_sub(d))
    }

    /// How long until `self` (zero when it has passed).
    pub fn left(self) -> Duration {
        self.0.saturating_sub(BootTime::now().0)
    }

    pub fn elapsed(self) -> Duration {
        BootTime::now().0.saturating_sub(self.0)
    }
}

impl std::ops::Add<Duration> for BootTime {
    type Output = BootTime;
    fn add(self, d: Duration) -> BootTime {
        BootTime(self.0 + d)
    }
}

/// How much earlier than the server's lease end the local deadline lies.
pub fn safety_margin(lease: Duration) -> Duration {
    (lease / 10).max(Duration::from_secs(1)).min(lease / 4)
}

/// How long before the deadline the command gets SIGTERM (SIGKILL follows at the deadline).
pub fn stop_grace(lease: Duration, kill_after: Duration) -> Duration {
    kill_after.min(lease / 10)
}

#[derive(Debug)]
struct State {
    /// The local deadline (see the module doc).
    deadline: BootTime,
    /// When the newest confirmed claim or heartbeat was sent.
    confirmed_sent: BootTime,
    /// Why the newest heartbeat attempt failed, while none has been confirmed since.
    failure: Option<String>,
    /// When the heartbeat now awaiting its reply was sent (None: nothing in flight).
    in_flight: Option<BootTime>,
    /// When the server last answered anything (a claim, a heartbeat).
    last_reply: Option<BootTime>,
    /// Set when the server said the run is no longer ours (another token, or over).
    lost: Option<String>,
    /// How the run was lost, when the server said so.
    loss: Loss,
}

/// How a held run stopped being ours, as far as the server said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Loss {
    /// Not (yet) said by the server: the deadline decides.
    #[default]
    Unknown,
    /// Another token holds it, or it ended.
    Taken,
    /// An operator released it (`anarchon release`): stop the command and record the attempt.
    Released,
    /// The server no longer knows the run at all: it lost its data (a restart without
    /// persistence, a flush, eviction). Another host may claim it at once: stop the command now.
    StoreLost,
}

/// The lease deadline of one held run, shared by the keeper (which renews it), the command's
/// watcher (which enforces it) and the recording of the end (which stops retrying at it).
#[derive(Debug, Clone)]
pub struct LeaseDeadline {
    lease: Duration,
    state: Arc<Mutex<State>>,
}

impl LeaseDeadline {
    /// The deadline of a lease of `lease` whose claim was sent at `sent`.
    pub fn new(lease: Duration, sent: BootTime) -> Self {
        LeaseDeadline {
            lease,
            state: Arc::new(Mutex::new(State {
                deadline: sent + lease.saturating_sub(safety_margin(lease)),
                confirmed_sent: sent,
                failure: None,
                in_flight: None,
                last_reply: Some(BootTime::now()),
                lost: None,
                loss: Loss::Unknown,
            })),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic elsewhere must not disable the deadline: the data stays valid.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn lease(&self) -> Duration {
        self.lease
    }

    /// The server confirmed a heartbeat sent at `sent`: the deadline moves forward (never back).
    pub fn confirmed(&self, sent: BootTime) {
        let mut s = self.lock();
        let deadline = sent + self.lease.saturating_sub(safety_margin(self.lease));
        if deadline > s.deadline {
            s.deadline = deadline;
        }
        if sent > s.confirmed_sent {
            s.confirmed_sent = sent;
        }
        s.failure = None;
        s.in_flight = None;
        s.last_reply = Some(BootTime::now());
    }

    /// A heartbeat was sent at `sent` and awaits its reply: a deadline that passes meanwhile is
    /// explained by the network or the server, not by this process.
    pub fn sending(&self, sent: BootTime) {
        self.lock().in_flight = Some(sent);
    }

    /// A heartbeat attempt failed (unreachable, timed out): remembered to explain a later stop.
    pub fn failed(&self, why: String) {
        let mut s = self.lock();
        s.failure = Some(why);
        s.in_flight = None;
    }

    /// The server answered that the run is no longer ours, and how.
    pub fn lost(&self, why: String, loss: Loss) {
        let mut s = self.lock();
        if s.lost.is_none() {
            s.lost = Some(why);
            s.loss = loss;
            s.in_flight = None;
            s.last_reply = Some(BootTime::now());
        }
    }

    /// How the run was lost, if the server said so.
    pub fn loss(&self) -> Loss {
        self.lock().loss
    }

    pub fn deadline(&self) -> BootTime {
        self.lock().deadline
    }

    /// Whether the lease must be given up now, and why in words: the server said so, or the deadline
    /// is within `grace` with no confirmed heartbeat.
    pub fn lost_reason(&self, grace: Duration) -> Option<String> {
        let s = self.lock();
        if let Some(why) = &s.lost {
            return Some(why.clone());
        }
        if BootTime::now() < s.deadline.saturating_sub(grace) {
            return None;
        }
        // Say what was observed: a failure, a request still unanswered, or nothing sent at all.
        let since = humantime::format_duration(round_ms(s.confirmed_sent.elapsed()));
        let ends =
            humantime::format_duration(round_ms(s.deadline.left() + safety_margin(self.lease)));
        let last_reply = s.last_reply.map_or("never".to_string(), |t| {
            format!("{} ago", humantime::format_duration(round_ms(t.elapsed())))
        });
        Some(match (&s.failure, s.in_flight) {
            (_, Some(sent)) => format!(
                "a heartbeat sent {} ago is still unanswered (the last reply from Redis came {last_reply}): a slow or cut network, or a stalled server; no heartbeat was confirmed for {since}, and the lease ends on the server within {ends}",
                humantime::format_duration(round_ms(sent.elapsed()))
            ),
            (Some(why), None) => format!(
                "{why}; no heartbeat was confirmed for {since} (the last reply from Redis came {last_reply}), and the lease ends on the server within {ends}"
            ),
            // The newest confirmation came late: the lease was spent waiting for Redis's answer.
            (None, None) if slow_answer(&s, self.lease).is_some() => format!(
                "the newest claim or heartbeat, sent {since} ago, was answered only {} after it was sent (a stalled or paused server: CLIENT PAUSE, a slow fork, a stopped VM of Redis), and too little of the lease was left for the next one; the lease ends on the server within {ends}",
                humantime::format_duration(round_ms(
                    slow_answer(&s, self.lease).unwrap_or_default()
                ))
            ),
            (None, None) => format!(
                "this process sent no heartbeat for {since}, past its lease deadline, with nothing in flight to Redis: it was stopped or starved (SIGSTOP, a paused VM, a suspended or overloaded machine)"
            ),
        })
    }
}

/// How long Redis took to answer the newest confirmed claim or heartbeat, when that was more than
/// the lease's safety margin: a wait in Redis (a stall, a pause) rather than in this process.
fn slow_answer(s: &State, lease: Duration) -> Option<Duration> {
    let answered = s.last_reply?;
    let took = Duration::from_nanos(
        answered
            .as_nanos()
            .saturating_sub(s.confirmed_sent.as_nanos()),
    );
    (took > safety_margin(lease)).then_some(took)
}

fn round_ms(d: Duration) -> Duration {
    Duration::from_millis(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_margin_is_a_tenth_at_least_a_second_and_never_most_of_the_lease() {
        assert_eq!(
            safety_margin(Duration::from_secs(30)),
            Duration::from_secs(3)
        );
        assert_eq!(
            safety_margin(Duration::from_secs(5)),
            Duration::from_secs(1)
        );
        assert_eq!(
            safety_margin(Duration::from_secs(1)),
            Duration::from_millis(250)
        );
        assert_eq!(
            stop_grace(Duration::from_secs(30), Duration::from_secs(10)),
            Duration::from_secs(3)
        );
        assert_eq!(
            stop_grace(Duration::from_secs(600), Duration::from_secs(10)),
            Duration::from_secs(10)
        );
    }

    #[test]
    fn the_deadline_counts_from_the_send_and_never_moves_back() {
        let sent = BootTime::now().saturating_sub(Duration::from_secs(2));
        let d = LeaseDeadline::new(Duration::from_secs(10), sent);
        assert_eq!(d.deadline(), sent + Duration::from_secs(9));
        d.confirmed(sent.saturating_sub(Duration::from_secs(1)));
        assert_eq!(d.deadline(), sent + Duration::from_secs(9));
        d.confirmed(sent + Duration::from_secs(1));
        assert_eq!(d.deadline(), sent + Duration::from_secs(10));
        assert!(d.lost_reason(Duration::from_secs(1)).is_none());
    }

    #[test]
    fn a_passed_deadline_says_why() {
        let sent = BootTime::now().saturating_sub(Duration::from_secs(5));
        let d = LeaseDeadline::new(Duration::from_secs(2), sent);
        // Answered at once, 5 s ago, and nothing since: this process was stopped.
        d.lock().last_reply = Some(sent);
        let why = d.lost_reason(Duration::ZERO).unwrap();
        assert!(why.contains("stopped or starved"), "{why}");
        d.failed("connection refused".into());
        let why = d.lost_reason(Duration::ZERO).unwrap();
        assert!(why.contains("connection refused"), "{why}");
        d.sending(BootTime::now());
        let why = d.lost_reason(Duration::ZERO).unwrap();
        assert!(why.contains("still unanswered"), "{why}");
        d.lost("attempt 2 is now held by b".into(), Loss::Taken);
        // A claim that Redis answered late (a paused server) is said so, not blamed on SIGSTOP.
        let late = LeaseDeadline::new(
            Duration::from_secs(2),
            BootTime::now().saturating_sub(Duration::from_millis(1_900)),
        );
        let why = late.lost_reason(Duration::from_millis(200)).unwrap();
        assert!(
            why.contains("was answered only") && why.contains("paused server"),
            "{why}"
        );
        assert!(!why.contains("SIGSTOP"), "{why}");
        assert_eq!(d.loss(), Loss::Taken);
        assert_eq!(
            d.lost_reason(Duration::ZERO).unwrap(),
            "attempt 2 is now held by b"
        );
    }
}
