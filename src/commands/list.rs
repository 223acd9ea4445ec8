//! `anarchon list [--pattern GLOB]`: every job under the prefix, one row each.

use serde::Serialize;

use crate::cli::ListSort;
use crate::commands::Context;
use crate::connection::Connection;
use crate::error::{ExitCode, Result};
use crate::settings::read::ListSettings;
use crate::store::StoreCheck;
use std::collections::HashMap;

use crate::health::Health;
use crate::store::Layout;
use crate::store::discover::find_jobs;
use crate::store::job::{ActiveRun, active_runs_for};
use crate::store::read::{JobSummary, Unreadable};
use crate::store::view;
use crate::store::{format, validate_prefix};
use crate::time::humanize;
use crate::time::rfc3339;

/// `list --json`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct ListReport<'a> {
    prefix: &'a str,
    #[serde(flatten)]
    clock: crate::output::ServerClock,
    /// The store format found (null: no anarchon data under this prefix).
    format: Option<u32>,
    jobs: Vec<JobRow<'a>>,
    /// Jobs whose data could not be read, each with the key and the reason (exit code 92).
    errors: &'a [Unreadable],
    /// The `--limit`s under the prefix: their permits held, the runs waiting, and how many gave
    /// up waiting.
    limits: &'a [crate::store::limit::LimitView],
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct JobRow<'a> {
    #[serde(flatten)]
    summary: &'a JobSummary,
    /// The newest run's state: its status, `expired` (marked running, lease ended), or `retrying`
    /// (its command failed and it waits for a retry).
    state: Option<&'a str>,
    last_slot_time: Option<String>,
    /// `last_result_at` as RFC 3339.
    last_result_at_time: Option<String>,
    last_result_age_ms: Option<i64>,
    /// The schedule the job registry knows (null: unknown).
    schedule: Option<&'a str>,
    /// Whether the job is healthy (src/health.rs): state, next due, last success, missed slots.
    health: Option<&'a Health>,
}

/// `list --active --json`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct ActiveReport<'a> {
    prefix: &'a str,
    #[serde(flatten)]
    clock: crate::output::ServerClock,
    active: Vec<ActiveRow>,
    errors: &'a [Unreadable],
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct ActiveRow {
    job: String,
    #[serde(flatten)]
    run: ActiveRun,
    /// What the run is now: `running`, or `expired` when its lease has ended (`status` is the
    /// store's, `running` until the run ends or a backup takes it over).
    state: &'static str,
}

/// The order of the states for `--sort state`: what needs a person first.
fn state_rank(state: Option<&str>) -> u8 {
    match state {
        Some("expired") => 0,
        Some("failed") => 1,
        Some("interrupted") => 2,
        Some("paused") => 3,
        Some("running") => 3,
        Some("claimed") => 4,
        Some("finished") => 5,
        _ => 6,
    }
}

pub async fn execute(settings: &ListSettings, ctx: &Context) -> Result<ExitCode> {
    validate_prefix(ctx.prefix())?;
    let mut conn = ctx.connect().await?;
    let check = format::check_for_read(&mut conn, ctx.prefix()).await?;
    let jobs = matching_jobs(&mut conn, ctx, settings).await?;
    let mut listing = Listing::read(&mut conn, ctx.prefix(), &jobs, &check).await?;
    let now = check.server_now_ms;
    listing.filter_and_sort(settings, now);
    if settings.active {
        return list_active(
            &mut conn,
            ctx,
            &listing.summaries,
            &listing.unreadable,
            &check,
        )
        .await;
    }
    // Bad data in one job never hides the others: everything readable is printed, then the exit
    // code says that some data was bad.
    let code = if listing.unreadable.is_empty() {
        ExitCode::Ok
    } else {
        ExitCode::StoreData
    };
    if ctx.out.json {
        listing.print_json(ctx, &check);
        return Ok(code);
    }
    if listing.summaries.is_empty() && listing.unreadable.is_empty() {
        if settings.unhealthy {
            crate::errln!("no job needs a person: none is late, missed, failing or expired");
        } else {
            crate::errln!(
                "no jobs under prefix {:?}{}",
                ctx.prefix(),
                if settings.pattern == "*" {
                    String::new()
                } else {
                    format!(" matching {:?}", settings.pattern)
                }
            );
        }
        return Ok(ExitCode::Ok);
    }
    listing.print_table(ctx, settings.sort, now);
    for l in &listing.limits {
        crate::outln!("limit {}", l.summary());
    }
    for u in &listing.unreadable {
        crate::errln!("error: job {} is unreadable: {}", u.job, u.error);
    }
    Ok(code)
}

