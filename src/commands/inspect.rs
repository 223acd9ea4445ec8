//! `anarchon inspect JOB`: everything the store knows about one job.

use serde::Serialize;

use crate::commands::Context;
use crate::error::{ExitCode, Result};
use crate::output::result_summary;
use crate::settings::read::InspectSettings;
use crate::store::Layout;
use crate::store::LeaseFormat;
use crate::store::attempt::{Attempt, late_after_ms};
use crate::store::events;
use crate::store::format;
use crate::store::job::{ActiveRun, RunWithResult, locate_job, runs_with_results};
use crate::store::keys::hash_slot;
use crate::store::read::KeyInfo;
use crate::time::humanize;

/// `inspect --json`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct JobDetail {
    pub job: String,
    pub layout: Layout,
    pub prefix: String,
    /// The store format key's value (null when absent).
    pub format: Option<u32>,
    /// What that format means for the other programs sharing the store, for people.
    pub format_readers: &'static str,
    /// The format this lease job's data is in (1 until `migrate` or a claim converts it).
    pub job_format: Option<u32>,
    /// The job's pause, if it was ever paused (`anarchon pause`), and whether it is paused now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pause: Option<crate::store::pause::Pause>,
    pub paused: bool,
    /// The slot that waits for an older run to end (`run --overlap buffer`), if one does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting: Option<Waiting>,
    #[serde(flatten)]
    pub clock: crate::output::ServerClock,
    /// Redis Cluster hash slot of the job's keys when they share one (the lease layout's hash
    /// tag); null for the claim-only layout, whose keys each have their own (see `keys`).
    pub hash_slot: Option<u16>,
    pub keys: Vec<KeyInfo>,
    /// Runs in progress (lease layout).
    pub active: Vec<ActiveRun>,
    /// The newest ended attempts (lease layout: from `:results`), or claims (claim-only layout:
    /// the streams' entries, each with its result when there is one), newest first.
    pub runs: Vec<RunWithResult>,
    /// What the job registry records (schedule, settings, hosts seen), if a `run` recorded it.
    pub registry: Option<crate::store::registry::Registry>,
    /// Whether the job is healthy (src/health.rs).
    pub health: Option<crate::health::Health>,
    /// What happened to the job lately, newest first: its runs' claims, takeovers, ends and
    /// skips (from the runs shown) and operators' actions (`crate::store::events`).
    pub events: Vec<crate::store::events::Event>,
    /// The `--limit`s its registry records, each with who holds its permits now, who waits, and
    /// how many runs gave up waiting.
    pub limits: Vec<crate::store::limit::LimitView>,
}

/// A slot waiting for an older run under `--overlap buffer`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Waiting {
    pub slot: i64,
    pub slot_time: String,
    /// When it stops waiting (its `--max-late`), server clock.
    pub until: i64,
    pub until_time: String,
}

pub async fn execute(settings: &InspectSettings, ctx: &Context) -> Result<ExitCode> {
    let detail = read_detail(settings, ctx).await?;
    if ctx.out.json {
        ctx.out.print_json(&detail);
    } else {
        print_text(ctx, &detail);
    }
    Ok(ExitCode::Ok)
}

