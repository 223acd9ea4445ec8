//! `anarchon history JOB [--since D|T] [--status S] [--last N]`: attempts and results, newest first.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use crate::commands::Context;
use crate::connection::Connection;
use crate::error::{ExitCode, Result};
use crate::output::result_summary;
use crate::settings::read::HistorySettings;
use crate::store::attempt::{Attempt, late_after_ms};
use crate::store::events::{self, Event};
use crate::store::format;
use crate::store::history::{HistoryEntry, HistoryFilter, read_history};
use crate::store::job::locate_job;
use crate::time::humanize;

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct HistoryReport<'a> {
    job: &'a str,
    #[serde(flatten)]
    clock: crate::output::ServerClock,
    since: Option<i64>,
    entries: Vec<TracedEntry>,
}

/// A history entry with where its run is traced (docs/store-format.md, "Trace context"): the
/// slot's trace ID, and the attempt's span ID (the parent of its command's spans), to look the run
/// up in a tracing backend.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct TracedEntry {
    #[serde(flatten)]
    entry: HistoryEntry,
    /// The run's trace ID (32 hex digits): the same for every attempt of the slot, on any host.
    trace_id: String,
    /// The attempt's span ID (16 hex digits), its command's parent; absent for a skip (no attempt).
    #[serde(skip_serializing_if = "Option::is_none")]
    span_id: Option<String>,
}

impl TracedEntry {
    fn of(prefix: &str, job: &str, entry: HistoryEntry) -> Self {
        use crate::trace::TraceContext;
        let kind = if entry.kind.as_deref() == Some("manual") {
            crate::store::RunKind::Manual
        } else {
            crate::store::RunKind::Scheduled
        };
        let attempt = entry.attempt.filter(|a| *a > 0);
        let context = TraceContext::of_attempt(prefix, job, entry.slot, kind, attempt.unwrap_or(1));
        TracedEntry {
            trace_id: context.trace_id_hex(),
            span_id: attempt.map(|_| context.span_id_hex()),
            entry,
        }
    }
}

/// Whether `entry` was run by `runner`: that runner name, or any runner of that host.
fn ran_on(entry: &HistoryEntry, runner: Option<&str>) -> bool {
    runner.is_none_or(|r| {
        entry.runner == r
            || entry
                .runner
                .strip_prefix(r)
                .is_some_and(|rest| rest.starts_with(':'))
    })
}

pub async fn execute(settings: &HistorySettings, ctx: &Context) -> Result<ExitCode> {
    if settings.job.is_none() {
        return across_jobs(settings, ctx).await;
    }
    let job = settings.job.clone().unwrap_or_default();
    ctx.lease_keys(&job)?;
    let mut conn = ctx.connect().await?;
    let check = format::check_for_read(&mut conn, ctx.prefix()).await?;
    let now = check.server_now_ms;
    let since = settings.since.map(|s| s.resolve(now));

    let (layout, _) = locate_job(&mut conn, ctx.prefix(), &job, settings.layout).await?;
    let keys = check.job_keys(layout, ctx.prefix(), &job);
    let filter = HistoryFilter {
        // The events are kept by when they happened (a run of an old slot may have been claimed
        // late, inside the range): read by count, filtered by time below.
        since: since.filter(|_| !settings.events),
        status: settings.status.clone(),
        last: settings.last,
    };
    let entries: Vec<HistoryEntry> = read_history(&mut conn, &keys, &filter, now)
        .await?
        .into_iter()
        .filter(|e| ran_on(e, settings.runner.as_deref()))
        .collect();
    if settings.events {
        return print_events(ctx, &mut conn, &job, &entries, since, settings.last, now).await;
    }

    if ctx.out.json {
        let entries = entries
            .into_iter()
            .map(|e| TracedEntry::of(ctx.prefix(), &job, e))
            .collect();
        ctx.out.print_json(&HistoryReport {
            job: &job,
            clock: crate::output::ServerClock::at(now),
            since,
            entries,
        });
        return Ok(ExitCode::Ok);
    }
    if entries.is_empty() {
        crate::errln!("no history for {job} matching these filters");
        return Ok(ExitCode::Ok);
    }
    let rows = entries
        .iter()
        .map(|e| {
            let mut row = history_row(ctx, e, now);
            if settings.verbose {
                row.push(crate::output::result_detail(&e.result));
            }
            row
        })
        .collect();
    let mut header = vec![
        "SLOT", "KIND", "ATTEMPT", "STATUS", "RUNNER", "ENDED", "TOOK", "RESULT",
    ];
    if settings.verbose {
        header.push("STDERR (LAST LINE)");
    }
    crate::outln!("{}", ctx.out.table(&header, rows));
    Ok(ExitCode::Ok)
}

