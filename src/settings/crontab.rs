//! A crontab file read into `run`'s settings, one [`CronJob`] per job line: what `anarchon cron
//! FILE` (issue #38's daemon for replicated services) runs, every job by `run`'s one code path.
//!
//! The file is read as supercronic and Vixie cron read it, so an existing crontab moves over
//! unchanged:
//! - blank lines and `#` comments are skipped;
//! - `NAME=value` lines set the environment of the jobs below them (quotes around the value are
//!   taken off, as Vixie cron does); `CRON_TZ` and `TZ` also set the time zone their schedules
//!   are read in;
//! - a job line is a schedule and a command: 6 fields with seconds first, else 5 fields, else an
//!   alias (`@hourly`), whichever reads first (as supercronic tries its field counts), and the
//!   rest of the line is the command, run by `/bin/sh -c` (`run --shell`);
//! - a `# anarchon: FLAGS` line carries `run`'s own flags for the job line below it (`--job sync
//!   --overlap replace --timeout 10m`), split into words as a shell would and parsed by the same
//!   definitions as `anarchon run`'s command line. Its `--job` names the job; without one the name
//!   is derived from the line (the command's first word and a hash of the whole line): stable
//!   across replicas, but editing the line renames the job, and [`Naming::Derived`] says so.
//!
//! Every error names its line; all of them are reported at once.

use std::fmt;

use clap::Parser;

use crate::cli::{Cli, Command, GlobalArgs, RunArgs};
use crate::schedule::Schedule;
use crate::settings::run::RunSettings;

/// A crontab, read.
#[derive(Debug)]
pub struct Crontab {
    pub jobs: Vec<CronJob>,
    /// Lines that read but do not do what cron would have them do (`MAILTO=`): said at start, on a
    /// reload and by `--check`.
    pub warnings: Vec<LineError>,
}

/// One job line, with `run`'s settings for it.
#[derive(Debug)]
pub struct CronJob {
    /// Its line in the file, from 1.
    pub line: usize,
    pub name: String,
    pub naming: Naming,
    /// The schedule as written.
    pub schedule: String,
    /// The time zone it is read in (`CRON_TZ`/`TZ` above it, or the annotation's `--tz`).
    pub tz: String,
    /// The command, as written (run by `/bin/sh -c`).
    pub command: String,
    /// The `NAME=value` lines above it, in order.
    pub env: Vec<(String, String)>,
    pub run: RunSettings,
    /// Everything the job's settings were read from (its line, flags and environment): a reload
    /// restarts a job whose fingerprint changed, and leaves the others be.
    pub fingerprint: String,
}

/// Where a job's name comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Naming {
    /// `--job` in its `# anarchon:` line.
    Annotated,
    /// Derived from the line: editing the line renames the job (and starts its history anew).
    Derived,
}

/// What is wrong with one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// The annotation that marks a line of `run`'s flags for the job line below it.
const ANNOTATION: &str = "anarchon:";

/// Flags an annotation may not carry: the job line says when the job runs.
const LINE_OWNED: [&str; 3] = ["--schedule", "--slot", "--backfill"];

/// `run`'s flags that mean nothing under `anarchon cron`, each with why: refused with their line
/// rather than accepted and ignored. (Every other flag of `run` takes effect under the daemon:
/// `tests::every_flag_of_run_takes_effect_or_is_refused` keeps the two lists whole.)
const NOT_UNDER_THE_DAEMON: [(&str, Option<&str>, &str); 6] = [
    (
        "--quiet",
        Some("-q"),
        "the daemon's log is the daemon's, not a job's\n  hint: drop it; filter the daemon's log by job (`--log-format json`, field `job`)",
    ),
    (
        "--skipped-ok",
        None,
        "it sets `run`'s exit code, and under the daemon no run exits to anyone\n  hint: drop it; `anarchon check` and /metrics judge the job",
    ),
    (
        "--foreground",
        None,
        "a daemon has no terminal to share with the command\n  hint: drop it",
    ),
    (
        "--dry-run",
        None,
        "it belongs to --backfill, which the job line's schedule replaces\n  hint: `anarchon run --backfill FROM..TO --dry-run` for a backfill",
    ),
    (
        "--include-skipped",
        None,
        "it belongs to --backfill, which the job line's schedule replaces\n  hint: `anarchon run --backfill` for a backfill",
    ),
    (
        "--backfill-max",
        None,
        "it belongs to --backfill, which the job line's schedule replaces\n  hint: `anarchon run --backfill` for a backfill",
    ),
];