/// Everything the store knows about the job, read as every view reads a job.
async fn read_detail(settings: &InspectSettings, ctx: &Context) -> Result<JobDetail> {
    ctx.lease_keys(&settings.job)?;
    let mut conn = ctx.connect().await?;
    let check = format::check_for_read(&mut conn, ctx.prefix()).await?;
    let (layout, keys) =
        locate_job(&mut conn, ctx.prefix(), &settings.job, settings.layout).await?;
    let now = check.server_now_ms;
    let lease_keys = check.lease_keys(ctx.prefix(), &settings.job);
    let job_format = job_format(layout, &keys, &lease_keys, &check);
    // One read of the job as every view reads it (runs in progress, newest results, pause,
    // registry, first seen): the model health judges too.
    let job_ref = crate::store::discover::JobRef {
        name: settings.job.clone(),
        layout,
    };
    let view =
        crate::store::view::read_one(&mut conn, ctx.prefix(), &job_ref, &check, settings.last)
            .await?;
    // Judged and read before the view's parts are taken apart below.
    let health = Some(view.health(now, None));
    let waiting = view.waiting_at(now).map(|(slot, until)| Waiting {
        slot,
        slot_time: crate::time::rfc3339(slot),
        until,
        until_time: crate::time::rfc3339(until),
    });
    let events = job_events(&mut conn, ctx.prefix(), settings, &view).await?;
    let crate::store::view::JobView {
        recent,
        in_progress,
        pause,
        registry,
        ..
    } = view;
    let recent_for_active = recent.clone();
    // A lease job's ended attempts are its results, in every format (a member holds all an
    // attempt has); a claim-only job's history is its claims, which may have no result yet.
    let runs = match layout {
        Layout::Lease => recent
            .into_iter()
            .take(settings.last)
            .map(RunWithResult::ended)
            .collect(),
        Layout::ClaimOnly => {
            let job_keys = check.job_keys(layout, ctx.prefix(), &settings.job);
            let streams = job_keys.history_streams();
            runs_with_results(&mut conn, &streams, job_keys.results(), settings.last).await?
        }
    };
    let active = active_runs(in_progress, registry.as_ref(), &recent_for_active, now);
    let limits = job_limits(&mut conn, ctx.prefix(), registry.as_ref(), now).await?;
    Ok(JobDetail {
        job: settings.job.clone(),
        layout,
        prefix: ctx.prefix().to_string(),
        format: check.format,
        format_readers: format::readers(check.format),
        job_format: job_format.map(LeaseFormat::number),
        paused: pause.as_ref().is_some_and(|p| p.is_paused(now)),
        pause,
        waiting,
        clock: crate::output::ServerClock::at(now),
        hash_slot: (layout == Layout::Lease).then(|| hash_slot(&lease_keys.state)),
        keys,
        active,
        runs,
        registry,
        health,
        events,
        limits,
    })
}

/// The job's `--limit`s (as its registry records them) as the store holds them now.
async fn job_limits(
    conn: &mut crate::connection::Connection,
    prefix: &str,
    registry: Option<&crate::store::registry::Registry>,
    now: i64,
) -> Result<Vec<crate::store::limit::LimitView>> {
    let Some(r) = registry.filter(|r| !r.settings.limits.is_empty()) else {
        return Ok(Vec::new());
    };
    let all = crate::store::limit::all(conn, prefix, now).await?;
    Ok(crate::store::limit::named(
        &all,
        &crate::store::limit::names_of(&r.settings.limits),
    ))
}

/// The lease job's own format, from the type of its :state that locate_job read (None: a
/// claim-only job, which has none).
fn job_format(
    layout: Layout,
    keys: &[KeyInfo],
    lease_keys: &crate::store::LeaseKeys,
    check: &format::StoreCheck,
) -> Option<LeaseFormat> {
    (layout == Layout::Lease).then(|| {
        let state_type = keys
            .iter()
            .find(|k| k.key == lease_keys.state)
            .map_or("none", |k| k.kind.as_str());
        LeaseFormat::of_job(state_type, check.lease_format())
    })
}

/// What happened to the job lately, newest first: the runs the view read as events, and the
/// newest operator actions.
async fn job_events(
    conn: &mut crate::connection::Connection,
    prefix: &str,
    settings: &InspectSettings,
    view: &crate::store::view::JobView,
) -> Result<Vec<events::Event>> {
    let attempts: Vec<Attempt> = view
        .recent
        .iter()
        .take(settings.last)
        .cloned()
        .map(Attempt::from)
        .chain(view.in_progress.iter().cloned().map(Attempt::in_progress))
        .collect();
    // An events key another program broke does not hide the rest of the job: said, and left out.
    let actions = match events::read_actions(conn, prefix, &settings.job, EVENTS).await {
        Ok(actions) => actions,
        Err(e) if e.key().is_some() => {
            crate::errln!("warning: {e}; the operators' actions are left out of the events");
            Vec::new()
        }
        Err(e) => return Err(e),
    };
    let jitter = view.registry.as_ref().map_or(0, |r| r.settings.jitter_ms);
    Ok(events::newest_first(
        events::run_events(&attempts, late_after_ms(jitter)),
        actions,
        EVENTS,
    ))
}

