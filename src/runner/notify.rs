//! `run --on-failure CMD`: tell someone when a run fails. After an attempt this host ran ended
//! failed, interrupted or timed out, CMD runs (through `/bin/sh -c`, as cron runs a line) with the
//! run's facts in its environment, bounded by a timeout. Only the host that ran the attempt runs
//! it, so a fleet notifies once per failed attempt; its own failure is reported and never changes
//! the run's result or exit code.

use std::io::Write;
use std::time::Duration;

use crate::runner::report::{SlotOutcome, SlotReport};

/// What `--on-failure` runs, and for how long at most.
#[derive(Debug, Clone)]
pub struct OnFailure {
    pub command: String,
    pub timeout: Duration,
    /// anarchon's credential variables, removed from the hook's environment as from the wrapped
    /// command's ([`crate::runner::child::CommandSpec::env_remove`]): a hook posts to chat or a
    /// pager, and must not carry the Redis password along.
    pub env_remove: Vec<String>,
}

/// Whether `report` is an attempt this host ran that did not succeed.
pub fn failed_here(report: &SlotReport) -> bool {
    report.outcome == SlotOutcome::Ran && report.exit_code() != 0 && !replaced(report)
}

/// Whether the attempt was stopped by `--overlap replace` for a newer slot (the release's reason
/// says so: docs/store-format.md, "Overlap policies"): the policy at work, not a failure to report.
fn replaced(report: &SlotReport) -> bool {
    matches!(&report.recorded, Some(crate::runner::Recorded::Released { reason, .. })
        if reason.ends_with(crate::runner::overlap::REPLACE_REASON_END))
}

/// Runs the hook for a failed `report` and returns what went wrong with the hook itself, if
/// anything (for a message): it never changes the run's outcome. The environment: `ANARCHON_JOB`,
/// `ANARCHON_SLOT` (ms), `ANARCHON_SLOT_TIME`, `ANARCHON_ATTEMPT`, `ANARCHON_RUNNER`,
/// `ANARCHON_STATUS`, `ANARCHON_EXIT_CODE` (the exit code anarchon exits with),
/// `ANARCHON_SIGNAL` (when one ended the command), `ANARCHON_TIMED_OUT` (1 or 0) and
/// `ANARCHON_STDERR_TAIL`, the path of a file holding the last 4 KiB of the command's stderr
/// (removed after the hook), and `TRACEPARENT`, the failed attempt's trace context as its command
/// had it (`traceparent`; [`crate::trace`]): a hook that reports to a tracing system or links to
/// one points at the run's own trace.
pub async fn run_hook(
    hook: &OnFailure,
    report: &SlotReport,
    traceparent: Option<String>,
) -> Option<String> {
    let command = report.command.as_ref();
    let mut tail = match tempfile::NamedTempFile::new() {
        Ok(file) => file,
        Err(e) => {
            return Some(format!(
                "cannot write the stderr tail for --on-failure: {e}"
            ));
        }
    };
    let stderr = command.map_or("", |c| c.stderr_tail.as_str());
    if let Err(e) = tail.write_all(stderr.as_bytes()) {
        return Some(format!(
            "cannot write the stderr tail for --on-failure: {e}"
        ));
    }
    let mut cmd = hook_command(hook, report, traceparent, tail.path());
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => return Some(format!("--on-failure could not start: {e}")),
    };
    match tokio::time::timeout(hook.timeout, child.wait()).await {
        Ok(Ok(status)) if status.success() => None,
        Ok(Ok(status)) => Some(format!("--on-failure ended with {status}")),
        Ok(Err(e)) => Some(format!("--on-failure: {e}")),
        Err(_) => {
            if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
                let _ = nix::sys::signal::killpg(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            let _ = child.kill().await;
            Some(format!(
                "--on-failure did not end within {} and was killed",
                humantime::format_duration(hook.timeout)
            ))
        }
    }
}

/// The hook's command: `/bin/sh -c CMD` with the run's facts in its environment, in a process
/// group of its own.
fn hook_command(
    hook: &OnFailure,
    report: &SlotReport,
    traceparent: Option<String>,
    tail: &std::path::Path,
) -> tokio::process::Command {
    let command = report.command.as_ref();
    let mut cmd = tokio::process::Command::new("/bin/sh");
    for name in &hook.env_remove {
        cmd.env_remove(name);
    }
    // The attempt's, never one anarchon itself was started with (as for the command).
    match traceparent {
        Some(tp) => cmd.env("TRACEPARENT", tp),
        None => cmd.env_remove("TRACEPARENT"),
    };
    cmd.arg("-c")
        .arg(&hook.command)
        .env("ANARCHON_JOB", &report.job)
        .env("ANARCHON_SLOT", report.slot.to_string())
        .env("ANARCHON_SLOT_TIME", &report.slot_time)
        .env(
            "ANARCHON_ATTEMPT",
            report.attempt.map_or(String::new(), |a| a.to_string()),
        )
        .env("ANARCHON_RUNNER", &report.runner)
        .env("ANARCHON_STATUS", &report.status)
        .env("ANARCHON_EXIT_CODE", report.exit_code().to_string())
        .env(
            "ANARCHON_SIGNAL",
            command
                .and_then(|c| c.signal)
                .map_or(String::new(), |s| s.to_string()),
        )
        .env(
            "ANARCHON_TIMED_OUT",
            if command.is_some_and(|c| c.timed_out) {
                "1"
            } else {
                "0"
            },
        )
        .env("ANARCHON_STDERR_TAIL", tail)
        .stdin(std::process::Stdio::null())
        // Its own process group, so that a timeout stops what the hook started too (a `sleep`
        // under `sh -c` would otherwise hold our stdout and stderr open).
        .process_group(0)
        .kill_on_drop(true);
    cmd
}
