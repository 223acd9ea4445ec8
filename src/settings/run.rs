//! `anarchon run`'s settings, resolved once from its command line ([`RunSettings::resolve`]):
//! plain values, every default applied and every combination of flags checked, so that nothing
//! below `execute` sees a clap type or re-derives a default. A crontab line (`anarchon cron`) is
//! resolved into the same type.

use std::time::Duration;

use crate::cli::{GlobalArgs, IfUnreplicated, RunArgs};
use crate::error::{Error, Result};
use crate::runner::notify::OnFailure;
use crate::runner::overlap::OnOverlap;
use crate::runner::{Backup, ReplicaWait, RunnerOptions};
use crate::schedule::{CatchUpPolicy, Schedule};
use crate::store::{RunKind, registry};
use crate::strategy::claim::{ClaimRequest, DEFAULT_KEEP_CLAIMABLE, HistoryPolicy};
use crate::strategy::retry::RetryPolicy;
use crate::strategy::{OverlapPolicy, Strategy, new_token};
use crate::time::{SlotSpec, TimeRange, millis};

/// Everything one `anarchon run` does, decided before it connects.
#[derive(Debug, Clone)]
pub struct RunSettings {
    pub job: String,
    pub strategy: Strategy,
    /// `--schedule` with its `--tz`, parsed; None with `--slot`.
    pub schedule: Option<Schedule>,
    /// `--slot`, for a run by hand.
    pub slot: Option<SlotSpec>,
    /// How long after its slot a scheduled run may still start (`--max-late`).
    pub max_late: Duration,
    /// `--jitter` (zero: none).
    pub jitter: Duration,
    pub catch_up: Option<CatchUp>,
    pub backfill: Option<Backfill>,
    /// How each slot is claimed.
    pub claim: ClaimSettings,
    /// How the command runs under its claim.
    pub runner: RunnerOptions,
    /// `--skipped-ok`: a slot another host ran, runs, overlaps or a pause skipped exits 0.
    pub skipped_ok: bool,
    /// `--on-failure`.
    pub on_failure: Option<OnFailure>,
    /// What this run records in the job registry for monitoring (not for a backfill).
    pub registry: registry::JobSettings,
    /// The job's earlier names (a crontab's `--was OLD`, or the name a reload of `anarchon cron`
    /// saw for the same line): each slot is claimed under them first, so that a rename never runs
    /// one scheduled time twice (`daemon::lineage`). Empty for `run`.
    pub lineage: Vec<String>,
    /// `--exclude`: windows whose slots are not run (recorded skipped).
    pub exclusions: Vec<crate::exclusion::Exclusion>,
    /// `--calendar`: named calendars in the store whose windows apply too.
    pub calendars: Vec<String>,
}

/// `--catch-up WINDOW` with its policy.
#[derive(Debug, Clone, Copy)]
pub struct CatchUp {
    pub window: Duration,
    pub policy: CatchUpPolicy,
    /// `--catch-up-max`: at most this many missed runs at once (the newest).
    pub max: u32,
}

impl CatchUp {
    /// How many of `missed` runs (the newest ones) the policy runs; the older ones are skipped.
    pub fn runs(self, missed: usize, current_missed: bool) -> usize {
        match self.policy {
            CatchUpPolicy::All => missed.min(self.max as usize),
            // Only the newest due run, and only when it is the one missed: an on-time current
            // run runs as usual, and one another host already ran makes every older run moot.
            CatchUpPolicy::Latest => usize::from(current_missed),
        }
    }

    /// Why the missed runs it does not run are recorded skipped.
    pub fn skip_reason(self) -> String {
        match self.policy {
            CatchUpPolicy::Latest => "--catch-up-policy latest".to_string(),
            CatchUpPolicy::All => format!("over --catch-up-max {}", self.max),
        }
    }
}