/// `history --events --json`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct EventsReport<'a> {
    job: &'a str,
    #[serde(flatten)]
    clock: crate::output::ServerClock,
    since: Option<i64>,
    events: Vec<Event>,
}

/// `history JOB --events`: the attempts read (at most `--last`, since `--since`) as events, with
/// the operators' actions over the same time, newest first, at most `last`.
async fn print_events(
    ctx: &Context,
    conn: &mut Connection,
    job: &str,
    entries: &[HistoryEntry],
    since: Option<i64>,
    last: usize,
    now: i64,
) -> Result<ExitCode> {
    let attempts: Vec<Attempt> = entries.iter().map(Attempt::from).collect();
    let actions = events::read_actions(conn, ctx.prefix(), job, last).await?;
    // The job's jitter, from its registry, so a claim it delayed on purpose is not called late.
    let key = crate::store::registry::registry_key(ctx.prefix(), job);
    let fields: Vec<(String, String)> = conn.query(redis::cmd("HGETALL").arg(&key)).await?;
    let jitter = crate::store::registry::decode(&key, &fields)?.map_or(0, |r| r.settings.jitter_ms);
    let mut listed = events::newest_first(
        events::run_events(&attempts, late_after_ms(jitter)),
        actions,
        last,
    );
    // Every event by when it happened: from --since on.
    listed.retain(|e| since.is_none_or(|s| e.at >= s));
    if ctx.out.json {
        ctx.out.print_json(&EventsReport {
            job,
            clock: crate::output::ServerClock::at(now),
            since,
            events: listed,
        });
        return Ok(ExitCode::Ok);
    }
    if listed.is_empty() {
        crate::errln!("no events for {job} matching these filters");
        return Ok(ExitCode::Ok);
    }
    let (header, rows) = crate::output::event_table(&ctx.out, &listed, now);
    crate::outln!("{}", ctx.out.table(&header, rows));
    Ok(ExitCode::Ok)
}

/// One attempt as a row of the history table: SLOT, ATTEMPT, STATUS, RUNNER, ENDED, TOOK, RESULT.
fn history_row(ctx: &Context, e: &HistoryEntry, now: i64) -> Vec<String> {
    vec![
        ctx.out.time(e.slot),
        // A manual run (`run-now`) beside the scheduled ones, as gh's EVENT column tells a
        // dispatched workflow run from a scheduled one.
        e.kind.clone().unwrap_or_else(|| "scheduled".to_string()),
        e.attempt
            .filter(|a| *a > 0)
            .map_or("-".into(), |a| a.to_string()),
        e.status.clone(),
        e.runner.clone(),
        ctx.out.when(e.ended_at, now),
        e.duration_ms
            .map_or("-".into(), |d| humanize(d.max(0) as u64)),
        result_summary(Some(&e.result)),
    ]
}

/// `history --all --json`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct AcrossReport<'a> {
    #[serde(flatten)]
    clock: crate::output::ServerClock,
    since: Option<i64>,
    entries: Vec<FollowLine<'a>>,
}

