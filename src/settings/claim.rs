//! The lease protocol's commands, resolved once from their command lines: `claim` and `run-now`
//! (the claim flags they share become [`ClaimSettings`], as `run`'s do), `heartbeat` and
//! `finish`. Nothing below their `execute` reads a clap type.

use std::time::Duration;

use crate::cli::{
    ClaimArgs, FinishArgs, FinishStatusArg, GlobalArgs, HeartbeatArgs, LeaseArgs, RunNowArgs,
};
use crate::error::{Error, Result};
use crate::runner::RunnerOptions;
use crate::settings::run::ClaimSettings;
use crate::strategy::Strategy;
use crate::strategy::claim::HistoryPolicy;
use crate::strategy::lease::FinishStatus;
use crate::time::SlotSpec;

impl ClaimSettings {
    /// The claim flags, as `claim`, `run-now` and `run` share them (`run` adds its keep-claimable:
    /// [`crate::settings::run::RunSettings::resolve`]).
    pub fn of_flags(lease: &LeaseArgs) -> ClaimSettings {
        ClaimSettings {
            lease: lease.lease_or_default(),
            max_attempts: lease.max_attempts_or_default(),
            overlap: lease.overlap.unwrap_or_default(),
            runner: lease.runner(),
            history: HistoryPolicy {
                size: lease.history_size.unwrap_or(HistoryPolicy::default().size),
                ttl: lease.history_ttl,
                ..HistoryPolicy::default()
            },
            owed_within: Duration::ZERO,
        }
    }
}

/// `anarchon claim JOB --slot S`.
#[derive(Debug, Clone)]
pub struct ClaimCommand {
    pub job: String,
    pub slot: SlotSpec,
    pub strategy: Strategy,
    pub claim: ClaimSettings,
    /// `--new`: a job the store does not know yet may be created.
    pub new: bool,
}

impl ClaimCommand {
    pub fn resolve(args: ClaimArgs, global: &GlobalArgs) -> Result<ClaimCommand> {
        // --overlap replace and buffer act on a scheduled slot an older run holds, by waiting: a
        // claim answers at once, and a manual run is no scheduled slot.
        args.lease.refuse_waiting_overlap("claim")?;
        let claim = ClaimSettings::of_flags(&args.lease);
        let strategy = crate::settings::strategy(&args.strategy, global.backend)?;
        strategy.refuse_lease_options(&args.lease.given())?;
        Ok(ClaimCommand {
            job: args.target.job,
            slot: args.target.slot,
            strategy,
            claim,
            new: args.new,
        })
    }
}

/// Where `run-now`'s manual run runs.
#[derive(Debug, Clone)]
pub enum RunNowMode {
    /// `-- COMMAND`: here, under a lease, as `run` runs it.
    Here(Box<RunnerOptions>),
    /// `--claim-only`: only claimed; heartbeat and finish are the caller's.
    ClaimOnly,
    /// No command: on a replica of `anarchon cron` that has the job in its crontab; `wait`:
    /// until its end.
    OnReplica { wait: bool },
}

/// `anarchon run-now JOB [-- COMMAND]`.
#[derive(Debug, Clone)]
pub struct RunNowCommand {
    pub job: String,
    pub strategy: Strategy,
    pub claim: ClaimSettings,
    /// Where and how the manual run runs.
    pub mode: RunNowMode,
    /// `--new`.
    pub new: bool,
    /// Who asked for the manual run and why (the job's events).
    pub audit: crate::settings::operator::Audit,
}

impl RunNowCommand {
    pub fn resolve(args: RunNowArgs, global: &GlobalArgs, json: bool) -> Result<RunNowCommand> {
        args.lease.refuse_waiting_overlap("run-now")?;
        let claim = ClaimSettings::of_flags(&args.lease);
        let strategy = crate::settings::strategy(&args.strategy, global.backend)?;
        let mut lease_options = args.lease.given();
        lease_options.extend(args.exec.given());
        strategy.refuse_lease_options(&lease_options)?;
        let mode = if !args.command.is_empty() {
            RunNowMode::Here(Box::new(args.exec.runner_options(
                &args.command,
                claim.lease,
                json,
            )?))
        } else if args.claim_only {
            RunNowMode::ClaimOnly
        } else {
            // The replica runs the job's own line, with its flags: a flag given here would be
            // silently ignored, so it is refused.
            let here_only: Vec<&str> = lease_options
                .iter()
                .filter(|(_, given)| *given)
                .map(|(flag, _)| *flag)
                .chain(args.lease.runner.is_some().then_some("--runner"))
                .chain(args.new.then_some("--new"))
                .collect();
            if let Some(flag) = here_only.first() {
                return Err(Error::usage(format!(
                    "{flag} applies to a run here; without a command the job runs on a replica of `anarchon cron`, with its crontab line's own flags\n  hint: give the command to run it here (`anarchon run-now {} {flag} ... -- COMMAND`), or --claim-only to claim it by hand",
                    args.job
                )));
            }
            RunNowMode::OnReplica { wait: args.wait }
        };
        Ok(RunNowCommand {
            job: args.job,
            strategy,
            claim,
            mode,
            new: args.new,
            audit: args.audit.into(),
        })
    }
}

