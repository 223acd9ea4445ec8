//! `anarchon wait JOB`: waits for a run to end and exits with how it ended, as `gh run watch
//! --exit-status` does for a CI run, so a script or a person can chain on it (`anarchon wait
//! billing && notify`). It only reads: the store is read every `--interval`.

use std::io::IsTerminal;
use std::time::Instant;

use crate::commands::Context;
use crate::commands::shared::awaited::{Seen, exit_status_of, look};
use crate::error::{ExitCode, ExitStatus, Result};
use crate::settings::read::WaitSettings;
use crate::store::format;
use crate::store::history::HistoryEntry;
use crate::time::humanize;

/// `wait --json`: how the awaited run ended.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
struct WaitReport {
    job: String,
    /// Its newest attempt, as `history` shows it.
    run: HistoryEntry,
    /// What `wait` exits with: 0 finished or skipped; the command's exit code when it failed with
    /// one, else 1.
    exit_code: i32,
}
pub async fn execute(settings: &WaitSettings, ctx: &Context) -> Result<ExitStatus> {
    let (mut conn, check, keys) = ctx.open_job(&settings.job, settings.layout).await?;
    let started = Instant::now();
    let mut slot = settings.slot.map(|s| s.resolve(check.server_now_ms));
    let mut told = false;
    let mut told_expired = false;
    loop {
        let check = format::check_for_read(&mut conn, ctx.prefix()).await?;
        let seen = look(&mut conn, &keys, &mut slot, check.server_now_ms).await?;
        match seen {
            Seen::Ended(entry) => return Ok(report(ctx, &settings.job, &entry)),
            Seen::Waiting(entry) => {
                if !told && !ctx.out.json && std::io::stderr().is_terminal() {
                    told = true;
                    crate::errln!("{}", waiting_line(&settings.job, slot, entry.as_ref()));
                }
                // A holder gone with nobody standing by: the wait could be long, so say why, once.
                if let Some(e) = entry.as_ref().filter(|e| e.status == "expired")
                    && !told_expired
                    && !ctx.out.json
                {
                    told_expired = true;
                    crate::errln!(
                        "anarchon: attempt {} on {} lost its lease and nobody has taken the run over yet: it goes on when a host claims it (a backup, the job's next run), or ends with `anarchon release {} --slot {}`",
                        e.attempt.map_or("-".to_string(), |a| a.to_string()),
                        e.runner,
                        settings.job,
                        e.slot
                    );
                }
            }
        }
        if settings.timeout.is_some_and(|t| started.elapsed() >= t) {
            crate::errln!(
                "error: {} @ {} has not ended after {} (--timeout)",
                settings.job,
                slot.map_or("-".to_string(), crate::time::rfc3339),
                humantime::format_duration(settings.timeout.unwrap_or_default())
            );
            return Ok(ExitCode::Timeout.into());
        }
        tokio::time::sleep(settings.interval).await;
    }
}
fn waiting_line(job: &str, slot: Option<i64>, entry: Option<&HistoryEntry>) -> String {
    let slot = slot.map_or("its next run".to_string(), crate::time::rfc3339);
    match entry {
        Some(e) => format!(
            "waiting for {job} @ {slot}: {} as attempt {} on {}",
            e.status,
            e.attempt.map_or("-".to_string(), |a| a.to_string()),
            e.runner
        ),
        None => format!("waiting for {job} @ {slot}: not claimed yet"),
    }
}

/// Prints how the run ended and returns the exit code: 0 finished or skipped; the command's exit
/// code when it failed with one, else 1.
fn report(ctx: &Context, job: &str, e: &HistoryEntry) -> ExitStatus {
    let status = exit_status_of(e);
    let code = status.code();
    if ctx.out.json {
        ctx.out.print_json(&WaitReport {
            job: job.to_string(),
            run: e.clone(),
            exit_code: code,
        });
    } else {
        crate::outln!(
            "{job} @ {}: {} as attempt {} on {}{}{}",
            e.slot_time,
            e.status,
            e.attempt.map_or("-".to_string(), |a| a.to_string()),
            e.runner,
            crate::output::how_it_ended(&e.result).map_or(String::new(), |how| format!(" ({how})")),
            e.duration_ms.map_or(String::new(), |d| format!(
                " after {}",
                humanize(d.max(0) as u64)
            ))
        );
    }
    status
}

/// The JSON Schema of this command's `--json` output (docs/schemas/, checked by tests/it/schemas.rs).
pub(crate) fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![("wait", crate::commands::output_schema::<WaitReport>())]
}