/// Environment lines that Vixie cron or cronie read as settings of their own, which `anarchon
/// cron` does not act on (they still reach the commands' environment): a warning with their line,
/// and what to use instead.
const CRON_ONLY_VARIABLES: [(&str, &str); 4] = [
    (
        "MAILTO",
        "cron mails a job's output there; anarchon cron sends no mail (a job's output goes to the daemon's log, the tail of its stderr to its record)\n  hint: `# anarchon: --on-failure CMD` runs CMD when a run fails",
    ),
    (
        "MAILFROM",
        "anarchon cron sends no mail\n  hint: `# anarchon: --on-failure CMD` runs CMD when a run fails",
    ),
    ("CONTENT_TYPE", "anarchon cron sends no mail"),
    (
        "RANDOM_DELAY",
        "cronie's random delay is not read\n  hint: `# anarchon: --jitter DURATION` spreads a job's start",
    ),
];

/// Reads a crontab's text into jobs with the global flags the daemon runs under, at start and at
/// each reload: resolved once, so the daemon never goes back to the command line.
#[derive(Debug, Clone)]
pub struct CrontabReader {
    global: GlobalArgs,
    /// `cron --service`: recorded with every job in its registry.
    service: Option<String>,
}

impl CrontabReader {
    pub fn new(global: &GlobalArgs) -> Self {
        CrontabReader {
            global: global.clone(),
            service: None,
        }
    }

    /// The reader of a crontab run by the replicas of `service` (`cron --service`).
    pub fn of_service(mut self, service: Option<String>) -> Self {
        self.service = service.filter(|s| !s.is_empty());
        self
    }

    /// The jobs of a crontab's text (as [`read_text`] gave it), every error with its line.
    pub fn jobs_of(&self, text: Result<String, String>) -> Result<Crontab, Vec<LineError>> {
        let text = text.map_err(|message| vec![LineError { line: 0, message }])?;
        let mut tab = read(&text, &self.global)?;
        for job in &mut tab.jobs {
            job.run.registry.service = self.service.clone();
        }
        if tab.jobs.is_empty() {
            // A daemon with nothing to run is a mistake; and a reload that finds no job is a file
            // caught empty (truncated, being written): taking it would stop every job of the fleet.
            return Err(vec![LineError {
                line: 0,
                message: "has no job line (a schedule and a command): there is nothing to run"
                    .into(),
            }]);
        }
        Ok(tab)
    }

    /// Reads and parses the crontab file, every error with its line (a file that cannot be read:
    /// line 0).
    pub fn read_file(&self, file: &std::path::Path) -> Result<Crontab, Vec<LineError>> {
        self.jobs_of(read_text(file))
    }
}

/// The crontab's text, or why it cannot be read.
pub fn read_text(file: &std::path::Path) -> Result<String, String> {
    std::fs::read_to_string(file).map_err(|e| format!("cannot read the file: {e}"))
}

/// `FILE:LINE: why`, one a line, as compilers say it (and `FILE: why` for the whole file).
pub fn describe_errors(file: &std::path::Path, errors: &[LineError]) -> Vec<String> {
    errors
        .iter()
        .map(|e| match e.line {
            0 => format!("{}: {}", file.display(), e.message),
            n => format!("{}:{n}: {}", file.display(), e.message),
        })
        .collect()
}

/// Reads `text` (a crontab) with the global flags the daemon runs under. Every job's settings are
/// resolved as `anarchon run`'s would be; every error is returned, each naming its line.
pub fn read(text: &str, global: &GlobalArgs) -> Result<Crontab, Vec<LineError>> {
    let mut reading = Reading::new();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let text = raw.trim_start();
        if text.is_empty() {
            continue;
        }
        if let Some(comment) = text.strip_prefix('#') {
            reading.comment(line, text, comment);
        } else if let Some((name, value)) = env_line(text) {
            reading.variable(line, name, value);
        } else {
            reading.job(line, text, global);
        }
    }
    reading.end()
}

/// A crontab being read, line by line: what the lines so far set for the lines below them, and
/// what they gave.
struct Reading {
    jobs: Vec<CronJob>,
    errors: Vec<LineError>,
    warnings: Vec<LineError>,
    env: Vec<(String, String)>,
    tz: String,
    /// The `# anarchon:` line waiting for its job line: its line and words.
    annotation: Option<(usize, Vec<String>)>,
}

impl Reading {
    /// The top of the file: no environment, schedules in UTC.
    fn new() -> Reading {
        Reading {
            jobs: Vec::new(),
            errors: Vec::new(),
            warnings: Vec::new(),
            env: Vec::new(),
            tz: "UTC".to_string(),
            annotation: None,
        }
    }

