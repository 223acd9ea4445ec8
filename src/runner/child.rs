//! Running the wrapped command: spawn it, pass its output through (keeping the tail of stderr for
//! the result), forward SIGINT/SIGTERM/SIGHUP to it, and stop it on `--timeout` or a lost lease
//! (SIGTERM, then SIGKILL after the grace period).
//!
//! Like coreutils `timeout`, the command runs in its own process group and every signal goes to
//! the whole group: a shell's children die with it instead of running on, orphaned, after the
//! lease is gone. A terminal's Ctrl-C reaches anarchon, which forwards it once. With
//! `--foreground` the command stays in our group so it can read the terminal (a terminal's Ctrl-C
//! then reaches it directly as well as forwarded), and only the command itself is signalled.

use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use serde::Serialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStderr, Command};
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;
use tokio::time::{Instant, sleep_until};

use crate::error::ExitCode;
use crate::runner::keeper::LeaseLost;

/// How much of the command's stderr the result keeps.
pub const STDERR_TAIL_BYTES: usize = 4096;

/// How long to wait, after the command exited, for the rest of its stderr.
const STDERR_DRAIN: Duration = Duration::from_secs(2);

/// What to run and how to police it.
#[derive(Debug, Clone)]
pub struct CommandSpec {
    pub argv: Vec<String>,
    /// Run `argv` joined by spaces with `/bin/sh -c`.
    pub shell: bool,
    /// Stay in our process group (terminal access); signal the command alone.
    pub foreground: bool,
    /// Extra environment for the command (ANARCHON_JOB, ...).
    pub env: Vec<(String, String)>,
    pub timeout: Option<Duration>,
    /// Grace between SIGTERM and SIGKILL.
    pub kill_after: Duration,
    /// Stop the command when the lease is lost (else let it finish).
    pub stop_on_lease_lost: bool,
}

/// How the command ended.
#[derive(Debug, Clone, Default, Serialize)]
pub struct CommandOutcome {
    /// The exit code, when it exited normally.
    pub exit_code: Option<i32>,
    /// The signal that ended it, if any.
    pub signal: Option<i32>,
    pub duration_ms: u64,
    pub timed_out: bool,
    /// The lease was lost while it ran (anarchon said why on stderr).
    pub lease_lost: bool,
    /// A signal anarchon received and forwarded.
    pub forwarded_signal: Option<i32>,
    /// The last 4 KiB of its stderr.
    pub stderr_tail: String,
    /// Set when it could not be started at all.
    pub spawn_error: Option<String>,
}

impl CommandOutcome {
    /// Whether the run counts as finished (ok) rather than failed.
    pub fn succeeded(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out
    }

    /// The exit code anarchon passes on: the command's, 128+N for signal N, 124 for a timeout,
    /// 127/126 when it could not be started (as a shell does).
    pub fn process_exit_code(&self) -> i32 {
        if self.timed_out {
            return ExitCode::Timeout.code();
        }
        match (self.exit_code, self.signal) {
            (Some(code), _) => code,
            (None, Some(sig)) => 128 + sig,
            (None, None) => 1,
        }
    }
}

/// Runs the command to its end. `lease_lost` delivers at most one message from the lease keeper.
pub async fn run(
    spec: &CommandSpec,
    mut lease_lost: mpsc::Receiver<LeaseLost>,
    quiet: bool,
) -> CommandOutcome {
    let started = Instant::now();
    let mut outcome = CommandOutcome::default();
    let mut child = match spawn(spec) {
        Ok(child) => child,
        Err(e) => {
            let name = spec.argv.first().cloned().unwrap_or_default();
            eprintln!(
                "error: cannot run {name:?}: {e}\n  hint: check the path and that it is executable, or pass --shell for a shell command line"
            );
            outcome.exit_code = Some(if e.kind() == std::io::ErrorKind::NotFound {
                127
            } else {
                126
            });
            outcome.spawn_error = Some(e.to_string());
            return outcome;
        }
    };
    let target = child.id().map(|id| Target {
        pid: Pid::from_raw(id as i32),
        group: !spec.foreground,
    });
    let tail = tokio::spawn(pass_through_stderr(child.stderr.take()));

    let (mut sigint, mut sigterm, mut sighup) = match (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) {
        (Ok(a), Ok(b), Ok(c)) => (a, b, c),
        _ => {
            eprintln!("error: cannot install signal handlers; the command runs without forwarding");
            let status = child.wait().await;
            return finish_outcome(outcome, status, started, tail).await;
        }
    };

    let far = Instant::now() + Duration::from_secs(100 * 365 * 24 * 3600);
    let timeout_at = spec.timeout.map_or(far, |t| started + t);
    let mut kill_at = far;
    let mut lease_watch_open = true;

    let status = loop {
        tokio::select! {
            status = child.wait() => break status,
            _ = sigint.recv() => forward(target, Signal::SIGINT, &mut outcome),
            _ = sigterm.recv() => forward(target, Signal::SIGTERM, &mut outcome),
            _ = sighup.recv() => forward(target, Signal::SIGHUP, &mut outcome),
            _ = sleep_until(timeout_at), if !outcome.timed_out && timeout_at < far => {
                outcome.timed_out = true;
                eprintln!("anarchon: the command ran longer than --timeout; stopping it (SIGTERM, SIGKILL after {})", humantime::format_duration(spec.kill_after));
                send(target, Signal::SIGTERM);
                kill_at = kill_at.min(Instant::now() + spec.kill_after);
            }
            lost = lease_lost.recv(), if lease_watch_open => {
                lease_watch_open = false;
                if let Some(lost) = lost {
                    outcome.lease_lost = true;
                    if spec.stop_on_lease_lost {
                        eprintln!("anarchon: lease lost ({}); stopping the command (SIGTERM, SIGKILL after {})", lost.reason, humantime::format_duration(spec.kill_after));
                        send(target, Signal::SIGTERM);
                        kill_at = kill_at.min(Instant::now() + spec.kill_after);
                    } else if !quiet {
                        eprintln!("anarchon: lease lost ({}); the command keeps running (--on-lease-lost continue)", lost.reason);
                    }
                }
            }
            _ = sleep_until(kill_at), if kill_at < far => {
                send(target, Signal::SIGKILL);
                kill_at = far;
            }
        }
    };
    finish_outcome(outcome, status, started, tail).await
}