/// `history --all`: every job's attempts merged, newest slot first, at most `--last` in all,
/// with the same filters as one job's (each job read with them, so no job is read whole).
async fn across_jobs(settings: &HistorySettings, ctx: &Context) -> Result<ExitCode> {
    crate::store::validate_prefix(ctx.prefix())?;
    let mut conn = ctx.connect().await?;
    let check = format::check_for_read(&mut conn, ctx.prefix()).await?;
    let now = check.server_now_ms;
    let since = settings.since.map(|s| s.resolve(now));
    let filter = HistoryFilter {
        since,
        status: settings.status.clone(),
        last: settings.last,
    };
    let wanted = settings.layout;
    let mut all: Vec<(String, HistoryEntry)> = Vec::new();
    for job in crate::store::discover::find_jobs(&mut conn, ctx.prefix(), "*").await? {
        if wanted.is_some_and(|layout| job.layout != layout) {
            continue;
        }
        let keys = check.job_keys(job.layout, ctx.prefix(), &job.name);
        for entry in read_history(&mut conn, &keys, &filter, now).await? {
            if ran_on(&entry, settings.runner.as_deref()) {
                all.push((job.name.clone(), entry));
            }
        }
    }
    all.sort_by(|a, b| (b.1.slot, b.1.attempt, &a.0).cmp(&(a.1.slot, a.1.attempt, &b.0)));
    all.truncate(settings.last);
    if ctx.out.json {
        ctx.out.print_json(&AcrossReport {
            clock: crate::output::ServerClock::at(now),
            since,
            entries: all
                .iter()
                .map(|(job, entry)| FollowLine { job, entry })
                .collect(),
        });
        return Ok(ExitCode::Ok);
    }
    if all.is_empty() {
        crate::errln!(
            "no history under prefix {:?} matching these filters",
            ctx.prefix()
        );
        return Ok(ExitCode::Ok);
    }
    let rows = all
        .iter()
        .map(|(job, e)| {
            let mut row = vec![job.clone()];
            row.extend(history_row(ctx, e, now));
            row
        })
        .collect();
    crate::outln!(
        "{}",
        ctx.out.table(
            &[
                "JOB", "SLOT", "KIND", "ATTEMPT", "STATUS", "RUNNER", "ENDED", "TOOK", "RESULT"
            ],
            rows
        )
    );
    Ok(ExitCode::Ok)
}

/// One line of `history --follow`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct FollowLine<'a> {
    job: &'a str,
    #[serde(flatten)]
    entry: &'a HistoryEntry,
}

/// `history --follow`: the newest attempts, then each attempt as it starts and ends, until Ctrl-C
/// (like `tail -f` and `kubectl get -w`). The store is read every --interval: format 2 keeps no
/// stream to block on, and a poll of each job's newest results costs a few reads. With --all,
/// one pipelined read of every job's summary says which jobs changed; only those are read.
pub async fn follow(settings: &HistorySettings, ctx: &Context) -> Result<ExitCode> {
    crate::store::validate_prefix(ctx.prefix())?;
    if let Some(job) = &settings.job {
        ctx.lease_keys(job)?;
    }
    let mut conn = ctx.connect().await?;
    let mut interrupt = crate::commands::Interrupt::new()?;
    // One job: found once (its layout does not change while we follow it).
    let one = match &settings.job {
        Some(job) => {
            let (layout, _) = locate_job(&mut conn, ctx.prefix(), job, settings.layout).await?;
            Some(crate::store::discover::JobRef {
                name: job.clone(),
                layout,
            })
        }
        None => None,
    };
    let mut follower = Follower {
        settings,
        one,
        seen: HashSet::new(),
        last_change: HashMap::new(),
        first: true,
    };
    let mut outage = crate::commands::Outage::default();
    let mut broken = false;
    loop {
        // A round: new entries printed, oldest first. A server that cannot be reached (a restart,
        // a failover) is ridden out on a fresh connection (Outage); the reader gone ends it.
        let round: Result<()> = async {
            if broken {
                conn = ctx.connect().await?;
            }
            follower.round(&mut conn, ctx).await
        }
        .await;
        let wait = match round {
            Ok(()) => {
                broken = false;
                outage.over();
                follower.first = false;
                settings.watch.interval
            }
            Err(e) => {
                broken = true;
                outage.failed(e, settings.watch.interval)?
            }
        };
        if crate::output::output_gone() || interrupt.sleep(wait).await {
            return Ok(ExitCode::Ok);
        }
    }
}

/// What `history --follow` remembers between rounds.
struct Follower<'a> {
    settings: &'a HistorySettings,
    /// The one job followed (`--job`); else every job whose history changed.
    one: Option<crate::store::discover::JobRef>,
    /// Entries printed already: job, slot, attempt, token, status.
    seen: HashSet<(String, i64, Option<u32>, String, String)>,
    /// Per job, what changes when its history does: last result, runs in progress, newest slot.
    last_change: HashMap<String, (Option<i64>, u64, Option<i64>)>,
    /// The first round prints at most `--last` entries.
    first: bool,
}

