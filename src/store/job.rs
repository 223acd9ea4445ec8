//! Reading one job: which layout it uses, its runs in progress, and its newest runs with their
//! results. Shared by `inspect`, `history` and `trim`.

use std::collections::HashMap;

use serde::Serialize;

use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::store::Layout;
use crate::store::discover::{JobRef, find_jobs};
use crate::store::read::{self, KeyInfo, ResultEntry, RunEntry};
use crate::store::state::RunState;
use crate::store::{ClaimKeys, LeaseFormat, LeaseKeys};
use crate::time::rfc3339;

/// A run in progress, with its lease measured against the server's clock.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ActiveRun {
    #[serde(flatten)]
    pub state: RunState,
    pub slot_time: String,
    pub lease_end_time: String,
    /// `claimed_at` as RFC 3339.
    pub claimed_at_time: String,
    /// Milliseconds the lease still lives by the server's clock (negative: expired).
    pub lease_left_ms: i64,
    /// Since attempt 1 was claimed, by the server's clock.
    pub running_for_ms: i64,
    /// When the lease was last renewed (a claim or heartbeat: the lease end minus the lease it was
    /// claimed with). A store that records each run's lease gives it exactly; one that does not
    /// (its runs keep only their lease end) gives it derived, from the lease the job's registry
    /// records (`renewed_at_derived`), or null when there is none or it does not add up.
    pub renewed_at: Option<i64>,
    /// Whether `renewed_at` is derived: the lease end minus the job's registered lease, true while
    /// the holder renews by the lease its `run` registered (each heartbeat sets the lease end to
    /// its time plus that lease).
    pub renewed_at_derived: bool,
    /// Its command failed and the run waits for a retry due then (ms; `--retries`): no command
    /// runs, and its lease ends when the retry is due. None: its attempt runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_due: Option<i64>,
}

/// An entry of a run stream, with its result when there is one.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct RunWithResult {
    #[serde(flatten)]
    pub entry: RunEntry,
    pub slot_time: String,
    /// `claimed_at` as RFC 3339.
    pub claimed_at_time: Option<String>,
    /// `ended_at` as RFC 3339.
    pub ended_at_time: Option<String>,
    /// ended_at - claimed_at, as `history` gives it (null while either is unknown).
    pub duration_ms: Option<i64>,
    /// The attempt's fencing token (store format 2), as `history` gives it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fence: Option<i64>,
    pub result: Option<serde_json::Value>,
}

impl RunWithResult {
    /// Whether `run --overlap replace` stopped this attempt for a newer slot
    /// ([`crate::store::read::replaced`]).
    pub fn was_replaced(&self) -> bool {
        match (self.entry.status.as_deref(), &self.result) {
            (Some(status), Some(result)) => crate::store::read::replaced(status, result),
            _ => false,
        }
    }
}

/// ended_at - claimed_at, when both are known.
fn duration(claimed_at: Option<i64>, ended_at: Option<i64>) -> Option<i64> {
    match (claimed_at, ended_at) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    }
}

