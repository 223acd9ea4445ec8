//! The one read model of a job: [`JobView`], what every view of a job reads (its registry, its
//! newest results, its runs in progress whole, when the store first saw it, its pause and waiting
//! place), for many jobs at once: one pipelined round trip per [`BATCH`] jobs (and one more for
//! format 1's runs in progress), a fixed handful of reads per job whatever its history's size.
//! `list`, `check`, `metrics` and `inspect` ([`read_one`]) read through it; where a format keeps
//! what is each format module's ([`LeaseFormat::queue_in_progress_of_any`]). The judgement of
//! health is `crate::health`'s, a layer above. A page of history further back than the newest
//! results is `store::history`'s.
//!
//! Three types carry a job's runs everywhere: [`JobView`] (the job), [`RunState`] (a run in
//! progress) and [`ResultEntry`] (an ended attempt); a claim-only job adds its claims
//! ([`RunEntry`]). Commands shape them into their output.

use redis::Value;
use serde::Serialize;

use crate::connection::Connection;
use crate::error::Result;
use crate::schedule::Schedule;
use crate::store::Layout;
use crate::store::discover::JobRef;
use crate::store::keys::{ClaimKeys, JobKeys, LeaseFormat, LeaseKeys};
use crate::store::pause::{self, Pause};
use crate::store::read::{self, BATCH, JobSummary, ResultEntry, RunEntry, Unreadable, decode};
use crate::store::registry::{self, Registry};
use crate::store::state::RunState;

/// How many of the newest results a health read fetches per job.
pub const RECENT_RESULTS: usize = 16;

/// A claim-only job's claim streams: its newest claim and how many claims they hold.
#[derive(Debug, Clone)]
pub struct ClaimFeed {
    pub newest: Option<RunEntry>,
    /// Entries in `:runs` and `:manual`.
    pub entries: u64,
}

/// One job as monitoring sees it (its health is judged by `crate::health`, above the store).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct JobView {
    pub job: String,
    pub layout: Layout,
    pub registry: Option<Registry>,
    pub first_seen: Option<i64>,
    /// The `first_seen` its claims recorded, when they did (`first_seen` is else the oldest
    /// result read).
    #[serde(skip)]
    first_seen_recorded: Option<i64>,
    #[serde(skip)]
    pub recent: Vec<ResultEntry>,
    #[serde(skip)]
    pub recent_is_all: bool,
    /// Runs in progress, whole (lease layout).
    #[serde(skip)]
    pub in_progress: Vec<RunState>,
    /// Slots in progress the first read named alone ([`crate::store::lease::read_named_runs`]).
    #[serde(skip)]
    named_slots: Vec<i64>,
    #[serde(skip)]
    pub pause: Option<Pause>,
    /// The slot in the job's waiting place (`run --overlap buffer`) and until when, as recorded
    /// (lapsed or not: [`JobView::waiting_at`]).
    #[serde(skip)]
    pub waiting: Option<(i64, i64)>,
    /// Results in the history (ended attempts).
    pub history_entries: u64,
    /// A claim-only job's claims (None for a lease job).
    #[serde(skip)]
    pub claims: Option<ClaimFeed>,
    /// The job's pauses before its newest (`pause` field), from its events: read over a window
    /// only ([`pause::history`]).
    #[serde(skip)]
    pub past_pauses: Vec<Pause>,
    /// The job's earlier names, read as it was (their registries' `was` followed, a name renamed
    /// twice too): health counts their runs as the job's ([`attach_lineage`]).
    #[serde(skip)]
    pub lineage: Vec<JobView>,
}

impl JobView {
    /// A job with nothing read (no registry, results, runs or pause), for unit tests of the
    /// views above the store to fill in.
    #[cfg(test)]
    pub(crate) fn unread(job: &str, layout: Layout) -> Self {
        JobView {
            job: job.to_string(),
            layout,
            registry: None,
            first_seen: None,
            first_seen_recorded: None,
            recent: Vec::new(),
            recent_is_all: true,
            in_progress: Vec::new(),
            named_slots: Vec::new(),
            pause: None,
            waiting: None,
            history_entries: 0,
            claims: None,
            past_pauses: Vec::new(),
            lineage: Vec::new(),
        }
    }

