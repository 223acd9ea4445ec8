//! The guard: a tiny process that makes sure the command never outlives its anarchon.
//!
//! If anarchon dies while its command runs (kill -9, the OOM killer, a crash), nothing else would
//! stop the command, and a backup host would start the run's next attempt beside it. So before the
//! command starts, anarchon forks a guard:
//!
//! ```text
//! anarchon ──pipe (write end only in anarchon)──► guard   (process group G = the guard's pid)
//!    └── spawns the command into group G
//! ```
//!
//! The guard blocks reading the pipe. anarchon writes the lease deadline to it as heartbeats move
//! it, and `done` once the command has been reaped. When the pipe reaches end-of-file without
//! `done`, anarchon is gone, by whatever signal: the kernel closes a dead process's descriptors,
//! SIGKILL included. The guard then sends SIGTERM to group G, and SIGKILL at the earlier of
//! `--kill-after` and the local lease deadline (so the command is gone before another host can win
//! the next attempt); it stops waiting as soon as the command's own process is gone.
//!
//! The guard also enforces the deadline on its own: when the deadline (minus half the grace) comes
//! without anarchon having moved it, anarchon is alive but stopped (SIGSTOP) or starved, and the
//! guard stops the command exactly as anarchon itself would have. anarchon, which looks at the
//! deadline every 50 ms, acts at the deadline minus the whole grace, and tells the guard when it has
//! sent its SIGTERM (`STOPPING`, with its SIGKILL moment): the guard then sends no SIGTERM of its
//! own, only the SIGKILL if the command is still there by then. A command gets one SIGTERM: many
//! programs read a second as "quit now, skip the cleanup".
//!
//! When the command has exited, anarchon asks the guard whether anything is left in the group
//! (`CHECK`): the guard steps out of the group into anarchon's own for the two system calls it
//! takes to ask the kernel (`kill(-G, 0)`: ESRCH means nobody is left) and steps back in when
//! someone is. Asked here rather than by reading every `/proc/N/stat` (1-4 ms a run on a busy
//! machine), and asked of the guard because only it can leave the group it leads: anarchon
//! itself cannot tell the guard from the rest. Group G cannot come back once empty while the
//! guard lives (a group's id is its creator's pid: the guard's), so an answer "empty" stays true.
//!
//! Why a pipe and not PR_SET_PDEATHSIG alone: the death signal fires when the forking *thread*
//! exits and reaches only the direct child; a pipe's end-of-file follows the whole process and
//! works on every Unix. Why the guard leads the group: the group exists before the command is
//! spawned into it, so there is no moment at which the command runs unguarded.
//!
//! The guard is forked without exec (a binary replaced on disk by an upgrade can't break it).
//! Between the fork and its exit it only makes async-signal-safe system calls: no allocation, no
//! locks. It is anarchon's own child, and anarchon reaps it when it is done: a guard double-forked
//! to init is left `<defunct>` under a PID 1 that does not reap (a shell in a container), one per
//! run. Only when anarchon itself is killed does the guard outlive it (and go to init).

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, kill, killpg, sigaction};
use nix::sys::wait::waitpid;
use nix::unistd::{ForkResult, Pid, fork, getpid, pipe2, setpgid};

use crate::runner::deadline::BootTime;

pub mod spawner;

/// Message tags on the pipe; each message is a tag byte and a little-endian u64.
const DEADLINE: u8 = b'E';
const WATCH_PID: u8 = b'P';
const STOPPING: u8 = b'S';
const DONE: u8 = b'D';
const CHECK: u8 = b'C';

/// The guard's answers to `CHECK`, on the pipe back to anarchon.
const EMPTY: u8 = b'0';
const OCCUPIED: u8 = b'1';

/// How long the daemon waits for a guard from its spawner before it gives the spawner up and forks
/// the guard itself. A guard comes in well under a millisecond; a stopped or starved spawner must
/// not hold the run back (its lease runs meanwhile) nor the daemon, whose one thread waits.
const SPAWNER_PATIENCE: Duration = Duration::from_millis(100);

/// How long anarchon waits for the guard's answer before it looks at /proc itself (the guard may
/// be stopped with its group, or starved on a loaded machine).
const CHECK_PATIENCE: Duration = Duration::from_millis(500);

