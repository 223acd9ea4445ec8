//! The guards' spawner: the daemon's guards forked from a small process, not from the daemon.
//!
//! A guard forked from `anarchon cron` copies the daemon's page tables (tens of MiB of heap with
//! many jobs) and makes every page the daemon writes next a copy-on-write fault while the guard
//! lives: perf of a daemon running 100 jobs a second put 13% of its CPU in the fork and 25% in
//! the faults after it. So the daemon forks one spawner at its start, while it is small and has
//! written little, and asks it for each run's guard:
//!
//! ```text
//! daemon ──socket (SOCK_SEQPACKET): settings + the guard's two pipe ends (SCM_RIGHTS)──► spawner
//!    │                                                                                     │ fork
//!    └──────────── the same pipes as a guard forked by the daemon itself ──────────► guard (leads group G)
//! ```
//!
//! The guard is the one [`super::Guard::start`] forks, running the same code over the same pipes:
//! it leads the command's group and reads the pipe whose write end only the daemon holds, so it
//! stops the command when the daemon is gone (kill -9 included) exactly as before. The spawner is
//! its parent and reaps it (SIGCHLD ignored: the kernel reaps, no zombie); it leaves when the
//! daemon's end of the socket closes, and is killed when the daemon dies (its death signal, for a
//! spawner stopped meanwhile). When it cannot be asked or gives no guard within 100 ms (gone,
//! stopped, starved), the daemon kills it and forks every guard itself from then on, as `run`
//! always does; a command never starts past its lease's time to be stopped, however late its
//! guard came (`runner::child`).
//!
//! The spawner is a fork of a process that may have threads: until it exits it makes only
//! async-signal-safe calls, into buffers on its stack.

use std::io::IoSlice;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use nix::sys::socket::{
    AddressFamily, ControlMessage, MsgFlags, SockFlag, SockType, sendmsg, socketpair,
};
use nix::unistd::{ForkResult, Pid, fork};

/// The longest title a request carries (the rest of the room is cleared): `anarchon guard JOB
/// SLOT` fits many times.
const MAX_TITLE: usize = 1024;

/// A request's fixed part: group (1), kill-after ns (8), grace ns (8), title address (8), room
/// (8), title length (2).
const HEADER: usize = 1 + 8 + 8 + 8 + 8 + 2;

/// The daemon's end of the running spawner.
struct Spawner {
    socket: Mutex<OwnedFd>,
    pid: Pid,
    /// Set once it failed to give a guard in time (stopped, starved, gone): it is killed and the
    /// daemon forks every guard itself from then on, so that a stopped spawner costs one wait,
    /// not one per run (the daemon's one thread waits with it).
    given_up: AtomicBool,
}

static SPAWNER: OnceLock<Spawner> = OnceLock::new();

/// Starts the spawner (once per process; the daemon's start). An error leaves guards forked by
/// the daemon itself.
pub fn start() -> std::io::Result<()> {
    if SPAWNER.get().is_some() {
        return Ok(());
    }
    let (ours, theirs) = socketpair(
        AddressFamily::Unix,
        SockType::SeqPacket,
        None,
        SockFlag::SOCK_CLOEXEC,
    )?;
    // Its line in `ps`, so that it never reads as a second daemon (prepared here: the child may
    // not allocate).
    let title = crate::runner::proctitle::Title::prepare("anarchon guard-spawner");
    // Not among the children the daemon waits for itself: nobody waits for the spawner, so the
    // daemon's reaper takes it as an orphan if it ever exits first (killed).
    let daemon = nix::unistd::getpid();
    // SAFETY: the child branch makes only async-signal-safe calls and never returns.
    let forked = unsafe { fork() }?;
    match forked {
        ForkResult::Child => {
            if let Some(title) = &title {
                title.apply();
            }
            spawner_main(theirs.as_raw_fd(), ours.as_raw_fd(), daemon)
        }
        ForkResult::Parent { child } => {
            drop(theirs);
            let _ = SPAWNER.set(Spawner {
                socket: Mutex::new(ours),
                pid: child,
                given_up: AtomicBool::new(false),
            });
            Ok(())
        }
    }
}

/// The spawner's pid, if it runs and is asked for guards.
pub fn pid() -> Option<u32> {
    SPAWNER
        .get()
        .filter(|s| !s.given_up.load(Ordering::Relaxed))
        .map(|s| s.pid.as_raw() as u32)
}

