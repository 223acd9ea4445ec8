//! `anarchon inspect JOB`: everything the store knows about one job.

use std::collections::HashMap;

use serde::Serialize;

use crate::cli::{InspectArgs, StrategyName};
use crate::commands::Context;
use crate::connection::Connection;
use crate::error::{Error, ExitCode, Result};
use crate::store::discover::{Layout, find_jobs};
use crate::store::keys::hash_slot;
use crate::store::read::{self, KeyInfo, ResultEntry, RunEntry};
use crate::store::state::{RUN_FIELDS, RunState, decode_state};
use crate::store::{ClaimKeys, LeaseKeys, format};
use crate::time::{humanize, rfc3339};

/// `inspect --json`.
#[derive(Debug, Serialize)]
pub struct JobDetail {
    pub job: String,
    pub layout: Layout,
    pub prefix: String,
    /// The store format key's value (null when absent).
    pub format: Option<u32>,
    pub server_time: i64,
    /// Redis Cluster hash slot of the job's lease keys.
    pub hash_slot: u16,
    pub keys: Vec<KeyInfo>,
    /// Runs in progress (lease layout).
    pub active: Vec<ActiveRun>,
    /// The newest entries of `:runs`, newest first, each with its result when there is one.
    pub runs: Vec<RunWithResult>,
}

#[derive(Debug, Serialize)]
pub struct ActiveRun {
    #[serde(flatten)]
    pub state: RunState,
    pub slot_time: String,
    pub lease_end_time: String,
    /// Milliseconds the lease still lives by the server's clock (negative: expired).
    pub lease_left_ms: i64,
}

#[derive(Debug, Serialize)]
pub struct RunWithResult {
    #[serde(flatten)]
    pub entry: RunEntry,
    pub slot_time: String,
    pub result: Option<serde_json::Value>,
}

pub async fn execute(args: InspectArgs, ctx: &Context) -> Result<ExitCode> {
    let lease_keys = ctx.lease_keys(&args.job)?;
    let claim_keys = ClaimKeys::new(ctx.prefix(), &args.job);
    let mut conn = ctx.connect().await?;
    let check = format::check_for_read(&mut conn, ctx.prefix()).await?;
    let (layout, keys) = locate_job(&mut conn, ctx.prefix(), &args.job, args.strategy).await?;
    let now = check.server_now_ms;
    let (active, runs) = match layout {
        Layout::Lease => (
            active_runs_for(&mut conn, &lease_keys, now).await?,
            runs_with_results(
                &mut conn,
                &[&lease_keys.runs],
                &lease_keys.results,
                args.last,
            )
            .await?,
        ),
        Layout::ClaimOnly => (
            Vec::new(),
            runs_with_results(
                &mut conn,
                &[&claim_keys.runs, &claim_keys.manual],
                &claim_keys.results,
                args.last,
            )
            .await?,
        ),
    };
    let detail = JobDetail {
        job: args.job.clone(),
        layout,
        prefix: ctx.prefix().to_string(),
        format: check.format,
        server_time: now,
        hash_slot: hash_slot(&lease_keys.state),
        keys,
        active,
        runs,
    };
    if ctx.out.json {
        ctx.out.print_json(&detail);
    } else {
        print_text(ctx, &detail);
    }
    Ok(ExitCode::Ok)
}

/// Which layout of `job` to read, with its keys' types and sizes: the one `strategy` names, else
/// whichever exists (lease first). Refuses keys of the wrong type, and a job with no keys.
pub async fn locate_job(
    conn: &mut Connection,
    prefix: &str,
    job: &str,
    strategy: Option<StrategyName>,
) -> Result<(Layout, Vec<KeyInfo>)> {
    let lease_keys = LeaseKeys::new(prefix, job);
    let claim_keys = ClaimKeys::new(prefix, job);
    let mut all: Vec<&str> = lease_keys.all().to_vec();
    all.extend(claim_keys.all());
    let infos = read::key_infos(conn, &all).await?;
    read::check_types(&infos[..5], &LeaseKeys::TYPES)?;
    read::check_types(&infos[5..], &ClaimKeys::TYPES)?;
    let exists = |infos: &[KeyInfo]| infos.iter().any(|i| i.kind != "none");
    let layout = match strategy {
        Some(StrategyName::Lease) => Layout::Lease,
        Some(_) => Layout::ClaimOnly,
        None if exists(&infos[..5]) => Layout::Lease,
        None => Layout::ClaimOnly,
    };
    let (mine, other) = match layout {
        Layout::Lease => (&infos[..5], &infos[5..]),
        Layout::ClaimOnly => (&infos[5..], &infos[..5]),
    };
    if !exists(mine) {
        return Err(not_found(conn, prefix, job).await);
    }
    // Keys of the other layout are shown too: an operator should see everything the job holds.
    let mut keys = mine.to_vec();
    keys.extend(other.iter().filter(|i| i.kind != "none").cloned());
    Ok((layout, keys))
}

