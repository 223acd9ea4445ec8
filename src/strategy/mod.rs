//! Strategies: how exactly one claimant wins a run (see the seed's table).
//!
//! | strategy  | leases | works on            | remembers a run for      |
//! |-----------|--------|---------------------|--------------------------|
//! | lease     | yes    | Redis 5+, Valkey    | as long as a late claim could ask |
//! | stream-id | no     | Redis 5+, Valkey    | forever (stream IDs only grow)     |
//! | idmp      | no     | Redis 8.6+ only     | `--idmp-duration` (5 min)          |
//! | script    | no     | Redis 5+, Valkey    | `--window` (5 min)                 |

pub mod claim_only;
pub mod lease;

use std::time::Duration;

use crate::cli::{Backend, LeaseArgs, StrategyArgs, StrategyName};
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

    /// Builds the strategy from its flags: refuses settings of another strategy, and idmp on the
    /// Valkey flavour.
    pub fn from_args(args: &StrategyArgs, backend: Backend) -> Result<Strategy> {
        let name = args.strategy.unwrap_or(StrategyName::Lease);
        let misplaced = |flag: &str, owner: &str| {
            Error::usage(format!(
                "{flag} is a setting of the {owner} strategy, not of {}\n  hint: drop {flag}, or pass --strategy {owner}",
                strategy_name(name)
            ))
        };
        if args.window.is_some() && name != StrategyName::Script {
            return Err(misplaced("--window", "script"));
        }
        if args.idmp_duration.is_some() && name != StrategyName::Idmp {
            return Err(misplaced("--idmp-duration", "idmp"));
        }
        if args.idmp_max_size.is_some() && name != StrategyName::Idmp {
            return Err(misplaced("--idmp-max-size", "idmp"));
        }
        Ok(match name {
            StrategyName::Lease => Strategy::Lease,
            StrategyName::StreamId => Strategy::StreamId,
            StrategyName::Script => Strategy::Script {
                window: args.window.unwrap_or(Self::DEFAULT_WINDOW),
            },
            StrategyName::Idmp if backend == Backend::Valkey => {
                return Err(Error::usage(
                    "the valkey backend has no idmp strategy: Valkey has no idempotent XADD\n  hint: use --strategy lease (leases, backups) or stream-id / script",
                ));
            }
            StrategyName::Idmp => Strategy::Idmp {
                duration_secs: args.idmp_duration.unwrap_or(Self::DEFAULT_IDMP_DURATION),
                max_size: args.idmp_max_size.unwrap_or(Self::DEFAULT_IDMP_MAX_SIZE),
            },
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Strategy::Lease => "lease",
            Strategy::StreamId => "stream-id",
            Strategy::Idmp { .. } => "idmp",
            Strategy::Script { .. } => "script",
        }
    }

    pub fn has_leases(self) -> bool {
        self == Strategy::Lease
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

fn strategy_name(name: StrategyName) -> &'static str {
    match name {
        StrategyName::Lease => "lease",
        StrategyName::StreamId => "stream-id",
        StrategyName::Idmp => "idmp",
        StrategyName::Script => "script",
    }
}

impl LeaseArgs {
    /// The lease options given on the command line, for [`Strategy::refuse_lease_options`].
    pub fn given(&self) -> Vec<(&'static str, bool)> {
        vec![
            ("--lease", self.lease.is_some()),
            ("--max-attempts", self.max_attempts.is_some()),
            ("--overlap", self.overlap.is_some()),
        ]
    }

    pub fn lease_or_default(&self) -> Duration {
        self.lease.unwrap_or(Duration::from_secs(30))
    }

    pub fn max_attempts_or_default(&self) -> u32 {
        self.max_attempts.unwrap_or(3)
    }
}

/// A fresh claim token: 128 random bits in hex. Only its holder can heartbeat or finish the run.
pub fn new_token() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// The default runner name, `host:pid`, so an operator can find the process that holds a lease.
pub fn default_runner() -> String {
    let host = gethostname::gethostname().to_string_lossy().into_owned();
    format!("{host}:{}", std::process::id())
}

/// Claims `req.slot` of `job` with any strategy: the one entry point for claim, run and run-now.
pub async fn claim(
    conn: &mut crate::connection::Connection,
    prefix: &str,
    job: &str,
    strategy: Strategy,
    req: &lease::ClaimRequest,
    server_now: i64,
) -> Result<lease::ClaimReply> {
    if strategy.has_leases() {
        return lease::claim(conn, &crate::store::LeaseKeys::new(prefix, job), req).await;
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
    if reply.outcome == lease::ClaimOutcome::Won {
        // History is trimmed on claim for every strategy (the backend's historySize/historyTtlMs),
        // within what the strategy must remember: the script strategy's window at least.
        let protect = match strategy {
            Strategy::Script { window } => req.history.keep_claimable.max(window),
            _ => req.history.keep_claimable,
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
            eprintln!("warning: {job}'s history was not trimmed: {e}");
        }
    }
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(name: Option<StrategyName>) -> StrategyArgs {
        StrategyArgs {
            strategy: name,
            window: None,
            idmp_duration: None,
            idmp_max_size: None,
        }
    }

    #[test]
    fn tokens_are_unique_hex() {
        let a = new_token();
        let b = new_token();
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
        assert!(default_runner().ends_with(&format!(":{}", std::process::id())));
    }

    #[test]
    fn settings_belong_to_their_strategy() {
        assert_eq!(
            Strategy::from_args(&args(None), Backend::Redis).unwrap(),
            Strategy::Lease
        );
        let mut a = args(Some(StrategyName::Script));
        a.window = Some(Duration::from_secs(600));
        assert_eq!(
            Strategy::from_args(&a, Backend::Redis).unwrap(),
            Strategy::Script {
                window: Duration::from_secs(600)
            }
        );
        a.strategy = Some(StrategyName::StreamId);
        let err = Strategy::from_args(&a, Backend::Redis)
            .unwrap_err()
            .to_string();
        assert!(err.contains("--window") && err.contains("script"), "{err}");
        let mut a = args(None);
        a.idmp_max_size = Some(5);
        assert!(Strategy::from_args(&a, Backend::Redis).is_err());
        let a = args(Some(StrategyName::Idmp));
        assert_eq!(
            Strategy::from_args(&a, Backend::Redis).unwrap(),
            Strategy::Idmp {
                duration_secs: 300,
                max_size: 1000
            }
        );
        let err = Strategy::from_args(&a, Backend::Valkey).unwrap_err();
        assert!(matches!(err, Error::Usage(_)));
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