/// anarchon's end of a running guard.
pub struct Guard {
    /// None once closed ([`Guard::done`], or dropped).
    pipe: Option<std::fs::File>,
    group: Pid,
    sent_deadline: Option<u64>,
    /// The guard's answers (None once it has failed to answer: anarchon no longer asks).
    answers: Option<tokio::io::unix::AsyncFd<std::fs::File>>,
    /// Whether this process forked the guard (and must wait for it), or the spawner did.
    ours: bool,
    /// Whether the guard process has been waited for.
    reaped: bool,
}

impl Guard {
    /// Forks the guard. `group`: the command will join the guard's process group (the default);
    /// otherwise (`--foreground`) the guard stops only the process named by [`Guard::watch`].
    ///
    /// `title`: its line in `ps` (`anarchon guard JOB SLOT`), written after the fork.
    pub fn start(
        group: bool,
        kill_after: Duration,
        grace: Duration,
        title: &str,
    ) -> std::io::Result<Guard> {
        // Prepared here: the child may not allocate.
        let title = super::proctitle::Title::prepare(title);
        let kill_after_ns = u64::try_from(kill_after.as_nanos()).unwrap_or(u64::MAX);
        let grace_ns = u64::try_from(grace.as_nanos()).unwrap_or(u64::MAX);
        let request = spawner::Request {
            group,
            kill_after_ns,
            grace_ns,
            title: title.as_ref().map(super::proctitle::Title::parts),
        };
        if let Some(guard) = Guard::from_spawner(&request) {
            return Ok(guard);
        }
        Guard::fork(group, kill_after_ns, grace_ns, title.as_ref())
    }

    /// The guard forked by the daemon's spawner ([`spawner`]), if there is one and it answers
    /// within [`SPAWNER_PATIENCE`]. None: no guard came of the request (a late one finds its pipe
    /// closed and leaves, having no command to stop).
    fn from_spawner(request: &spawner::Request) -> Option<Guard> {
        spawner::pid()?;
        let (to_guard_read, to_guard_write) = pipe2(OFlag::O_CLOEXEC).ok()?;
        let (from_guard_read, from_guard_write) = pipe2(OFlag::O_CLOEXEC).ok()?;
        if let Err(e) = spawner::ask(request, &to_guard_read, &from_guard_write) {
            spawner::give_up(&e);
            return None;
        }
        // The guard's ends are the spawner's now: end-of-file if it forks nobody.
        drop(to_guard_read);
        drop(from_guard_write);
        let mut ready = std::fs::File::from(from_guard_read);
        let group = match read_pid(&mut ready, Some(SPAWNER_PATIENCE)) {
            Ok(group) => group,
            Err(e) => {
                spawner::give_up(&e);
                return None;
            }
        };
        Some(Guard {
            pipe: Some(std::fs::File::from(to_guard_write)),
            group,
            sent_deadline: None,
            answers: answers(ready),
            // The spawner's child: the spawner reaps it.
            ours: false,
            reaped: false,
        })
    }

    /// The guard forked by this process.
    fn fork(
        group: bool,
        kill_after_ns: u64,
        grace_ns: u64,
        title: Option<&super::proctitle::Title>,
    ) -> std::io::Result<Guard> {
        let (to_guard_read, to_guard_write) = pipe2(OFlag::O_CLOEXEC)?;
        let (from_guard_read, from_guard_write) = pipe2(OFlag::O_CLOEXEC)?;
        // Locked across the fork: the daemon's reaper must know the guard is ours before it can
        // exit (see `runner::children`). The child branch never touches the lock.
        let mut held = super::children::hold();
        // SAFETY: the child branch makes only async-signal-safe calls and never returns.
        let forked = unsafe { fork() }?;
        if let ForkResult::Parent { child } = forked {
            held.track(child.as_raw());
        }
        drop(held);
        match forked {
            ForkResult::Child => {
                // Named before anything else: `ps` must never show it as a second anarchon.
                if let Some(title) = title {
                    title.apply();
                }
                guard_main(
                    to_guard_read.as_raw_fd(),
                    to_guard_write.as_raw_fd(),
                    from_guard_read.as_raw_fd(),
                    from_guard_write.as_raw_fd(),
                    group,
                    kill_after_ns,
                    grace_ns,
                )
            }
            ForkResult::Parent { child } => {
                drop(to_guard_read);
                drop(from_guard_write);
                let mut ready = std::fs::File::from(from_guard_read);
                let group = match read_pid(&mut ready, None) {
                    Ok(group) => group,
                    Err(e) => {
                        let _ = waitpid(child, None);
                        super::children::untrack(child.as_raw() as u32);
                        return Err(e);
                    }
                };
                Ok(Guard {
                    pipe: Some(std::fs::File::from(to_guard_write)),
                    group,
                    sent_deadline: None,
                    answers: answers(ready),
                    ours: true,
                    reaped: false,
                })
            }
        }
    }