/// `--backfill RANGE`: an operator's run of a range of the schedule's slots.
#[derive(Debug, Clone, Copy)]
pub struct Backfill {
    pub range: TimeRange,
    /// `--backfill-max`.
    pub max: u32,
    /// `--include-skipped`: also slots a policy recorded skipped.
    pub include_skipped: bool,
    /// `--dry-run`: say what would run, run nothing.
    pub dry_run: bool,
}

/// How a slot is claimed: the same for every slot of one `run` but the token.
#[derive(Debug, Clone)]
pub struct ClaimSettings {
    pub lease: Duration,
    pub max_attempts: u32,
    pub overlap: OverlapPolicy,
    /// Who claims: `--runner`, or `host:pid`.
    pub runner: String,
    pub history: HistoryPolicy,
    /// How long after its slot an older run whose holder is gone is owed its takeover before a
    /// newer slot of the job runs (`run` and `cron`: `--max-late`, under forbid and buffer;
    /// zero: never, the newer run supersedes it). See [`ClaimRequest::owed_within`].
    pub owed_within: Duration,
}

impl ClaimSettings {
    /// The claim of `slot`, with a fresh token.
    pub fn request(&self, slot: i64, kind: RunKind) -> ClaimRequest {
        ClaimRequest {
            slot,
            token: new_token(),
            runner: self.runner.clone(),
            lease: self.lease,
            max_attempts: self.max_attempts,
            overlap: self.overlap,
            kind,
            history: self.history,
            continues: false,
            // A manual run (run-now) stands behind no older run: it answers at once.
            owed_within: if kind == RunKind::Scheduled {
                self.owed_within
            } else {
                Duration::ZERO
            },
        }
    }
}

impl RunSettings {
    /// The job's exclusion windows now: its own (`--exclude`), then those of its calendars as the
    /// store holds them (read at each slot: an operator's edit applies to the next one).
    pub async fn exclusions(
        &self,
        conn: &mut crate::connection::Connection,
        prefix: &str,
    ) -> Result<Vec<crate::exclusion::Exclusion>> {
        let mut windows = self.exclusions.clone();
        if !self.calendars.is_empty() {
            let names: Vec<&str> = self.calendars.iter().map(String::as_str).collect();
            windows.extend(
                crate::runner::retrying(conn, async |c| {
                    crate::store::calendar::windows_of(c, prefix, &names).await
                })
                .await?,
            );
        }
        Ok(windows)
    }

    /// Resolves `run`'s command line (with the global flags it depends on): refuses flags that do
    /// not go together before anything is read, and applies every default.
    pub fn resolve(args: RunArgs, global: &GlobalArgs, json: bool) -> Result<RunSettings> {
        let strategy = crate::settings::strategy(&args.strategy, global.backend)?;
        check_flags(&args, strategy)?;
        let schedule = args
            .schedule
            .as_deref()
            .map(|s| Schedule::parse(s, args.tz.as_deref().unwrap_or("UTC")))
            .transpose()
            .map_err(|e| Error::usage(crate::schedule::with_hint(&e)))?;
        let catch_up = args.catch_up.map(|window| CatchUp {
            window,
            policy: args.catch_up_policy,
            max: args.catch_up_max,
        });
        let flags = ClaimSettings::of_flags(&args.lease);
        let claim = ClaimSettings {
            history: HistoryPolicy {
                // How long after its slot a run's state must be kept: it must outlive every
                // claim that may still ask for it (--max-late, --catch-up, and every attempt's
                // lease), or it would run twice.
                // Retries too: each waits up to its delay and runs under a lease.
                keep_claimable: (args.max_late
                    + args.catch_up.unwrap_or(Duration::ZERO)
                    + flags.lease * flags.max_attempts
                    + retry_policy(&args)
                        .map_or(Duration::ZERO, |r| (r.max_delay + flags.lease) * r.retries))
                .max(DEFAULT_KEEP_CLAIMABLE),
                ..flags.history
            },
            owed_within: if flags.overlap.owes_lapsed_runs_their_takeover() {
                args.max_late
            } else {
                Duration::ZERO
            },
            ..flags
        };
        let runner = runner_options(&args, global, json, &claim)?;
        let registry = registry_settings(&args, strategy, schedule.as_ref(), &claim);
        let on_failure = args.on_failure.clone().map(|command| OnFailure {
            command,
            timeout: args.on_failure_timeout,
            env_remove: runner.command.env_remove.clone(),
        });
        Ok(RunSettings {
            job: args.job,
            strategy,
            schedule,
            slot: args.slot,
            max_late: args.max_late,
            jitter: args.jitter.unwrap_or(Duration::ZERO),
            catch_up,
            backfill: args.backfill.map(|range| Backfill {
                range,
                max: args.backfill_max,
                include_skipped: args.include_skipped,
                dry_run: args.dry_run,
            }),
            claim,
            runner,
            skipped_ok: args.skipped_ok,
            on_failure,
            registry,
            lineage: Vec::new(),
            exclusions: args.exclude.clone(),
            calendars: args.calendars.clone(),
        })
    }

