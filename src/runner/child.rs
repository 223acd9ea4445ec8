//! Running the wrapped command: spawn it, pass its output through (keeping the tail of stderr for
//! the result), forward SIGINT/SIGTERM/SIGHUP to it, and stop it on `--timeout` or a lost lease
//! (SIGTERM, then SIGKILL after the grace period).
//!
//! A guard process ([`crate::runner::guard`]) stops the command if anarchon itself dies.
//!
//! Like coreutils `timeout`, the command runs in its own process group and every signal goes to
//! the whole group: a shell's children die with it instead of running on, orphaned, after the
//! lease is gone. And like systemd's `KillMode=control-group`, when the command itself exits, what
//! it left in its group (`cmd &` in a crontab script) is stopped before the run is recorded ended
//! (`--leave-children` lets it run on): a child outliving the run would overlap the next one.
//!
//! A terminal's Ctrl-C reaches anarchon, which forwards it once. With `--foreground` the command
//! stays in our group so it can read the terminal (a terminal's Ctrl-C then reaches it directly as
//! well as forwarded), and only the command itself is signalled.

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
use crate::runner::deadline::{BootTime, LeaseDeadline, Loss, stop_grace};
use crate::runner::guard::Guard;
use crate::runner::live::Lines;

/// How much of the command's stderr the result keeps.
pub const STDERR_TAIL_BYTES: usize = 4096;

/// How long to wait, after the command exited, for the rest of its stderr.
const STDERR_DRAIN: Duration = Duration::from_secs(2);

/// The longest grace a command gets when the server lost the run's data: another host may have
/// claimed the run already, so the command must be gone at once, whatever --kill-after says.
const STORE_LOST_GRACE: Duration = Duration::from_secs(1);

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
    /// Let what the command leaves in its process group run on after it exits.
    pub leave_children: bool,
    /// Send the command's stdout to anarchon's stderr: under `--json` stdout is one JSON document
    /// (`run --json | jq` must parse), so the command's own output goes beside the messages.
    pub stdout_to_stderr: bool,
    /// Keep the last [`STDERR_TAIL_BYTES`] of the command's stdout too (`--keep-stdout`): its
    /// stdout is then a pipe that anarchon copies on as it comes.
    pub keep_stdout: bool,
    /// Set when the command runs under `anarchon cron` ([`Supervised`]); None under `run`.
    pub supervised: Option<Supervised>,
    /// `--live-output`: each line of its stdout and stderr is also handed here
    /// ([`crate::runner::live`]); its stdout is then a pipe, as with `keep_stdout`.
    pub live: Option<crate::runner::live::LiveSink>,
}

/// A command run by the daemon (`anarchon cron`) rather than by an `anarchon run` of its own:
/// signals are the daemon's to handle (SIGTERM is its shutdown, SIGHUP its reload), so none is
/// forwarded from here; its output goes out line by line, labelled with its run
/// ([`crate::lines::command_line`]); and the daemon's shutdown stops it when the grace is over.
#[derive(Debug, Clone)]
pub struct Supervised {
    /// Turns true when the daemon's `--shutdown-grace` is over: the command is stopped (SIGTERM,
    /// SIGKILL after [`SHUTDOWN_KILL_AFTER`] at most) and its run handed over.
    pub stop: tokio::sync::watch::Receiver<bool>,
}

/// The longest a command stopped at the end of the daemon's shutdown grace gets between SIGTERM
/// and SIGKILL: it had the grace to finish, and its run is handed to another replica only once it
/// is gone (a replica's orchestrator kills the daemon soon after: Kubernetes 30 s after SIGTERM).
pub const SHUTDOWN_KILL_AFTER: Duration = Duration::from_secs(2);

impl CommandSpec {
    /// The grace between SIGTERM and SIGKILL for this command now: `--kill-after`, and no more than
    /// [`SHUTDOWN_KILL_AFTER`] once the daemon's shutdown stopped it.
    fn kill_after_for(&self, outcome: &CommandOutcome) -> Duration {
        if outcome.stopped_for_shutdown {
            self.kill_after.min(SHUTDOWN_KILL_AFTER)
        } else {
            self.kill_after
        }
    }
}