/// A "no such job" error that suggests the nearest names.
pub async fn not_found(conn: &mut Connection, prefix: &str, job: &str) -> Error {
    let mut near: Vec<(f64, String)> = match find_jobs(conn, prefix, "*").await {
        Ok(jobs) => jobs
            .into_iter()
            .map(|j| (strsim::jaro_winkler(job, &j.name), j.name))
            .filter(|(score, _)| *score > 0.7)
            .collect(),
        Err(_) => Vec::new(),
    };
    near.sort_by(|a, b| b.0.total_cmp(&a.0));
    near.dedup_by(|a, b| a.1 == b.1);
    let hint = if near.is_empty() {
        "  hint: `anarchon list` shows the jobs under this prefix; check --prefix".to_string()
    } else {
        let names: Vec<String> = near.into_iter().take(3).map(|(_, n)| n).collect();
        format!("  hint: did you mean {}?", names.join(", "))
    };
    Error::NotFound(format!("no job {job:?} under prefix {prefix:?}\n{hint}"))
}

pub async fn active_runs_for(
    conn: &mut Connection,
    keys: &LeaseKeys,
    now: i64,
) -> Result<Vec<ActiveRun>> {
    let slots: Vec<String> = conn.query(redis::cmd("SMEMBERS").arg(&keys.active)).await?;
    if let Some(bad) = slots.iter().find(|s| s.parse::<i64>().is_err()) {
        return Err(Error::corrupt(
            &keys.active,
            format!("member {bad:?} is not a slot"),
        ));
    }
    if slots.is_empty() {
        return Ok(Vec::new());
    }
    let mut pipe = redis::pipe();
    for slot in &slots {
        let mut cmd = redis::cmd("HMGET");
        cmd.arg(&keys.state);
        for f in RUN_FIELDS {
            cmd.arg(format!("{slot}:{f}"));
        }
        pipe.add_command(cmd);
    }
    let values = read::replies(conn, &pipe).await?;
    let mut pairs = Vec::new();
    for (slot, value) in slots.iter().zip(values) {
        let fields: Vec<Option<String>> = read::decode(&keys.state, value)?;
        for (name, v) in RUN_FIELDS.iter().zip(fields) {
            if let Some(v) = v {
                pairs.push((format!("{slot}:{name}"), v));
            }
        }
    }
    let mut runs: Vec<ActiveRun> = decode_state(&keys.state, &pairs)?
        .into_values()
        .map(|state| ActiveRun {
            slot_time: rfc3339(state.slot),
            lease_end_time: rfc3339(state.lease_end),
            lease_left_ms: state.lease_end - now,
            state,
        })
        .collect();
    runs.sort_by_key(|r| std::cmp::Reverse(r.state.slot));
    Ok(runs)
}

/// The newest `last` entries of the run streams (`:runs`, and `:manual` in the claim-only
/// layout), newest slot first, each with its result from `results_key` when there is one.
pub async fn runs_with_results(
    conn: &mut Connection,
    streams: &[&str],
    results_key: &str,
    last: usize,
) -> Result<Vec<RunWithResult>> {
    let mut entries = Vec::new();
    for stream in streams {
        entries.extend(read::newest_entries(conn, stream, last).await?);
    }
    entries.sort_by_key(|e| std::cmp::Reverse((e.slot, e.attempt)));
    entries.truncate(last);
    let (Some(min), Some(max)) = (
        entries.iter().map(|e| e.slot).min(),
        entries.iter().map(|e| e.slot).max(),
    ) else {
        return Ok(Vec::new());
    };
    let results = read::results_page(conn, results_key, min, max, 0, last * 4 + 100).await?;
    let mut by_run: HashMap<(i64, Option<u32>, String), ResultEntry> = results
        .into_iter()
        .map(|r| ((r.slot, r.attempt, r.token.clone()), r))
        .collect();
    Ok(entries
        .into_iter()
        .map(|mut entry| {
            let result = by_run.remove(&(entry.slot, entry.attempt, entry.token.clone()));
            // Claim-only entries are claims: their status comes with the result, if any yet.
            if entry.status.is_none() {
                entry.status = Some(
                    result
                        .as_ref()
                        .map_or("claimed".to_string(), |r| r.status.clone()),
                );
            }
            if entry.ended_at.is_none() {
                entry.ended_at = result.as_ref().and_then(|r| r.ended_at);
            }
            RunWithResult {
                slot_time: rfc3339(entry.slot),
                entry,
                result: result.map(|r| r.result),
            }
        })
        .collect())
}