    /// `--catch-up`'s window (zero: no catch-up).
    pub fn catch_up_window(&self) -> Duration {
        self.catch_up.map_or(Duration::ZERO, |c| c.window)
    }

    /// `--quiet`.
    pub fn quiet(&self) -> bool {
        self.runner.quiet
    }
}

/// Refuses flags that do not go together, before anything is read: lease-only flags under a
/// claim-only strategy, a script window shorter than a claim may come late, and the schedule's
/// flags without `--schedule`.
fn check_flags(args: &RunArgs, strategy: Strategy) -> Result<()> {
    let mut lease_options = args.lease.given();
    lease_options.extend(args.exec.given());
    lease_options.extend([
        ("--catch-up", args.catch_up.is_some()),
        ("--backfill", args.backfill.is_some()),
        ("--no-backup", args.no_backup),
        ("--backup-for", args.backup_for.is_some()),
        ("--retries", args.retries.is_some()),
        ("--limit", !args.limits.is_empty()),
    ]);
    strategy.refuse_lease_options(&lease_options)?;
    if let Some(r) = retry_policy(args) {
        if r.max_delay < r.delay {
            return Err(Error::usage(format!(
                "--retry-max-delay {} is shorter than --retry-delay {}: no wait could be as long as the first",
                humantime::format_duration(r.max_delay),
                humantime::format_duration(r.delay)
            )));
        }
        if args.exec.leave_children {
            return Err(Error::usage(
                "--leave-children with --retries: what a failed attempt left running would run beside its retry\n  hint: let anarchon stop the command's children (the default)",
            ));
        }
    }
    let jitter = args.jitter.unwrap_or(Duration::ZERO);
    if let Strategy::Script { window } = strategy
        && window <= args.max_late + jitter
    {
        return Err(Error::usage(format!(
            "--window {} must be longer than --jitter {} + --max-late {}: a claim may come that late, and the window must still remember the run",
            humantime::format_duration(window),
            humantime::format_duration(jitter),
            humantime::format_duration(args.max_late)
        )));
    }
    if args.schedule.is_none() {
        for (flag, given) in [
            ("--catch-up", args.catch_up.is_some()),
            ("--tz", args.tz.is_some()),
        ] {
            if given {
                return Err(Error::usage(format!(
                    "{flag} needs --schedule: it works on the schedule's fire times"
                )));
            }
        }
    }
    Ok(())
}