/// Which layout of `job` to read, with its keys' types and sizes: `wanted` if given, else
/// whichever exists (lease first). Refuses keys of the wrong type, and a job with no keys.
pub async fn locate_job(
    conn: &mut Connection,
    prefix: &str,
    job: &str,
    wanted: Option<Layout>,
) -> Result<(Layout, Vec<KeyInfo>)> {
    let lease_keys = LeaseKeys::new(prefix, job);
    let claim_keys = ClaimKeys::new(prefix, job);
    let registry_key = crate::store::registry::registry_key(prefix, job);
    let mut all: Vec<&str> = lease_keys.every().to_vec();
    all.extend(claim_keys.all());
    all.push(&registry_key);
    let events_key = crate::store::names::events_key(prefix, job);
    all.push(&events_key);
    let mut infos = read::key_infos(conn, &all).await?;
    // The operators' actions (the events stream) and the registry (what `run` recorded of the
    // job) belong to no layout: shown, never a job. The events key is shown whatever its type:
    // reading it says what is wrong with it, and nothing else of the job depends on it.
    let events = infos.pop();
    let registry = infos.pop();
    let lease_count = LeaseKeys::SUFFIXES.len();
    read::check_types(&infos[..lease_count], &LeaseKeys::TYPES)?;
    read::check_types(&infos[lease_count..], &ClaimKeys::TYPES)?;
    read::check_types(registry.as_slice(), &[&["hash"]])?;
    // The :job hash alone is no job (it is what claimants recorded).
    let exists = |infos: &[KeyInfo]| {
        infos
            .iter()
            .any(|i| i.kind != "none" && !i.key.ends_with("}:job"))
    };
    let layout = match wanted {
        Some(layout) => layout,
        None if exists(&infos[..lease_count]) => Layout::Lease,
        None => Layout::ClaimOnly,
    };
    let (mine, other) = match layout {
        Layout::Lease => (&infos[..lease_count], &infos[lease_count..]),
        Layout::ClaimOnly => (&infos[lease_count..], &infos[..lease_count]),
    };
    if !exists(mine) {
        // The job is there, in the other layout: say so, rather than "no job" with its own name
        // as the nearest.
        if wanted.is_some() && exists(other) {
            let (is, asked) = match layout {
                Layout::Lease => (
                    "a claim-only job (strategies stream-id, idmp, script)",
                    "lease jobs",
                ),
                Layout::ClaimOnly => ("a lease job", "claim-only jobs"),
            };
            return Err(Error::usage(format!(
                "{job:?} is {is}: this works on {asked} only\n  hint: `anarchon inspect {job}` shows the job as it is"
            )));
        }
        return Err(not_found(conn, prefix, job).await);
    }
    // Keys of the other layout are shown too: an operator should see everything the job holds.
    // Absent keys are not (a format 2 job has none of format 1's, and the reverse).
    let mut keys: Vec<KeyInfo> = mine.iter().filter(|i| i.kind != "none").cloned().collect();
    keys.extend(other.iter().filter(|i| i.kind != "none").cloned());
    keys.extend(registry.filter(|i| i.kind != "none"));
    keys.extend(events.filter(|i| i.kind != "none"));
    Ok((layout, keys))
}

/// A lease job an operator can pause or resume: one the store holds ([`locate_job`]), or one a
/// live replica of `anarchon cron` has in its crontab and has not run yet (a new job, a yearly
/// one: its keys come with its first run, and an operator may want it paused before that). A name
/// neither knows is refused, the nearest names of both offered.
pub async fn locate_lease_job_or_scheduled(
    conn: &mut Connection,
    prefix: &str,
    job: &str,
    now: i64,
) -> Result<()> {
    let not_found = match locate_job(conn, prefix, job, Some(Layout::Lease)).await {
        Ok(_) => return Ok(()),
        Err(Error::NotFound(m)) => m,
        Err(e) => return Err(e),
    };
    // The replicas' hash is an addition some stores never have: unreadable, the store's answer
    // stands.
    let live: Vec<crate::store::requests::Replica> =
        crate::store::requests::read_replicas(conn, prefix)
            .await
            .unwrap_or_default()
            .into_iter()
            .filter(|r| r.is_live(now))
            .collect();
    if live.iter().any(|r| r.runs(job)) {
        return Ok(());
    }
    Err(Error::NotFound(
        match crate::store::requests::nearest_job(job, &live) {
            // The store knew no near name (its hint says so): a replica's job is the nearest.
            Some(name) if !not_found.hint.as_deref().unwrap_or("").contains("did you mean") => {
                format!(
                    "no job {job:?} under prefix {prefix:?}\n  hint: did you mean {name}? (a job of a live replica's crontab that has not run yet)"
                )
                .into()
            }
            _ => not_found,
        },
    ))
}

/// Whether the store holds any key of `job`, in either layout (one round trip).
pub async fn job_exists(conn: &mut Connection, prefix: &str, job: &str) -> Result<bool> {
    let lease = LeaseKeys::new(prefix, job);
    let claim = ClaimKeys::new(prefix, job);
    let mut cmd = redis::cmd("EXISTS");
    for key in lease.every().iter().chain(claim.all().iter()) {
        cmd.arg(*key);
    }
    let found: u64 = conn.query(&cmd).await?;
    Ok(found > 0)
}