/// The spawner failed to give a guard in time (`why`): kill it (a stopped process too; the
/// requests it had not read die with it, so no late guard comes of them) and fork every guard in
/// the daemon from now on. Said once.
pub(super) fn give_up(why: &std::io::Error) {
    let Some(spawner) = SPAWNER.get() else {
        return;
    };
    if spawner.given_up.swap(true, Ordering::Relaxed) {
        return;
    }
    let _ = nix::sys::signal::kill(spawner.pid, nix::sys::signal::Signal::SIGKILL);
    crate::errln!(
        "warning: the guard spawner gave no guard in time ({why}); it was stopped, and each run's guard is forked by the daemon from now on"
    );
}

/// What a guard is started with (see [`super::Guard::start`]).
pub(super) struct Request<'a> {
    pub group: bool,
    pub kill_after_ns: u64,
    pub grace_ns: u64,
    /// The guard's title: where it goes, its text, its room ([`crate::runner::proctitle`]).
    pub title: Option<(usize, &'a [u8], usize)>,
}

/// Asks the spawner to fork a guard over these two pipe ends (the guard's: it reads orders from
/// `orders`, writes its pid and answers to `answers`). Err when there is no spawner or it cannot
/// take the request now; then no guard comes of it.
pub(super) fn ask(request: &Request, orders: &OwnedFd, answers: &OwnedFd) -> std::io::Result<()> {
    let Some(spawner) = SPAWNER.get() else {
        return Err(std::io::Error::other("no guard spawner"));
    };
    let mut message = Vec::with_capacity(HEADER + MAX_TITLE);
    message.push(u8::from(request.group));
    message.extend_from_slice(&request.kill_after_ns.to_le_bytes());
    message.extend_from_slice(&request.grace_ns.to_le_bytes());
    let (at, text, room) = request.title.unwrap_or((0, &[], 0));
    let text = &text[..text.len().min(MAX_TITLE)];
    message.extend_from_slice(&(at as u64).to_le_bytes());
    message.extend_from_slice(&(room as u64).to_le_bytes());
    message.extend_from_slice(&(text.len() as u16).to_le_bytes());
    message.extend_from_slice(text);
    let fds = [orders.as_raw_fd(), answers.as_raw_fd()];
    let socket = spawner.socket.lock().unwrap_or_else(|e| e.into_inner());
    // Never blocks: a spawner that does not read (stopped) must not stop the daemon; the guard is
    // then forked here.
    let sent = sendmsg::<()>(
        socket.as_raw_fd(),
        &[IoSlice::new(&message)],
        &[ControlMessage::ScmRights(&fds)],
        MsgFlags::MSG_DONTWAIT | MsgFlags::MSG_NOSIGNAL,
        None,
    )?;
    if sent != message.len() {
        return Err(std::io::Error::other(
            "the guard spawner took part of a request",
        ));
    }
    Ok(())
}

/// The spawner process: forks a guard per request until the daemon's end of the socket closes.
fn spawner_main(socket: RawFd, daemons_end: RawFd, daemon: Pid) -> ! {
    // SAFETY: plain system calls on descriptors this process owns.
    unsafe { nix::libc::close(daemons_end) };
    // Killed when the daemon goes, even while stopped (SIGSTOP): a stopped spawner would not read
    // the end of its socket and would stay behind for ever. Its guards are not: a fork clears the
    // death signal, and they outlive the daemon to stop its commands.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    // SAFETY: prctl with an integer argument; getppid has no failure.
    unsafe {
        nix::libc::prctl(nix::libc::PR_SET_PDEATHSIG, nix::libc::SIGKILL);
        if nix::libc::getppid() != daemon.as_raw() {
            super::exit(0); // the daemon died before the death signal was set
        }
    }
    let socket = become_spawner(socket);
    loop {
        let mut message = [0u8; HEADER + MAX_TITLE];
        let Some((length, fds)) = receive(socket, &mut message) else {
            super::exit(0); // the daemon is gone
        };
        let Some([orders, answers]) = fds else {
            continue; // not a request: nothing to fork for
        };
        if length >= HEADER {
            fork_guard(socket, &message[..length], orders, answers);
        }
        // The guard has its own copies; the spawner keeps none.
        // SAFETY: closing descriptors received with this request.
        unsafe {
            nix::libc::close(orders);
            nix::libc::close(answers);
        }
    }
}

/// The spawner's setup: the signals a daemon's group receives ignored (it leaves when the daemon
/// does), children reaped by the kernel, 0-2 on /dev/null and every descriptor but its socket
/// closed (the daemon's Redis connections and listening socket are not its to keep open).
fn become_spawner(socket: RawFd) -> RawFd {
    // Ignored SIGCHLD besides: exited guards are reaped by the kernel, none waits as a zombie.
    let sigchld = [nix::sys::signal::Signal::SIGCHLD];
    super::ignore(super::SIGNALS_OF_THE_GROUP.into_iter().chain(sigchld));
    #[cfg(any(target_os = "linux", target_os = "android"))]
    // SAFETY: PR_SET_NAME with a NUL-terminated string that outlives the call.
    unsafe {
        nix::libc::prctl(nix::libc::PR_SET_NAME, c"anarchon-spawn".as_ptr());
    }
    // The socket at 3, everything else closed (as a guard's descriptors are).
    let (kept, copy) = super::detach_descriptors(socket, socket);
    if copy != kept {
        // SAFETY: the second copy detach_descriptors made of the one socket.
        unsafe { nix::libc::close(copy) };
    }
    kept
}

