//! The processes anarchon starts itself (commands and their guards), known by pid so that the
//! daemon's reaper can tell them from orphans.
//!
//! `anarchon cron` may be PID 1 in a container, and it makes itself a child subreaper otherwise:
//! the processes a command leaves behind (`cmd &`, a double fork) are re-parented to it when
//! their parent exits, and must be reaped by it or they stay `<defunct>` (tini's job). But tokio
//! waits for the commands it spawned by their pid, and the runner for its guards: a reaper that
//! waited for *any* child (`waitpid(-1)`) would take their exit status from them. So the reaper
//! waits only for zombies that are not in this registry, and a process is entered here under
//! the same lock as it is started: the reaper never sees one of ours before it is known.

use std::collections::HashSet;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// The pids of the processes anarchon started and waits for itself, and the process groups of
/// the commands running now (the daemon forwards signals to them).
#[derive(Default)]
pub struct Registry {
    pids: HashSet<i32>,
    groups: HashSet<i32>,
    /// Orphans reaped by a later look ([`reap_orphans`]), to be counted by the next call.
    reaped_late: Vec<i32>,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

fn registry() -> MutexGuard<'static, Option<Registry>> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts a process with the registry locked and enters its pid before unlocking.
pub fn spawn_tracked<T, E>(
    spawn: impl FnOnce() -> Result<T, E>,
    pid_of: impl Fn(&T) -> Option<u32>,
) -> Result<T, E> {
    let mut held = registry();
    let started = spawn()?;
    if let Some(pid) = pid_of(&started).and_then(|p| i32::try_from(p).ok()) {
        held.get_or_insert_default().pids.insert(pid);
    }
    Ok(started)
}

/// The pids known now (tests: every process started is forgotten once waited for).
#[cfg(test)]
pub(crate) fn tracked() -> Vec<i32> {
    registry()
        .as_ref()
        .map(|r| r.pids.iter().copied().collect())
        .unwrap_or_default()
}

/// Forgets a process once it has been waited for.
pub fn untrack(pid: u32) {
    if let (Some(r), Ok(pid)) = (registry().as_mut(), i32::try_from(pid)) {
        r.pids.remove(&pid);
    }
}

/// Notes a running command's process group (its guard's pid), for [`signal_groups`].
pub fn group_started(group: i32) {
    registry().get_or_insert_default().groups.insert(group);
}

/// The command of `group` has ended.
pub fn group_ended(group: i32) {
    if let Some(r) = registry().as_mut() {
        r.groups.remove(&group);
    }
}

/// Sends `signal` to the process group of every command running now (the daemon passes on what
/// is meant for them, as tini does). Returns how many groups there were.
pub fn signal_groups(signal: nix::sys::signal::Signal) -> usize {
    let groups: Vec<i32> = registry()
        .as_ref()
        .map(|r| r.groups.iter().copied().collect())
        .unwrap_or_default();
    for group in &groups {
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(*group), signal);
    }
    groups.len()
}

/// How many commands run now (their process groups).
pub fn signal_groups_count() -> usize {
    registry().as_ref().map_or(0, |r| r.groups.len())
}

/// A process as `/proc/PID/stat` shows it: what the runner and the reaper need of it.
#[derive(Debug, Clone, Copy)]
pub struct Process {
    pub pid: i32,
    /// Exited, and not waited for yet (`<defunct>`).
    pub zombie: bool,
    pub parent: i32,
    pub group: i32,
}

/// Every process of the machine (of its PID namespace), from /proc.
///
/// Costly on a busy machine (an open and a read per process): the runner asks its guard first
/// whether anything is left in a group, and the reaper asks the kernel whether any child has
/// exited at all; this is their answer when those cannot tell.
#[cfg(target_os = "linux")]
pub fn processes() -> Vec<Process> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut path = String::with_capacity(32);
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            use std::fmt::Write;
            path.clear();
            let _ = write!(path, "/proc/{pid}/stat");
            let (mut stat, mut buf) = (std::fs::File::open(&path).ok()?, [0u8; 1024]);
            // One read: the file is generated whole at the first (read_to_string would also
            // stat it and read again for the end).
            let n = std::io::Read::read(&mut stat, &mut buf).ok()?;
            parse_stat(pid, std::str::from_utf8(&buf[..n]).ok()?)
        })
        .collect()
}

/// A process from the text of its `/proc/PID/stat`.
fn parse_stat(pid: i32, stat: &str) -> Option<Process> {
    // The fields after the command name's closing parenthesis (the name itself may hold spaces
    // and parentheses): state, parent, process group.
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    let zombie = fields.next()? == "Z";
    let parent = fields.next()?.parse().ok()?;
    let group = fields.next()?.parse().ok()?;
    Some(Process {
        pid,
        zombie,
        parent,
        group,
    })
}

/// Elsewhere processes are not listed: what a command leaves behind runs on (documented).
#[cfg(not(target_os = "linux"))]
pub fn processes() -> Vec<Process> {
    Vec::new()
}

