//! `anarchon logs`: what a run left behind, for the "what failed?" question: the stored stderr
//! tail, exit code or signal, timeout and duration of a job's attempts. The newest failure by
//! default, like `gh run view --log-failed`.

use serde::Serialize;

use crate::commands::Context;
use crate::commands::shared::attempts::{self, Selection};
use crate::error::{Error, ExitCode, ExitStatus, Result};
use crate::settings::read::LogsSettings;
use crate::store::history::HistoryEntry;

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct LogsReport<'a> {
    job: &'a str,
    #[serde(flatten)]
    clock: crate::output::ServerClock,
    entries: Vec<HistoryEntry>,
}

pub async fn execute(settings: &LogsSettings, ctx: &Context) -> Result<ExitCode> {
    let (mut conn, check, keys) = ctx.open_job(&settings.job, settings.layout).await?;
    let now = check.server_now_ms;
    let slot = settings.slot.map(|s| s.resolve(now));
    // The newest failure unless a slot or a count is given: a failed run, or one interrupted (its
    // holder died, its lease was lost, an operator released it), as health counts failures; not
    // one `--overlap replace` stopped on purpose. Ended attempts only (a run in progress has no
    // result yet).
    let selection = Selection {
        slot,
        last: settings.last,
    };
    let entries = attempts::read(&mut conn, &keys, &settings.job, selection, now).await?;
    if ctx.out.json {
        ctx.out.print_json(&LogsReport {
            job: &settings.job,
            clock: crate::output::ServerClock::at(now),
            entries,
        });
        return Ok(ExitCode::Ok);
    }
    for (i, e) in entries.iter().enumerate() {
        if i > 0 {
            crate::outln!();
        }
        for line in attempts::lines(&ctx.out, &settings.job, e, now) {
            crate::outln!("{line}");
        }
    }
    Ok(ExitCode::Ok)
}

/// The JSON Schema of this command's `--json` output (docs/schemas/, checked by tests/it/schemas.rs).
pub(crate) fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![
        (
            "logs",
            crate::commands::output_schema::<LogsReport<'static>>(),
        ),
        (
            "logs-follow",
            crate::commands::output_schema::<FollowLine<'static>>(),
        ),
        (
            "logs-follow-end",
            crate::commands::output_schema::<FollowEnd<'static>>(),
        ),
    ]
}

/// `logs -f --json`: one line of a run's output.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct FollowLine<'a> {
    job: &'a str,
    slot: i64,
    /// `slot` as RFC 3339.
    slot_time: String,
    attempt: u32,
    /// `stdout` or `stderr`.
    stream: &'static str,
    line: &'a str,
}

/// `logs -f --json`: the last line, how the followed run ended (as `wait --json` says it).
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct FollowEnd<'a> {
    job: &'a str,
    run: &'a HistoryEntry,
    exit_code: i32,
}

/// How often a followed run's output is read.
const OUTPUT_POLL: std::time::Duration = std::time::Duration::from_millis(250);

/// How long a run in progress may show no output stream before `logs -f` says it has none: its
/// holder writes the stream's first entry as the command starts.
const NO_OUTPUT_AFTER: std::time::Duration = std::time::Duration::from_secs(3);

/// What `logs -f` exits with when interrupted (Ctrl-C, SIGTERM) before the run ended, as a shell
/// reports a command ended by SIGINT: never 0, which says the run finished.
const INTERRUPTED: i32 = 130;

/// One attempt's output stream as `logs -f` reads it.
struct Followed {
    attempt: u32,
    key: String,
    /// The last entry read (`0`: none yet).
    after: String,
    /// Lines printed from it.
    lines: u64,
    /// Its `cut` entry: the lines its holder sent before the cap.
    cut: Option<u64>,
    /// Its `end` entry: every line the command printed.
    end: Option<u64>,
    /// When it was begun, to say when a run in progress sends no output at all.
    since: std::time::Instant,
}

impl Followed {
    fn new(prefix: &str, job: &str, slot: i64, attempt: u32) -> Self {
        Followed {
            attempt,
            key: crate::store::output::output_key(prefix, job, slot, attempt),
            after: "0".to_string(),
            lines: 0,
            cut: None,
            end: None,
            since: std::time::Instant::now(),
        }
    }

    /// Says, once its attempt is over, what of its output the store did not get: lines the holder
    /// counted but could not send (a full queue, a server that did not answer), or the rest of
    /// an output whose end never came (the holder died, or lost the server).
    fn say_what_is_missing(&self, json: bool) {
        if json || self.after == "0" {
            return;
        }
        match self.end {
            None => crate::errln!(
                "anarchon: attempt {}'s output stops here in the store: its holder never marked its end (it died, or the server did not take the rest)",
                self.attempt
            ),
            Some(printed) => {
                let sent = self.cut.unwrap_or(printed).min(printed);
                if self.lines < sent {
                    crate::errln!(
                        "anarchon: {} of attempt {}'s first {sent} line(s) are not in the store: they came faster than it took them, or it did not answer (the holder said so on its stderr)",
                        sent - self.lines,
                        self.attempt
                    );
                }
            }
        }
    }
}

