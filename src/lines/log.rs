//! The daemon's log (`anarchon cron`): one record per message, with its time and level, labelled
//! with the run it belongs to (supercronic's habit), written as text or JSON through a queue of its
//! own. Every line a command prints and every message of anarchon's own under the daemon becomes a
//! [`Record`]; a run's events come here through the daemon's sink (`daemon::log`), the rest
//! through `errln!`. A leaf, as `lines` is: it uses nothing of the crate.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};

/// How `anarchon cron` writes its log, set once when it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// `2026-12-05T04:01:00.123Z INFO  [sync 2026-12-05T04:01:00Z #1] the line`.
    Text,
    /// One JSON object a line ([`Record`]; docs/schemas/cron-log.schema.json).
    Json,
}

/// How severe a record is. Routine notes (standing by, a slot another replica ran) are `debug`,
/// shown only with `cron -v`: on three replicas they were about half of all lines.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Debug,
    Info,
    Warn,
    Error,
}

impl Level {
    /// The word a text line carries, padded so that the messages line up.
    fn word(self) -> &'static str {
        match self {
            Level::Debug => "DEBUG",
            Level::Info => "INFO ",
            Level::Warn => "WARN ",
            Level::Error => "ERROR",
        }
    }
}

/// The daemon's log settings: its format, and whether debug records are written (`-v`).
#[derive(Debug, Clone, Copy)]
struct DaemonLog {
    format: LogFormat,
    verbose: bool,
}

static DAEMON_LOG: std::sync::OnceLock<DaemonLog> = std::sync::OnceLock::new();

/// Turns on the daemon's log for the rest of the process (`anarchon cron`): `verbose` writes the
/// debug records too.
pub fn set_daemon_log(format: LogFormat, verbose: bool) {
    let _ = DAEMON_LOG.set(DaemonLog { format, verbose });
}

/// Whether anarchon is running as the daemon: its messages are a log, not a person's terminal.
pub fn daemon_log() -> Option<LogFormat> {
    DAEMON_LOG.get().map(|d| d.format)
}

/// The run a line belongs to: its job, slot and, once claimed, attempt.
#[derive(Debug)]
pub struct RunLabel {
    pub job: String,
    /// The slot being taken now (a task that catches up missed runs takes several in turn).
    pub slot: AtomicI64,
    /// 0 until the run's claim is won.
    pub attempt: AtomicU32,
    /// How many pieces of store bookkeeping the task is in the middle of that no other replica
    /// would finish ([`Settling`]): the shutdown lets it finish them, as it lets a run end.
    settling: AtomicU32,
}

impl RunLabel {
    pub fn new(job: &str, slot: i64) -> Arc<RunLabel> {
        Arc::new(RunLabel {
            job: job.to_string(),
            slot: slot.into(),
            attempt: Default::default(),
            settling: Default::default(),
        })
    }

    /// Whether the task is in the middle of bookkeeping only it would finish ([`Settling`]).
    pub fn settling(&self) -> bool {
        self.settling.load(Ordering::Relaxed) > 0
    }

    /// The attempt this task won, 0 while it has won none (it may be claiming, standing by,
    /// waiting for an older run).
    pub fn attempt(&self) -> u32 {
        self.attempt.load(Ordering::Relaxed)
    }

    pub fn slot(&self) -> i64 {
        self.slot.load(Ordering::Relaxed)
    }
}

tokio::task_local! {
    /// The run the current task works for (`anarchon cron` sets it for each slot's task).
    static RUN: Arc<RunLabel>;
}

/// Runs `f` as the task of the run `label`: anarchon's messages from within it carry the label.
pub async fn in_run<F: std::future::Future>(label: Arc<RunLabel>, f: F) -> F::Output {
    RUN.scope(label, f).await
}

/// The run the current task works for, if any.
pub fn current_run() -> Option<Arc<RunLabel>> {
    RUN.try_with(|r| r.clone()).ok()
}

/// Notes the slot the current task takes now (no attempt won yet).
pub fn note_slot(slot: i64) {
    let _ = RUN.try_with(|r| {
        r.slot.store(slot, Ordering::Relaxed);
        r.attempt.store(0, Ordering::Relaxed);
    });
}

/// While held, the current task is settling store bookkeeping that no other replica would finish
/// if it were cut short (a renamed job's claims under its old names, ended once its slot is
/// decided: `scheduler::lineage`): the daemon's shutdown waits for it as for a run in progress,
/// instead of ending the task at once (a SIGTERM between such a claim and its end left the claim
/// in progress for an hour: the mixed soak, format 1, seed 24).
#[must_use]
pub struct Settling(Option<Arc<RunLabel>>);