impl Follower<'_> {
    /// One round: the new entries of the jobs that changed, printed oldest first.
    async fn round(&mut self, conn: &mut Connection, ctx: &Context) -> Result<()> {
        let settings = self.settings;
        let check = format::check_for_read(conn, ctx.prefix()).await?;
        let now = check.server_now_ms;
        let jobs = match &self.one {
            Some(job) => vec![job.clone()],
            None => self.changed_jobs(conn, ctx, &check).await?,
        };
        let mut new: Vec<(String, HistoryEntry)> = Vec::new();
        for job in jobs {
            let keys = check.job_keys(job.layout, ctx.prefix(), &job.name);
            let filter = HistoryFilter {
                since: settings.since.map(|s| s.resolve(now)),
                status: settings.status.clone(),
                last: if self.first {
                    settings.last
                } else {
                    settings.last.max(50)
                },
            };
            for entry in read_history(conn, &keys, &filter, now).await? {
                if !ran_on(&entry, settings.runner.as_deref()) {
                    continue;
                }
                let key = (
                    job.name.clone(),
                    entry.slot,
                    entry.attempt,
                    entry.token.clone(),
                    entry.status.clone(),
                );
                if self.seen.insert(key) {
                    new.push((job.name.clone(), entry));
                }
            }
        }
        // Oldest first, as a log reads.
        new.sort_by_key(|(_, e)| (e.ended_at.or(e.claimed_at).unwrap_or(e.slot), e.slot));
        if self.first && new.len() > settings.last {
            new.drain(..new.len() - settings.last);
        }
        for (job, entry) in &new {
            print_follow_line(ctx, job, entry);
        }
        Ok(())
    }

    /// The jobs whose summary changed since the last round (all of them in the first).
    async fn changed_jobs(
        &mut self,
        conn: &mut Connection,
        ctx: &Context,
        check: &crate::store::StoreCheck,
    ) -> Result<Vec<crate::store::discover::JobRef>> {
        let all = crate::store::discover::find_jobs(conn, ctx.prefix(), "*").await?;
        let (summaries, _) = crate::store::view::summaries(conn, ctx.prefix(), &all, check).await?;
        Ok(summaries
            .into_iter()
            .filter(|s| {
                let change = (s.last_result_at, s.in_progress, s.last_slot);
                self.last_change.insert(s.job.clone(), change) != Some(change)
            })
            .map(|s| crate::store::discover::JobRef {
                name: s.job,
                layout: s.layout,
            })
            .collect())
    }
}

fn print_follow_line(ctx: &Context, job: &str, e: &HistoryEntry) {
    if ctx.out.json {
        ctx.out.print_json_line(&FollowLine { job, entry: e });
        return;
    }
    let when = e
        .ended_at
        .or(e.claimed_at)
        .map_or("-".to_string(), |t| ctx.out.time(t));
    let detail = crate::output::result_detail(&e.result);
    crate::outln!(
        "{when}  {job} @ {}  attempt {}  {}  on {}  {}{}",
        ctx.out.time(e.slot),
        e.attempt
            .filter(|a| *a > 0)
            .map_or("-".to_string(), |a| a.to_string()),
        ctx.out
            .paint(&e.status, crate::output::status_tone(&e.status)),
        e.runner,
        if e.status == "running" || e.status == "expired" {
            String::new()
        } else {
            result_summary(Some(&e.result))
        },
        if detail.is_empty() {
            String::new()
        } else {
            format!("  {detail}")
        }
    );
}

/// The JSON Schema of this command's `--json` output (docs/schemas/, checked by tests/it/schemas.rs).
pub(crate) fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![
        (
            "history",
            crate::commands::output_schema::<HistoryReport<'static>>(),
        ),
        (
            "history-events",
            crate::commands::output_schema::<EventsReport<'static>>(),
        ),
        (
            "history-all",
            crate::commands::output_schema::<AcrossReport<'static>>(),
        ),
        (
            "history-follow",
            crate::commands::output_schema::<FollowLine<'static>>(),
        ),
    ]
}