    /// The process group the command must join (the guard's pid).
    pub fn group(&self) -> Pid {
        self.group
    }

    /// The command's own process: the guard stops waiting when it is gone.
    pub fn watch(&mut self, pid: u32) {
        self.send(WATCH_PID, u64::from(pid));
    }

    /// The local lease deadline: the guard's SIGKILL comes no later than this.
    pub fn deadline(&mut self, deadline: BootTime) {
        let nanos = deadline.as_nanos();
        if self.sent_deadline != Some(nanos) {
            self.sent_deadline = Some(nanos);
            self.send(DEADLINE, nanos);
        }
    }

    /// anarchon has sent the command its SIGTERM and sends SIGKILL at `kill_at`: the guard sends
    /// no SIGTERM of its own, and a SIGKILL at `kill_at` (or the deadline) if anarchon cannot.
    pub fn stopping(&mut self, kill_at: BootTime) {
        self.send(STOPPING, kill_at.as_nanos());
    }

    /// Whether the command's process group is empty now (the guard, which leads it, aside): the
    /// guard's answer to `CHECK`. None when it cannot tell (no answer in time, a member it may
    /// not signal, or no group): the caller then looks at /proc.
    pub async fn group_empty(&mut self) -> Option<bool> {
        self.pipe.as_ref()?;
        self.answers.as_ref()?;
        self.send(CHECK, 0);
        let answers = self.answers.as_mut()?;
        let read = async {
            loop {
                let mut ready = answers.readable_mut().await.ok()?;
                let mut answer = [0u8; 1];
                match ready.try_io(|fd| fd.get_mut().read(&mut answer)) {
                    Ok(Ok(1)) => return Some(answer[0] == EMPTY),
                    Ok(_) => return None, // the guard is gone (end-of-file) or the pipe failed
                    Err(_would_block) => continue,
                }
            }
        };
        let answer = tokio::time::timeout(CHECK_PATIENCE, read)
            .await
            .ok()
            .flatten();
        if answer.is_none() {
            // A late answer would be read as the next one's: ask no more.
            self.answers = None;
        }
        answer
    }

    /// The command has been reaped: the guard exits without signalling anyone, and is reaped
    /// here (it exits as soon as it reads this).
    pub fn done(mut self) {
        self.send(DONE, 0);
        self.pipe = None;
        if self.ours {
            let _ = waitpid(self.group, None);
            super::children::untrack(self.group.as_raw() as u32);
        }
        self.reaped = true;
    }

    fn send(&mut self, tag: u8, value: u64) {
        let mut message = [0u8; 9];
        message[0] = tag;
        message[1..].copy_from_slice(&value.to_le_bytes());
        // One write of 9 bytes is atomic on a pipe. If the guard is gone (it was killed with the
        // group), there is nobody left to tell.
        if let Some(pipe) = self.pipe.as_mut() {
            let _ = pipe.write_all(&message);
        }
    }
}

impl Drop for Guard {
    /// Dropped without [`Guard::done`] (an error path): the pipe closes, so the guard stops the
    /// command as if anarchon were gone and then exits; a thread waits for it, so that it is not
    /// left `<defunct>` while this process lives.
    fn drop(&mut self) {
        if self.reaped || !self.ours {
            return;
        }
        self.pipe = None;
        let guard = self.group;
        std::thread::spawn(move || {
            let _ = waitpid(guard, None);
            super::children::untrack(guard.as_raw() as u32);
        });
    }
}

/// The guard's pid, the first thing it writes on the pipe back (once it leads its group). With
/// `patience`, an error when it has not come by then.
fn read_pid(ready: &mut std::fs::File, patience: Option<Duration>) -> std::io::Result<Pid> {
    if let Some(patience) = patience {
        let until = std::time::Instant::now() + patience;
        loop {
            let left = until.saturating_duration_since(std::time::Instant::now());
            let timeout =
                nix::poll::PollTimeout::try_from(left).unwrap_or(nix::poll::PollTimeout::MAX);
            let mut fds = [nix::poll::PollFd::new(
                std::os::fd::AsFd::as_fd(ready),
                nix::poll::PollFlags::POLLIN,
            )];
            match nix::poll::poll(&mut fds, timeout) {
                // The daemon's signal handlers (a command's SIGCHLD) interrupt the wait.
                Err(Errno::EINTR) => continue,
                Err(e) => return Err(e.into()),
                Ok(0) => {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "the guard spawner did not answer",
                    ));
                }
                Ok(_) => break,
            }
        }
    }
    let mut pid = [0u8; 4];
    ready.read_exact(&mut pid).map_err(|e| {
        std::io::Error::new(e.kind(), format!("the guard process did not start: {e}"))
    })?;
    Ok(Pid::from_raw(i32::from_le_bytes(pid)))
}