/// Marks the current task as settling until the returned guard is dropped ([`Settling`]).
pub fn settling() -> Settling {
    let run = current_run();
    if let Some(r) = &run {
        r.settling.fetch_add(1, Ordering::Relaxed);
    }
    Settling(run)
}

impl Drop for Settling {
    fn drop(&mut self) {
        if let Some(r) = &self.0 {
            r.settling.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// Notes the attempt the current task's run was won as (the shutdown hands over the runs of the
/// tasks that won one).
pub fn note_attempt(attempt: u32) {
    let _ = RUN.try_with(|r| r.attempt.store(attempt, Ordering::Relaxed));
}

/// Which stream a record came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Stream {
    /// A line of the command's stdout (written to the daemon's stdout).
    Stdout,
    /// A line of the command's stderr.
    Stderr,
    /// anarchon's own message.
    Anarchon,
}

/// One record of the daemon's log: a line of a command's output, or a message of anarchon's own
/// (a run's event, the daemon's start, a reload, the shutdown). A message of several lines (a
/// reload's errors) is one record.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct Record {
    /// When it was written, RFC 3339 in UTC to the millisecond.
    pub time: String,
    pub level: Level,
    /// The job it belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub job: Option<String>,
    /// The run's slot, ms since the epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slot: Option<i64>,
    /// The slot, RFC 3339 in UTC.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slot_time: Option<String>,
    /// The attempt this replica runs, once its claim is won.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    pub stream: Stream,
    /// What happened, for anarchon's events of a run (`started`, `finished`, `failed`,
    /// `standing_by`, `took_over`, `handed_over`, `skipped`, ...; docs/guide.md, "Logs"); `output`
    /// for a line of the command's; absent for the daemon's other messages.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// The command's exit code, when a run's command ended (128+N for signal N, 124 for
    /// --timeout).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// How long the command ran, in seconds (to the millisecond), when it ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration: Option<f64>,
    /// The message, without the `anarchon:` prefix a terminal shows.
    pub message: String,
}

impl Record {
    /// A record of now at `level`, labelled with `label` (its job, slot and attempt won).
    pub fn new(level: Level, stream: Stream, label: Option<&RunLabel>, message: &str) -> Record {
        let attempt = label.map(RunLabel::attempt).filter(|a| *a > 0);
        Record {
            time: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            level,
            job: label.map(|l| l.job.clone()),
            slot: label.map(RunLabel::slot),
            slot_time: label.map(|l| slot_time(l.slot())),
            attempt,
            stream,
            event: None,
            exit_code: None,
            duration: None,
            message: message.to_string(),
        }
    }

    /// Names the run it belongs to (an event says which, a caught-up slot being another than its
    /// task's label).
    pub fn for_run(mut self, job: &str, slot: i64, attempt: Option<u32>) -> Record {
        self.job = Some(job.to_string());
        self.slot = Some(slot);
        self.slot_time = Some(slot_time(slot));
        self.attempt = attempt;
        self
    }

    /// The line written for it: one JSON object, or a text line whose continuation lines are
    /// indented (a collector's multi-line rule joins them to the first).
    fn render(&self, format: LogFormat) -> String {
        match format {
            LogFormat::Json => serde_json::to_string(self).unwrap_or_default(),
            LogFormat::Text => {
                let mut line = format!("{} {} ", self.time, self.level.word());
                match (&self.job, &self.slot_time, self.attempt) {
                    (Some(job), Some(at), Some(n)) => line.push_str(&format!("[{job} {at} #{n}] ")),
                    (Some(job), Some(at), None) => line.push_str(&format!("[{job} {at}] ")),
                    _ => {}
                }
                let mut lines = self.message.lines();
                line.push_str(lines.next().unwrap_or_default());
                for more in lines {
                    line.push_str("\n    ");
                    line.push_str(more);
                }
                line
            }
        }
    }
}

fn slot_time(slot: i64) -> String {
    chrono::DateTime::from_timestamp_millis(slot)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true))
        .unwrap_or_default()
}

/// Writes `record` to the daemon's log (stdout for a command's stdout, stderr for the rest),
/// unless it is a debug record and the daemon is not verbose. Nothing outside the daemon.
pub fn log_record(record: Record) {
    let Some(log) = DAEMON_LOG.get() else {
        return;
    };
    if record.level == Level::Debug && !log.verbose {
        return;
    }
    let to_stdout = record.stream == Stream::Stdout;
    log_sink().send(to_stdout, record.render(log.format));
}

