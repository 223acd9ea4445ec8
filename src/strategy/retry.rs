//! Retries of a failed command (`--retries`): how many a slot may be given, how long each waits,
//! and which failures count. The store's side is lua/lease/retry.lua: the failed attempt's finish
//! records it and leaves the run in progress until the retry is due, when any claimant takes it
//! over as the next attempt (docs/store-format.md, "Retries").

use std::time::Duration;

/// A job's retry policy.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Retries a slot may be given (its failed attempts after the first).
    pub retries: u32,
    /// The wait before the first retry.
    pub delay: Duration,
    /// Each later wait is the one before times this (1: the same every time).
    pub backoff: f64,
    /// No wait is longer.
    pub max_delay: Duration,
    /// The exit codes that count as a failure worth a retry (empty: every failure, a signal and a
    /// timeout among them).
    pub on_exit: Vec<i32>,
}

impl RetryPolicy {
    /// The defaults of `--retry-delay`, `--retry-backoff` and `--retry-max-delay`.
    pub const DEFAULT_DELAY: Duration = Duration::from_secs(30);
    pub const DEFAULT_BACKOFF: f64 = 2.0;
    pub const DEFAULT_MAX_DELAY: Duration = Duration::from_secs(600);

    /// Whether a failed command that exited with `exit_code` (None: a signal, a timeout, or it
    /// never started) is retried.
    pub fn counts(&self, exit_code: Option<i32>) -> bool {
        self.on_exit.is_empty() || exit_code.is_some_and(|code| self.on_exit.contains(&code))
    }

    /// The wait before retry `nth` (1 for the first), as the finish script works it out.
    pub fn delay_before(&self, nth: u32) -> Duration {
        let factor = self.backoff.powi(nth.saturating_sub(1).min(64) as i32);
        let ms = (self.delay.as_millis() as f64 * factor).min(self.max_delay.as_millis() as f64);
        Duration::from_millis(ms as u64)
    }

    /// The finish script's arguments 6 to 9: retries, first delay (ms), backoff, longest delay
    /// (ms).
    pub fn script_args(&self) -> [String; 4] {
        [
            self.retries.to_string(),
            self.delay.as_millis().to_string(),
            format!("{}", self.backoff),
            self.max_delay.as_millis().to_string(),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(on_exit: Vec<i32>) -> RetryPolicy {
        RetryPolicy {
            retries: 3,
            delay: Duration::from_secs(10),
            backoff: 2.0,
            max_delay: Duration::from_secs(30),
            on_exit,
        }
    }

    #[test]
    fn each_wait_doubles_up_to_the_longest() {
        let p = policy(vec![]);
        let waits: Vec<u64> = (1..=4).map(|n| p.delay_before(n).as_secs()).collect();
        assert_eq!(waits, vec![10, 20, 30, 30]);
    }

    #[test]
    fn listed_exit_codes_alone_count_when_some_are_listed() {
        assert!(policy(vec![]).counts(Some(1)));
        assert!(policy(vec![]).counts(None));
        assert!(policy(vec![75]).counts(Some(75)));
        assert!(!policy(vec![75]).counts(Some(1)));
        assert!(!policy(vec![75]).counts(None));
    }
}