/// How the command runs under its claim: the exec flags, replica acknowledgement and standing by.
fn runner_options(
    args: &RunArgs,
    global: &GlobalArgs,
    json: bool,
    claim: &ClaimSettings,
) -> Result<RunnerOptions> {
    let opts = args.exec.runner_options(&args.command, claim.lease, json)?;
    let replicas = match args.wait_replicas {
        Some(n) => Some(replica_wait(args, n, claim.lease, global)?),
        None => None,
    };
    let on_overlap = OnOverlap::of(claim.overlap, args.max_late);
    let ping = args.ping.clone().map(|url| crate::runner::ping::Ping {
        url,
        timeout: args.ping_timeout,
    });
    Ok(RunnerOptions {
        replicas,
        on_overlap,
        ping,
        in_turn: (args.catch_up.is_some() || args.backfill.is_some()).then_some(args.max_late),
        max_late: Some(args.max_late),
        retry: retry_policy(args),
        limits: args.limits.clone(),
        backup: if args.no_backup {
            Backup::No
        } else {
            Backup::Standby {
                limit: args.backup_for,
            }
        },
        ..opts
    })
}

/// `--retries` and its companions, defaults applied (None: no retries).
pub fn retry_policy(args: &RunArgs) -> Option<RetryPolicy> {
    args.retries.filter(|n| *n > 0).map(|retries| RetryPolicy {
        retries,
        delay: args.retry_delay.unwrap_or(RetryPolicy::DEFAULT_DELAY),
        backoff: args.retry_backoff.unwrap_or(RetryPolicy::DEFAULT_BACKOFF),
        max_delay: args
            .retry_max_delay
            .unwrap_or(RetryPolicy::DEFAULT_MAX_DELAY),
        on_exit: args.retry_on.clone(),
    })
}

/// `--wait-replicas N`, checked: WAIT blocks the connection, so it must answer well within the
/// lease (the first heartbeat comes after it) and within --command-timeout; and in a cluster it
/// would ask some node, not the one that holds the job.
fn replica_wait(
    args: &RunArgs,
    replicas: u32,
    lease: Duration,
    global: &GlobalArgs,
) -> Result<ReplicaWait> {
    let timeout = args.wait_timeout;
    let show = |d: Duration| humantime::format_duration(d).to_string();
    if timeout.is_zero() || timeout * 2 >= lease {
        return Err(Error::usage(format!(
            "--wait-timeout {} must be more than 0 and less than half of --lease {}: the lease runs while anarchon waits",
            show(timeout),
            show(lease)
        )));
    }
    if timeout >= global.command_timeout {
        return Err(Error::usage(format!(
            "--wait-timeout {} must be shorter than --command-timeout {}",
            show(timeout),
            show(global.command_timeout)
        )));
    }
    // The connection options as resolved (--cluster, or a +cluster:// URL from a flag or the
    // environment), not the flags as typed.
    if global.uses_cluster() {
        return Err(Error::usage(
            "--wait-replicas is not supported with Redis Cluster: WAIT must reach the job's primary",
        ));
    }
    Ok(ReplicaWait {
        replicas,
        timeout,
        run_anyway: match args.if_unreplicated {
            IfUnreplicated::Run => true,
            IfUnreplicated::Skip => false,
        },
    })
}