/// The jobs under the prefix that match `--pattern` and `--strategy`; warns when every one starts
/// with `:` (a prefix given without its separator).
async fn matching_jobs(
    conn: &mut Connection,
    ctx: &Context,
    settings: &ListSettings,
) -> Result<Vec<crate::store::discover::JobRef>> {
    let wanted = settings.layout;
    let jobs: Vec<_> = find_jobs(conn, ctx.prefix(), &settings.pattern)
        .await?
        .into_iter()
        .filter(|j| wanted.is_none_or(|layout| j.layout == layout))
        .collect();
    let prefix = ctx.prefix();
    if !prefix.is_empty() && !jobs.is_empty() && jobs.iter().all(|j| j.name.starts_with(':')) {
        crate::errln!(
            "warning: every job under prefix {prefix:?} starts with ':'\n  hint: did you mean --prefix {prefix}: (prefixes end with their separator)?"
        );
    }
    Ok(jobs)
}

/// What `list` shows: each job's summary and health, and the jobs that could not be read.
struct Listing {
    summaries: Vec<JobSummary>,
    unreadable: Vec<Unreadable>,
    /// Each job's schedule (from the registry) and health, by job and layout.
    health: HashMap<(String, Layout), (Option<String>, Health)>,
    /// The prefix's `--limit`s.
    limits: Vec<crate::store::limit::LimitView>,
}

impl Listing {
    /// Reads each job once (`store::view`: one pipelined read per batch of jobs, and one more
    /// for format 1's runs in progress), its row and its health taken from the same read; each
    /// batch is judged and let go before the next is read, so memory holds one batch of what
    /// health reads (up to 16 results per job), not the whole keyspace's.
    async fn read(
        conn: &mut Connection,
        prefix: &str,
        jobs: &[crate::store::discover::JobRef],
        check: &StoreCheck,
    ) -> Result<Self> {
        let now = check.server_now_ms;
        let mut summaries = Vec::with_capacity(jobs.len());
        let mut unreadable = Vec::new();
        let mut health = HashMap::new();
        for batch in jobs.chunks(crate::store::read::BATCH) {
            let (monitored, unreadable_here) = view::read(conn, prefix, batch, check).await?;
            unreadable.extend(unreadable_here);
            for m in monitored {
                summaries.push(m.summary());
                let schedule = m
                    .registry
                    .as_ref()
                    .and_then(|r| r.settings.schedule.clone());
                let judged = m.health(now, None);
                health.insert((m.job, m.layout), (schedule, judged));
            }
        }
        let limits = crate::store::limit::all(conn, prefix, now).await?;
        Ok(Listing {
            summaries,
            unreadable,
            health,
            limits,
        })
    }

    fn health_of(&self, s: &JobSummary) -> Option<&(Option<String>, Health)> {
        self.health.get(&(s.job.clone(), s.layout))
    }

    /// `--status`, `--unhealthy` and `--sort`.
    fn filter_and_sort(&mut self, settings: &ListSettings, now: i64) {
        if let Some(wanted) = &settings.status {
            self.summaries
                .retain(|s| s.state(now) == Some(wanted.as_str()));
        }
        if settings.unhealthy {
            let health = &self.health;
            self.summaries.retain(|s| {
                s.state(now) == Some("expired")
                    || health
                        .get(&(s.job.clone(), s.layout))
                        .is_some_and(|(_, h)| h.state.needs_a_person())
            });
        }
        let summaries = &mut self.summaries;
        match settings.sort {
            ListSort::Name => summaries.sort_by(|a, b| a.job.cmp(&b.job)),
            ListSort::LastRun => {
                summaries.sort_by(|a, b| b.last_slot.cmp(&a.last_slot).then(a.job.cmp(&b.job)))
            }
            ListSort::State => summaries.sort_by(|a, b| {
                state_rank(a.state(now))
                    .cmp(&state_rank(b.state(now)))
                    .then(a.job.cmp(&b.job))
            }),
            ListSort::Health => {
                let health = &self.health;
                let rank = |s: &JobSummary| {
                    crate::health::health_rank(
                        health.get(&(s.job.clone(), s.layout)).map(|(_, h)| h.state),
                    )
                };
                summaries.sort_by(|a, b| rank(a).cmp(&rank(b)).then(a.job.cmp(&b.job)))
            }
        }
    }

    fn print_json(&self, ctx: &Context, check: &StoreCheck) {
        let now = check.server_now_ms;
        let report = ListReport {
            prefix: ctx.prefix(),
            clock: crate::output::ServerClock::at(now),
            format: check.format,
            jobs: self
                .summaries
                .iter()
                .map(|s| JobRow {
                    summary: s,
                    state: s.state(now),
                    last_slot_time: s.last_slot.map(rfc3339),
                    last_result_at_time: s.last_result_at.map(rfc3339),
                    last_result_age_ms: s.last_result_at.map(|t| now - t),
                    schedule: self
                        .health_of(s)
                        .and_then(|(schedule, _)| schedule.as_deref()),
                    health: self.health_of(s).map(|(_, h)| h),
                })
                .collect(),
            errors: &self.unreadable,
            limits: &self.limits,
        };
        ctx.out.print_json(&report);
    }