/// The layouts in which the store holds `job`, judged by the keys [`find_jobs`] finds jobs by (the
/// `:job` hash alone is no job): for a job named on the command line, one round trip instead of a
/// SCAN of the whole keyspace. Each key is asked alone, so it works on a cluster too.
pub async fn layouts_of(conn: &mut Connection, prefix: &str, job: &str) -> Result<Vec<JobRef>> {
    let lease = LeaseKeys::new(prefix, job);
    let claim = ClaimKeys::new(prefix, job);
    let lease_keys: Vec<&str> = lease
        .all()
        .into_iter()
        .chain([lease.live.as_str()])
        .collect();
    let keys: Vec<&str> = lease_keys.iter().copied().chain(claim.all()).collect();
    let mut pipe = redis::pipe();
    for key in &keys {
        pipe.cmd("EXISTS").arg(*key);
    }
    let found: Vec<u64> = conn
        .replies(&pipe)
        .await?
        .into_iter()
        .zip(&keys)
        .map(|(v, key)| read::decode::<u64>(key, v))
        .collect::<Result<_>>()?;
    let (in_lease, in_claim) = found.split_at(lease_keys.len());
    Ok([(in_lease, Layout::Lease), (in_claim, Layout::ClaimOnly)]
        .into_iter()
        .filter(|(counts, _)| counts.iter().any(|n| *n > 0))
        .map(|(_, layout)| JobRef {
            name: job.to_string(),
            layout,
        })
        .collect())
}

/// For a write command typed by a person: refuses a job the store does not know (a typo would
/// create it), with the nearest names and `--new`. `may_create`: the caller's word that a new job
/// is meant (`--new`, or no person at a terminal typed it: the command decides that, not the
/// store).
pub async fn require_job_or_new(
    conn: &mut Connection,
    prefix: &str,
    job: &str,
    may_create: bool,
) -> Result<()> {
    if may_create || job_exists(conn, prefix, job).await? {
        return Ok(());
    }
    Err(match not_found(conn, prefix, job).await {
        Error::NotFound(mut m) => {
            m.hint = Some(format!(
                "{}; pass --new to create job {job:?}",
                m.hint.unwrap_or_default()
            ));
            Error::NotFound(m)
        }
        other => other,
    })
}

/// A "no such job" error that suggests the nearest names.
pub async fn not_found(conn: &mut Connection, prefix: &str, job: &str) -> Error {
    // `--prefix cron` where the keys are `cron:...`: every job's name then starts with ':'.
    if let Ok(jobs) = find_jobs(conn, prefix, &format!(":{job}")).await
        && !jobs.is_empty()
    {
        return Error::NotFound(
            format!(
                "no job {job:?} under prefix {prefix:?}, but there is {:?}\n  hint: did you mean --prefix {prefix}: (prefixes end with their separator)?",
                jobs[0].name
            )
            .into(),
        );
    }
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
    Error::NotFound(format!("no job {job:?} under prefix {prefix:?}\n{hint}").into())
}

/// Which format a lease job's data is in ([`LeaseFormat::of_job`]; `keys.format` is the store's).
pub async fn job_format(conn: &mut Connection, keys: &LeaseKeys) -> Result<LeaseFormat> {
    let found: String = conn.query(redis::cmd("TYPE").arg(&keys.state)).await?;
    Ok(LeaseFormat::of_job(&found, keys.format))
}

/// Reads `keys`' job with `read` in the job's own format, found first (the type of `:state`). A job
/// that `migrate` converted between the two (its keys then hold the other format's types, which
/// `read` meets as a wrong type) is read again in its new format, a few times.
pub async fn in_job_format<T>(
    conn: &mut Connection,
    keys: &LeaseKeys,
    mut read: impl AsyncFnMut(&mut Connection, LeaseFormat) -> Result<T>,
) -> Result<T> {
    let mut format = job_format(conn, keys).await?;
    for _ in 0..3 {
        match read(conn, format).await {
            Err(e) if e.is_wrongtype() || matches!(e, Error::WrongType { .. }) => {
                let now = job_format(conn, keys).await?;
                if now == format {
                    return Err(e);
                }
                format = now;
            }
            done => return done,
        }
    }
    read(conn, format).await
}

/// The runs in progress of a lease job, newest first, in whichever format the job is.
pub async fn active_runs_for(
    conn: &mut Connection,
    keys: &LeaseKeys,
    now: i64,
) -> Result<Vec<ActiveRun>> {
    in_job_format(conn, keys, async |conn, format| {
        active_runs_in(conn, keys, format, now).await
    })
    .await
}

/// The same, for a job whose format the caller knows already (`inspect` has read the type of every
/// key of the job).
pub async fn active_runs_in(
    conn: &mut Connection,
    keys: &LeaseKeys,
    format: LeaseFormat,
    now: i64,
) -> Result<Vec<ActiveRun>> {
    let states = format.runs_in_progress(conn, keys).await?;
    let mut runs: Vec<ActiveRun> = states
        .into_iter()
        .map(|state| ActiveRun::at(state, now))
        .collect();
    runs.sort_by_key(|r| std::cmp::Reverse(r.state.slot));
    Ok(runs)
}