/// For serde: a count of zero is left out of the JSON.
fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// How the command ended.
#[derive(Debug, Clone, Default, Serialize, schemars::JsonSchema)]
pub struct CommandOutcome {
    /// The exit code, when it exited normally.
    pub exit_code: Option<i32>,
    /// The signal that ended it, if any.
    pub signal: Option<i32>,
    pub duration_ms: u64,
    pub timed_out: bool,
    /// The lease was lost while it ran (anarchon said why on stderr).
    pub lease_lost: bool,
    /// An operator released the run while it ran (`anarchon release`): it was stopped.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub released: bool,
    /// The daemon (`anarchon cron`) shut down and its grace ended while the command ran: it was
    /// stopped, and its run handed over to another replica.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stopped_for_shutdown: bool,
    /// Processes the command left in its process group when it exited, which anarchon stopped.
    #[serde(skip_serializing_if = "is_zero")]
    pub children_stopped: usize,
    /// A signal anarchon received and forwarded.
    pub forwarded_signal: Option<i32>,
    /// The last 4 KiB of its stderr.
    pub stderr_tail: String,
    /// The last 4 KiB of its stdout, with `--keep-stdout` (else empty).
    pub stdout_tail: String,
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
    let mut signals = install_signals(spec);
    let grace = lease.map(|l| stop_grace(l.lease(), spec.kill_after));
    let Started {
        mut child,
        mut guard,
        pid,
        target,
    } = match start(spec, lease, grace) {
        Ok(started) => started,
        Err(NotStarted::Spawn(e)) => return not_started(spec, &e),
        Err(NotStarted::LeaseRanOut(why)) => return lease_ran_out(&why),
    };
    let copiers = Copiers::start(&mut child, spec);

    let mut watch = Watch {
        spec,
        lease,
        grace,
        quiet,
        target,
        timeout_at: spec.timeout.map(|t| started_boot + t),
        kill_at: None,
        lease_handled: false,
        term_sent: false,
    };
    let status = watch
        .until_exit(&mut child, &mut signals, &mut guard, &mut outcome)
        .await;
    if let Some(pid) = pid {
        super::children::untrack(pid);
    }
    if let Some(Target { pid, group: true }) = target {
        super::children::group_ended(pid.as_raw());
    }
    // The run lasted until the command itself exited: what it left behind is not its duration.
    outcome.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    stop_left_behind(spec, lease, guard, &mut outcome).await;
    let succeeded = status.as_ref().is_ok_and(|s| s.success());
    watch.note_loss_after_exit(succeeded, &mut outcome);
    drain(spec, copiers, outcome, status).await
}

/// The signal handlers that forward signals to the command, unless it is supervised.
fn install_signals(spec: &CommandSpec) -> Option<Signals> {
    // (The daemon handles its signals itself, shutdown and reload, and forwards what it must.)
    if spec.supervised.is_some() {
        return None;
    }
    match Signals::install() {
        Ok(s) => Some(s),
        Err(e) => {
            crate::errln!(
                "error: cannot install signal handlers ({e}); the command runs without forwarding"
            );
            None
        }
    }
}

/// A command started: its process, its guard, its pid, and where its signals go.
struct Started {
    child: Child,
    guard: Option<Guard>,
    pid: Option<u32>,
    target: Option<Target>,
}

/// Why a command was not started.
enum NotStarted {
    /// It could not be spawned.
    Spawn(std::io::Error),
    /// Its lease no longer left the time to run it (why, as the lease says).
    LeaseRanOut(String),
}

/// Starts the command under its guard (briefed), its group tracked; or why not, the guard let go.
fn start(
    spec: &CommandSpec,
    lease: Option<&LeaseDeadline>,
    grace: Option<Duration>,
) -> Result<Started, NotStarted> {
    let mut guard = start_guard(spec, grace);
    // The guard can take a moment to come (the daemon's spawner, a slow fork): the command starts
    // only while its lease leaves the time the watch below needs to stop it before another host
    // may take the run over. Started later, it would be stopped at once, but only after running
    // beside the takeover's copy (a red team saw 75 ms of two copies, a guard 1 s late).
    if let Some(why) = lease
        .filter(|_| spec.stop_on_lease_lost)
        .and_then(|l| l.lost_reason(grace.unwrap_or_default()))
    {
        if let Some(g) = guard {
            g.done();
        }
        return Err(NotStarted::LeaseRanOut(why));
    }
    let child = match spawn(spec, guard.as_ref().map(Guard::group)) {
        Ok(child) => child,
        Err(e) => {
            if let Some(g) = guard {
                g.done();
            }
            return Err(NotStarted::Spawn(e));
        }
    };
    // Its pid now: tokio forgets it once the command has been waited for.
    let pid = child.id();
    let target = pid.map(|id| Target {
        pid: match (&guard, spec.foreground) {
            (Some(g), false) => g.group(),
            _ => Pid::from_raw(id as i32),
        },
        group: !spec.foreground,
    });
    if let Some(g) = guard.as_mut() {
        brief_guard(g, &child, spec, lease);
    }
    if let Some(Target { pid, group: true }) = target {
        super::children::group_started(pid.as_raw());
    }
    Ok(Started {
        child,
        guard,
        pid,
        target,
    })
}