    /// A `#` line: a comment, or the `# anarchon:` flags of the job line below it.
    fn comment(&mut self, line: usize, text: &str, comment: &str) {
        if looks_like_an_annotation(comment) {
            self.errors.push(LineError {
                line,
                message: format!(
                    "{:?} looks like an annotation but is not one, so its flags would be ignored\n  hint: write `# anarchon: FLAGS` (lower case, with the colon)",
                    text.trim_end()
                ),
            });
            return;
        }
        let Some(flags) = comment.trim_start().strip_prefix(ANNOTATION) else {
            return;
        };
        match (&self.annotation, shlex::split(flags)) {
            (Some((first, _)), _) => self.errors.push(LineError {
                line,
                message: format!(
                    "a second `# anarchon:` line before one job line (the first is line {first}); put all of the job's flags on one"
                ),
            }),
            (None, None) => self.errors.push(LineError {
                line,
                message: "the `# anarchon:` flags have an unbalanced quote".to_string(),
            }),
            (None, Some(words)) => self.annotation = Some((line, words)),
        }
    }

    /// A `NAME=value` line: the environment (and time zone) of the job lines below it.
    fn variable(&mut self, line: usize, name: String, value: String) {
        if name == "CRON_TZ" || name == "TZ" {
            self.tz = value.clone();
        }
        if let Some((_, why)) = CRON_ONLY_VARIABLES.iter().find(|(n, _)| *n == name) {
            self.warnings.push(LineError {
                line,
                message: format!("{name} is set but not acted on: {why}"),
            });
        }
        self.env.push((name, value));
    }

    /// A job line, with the annotation above it: a job, unless it is refused or its name taken.
    fn job(&mut self, line: usize, text: &str, global: &GlobalArgs) {
        let flags = self
            .annotation
            .take()
            .map(|(_, words)| words)
            .unwrap_or_default();
        match job_line(line, text, &self.tz, &self.env, flags, global) {
            Ok(job) => match self.jobs.iter().find(|j| j.name == job.name) {
                Some(first) => self.errors.push(LineError {
                    line,
                    message: format!(
                        "job {:?} is line {}'s job too: two lines cannot share a name\n  hint: name one with `# anarchon: --job NAME` above it",
                        job.name, first.line
                    ),
                }),
                None => self.jobs.push(job),
            },
            Err(message) => self.errors.push(LineError { line, message }),
        }
    }

    /// The end of the file: the crontab, or every error (an annotation left without a job too).
    fn end(mut self) -> Result<Crontab, Vec<LineError>> {
        if let Some((line, _)) = self.annotation {
            self.errors.push(LineError {
                line,
                message: "a `# anarchon:` line with no job line below it".to_string(),
            });
        }
        if self.errors.is_empty() {
            Ok(Crontab {
                jobs: self.jobs,
                warnings: self.warnings,
            })
        } else {
            Err(self.errors)
        }
    }
}

/// A comment that was meant as a `# anarchon:` line but is not one (`# anarchon --job x`,
/// `# Anarchon: ...`): its flags would be silently ignored, and the job run with defaults.
fn looks_like_an_annotation(comment: &str) -> bool {
    let words = comment.trim_start();
    if words.starts_with(ANNOTATION) {
        return false;
    }
    let lower = words.to_ascii_lowercase();
    lower
        .strip_prefix("anarchon")
        .is_some_and(|rest| rest.starts_with(':') || rest.trim_start().starts_with("--"))
}

/// The names of the global flags (`--redis`, `--prefix`, `-p`, ...): the daemon's, not a job's.
/// Read from the definitions once: every job line of every reload asks.
static GLOBAL_FLAGS: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
    use clap::CommandFactory;
    Cli::command()
        .get_arguments()
        .filter(|a| a.is_global_set())
        .flat_map(|a| {
            let long = a.get_long().map(|l| format!("--{l}"));
            let short = a.get_short().map(|c| format!("-{c}"));
            long.into_iter().chain(short)
        })
        .collect()
});

/// Whether `word` is the short flag `short` (`-p`), alone or with its value attached (`-p6380`).
fn is_short(word: &str, short: &str) -> bool {
    word.starts_with(short) && !word.starts_with("--")
}

/// A cron field's word (`*`, `*/5`, `1-5`, `0,30`): a command that starts with one was most
/// likely a 7th field (Quartz's year), which crontab does not have.
fn looks_like_a_field(word: &str) -> bool {
    !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '*' | '/' | ',' | '-' | '?'))
}

/// A `NAME=value` line: its name and value (quotes taken off), else None.
fn env_line(text: &str) -> Option<(String, String)> {
    let (left, right) = text.split_once('=')?;
    let name = left.trim_end();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return None;
    }
    let value = right.trim();
    let unquoted = match value.as_bytes() {
        [q, .., last] if (*q == b'"' || *q == b'\'') && q == last => &value[1..value.len() - 1],
        _ => value,
    };
    Some((name.to_string(), unquoted.to_string()))
}

