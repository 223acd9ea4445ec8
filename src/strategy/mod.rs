//! Strategies: how exactly one claimant wins a run (the backend documentation's table; the keys
//! and scripts of each are in docs/store-format.md).
//!
//! The lease-or-claim-only decision is made here, once: [`claim`], [`finish`] and [`trim`] dispatch
//! on the [`Strategy`] (or the job's [`crate::store::JobKeys`]); commands and the runner call them
//! and never pick a layout's function themselves. Adding a strategy touches this module (the enum
//! and its dispatch), its own module and Lua script, and the command line (`StrategyName` in
//! cli.rs, resolved in settings.rs).
//!
//! | strategy  | leases | works on            | remembers a run for      |
//! |-----------|--------|---------------------|--------------------------|
//! | lease     | yes    | Redis 5+, Valkey    | as long as a late claim could ask |
//! | stream-id | no     | Redis 5+, Valkey    | forever (stream IDs only grow)     |
//! | idmp      | no     | Redis 8.6+ only     | `--idmp-duration` (5 min)          |
//! | script    | no     | Redis 5+, Valkey    | `--window` (5 min)                 |

pub mod claim;
pub mod claim_only;
pub mod lease;
pub mod overlap;
pub mod retry;

pub use overlap::OverlapPolicy;

use std::time::Duration;

use crate::error::{Error, Result};

/// A strategy with its settings, validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    Lease,
    StreamId,
    Idmp { duration_secs: u32, max_size: u32 },
    Script { window: Duration },
}

impl Strategy {
    pub const DEFAULT_WINDOW: Duration = Duration::from_secs(300);
    pub const DEFAULT_IDMP_DURATION: u32 = 300;
    pub const DEFAULT_IDMP_MAX_SIZE: u32 = 1000;

    pub fn name(self) -> &'static str {
        match self {
            Strategy::Lease => "lease",
            Strategy::StreamId => "stream-id",
            Strategy::Idmp { .. } => "idmp",
            Strategy::Script { .. } => "script",
        }
    }

    /// The key layout the strategy writes: lease for `lease`, claim-only for the others.
    pub fn layout(self) -> crate::store::Layout {
        match self {
            Strategy::Lease => crate::store::Layout::Lease,
            Strategy::StreamId | Strategy::Idmp { .. } | Strategy::Script { .. } => {
                crate::store::Layout::ClaimOnly
            }
        }
    }

    /// Whether runs of this strategy hold leases (its layout is the lease layout).
    pub fn has_leases(self) -> bool {
        self.layout() == crate::store::Layout::Lease
    }

    /// Refuses lease options (given as `(flag, given)`) for a strategy without leases.
    pub fn refuse_lease_options(self, given: &[(&str, bool)]) -> Result<()> {
        if self.has_leases() {
            return Ok(());
        }
        match given.iter().find(|(_, g)| *g) {
            Some((flag, _)) => Err(Error::usage(format!(
                "{flag} is a lease option, and the {} strategy has no leases\n  hint: drop {flag}, or use --strategy lease (the default)",
                self.name()
            ))),
            None => Ok(()),
        }
    }
}

/// A fresh claim token (`store::token`). Only its holder can heartbeat or finish the run.
pub use crate::store::token::new_token;

/// The default runner name, `host:pid`, so an operator can find the process that holds a lease.
pub fn default_runner() -> String {
    let host = gethostname::gethostname().to_string_lossy().into_owned();
    format!("{host}:{}", std::process::id())
}

/// The job a claimant works on, and how: everything a strategy needs to find its keys.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    pub prefix: &'a str,
    pub job: &'a str,
    pub strategy: Strategy,
    /// The store format the lease scripts write in (the format key decides).
    pub format: crate::store::LeaseFormat,
}

impl<'a> Target<'a> {
    /// `job` under `prefix`, claimed with `strategy`, in the format `store` found.
    pub fn new(
        prefix: &'a str,
        job: &'a str,
        strategy: Strategy,
        store: &crate::store::StoreCheck,
    ) -> Self {
        Target {
            prefix,
            job,
            strategy,
            format: store.lease_format(),
        }
    }

    /// The job's keys in the lease layout, in its store format.
    pub fn lease_keys(&self) -> crate::store::LeaseKeys {
        crate::store::LeaseKeys::new(self.prefix, self.job).with_format(self.format)
    }
}

/// How one attempt ended, as finish records it.
#[derive(Debug, Clone, Copy)]
pub struct Ending<'a> {
    pub kind: crate::store::RunKind,
    pub slot: i64,
    /// The attempt's token: only its holder may record the end.
    pub token: &'a str,
    pub status: lease::FinishStatus,
    /// JSON text (an object, or `null`).
    pub result_json: &'a str,
    /// The end time claim-only strategies record (they have no script to read the server's clock
    /// at the end); the lease scripts read the server's.
    pub ended_at: i64,
    /// The command ended by itself, not stopped for a release: a release its holder had not heard
    /// of yet stopped nothing, and the attempt is recorded as it ended (issue #35). False where the
    /// caller cannot tell (`anarchon finish`): the release's status is recorded, as before.
    pub by_itself: bool,
    /// A failed command's retries (`--retries`; lease strategy only): with one left, the attempt
    /// is recorded failed and the run waits for it, answered [`lease::TokenOutcome::Retry`].
    pub retry: Option<&'a retry::RetryPolicy>,
}