/// Stops what the command left behind in its group (unless it runs in the foreground or may
/// leave children), then lets the guard go.
async fn stop_left_behind(
    spec: &CommandSpec,
    lease: Option<&LeaseDeadline>,
    mut guard: Option<Guard>,
    outcome: &mut CommandOutcome,
) {
    if let (Some(g), false) = (guard.as_mut(), spec.foreground || spec.leave_children) {
        let deadline = lease
            .filter(|_| spec.stop_on_lease_lost)
            .map(LeaseDeadline::deadline);
        let kill_after = spec.kill_after_for(outcome);
        outcome.children_stopped = stop_leftovers(g, kill_after, deadline).await;
    }
    if let Some(g) = guard {
        g.done();
    }
}

/// Drains the command's output, keeps its stdout when asked, and completes the outcome.
async fn drain(
    spec: &CommandSpec,
    copiers: Copiers,
    mut outcome: CommandOutcome,
    status: std::io::Result<ExitStatus>,
) -> CommandOutcome {
    // One wait for both streams: a process the command was let leave behind (--leave-children)
    // may hold them open, and the run must not last two drains longer for it.
    let drained_by = Instant::now() + STDERR_DRAIN;
    let _ = tokio::time::timeout_at(drained_by, copiers.stdout).await;
    // Kept only when asked for (`--keep-stdout`): a stdout piped for another reason (the
    // daemon's labelled lines, `--live-output`) is not recorded in the result.
    if spec.keep_stdout {
        outcome.stdout_tail = String::from_utf8_lossy(
            &copiers
                .stdout_tail
                .lock()
                .unwrap_or_else(|e| e.into_inner()),
        )
        .into_owned();
    }
    finish_outcome(
        outcome,
        status,
        copiers.stderr,
        copiers.stderr_tail,
        drained_by,
    )
    .await
}

/// The tasks that pass the command's stderr (and stdout, when piped) through, keeping their tails.
struct Copiers {
    stderr: tokio::task::JoinHandle<()>,
    stderr_tail: Tail,
    stdout: tokio::task::JoinHandle<()>,
    stdout_tail: Tail,
}

impl Copiers {
    fn start(child: &mut Child, spec: &CommandSpec) -> Self {
        let stderr_tail = Tail::default();
        let stdout_tail = Tail::default();
        let live = |stderr: bool| {
            spec.live
                .clone()
                .map(|sink| crate::runner::live::Lines::new(sink, stderr))
        };
        if let (Some(_), Some(label)) = (&spec.supervised, crate::lines::current_run()) {
            use crate::lines::Stream;
            let stderr = tokio::spawn(pass_lines(
                child.stderr.take(),
                label.clone(),
                Stream::Stderr,
                stderr_tail.clone(),
                live(true),
            ));
            let stdout = tokio::spawn(pass_lines(
                child.stdout.take(),
                label,
                Stream::Stdout,
                stdout_tail.clone(),
                live(false),
            ));
            return Copiers {
                stderr,
                stderr_tail,
                stdout,
                stdout_tail,
            };
        }
        let stderr = tokio::spawn(pass_through_stderr(
            child.stderr.take(),
            stderr_tail.clone(),
            live(true),
        ));
        let stdout = tokio::spawn(pass_through_stdout(
            child.stdout.take(),
            stdout_tail.clone(),
            spec.stdout_to_stderr,
            live(false),
        ));
        Copiers {
            stderr,
            stderr_tail,
            stdout,
            stdout_tail,
        }
    }
}