/// Splits a job line into its schedule and command: 6 fields, else 5, else an alias, whichever
/// reads as a schedule in `tz` first.
fn split_schedule(text: &str, tz: &str) -> Result<(String, String), String> {
    let words: Vec<(usize, usize)> = text.match_indices(|c: char| !c.is_whitespace()).fold(
        Vec::new(),
        |mut spans: Vec<(usize, usize)>, (at, c)| {
            match spans.last_mut() {
                Some((_, end)) if *end == at => *end = at + c.len(),
                _ => spans.push((at, at + c.len())),
            }
            spans
        },
    );
    let mut first_error = None;
    for count in [6, 5, 1] {
        if words.len() <= count {
            continue;
        }
        let schedule = &text[..words[count - 1].1];
        if count == 1 && !schedule.starts_with('@') {
            continue;
        }
        match Schedule::parse(schedule, tz) {
            Ok(_) => return Ok((schedule.to_string(), text[words[count].0..].to_string())),
            Err(e) if count == 5 || count == 1 => {
                first_error.get_or_insert(e);
            }
            Err(_) => {}
        }
    }
    Err(first_error.map_or_else(
        || {
            "not a job line: a schedule (5 fields, 6 with seconds first, or @hourly) and a command"
                .to_string()
        },
        |e| format!("not a job line: {e}"),
    ))
}

/// One job line, with the flags of its annotation, read into `run`'s settings.
fn job_line(
    line: usize,
    text: &str,
    tz: &str,
    env: &[(String, String)],
    flags: Vec<String>,
    global: &GlobalArgs,
) -> Result<CronJob, String> {
    let (flags, was) = take_was(flags)?;
    refuse_what_a_job_cannot_set(&flags)?;
    let tz = if names_flag(&flags, "--tz") {
        None
    } else {
        Some(tz)
    };
    let (schedule, command) = schedule_and_command(text, tz.unwrap_or("UTC"))?;
    let naming = if names_flag(&flags, "--job") {
        Naming::Annotated
    } else {
        Naming::Derived
    };
    let parts = LineParts {
        schedule: &schedule,
        command: &command,
        tz,
        naming,
    };
    let args = run_words(flags, &parts, env);
    let run_args = parse_run(&args, &command)?;
    let fingerprint = format!("{args:?} {env:?} {was:?}");
    let mut run = RunSettings::resolve(*run_args, global, false).map_err(|e| e.to_string())?;
    check_resolved(&run, &schedule, &was)?;
    run.runner.command.env.extend(env.iter().cloned());
    run.lineage = was;
    Ok(CronJob {
        line,
        name: run.job.clone(),
        naming,
        tz: run
            .schedule
            .as_ref()
            .map_or_else(|| "UTC".to_string(), |s| s.time_zone().to_string()),
        schedule,
        command,
        env: env.to_vec(),
        run,
        fingerprint,
    })
}

/// Whether the annotation's words set `flag` (`--job x` or `--job=x`).
fn names_flag(flags: &[String], flag: &str) -> bool {
    flags
        .iter()
        .any(|w| w == flag || w.starts_with(&format!("{flag}=")))
}

/// Refuses an annotation's flags that are not a job's to set: the line's, the daemon's, those
/// that mean nothing under it, and a command.
fn refuse_what_a_job_cannot_set(flags: &[String]) -> Result<(), String> {
    if let Some(owned) = LINE_OWNED.iter().find(|f| names_flag(flags, f)) {
        return Err(format!(
            "`# anarchon:` sets {owned}, which the job line below it says\n  hint: drop {owned}: the line's schedule is the job's"
        ));
    }
    if let Some((flag, _, why)) = NOT_UNDER_THE_DAEMON.iter().find(|(long, short, _)| {
        names_flag(flags, long)
            || short.is_some_and(|short| flags.iter().any(|w| is_short(w, short)))
    }) {
        return Err(format!(
            "`# anarchon:` sets {flag}, which means nothing under `anarchon cron`: {why}"
        ));
    }
    if let Some(global) = flags.iter().find(|w| {
        GLOBAL_FLAGS.iter().any(|g| {
            if g.starts_with("--") {
                *w == g || w.starts_with(&format!("{g}="))
            } else {
                is_short(w, g)
            }
        })
    }) {
        let name = global.split('=').next().unwrap_or(global);
        return Err(format!(
            "`# anarchon:` sets {name}, a flag of the daemon, not of a job (every job of the file shares the daemon's connection and prefix)\n  hint: give it to `anarchon cron` itself, or run another daemon for another store"
        ));
    }
    if flags.iter().any(|w| w == "--") {
        return Err(
            "`# anarchon:` carries `run`'s flags, not a command: the job line's command is the job's"
                .to_string(),
        );
    }
    Ok(())
}