    /// The name the job runs under now, when it was renamed away (its registry says so).
    pub fn renamed_to(&self) -> Option<&str> {
        self.registry.as_ref()?.renamed_to.as_deref()
    }

    /// The earlier names its registry records.
    fn earlier_names(&self) -> &[String] {
        self.registry.as_ref().map_or(&[], |r| r.was.as_slice())
    }

    /// The job's schedule, from the registry (None when unknown, or unreadable: the registry's
    /// text came from another writer).
    pub fn schedule(&self) -> Option<Schedule> {
        let r = self.registry.as_ref()?;
        Schedule::parse(r.settings.schedule.as_deref()?, &r.settings.tz).ok()
    }

    /// The job's row in `list`: its newest run (the newest in progress, or the newest ended one
    /// when it is newer; a claim-only job's newest claim, `claimed` until it has a result), how
    /// many are in progress, the history's size, the pause.
    pub fn summary(&self) -> JobSummary {
        let newest = self.recent.first();
        let last_result_at = newest.and_then(|r| r.ended_at);
        if let Some(claims) = &self.claims {
            let last = claims.newest.as_ref();
            let status = match (last, newest) {
                (Some(l), Some(r)) if r.slot == l.slot => Some(r.status.clone()),
                (Some(_), _) => Some("claimed".to_string()),
                _ => None,
            };
            return JobSummary {
                job: self.job.clone(),
                layout: self.layout,
                in_progress: 0,
                last_slot: last.map(|l| l.slot),
                last_status: status,
                last_runner: last.map(|l| l.runner.clone()),
                last_lease_end: None,
                pause: None,
                last_result_at,
                history_entries: claims.entries,
            };
        }
        let newest_live = self.in_progress.iter().max_by_key(|r| r.slot);
        let (last_slot, last_status, last_runner, last_lease_end) = match (newest_live, newest) {
            (Some(l), r) if r.is_none_or(|r| r.slot <= l.slot) => (
                Some(l.slot),
                // Its command failed and it waits for a retry (`--retries`): no command runs.
                Some(
                    if ResultEntry::awaited_retry(&self.recent, l).is_some() {
                        "retrying"
                    } else {
                        "running"
                    }
                    .to_string(),
                ),
                Some(l.runner.clone()),
                Some(l.lease_end),
            ),
            (_, Some(r)) => (
                Some(r.slot),
                Some(r.status.clone()),
                Some(r.runner.clone()),
                None,
            ),
            (_, None) => (None, None, None, None),
        };
        JobSummary {
            job: self.job.clone(),
            layout: self.layout,
            in_progress: self.in_progress.len() as u64,
            last_slot,
            last_status,
            last_runner,
            last_lease_end,
            pause: self.pause.clone(),
            last_result_at,
            history_entries: self.history_entries,
        }
    }

    /// The job (and its earlier names) as a read of its results from `from` on (server ms) would
    /// have read it, from a read that began earlier (`timeline` reads back further than its
    /// range, to draw runs that began before it): the results of older slots left out, and
    /// `first_seen`, where no claim recorded it, the oldest result left. Health judged of it is
    /// then what `check --window` from `from` judges.
    pub fn read_from(&self, from: i64) -> JobView {
        let mut view = self.clone();
        view.recent.retain(|r| r.slot >= from);
        let oldest = view.recent.iter().map(|r| r.slot).min();
        view.first_seen = self.first_seen_recorded.or(oldest);
        view.lineage = self.lineage.iter().map(|old| old.read_from(from)).collect();
        view
    }

    /// The waiting place at `now` (server ms), unless it is free or lapsed.
    pub fn waiting_at(&self, now: i64) -> Option<(i64, i64)> {
        self.waiting.filter(|(_, until)| *until > now)
    }