fn spawn(spec: &CommandSpec) -> std::io::Result<Child> {
    let mut cmd = if spec.shell {
        let mut c = Command::new("/bin/sh");
        c.arg("-c").arg(spec.argv.join(" "));
        c
    } else {
        let mut c = Command::new(&spec.argv[0]);
        c.args(&spec.argv[1..]);
        c
    };
    cmd.envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::inherit())
        .stdout(Stdio::inherit())
        .stderr(Stdio::piped())
        .kill_on_drop(false);
    if !spec.foreground {
        cmd.process_group(0);
    }
    cmd.spawn()
}

/// Whom anarchon signals: the command's process group (its id is the command's pid), or with
/// `--foreground` the command alone.
#[derive(Debug, Clone, Copy)]
struct Target {
    pid: Pid,
    group: bool,
}

fn forward(target: Option<Target>, sig: Signal, outcome: &mut CommandOutcome) {
    outcome.forwarded_signal = Some(sig as i32);
    send(target, sig);
}

fn send(target: Option<Target>, sig: Signal) {
    // The process may be gone already: ESRCH is fine.
    let _ = match target {
        Some(Target { pid, group: true }) => killpg(pid, sig),
        Some(Target { pid, group: false }) => kill(pid, sig),
        None => Ok(()),
    };
}

async fn finish_outcome(
    mut outcome: CommandOutcome,
    status: std::io::Result<ExitStatus>,
    started: Instant,
    tail: tokio::task::JoinHandle<Vec<u8>>,
) -> CommandOutcome {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Ok(status) => {
            outcome.exit_code = status.code();
            outcome.signal = status.signal();
        }
        Err(e) => {
            eprintln!("error: lost track of the command: {e}");
            outcome.exit_code = Some(1);
        }
    }
    outcome.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    // A process the command left behind may hold its stderr open: do not wait for it for long.
    let bytes = match tokio::time::timeout(STDERR_DRAIN, tail).await {
        Ok(Ok(bytes)) => bytes,
        _ => Vec::new(),
    };
    outcome.stderr_tail = String::from_utf8_lossy(&bytes).into_owned();
    outcome
}

/// Copies the command's stderr to ours as it comes, keeping the last [`STDERR_TAIL_BYTES`].
async fn pass_through_stderr(stderr: Option<ChildStderr>) -> Vec<u8> {
    let Some(mut stderr) = stderr else {
        return Vec::new();
    };
    let mut ours = tokio::io::stderr();
    let mut tail: Vec<u8> = Vec::with_capacity(STDERR_TAIL_BYTES);
    let mut buf = [0u8; 8192];
    loop {
        match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let _ = ours.write_all(&buf[..n]).await;
                let _ = ours.flush().await;
                push_tail(&mut tail, &buf[..n]);
            }
        }
    }
    tail
}

fn push_tail(tail: &mut Vec<u8>, bytes: &[u8]) {
    tail.extend_from_slice(bytes);
    if tail.len() > STDERR_TAIL_BYTES {
        let excess = tail.len() - STDERR_TAIL_BYTES;
        tail.drain(..excess);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_keeps_the_last_bytes() {
        let mut tail = Vec::new();
        push_tail(&mut tail, &[b'a'; 3000]);
        push_tail(&mut tail, &[b'b'; 3000]);
        assert_eq!(tail.len(), STDERR_TAIL_BYTES);
        assert!(tail.ends_with(&[b'b'; 3000]));
        assert_eq!(tail[0], b'a');
    }

    #[test]
    fn exit_codes_follow_the_shell_conventions() {
        let mut o = CommandOutcome {
            exit_code: Some(3),
            ..CommandOutcome::default()
        };
        assert_eq!(o.process_exit_code(), 3);
        assert!(!o.succeeded());
        o.exit_code = None;
        o.signal = Some(9);
        assert_eq!(o.process_exit_code(), 137);
        o.timed_out = true;
        assert_eq!(o.process_exit_code(), 124);
        o.exit_code = Some(0);
        assert!(!o.succeeded());
    }
}
