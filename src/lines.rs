//! Standard output and error that never panic: every line the tool prints goes through here
//! (`crate::outln!`, `crate::errln!`). A closed pipe ends the output quietly, a full disk is
//! remembered for `main` to report. A leaf: it uses nothing of the crate, so every layer may print.

pub mod log;

pub use log::{
    Level, LogFormat, RunLabel, Settling, Stream, command_line, current_run, daemon_log,
    flush_daemon_log, in_run, note_attempt, note_slot, set_daemon_log, settling,
};

/// The first failure to write stdout that was not a closed pipe (a full disk, an I/O error), for
/// `main` to report once the command is done.
static WRITE_FAILURE: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Writes a line to stdout, as every command's output does (through [`outln!`](crate::outln)).
/// A reader that went away (a closed pipe, `| head`) is no error: the rest of the output has
/// nobody to read it, as with ripgrep or cat. Any other failure is remembered and reported by
/// `main` at the end ([`write_failure`]), never as a panic.
pub fn write_line(text: &str) {
    use std::io::Write;
    if let Some(kept) = CAPTURE.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        kept.stdout.extend(text.split('\n').map(str::to_string));
        return;
    }
    let mut out = std::io::stdout().lock();
    note_write_failure(writeln!(out, "{text}").and_then(|()| out.flush()));
}

/// The lines [`write_line`] and [`error_line`] keep instead of writing, while a capture is on
/// ([`capture`]).
static CAPTURE: std::sync::Mutex<Option<Captured>> = std::sync::Mutex::new(None);

/// What a round of a piped `--watch` printed: its stdout lines and its stderr lines.
#[derive(Debug, Default)]
pub struct Captured {
    pub stdout: Vec<String>,
    pub stderr: Vec<String>,
}

/// Runs `round` with its lines kept rather than written, and returns them with its result: a
/// piped `--watch` compares each round's lines with the last round's and prints only those that
/// changed. Lines written straight to stdout (JSON documents) are not kept.
pub async fn capture<T>(round: impl std::future::Future<Output = T>) -> (T, Captured) {
    *CAPTURE.lock().unwrap_or_else(|e| e.into_inner()) = Some(Captured::default());
    let result = round.await;
    let kept = CAPTURE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
        .unwrap_or_default();
    (result, kept)
}

/// Keeps why writing the output failed, for [`write_failure`]: a closed pipe (`| head`) is not a
/// failure, it just ends the output.
pub fn note_write_failure(written: std::io::Result<()>) {
    match written {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            STDOUT_CLOSED.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        Err(e) => {
            let _ = WRITE_FAILURE.set(e.to_string());
        }
        Ok(()) => {}
    }
}

/// Set once a write found stdout's reader gone (`| head -3`).
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether the output can go nowhere any more: its reader went away, or writing it failed. A live
/// view (`--watch`, `--follow`) ends then, as `tail -f | head` does, instead of running on.
pub fn output_gone() -> bool {
    STDOUT_CLOSED.load(std::sync::atomic::Ordering::Relaxed)
        || write_failure().is_some()
        || reader_gone()
}

/// Whether stdout's reader has gone, asked without writing (a live view may have nothing new to
/// print for a long time): poll(2) reports POLLERR on a pipe whose reading end is closed, POLLHUP
/// on a terminal that hung up. A file never reports either.
fn reader_gone() -> bool {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    use std::os::fd::AsFd;
    let stdout = std::io::stdout();
    let mut fds = [PollFd::new(stdout.as_fd(), PollFlags::empty())];
    matches!(poll(&mut fds, PollTimeout::ZERO), Ok(n) if n > 0)
        && fds[0]
            .revents()
            .is_some_and(|r| r.intersects(PollFlags::POLLERR | PollFlags::POLLHUP))
}

/// Why writing the output failed, if it did (a closed pipe does not count).
pub fn write_failure() -> Option<&'static str> {
    WRITE_FAILURE.get().map(String::as_str)
}

/// Bytes for standard output as they are (generated completions, man pages), under the same rule
/// as [`write_line`]: a closed pipe ends the output quietly, any other failure is kept for the exit.
pub fn write_raw(bytes: &[u8]) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    note_write_failure(out.write_all(bytes).and_then(|()| out.flush()));
}

/// A line on standard error that never panics: `crate::errln!` panics when stderr cannot be written
/// (`2>/dev/full`), and a message about a failure must not turn it into a crash (exit 101). When
/// stderr itself is gone there is nobody left to tell: the exit code says it.
pub fn error_line(text: &str) {
    use std::io::Write;
    if let Some(kept) = CAPTURE.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        kept.stderr.extend(text.split('\n').map(str::to_string));
        return;
    }
    // Under the daemon a message is one record of its log, however many lines it has.
    if log::daemon_log().is_some() {
        log::anarchon_message(text);
        return;
    }
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// `crate::errln!` that never panics (see [`error_line`]): every message on stderr goes through it.
#[macro_export]
macro_rules! errln {
    () => {
        $crate::lines::error_line("")
    };
    ($($arg:tt)*) => {
        $crate::lines::error_line(&format!($($arg)*))
    };
}

/// `println!` for command output: a closed pipe ends the output quietly, a full disk is reported.
#[macro_export]
macro_rules! outln {
    () => {
        $crate::lines::write_line("")
    };
    ($($arg:tt)*) => {
        $crate::lines::write_line(&format!($($arg)*))
    };
}

/// A spinner on stderr while anarchon waits (a backup standing by, a release, an overlap), only
/// when stderr is a terminal and not `hidden` (`--quiet`, `--json`); it draws itself every 120 ms.
pub fn stderr_spinner(hidden: bool) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    (!hidden && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        bar
    })
}