/// The job line's schedule and command, refusing a command that reads as a 7th field.
fn schedule_and_command(text: &str, tz: &str) -> Result<(String, String), String> {
    let (schedule, command) = split_schedule(text, tz)?;
    if command
        .split_whitespace()
        .next()
        .is_some_and(looks_like_a_field)
    {
        return Err(format!(
            "the command starts with {:?}, which reads as one more schedule field: crontab has 5 fields, or 6 with seconds first, and no year field",
            command.split_whitespace().next().unwrap_or_default()
        ));
    }
    Ok((schedule, command))
}

/// What a job line says besides its annotation, as `run`'s words are built from it.
struct LineParts<'a> {
    schedule: &'a str,
    command: &'a str,
    /// The zone above the line (None: the annotation's `--tz` decides).
    tz: Option<&'a str>,
    naming: Naming,
}

/// The `anarchon run` command line a job line stands for: the annotation's flags, then what
/// the line says.
fn run_words(flags: Vec<String>, parts: &LineParts, env: &[(String, String)]) -> Vec<String> {
    let mut args: Vec<String> = vec!["anarchon".into(), "run".into()];
    args.extend(flags);
    args.extend(["--schedule".to_string(), parts.schedule.to_string()]);
    if let Some(tz) = parts.tz {
        args.extend(["--tz".to_string(), tz.to_string()]);
    }
    if parts.naming == Naming::Derived {
        args.extend([
            "--job".to_string(),
            derived_name(parts.schedule, parts.command),
        ]);
    }
    let command = parts.command.to_string();
    // SHELL above the line runs the command, as Vixie cron does (default /bin/sh: `run --shell`).
    match env.iter().rev().find(|(name, _)| name == "SHELL") {
        Some((_, shell)) if shell != "/bin/sh" => {
            args.extend(["--".to_string(), shell.clone(), "-c".to_string(), command]);
        }
        _ => args.extend(["--shell".to_string(), "--".to_string(), command]),
    }
    args
}

/// `run`'s arguments from its words, by the same definitions as its command line; a refusal
/// said as the line's error.
fn parse_run(args: &[String], command: &str) -> Result<Box<RunArgs>, String> {
    let cli = Cli::try_parse_from(args).map_err(|e| {
        use clap::error::ErrorKind;
        if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
            return "`# anarchon:` carries a job's flags; --help and --version are not any (`anarchon run --help` lists them)".to_string();
        }
        let text = e.to_string();
        let first = text.lines().next().unwrap_or_default();
        let said = first.trim_start_matches("error: ").to_string();
        match e.kind() {
            ErrorKind::UnknownArgument => format!(
                "{said} in its `# anarchon:` line\n  hint: a `# anarchon:` line takes `anarchon run`'s flags (`anarchon run --help` lists them) and --was"
            ),
            _ => said,
        }
    })?;
    let Command::Run(run_args) = cli.command else {
        return Err("did not read as `run`'s settings".to_string());
    };
    // `run`'s command comes only after `--`: a word of the annotation that is no flag's value
    // was refused above (by clap), so the command is the line's, whole.
    debug_assert_eq!(run_args.command.last().map(String::as_str), Some(command));
    Ok(run_args)
}

/// Refuses resolved settings a daemon could not run: a bad job name, a schedule that never
/// fires, a `--was` that is no earlier name.
fn check_resolved(run: &RunSettings, schedule: &str, was: &[String]) -> Result<(), String> {
    crate::store::validate_job_name(&run.job).map_err(|e| e.to_string())?;
    let now = chrono::Utc::now().timestamp_millis();
    if run
        .schedule
        .as_ref()
        .is_some_and(|s| s.next_after(now).is_none())
    {
        return Err(crate::schedule::never_fires(schedule));
    }
    for old in was {
        crate::store::validate_job_name(old).map_err(|e| format!("--was: {e}"))?;
        if *old == run.job {
            return Err(format!(
                "--was {old:?} is the job's own name\n  hint: --was names the job's earlier name"
            ));
        }
    }
    Ok(())
}

/// `--was OLD` (a crontab's own flag, not `run`'s; several allowed): the job's earlier names,
/// taken out of the annotation's words. Each slot of the job is claimed under each of them first
/// (`daemon::lineage`), so that replicas still running an old name and those running the
/// new one never run one scheduled time twice (docs/guide.md, "Renaming a job").
fn take_was(flags: Vec<String>) -> Result<(Vec<String>, Vec<String>), String> {
    let (mut rest, mut was) = (Vec::new(), Vec::new());
    let mut words = flags.into_iter();
    while let Some(word) = words.next() {
        if word == "--was" {
            match words.next() {
                Some(old) if !old.starts_with("--") => was.push(old),
                _ => return Err("`--was` needs the job's old name: `--was OLD`".to_string()),
            }
        } else if let Some(old) = word.strip_prefix("--was=") {
            was.push(old.to_string());
        } else {
            rest.push(word);
        }
    }
    Ok((rest, was))
}

