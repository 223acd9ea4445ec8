//! `anarchon logs`: what a run left behind, for the "what failed?" question: the stored stderr
//! tail, exit code or signal, timeout and duration of a job's attempts. The newest failure by
//! default, like `gh run view --log-failed`.

use serde::Serialize;

use crate::commands::Context;
use crate::error::{Error, ExitCode, Result};
use crate::settings::read::LogsSettings;
use crate::store::history::{HistoryEntry, HistoryFilter, read_history};
use crate::time::humanize;

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct LogsReport<'a> {
    job: &'a str,
    #[serde(flatten)]
    clock: crate::output::ServerClock,
    entries: Vec<HistoryEntry>,
}

/// A failed attempt, or an interrupted one that `--overlap replace` did not stop on purpose.
fn is_failure(e: &HistoryEntry) -> bool {
    match e.status.as_str() {
        "failed" => true,
        "interrupted" => !crate::store::read::replaced(&e.status, &e.result),
        _ => false,
    }
}

pub async fn execute(settings: &LogsSettings, ctx: &Context) -> Result<ExitCode> {
    let (mut conn, check, keys) = ctx.open_job(&settings.job, settings.layout).await?;
    let now = check.server_now_ms;
    let slot = settings.slot.map(|s| s.resolve(now));
    // The newest failure unless a slot or a count is given: a failed run, or one interrupted (its
    // holder died, its lease was lost, an operator released it), as health counts failures; not
    // one `--overlap replace` stopped on purpose. Ended attempts only (a run in progress has no
    // result yet).
    let newest_failure = slot.is_none() && settings.last.is_none();
    let filter = HistoryFilter {
        since: slot,
        status: None,
        last: match (slot, settings.last) {
            (Some(_), _) => 10_000,
            (None, Some(n)) => n as usize,
            // The whole history (about 1000 runs by default) to find the newest failure.
            (None, None) => 10_000,
        } + 1,
    };
    let mut entries: Vec<HistoryEntry> = read_history(&mut conn, &keys, &filter, now)
        .await?
        .into_iter()
        .filter(|e| e.status != "running")
        .filter(|e| slot.is_none_or(|s| e.slot == s))
        .filter(|e| !newest_failure || is_failure(e))
        .collect();
    entries.truncate(if slot.is_some() {
        usize::MAX
    } else {
        settings.last.unwrap_or(1) as usize
    });
    if entries.is_empty() {
        return Err(Error::NotFound(
            match slot {
                Some(s) => format!(
                    "{} @ {} has no ended attempt\n  hint: `anarchon history {}` lists its runs",
                    settings.job,
                    crate::time::rfc3339(s),
                    settings.job
                ),
                None if settings.last.is_none() => format!(
                    "{} has no failed or interrupted run in its history\n  hint: `anarchon logs {} --last 5` shows the newest attempts whatever their status",
                    settings.job, settings.job
                ),
                None => format!("{} has no ended attempt", settings.job),
            }
            .into(),
        ));
    }
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
        print_entry(ctx, &settings.job, e, now);
    }
    Ok(ExitCode::Ok)
}

fn print_entry(ctx: &Context, job: &str, e: &HistoryEntry, now: i64) {
    let r = &e.result;
    let how = match (
        r.get("exit_code").and_then(|v| v.as_i64()),
        r.get("signal").and_then(|v| v.as_i64()),
    ) {
        _ if r.get("timed_out").and_then(|v| v.as_bool()) == Some(true) => {
            "timed out (--timeout)".to_string()
        }
        (Some(code), _) => format!("exit {code}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => match r.get("reason").and_then(|v| v.as_str()) {
            Some(reason) => reason.to_string(),
            None => String::new(),
        },
    };
    let took = e.duration_ms.map_or(String::new(), |d| {
        format!(" after {}", humanize(d.max(0) as u64))
    });
    crate::outln!(
        "{} @ {}, attempt {} on {}: {}{}{took}, ended {}",
        job,
        e.slot_time,
        e.attempt.map_or("-".to_string(), |a| a.to_string()),
        e.runner,
        ctx.out
            .paint(&e.status, crate::output::status_tone(&e.status)),
        if how.is_empty() {
            String::new()
        } else {
            format!(", {how}")
        },
        ctx.out.when(e.ended_at, now),
    );
    for (key, label) in [
        ("spawn_error", "could not start"),
        ("released_by", "released by"),
    ] {
        if let Some(v) = r.get(key).and_then(|v| v.as_str()) {
            crate::outln!("  {label}: {v}");
        }
    }
    if r.get("lease_lost").and_then(|v| v.as_bool()) == Some(true) {
        crate::outln!("  the lease was lost while it ran");
    }
    // Kept only with `run --keep-stdout`.
    if let Some(tail) = r.get("stdout_tail").and_then(|v| v.as_str()) {
        crate::outln!("  stdout (its last 4 KiB):");
        for line in tail.lines() {
            crate::outln!("    {line}");
        }
    }
    match r.get("stderr_tail").and_then(|v| v.as_str()) {
        Some(tail) if !tail.is_empty() => {
            crate::outln!("  stderr (its last 4 KiB):");
            for line in tail.lines() {
                crate::outln!("    {line}");
            }
        }
        _ if r.is_object() && (r.get("exit_code").is_some() || r.get("signal").is_some()) => {
            crate::outln!("  (no stderr)")
        }
        _ if !r.is_null() && r.get("reason").is_none() => crate::outln!("  result: {r}"),
        _ => {}
    }
}

/// The JSON Schema of this command's `--json` output (docs/schemas/, checked by tests/it/schemas.rs).
pub(crate) fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![(
        "logs",
        crate::commands::output_schema::<LogsReport<'static>>(),
    )]
}