    /// Final statuses of the fetched results, by status (`runs by final status` of `metrics`).
    pub fn counts_by_status(&self) -> Vec<(String, u64)> {
        let mut counts: std::collections::BTreeMap<String, u64> = Default::default();
        for r in &self.recent {
            // A run `--overlap replace` stopped for a newer slot is told apart from one that
            // was interrupted by trouble: the policy at work, not an alert.
            let status = if r.was_replaced() {
                "replaced".to_string()
            } else if r.was_retried(&self.recent, &self.in_progress) {
                // A failed attempt that was given a retry: the slot's end is its last attempt's.
                "retried".to_string()
            } else {
                r.status.clone()
            };
            *counts.entry(status).or_default() += 1;
        }
        counts.into_iter().collect()
    }
}

/// Every job's monitoring data; a job whose data cannot be decoded comes back in the second list
/// (with its key and reason) and never hides the others.
pub async fn read(
    conn: &mut Connection,
    prefix: &str,
    jobs: &[JobRef],
    store: &crate::store::StoreCheck,
) -> Result<(Vec<JobView>, Vec<Unreadable>)> {
    read_over(conn, prefix, jobs, store, None).await
}

/// One job, with its newest `newest` results (at least [`RECENT_RESULTS`], which health reads):
/// what `inspect` shows. Its bad data is the error.
pub async fn read_one(
    conn: &mut Connection,
    prefix: &str,
    job: &JobRef,
    store: &crate::store::StoreCheck,
    newest: usize,
) -> Result<JobView> {
    let results_max = newest.max(RECENT_RESULTS);
    let bounds = ("-inf", "+inf");
    let (mut found, mut bad) = read_batch(
        conn,
        prefix,
        std::slice::from_ref(job),
        store,
        bounds,
        results_max,
    )
    .await?;
    attach_lineage(conn, prefix, store, bounds, RECENT_RESULTS, &mut found).await?;
    attach_removals(conn, prefix, store.server_now_ms, &mut found).await;
    match (found.pop(), bad.pop()) {
        (Some(m), _) => Ok(m),
        (None, Some(u)) => Err(u.error),
        (None, None) => Err(crate::error::Error::Other(format!(
            "job {} was not read",
            job.name
        ))),
    }
}

/// The most results one job's window read returns (`check --window`, `timeline`).
const WINDOW_RESULTS: usize = 100_000;

/// As [`read`], with every result from `window_start` (server ms) on instead of the newest
/// [`RECENT_RESULTS`], when given (`check --window`: health then looks at every due slot since).
pub async fn read_over(
    conn: &mut Connection,
    prefix: &str,
    jobs: &[JobRef],
    store: &crate::store::StoreCheck,
    window_start: Option<i64>,
) -> Result<(Vec<JobView>, Vec<Unreadable>)> {
    let (results_from, results_max) = match window_start {
        Some(start) => (start.to_string(), WINDOW_RESULTS),
        None => ("-inf".to_string(), RECENT_RESULTS),
    };
    read_results_between(
        conn,
        prefix,
        jobs,
        store,
        &results_from,
        "+inf",
        results_max,
    )
    .await
}

/// As [`read`], with every result whose slot is in `[from, to]` (server ms) instead of the newest
/// [`RECENT_RESULTS`] (at most [`WINDOW_RESULTS`] per job, the newest: `recent_is_all` says
/// whether that was all of them): `timeline`'s window, which never reads the history after it.
pub async fn read_between(
    conn: &mut Connection,
    prefix: &str,
    jobs: &[JobRef],
    store: &crate::store::StoreCheck,
    from: i64,
    to: i64,
) -> Result<(Vec<JobView>, Vec<Unreadable>)> {
    let (from, to) = (from.to_string(), to.to_string());
    read_results_between(conn, prefix, jobs, store, &from, &to, WINDOW_RESULTS).await
}