/// `anarchon logs -f JOB`: follows a run's output (`run --live-output`) as its command prints
/// it, from any host, across takeovers (each attempt has its own stream; a run whose earlier
/// attempts ended before is shown from its first), and ends with how the run ended, exiting as
/// `wait` does ([`INTERRUPTED`] when stopped before). Reads only: the output stream every
/// [`OUTPUT_POLL`] and the run (as `wait` reads it) between; a server that does not answer is
/// ridden out as the live views do ([`crate::commands::Outage`]).
pub async fn follow(settings: &LogsSettings, ctx: &Context) -> Result<ExitStatus> {
    let (mut conn, check, keys) = ctx.open_job(&settings.job, settings.layout).await?;
    if matches!(keys, crate::store::JobKeys::ClaimOnly(_)) {
        return Err(Error::usage(format!(
            "logs -f follows runs in progress, which claim-only jobs do not keep\n  hint: `anarchon logs {}` shows what its runs left behind",
            settings.job
        )));
    }
    let mut slot = settings.slot.map(|s| s.resolve(check.server_now_ms));
    let mut interrupt = crate::commands::Interrupt::new()?;
    let mut outage = crate::commands::Outage::default();
    let mut following: Option<Followed> = None;
    let mut told_expired = false;
    loop {
        let round = Round {
            ctx,
            keys: &keys,
            job: &settings.job,
        };
        let pause = match round
            .look(&mut conn, &mut slot, &mut following, &mut told_expired)
            .await
        {
            Ok(Some(code)) => return Ok(ExitStatus::External(code)),
            Ok(None) => {
                outage.over();
                OUTPUT_POLL
            }
            Err(e) => outage.failed(e, OUTPUT_POLL * 8)?,
        };
        if crate::output::output_gone() {
            return Ok(ExitCode::Ok.into());
        }
        if interrupt.sleep(pause).await {
            return Ok(ExitStatus::External(INTERRUPTED));
        }
    }
}

/// What every look of `logs -f` reads with.
struct Round<'a> {
    ctx: &'a Context,
    keys: &'a crate::store::JobKeys,
    job: &'a str,
}

