//! `run --live-output`: the command's output, line by line, into its attempt's output stream
//! (`crate::store::output`), so that `anarchon logs -f JOB` follows it from any host.
//!
//! The command's streams are copied as before (to the terminal, the stderr tail); each line is
//! also handed to a [`LiveSink`], a bounded queue, and one task ([`publish`]) writes them in
//! batches: what is queued when the first line arrives, for up to [`BATCH_WAIT`], in one
//! pipeline. A server that is slow or gone never slows the command down: a full queue drops the
//! line (counted, said at the end), and a write that fails is said once and the rest is dropped.
//! At most [`LiveOutput::lines`] lines are sent per attempt, then a `cut` entry: the server's cost
//! is bounded by the flag, whatever the command prints.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::mpsc;

use crate::connection::Connection;
use crate::store::output::{self, Entry};

/// What `--live-output` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveOutput {
    /// The most lines sent per attempt (`--live-output-lines`).
    pub lines: u64,
}

/// How long a batch waits for more lines after its first.
pub const BATCH_WAIT: Duration = Duration::from_millis(200);

/// Lines queued between the command and the writer; more are dropped (and counted).
const QUEUE: usize = 4096;

/// The most lines in one pipeline.
const BATCH: usize = 256;

/// The longest line sent whole; a longer one is cut there (with `…`).
pub const LONGEST_LINE: usize = 4096;

/// One line of the command's output.
#[derive(Debug)]
pub struct Line {
    pub stderr: bool,
    pub text: String,
}

/// Where the command's copiers hand each line.
#[derive(Debug, Clone)]
pub struct LiveSink {
    queue: mpsc::Sender<Line>,
    dropped: Arc<AtomicU64>,
}