/// The runs in progress, newest slot first, each with the lease its registry records.
fn active_runs(
    in_progress: Vec<crate::store::RunState>,
    registry: Option<&crate::store::registry::Registry>,
    recent: &[crate::store::read::ResultEntry],
    now: i64,
) -> Vec<ActiveRun> {
    let registered_lease = registry.and_then(|r| r.settings.lease_ms);
    let mut active: Vec<ActiveRun> = in_progress
        .into_iter()
        .map(|state| {
            ActiveRun::at(state, now)
                .with_registered_lease(registered_lease, now)
                .with_retry(recent)
        })
        .collect();
    active.sort_by_key(|r| std::cmp::Reverse(r.state.slot));
    active
}

fn print_text(ctx: &Context, d: &JobDetail) {
    print_keys(ctx, d);
    print_registry(ctx, d);
    print_health(ctx, d);
    print_last_failure(ctx, d);
    if d.layout == Layout::Lease {
        print_active(ctx, d);
    }
    print_runs(ctx, d);
    print_events(ctx, d);
}

/// How many events `inspect` shows, as `kubectl describe` shows the recent ones
/// (`history --events` lists more).
const EVENTS: usize = 10;

/// The newest events, as `kubectl describe` ends with them.
fn print_events(ctx: &Context, d: &JobDetail) {
    crate::outln!("\nevents:");
    if d.events.is_empty() {
        crate::outln!("  none");
        return;
    }
    let (header, rows) = crate::output::event_table(&ctx.out, &d.events, d.clock.server_time);
    crate::outln!("{}", ctx.out.table(&header, rows));
}

/// The job, its store format and what that means for other readers, and its keys.
fn print_keys(ctx: &Context, d: &JobDetail) {
    let out = &ctx.out;
    crate::outln!(
        "job      {} ({} layout, prefix {:?}, store format {}{})",
        d.job,
        d.layout.as_str(),
        d.prefix,
        d.format.map_or("none".to_string(), |f| f.to_string()),
        match (d.job_format, d.format) {
            (Some(job), Some(store)) if job != store => format!(", this job still in format {job}"),
            _ => String::new(),
        }
    );
    crate::outln!("format   {}", d.format_readers);
    match d.hash_slot {
        Some(slot) => crate::outln!("cluster  hash slot {slot} (the job's keys share a hash tag)"),
        None => {
            crate::outln!("cluster  each key has its own hash slot (no hash tag in this layout)")
        }
    }
    let key_rows = d
        .keys
        .iter()
        .map(|k| {
            vec![
                k.key.clone(),
                k.kind.clone(),
                k.memory_bytes.map_or("-".to_string(), |b| format!("{b} B")),
                k.hash_slot.to_string(),
            ]
        })
        .collect();
    crate::outln!(
        "\n{}",
        out.table(&["KEY", "TYPE", "MEMORY", "HASH SLOT"], key_rows)
    );
}

/// The registry's `retries` (`N,<delay ms>,<backoff>,<max delay ms>`) as a person reads it.
fn retries_text(stored: &str) -> Option<String> {
    let parts: Vec<&str> = stored.split(',').collect();
    let [n, delay, backoff, max] = parts.as_slice() else {
        return None;
    };
    let ms = |t: &str| {
        t.parse::<u64>()
            .map(humanize)
            .unwrap_or_else(|_| t.to_string())
    };
    Some(format!(
        "{n}: the first after {}, each later one {backoff} times longer, at most {}",
        ms(delay),
        ms(max)
    ))
}