impl Round<'_> {
    /// One look: the run, then its output since the last look. The exit code once the run has
    /// ended.
    async fn look(
        &self,
        conn: &mut crate::connection::Connection,
        slot: &mut Option<i64>,
        following: &mut Option<Followed>,
        told_expired: &mut bool,
    ) -> Result<Option<i32>> {
        let (entry, ended) = self.the_run(conn, slot).await?;
        let attempt = entry.attempt.unwrap_or(1);
        self.before_this_attempt(conn, following, &entry, attempt)
            .await?;
        let followed = following
            .get_or_insert_with(|| Followed::new(self.ctx.prefix(), self.job, entry.slot, attempt));
        self.drain(conn, followed, entry.slot, ended).await?;
        if ended {
            return Ok(Some(self.say_the_end(followed, &entry, attempt)));
        }
        self.while_running(followed, &entry, attempt, told_expired)?;
        Ok(None)
    }

    /// The run followed (its newest attempt) and whether it has ended; refused when there is none.
    async fn the_run(
        &self,
        conn: &mut crate::connection::Connection,
        slot: &mut Option<i64>,
    ) -> Result<(HistoryEntry, bool)> {
        use crate::commands::shared::awaited::{Seen, look};
        let job = self.job;
        let now = crate::store::format::check_for_read(conn, self.ctx.prefix())
            .await?
            .server_now_ms;
        match look(conn, self.keys, slot, now).await? {
            Seen::Waiting(Some(e)) => Ok((e, false)),
            Seen::Ended(e) => Ok((e, true)),
            Seen::Waiting(None) => Err(Error::NotFound(
                format!(
                    "{job} has no run {}\n  hint: `anarchon wait {job}` waits for its next run; `anarchon logs {job}` shows what its runs left behind",
                    match slot {
                        Some(s) => format!("of {}", crate::time::rfc3339(*s)),
                        None => "in progress".to_string(),
                    }
                )
                .into(),
            )),
        }
    }

    /// The output of the attempts before `attempt`, so that a run taken over is shown whole: at
    /// the first look all of them, after a takeover the rest of the one followed.
    async fn before_this_attempt(
        &self,
        conn: &mut crate::connection::Connection,
        following: &mut Option<Followed>,
        entry: &HistoryEntry,
        attempt: u32,
    ) -> Result<()> {
        let ctx = self.ctx;
        // The first look: the attempts before this one, whole (a run taken over, or one that
        // ended after takeovers, is shown from its start).
        if following.is_none() {
            for earlier in 1..attempt {
                let mut before = Followed::new(ctx.prefix(), self.job, entry.slot, earlier);
                self.drain(conn, &mut before, entry.slot, true).await?;
                before.say_what_is_missing(ctx.out.json);
            }
        }
        // A takeover: the rest of the attempt before, then the next one's stream.
        if following.as_ref().is_some_and(|f| f.attempt != attempt) {
            if let Some(mut before) = following.take() {
                self.drain(conn, &mut before, entry.slot, true).await?;
                before.say_what_is_missing(ctx.out.json);
            }
            if !ctx.out.json {
                crate::errln!(
                    "anarchon: attempt {attempt} on {} took the run over",
                    entry.runner
                );
            }
        }
        Ok(())
    }

    /// Says how the run ended (what its output lacks, then its end), and gives its exit code.
    fn say_the_end(&self, followed: &Followed, entry: &HistoryEntry, attempt: u32) -> i32 {
        use crate::commands::shared::awaited::exit_code_of;
        let (ctx, job) = (self.ctx, self.job);
        if followed.after == "0" {
            if !ctx.out.json {
                crate::errln!(
                    "anarchon: attempt {attempt} kept no output in the store (it was not started with --live-output, or its output expired)"
                );
            }
        } else {
            followed.say_what_is_missing(ctx.out.json);
        }
        let code = exit_code_of(entry);
        if ctx.out.json {
            ctx.out.print_json_line(&FollowEnd {
                job,
                run: entry,
                exit_code: code,
            });
        } else {
            crate::errln!(
                "anarchon: {job} @ {}: {} as attempt {attempt} on {}{}",
                entry.slot_time,
                entry.status,
                entry.runner,
                match crate::output::how_it_ended(&entry.result) {
                    Some(how) => format!(" ({how})"),
                    None => String::new(),
                }
            );
        }
        code
    }

    /// A run still going: says once that its lease expired, and refuses to wait on for output
    /// from an attempt that sends none to the store.
    fn while_running(
        &self,
        followed: &Followed,
        entry: &HistoryEntry,
        attempt: u32,
        told_expired: &mut bool,
    ) -> Result<()> {
        let (ctx, job) = (self.ctx, self.job);
        if entry.status == "expired" && !*told_expired && !ctx.out.json {
            *told_expired = true;
            crate::errln!(
                "anarchon: attempt {attempt} on {} lost its lease and nobody has taken the run over yet: it goes on when a host claims it (a backup, the job's next run), or ends with `anarchon release {job} --slot {}`",
                entry.runner,
                entry.slot
            );
        }
        if followed.after == "0" && followed.since.elapsed() >= NO_OUTPUT_AFTER {
            return Err(Error::NotFound(
                format!(
                    "{job} @ {} (attempt {attempt} on {}) sends no output to the store: it was not started with --live-output\n  hint: start the job with `anarchon run --live-output ...` (or `# anarchon: --live-output` in a crontab) to follow its output; `anarchon wait {job}` waits for it to end",
                    entry.slot_time, entry.runner
                )
                .into(),
            ));
        }
        Ok(())
    }

    /// Prints the entries of an attempt's stream after the last read (moving on), all of them
    /// when `whole`, else one read's worth.
    async fn drain(
        &self,
        conn: &mut crate::connection::Connection,
        followed: &mut Followed,
        slot: i64,
        whole: bool,
    ) -> Result<()> {
        use crate::store::output::{Entry, read_after};
        const READ: usize = 1000;
        loop {
            let entries = read_after(conn, &followed.key, &followed.after, READ).await?;
            let n = entries.len();
            for (id, entry) in entries {
                followed.after = id;
                let (stream, line) = match &entry {
                    Entry::Stdout(line) => ("stdout", line),
                    Entry::Stderr(line) => ("stderr", line),
                    Entry::Cut(sent) => {
                        followed.cut = Some(*sent);
                        crate::errln!(
                            "anarchon: the run's output was cut after {sent} lines (--live-output-lines); the rest is not in the store"
                        );
                        continue;
                    }
                    Entry::End(printed) => {
                        followed.end = Some(*printed);
                        continue;
                    }
                    Entry::Start(_) => continue,
                };
                followed.lines += 1;
                if self.ctx.out.json {
                    self.ctx.out.print_json_line(&FollowLine {
                        job: self.job,
                        slot,
                        slot_time: crate::time::rfc3339(slot),
                        attempt: followed.attempt,
                        stream,
                        line,
                    });
                } else {
                    crate::outln!("{line}");
                }
            }
            if !whole || n < READ {
                return Ok(());
            }
        }
    }
}