/// The read end of the pipe from the guard, made non-blocking for tokio (None if it cannot be:
/// anarchon then never asks the guard, and looks at /proc).
fn answers(from_guard: std::fs::File) -> Option<tokio::io::unix::AsyncFd<std::fs::File>> {
    let flags = nix::fcntl::fcntl(&from_guard, nix::fcntl::FcntlArg::F_GETFL).ok()?;
    let flags = OFlag::from_bits_retain(flags) | OFlag::O_NONBLOCK;
    nix::fcntl::fcntl(&from_guard, nix::fcntl::FcntlArg::F_SETFL(flags)).ok()?;
    // Outside a runtime (a unit test's guard) there is no reactor to register with.
    tokio::runtime::Handle::try_current().ok()?;
    // SAFETY: the File owns its descriptor, open until the AsyncFd (which owns the File) drops.
    unsafe {
        tokio::io::unix::AsyncFd::register_with_interest(from_guard, tokio::io::Interest::READABLE)
    }
    .ok()
}

/// The guard process. Async-signal-safe calls only; never returns.
fn guard_main(
    read_fd: RawFd,
    parent_write: RawFd,
    parent_read: RawFd,
    ready_fd: RawFd,
    group: bool,
    kill_after_ns: u64,
    grace_ns: u64,
) -> ! {
    let (me, fds) = become_guard(
        read_fd,
        parent_write,
        parent_read,
        ready_fd,
        group,
        grace_ns,
    );
    let orders = wait_for_trouble(fds, group.then_some(me));
    stop_command(me, group, &orders, kill_after_ns)
}

/// What the guard process works with: its pipes and where it came from.
#[derive(Clone, Copy)]
struct GuardFds {
    /// From anarchon.
    orders: RawFd,
    /// To anarchon (answers to `CHECK`).
    answers: RawFd,
    /// anarchon's process group, which the guard steps into to ask about its own.
    home: Pid,
    grace_ns: u64,
}

/// The guard's setup in the forked child: its own process group (to lead the command's), signals
/// ignored, its pid sent back on the ready pipe, every other descriptor closed. Returns its pid
/// and its descriptors (the pipe from anarchon, the ready pipe kept for answers).
fn become_guard(
    read_fd: RawFd,
    parent_write: RawFd,
    parent_read: RawFd,
    ready_fd: RawFd,
    group: bool,
    grace_ns: u64,
) -> (Pid, GuardFds) {
    let _ = nix::unistd::close(parent_write);
    let _ = nix::unistd::close(parent_read);
    let home = nix::unistd::getpgrp();
    if group {
        let _ = setpgid(Pid::from_raw(0), Pid::from_raw(0));
    }
    // The guard receives what its group receives (anarchon forwards signals to the group), and must
    // survive it; tokio's handlers, inherited from anarchon, must not run here either.
    ignore(SIGNALS_OF_THE_GROUP);
    let default = SigAction::new(SigHandler::SigDfl, SaFlags::empty(), SigSet::empty());
    // SAFETY: as above.
    let _ = unsafe { sigaction(Signal::SIGCHLD, &default) };
    let me = getpid();
    let _ = nix::unistd::write(
        // SAFETY: ready_fd is the open write end of the ready pipe, owned by this process alone.
        unsafe { std::os::fd::BorrowedFd::borrow_raw(ready_fd) },
        &me.as_raw().to_le_bytes(),
    );
    let (orders, answers) = detach_descriptors(read_fd, ready_fd);
    #[cfg(any(target_os = "linux", target_os = "android"))]
    // SAFETY: PR_SET_NAME with a NUL-terminated string that outlives the call.
    unsafe {
        nix::libc::prctl(nix::libc::PR_SET_NAME, c"anarchon-guard".as_ptr());
    }
    (
        me,
        GuardFds {
            orders,
            answers,
            home,
            grace_ns,
        },
    )
}

