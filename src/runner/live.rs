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

/// One line of the command's output, numbered from 0 in the order the command printed it
/// (stdout and stderr together, as they reached anarchon).
#[derive(Debug)]
pub struct Line {
    pub number: u64,
    pub stderr: bool,
    pub text: String,
}

/// Where the command's copiers hand each line. It counts every line the command prints, queues
/// only those within the cap (so a command that prints a million lines costs one count each past
/// it, and the queue holds nothing it will not send), and never waits.
#[derive(Debug, Clone)]
pub struct LiveSink {
    queue: mpsc::Sender<Line>,
    counts: Arc<Counts>,
    cap: u64,
}

/// What the sink saw, shared with the writer for the `end` entry and its warning.
#[derive(Debug, Default)]
struct Counts {
    /// Every line the command printed.
    printed: AtomicU64,
    /// Lines within the cap that the queue had no room for.
    dropped: AtomicU64,
}

impl LiveSink {
    /// Queues one line (its newline, if any, left off), if it is within the cap.
    fn line(&self, stderr: bool, bytes: &[u8], cut: bool) {
        let number = self.counts.printed.fetch_add(1, Ordering::Relaxed);
        if number >= self.cap {
            return;
        }
        let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        let mut text = String::from_utf8_lossy(bytes).into_owned();
        if cut {
            text.push('…');
        }
        let line = Line {
            number,
            stderr,
            text,
        };
        if self.queue.try_send(line).is_err() {
            self.counts.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Counts `n` lines past the cap without looking at them.
    fn count(&self, n: u64) {
        self.counts.printed.fetch_add(n, Ordering::Relaxed);
    }

    fn past_cap(&self) -> bool {
        self.counts.printed.load(Ordering::Relaxed) >= self.cap
    }
}

/// Splits a stream's bytes into lines for a [`LiveSink`]: what ends in a newline goes at once, a
/// last line without one at [`Lines::finish`]. A line longer than [`LONGEST_LINE`] keeps its first
/// [`LONGEST_LINE`] bytes and an `…`; the rest of it, up to its newline, is left out. Past the
/// cap, lines are only counted (a count of newlines: nothing is copied).
#[derive(Debug)]
pub struct Lines {
    sink: LiveSink,
    stderr: bool,
    partial: Vec<u8>,
    /// The line being read is over [`LONGEST_LINE`]: the rest of it is skipped.
    skipping: bool,
}

impl Lines {
    pub fn new(sink: LiveSink, stderr: bool) -> Self {
        Lines {
            sink,
            stderr,
            partial: Vec::new(),
            skipping: false,
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        if self.sink.past_cap() && self.partial.is_empty() && !self.skipping {
            let newlines = bytes.iter().filter(|b| **b == b'\n').count() as u64;
            self.sink.count(newlines);
            // A last piece without its newline is a line begun: counted when it ends.
            self.skipping = !bytes.ends_with(b"\n");
            return;
        }
        for piece in bytes.split_inclusive(|b| *b == b'\n') {
            let ends = piece.ends_with(b"\n");
            if self.skipping {
                if ends {
                    self.skipping = false;
                    if self.sink.past_cap() {
                        self.sink.count(1);
                    } else {
                        let line = std::mem::take(&mut self.partial);
                        self.sink.line(self.stderr, &line, true);
                    }
                }
                continue;
            }
            let room = LONGEST_LINE.saturating_sub(self.partial.len());
            if piece.len() > room + usize::from(ends) {
                // Over the longest line: keep its head, skip the rest to its newline.
                self.partial.extend_from_slice(&piece[..room]);
                if ends {
                    let line = std::mem::take(&mut self.partial);
                    self.sink.line(self.stderr, &line, true);
                } else {
                    self.skipping = true;
                }
                continue;
            }
            if ends && self.partial.is_empty() {
                self.sink.line(self.stderr, piece, false);
            } else {
                self.partial.extend_from_slice(piece);
                if ends {
                    let line = std::mem::take(&mut self.partial);
                    self.sink.line(self.stderr, &line, false);
                }
            }
        }
    }

    pub fn finish(mut self) {
        if self.skipping || !self.partial.is_empty() {
            let rest = std::mem::take(&mut self.partial);
            if self.sink.past_cap() && rest.is_empty() {
                self.sink.count(1);
            } else {
                self.sink.line(self.stderr, &rest, self.skipping);
            }
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
) -> (LiveSink, Publisher) {
    let (queue, lines) = mpsc::channel(QUEUE);
    let counts = Arc::new(Counts::default());
    let sink = LiveSink {
        queue,
        counts: counts.clone(),
        cap: live.lines,
    };
    let finish = Arc::new(tokio::sync::Notify::new());
    let task = tokio::spawn(publish(
        conn,
        (key, runner, ttl),
        live,
        lines,
        counts,
        finish.clone(),
    ));
    (sink, Publisher { task, finish })
}

/// The writer of one attempt's output, as the run holds it.
pub struct Publisher {
    task: tokio::task::JoinHandle<()>,
    finish: Arc<tokio::sync::Notify>,
}

impl Publisher {
    /// The command is over: the lines queued so far are written, then the `end` entry, within
    /// `within` (a server that does not answer does not hold the run's record back longer; the
    /// writer is then stopped, and a reader says the output has no end). It does not wait for
    /// the streams to close: a process the command left behind may keep them open.
    pub async fn finish(mut self, within: Duration) {
        self.finish.notify_one();
        if tokio::time::timeout(within, &mut self.task).await.is_err() {
            self.task.abort();
        }
    }
}

/// The writer: `start`, the lines in batches, `cut` after the last line within the cap (when
/// more were printed), `end` when the output is over.
async fn publish(
    mut conn: Connection,
    (key, runner, ttl): (String, String, Duration),
    live: LiveOutput,
    mut lines: mpsc::Receiver<Line>,
    counts: Arc<Counts>,
    finish: Arc<tokio::sync::Notify>,
) {
    let mut writer = Writer {
        key: &key,
        ttl_ms: crate::time::millis(ttl).max(1),
        warned: false,
        unsent: 0,
    };
    writer.write(&mut conn, vec![Entry::Start(runner)], 0).await;
    let mut batch: Vec<Entry> = Vec::new();
    let mut cut = false;
    loop {
        let first = tokio::select! {
            line = lines.recv() => match line {
                Some(line) => line,
                None => break,
            },
            // The command is over: what is queued is still read, then the queue reads as ended.
            () = finish.notified() => {
                lines.close();
                continue;
            }
        };
        let deadline = tokio::time::Instant::now() + BATCH_WAIT;
        let mut next = Some(first);
        let mut in_batch = 0;
        loop {
            if let Some(line) = next.take() {
                in_batch += 1;
                let last_within_cap = line.number + 1 == live.lines;
                batch.push(if line.stderr {
                    Entry::Stderr(line.text)
                } else {
                    Entry::Stdout(line.text)
                });
                if last_within_cap {
                    cut = true;
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
        writer
            .write(&mut conn, std::mem::take(&mut batch), in_batch)
            .await;
    }
    let printed = counts.printed.load(Ordering::Relaxed);
    let dropped = counts.dropped.load(Ordering::Relaxed);
    let mut last = Vec::new();
    // The cap was reached: said once the last line within it is in (or lost).
    if cut || printed > live.lines {
        last.push(Entry::Cut(live.lines.min(printed)));
    }
    last.push(Entry::End(printed));
    writer.write(&mut conn, last, 0).await;
    let unsent = dropped + writer.unsent;
    if unsent > 0 {
        crate::errln!(
            "anarchon: --live-output: {unsent} of the first {} line(s) of output could not be sent to the store (they came faster than it took them, or it did not answer); `logs -f` says so",
            live.lines.min(printed)
        );
    }
}

/// Writes batches to one key, renewing its expiry with each. A batch that fails is counted and
/// the next is tried (a server that was away may be back); the first failure is said.
struct Writer<'a> {
    key: &'a str,
    ttl_ms: i64,
    warned: bool,
    /// Lines in batches that could not be written.
    unsent: u64,
}

impl Writer<'_> {
    async fn write(&mut self, conn: &mut Connection, entries: Vec<Entry>, lines: u64) {
        if entries.is_empty() {
            return;
        }
        let mut pipe = redis::pipe();
        for entry in &entries {
            pipe.add_command(output::add(self.key, entry));
        }
        pipe.cmd("PEXPIRE").arg(self.key).arg(self.ttl_ms);
        // A pipeline's replies: an error in any (a key of another type) fails the batch too.
        let failed = match conn.replies(&pipe).await {
            Ok(replies) => replies.iter().find_map(|r| match r {
                redis::Value::ServerError(e) => Some(format!("{e:?}")),
                _ => None,
            }),
            Err(e) => Some(e.to_string()),
        };
        if let Some(why) = failed {
            self.unsent += lines;
            if !self.warned {
                self.warned = true;
                crate::errln!(
                    "warning: --live-output: cannot write the command's output to {} ({why}); the command goes on, and later lines are tried again",
                    self.key
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sink(cap: u64, room: usize) -> (LiveSink, mpsc::Receiver<Line>) {
        let (queue, rx) = mpsc::channel(room);
        (
            LiveSink {
                queue,
                counts: Arc::new(Counts::default()),
                cap,
            },
            rx,
        )
    }

    fn texts(rx: &mut mpsc::Receiver<Line>) -> Vec<String> {
        let mut got = Vec::new();
        while let Ok(line) = rx.try_recv() {
            got.push(line.text);
        }
        got
    }

    #[test]
    fn lines_are_split_at_newlines_and_a_last_partial_line_is_kept() {
        let (sink, mut rx) = sink(100, 16);
        let mut lines = Lines::new(sink, true);
        lines.push(b"one\ntw");
        lines.push(b"o\r\nthree");
        lines.finish();
        assert_eq!(texts(&mut rx), ["one", "two", "three"]);
    }

    #[test]
    fn a_long_line_keeps_its_head_and_counts_once() {
        let (sink, mut rx) = sink(100, 16);
        let counts = sink.counts.clone();
        let mut lines = Lines::new(sink, false);
        lines.push(&vec![b'y'; LONGEST_LINE * 2]);
        lines.push(&vec![b'y'; LONGEST_LINE * 3]);
        lines.push(b"y\nafter\n");
        lines.finish();
        let got = texts(&mut rx);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].len(), LONGEST_LINE + '…'.len_utf8());
        assert!(got[0].ends_with('…'));
        assert_eq!(got[1], "after");
        assert_eq!(counts.printed.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn past_the_cap_lines_are_counted_not_queued_nor_called_dropped() {
        let (sink, mut rx) = sink(3, 16);
        let counts = sink.counts.clone();
        let mut lines = Lines::new(sink, false);
        lines.push(b"1\n2\n3\n4\n5\n");
        lines.push(b"6\n7");
        lines.push(b"\n8");
        lines.finish();
        assert_eq!(texts(&mut rx), ["1", "2", "3"]);
        assert_eq!(counts.printed.load(Ordering::Relaxed), 8);
        assert_eq!(counts.dropped.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_full_queue_drops_and_counts_never_waits() {
        let (sink, _rx) = sink(100, 1);
        let counts = sink.counts.clone();
        sink.line(false, b"a\n", false);
        sink.line(false, b"b\n", false);
        sink.line(false, b"c\n", false);
        assert_eq!(counts.dropped.load(Ordering::Relaxed), 2);
    }
}