/// One request: its length and the two descriptors it carried (None: another number of them).
/// None at the end of the stream (the daemon closed its end) or on an error other than EINTR.
fn receive(socket: RawFd, message: &mut [u8]) -> Option<(usize, Option<[RawFd; 2]>)> {
    // Room for one SCM_RIGHTS message of two descriptors, aligned for cmsghdr.
    let mut control = [0u64; 8];
    loop {
        let mut iov = nix::libc::iovec {
            iov_base: message.as_mut_ptr().cast(),
            iov_len: message.len(),
        };
        // SAFETY: an all-zero msghdr is valid; its pointers are set to live stack buffers below.
        let mut header: nix::libc::msghdr = unsafe { std::mem::zeroed() };
        header.msg_iov = &mut iov;
        header.msg_iovlen = 1;
        header.msg_control = control.as_mut_ptr().cast();
        header.msg_controllen = std::mem::size_of_val(&control) as _;
        // SAFETY: recvmsg into the buffers described by `header`.
        let n = unsafe { nix::libc::recvmsg(socket, &mut header, nix::libc::MSG_CMSG_CLOEXEC) };
        if n < 0 && nix::errno::Errno::last() == nix::errno::Errno::EINTR {
            continue;
        }
        if n <= 0 {
            return None;
        }
        // SAFETY: walking the control messages the kernel wrote into `control`, via CMSG_*.
        let fds = unsafe { rights(&header) };
        return Some((n as usize, fds));
    }
}

/// The two descriptors of the request's SCM_RIGHTS message; any other number is closed.
///
/// # Safety
/// `header` is a msghdr filled by recvmsg.
unsafe fn rights(header: &nix::libc::msghdr) -> Option<[RawFd; 2]> {
    let mut found = None;
    // SAFETY: CMSG_FIRSTHDR/NXTHDR/DATA over the control buffer recvmsg filled.
    unsafe {
        let mut cmsg = nix::libc::CMSG_FIRSTHDR(header);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == nix::libc::SOL_SOCKET
                && (*cmsg).cmsg_type == nix::libc::SCM_RIGHTS
            {
                let data = nix::libc::CMSG_DATA(cmsg).cast::<RawFd>();
                let count = ((*cmsg).cmsg_len as usize - (data as usize - cmsg as usize))
                    / std::mem::size_of::<RawFd>();
                if count == 2 && found.is_none() {
                    found = Some([data.read_unaligned(), data.add(1).read_unaligned()]);
                } else {
                    for i in 0..count {
                        nix::libc::close(data.add(i).read_unaligned());
                    }
                }
            }
            cmsg = nix::libc::CMSG_NXTHDR(header, cmsg);
        }
    }
    found
}

/// Forks the guard a request asks for; the guard runs [`super::guard_main`] as a guard forked by
/// the daemon does, and sends the daemon its pid itself.
fn fork_guard(socket: RawFd, request: &[u8], orders: RawFd, answers: RawFd) {
    let u64_at = |i: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&request[i..i + 8]);
        u64::from_le_bytes(b)
    };
    let group = request[0] != 0;
    let (kill_after_ns, grace_ns) = (u64_at(1), u64_at(9));
    let (at, room) = (u64_at(17) as usize, u64_at(25) as usize);
    let text_len = usize::from(u16::from_le_bytes([request[33], request[34]]));
    let text = &request[HEADER..request.len().min(HEADER + text_len)];
    // A failed fork (-1) needs nothing here: the request's descriptors close, and the daemon
    // reads end-of-file where it waits for the guard's pid, and forks the guard itself.
    // SAFETY: the child branch makes only async-signal-safe calls and never returns.
    if unsafe { nix::libc::fork() } == 0 {
        if at != 0 && room > 0 {
            // SAFETY: `at..at + room` is the argument memory the daemon found in itself before
            // forking the spawner; this process is a fork of that one.
            unsafe { crate::runner::proctitle::Title::apply_parts(at, text, room) };
        }
        // SAFETY: the spawner's socket is no guard's business.
        unsafe { nix::libc::close(socket) };
        super::guard_main(orders, -1, -1, answers, group, kill_after_ns, grace_ns)
    }
}