/// What the job registry knows: the schedule and settings, and the hosts that run the job.
fn print_registry(ctx: &Context, d: &JobDetail) {
    let out = &ctx.out;
    if let Some(r) = &d.registry {
        crate::outln!(
            "schedule {} ({}), strategy {}, max-late {}{}",
            r.settings
                .schedule
                .as_deref()
                .unwrap_or("none (explicit slots)"),
            r.settings.tz,
            r.settings.strategy,
            humanize(r.settings.max_late_ms.max(0) as u64),
            if r.settings.catch_up_ms > 0 {
                format!(
                    ", catch-up {} ({})",
                    humanize(r.settings.catch_up_ms as u64),
                    r.settings.catch_up_policy
                )
            } else {
                String::new()
            }
        );
        if let Some(retries) = retries_text(&r.settings.retries) {
            crate::outln!("retries {retries}");
        }
        if !r.settings.limits.is_empty() {
            crate::outln!("limits {}", r.settings.limits.replace(',', ", "));
        }
        for l in &d.limits {
            crate::outln!("  {}", l.summary());
        }
        let hosts: Vec<String> = r
            .hosts
            .iter()
            .map(|h| {
                format!(
                    "{} ({})",
                    h.host,
                    out.relative(Some(h.last_seen), d.clock.server_time)
                )
            })
            .collect();
        // A host's time is written at most every HOST_REFRESH (a `run` writes nothing when it
        // is fresh), so it says when the host was last seen to within that, not exactly.
        crate::outln!(
            "hosts    {}",
            if hosts.is_empty() {
                "-".to_string()
            } else {
                format!(
                    "{} (last seen, to within {})",
                    hosts.join(", "),
                    crate::time::humanize(
                        crate::time::millis(crate::store::registry::HOST_REFRESH) as u64
                    )
                )
            }
        );
    }
}

/// The job's health, and its pause if it is paused.
fn print_health(ctx: &Context, d: &JobDetail) {
    let out = &ctx.out;
    if let Some(h) = &d.health {
        crate::outln!(
            "health   {}: next {}, last success {}, last failure {}{}",
            h.state.as_str(),
            out.relative(h.next_due, d.clock.server_time),
            out.relative(h.last_success, d.clock.server_time),
            out.relative(h.last_failure, d.clock.server_time),
            if h.missed_slots.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} due run(s) never claimed, the oldest {}",
                    h.missed_slots.len(),
                    out.time(h.oldest_missed.unwrap_or(h.missed_slots[0]))
                )
            }
        );
        // A run claimed and never run to an end: lost, and where its attempts are told.
        for slot in &h.lost_slots {
            crate::outln!(
                "lost     the run of {} was claimed and never ran to an end (every attempt interrupted, none left)\n  hint: `anarchon logs {} --slot {}` shows its attempts",
                out.time(*slot),
                d.job,
                crate::time::rfc3339(*slot),
            );
        }
        // A run nobody will finish: say what to do.
        for slot in &h.expired_slots {
            crate::outln!(
                "expired  the run of {} lost its lease and nobody took it over (its holder died with no backup standing by)\n  hint: {}",
                out.time(*slot),
                crate::health::expired_way_out(&d.job, *slot),
            );
        }
    }
    if let Some(p) = d.pause.as_ref().filter(|_| d.paused) {
        crate::outln!(
            "paused   {} (since {}; `anarchon resume {}` ends it)",
            p.describe(),
            p.paused_at.map_or("-".to_string(), |t| out.time(t)),
            d.job
        );
    }
    if let Some(w) = &d.waiting {
        crate::outln!(
            "waiting  the run of {} waits for the run in progress to end (--overlap buffer), until {}",
            out.time(w.slot),
            out.time(w.until)
        );
    }
}