/// `anarchon heartbeat JOB --slot S --token T`: the lease protocol by hand, resolved.
#[derive(Debug, Clone)]
pub struct HeartbeatCommand {
    pub job: String,
    pub slot: SlotSpec,
    pub strategy: Strategy,
    /// The token as given (a prefix is completed from the store: `commands::full_token`).
    pub token: String,
    /// The new lease, from now (zero: the lease the run was claimed with).
    pub lease: std::time::Duration,
}

impl HeartbeatCommand {
    pub fn resolve(args: HeartbeatArgs, global: &GlobalArgs) -> Result<HeartbeatCommand> {
        let strategy = crate::settings::strategy(&args.strategy, global.backend)?;
        if !strategy.has_leases() {
            return Err(Error::usage(format!(
                "the {} strategy has no leases, so there is nothing to heartbeat\n  hint: only --strategy lease (the default) keeps leases",
                strategy.name()
            )));
        }
        Ok(HeartbeatCommand {
            job: args.target.job,
            slot: args.target.slot,
            strategy,
            token: args.token,
            lease: args.lease,
        })
    }
}

/// `anarchon finish JOB --slot S --token T --status ok|failed [--result ...]`, resolved: the
/// status as the store writes it and the result as compact JSON text, checked for size and depth.
#[derive(Debug, Clone)]
pub struct FinishCommand {
    pub job: String,
    pub slot: SlotSpec,
    pub strategy: Strategy,
    pub token: String,
    pub status: FinishStatus,
    pub result_json: String,
}

impl FinishCommand {
    pub fn resolve(args: FinishArgs, global: &GlobalArgs) -> Result<FinishCommand> {
        let strategy = crate::settings::strategy(&args.strategy, global.backend)?;
        let result_json = result_json(args.result.as_deref(), args.result_json.as_deref())?;
        Ok(FinishCommand {
            job: args.target.job,
            slot: args.target.slot,
            strategy,
            token: args.token,
            status: match args.status {
                FinishStatusArg::Ok => FinishStatus::Finished,
                FinishStatusArg::Failed => FinishStatus::Failed,
            },
            result_json,
        })
    }
}

/// The largest result `finish` stores, as compact JSON text. Results live in Redis with every run
/// of history; a run's story (anarchon's own results keep 4 KiB of stderr) fits well below this.
pub const MAX_RESULT_BYTES: usize = 64 * 1024;

/// The deepest nesting of arrays and objects a result may have. Every reader (serde_json stops at
/// 128, Lua's cjson at 1000) must be able to decode every stored value: a result it cannot read
/// would make `list`, `inspect` and `history` fail for the whole job.
pub const MAX_RESULT_DEPTH: usize = 32;

/// The result as compact JSON text: `--result` becomes a JSON string, `--result-json` must parse.
/// Refuses results larger than [`MAX_RESULT_BYTES`] or deeper than [`MAX_RESULT_DEPTH`].
pub fn result_json(text: Option<&str>, json: Option<&str>) -> Result<String> {
    let value = match (text, json) {
        (Some(text), _) => serde_json::Value::String(text.to_string()),
        (None, Some(json)) => serde_json::from_str(json).map_err(|e| {
            Error::usage(format!("--result-json is not valid JSON ({e})\n  hint: quote it for the shell, e.g. --result-json '{{\"rows\":42}}'"))
        })?,
        (None, None) => serde_json::Value::Null,
    };
    let depth = json_depth(&value);
    if depth > MAX_RESULT_DEPTH {
        return Err(Error::usage(format!(
            "the result nests {depth} levels deep; at most {MAX_RESULT_DEPTH} are stored, so that every reader can decode it"
        )));
    }
    let text = value.to_string();
    if text.len() > MAX_RESULT_BYTES {
        return Err(Error::usage(format!(
            "the result is {} bytes as JSON; at most {MAX_RESULT_BYTES} are stored with each run\n  hint: store a summary, and keep large output elsewhere (a log, an object store)",
            text.len()
        )));
    }
    Ok(text)
}

/// How many arrays and objects nest in `value` at the deepest point (`[]` is 1, a scalar 0).
fn json_depth(value: &serde_json::Value) -> usize {
    // Iterative, so no input can exhaust the stack here either.
    let mut deepest = 0;
    let mut stack = vec![(value, 1usize)];
    while let Some((v, depth)) = stack.pop() {
        match v {
            serde_json::Value::Array(items) => {
                deepest = deepest.max(depth);
                stack.extend(items.iter().map(|i| (i, depth + 1)));
            }
            serde_json::Value::Object(map) => {
                deepest = deepest.max(depth);
                stack.extend(map.values().map(|i| (i, depth + 1)));
            }
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_become_compact_json() {
        assert_eq!(result_json(None, None).unwrap(), "null");
        assert_eq!(result_json(Some("a \"b\""), None).unwrap(), r#""a \"b\"""#);
        assert_eq!(
            result_json(None, Some(r#"{ "rows": 42 }"#)).unwrap(),
            r#"{"rows":42}"#
        );
        assert!(result_json(None, Some("{oops")).is_err());
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(result_json(None, Some(&deep(MAX_RESULT_DEPTH))).is_ok());
        assert!(result_json(None, Some(&deep(MAX_RESULT_DEPTH + 1))).is_err());
        assert!(result_json(Some(&"x".repeat(MAX_RESULT_BYTES)), None).is_err());
    }
}
