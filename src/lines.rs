//! Standard output and error that never panic: every line the tool prints goes through here
//! (`crate::outln!`, `crate::errln!`). A closed pipe ends the output quietly, a full disk is
//! remembered for `main` to report. A leaf: it uses nothing of the crate, so every layer may print.

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
    if let Some(format) = DAEMON_LOG.get() {
        let label = current_run();
        for line in text.lines() {
            write_labelled(*format, label.as_deref(), Stream::Anarchon, line.as_bytes());
        }
        return;
    }
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// How `anarchon cron` writes its lines, set once when it starts: each line a command prints and
/// each message of anarchon's own, labelled with the run it belongs to (supercronic's habit), so
/// that the output of many jobs running at once in one process can be told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// `[sync 2026-12-05T04:01:00Z #1] the line`; anarchon's own lines without a run as they are.
    Text,
    /// One JSON object a line: time, job, slot, slot_time, attempt, stream, message.
    Json,
}

static DAEMON_LOG: std::sync::OnceLock<LogFormat> = std::sync::OnceLock::new();

/// Turns on the daemon's labelled lines for the rest of the process (`anarchon cron`).
pub fn set_daemon_log(format: LogFormat) {
    let _ = DAEMON_LOG.set(format);
}

/// The run a line belongs to: its job, slot and, once claimed, attempt.
#[derive(Debug)]
pub struct RunLabel {
    pub job: String,
    /// The slot being taken now (a task that catches up missed runs takes several in turn).
    pub slot: std::sync::atomic::AtomicI64,
    /// 0 until the run's claim is won.
    pub attempt: std::sync::atomic::AtomicU32,
}

impl RunLabel {
    pub fn new(job: &str, slot: i64) -> std::sync::Arc<RunLabel> {
        std::sync::Arc::new(RunLabel {
            job: job.to_string(),
            slot: slot.into(),
            attempt: Default::default(),
        })
    }

    /// The attempt this task won, 0 while it has won none (it may be claiming, standing by,
    /// waiting for an older run).
    pub fn attempt(&self) -> u32 {
        self.attempt.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn slot(&self) -> i64 {
        self.slot.load(std::sync::atomic::Ordering::Relaxed)
    }
}

tokio::task_local! {
    /// The run the current task works for (`anarchon cron` sets it for each slot's task).
    static RUN: std::sync::Arc<RunLabel>;
}

/// Runs `f` as the task of the run `label`: anarchon's messages from within it carry the label.
pub async fn in_run<F: std::future::Future>(label: std::sync::Arc<RunLabel>, f: F) -> F::Output {
    RUN.scope(label, f).await
}

/// The run the current task works for, if any.
pub fn current_run() -> Option<std::sync::Arc<RunLabel>> {
    RUN.try_with(|r| r.clone()).ok()
}

/// Notes the slot the current task takes now (no attempt won yet).
pub fn note_slot(slot: i64) {
    let _ = RUN.try_with(|r| {
        r.slot.store(slot, std::sync::atomic::Ordering::Relaxed);
        r.attempt.store(0, std::sync::atomic::Ordering::Relaxed);
    });
}

/// Notes the attempt the current task's run was won as.
pub fn note_attempt(attempt: u32) {
    let _ = RUN.try_with(|r| {
        r.attempt
            .store(attempt, std::sync::atomic::Ordering::Relaxed)
    });
}

/// Whether anarchon is running as the daemon: its messages are a log (every event said), not a
/// person's terminal.
pub fn daemon_log() -> Option<LogFormat> {
    DAEMON_LOG.get().copied()
}

/// Which stream a labelled line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
    /// anarchon's own message.
    Anarchon,
}

impl Stream {
    fn name(self) -> &'static str {
        match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
            Stream::Anarchon => "anarchon",
        }
    }
}

/// One line of a command's output, labelled with its run, to the daemon's stdout (the command's
/// stdout) or stderr (its stderr), in the daemon's log format.
pub fn command_line(label: &RunLabel, stream: Stream, line: &[u8]) {
    write_labelled(
        daemon_log().unwrap_or(LogFormat::Text),
        Some(label),
        stream,
        line,
    );
}