/// Every job's view, its results those whose slot is in `[results_from, results_to]` (score
/// bounds as ZREVRANGEBYSCORE takes them), at most `results_max`, [`BATCH`] jobs at a time.
async fn read_results_between(
    conn: &mut Connection,
    prefix: &str,
    jobs: &[JobRef],
    store: &crate::store::StoreCheck,
    results_from: &str,
    results_to: &str,
    results_max: usize,
) -> Result<(Vec<JobView>, Vec<Unreadable>)> {
    let mut out = Vec::with_capacity(jobs.len());
    let mut bad = Vec::new();
    let bounds = (results_from, results_to);
    for batch in jobs.chunks(BATCH) {
        let (found, unreadable) =
            read_batch(conn, prefix, batch, store, bounds, results_max).await?;
        out.extend(found);
        bad.extend(unreadable);
    }
    attach_lineage(conn, prefix, store, bounds, results_max, &mut out).await?;
    attach_removals(conn, prefix, store.server_now_ms, &mut out).await;
    Ok((out, bad))
}

/// How many renames back a job's lineage is followed (a guard against a registry's `was` that
/// names in a circle: `a` renamed to `b` and back).
const MAX_RENAMES: usize = 8;

/// Jobs of a service (`cron --service`, their registry's `service`) that live replicas of the
/// service run without them in their crontabs: removed from it. Each reads retired, by the
/// service, as of now (so a run claimed from now on brings it back, as after `anarchon forget`),
/// unless an operator retired it already. A service with no live replica changes nothing: its
/// jobs are judged as any, and a service that is down alerts. One read of the replicas' presence
/// (`{<prefix>}:replicas`), only when a job names a service; a presence that does not read
/// changes nothing.
async fn attach_removals(conn: &mut Connection, prefix: &str, now: i64, views: &mut [JobView]) {
    // A renamed job (its new name's registration marked it `renamed_to`) is not removed: its
    // runs go on under the new name, which the live replicas have, and it reads renamed, not
    // retired (issue 62 item 5: "retired: removed from the crontab" while the fleet ran it).
    let of_a_service = |v: &JobView| {
        v.registry
            .as_ref()
            .filter(|r| r.retired.is_none() && r.renamed_to.is_none())
            .and_then(|r| r.settings.service.clone())
    };
    if !views.iter().any(|v| of_a_service(v).is_some()) {
        return;
    }
    let Ok(replicas) = crate::store::requests::read_replicas(conn, prefix).await else {
        return;
    };
    for view in views.iter_mut() {
        let Some(service) = of_a_service(view) else {
            continue;
        };
        let live: Vec<_> = replicas
            .iter()
            .filter(|r| r.is_live(now) && r.presence.service.as_deref() == Some(service.as_str()))
            .collect();
        if live.is_empty() || live.iter().any(|r| r.has(&view.job)) {
            continue;
        }
        if let Some(registry) = view.registry.as_mut() {
            registry.retired = Some(crate::store::registry::Retired {
                at: now,
                by: format!("service {service}"),
                reason: Some(format!(
                    "removed from the crontab of service {service}: none of its {} live replica(s) has it",
                    live.len()
                )),
                removed: true,
            });
        }
    }
}

/// Reads the earlier names of the jobs in `views` (their registries' `was`, followed back
/// [`MAX_RENAMES`] renames) with the same bounds, and attaches them to each job's `lineage`, so
/// that health judges a renamed job by the runs of all its names: a slot run under its old name by
/// a replica not yet deployed, or before the rename, is no missed run of the new name. Jobs
/// without earlier names (nearly all) cost nothing; names read only for this are not returned.
/// An old name whose data cannot be decoded is left out (its runs then count nowhere: an alarm,
/// never an OK over a loss).
async fn attach_lineage(
    conn: &mut Connection,
    prefix: &str,
    store: &crate::store::StoreCheck,
    bounds: (&str, &str),
    results_max: usize,
    views: &mut [JobView],
) -> Result<()> {
    use std::collections::HashMap;
    let mut read: HashMap<String, JobView> = HashMap::new();
    // The earlier names of `named` not read yet, added to `wanted` once each.
    let want = |named: &mut dyn Iterator<Item = &JobView>,
                read: &HashMap<String, JobView>,
                wanted: &mut Vec<String>| {
        for name in named.flat_map(JobView::earlier_names) {
            let is_read = read.contains_key(name) || views.iter().any(|v| v.job == *name);
            if !is_read && !wanted.contains(name) {
                wanted.push(name.clone());
            }
        }
    };
    let mut wanted: Vec<String> = Vec::new();
    want(&mut views.iter(), &read, &mut wanted);
    for _ in 0..MAX_RENAMES {
        if wanted.is_empty() {
            break;
        }
        let refs: Vec<JobRef> = wanted
            .drain(..)
            .map(|name| JobRef {
                name,
                layout: Layout::Lease,
            })
            .collect();
        for batch in refs.chunks(BATCH) {
            let (found, _unreadable) =
                read_batch(conn, prefix, batch, store, bounds, results_max).await?;
            read.extend(found.into_iter().map(|v| (v.job.clone(), v)));
        }
        want(&mut read.values(), &read, &mut wanted);
    }
    let find = |name: &str| {
        views
            .iter()
            .find(|v| v.job == name)
            .or_else(|| read.get(name))
    };
    let lineages: Vec<Vec<JobView>> = views
        .iter()
        .map(|job| {
            lineage_names(job, &find)
                .into_iter()
                .filter_map(&find)
                .map(|old| JobView {
                    lineage: Vec::new(),
                    ..old.clone()
                })
                .collect()
        })
        .collect();
    for (view, lineage) in views.iter_mut().zip(lineages) {
        view.lineage = lineage;
    }
    Ok(())
}

