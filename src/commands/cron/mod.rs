//! `anarchon cron FILE`: every job of a crontab file, run by one long-running process in each
//! replica of a service ([`daemon`]); `--check` reads the file and shows what it would run.

mod daemon;
mod health;
mod lineage;
mod probe;
mod shared;

use serde::Serialize;

use crate::commands::Context;
use crate::error::{Error, ExitCode, Result};
use crate::settings::cron::{CheckSettings, CronSettings};
use crate::settings::crontab::{self, CronJob, Crontab, LineError, Naming};
use crate::time::rfc3339;

pub async fn execute(settings: &CronSettings, ctx: &Context) -> Result<ExitCode> {
    let tab = match read_file(settings, ctx) {
        Ok(tab) => tab,
        Err(errors) => {
            report_errors(settings, ctx, &errors);
            return Ok(ExitCode::Usage);
        }
    };
    say_warnings(&settings.file, &tab);
    match settings.check {
        Some(check) => {
            show(settings, ctx, &tab, check);
            Ok(ExitCode::Ok)
        }
        None => daemon::run(settings, ctx, tab).await,
    }
}

/// Reads and parses the crontab, every error with its line (a file that cannot be read: line 0).
pub fn read_file(
    settings: &CronSettings,
    ctx: &Context,
) -> std::result::Result<Crontab, Vec<LineError>> {
    jobs_of(read_text(&settings.file), ctx)
}

/// The crontab's text, or why it cannot be read.
pub fn read_text(file: &std::path::Path) -> std::result::Result<String, String> {
    std::fs::read_to_string(file).map_err(|e| format!("cannot read the file: {e}"))
}

/// The jobs of a crontab's text (as [`read_text`] gave it), every error with its line.
pub fn jobs_of(
    text: std::result::Result<String, String>,
    ctx: &Context,
) -> std::result::Result<Crontab, Vec<LineError>> {
    let text = text.map_err(|message| vec![LineError { line: 0, message }])?;
    let tab = crontab::read(&text, &ctx.global)?;
    if tab.jobs.is_empty() {
        // A daemon with nothing to run is a mistake; and a reload that finds no job is a file
        // caught empty (truncated, being written): taking it would stop every job of the fleet.
        return Err(vec![LineError {
            line: 0,
            message: "has no job line (a schedule and a command): there is nothing to run".into(),
        }]);
    }
    Ok(tab)
}

/// The crontab's warnings (lines that read but are not acted on, `MAILTO=`), on stderr, as
/// compilers give theirs: at start, on a reload and with `--check`.
pub fn say_warnings(file: &std::path::Path, tab: &Crontab) {
    for line in describe_errors(file, &tab.warnings) {
        crate::errln!("warning: {line}");
    }
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

fn report_errors(settings: &CronSettings, ctx: &Context, errors: &[LineError]) {
    if ctx.out.json {
        let errors: Vec<_> = errors
            .iter()
            .map(|e| serde_json::json!({"line": e.line, "message": e.message}))
            .collect();
        ctx.out.print_json(&serde_json::json!({
            "file": settings.file.display().to_string(),
            "errors": errors,
        }));
    }
    for line in describe_errors(&settings.file, errors) {
        crate::errln!("error: {line}");
    }
}

/// One job as `--check --json` shows it.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct CheckedJob {
    line: usize,
    job: String,
    /// annotated (`--job` in its `# anarchon:` line) or derived (from the line: editing the line
    /// renames the job).
    naming: String,
    schedule: String,
    tz: String,
    command: String,
    /// The next fire times by this machine's clock, RFC 3339 in UTC.
    next: Vec<String>,
}

/// `cron --check --json`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Checked {
    file: String,
    jobs: Vec<CheckedJob>,
    /// Lines that read but are not acted on (`MAILTO=`), each `FILE:LINE: why`.
    warnings: Vec<String>,
}

fn checked(job: &CronJob, next: usize) -> CheckedJob {
    let now = chrono::Utc::now().timestamp_millis();
    let mut times = Vec::new();
    if let Some(schedule) = &job.run.schedule {
        let mut at = now;
        while times.len() < next {
            let Some(t) = schedule.next_after(at) else {
                break;
            };
            times.push(rfc3339(t));
            at = t;
        }
    }
    CheckedJob {
        line: job.line,
        job: job.name.clone(),
        naming: naming_word(job.naming).to_string(),
        schedule: job.schedule.clone(),
        tz: job.tz.clone(),
        command: job.command.clone(),
        next: times,
    }
}

pub fn naming_word(naming: Naming) -> &'static str {
    match naming {
        Naming::Annotated => "annotated",
        Naming::Derived => "derived",
    }
}

fn show(settings: &CronSettings, ctx: &Context, tab: &Crontab, check: CheckSettings) {
    let jobs: Vec<CheckedJob> = tab.jobs.iter().map(|j| checked(j, check.next)).collect();
    if ctx.out.json {
        ctx.out.print_json(&Checked {
            file: settings.file.display().to_string(),
            jobs,
            warnings: describe_errors(&settings.file, &tab.warnings),
        });
        return;
    }
    let rows = jobs
        .iter()
        .map(|j| {
            vec![
                j.line.to_string(),
                match j.naming.as_str() {
                    "derived" => format!("{} (derived)", j.job),
                    _ => j.job.clone(),
                },
                j.schedule.clone(),
                j.tz.clone(),
                j.next.join("\n"),
            ]
        })
        .collect();
    crate::outln!(
        "{}",
        ctx.out
            .table(&["LINE", "JOB", "SCHEDULE", "TZ", "NEXT RUNS (UTC)"], rows)
    );
    let derived = jobs.iter().filter(|j| j.naming == "derived").count();
    if derived > 0 {
        crate::errln!(
            "{} reads: {} job(s); {derived} with a name derived from the line: editing such a line renames its job (and starts its history anew); name it with `# anarchon: --job NAME` above it",
            settings.file.display(),
            jobs.len()
        );
    } else {
        crate::errln!("{} reads: {} job(s)", settings.file.display(), jobs.len());
    }
}

/// The JSON Schema of this command's `--json` output (docs/schemas/, checked by tests/it/schemas.rs).
pub(crate) fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![("cron-check", crate::commands::output_schema::<Checked>())]
}

/// A usage error for a crontab that does not read (the daemon's start).
pub fn unreadable(file: &std::path::Path, errors: &[LineError]) -> Error {
    Error::usage(format!(
        "{} does not read:\n  {}",
        file.display(),
        describe_errors(file, errors).join("\n  ")
    ))
}