impl RunWithResult {
    /// An ended attempt of a lease job, as its `:results` member has it.
    pub fn ended(r: ResultEntry) -> Self {
        RunWithResult {
            slot_time: rfc3339(r.slot),
            claimed_at_time: r.claimed_at.map(rfc3339),
            ended_at_time: r.ended_at.map(rfc3339),
            duration_ms: duration(r.claimed_at, r.ended_at),
            fence: r.fence,
            entry: RunEntry {
                id: String::new(),
                slot: r.slot,
                attempt: r.attempt,
                token: r.token,
                runner: r.runner,
                status: Some(r.status),
                claimed_at: r.claimed_at,
                ended_at: r.ended_at,
                kind: r.kind.unwrap_or_else(|| "scheduled".into()),
            },
            result: Some(r.result),
        }
    }
}

impl ActiveRun {
    /// A run in progress, its lease measured against the server's clock `now`.
    pub fn at(state: RunState, now: i64) -> Self {
        ActiveRun {
            slot_time: rfc3339(state.slot),
            lease_end_time: rfc3339(state.lease_end),
            claimed_at_time: rfc3339(state.claimed_at),
            lease_left_ms: state.lease_end - now,
            running_for_ms: now - state.started_at,
            renewed_at: state.lease_ms.map(|ms| state.lease_end - ms),
            renewed_at_derived: false,
            retry_due: None,
            state,
        }
    }

    /// The run, said to wait for a retry when `recent` holds its current attempt failed with a
    /// retry due ([`crate::store::read::ResultEntry::retry_due`]).
    pub fn with_retry(mut self, recent: &[crate::store::read::ResultEntry]) -> Self {
        self.retry_due = crate::store::read::ResultEntry::awaited_retry(recent, &self.state)
            .and_then(|r| r.retry_due());
        if self.retry_due.is_some() {
            // Nobody renews it: the failed attempt's finish set its lease end.
            self.renewed_at = None;
        }
        self
    }

    /// The run with its renewal derived from `registered_lease_ms` (the job registry's lease) when
    /// the store recorded no lease for it. Every renewal sets the lease end to its time plus the
    /// lease, never moving it back, so the lease end minus the lease is the last renewal, as long
    /// as the holder renewed by that lease. A derived time before the attempt's claim or after
    /// `now` shows it did not (another `--lease` than the registry's): no time is then shown
    /// rather than a wrong one.
    pub fn with_registered_lease(mut self, registered_lease_ms: Option<i64>, now: i64) -> Self {
        if self.renewed_at.is_some() {
            return self;
        }
        let derived = registered_lease_ms
            .filter(|ms| *ms > 0)
            .map(|ms| self.state.lease_end - ms)
            .filter(|at| (self.state.claimed_at..=now).contains(at));
        self.renewed_at_derived = derived.is_some();
        self.renewed_at = derived;
        self
    }
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
    // An entry's result is the member of the same slot and attempt (and token: format 1 entries
    // and claim-only ones carry it; format 2 entries leave it, with the runner, to the member).
    let mut by_run: HashMap<(i64, Option<u32>), Vec<ResultEntry>> = HashMap::new();
    for r in results {
        by_run.entry((r.slot, r.attempt)).or_default().push(r);
    }
    Ok(entries
        .into_iter()
        .map(|mut entry| {
            let result = by_run
                .get_mut(&(entry.slot, entry.attempt))
                .and_then(|found| {
                    let i = found
                        .iter()
                        .position(|r| entry.token.is_empty() || r.token == entry.token)?;
                    Some(found.swap_remove(i))
                });
            // What the entry leaves to its member: everything but the slot and attempt where it
            // has no token; in format 1 the runner and the claim time (earlier builds wrote them
            // in the entry too).
            if let Some(r) = result.as_ref() {
                if entry.token.is_empty() {
                    entry.token = r.token.clone();
                    if let Some(kind) = &r.kind {
                        entry.kind = kind.clone();
                    }
                }
                if entry.runner.is_empty() {
                    entry.runner = r.runner.clone();
                }
                if entry.claimed_at.is_none() {
                    entry.claimed_at = r.claimed_at;
                }
            }
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
                claimed_at_time: entry.claimed_at.map(rfc3339),
                ended_at_time: entry.ended_at.map(rfc3339),
                duration_ms: duration(entry.claimed_at, entry.ended_at),
                fence: result.as_ref().and_then(|r| r.fence),
                entry,
                result: result.map(|r| r.result),
            }
        })
        .collect())
}