/// The guard process that stops the command if anarchon dies ([`crate::runner::guard`]), or
/// none, with a warning, when it cannot be started.
fn start_guard(spec: &CommandSpec, grace: Option<Duration>) -> Option<Guard> {
    match Guard::start(
        !spec.foreground,
        spec.kill_after,
        grace.unwrap_or(Duration::ZERO),
        &guard_title(spec),
    ) {
        Ok(g) => Some(g),
        Err(e) => {
            crate::errln!(
                "warning: cannot start the guard process ({e}); if anarchon is killed, its command keeps running"
            );
            None
        }
    }
}

/// The guard's line in `ps`: `anarchon guard JOB SLOT`, the run it guards (from the command's
/// environment, which names it), so that it never reads as a second daemon.
fn guard_title(spec: &CommandSpec) -> String {
    let of = |name: &str| {
        spec.env
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let slot = of("ANARCHON_SLOT")
        .and_then(|s| s.parse::<i64>().ok())
        .map(crate::time::rfc3339);
    match (of("ANARCHON_JOB"), slot) {
        (Some(job), Some(slot)) => format!("anarchon guard {job} {slot}"),
        (Some(job), None) => format!("anarchon guard {job}"),
        _ => "anarchon guard".to_string(),
    }
}

/// Tells the guard the command's pid and, from the start rather than from the first tick, the
/// lease deadline: the guard must know it even if this process is stopped right now.
fn brief_guard(
    guard: &mut Guard,
    child: &Child,
    spec: &CommandSpec,
    lease: Option<&LeaseDeadline>,
) {
    if let Some(id) = child.id() {
        guard.watch(id);
    }
    if let (Some(l), true) = (lease, spec.stop_on_lease_lost) {
        guard.deadline(l.deadline());
    }
}

/// The outcome of a command that could not be started: 127 when it is not there, 126 otherwise
/// (as a shell does), with the error said on stderr.
/// The command not started because its lease ran out first: left as a lost lease is (the attempt
/// ends `interrupted` at its lease's end and another host, or the next claim, takes the run over).
fn lease_ran_out(why: &str) -> CommandOutcome {
    crate::errln!(
        "anarchon: the command was not started: its lease ran out first ({why}); the run is left to a takeover"
    );
    CommandOutcome {
        lease_lost: true,
        spawn_error: Some(format!("not started: the lease ran out first ({why})")),
        ..CommandOutcome::default()
    }
}

fn not_started(spec: &CommandSpec, e: &std::io::Error) -> CommandOutcome {
    let name = spec.argv.first().cloned().unwrap_or_default();
    crate::errln!(
        "error: cannot run {name:?}: {e}\n  hint: check the path and that it is executable, or pass --shell for a shell command line"
    );
    CommandOutcome {
        exit_code: Some(if e.kind() == std::io::ErrorKind::NotFound {
            127
        } else {
            126
        }),
        spawn_error: Some(e.to_string()),
        ..CommandOutcome::default()
    }
}

/// What the watch loop keeps between ticks: the deadlines it polices and what it has done.
struct Watch<'a> {
    spec: &'a CommandSpec,
    lease: Option<&'a LeaseDeadline>,
    /// How long before the lease's local deadline the command is stopped (with a lease).
    grace: Option<Duration>,
    quiet: bool,
    target: Option<Target>,
    timeout_at: Option<BootTime>,
    /// When the command gets SIGKILL, once it has been asked to stop.
    kill_at: Option<BootTime>,
    /// The lease's loss has been acted on (once).
    lease_handled: bool,
    /// One SIGTERM per command, whatever asks for it (--timeout, the lease, a release); the guard
    /// is told, so it sends none of its own.
    term_sent: bool,
}

