//! `anarchon cron FILE`: every job of a crontab file, run by one long-running process in each
//! replica of a service ([`crate::daemon`]); `--check` reads the file and shows what it would run.

use serde::Serialize;

use crate::commands::Context;
use crate::daemon::say_warnings;
use crate::error::{ExitCode, Result};
use crate::settings::cron::{CheckSettings, CronSettings, DaemonSettings};
use crate::settings::crontab::{CronJob, Crontab, LineError, Naming, describe_errors};
use crate::time::rfc3339;

pub async fn execute(settings: &CronSettings, ctx: &Context) -> Result<ExitCode> {
    if settings.check.is_none() {
        // The daemon's log from its first line: the crontab's warnings are records of it too.
        crate::lines::set_daemon_log(settings.log_format, settings.verbose);
    }
    let tab = match settings.crontab.read_file(&settings.file) {
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
        None => {
            let daemon = DaemonSettings {
                cron: settings.clone(),
                connect: ctx.global.connect_options()?,
                prefix: ctx.prefix().to_string(),
                owns_the_process: true,
                trace: ctx.trace(&crate::strategy::default_runner()),
            };
            crate::daemon::run(daemon, tab, std::future::pending()).await
        }
    }
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
    /// Its earlier names (`--was OLD`): each slot is claimed under them first.
    was: Vec<String>,
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
        was: job.run.lineage.clone(),
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
                match (j.naming.as_str(), j.was.is_empty()) {
                    ("derived", _) => format!("{} (derived)", j.job),
                    (_, false) => format!("{} (was {})", j.job, j.was.join(", ")),
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
    vec![
        ("cron-check", crate::commands::output_schema::<Checked>()),
        // A record of the daemon's log, `--log-format json` (one a line).
        (
            "cron-log",
            crate::commands::output_schema::<crate::lines::log::Record>(),
        ),
    ]
}