fn write_labelled(format: LogFormat, label: Option<&RunLabel>, stream: Stream, line: &[u8]) {
    let text = String::from_utf8_lossy(line);
    let text = text.trim_end_matches(['\n', '\r']);
    let slot_time = |slot: i64| {
        chrono::DateTime::from_timestamp_millis(slot)
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true))
            .unwrap_or_default()
    };
    let attempt = label.map_or(0, RunLabel::attempt);
    let rendered = match format {
        LogFormat::Json => {
            let mut object = serde_json::Map::new();
            object.insert(
                "time".into(),
                chrono::Utc::now()
                    .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
                    .into(),
            );
            if let Some(l) = label {
                object.insert("job".into(), l.job.clone().into());
                object.insert("slot".into(), l.slot().into());
                object.insert("slot_time".into(), slot_time(l.slot()).into());
                if attempt > 0 {
                    object.insert("attempt".into(), attempt.into());
                }
            }
            object.insert("stream".into(), stream.name().into());
            object.insert("message".into(), text.into());
            serde_json::Value::Object(object).to_string()
        }
        LogFormat::Text => match label {
            Some(l) if attempt > 0 => {
                format!("[{} {} #{attempt}] {text}", l.job, slot_time(l.slot()))
            }
            Some(l) => format!("[{} {}] {text}", l.job, slot_time(l.slot())),
            None => text.to_string(),
        },
    };
    log_sink().send(stream == Stream::Stdout, rendered);
}

/// The daemon's lines go out through a thread of their own: a write to a pipe whose reader stalls
/// (a log shipper that stopped reading, `| less` left open) blocks until it reads, and done on
/// the daemon's one thread it would stop everything: claims, heartbeats, reaping, signals. Lines
/// wait in a bounded queue instead; when it is full they are dropped, counted, and the count is
/// said once the reader reads again. A command's output is the same: it is never held up by it.
struct LogSink {
    queue: std::sync::mpsc::SyncSender<Queued>,
    dropped: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

/// What the writer thread is given: a line (for stdout or stderr), or a flush to acknowledge.
enum Queued {
    Line { to_stdout: bool, line: String },
    Flushed(std::sync::mpsc::SyncSender<()>),
}

/// How many lines may wait for a slow reader before lines are dropped.
const LOG_QUEUE: usize = 16_384;

impl LogSink {
    fn start() -> LogSink {
        use std::io::Write;
        let (queue, lines) = std::sync::mpsc::sync_channel::<Queued>(LOG_QUEUE);
        let dropped = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let counted = dropped.clone();
        std::thread::spawn(move || {
            for item in lines {
                let (to_stdout, line) = match item {
                    Queued::Line { to_stdout, line } => (to_stdout, line),
                    Queued::Flushed(done) => {
                        let _ = done.try_send(());
                        continue;
                    }
                };
                let lost = counted.swap(0, std::sync::atomic::Ordering::Relaxed);
                if lost > 0 {
                    let _ = writeln!(
                        std::io::stderr().lock(),
                        "anarchon: {lost} log line(s) dropped: the reader of this process's output was not keeping up"
                    );
                }
                if to_stdout {
                    let mut out = std::io::stdout().lock();
                    note_write_failure(writeln!(out, "{line}").and_then(|()| out.flush()));
                } else {
                    let _ = writeln!(std::io::stderr().lock(), "{line}");
                }
            }
        });
        LogSink { queue, dropped }
    }

    fn send(&self, to_stdout: bool, line: String) {
        if self
            .queue
            .try_send(Queued::Line { to_stdout, line })
            .is_err()
        {
            self.dropped
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

fn log_sink() -> &'static LogSink {
    static SINK: std::sync::OnceLock<LogSink> = std::sync::OnceLock::new();
    SINK.get_or_init(LogSink::start)
}

/// Waits (up to `limit`) until the daemon's queued lines are written: its last words before it
/// exits must not be lost with the queue. A reader that does not read by then loses them.
pub fn flush_daemon_log(limit: std::time::Duration) {
    if DAEMON_LOG.get().is_none() {
        return;
    }
    let until = std::time::Instant::now() + limit;
    let (done, acknowledged) = std::sync::mpsc::sync_channel::<()>(1);
    let mut flush = Queued::Flushed(done);
    loop {
        match log_sink().queue.try_send(flush) {
            Ok(()) => break,
            Err(std::sync::mpsc::TrySendError::Full(back)) if std::time::Instant::now() < until => {
                flush = back;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            Err(_) => return,
        }
    }
    let _ = acknowledged.recv_timeout(until.saturating_duration_since(std::time::Instant::now()));
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