impl Watch<'_> {
    /// Waits for the command's exit, forwarding signals, stopping it for the daemon's shutdown,
    /// and policing its deadlines each tick.
    async fn until_exit(
        &mut self,
        child: &mut Child,
        signals: &mut Option<Signals>,
        guard: &mut Option<Guard>,
        outcome: &mut CommandOutcome,
    ) -> std::io::Result<ExitStatus> {
        let mut tick = tokio::time::interval(TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut stop = self.spec.supervised.as_ref().map(|s| s.stop.clone());
        loop {
            tokio::select! {
                status = child.wait() => break status,
                sig = recv(signals) => forward(self.target, sig, outcome),
                () = stop_asked(&mut stop) => {
                    stop = None;
                    self.stop_for_shutdown(guard.as_mut(), outcome);
                }
                _ = tick.tick() => self.tick(guard.as_mut(), outcome),
            }
        }
    }

    /// The daemon's shutdown grace is over: the command gets its SIGTERM now and SIGKILL after
    /// [`SHUTDOWN_KILL_AFTER`] at most (before the lease's deadline in any case).
    fn stop_for_shutdown(&mut self, guard: Option<&mut Guard>, outcome: &mut CommandOutcome) {
        let now = BootTime::now();
        outcome.stopped_for_shutdown = true;
        let kill_after = self.spec.kill_after_for(outcome);
        crate::errln!(
            "anarchon: shutting down and the grace is over; stopping the command (SIGTERM, SIGKILL in {} at the latest) to hand the run over",
            humantime::format_duration(kill_after)
        );
        self.kill_at = earliest(self.kill_at, now + kill_after);
        if let Some(deadline) = self.lease.map(LeaseDeadline::deadline) {
            self.kill_at = earliest(self.kill_at, deadline);
        }
        terminate(self.target, guard, &mut self.term_sent, self.kill_at);
    }

    /// One look at the clock: --timeout, the lease, and the SIGKILL moment.
    fn tick(&mut self, mut guard: Option<&mut Guard>, outcome: &mut CommandOutcome) {
        let spec = self.spec;
        let now = BootTime::now();
        // The guard enforces the deadline too (if this process is stopped), unless the command is
        // to outlive a lost lease.
        if let (Some(g), Some(l), true) =
            (guard.as_deref_mut(), self.lease, spec.stop_on_lease_lost)
        {
            g.deadline(l.deadline());
        }
        if !outcome.timed_out && self.timeout_at.is_some_and(|at| now >= at) {
            outcome.timed_out = true;
            crate::errln!(
                "anarchon: the command ran longer than --timeout; stopping it (SIGTERM, SIGKILL after {})",
                humantime::format_duration(spec.kill_after)
            );
            self.kill_at = earliest(self.kill_at, now + spec.kill_after);
            terminate(
                self.target,
                guard.as_deref_mut(),
                &mut self.term_sent,
                self.kill_at,
            );
        }
        self.check_lease(now, guard, outcome);
        if self.kill_at.is_some_and(|at| now >= at) {
            send(self.target, Signal::SIGKILL);
            self.kill_at = None;
        }
    }

    /// Acts, once, on a lease that is lost or released: stops the command (a release even under
    /// --on-lease-lost continue), or says it keeps running.
    fn check_lease(
        &mut self,
        now: BootTime,
        guard: Option<&mut Guard>,
        outcome: &mut CommandOutcome,
    ) {
        let spec = self.spec;
        let (Some(l), Some(grace), false) = (self.lease, self.grace, self.lease_handled) else {
            return;
        };
        let Some(reason) = l.lost_reason(grace) else {
            return;
        };
        self.lease_handled = true;
        let loss = l.loss();
        // A release is an operator's stop: it stops the command even under --on-lease-lost
        // continue, and the run is recorded, not left to expire.
        outcome.released = loss == Loss::Released;
        outcome.lease_lost = !outcome.released;
        if spec.stop_on_lease_lost || outcome.released {
            let deadline = l.deadline();
            let kill_after = if loss == Loss::StoreLost {
                spec.kill_after.min(STORE_LOST_GRACE)
            } else {
                spec.kill_after
            };
            crate::errln!(
                "anarchon: {} ({reason}); stopping the command (SIGTERM, SIGKILL in {} at the latest)",
                if outcome.released {
                    "released"
                } else {
                    "lease lost"
                },
                humantime::format_duration(left_in_words(kill_after.min(deadline.left())))
            );
            // Gone before the lease can end on the server, whatever --kill-after says.
            self.kill_at = earliest(earliest(self.kill_at, now + kill_after), deadline);
            terminate(self.target, guard, &mut self.term_sent, self.kill_at);
        } else if !self.quiet {
            crate::errln!(
                "anarchon: lease lost ({reason}); the command keeps running (--on-lease-lost continue)"
            );
        }
    }

    /// After the command exited: the guard may have stopped it for the lease while this process
    /// could not look (a command that traps SIGTERM exits with a code of its own). One that
    /// succeeded is recorded as it is.
    fn note_loss_after_exit(&self, succeeded: bool, outcome: &mut CommandOutcome) {
        if let (Some(l), Some(grace), false) = (self.lease, self.grace, succeeded)
            && self.spec.stop_on_lease_lost
            && !outcome.lease_lost
            && !outcome.released
            && let Some(reason) = l.lost_reason(grace)
        {
            outcome.released = l.loss() == Loss::Released;
            outcome.lease_lost = !outcome.released;
            crate::errln!("anarchon: lease lost ({reason}); the command was stopped");
        }
    }
}