/// `job`'s earlier names, breadth first through each one's own (`find` gives a name's view),
/// each once, never the job itself, at most `MAX_RENAMES * 4`.
fn lineage_names<'a>(
    job: &'a JobView,
    find: &impl Fn(&str) -> Option<&'a JobView>,
) -> Vec<&'a str> {
    let mut names: Vec<&str> = Vec::new();
    let mut frontier: Vec<&str> = job.earlier_names().iter().map(String::as_str).collect();
    let mut next = 0;
    while next < frontier.len() && names.len() < MAX_RENAMES * 4 {
        let name = frontier[next];
        next += 1;
        if name == job.job || names.contains(&name) {
            continue;
        }
        names.push(name);
        if let Some(old) = find(name) {
            frontier.extend(old.earlier_names().iter().map(String::as_str));
        }
    }
    names
}

/// Up to [`BATCH`] jobs: one pipeline, and one more for format 1's runs in progress.
async fn read_batch(
    conn: &mut Connection,
    prefix: &str,
    batch: &[JobRef],
    store: &crate::store::StoreCheck,
    (results_from, results_to): (&str, &str),
    results_max: usize,
) -> Result<(Vec<JobView>, Vec<Unreadable>)> {
    let store_format = store.lease_format();
    let read = BatchRead {
        prefix,
        results_from,
        results_to,
        results_max,
        // A window's read (`check --window`, `timeline`) judges slots back to its start: the
        // job's past pauses too (its events), where the `:job` hash keeps only the newest.
        past_pauses: results_from != "-inf",
    };
    let mut out = Vec::with_capacity(batch.len());
    let mut bad = Vec::new();
    let mut pipe = redis::pipe();
    // How many reads each job queued, in pipeline order: its replies are that many.
    let mut reads = Vec::with_capacity(batch.len());
    for job in batch {
        let queued = pipe.len();
        read.queue(&mut pipe, job);
        reads.push(pipe.len() - queued);
    }
    let mut values = conn.replies(&pipe).await?.into_iter();
    for (job, count) in batch.iter().zip(reads) {
        let mut replies: Vec<Value> = (0..count)
            .map(|_| values.next().unwrap_or(Value::Nil))
            .collect();
        let history = (read.past_pauses && job.layout == Layout::Lease)
            .then(|| replies.pop().map(pause::history))
            .flatten()
            .unwrap_or_default();
        match decode_one(prefix, job, replies, store_format, results_max) {
            Ok(mut m) => {
                m.past_pauses = history;
                out.push(m)
            }
            Err(error) => bad.push(Unreadable {
                job: job.name.clone(),
                layout: job.layout,
                error,
            }),
        }
    }
    read_named_runs(conn, prefix, &mut out, &mut bad).await?;
    Ok((out, bad))
}