    fn print_table(&self, ctx: &Context, sort: ListSort, now: i64) {
        let mut rows: Vec<Vec<String>> = self
            .summaries
            .iter()
            .map(|s| {
                let (schedule, h) = match self.health_of(s) {
                    Some((schedule, h)) => (schedule.clone(), Some(h)),
                    None => (None, None),
                };
                vec![
                    match s.layout {
                        Layout::Lease => s.job.clone(),
                        Layout::ClaimOnly => format!("{} (claim-only)", s.job),
                    },
                    schedule.unwrap_or_else(|| "-".into()),
                    h.map_or("-", |h| h.state.as_str()).to_string(),
                    ctx.out.relative(h.and_then(|h| h.next_due), now),
                    ctx.out.relative(h.and_then(|h| h.last_success), now),
                    // Relative on a terminal, as NEXT and LAST OK are: a row fits 80 columns.
                    ctx.out.relative(s.last_slot, now),
                    s.state(now).unwrap_or("-").to_string(),
                    s.in_progress.to_string(),
                    s.history_entries.to_string(),
                ]
            })
            .collect();
        rows.extend(self.unreadable.iter().map(|u| {
            let mut row = vec!["-".to_string(); 9];
            row[0] = u.job.clone();
            row[2] = "unreadable".to_string();
            row
        }));
        if sort == ListSort::Name {
            rows.sort_by(|a, b| a[0].cmp(&b[0]));
        }
        crate::outln!(
            "{}",
            ctx.out.table(
                &[
                    "JOB", "SCHEDULE", "HEALTH", "NEXT", "LAST OK", "LAST RUN", "STATUS", "ACTIVE",
                    "HISTORY"
                ],
                rows
            )
        );
    }
}

/// `list --active`: every run in progress across the jobs (those whose summary counts one), read
/// job by job; the live leases of a store are few.
async fn list_active(
    conn: &mut Connection,
    ctx: &Context,
    summaries: &[JobSummary],
    unreadable: &[Unreadable],
    check: &StoreCheck,
) -> Result<ExitCode> {
    let now = check.server_now_ms;
    let mut active = Vec::new();
    for s in summaries
        .iter()
        .filter(|s| s.layout == Layout::Lease && s.in_progress > 0)
    {
        let keys = check.lease_keys(ctx.prefix(), &s.job);
        for run in active_runs_for(conn, &keys, now).await? {
            active.push(ActiveRow {
                job: s.job.clone(),
                state: if run.lease_left_ms > 0 {
                    "running"
                } else {
                    "expired"
                },
                run,
            });
        }
    }
    let code = if unreadable.is_empty() {
        ExitCode::Ok
    } else {
        ExitCode::StoreData
    };
    if ctx.out.json {
        ctx.out.print_json(&ActiveReport {
            prefix: ctx.prefix(),
            clock: crate::output::ServerClock::at(now),
            active,
            errors: unreadable,
        });
        return Ok(code);
    }
    if active.is_empty() {
        crate::errln!("no run in progress under prefix {:?}", ctx.prefix());
    } else {
        let rows = active
            .iter()
            .map(|a| {
                vec![
                    a.job.clone(),
                    ctx.out.time(a.run.state.slot),
                    a.run.state.attempt.to_string(),
                    a.run.state.runner.clone(),
                    humanize(a.run.running_for_ms.max(0) as u64),
                    crate::time::lease_left(a.run.lease_left_ms),
                    a.state.to_string(),
                    ctx.out.token(&a.run.state.token),
                ]
            })
            .collect();
        crate::outln!(
            "{}",
            ctx.out.table(
                &[
                    "JOB",
                    "SLOT",
                    "ATTEMPT",
                    "RUNNER",
                    "RUNNING FOR",
                    "LEASE",
                    "STATE",
                    "TOKEN"
                ],
                rows
            )
        );
    }
    for u in unreadable {
        crate::errln!("error: job {} is unreadable: {}", u.job, u.error);
    }
    Ok(code)
}

/// The JSON Schema of this command's `--json` output (docs/schemas/, checked by tests/it/schemas.rs).
pub(crate) fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![
        (
            "list",
            crate::commands::output_schema::<ListReport<'static>>(),
        ),
        (
            "list-active",
            crate::commands::output_schema::<ActiveReport<'static>>(),
        ),
    ]
}