/// What a process forked from anarchon receives with anarchon's group or the command's (a
/// terminal's ^C, a service manager's stop, anarchon forwarding) and must outlive: the guard, and
/// the daemon's guard spawner.
const SIGNALS_OF_THE_GROUP: [Signal; 7] = [
    Signal::SIGINT,
    Signal::SIGTERM,
    Signal::SIGHUP,
    Signal::SIGQUIT,
    Signal::SIGPIPE,
    Signal::SIGUSR1,
    Signal::SIGUSR2,
];

/// Sets `signals` to SIG_IGN. Async-signal-safe (no allocation), for a forked child.
fn ignore(signals: impl IntoIterator<Item = Signal>) {
    let ignore = SigAction::new(SigHandler::SigIgn, SaFlags::empty(), SigSet::empty());
    for sig in signals {
        // SAFETY: installing SIG_IGN has no handler code to run.
        let _ = unsafe { sigaction(sig, &ignore) };
    }
}

/// What anarchon told the guard so far.
#[derive(Default, Clone, Copy)]
struct Orders {
    /// The lease's local deadline (boot clock, ns).
    deadline: Option<u64>,
    /// The command's pid.
    command: Option<Pid>,
    /// Set once anarchon has sent the SIGTERM: when the SIGKILL is due.
    stopping: Option<u64>,
}