/// A message of anarchon's own that is no run event (`errln!` under the daemon): its level read
/// from its words (`error:`, `warning:`), the `anarchon:` prefix dropped (the log is anarchon's),
/// labelled with the task's run if any.
pub fn anarchon_message(text: &str) {
    let text = text.trim_end_matches(['\n', '\r']);
    let text = text.strip_prefix("anarchon: ").unwrap_or(text);
    // The level says what `error:` and `warning:` said at a terminal.
    let (level, text) = if let Some(rest) = text.strip_prefix("error: ") {
        (Level::Error, rest)
    } else if let Some(rest) = text.strip_prefix("warning: ") {
        (Level::Warn, rest)
    } else {
        (Level::Info, text)
    };
    let label = current_run();
    log_record(Record::new(level, Stream::Anarchon, label.as_deref(), text));
}

/// One line of a command's output, labelled with its run, to the daemon's stdout (the command's
/// stdout) or stderr (its stderr): a record of its own, event `output`.
pub fn command_line(label: &RunLabel, stream: Stream, line: &[u8]) {
    let text = String::from_utf8_lossy(line);
    let text = text.trim_end_matches(['\n', '\r']);
    let mut record = Record::new(Level::Info, stream, Some(label), text);
    record.event = Some("output".to_string());
    if DAEMON_LOG.get().is_none() {
        // A supervised command outside the daemon (a test's): its lines are still labelled.
        log_sink().send(stream == Stream::Stdout, record.render(LogFormat::Text));
        return;
    }
    log_record(record);
}

/// The daemon's lines go out through a thread of their own: a write to a pipe whose reader stalls
/// (a log shipper that stopped reading, `| less` left open) blocks until it reads, and done on
/// the daemon's one thread it would stop everything: claims, heartbeats, reaping, signals. Lines
/// wait in a bounded queue instead; when it is full they are dropped, counted, and the count is
/// said once the reader reads again. A command's output is the same: it is never held up by it.
struct LogSink {
    queue: std::sync::mpsc::SyncSender<Queued>,
    dropped: Arc<std::sync::atomic::AtomicU64>,
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
        let (queue, lines) = std::sync::mpsc::sync_channel::<Queued>(LOG_QUEUE);
        let dropped = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let counted = dropped.clone();
        std::thread::spawn(move || write_lines(lines, &counted));
        LogSink { queue, dropped }
    }

    fn send(&self, to_stdout: bool, line: String) {
        if self
            .queue
            .try_send(Queued::Line { to_stdout, line })
            .is_err()
        {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The writer thread: each queued line to stdout or stderr, after a record of how many were
/// dropped since the last one written, if any.
fn write_lines(lines: std::sync::mpsc::Receiver<Queued>, dropped: &std::sync::atomic::AtomicU64) {
    use std::io::Write;
    for item in lines {
        let (to_stdout, line) = match item {
            Queued::Line { to_stdout, line } => (to_stdout, line),
            Queued::Flushed(done) => {
                let _ = done.try_send(());
                continue;
            }
        };
        let lost = dropped.swap(0, Ordering::Relaxed);
        if lost > 0 {
            let said = format!(
                "{lost} log line(s) dropped: the reader of this process's output was not keeping up"
            );
            let record = Record::new(Level::Warn, Stream::Anarchon, None, &said);
            let format = daemon_log().unwrap_or(LogFormat::Text);
            let _ = writeln!(std::io::stderr().lock(), "{}", record.render(format));
        }
        if to_stdout {
            let mut out = std::io::stdout().lock();
            super::note_write_failure(writeln!(out, "{line}").and_then(|()| out.flush()));
        } else {
            let _ = writeln!(std::io::stderr().lock(), "{line}");
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_task_is_settling_while_a_guard_lives_and_only_its_own_run_says_so() {
        let label = RunLabel::new("nightly", 60_000);
        let seen = label.clone();
        in_run(label, async move {
            assert!(!seen.settling());
            let outer = settling();
            let inner = settling();
            drop(outer);
            assert!(seen.settling(), "one guard still held");
            drop(inner);
            assert!(!seen.settling());
        })
        .await;
        // Outside a run's task: nothing to mark, and nothing breaks.
        drop(settling());
    }

    #[test]
    fn a_text_record_has_time_level_and_label_and_indents_its_continuation_lines() {
        let label = RunLabel::new("sync", 1_796_444_400_000);
        label.attempt.store(2, Ordering::Relaxed);
        let mut r = Record::new(Level::Error, Stream::Anarchon, Some(&label), "one\n  two");
        r.time = "2026-12-05T04:20:00.123Z".into();
        assert_eq!(
            r.render(LogFormat::Text),
            "2026-12-05T04:20:00.123Z ERROR [sync 2026-12-05T04:20:00Z #2] one\n      two"
        );
        let json: serde_json::Value = serde_json::from_str(&r.render(LogFormat::Json)).unwrap();
        assert_eq!(json["level"], "error");
        assert_eq!(json["attempt"], 2);
        assert_eq!(json["message"], "one\n  two");
    }
}