/// Sends the command its one SIGTERM (unless it had it already) and tells the guard, which then
/// only sends SIGKILL at `kill_at` if the command is still there.
fn terminate(
    target: Option<Target>,
    guard: Option<&mut Guard>,
    term_sent: &mut bool,
    kill_at: Option<BootTime>,
) {
    if !*term_sent {
        *term_sent = true;
        send(target, Signal::SIGTERM);
    }
    if let (Some(g), Some(at)) = (guard, kill_at) {
        g.stopping(at);
    }
}

/// Stops what the command left in its process group when it exited (the guard, which leads the
/// group, aside): SIGTERM, then SIGKILL after `kill_after` or at the lease `deadline`, whichever
/// comes first, waiting until none is left. Returns how many there were.
async fn stop_leftovers(
    guard: &mut Guard,
    kill_after: Duration,
    deadline: Option<BootTime>,
) -> usize {
    let group = guard.group();
    // Asked of the guard first: nearly always nobody is left, and then /proc is not read.
    if guard.group_empty().await == Some(true) {
        return 0;
    }
    let left = group_members(group);
    if left.is_empty() {
        return 0;
    }
    let mut kill_at = BootTime::now() + kill_after;
    if let Some(d) = deadline {
        kill_at = kill_at.min(d);
    }
    let pids: Vec<String> = left.iter().map(|p| p.to_string()).collect();
    crate::errln!(
        "anarchon: the command exited but left {} process(es) in its group (pid {}); stopping them (SIGTERM, SIGKILL in {} at the latest) before the run is recorded ended (--leave-children lets them run on)",
        left.len(),
        pids.join(", "),
        humantime::format_duration(left_in_words(kill_at.left()))
    );
    guard.stopping(kill_at);
    // The guard ignores SIGTERM; the group's other members get it.
    let _ = killpg(group, Signal::SIGTERM);
    while !group_members(group).is_empty() {
        if BootTime::now() >= kill_at {
            // This ends the guard too, which leads the group: nothing is left for it to guard.
            let _ = killpg(group, Signal::SIGKILL);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    left.len()
}

/// The processes in process group `group` other than its leader (the guard) that still run (a
/// zombie is no longer running: its parent, or the daemon's reaper, waits for it).
fn group_members(group: Pid) -> Vec<Pid> {
    super::children::processes()
        .into_iter()
        .filter(|p| p.group == group.as_raw() && p.pid != group.as_raw() && !p.zombie)
        .map(|p| Pid::from_raw(p.pid))
        .collect()
}

fn earliest(a: Option<BootTime>, b: BootTime) -> Option<BootTime> {
    Some(a.map_or(b, |a| a.min(b)))
}

/// A time left, as a person reads it: whole milliseconds under a second, whole seconds (to the
/// nearest) from one on (`10s`, not `9s 999ms`: what is left of a 10 s deadline a moment after
/// it began).
fn left_in_words(d: Duration) -> Duration {
    if d < Duration::from_secs(1) {
        return Duration::from_millis(u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    }
    Duration::from_secs((d + Duration::from_millis(500)).as_secs())
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

/// Resolves once the daemon asks its commands to stop (never without a daemon, or once seen).
async fn stop_asked(stop: &mut Option<tokio::sync::watch::Receiver<bool>>) {
    match stop {
        Some(rx) => {
            if rx.wait_for(|stop| *stop).await.is_err() {
                // The daemon is gone without asking: nothing will ask any more.
                std::future::pending::<()>().await;
            }
        }
        None => std::future::pending().await,
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
        .stdout(
            if spec.keep_stdout || spec.supervised.is_some() || spec.live.is_some() {
                Stdio::piped()
            } else if spec.stdout_to_stderr {
                Stdio::from(std::io::stderr())
            } else {
                Stdio::inherit()
            },
        )
        .stderr(Stdio::piped())
        .kill_on_drop(false);
    if !spec.foreground {
        // The guard's group when there is a guard (so the command is never unguarded), else its own.
        cmd.process_group(group.map_or(0, Pid::as_raw));
    }
    // Known to the daemon's reaper before it can exit, so that the reaper leaves its status to
    // tokio (see [`super::children`]).
    super::children::spawn_tracked(|| cmd.spawn(), |child| child.id())
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
    copier: tokio::task::JoinHandle<()>,
    tail: Tail,
    drained_by: Instant,
) -> CommandOutcome {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Ok(status) => {
            outcome.exit_code = status.code();
            outcome.signal = status.signal();
        }
        Err(e) => {
            crate::errln!("error: lost track of the command: {e}");
            outcome.exit_code = Some(1);
        }
    }
    // A process the command was let leave behind (--leave-children) may hold its stderr open: do
    // not wait for it for long, and keep what was read so far.
    let _ = tokio::time::timeout_at(drained_by, copier).await;
    let bytes = tail.lock().unwrap_or_else(|e| e.into_inner()).clone();
    outcome.stderr_tail = String::from_utf8_lossy(&bytes).into_owned();
    outcome
}

/// The last [`STDERR_TAIL_BYTES`] of the command's stderr, shared with the task that copies it, so
/// that what was read is kept even when the copy never reaches end-of-file.
type Tail = std::sync::Arc<std::sync::Mutex<Vec<u8>>>;

/// Copies the command's stderr to ours as it comes, keeping the last [`STDERR_TAIL_BYTES`] in
/// `tail`.
async fn pass_through_stderr(stderr: Option<ChildStderr>, tail: Tail, live: Option<Lines>) {
    if let Some(stderr) = stderr {
        pass_through(stderr, Box::pin(tokio::io::stderr()), tail, live).await;
    }
}

/// With `--keep-stdout`: the same for the command's stdout, to ours (to our stderr under `--json`).
async fn pass_through_stdout(
    stdout: Option<tokio::process::ChildStdout>,
    tail: Tail,
    to_stderr: bool,
    live: Option<Lines>,
) {
    let Some(stdout) = stdout else {
        return;
    };
    let ours: std::pin::Pin<Box<dyn tokio::io::AsyncWrite + Send>> = if to_stderr {
        Box::pin(tokio::io::stderr())
    } else {
        Box::pin(tokio::io::stdout())
    };
    pass_through(stdout, ours, tail, live).await;
}

/// Copies one of the command's streams to ours as it comes, keeping its last
/// [`STDERR_TAIL_BYTES`] in `tail`. A reader of ours that went away does not stop the copy: the
/// command must not be killed by a pipe it never chose.
async fn pass_through(
    mut from: impl tokio::io::AsyncRead + Unpin,
    mut ours: std::pin::Pin<Box<dyn tokio::io::AsyncWrite + Send>>,
    tail: Tail,
    mut live: Option<Lines>,
) {
    // 64 KiB a read: a command that prints fast is copied in few writes (on the heap: the
    // future stays small).
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let _ = ours.write_all(&buf[..n]).await;
                let _ = ours.flush().await;
                push_tail(
                    &mut tail.lock().unwrap_or_else(|e| e.into_inner()),
                    &buf[..n],
                );
                if let Some(lines) = &mut live {
                    lines.push(&buf[..n]);
                }
            }
        }
    }
    if let Some(lines) = live {
        lines.finish();
    }
}

/// The longest line passed on whole under the daemon; a longer one goes out in pieces this long.
const LONGEST_LINE: usize = 16 * 1024;

/// Under the daemon: passes one of the command's streams on line by line, each labelled with its
/// run ([`crate::lines::command_line`]), keeping its last [`STDERR_TAIL_BYTES`] in `tail`. A
/// last line without its newline goes out at the end.
async fn pass_lines(
    from: Option<impl tokio::io::AsyncRead + Unpin>,
    label: std::sync::Arc<crate::lines::RunLabel>,
    stream: crate::lines::Stream,
    tail: Tail,
    mut live: Option<Lines>,
) {
    let Some(mut from) = from else {
        return;
    };
    let mut buf = [0u8; 8192];
    let mut line: Vec<u8> = Vec::new();
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        push_tail(
            &mut tail.lock().unwrap_or_else(|e| e.into_inner()),
            &buf[..n],
        );
        if let Some(lines) = &mut live {
            lines.push(&buf[..n]);
        }
        for piece in buf[..n].split_inclusive(|b| *b == b'\n') {
            line.extend_from_slice(piece);
            if line.ends_with(b"\n") || line.len() >= LONGEST_LINE {
                crate::lines::command_line(&label, stream, &line);
                line.clear();
            }
        }
    }
    if !line.is_empty() {
        crate::lines::command_line(&label, stream, &line);
    }
    if let Some(lines) = live {
        lines.finish();
    }
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
    #[test]
    fn time_left_reads_in_whole_seconds_from_one_on() {
        let say =
            |ms| humantime::format_duration(left_in_words(Duration::from_millis(ms))).to_string();
        assert_eq!(say(9_999), "10s");
        assert_eq!(say(1_400), "1s");
        assert_eq!(say(850), "850ms");
    }

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

    /// `command` (one word, or a shell line with `shell`) as a run's command in its own group,
    /// under a guard, stopped when its lease is lost.
    fn spec(command: &str, shell: bool) -> CommandSpec {
        CommandSpec {
            argv: vec![command.to_string()],
            shell,
            foreground: false,
            env: Vec::new(),
            env_remove: Vec::new(),
            timeout: None,
            kill_after: Duration::from_secs(1),
            stop_on_lease_lost: true,
            leave_children: false,
            stdout_to_stderr: false,
            keep_stdout: false,
            supervised: None,
            live: None,
        }
    }

    /// Every process a run starts (its guard, its command) is forgotten by the registry once
    /// waited for: a pid left there would be taken for ours when the kernel gives it to an
    /// orphan, which the daemon's reaper then never reaps.
    #[tokio::test]
    async fn a_run_leaves_no_pid_in_the_registry() {
        let _alone = ALONE.lock().await;
        let spec = spec("true", false);
        let outcome = run(&spec, None, true).await;
        assert_eq!(outcome.exit_code, Some(0));
        assert_eq!(crate::runner::children::tracked(), Vec::<i32>::new());
    }

    /// A command whose lease no longer leaves the time to stop it (the guard came late: a stopped
    /// spawner, a slow fork) is not started at all: no process runs, and the outcome is a lost
    /// lease, which leaves the run to a takeover (issue 49's red team).
    #[tokio::test]
    async fn a_command_is_not_started_once_its_lease_ran_out() {
        let _alone = ALONE.lock().await;
        let dir = tempfile::tempdir().unwrap();
        let ran = dir.path().join("ran");
        let spec = spec(&format!("touch {}", ran.display()), true);
        // A 2 s lease whose claim was sent 5 s ago.
        let sent = BootTime::now().saturating_sub(Duration::from_secs(5));
        let lease = LeaseDeadline::new(Duration::from_secs(2), sent);
        let outcome = run(&spec, Some(&lease), true).await;
        assert!(outcome.lease_lost, "{outcome:?}");
        assert_eq!(outcome.exit_code, None);
        assert!(!ran.exists(), "the command ran");
        assert_eq!(crate::runner::children::tracked(), Vec::<i32>::new());
        // With the lease's time left, the same command runs.
        let lease = LeaseDeadline::new(Duration::from_secs(30), BootTime::now());
        let outcome = run(&spec, Some(&lease), true).await;
        assert_eq!(outcome.exit_code, Some(0), "{outcome:?}");
        assert!(ran.exists());
    }

    /// The tests that look at the process registry, one at a time (it is the process's own).
    static ALONE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

    /// The guard answers whether anything is left in the group it leads, and leads it again when
    /// something is (so that a kill of anarchon's group does not take the guard along).
    #[tokio::test]
    async fn the_guard_says_whether_its_group_is_empty_and_keeps_leading_it() {
        use std::os::unix::process::CommandExt;
        let _alone = ALONE.lock().await;
        let mut guard = Guard::start(true, Duration::from_secs(1), Duration::ZERO, "test").unwrap();
        let group = guard.group();
        let mut member = std::process::Command::new("sleep")
            .arg("30")
            .process_group(group.as_raw())
            .spawn()
            .unwrap();
        assert_eq!(guard.group_empty().await, Some(false));
        assert_eq!(
            nix::unistd::getpgid(Some(group)),
            Ok(group),
            "back in its group"
        );
        member.kill().unwrap();
        member.wait().unwrap();
        assert_eq!(guard.group_empty().await, Some(true));
        // Empty, the group is gone for good: nothing can join it again while the guard lives.
        let joined = std::process::Command::new("true")
            .process_group(group.as_raw())
            .status();
        assert!(joined.is_err(), "{joined:?}");
        guard.done();
    }
}
