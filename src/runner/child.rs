//! Running the wrapped command: spawn it, pass its output through (keeping the tail of stderr for
//! the result), forward SIGINT/SIGTERM/SIGHUP to it, and stop it on `--timeout` or a lost lease
//! (SIGTERM, then SIGKILL after the grace period).
//!
//! A guard process ([`crate::runner::guard`]) stops the command if anarchon itself dies.
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
use tokio::time::Instant;

use crate::error::ExitCode;
use crate::runner::deadline::{BootTime, LeaseDeadline, stop_grace};
use crate::runner::guard::Guard;

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
    /// Variables of anarchon's own environment the command must not see (credentials).
    pub env_remove: Vec<String>,
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

/// How often the watch loop looks at the clock (the lease deadline, --timeout, the SIGKILL moment).
/// A tick, rather than one timer per deadline, because the deadlines are on the boot clock, which
/// tokio's timers do not follow across a suspended machine.
const TICK: Duration = Duration::from_millis(50);

/// Runs the command to its end. With `lease`, the command is stopped when the lease is lost or its
/// local deadline comes near (see [`crate::runner::deadline`]), unless `--on-lease-lost continue`.
pub async fn run(spec: &CommandSpec, lease: Option<&LeaseDeadline>, quiet: bool) -> CommandOutcome {
    let started = Instant::now();
    let started_boot = BootTime::now();
    let mut outcome = CommandOutcome::default();
    // Handlers first: a SIGTERM that arrives while the command starts must be forwarded to it, not
    // kill anarchon and leave the command behind.
    let mut signals = match Signals::install() {
        Ok(s) => Some(s),
        Err(e) => {
            eprintln!(
                "error: cannot install signal handlers ({e}); the command runs without forwarding"
            );
            None
        }
    };
    let grace = lease.map(|l| stop_grace(l.lease(), spec.kill_after));
    let mut guard = match Guard::start(
        !spec.foreground,
        spec.kill_after,
        grace.unwrap_or(Duration::ZERO),
    ) {
        Ok(g) => Some(g),
        Err(e) => {
            eprintln!(
                "warning: cannot start the guard process ({e}); if anarchon is killed, its command keeps running"
            );
            None
        }
    };
    let mut child = match spawn(spec, guard.as_ref().map(Guard::group)) {
        Ok(child) => child,
        Err(e) => {
            if let Some(g) = guard {
                g.done();
            }
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
        pid: match (&guard, spec.foreground) {
            (Some(g), false) => g.group(),
            _ => Pid::from_raw(id as i32),
        },
        group: !spec.foreground,
    });
    if let Some(g) = guard.as_mut() {
        if let Some(id) = child.id() {
            g.watch(id);
        }
        // From the start, not only from the first tick: the guard must know the deadline even if
        // this process is stopped right now.
        if let (Some(l), true) = (lease, spec.stop_on_lease_lost) {
            g.deadline(l.deadline());
        }
    }
    let tail = tokio::spawn(pass_through_stderr(child.stderr.take()));

    let timeout_at = spec.timeout.map(|t| started_boot + t);
    let mut kill_at: Option<BootTime> = None;
    let mut lease_handled = false;
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);

    let status = loop {
        tokio::select! {
            status = child.wait() => break status,
            sig = recv(&mut signals) => forward(target, sig, &mut outcome),
            _ = tick.tick() => {
                let now = BootTime::now();
                // The guard enforces the deadline too (if this process is stopped), unless the
                // command is to outlive a lost lease.
                if let (Some(g), Some(l), true) = (guard.as_mut(), lease, spec.stop_on_lease_lost) {
                    g.deadline(l.deadline());
                }
                if !outcome.timed_out && timeout_at.is_some_and(|at| now >= at) {
                    outcome.timed_out = true;
                    eprintln!("anarchon: the command ran longer than --timeout; stopping it (SIGTERM, SIGKILL after {})", humantime::format_duration(spec.kill_after));
                    send(target, Signal::SIGTERM);
                    kill_at = earliest(kill_at, now + spec.kill_after);
                }
                if let (Some(l), Some(grace), false) = (lease, grace, lease_handled)
                    && let Some(reason) = l.lost_reason(grace)
                {
                    lease_handled = true;
                    outcome.lease_lost = true;
                    if spec.stop_on_lease_lost {
                        let deadline = l.deadline();
                        eprintln!(
                            "anarchon: lease lost ({reason}); stopping the command (SIGTERM, SIGKILL in {} at the latest)",
                            humantime::format_duration(round_ms(spec.kill_after.min(deadline.left())))
                        );
                        send(target, Signal::SIGTERM);
                        // Gone before the lease can end on the server, whatever --kill-after says.
                        kill_at = earliest(earliest(kill_at, now + spec.kill_after), deadline);
                    } else if !quiet {
                        eprintln!("anarchon: lease lost ({reason}); the command keeps running (--on-lease-lost continue)");
                    }
                }
                if kill_at.is_some_and(|at| now >= at) {
                    send(target, Signal::SIGKILL);
                    kill_at = None;
                }
            }
        }
    };
    if let Some(g) = guard {
        g.done();
    }
    // The guard may have stopped the command for the lease while this process could not look
    // (a command that traps SIGTERM exits with a code of its own). One that succeeded is recorded.
    let succeeded = status.as_ref().is_ok_and(|s| s.success());
    if let (Some(l), Some(grace), false) = (lease, grace, succeeded)
        && spec.stop_on_lease_lost
        && !outcome.lease_lost
        && let Some(reason) = l.lost_reason(grace)
    {
        outcome.lease_lost = true;
        eprintln!("anarchon: lease lost ({reason}); the command was stopped");
    }
    finish_outcome(outcome, status, started, tail).await
}

fn earliest(a: Option<BootTime>, b: BootTime) -> Option<BootTime> {
    Some(a.map_or(b, |a| a.min(b)))
}

fn round_ms(d: Duration) -> Duration {
    Duration::from_millis(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The signals anarchon forwards to its command.
struct Signals {
    int: tokio::signal::unix::Signal,
    term: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl Signals {
    fn install() -> std::io::Result<Signals> {
        Ok(Signals {
            int: signal(SignalKind::interrupt())?,
            term: signal(SignalKind::terminate())?,
            hup: signal(SignalKind::hangup())?,
        })
    }
}

/// The next signal to forward; never resolves without handlers.
async fn recv(signals: &mut Option<Signals>) -> Signal {
    let Some(s) = signals else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = s.int.recv() => Signal::SIGINT,
        _ = s.term.recv() => Signal::SIGTERM,
        _ = s.hup.recv() => Signal::SIGHUP,
    }
}

fn spawn(spec: &CommandSpec, group: Option<Pid>) -> std::io::Result<Child> {
    let mut cmd = if spec.shell {
        let mut c = Command::new("/bin/sh");
        c.arg("-c").arg(spec.argv.join(" "));
        c
    } else {
        let mut c = Command::new(&spec.argv[0]);
        c.args(&spec.argv[1..]);
        c
    };
    for name in &spec.env_remove {
        cmd.env_remove(name);
    }
    cmd.envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::inherit())
        .stdout(Stdio::inherit())
        .stderr(Stdio::piped())
        .kill_on_drop(false);
    if !spec.foreground {
        // The guard's group when there is a guard (so the command is never unguarded), else its own.
        cmd.process_group(group.map_or(0, Pid::as_raw));
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