/// What every job of a batch is read with: the prefix, the results wanted, and whether past
/// pauses are.
struct BatchRead<'a> {
    prefix: &'a str,
    results_from: &'a str,
    results_to: &'a str,
    results_max: usize,
    past_pauses: bool,
}

impl BatchRead<'_> {
    /// Queues one job's reads, in the order [`decode_one`] takes their replies.
    fn queue(&self, pipe: &mut redis::Pipeline, job: &JobRef) {
        let prefix = self.prefix;
        pipe.cmd("HGETALL")
            .arg(registry::registry_key(prefix, &job.name));
        pipe.cmd("ZREVRANGEBYSCORE")
            .arg(results_key(prefix, job))
            .arg(self.results_to)
            .arg(self.results_from)
            .arg("WITHSCORES")
            .arg("LIMIT")
            .arg(0)
            .arg(self.results_max);
        if job.layout == Layout::ClaimOnly {
            let k = ClaimKeys::new(prefix, &job.name);
            pipe.cmd("XREVRANGE")
                .arg(&k.runs)
                .arg("+")
                .arg("-")
                .arg("COUNT")
                .arg(1);
            pipe.cmd("XLEN").arg(&k.runs);
            pipe.cmd("XLEN").arg(&k.manual);
        }
        if job.layout == Layout::Lease {
            let k = LeaseKeys::new(prefix, &job.name);
            pipe.cmd("TYPE").arg(&k.state);
            pipe.cmd("ZCARD").arg(&k.results);
            pipe.cmd("HMGET")
                .arg(&k.job)
                .arg("first_seen")
                .arg("buffered")
                .arg(&pause::FIELDS[..]);
            // Where a format keeps its runs in progress: every format's read (the job's own
            // format is known only from the reply to TYPE).
            LeaseFormat::queue_in_progress_of_any(pipe, &k);
            if self.past_pauses {
                pipe.cmd("XREVRANGE")
                    .arg(crate::store::events::events_key(prefix, &job.name))
                    .arg("+")
                    .arg("-")
                    .arg("COUNT")
                    .arg(crate::store::events::KEPT);
            }
        }
    }
}

/// Every job's row in `list` ([`JobView::summary`]), read [`BATCH`] jobs at a time; a job
/// whose data cannot be decoded comes back in the second list.
pub async fn summaries(
    conn: &mut Connection,
    prefix: &str,
    jobs: &[JobRef],
    store: &crate::store::StoreCheck,
) -> Result<(Vec<JobSummary>, Vec<Unreadable>)> {
    let mut rows = Vec::with_capacity(jobs.len());
    let mut bad = Vec::new();
    for batch in jobs.chunks(BATCH) {
        let (monitored, unreadable) = read(conn, prefix, batch, store).await?;
        rows.extend(monitored.iter().map(JobView::summary));
        bad.extend(unreadable);
    }
    Ok((rows, bad))
}

/// The runs in progress the first pipeline named by their slot alone (format 1 keeps a run's
/// fields in `:state` fields that cannot be named before `:active` is read): one more pipeline
/// for every such run of the batch. A job whose runs cannot be decoded moves to `bad`.
async fn read_named_runs(
    conn: &mut Connection,
    prefix: &str,
    jobs: &mut Vec<JobView>,
    bad: &mut Vec<Unreadable>,
) -> Result<()> {
    let keys: Vec<LeaseKeys> = jobs
        .iter()
        .map(|m| LeaseKeys::new(prefix, &m.job))
        .collect();
    let wanted: Vec<(&LeaseKeys, &[i64])> = keys
        .iter()
        .zip(jobs.iter())
        .map(|(k, m)| (k, m.named_slots.as_slice()))
        .collect();
    let read = crate::store::lease::read_named_runs(conn, &wanted).await?;
    let mut kept = Vec::with_capacity(jobs.len());
    for (mut m, runs) in std::mem::take(jobs).into_iter().zip(read) {
        match runs {
            Ok(runs) => {
                m.in_progress.extend(runs);
                m.named_slots.clear();
                kept.push(m);
            }
            Err(error) => bad.push(Unreadable {
                job: m.job,
                layout: m.layout,
                error,
            }),
        }
    }
    *jobs = kept;
    Ok(())
}