/// Ends a claimed run with any strategy: the one entry point for `finish` and the runner. The
/// lease strategy checks the token and ends the attempt; the claim-only ones check the token against
/// the claim entry and add the one result.
pub async fn finish(
    conn: &mut crate::connection::Connection,
    target: Target<'_>,
    ending: &Ending<'_>,
) -> Result<lease::TokenReply> {
    if target.strategy.has_leases() {
        let keys = target.lease_keys();
        let finish = lease::codec::Finish {
            slot: ending.slot,
            token: ending.token,
            status: ending.status,
            result_json: ending.result_json,
            by_itself: ending.by_itself,
            retry: ending.retry,
        };
        return lease::codec::call(conn, &keys, &finish).await;
    }
    let keys = crate::store::ClaimKeys::new(target.prefix, target.job);
    claim_only::finish(conn, &keys, target.strategy, ending).await
}

/// Trims a job's history with its layout's rules: the one entry point for `anarchon trim`.
pub async fn trim(
    conn: &mut crate::connection::Connection,
    keys: &crate::store::JobKeys,
    policy: &claim::HistoryPolicy,
    now: i64,
    dry_run: bool,
) -> Result<Vec<i64>> {
    match keys {
        crate::store::JobKeys::Lease(k) => lease::trim(conn, k, policy, dry_run).await,
        crate::store::JobKeys::ClaimOnly(k) => {
            claim_only::trim(conn, k, policy, now, dry_run).await
        }
    }
}

/// Claims `req.slot` of `job` with any strategy: the one entry point for claim, run and run-now.
pub async fn claim(
    conn: &mut crate::connection::Connection,
    target: Target<'_>,
    req: &claim::ClaimRequest,
    server_now: i64,
) -> Result<lease::ClaimReply> {
    let Target {
        prefix,
        job,
        strategy,
        ..
    } = target;
    if strategy.has_leases() {
        return lease::claim(conn, &target.lease_keys(), req).await;
    }
    let c = claim_only::Claim {
        slot: req.slot,
        token: &req.token,
        runner: &req.runner,
        kind: req.kind,
        server_now,
    };
    let keys = crate::store::ClaimKeys::new(prefix, job);
    let reply = claim_only::claim(conn, &keys, job, strategy, &c).await?;
    if reply.outcome == claim::ClaimOutcome::Won {
        // History is trimmed on claim for every strategy (the backend's historySize/historyTtlMs),
        // within what the strategy must remember: the script strategy's window at least.
        let protect = match strategy {
            Strategy::Script { window } => req.history.keep_claimable.max(window),
            Strategy::Lease | Strategy::StreamId | Strategy::Idmp { .. } => {
                req.history.keep_claimable
            }
        };
        let stream = match req.kind {
            crate::store::RunKind::Manual => &keys.manual,
            crate::store::RunKind::Scheduled => &keys.runs,
        };
        // The claim is won whatever trimming meets: a failure here must not cost the run.
        if let Err(e) =
            claim_only::trim_after_claim(conn, &keys, stream, &req.history, protect, server_now)
                .await
        {
            crate::errln!("warning: {job}'s history was not trimmed: {e}");
        }
    }
    Ok(reply)
}

/// Connects for a run of `strategy`: checks that the server can run it (idmp needs a server that
/// has idempotent XADD) before anything is written.
pub async fn connect_for(
    options: &crate::connection::ConnectOptions,
    strategy: Strategy,
) -> crate::error::Result<crate::connection::Connection> {
    let mut conn = crate::connection::Connection::open(options).await?;
    if matches!(strategy, Strategy::Idmp { .. }) {
        let info = crate::server::detect(&mut conn).await?;
        claim_only::require_idmp(&info)?;
    }
    Ok(conn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runners_name_host_and_process() {
        assert!(default_runner().ends_with(&format!(":{}", std::process::id())));
    }

    #[test]
    fn lease_options_are_refused_without_leases() {
        assert!(
            Strategy::StreamId
                .refuse_lease_options(&[("--lease", false)])
                .is_ok()
        );
        let err = Strategy::StreamId
            .refuse_lease_options(&[("--lease", false), ("--overlap", true)])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--overlap") && err.contains("stream-id"),
            "{err}"
        );
        assert!(
            Strategy::Lease
                .refuse_lease_options(&[("--lease", true)])
                .is_ok()
        );
    }
}