/// Reaps every child of this process that has exited and that anarchon does not wait for itself
/// (orphans re-parented to it). Returns the pids reaped (those reaped a moment later, see below,
/// with the next call's).
#[cfg(target_os = "linux")]
pub fn reap_orphans() -> Vec<i32> {
    // Held while looking and waiting: nothing of ours starts meanwhile without being known.
    let mut held = registry();
    let mut reaped = std::mem::take(&mut held.get_or_insert_default().reaped_late);
    if reap_in_sight(&held, &mut reaped) == Sight::Blocked {
        drop(held);
        look_again_soon();
        // (What /proc showed, when there was no runtime to look again from.)
        reaped.extend(std::mem::take(
            &mut registry().get_or_insert_default().reaped_late,
        ));
    }
    reaped
}

/// What the kernel showed of the exited children.
#[derive(PartialEq)]
enum Sight {
    /// None left that is not ours.
    Clear,
    /// One of ours, exited and not yet waited for by its owner, hides any others behind it.
    Blocked,
}

/// Reaps the exited children the kernel names one by one (waitid with WNOWAIT names one without
/// reaping it), up to the first of ours. Most SIGCHLDs find none left (the runner has waited
/// for its own already) or an orphan; no /proc read.
#[cfg(target_os = "linux")]
fn reap_in_sight(held: &Option<Registry>, reaped: &mut Vec<i32>) -> Sight {
    use nix::sys::wait::{WaitPidFlag, waitpid};
    let ours = |pid: i32| held.as_ref().is_some_and(|r| r.pids.contains(&pid));
    loop {
        match exited_child() {
            None => return Sight::Clear,
            Some(pid) if !ours(pid) && !reaped.contains(&pid) => {
                let _ = waitpid(nix::unistd::Pid::from_raw(pid), Some(WaitPidFlag::WNOHANG));
                reaped.push(pid);
            }
            Some(_) => return Sight::Blocked,
        }
    }
}

/// Whether a later look is under way ([`look_again_soon`]).
static LOOK_OWED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// One of ours hid the exited children behind it: its owner (a task of this same runtime, which
/// the caller holds up) waits for it in a moment, and the others are in sight then. Looks again
/// a few times over half a second, and only then reads /proc (the owner is stuck). Without a
/// runtime to look later from, reads /proc now.
#[cfg(target_os = "linux")]
fn look_again_soon() {
    use std::sync::atomic::Ordering;
    if LOOK_OWED.swap(true, Ordering::AcqRel) {
        return; // one is under way, and looks until nothing hides
    }
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        LOOK_OWED.store(false, Ordering::Release);
        reap_from_proc();
        return;
    };
    runtime.spawn(async {
        for attempt in 0..50u64 {
            tokio::time::sleep(Duration::from_millis(attempt.min(10) + 1)).await;
            // Cleared before looking: a SIGCHLD meanwhile that finds it blocked starts another.
            LOOK_OWED.store(false, Ordering::Release);
            let mut held = registry();
            let mut late = Vec::new();
            let sight = reap_in_sight(&held, &mut late);
            held.get_or_insert_default().reaped_late.extend(late);
            if sight == Sight::Clear || LOOK_OWED.swap(true, Ordering::AcqRel) {
                return;
            }
        }
        LOOK_OWED.store(false, Ordering::Release);
        reap_from_proc();
    });
}

/// Reaps the orphans /proc shows: every exited child of this process that is not ours.
#[cfg(target_os = "linux")]
fn reap_from_proc() {
    use nix::sys::wait::{WaitPidFlag, waitpid};
    let me = std::process::id() as i32;
    let mut held = registry();
    let ours = |pid: i32| held.as_ref().is_some_and(|r| r.pids.contains(&pid));
    let mut late = Vec::new();
    for p in processes() {
        if p.zombie && p.parent == me && !ours(p.pid) {
            let _ = waitpid(
                nix::unistd::Pid::from_raw(p.pid),
                Some(WaitPidFlag::WNOHANG),
            );
            late.push(p.pid);
        }
    }
    held.get_or_insert_default().reaped_late.extend(late);
}

/// A child of this process that has exited and is not waited for yet, left so (WNOWAIT).
#[cfg(target_os = "linux")]
fn exited_child() -> Option<i32> {
    // SAFETY: waitid writes into the zeroed siginfo it is given, nothing else.
    unsafe {
        let mut info: nix::libc::siginfo_t = std::mem::zeroed();
        let r = nix::libc::waitid(
            nix::libc::P_ALL,
            0,
            &mut info,
            nix::libc::WEXITED | nix::libc::WNOHANG | nix::libc::WNOWAIT,
        );
        let pid = info.si_pid();
        (r == 0 && pid > 0).then_some(pid)
    }
}

#[cfg(not(target_os = "linux"))]
pub fn reap_orphans() -> Vec<i32> {
    Vec::new()
}

/// Locks the registry for a start that is not a [`spawn_tracked`] (the guard's fork); enter its
/// pid with [`Held::track`] before dropping.
pub fn hold() -> Held {
    Held(registry())
}

/// The registry, locked ([`hold`]).
pub struct Held(MutexGuard<'static, Option<Registry>>);

impl Held {
    pub fn track(&mut self, pid: i32) {
        self.0.get_or_insert_default().pids.insert(pid);
    }
}