/// The job's results (both layouts keep one, score = slot).
fn results_key(prefix: &str, job: &JobRef) -> String {
    // The results key is the same in every format.
    JobKeys::new(job.layout, prefix, &job.name, LeaseFormat::NEW)
        .results()
        .to_string()
}

fn decode_one(
    prefix: &str,
    job: &JobRef,
    replies: Vec<Value>,
    store_format: LeaseFormat,
    results_max: usize,
) -> Result<JobView> {
    let mut replies = replies.into_iter();
    let mut next = move || replies.next().unwrap_or(Value::Nil);
    let registry_key = registry::registry_key(prefix, &job.name);
    let fields: Vec<(String, String)> = decode(&registry_key, next())?;
    let registry = registry::decode(&registry_key, &fields)?;
    let results_key = results_key(prefix, job);
    let raw: Vec<(String, String)> = decode(&results_key, next())?;
    let recent = raw
        .iter()
        .map(|(m, score)| ResultEntry::parse_scored(&results_key, m, score))
        .collect::<Result<Vec<_>>>()?;
    // Fewer than asked for: every result there is (or, over a window, every one in it).
    let recent_is_all = recent.len() < results_max;
    let mut m = JobView {
        job: job.name.clone(),
        layout: job.layout,
        registry,
        first_seen: None,
        first_seen_recorded: None,
        history_entries: recent.len() as u64,
        recent,
        recent_is_all,
        in_progress: Vec::new(),
        named_slots: Vec::new(),
        pause: None,
        waiting: None,
        claims: None,
        past_pauses: Vec::new(),
        lineage: Vec::new(),
    };
    match job.layout {
        Layout::ClaimOnly => decode_claims(prefix, &mut m, &mut next)?,
        Layout::Lease => decode_lease(prefix, &mut m, &mut next, store_format)?,
    }
    Ok(m)
}

/// The rest of a claim-only job's replies: its newest claim and the streams' lengths.
fn decode_claims(prefix: &str, m: &mut JobView, next: &mut impl FnMut() -> Value) -> Result<()> {
    m.first_seen = m.recent.iter().map(|r| r.slot).min();
    let k = ClaimKeys::new(prefix, &m.job);
    let newest = read::stream_entries(&k.runs, next())?.into_iter().next();
    let runs: u64 = decode(&k.runs, next())?;
    let manual: u64 = decode(&k.manual, next())?;
    m.claims = Some(ClaimFeed {
        newest,
        entries: runs + manual,
    });
    Ok(())
}

/// The rest of a lease job's replies: the history's size, first_seen and the
/// pause, and its runs in progress in its own format.
fn decode_lease(
    prefix: &str,
    m: &mut JobView,
    next: &mut impl FnMut() -> Value,
    store_format: LeaseFormat,
) -> Result<()> {
    let k = LeaseKeys::new(prefix, &m.job);
    let state_type: String = decode(&k.state, next())?;
    m.history_entries = decode(&k.results, next())?;
    let job_fields: Vec<Option<String>> = decode(&k.job, next())?;
    (m.in_progress, m.named_slots) = LeaseFormat::of_job(&state_type, store_format)
        .in_progress_from_replies(&k, &mut std::iter::from_fn(|| Some(next())))?;
    // A job from before first_seen (and every format 1 job) counts from its oldest run fetched;
    // slots older than the fetched results are never judged missed (`health::Inputs::recent_is_all`).
    let oldest = m.recent.iter().map(|r| r.slot).min();
    let recorded = job_fields.first().and_then(|v| v.as_deref());
    m.first_seen_recorded = read::first_seen(&k.job, recorded, None)?;
    m.first_seen = m.first_seen_recorded.or(oldest);
    m.waiting = match job_fields.get(1).and_then(|v| v.as_deref()) {
        Some(text) => Some(read::waiting_place(&k.job, text)?),
        None => None,
    };
    let pause = Pause::decode(&k.job, &job_fields[2.min(job_fields.len())..])?;
    m.pause = pause.paused_at.is_some().then_some(pause);
    Ok(())
}