/// The newest failed run among those shown and the last lines it left on stderr, as `systemctl
/// status` shows a unit's last log lines: what an on-call engineer reads first. `logs` has all.
fn print_last_failure(ctx: &Context, d: &JobDetail) {
    const LINES: usize = 5;
    // A run `--overlap replace` stopped for a newer slot is the policy at work, not a failure
    // (as health and metrics count it): it is not shown here.
    let Some(run) = d.runs.iter().find(|r| {
        matches!(r.entry.status.as_deref(), Some("failed" | "interrupted")) && !r.was_replaced()
    }) else {
        return;
    };
    let stderr = run
        .result
        .as_ref()
        .and_then(|r| r.get("stderr_tail"))
        .and_then(|t| t.as_str())
        .unwrap_or("");
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    crate::outln!(
        "failed   {} attempt {} on {}: {}{}",
        ctx.out.time(run.entry.slot),
        run.entry.attempt.map_or("-".to_string(), |a| a.to_string()),
        run.entry.runner,
        result_summary(run.result.as_ref()),
        if lines.is_empty() {
            String::new()
        } else {
            format!(
                "; its last {} line(s) of stderr (`anarchon logs {}` for all):",
                lines.len().min(LINES),
                d.job
            )
        }
    );
    for line in &lines[lines.len().saturating_sub(LINES)..] {
        crate::outln!("           {line}");
    }
}

/// The runs in progress: who holds each, how long it has run, when its lease was last renewed.
fn print_active(ctx: &Context, d: &JobDetail) {
    let out = &ctx.out;
    crate::outln!("\nactive runs: {}", d.active.len());
    if !d.active.is_empty() {
        let rows = d
            .active
            .iter()
            .map(|a| {
                let left = crate::time::lease_left(a.lease_left_ms);
                // A holder that is hung looks different from a healthy one: how long it has
                // run, and how long ago its lease was last renewed (a heartbeat); `~` marks a
                // time derived from the registered lease.
                let renewed = a.renewed_at.map_or("-".to_string(), |at| {
                    format!(
                        "{}{} ago",
                        if a.renewed_at_derived { "~" } else { "" },
                        humanize((d.clock.server_time - at).max(0) as u64)
                    )
                });
                vec![
                    out.time(a.state.slot),
                    a.state.attempt.to_string(),
                    out.token(&a.state.token),
                    a.state.runner.clone(),
                    humanize(a.running_for_ms.max(0) as u64),
                    renewed,
                    left,
                    match a.retry_due {
                        Some(due) if due > d.clock.server_time => "retry due".to_string(),
                        Some(_) => "retry overdue".to_string(),
                        None if a.lease_left_ms > 0 => "running".to_string(),
                        None => "expired".to_string(),
                    },
                    a.state.kind.as_str().to_string(),
                ]
            })
            .collect();
        crate::outln!(
            "{}",
            out.table(
                &[
                    "SLOT",
                    "ATTEMPT",
                    "TOKEN",
                    "RUNNER",
                    "RUNNING FOR",
                    "RENEWED",
                    "LEASE",
                    "STATE",
                    "KIND"
                ],
                rows
            )
        );
    }
}

/// The newest ended runs (and claims), newest first.
fn print_runs(ctx: &Context, d: &JobDetail) {
    let out = &ctx.out;
    crate::outln!("\nlast {} runs:", d.runs.len());
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
                    out.time(r.entry.slot),
                    e.attempt
                        .filter(|a| *a > 0)
                        .map_or("-".to_string(), |a| a.to_string()),
                    e.status.clone().unwrap_or_else(|| "claimed".into()),
                    e.runner.clone(),
                    out.when(e.ended_at.or(e.claimed_at), d.clock.server_time),
                    duration,
                    result_summary(r.result.as_ref()),
                ]
            })
            .collect();
        crate::outln!(
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

/// The JSON Schema of this command's `--json` output (docs/schemas/, checked by tests/it/schemas.rs).
pub(crate) fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![("inspect", crate::commands::output_schema::<JobDetail>())]
}