/// What this `run` records in the job registry (store/registry.rs), for monitoring.
fn registry_settings(
    args: &RunArgs,
    strategy: Strategy,
    schedule: Option<&Schedule>,
    claim: &ClaimSettings,
) -> registry::JobSettings {
    let lease = strategy.has_leases();
    registry::JobSettings {
        schedule: schedule.map(|s| s.source().to_string()),
        tz: schedule.map_or("UTC", |s| s.time_zone()).to_string(),
        strategy: strategy.name().to_string(),
        lease_ms: lease.then(|| millis(claim.lease)),
        max_attempts: lease.then_some(claim.max_attempts),
        max_late_ms: millis(args.max_late),
        catch_up_ms: args.catch_up.map_or(0, millis),
        catch_up_policy: args.catch_up_policy.name().to_string(),
        jitter_ms: args.jitter.map_or(0, millis),
        overlap: claim.overlap.name().to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        service: None,
        retries: retry_policy(args).map_or(String::new(), |r| {
            format!(
                "{},{},{},{}",
                r.retries,
                millis(r.delay),
                r.backoff,
                millis(r.max_delay)
            )
        }),
        limits: args
            .limits
            .iter()
            .map(|l| format!("{}={}", l.name, l.max))
            .collect::<Vec<_>>()
            .join(","),
        exclude: args
            .exclude
            .iter()
            .map(|w| w.text.clone())
            .collect::<Vec<_>>()
            .join("\n"),
        calendars: args.calendars.join(","),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// `run`'s settings from a line of words, as a crontab line gives them.
    fn resolve(words: &[&str]) -> Result<RunSettings> {
        let cli = crate::cli::Cli::try_parse_from(["anarchon", "run"].iter().chain(words))
            .map_err(|e| Error::usage(e.to_string()))?;
        match cli.command {
            crate::cli::Command::Run(args) => RunSettings::resolve(*args, &cli.global, false),
            _ => unreachable!("parsed as run"),
        }
    }

    #[test]
    fn every_default_is_applied_once() {
        let run = resolve(&["--job", "sync", "--schedule", "*/5 * * * *", "--", "true"]).unwrap();
        assert_eq!(run.strategy, Strategy::Lease);
        assert_eq!(run.claim.overlap, OverlapPolicy::Forbid);
        assert_eq!(run.claim.lease, Duration::from_secs(30));
        assert_eq!(run.claim.max_attempts, 3);
        assert!(run.catch_up.is_none() && run.backfill.is_none());
        // A claim must stay answerable for as long as any claim may come: at least an hour.
        assert_eq!(run.claim.history.keep_claimable, DEFAULT_KEEP_CLAIMABLE);
        assert_eq!(run.registry.overlap, "forbid");
        assert_eq!(run.registry.catch_up_policy, "all");
        assert_eq!(run.runner.command.argv, ["true"]);
        assert!(matches!(run.runner.on_overlap, OnOverlap::Skip));
    }

    #[test]
    fn the_policies_resolve_into_what_the_claim_and_the_runner_do() {
        let run = resolve(&[
            "--job",
            "sync",
            "--schedule",
            "* * * * *",
            "--overlap",
            "buffer",
            "--max-late",
            "2m",
            "--catch-up",
            "3h",
            "--catch-up-policy",
            "latest",
            "--",
            "true",
        ])
        .unwrap();
        assert_eq!(run.claim.overlap, OverlapPolicy::Buffer);
        assert!(
            !run.claim
                .request(60_000, RunKind::Scheduled)
                .overlap
                .claims_beside_a_live_run()
        );
        assert_eq!(
            run.runner.on_overlap,
            OnOverlap::Buffer {
                max_late: Duration::from_secs(120)
            }
        );
        let c = run.catch_up.unwrap();
        assert_eq!(
            (c.window, c.policy),
            (Duration::from_secs(3 * 3600), CatchUpPolicy::Latest)
        );
        // 2m + 3h + 30s x 3
        assert_eq!(
            run.claim.history.keep_claimable,
            Duration::from_secs(120 + 3 * 3600 + 90)
        );
        assert_eq!(run.registry.catch_up_policy, "latest");
        assert_eq!(run.runner.in_turn, Some(Duration::from_secs(120)));
    }

    #[test]
    fn flags_that_do_not_go_together_are_refused_before_anything_runs() {
        let refused = |words: &[&str]| resolve(words).unwrap_err().to_string();
        assert!(
            refused(&[
                "--job",
                "j",
                "--slot",
                "now",
                "--catch-up",
                "1h",
                "--",
                "true"
            ])
            .contains("--catch-up needs --schedule")
        );
        assert!(
            refused(&[
                "--job",
                "j",
                "--slot",
                "now",
                "--lease",
                "3s",
                "--heartbeat",
                "5s",
                "--",
                "true"
            ])
            .contains("--heartbeat")
        );
    }
}