impl LiveSink {
    /// Queues one line (its newline, if any, left off); never waits.
    pub fn line(&self, stderr: bool, bytes: &[u8]) {
        let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        let mut text =
            String::from_utf8_lossy(&bytes[..bytes.len().min(LONGEST_LINE)]).into_owned();
        if bytes.len() > LONGEST_LINE {
            text.push('…');
        }
        if self.queue.try_send(Line { stderr, text }).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Splits a stream's bytes into lines for a [`LiveSink`]: what ends in a newline goes at once, a
/// last line without one at [`Lines::finish`].
#[derive(Debug)]
pub struct Lines {
    sink: LiveSink,
    stderr: bool,
    partial: Vec<u8>,
}

impl Lines {
    pub fn new(sink: LiveSink, stderr: bool) -> Self {
        Lines {
            sink,
            stderr,
            partial: Vec::new(),
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        for piece in bytes.split_inclusive(|b| *b == b'\n') {
            if piece.ends_with(b"\n") {
                if self.partial.is_empty() {
                    self.sink.line(self.stderr, piece);
                } else {
                    self.partial.extend_from_slice(piece);
                    self.sink.line(self.stderr, &self.partial);
                    self.partial.clear();
                }
            } else {
                self.partial.extend_from_slice(piece);
                if self.partial.len() >= LONGEST_LINE {
                    self.sink.line(self.stderr, &self.partial);
                    self.partial.clear();
                }
            }
        }
    }

    pub fn finish(mut self) {
        if !self.partial.is_empty() {
            let rest = std::mem::take(&mut self.partial);
            self.sink.line(self.stderr, &rest);
        }
    }
}

/// Starts the writer of one attempt's output: returns the sink the command's copiers write to,
/// and the task, which ends (having written the `end` entry) once every sink is dropped.
pub fn start(
    conn: Connection,
    key: String,
    runner: String,
    live: LiveOutput,
    ttl: Duration,
) -> (LiveSink, tokio::task::JoinHandle<()>) {
    let (queue, lines) = mpsc::channel(QUEUE);
    let dropped = Arc::new(AtomicU64::new(0));
    let sink = LiveSink {
        queue,
        dropped: dropped.clone(),
    };
    let task = tokio::spawn(publish(conn, key, runner, live, ttl, lines, dropped));
    (sink, task)
}

/// The writer: `start`, the lines in batches, `cut` at the cap, `end` when the output is over.
async fn publish(
    mut conn: Connection,
    key: String,
    runner: String,
    live: LiveOutput,
    ttl: Duration,
    mut lines: mpsc::Receiver<Line>,
    dropped: Arc<AtomicU64>,
) {
    let ttl_ms = crate::time::millis(ttl).max(1);
    let mut writer = Writer {
        key: &key,
        ttl_ms,
        failed: false,
    };
    writer.write(&mut conn, &[Entry::Start(runner)]).await;
    let (mut seen, mut sent) = (0u64, 0u64);
    let mut batch: Vec<Entry> = Vec::new();
    while let Some(first) = lines.recv().await {
        let deadline = tokio::time::Instant::now() + BATCH_WAIT;
        let mut next = Some(first);
        loop {
            if let Some(line) = next.take() {
                seen += 1;
                if sent < live.lines {
                    sent += 1;
                    batch.push(if line.stderr {
                        Entry::Stderr(line.text)
                    } else {
                        Entry::Stdout(line.text)
                    });
                    if sent == live.lines {
                        batch.push(Entry::Cut(sent));
                    }
                }
            }
            if batch.len() >= BATCH {
                break;
            }
            match tokio::time::timeout_at(deadline, lines.recv()).await {
                Ok(Some(line)) => next = Some(line),
                // The output is over, or the batch waited long enough.
                Ok(None) | Err(_) => break,
            }
        }
        if !batch.is_empty() {
            writer.write(&mut conn, &batch).await;
            batch.clear();
        }
    }
    let lost = dropped.load(Ordering::Relaxed);
    if lost > 0 {
        crate::errln!(
            "anarchon: --live-output: {lost} line(s) of output came faster than they could be sent and were left out"
        );
    }
    writer.write(&mut conn, &[Entry::End(seen + lost)]).await;
}

/// Writes batches to one key, renewing its expiry with each; after a failure, nothing more.
struct Writer<'a> {
    key: &'a str,
    ttl_ms: i64,
    failed: bool,
}

impl Writer<'_> {
    async fn write(&mut self, conn: &mut Connection, entries: &[Entry]) {
        if self.failed {
            return;
        }
        let mut pipe = redis::pipe();
        for entry in entries {
            pipe.add_command(output::add(self.key, entry)).ignore();
        }
        pipe.cmd("PEXPIRE").arg(self.key).arg(self.ttl_ms).ignore();
        if let Err(e) = conn.replies(&pipe).await {
            self.failed = true;
            crate::errln!(
                "warning: --live-output: cannot write the command's output to {} ({e}); the command goes on, its output is no longer sent",
                self.key
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_are_split_at_newlines_and_a_last_partial_line_is_kept() {
        let (queue, mut rx) = mpsc::channel(16);
        let sink = LiveSink {
            queue,
            dropped: Arc::new(AtomicU64::new(0)),
        };
        let mut lines = Lines::new(sink, true);
        lines.push(b"one\ntw");
        lines.push(b"o\r\nthree");
        lines.finish();
        let mut got = Vec::new();
        while let Ok(line) = rx.try_recv() {
            assert!(line.stderr);
            got.push(line.text);
        }
        assert_eq!(got, ["one", "two", "three"]);
    }

    #[test]
    fn a_full_queue_drops_and_counts_never_waits() {
        let (queue, _rx) = mpsc::channel(1);
        let dropped = Arc::new(AtomicU64::new(0));
        let sink = LiveSink {
            queue,
            dropped: dropped.clone(),
        };
        sink.line(false, b"a\n");
        sink.line(false, b"b\n");
        sink.line(false, b"c\n");
        assert_eq!(dropped.load(Ordering::Relaxed), 2);
    }
}