/// A job name from its line: the command's first word (its file name, letters, digits, `._-`
/// only, at most 40) and 8 hex digits of a hash of the schedule and command (a name-based UUID,
/// the same on every replica). Editing the line changes it.
pub fn derived_name(schedule: &str, command: &str) -> String {
    let first = command.split_whitespace().next().unwrap_or("job");
    let base: String = first
        .rsplit('/')
        .next()
        .unwrap_or(first)
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        .take(40)
        .collect();
    let base = if base.is_empty() { "job".into() } else { base };
    let line = format!("{schedule}\n{command}");
    let id = uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, line.as_bytes());
    format!("{base}-{}", &id.simple().to_string()[..8])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn global() -> GlobalArgs {
        Cli::try_parse_from(["anarchon", "list"]).unwrap().global
    }

    const FILE: &str = r#"
# A service's crontab, as supercronic reads it.
SHELL=/bin/sh
GREETING="hello there"

# anarchon: --job sync --overlap replace --timeout 10m
*/5 * * * * /usr/bin/sync.sh --all
CRON_TZ=Europe/Berlin
30 2 * * * /opt/report.sh > /tmp/report.log 2>&1
*/10 * * * * * echo every ten seconds
@hourly /usr/local/bin/rotate
"#;

    #[test]
    fn a_crontab_reads_into_run_settings_line_by_line() {
        let tab = read(FILE, &global()).unwrap();
        let jobs = &tab.jobs;
        assert_eq!(jobs.len(), 4);
        let sync = &jobs[0];
        assert_eq!((sync.line, sync.name.as_str()), (7, "sync"));
        assert_eq!(sync.naming, Naming::Annotated);
        assert_eq!(sync.schedule, "*/5 * * * *");
        assert_eq!(sync.command, "/usr/bin/sync.sh --all");
        assert_eq!(sync.tz, "UTC");
        assert_eq!(
            sync.run.claim.overlap,
            crate::strategy::OverlapPolicy::Replace
        );
        assert_eq!(
            sync.run.runner.command.timeout,
            Some(std::time::Duration::from_secs(600))
        );
        assert!(sync.run.runner.command.shell);
        assert!(
            sync.env
                .contains(&("GREETING".to_string(), "hello there".to_string()))
        );
        let report = &jobs[1];
        assert_eq!(report.tz, "Europe/Berlin");
        assert_eq!(report.naming, Naming::Derived);
        assert!(report.name.starts_with("report.sh-"), "{}", report.name);
        assert_eq!(report.command, "/opt/report.sh > /tmp/report.log 2>&1");
        // Six fields read first: seconds.
        assert_eq!(jobs[2].schedule, "*/10 * * * * *");
        assert_eq!(jobs[2].command, "echo every ten seconds");
        assert_eq!(jobs[3].schedule, "@hourly");
        assert!(jobs[3].name.starts_with("rotate-"));
    }

    #[test]
    fn a_derived_name_is_the_same_everywhere_and_changes_with_the_line() {
        let a = derived_name("*/5 * * * *", "/usr/bin/sync.sh");
        assert_eq!(a, derived_name("*/5 * * * *", "/usr/bin/sync.sh"));
        assert_ne!(a, derived_name("*/6 * * * *", "/usr/bin/sync.sh"));
        assert_eq!(a.len(), "sync.sh-".len() + 8);
        assert!(derived_name("* * * * *", "'{weird}'").starts_with("weird-"));
        assert!(derived_name("* * * * *", "{}").starts_with("job-"));
    }

    #[test]
    fn every_bad_line_is_named_at_once() {
        let text = "\
* * * * *
# anarchon: --job a --schedule '* * * * *'
* * * * * true
# anarchon: --job b
# anarchon: --timeout 1m
* * * * * true
61 * * * * true
# anarchon: --job dup
* * * * * true
# anarchon: --job dup
*/2 * * * * true
# anarchon: --job 'unbalanced
* * * * * true
# anarchon: --nope
* * * * * true
# anarchon: --job last
";
        let errors = read(text, &global()).unwrap_err();
        let lines: Vec<usize> = errors.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![1, 3, 5, 7, 11, 12, 15, 16], "{errors:#?}");
        assert!(errors[1].message.contains("--schedule"), "{}", errors[1]);
        assert!(errors[2].message.contains("line 4"), "{}", errors[2]);
        assert!(errors[4].message.contains("line 9"), "{}", errors[4]);
        assert!(errors[5].message.contains("unbalanced"), "{}", errors[5]);
        assert!(errors[6].message.contains("--nope"), "{}", errors[6]);
        assert!(errors[7].message.contains("no job line"), "{}", errors[7]);
    }

    #[test]
    fn an_annotation_carries_flags_not_a_command() {
        let text = "# anarchon: --job a -- rm -rf /\n* * * * * true\n";
        let errors = read(text, &global()).unwrap_err();
        assert_eq!(errors[0].line, 2);
        assert!(errors[0].message.contains("not a command"), "{}", errors[0]);
        let text = "# anarchon: --job a --timeout 10m --max-late=5m\n* * * * * true\n";
        assert_eq!(read(text, &global()).unwrap().jobs[0].name, "a");
    }

    #[test]
    fn env_lines_are_read_as_vixie_cron_reads_them() {
        assert_eq!(
            env_line("A = 'b c'"),
            Some(("A".to_string(), "b c".to_string()))
        );
        assert_eq!(
            env_line("A=\"x"),
            Some(("A".to_string(), "\"x".to_string()))
        );
        assert_eq!(env_line("* * * * * A=1 cmd"), None);
        assert_eq!(env_line("@daily X=1"), None);
    }

    fn first_error(text: &str) -> String {
        let errors = read(text, &global()).unwrap_err();
        errors[0].to_string()
    }

    #[test]
    fn mistakes_that_would_be_ignored_are_refused_with_their_line() {
        // An annotation without its colon, or capitalised: its flags would be lost.
        let e = first_error("# anarchon --job x --lease 3s\n* * * * * /bin/x\n");
        assert!(
            e.starts_with("line 1:") && e.contains("looks like an annotation"),
            "{e}"
        );
        let e = first_error("# Anarchon: --job x\n* * * * * /bin/x\n");
        assert!(e.contains("looks like an annotation"), "{e}");
        // A comment that merely mentions anarchon is a comment.
        assert!(read("# anarchon runs these\n* * * * * /bin/x\n", &global()).is_ok());
        // The daemon's flags are not a job's.
        let e = first_error("# anarchon: --job x --prefix other:\n* * * * * /bin/x\n");
        assert!(e.contains("--prefix, a flag of the daemon"), "{e}");
        let e = first_error("# anarchon: --job x --redis=redis://127.0.0.1:1\n* * * * * /bin/x\n");
        assert!(e.contains("--redis, a flag of the daemon"), "{e}");
        let e = first_error("# anarchon: --help\n* * * * * /bin/x\n");
        assert!(e.contains("--help and --version are not"), "{e}");
        // A 7th (year) field would run `* echo x` as the command.
        let e = first_error("* * * * * * * echo x\n");
        assert!(e.contains("no year field"), "{e}");
        // A schedule that never fires.
        let e = first_error("0 0 31 2 * /bin/x\n");
        assert!(e.contains("never fires"), "{e}");
    }

    /// Every flag of `run` an annotation may carry, and where it takes effect under the daemon,
    /// which takes each job's `RunSettings` whole (`daemon::supervisor::start_job`): a flag of
    /// `run` is here, refused ([`NOT_UNDER_THE_DAEMON`], [`LINE_OWNED`]) or the daemon's own
    /// (global). A new flag of `run` fails this test until it is put in one of them.
    const TAKES_EFFECT: [&str; 43] = [
        "--job",             // the job's name
        "--tz",              // the schedule's zone
        "--max-late",        // take_slot
        "--jitter",          // take_slot
        "--catch-up",        // the daemon's start and each slot (catch_up)
        "--catch-up-policy", // catch_up
        "--catch-up-max",    // catch_up
        "--wait-replicas",   // the runner's claim and result
        "--wait-timeout",    // the runner
        "--if-unreplicated", // the runner
        "--strategy",        // the claim
        "--window",          // the script strategy's claim
        "--idmp-duration",   // the idmp strategy
        "--idmp-max-size",   // the idmp strategy
        "--lease",           // the claim and heartbeats
        "--max-attempts",    // the claim; the daemon's stand-by
        "--overlap",         // the claim
        "--runner",          // the claim's runner name
        "--history-size",    // the claim's trimming
        "--history-ttl",     // the claim's trimming
        "--no-backup",       // the daemon's stand-by
        "--backup-for",      // the stand-by
        "--on-failure",      // the runner, after the run
        "--on-failure-timeout",
        "--ping",         // the runner
        "--ping-timeout", // the runner
        "--heartbeat",    // the runner
        "--on-lease-lost",
        "--kill-after",     // the runner's stop
        "--timeout",        // the runner
        "--shell",          // how the line's command runs (the line sets it anyway)
        "--leave-children", // the runner's end
        "--keep-stdout",    // the runner's record
        "--live-output",    // the runner
        "--live-output-lines",
        "--retries", // the runner's record, and its wait for the retry
        "--retry-delay",
        "--retry-backoff",
        "--retry-max-delay",
        "--retry-on",
        "--limit",    // the runner, between its claim and its command
        "--exclude",  // take_in_turn, before the claim
        "--calendar", // take_in_turn, read at each slot
    ];

    #[test]
    fn every_flag_of_run_takes_effect_or_is_refused() {
        use clap::CommandFactory;
        let cli = Cli::command();
        let run = cli.find_subcommand("run").expect("run");
        let refused: Vec<&str> = NOT_UNDER_THE_DAEMON
            .iter()
            .map(|(long, _, _)| *long)
            .chain(LINE_OWNED)
            .collect();
        for arg in run.get_arguments().filter(|a| !a.is_global_set()) {
            let Some(long) = arg.get_long().map(|l| format!("--{l}")) else {
                continue; // the command, after `--`
            };
            if long == "--help" {
                continue;
            }
            assert!(
                TAKES_EFFECT.contains(&long.as_str()) || refused.contains(&long.as_str()),
                "{long}: a flag of `run` that an annotation neither refuses nor lists as taking effect under the daemon"
            );
        }
        for (long, short, _) in NOT_UNDER_THE_DAEMON {
            let e = first_error(&format!("# anarchon: --job x {long}\n* * * * * /bin/x\n"));
            assert!(
                e.contains("means nothing under `anarchon cron`"),
                "{long}: {e}"
            );
            if let Some(short) = short {
                let e = first_error(&format!("# anarchon: --job x {short}\n* * * * * /bin/x\n"));
                assert!(e.contains(long), "{short}: {e}");
            }
        }
        // The daemon's short flags are the daemon's too.
        let e = first_error("# anarchon: --job x -p 6380\n* * * * * /bin/x\n");
        assert!(e.contains("-p, a flag of the daemon"), "{e}");
        let e = first_error("# anarchon: --job x -n2\n* * * * * /bin/x\n");
        assert!(e.contains("a flag of the daemon"), "{e}");
    }

    #[test]
    fn cron_s_mail_settings_read_with_a_warning_of_what_to_use() {
        let tab = read(
            "MAILTO=ops@example.com\nRANDOM_DELAY=5\nPATH=/bin\n* * * * * /bin/x\n",
            &global(),
        )
        .unwrap();
        let lines: Vec<(usize, bool)> = tab
            .warnings
            .iter()
            .map(|w| (w.line, w.message.contains("hint:")))
            .collect();
        assert_eq!(lines, [(1, true), (2, true)]);
        assert!(tab.warnings[0].message.contains("--on-failure"));
        assert!(tab.warnings[1].message.contains("--jitter"));
    }

    #[test]
    fn aliases_read_as_vixie_cron_reads_them_and_shell_runs_the_command() {
        let tab = read(
            "@annually /bin/a\n@midnight /bin/b\nSHELL=/bin/bash\n@weekly echo $BASH_VERSION\n",
            &global(),
        )
        .unwrap();
        assert_eq!(tab.jobs.len(), 3);
        assert_eq!(tab.jobs[0].schedule, "@annually");
        let first = tab.jobs[0].run.schedule.as_ref().unwrap();
        assert_eq!(
            first.next_after(1_796_220_300_000),
            Some(1_798_761_600_000) // 2027-01-01T00:00:00Z
        );
        // Under SHELL=/bin/bash the command runs by bash, not /bin/sh.
        let spec = &tab.jobs[2].run.runner.command;
        assert!(!spec.shell);
        assert_eq!(
            spec.argv,
            ["/bin/bash", "-c", "echo $BASH_VERSION"].map(String::from)
        );
        assert!(tab.jobs[0].run.runner.command.shell);
        let e = first_error("@reboot /bin/x\n");
        assert!(e.contains("no fire times") && !e.contains("(^)"), "{e}");
    }

    #[test]
    fn was_names_the_job_s_old_names_and_is_no_flag_of_run() {
        let text = "# anarchon: --job b --was a --was=a2 --overlap allow\n* * * * * /bin/x\n";
        let tab = read(text, &global()).unwrap();
        assert_eq!(tab.jobs[0].run.lineage, ["a", "a2"]);
        assert_eq!(tab.jobs[0].naming, Naming::Annotated);
        let without = read("# anarchon: --job b\n* * * * * /bin/x\n", &global()).unwrap();
        assert!(without.jobs[0].run.lineage.is_empty());
        assert_ne!(tab.jobs[0].fingerprint, without.jobs[0].fingerprint);
        let e = first_error("# anarchon: --job b --was b\n* * * * * /bin/x\n");
        assert!(e.contains("the job's own name"), "{e}");
        let e = first_error("# anarchon: --job b --was\n* * * * * /bin/x\n");
        assert!(e.contains("--was OLD"), "{e}");
        let e = first_error("# anarchon: --job b --was a{b}\n* * * * * /bin/x\n");
        assert!(e.contains("--was"), "{e}");
    }
}