/// Reads anarchon's messages until anarchon is gone (end-of-file) or a deadline passes without
/// word from it; exits the process when anarchon says it is done. Returns what it was told.
/// `leads`: the group the guard leads, if it does (what `CHECK` asks about).
fn wait_for_trouble(fds: GuardFds, leads: Option<Pid>) -> Orders {
    let GuardFds {
        orders: pipe,
        grace_ns,
        ..
    } = fds;
    let mut orders = Orders::default();
    let mut message = [0u8; 9];
    let mut filled = 0usize;
    loop {
        // Wait for a message, but no longer than until the lease deadline (minus half the grace,
        // anarchon's own moment to act being the whole grace before it): if anarchon has not moved
        // it by then, anarchon is stopped or starved, and the command must stop all the same.
        // Once anarchon has sent its SIGTERM, until the SIGKILL is due.
        let wake_at = match (orders.stopping, orders.deadline) {
            (Some(kill_at), Some(d)) => Some(kill_at.min(d)),
            (Some(kill_at), None) => Some(kill_at),
            (None, Some(d)) => Some(d.saturating_sub(grace_ns / 2)),
            (None, None) => None,
        };
        let timeout_ms: i32 = match wake_at {
            None => -1,
            Some(at) => {
                let now = BootTime::now().as_nanos();
                if now >= at {
                    break;
                }
                i32::try_from((at - now).div_ceil(1_000_000)).unwrap_or(i32::MAX)
            }
        };
        let mut pollfd = nix::libc::pollfd {
            fd: pipe,
            events: nix::libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let ready = unsafe { nix::libc::poll(&mut pollfd, 1, timeout_ms) };
        if ready == 0 || (ready < 0 && Errno::last() == Errno::EINTR) {
            continue;
        }
        // SAFETY: `message[filled..]` is valid writable memory of that length.
        let n = unsafe {
            nix::libc::read(
                pipe,
                message[filled..].as_mut_ptr().cast(),
                message.len() - filled,
            )
        };
        if n < 0 && Errno::last() == Errno::EINTR {
            continue;
        }
        if n <= 0 {
            break; // end-of-file: anarchon is gone
        }
        filled += n as usize;
        if filled < message.len() {
            continue;
        }
        filled = 0;
        let mut value = [0u8; 8];
        value.copy_from_slice(&message[1..]);
        let value = u64::from_le_bytes(value);
        match message[0] {
            DONE => exit(0),
            DEADLINE => orders.deadline = Some(value),
            WATCH_PID => orders.command = i32::try_from(value).ok().map(Pid::from_raw),
            STOPPING => orders.stopping = Some(value),
            CHECK => answer_check(fds, leads),
            _ => {}
        }
    }
    orders
}

/// Answers whether anything is left in the group the guard leads (`EMPTY` or `OCCUPIED`): steps
/// out into anarchon's group, asks the kernel, and steps back in if the group still has members
/// (it cannot come back once empty: its id is the guard's pid). Out of the group only for the
/// `kill` in between: a signal meant for the command's group meanwhile still reaches every member.
fn answer_check(fds: GuardFds, leads: Option<Pid>) {
    let empty = leads.is_some_and(|group| {
        if setpgid(Pid::from_raw(0), fds.home).is_err() {
            return false;
        }
        if killpg(group, None) == Err(Errno::ESRCH) {
            return true;
        }
        // Someone is left: lead them again. Failing, the last of them went meanwhile.
        setpgid(Pid::from_raw(0), group).is_err()
    });
    let answer = if empty { EMPTY } else { OCCUPIED };
    // SAFETY: one byte from a live stack buffer to a descriptor this process owns.
    unsafe { nix::libc::write(fds.answers, [answer].as_ptr().cast(), 1) };
}

/// anarchon died, or let the lease deadline come near, with the command still running: stop it
/// (SIGTERM unless anarchon sent it, SIGKILL when due), then exit.
fn stop_command(me: Pid, group: bool, orders: &Orders, kill_after_ns: u64) -> ! {
    let Orders {
        deadline,
        command,
        stopping,
    } = *orders;
    let stop = |sig: Signal| {
        let _ = match (group, command) {
            (true, _) => killpg(me, sig),
            (false, Some(pid)) => kill(pid, sig),
            (false, None) => Ok(()),
        };
    };
    // One SIGTERM: none when anarchon sent it already.
    let mut kill_at = match stopping {
        Some(kill_at) => kill_at,
        None => {
            stop(Signal::SIGTERM);
            BootTime::now().as_nanos().saturating_add(kill_after_ns)
        }
    };
    if let Some(d) = deadline {
        kill_at = kill_at.min(d);
    }
    loop {
        let gone = command.is_some_and(|pid| kill(pid, None) == Err(Errno::ESRCH));
        if gone || BootTime::now().as_nanos() >= kill_at {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // Whatever is left of the group (children that ignored SIGTERM) goes now; this ends the guard
    // too when it leads the group.
    stop(Signal::SIGKILL);
    exit(0)
}

/// Points 0, 1 and 2 at /dev/null and closes every other inherited descriptor (the Redis socket,
/// the caller's output pipes: a test or a shell waiting for their end-of-file must not wait for
/// the guard), keeping only the pipes to and from anarchon, which it returns, moved to
/// descriptors 3 and 4.
fn detach_descriptors(pipe: RawFd, answers: RawFd) -> (RawFd, RawFd) {
    // SAFETY: plain system calls on descriptors this process owns; the path is a static C string.
    unsafe {
        // Out of the way first (above 4), so that no dup2 below lands on one of them.
        let pipe_high = nix::libc::fcntl(pipe, nix::libc::F_DUPFD, 5);
        let answers_high = nix::libc::fcntl(answers, nix::libc::F_DUPFD, 5);
        if pipe_high < 0 || answers_high < 0 {
            // No descriptor to spare (a tiny RLIMIT_NOFILE): keep them where they are, and the
            // rest open, rather than lose the pipe whose end-of-file means anarchon is gone.
            return (pipe, answers);
        }
        nix::libc::close(pipe);
        nix::libc::close(answers);
        let null = nix::libc::open(c"/dev/null".as_ptr(), nix::libc::O_RDWR);
        if null >= 0 {
            for fd in 0..3 {
                if null != fd {
                    nix::libc::dup2(null, fd);
                }
            }
            if null > 2 {
                nix::libc::close(null);
            }
        }
        let (kept_pipe, kept_answers) = (3, 4);
        nix::libc::dup2(pipe_high, kept_pipe);
        nix::libc::dup2(answers_high, kept_answers);
        close_from(kept_answers + 1);
        (kept_pipe, kept_answers)
    }
}

#[cfg(target_os = "linux")]
unsafe fn close_from(first: RawFd) {
    // SAFETY: close_range only closes descriptors; on kernels without it, fall back to a loop.
    let done = unsafe {
        nix::libc::syscall(nix::libc::SYS_close_range, first as u32, u32::MAX, 0u32) == 0
    };
    if !done {
        for fd in first..4096 {
            // SAFETY: closing a descriptor number that may not be open is harmless.
            unsafe { nix::libc::close(fd) };
        }
    }
}

#[cfg(not(target_os = "linux"))]
unsafe fn close_from(first: RawFd) {
    for fd in first..4096 {
        // SAFETY: closing a descriptor number that may not be open is harmless.
        unsafe { nix::libc::close(fd) };
    }
}

fn exit(code: i32) -> ! {
    // SAFETY: _exit skips atexit handlers and stdio flushing, as a forked child must.
    unsafe { nix::libc::_exit(code) }
}