/// A short text for a result: the exit code for `run`'s results, else compact JSON.
pub fn result_summary(result: Option<&serde_json::Value>) -> String {
    match result {
        None | Some(serde_json::Value::Null) => "-".to_string(),
        Some(v) if v.get("exit_code").is_some() || v.get("signal").is_some() => {
            match (
                v["exit_code"].as_i64(),
                v["signal"].as_i64(),
                v["timed_out"].as_bool(),
            ) {
                (_, _, Some(true)) => "timed out".to_string(),
                (Some(code), _, _) => format!("exit {code}"),
                (None, Some(sig), _) => format!("signal {sig}"),
                _ => v.to_string(),
            }
        }
        Some(v) => {
            let text = v.to_string();
            if text.chars().count() > 40 {
                format!("{}…", text.chars().take(39).collect::<String>())
            } else {
                text
            }
        }
    }
}

fn print_text(ctx: &Context, d: &JobDetail) {
    let out = &ctx.out;
    println!(
        "job      {} ({} layout, prefix {:?}, store format {})",
        d.job,
        d.layout.as_str(),
        d.prefix,
        d.format.map_or("none".to_string(), |f| f.to_string())
    );
    println!("cluster  hash slot {}", d.hash_slot);
    let key_rows = d
        .keys
        .iter()
        .map(|k| {
            vec![
                k.key.clone(),
                k.kind.clone(),
                k.memory_bytes.map_or("-".to_string(), |b| format!("{b} B")),
            ]
        })
        .collect();
    println!("\n{}", out.table(&["KEY", "TYPE", "MEMORY"], key_rows));

    if d.layout == Layout::Lease {
        println!("\nactive runs: {}", d.active.len());
        if !d.active.is_empty() {
            let rows = d
                .active
                .iter()
                .map(|a| {
                    let left = if a.lease_left_ms >= 0 {
                        format!("{} left", humanize(a.lease_left_ms as u64))
                    } else {
                        format!("expired {} ago", humanize(a.lease_left_ms.unsigned_abs()))
                    };
                    vec![
                        rfc3339(a.state.slot),
                        a.state.attempt.to_string(),
                        out.token(&a.state.token),
                        a.state.runner.clone(),
                        a.lease_end_time.clone(),
                        left,
                        a.state.status.to_string(),
                        a.state.kind.as_str().to_string(),
                    ]
                })
                .collect();
            println!(
                "{}",
                out.table(
                    &[
                        "SLOT",
                        "ATTEMPT",
                        "TOKEN",
                        "RUNNER",
                        "LEASE END",
                        "LEASE",
                        "STATUS",
                        "KIND"
                    ],
                    rows
                )
            );
        }
    }
    println!("\nlast {} runs:", d.runs.len());
    if !d.runs.is_empty() {
        let rows = d
            .runs
            .iter()
            .map(|r| {
                let e = &r.entry;
                let duration = match (e.claimed_at, e.ended_at) {
                    (Some(a), Some(b)) if b >= a => humanize((b - a) as u64),
                    _ => "-".to_string(),
                };
                vec![
                    r.slot_time.clone(),
                    e.attempt.map_or("-".to_string(), |a| a.to_string()),
                    e.status.clone().unwrap_or_else(|| "claimed".into()),
                    e.runner.clone(),
                    out.when(e.ended_at.or(e.claimed_at), d.server_time),
                    duration,
                    result_summary(r.result.as_ref()),
                ]
            })
            .collect();
        println!(
            "{}",
            out.table(
                &[
                    "SLOT", "ATTEMPT", "STATUS", "RUNNER", "ENDED", "TOOK", "RESULT"
                ],
                rows
            )
        );
    }
}
