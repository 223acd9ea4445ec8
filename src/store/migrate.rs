//! Converting a store from format 1 to format 2 (`anarchon migrate`), and back (`--to 1`: the
//! same steps, each job converted by [`v1::convert`]).
//!
//! The conversion is safe while hosts claim, and can stop and start again at any point:
//!
//! 1. A lock, `<prefix>migrating`, keeps a second migration out (it expires by itself if this one
//!    is killed; it is renewed while it runs).
//! 2. The format key moves from 1 to 2 in one script. From then on a format 1 anarchon refuses the
//!    store (writing nothing), and this version writes format 2.
//! 3. Each format 1 job is converted by one script (lua/lease/v2/convert.lua): its runs in progress move
//!    to `:live`, its format 1 keys go, `:state` becomes the format 2 marker. Only this converts a
//!    job: a script of either format that meets a job in the other is refused, writing nothing,
//!    and the caller runs the other format's script, so claims go on in any order.
//!
//! Running it again goes on with whatever jobs are left.

use std::time::Duration;

use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::scripts;
use crate::store::Layout;
use crate::store::discover::find_jobs;
use crate::store::keys::format_key;
use crate::store::lease::{v1, v2};
use crate::store::read::{Unreadable, decode};
use crate::store::{LeaseFormat, LeaseKeys};
use crate::time::millis;

/// How long the migration lock lives unless renewed.
pub const LOCK_TTL: Duration = Duration::from_secs(60);

/// The held migration lock.
#[derive(Debug)]
pub struct MigrationLock {
    key: String,
    token: String,
}

/// Who holds the lock when it is not ours.
#[derive(Debug)]
pub struct LockHolder {
    pub holder: String,
    pub expires_in: Duration,
}

impl LockHolder {
    /// From the lock's value (`<token> <holder>`) and the milliseconds it still lives.
    fn of(value: &str, ttl_ms: u64) -> Self {
        LockHolder {
            holder: value.split_once(' ').map_or(value, |(_, h)| h).to_string(),
            expires_in: Duration::from_millis(ttl_ms),
        }
    }
}

async fn lock_op(conn: &mut Connection, key: &str, args: [&str; 4]) -> Result<Vec<String>> {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    conn.eval(&scripts::MIGRATION_LOCK, &[key], &args).await
}

/// Takes the migration lock of `prefix` for `holder` (a host:pid), or says who holds it.
pub async fn take_lock(
    conn: &mut Connection,
    prefix: &str,
    holder: &str,
) -> Result<std::result::Result<MigrationLock, LockHolder>> {
    let key = crate::store::names::migration_lock_key(prefix);
    let token = crate::store::token::new_token();
    let ttl = millis(LOCK_TTL).to_string();
    let reply = lock_op(conn, &key, ["take", &token, holder, &ttl]).await?;
    match reply.as_slice() {
        [taken] if taken == "taken" => Ok(Ok(MigrationLock { key, token })),
        [_, value, ttl] => Ok(Err(LockHolder::of(value, ttl.parse().unwrap_or(0)))),
        _ => Err(Error::corrupt(
            &key,
            format!("the lock script answered {reply:?}"),
        )),
    }
}

/// Who holds the migration lock of `prefix`, if anyone: `anarchon trim` waits for a migration
/// (a trim during a conversion back to format 1 could hide a run that ended meanwhile from it:
/// [`crate::store::lease::v1::convert`]).
pub async fn holder(conn: &mut Connection, prefix: &str) -> Result<Option<LockHolder>> {
    let key = crate::store::names::migration_lock_key(prefix);
    let mut pipe = redis::pipe();
    pipe.cmd("GET").arg(&key).cmd("PTTL").arg(&key);
    let (value, ttl): (Option<String>, i64) = conn.pipeline(&pipe).await?;
    Ok(value.map(|value| LockHolder::of(&value, u64::try_from(ttl).unwrap_or(0))))
}

impl MigrationLock {
    /// Extends the lock; an error if it was lost (expired and taken by another migration).
    pub async fn renew(&self, conn: &mut Connection) -> Result<()> {
        let ttl = millis(LOCK_TTL).to_string();
        let reply = lock_op(conn, &self.key, ["renew", &self.token, "", &ttl]).await?;
        if reply.first().map(String::as_str) == Some("renewed") {
            Ok(())
        } else {
            Err(Error::Other(format!(
                "the migration lock {} expired and another migration took it; this one stops (run it again to go on)",
                self.key
            )))
        }
    }

    pub async fn release(self, conn: &mut Connection) -> Result<()> {
        lock_op(conn, &self.key, ["release", &self.token, "", "0"]).await?;
        Ok(())
    }
}

/// What switching the format key did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Switch {
    Switched,
    Already,
    /// The key held another format than expected (a writer created it since it was read):
    /// nothing was written.
    Moved(Option<u32>),
}

/// Moves `<prefix>format` from `from` to `to` (or finds it at `to` already). `from` None: the key
/// must be absent (an empty prefix marked format 2); a writer that created it meanwhile (in
/// format 1) makes this an error, and the caller plans again.
pub async fn switch_format(
    conn: &mut Connection,
    prefix: &str,
    from: Option<u32>,
    to: LeaseFormat,
) -> Result<Switch> {
    let key = format_key(prefix);
    let from = from.map(|f| f.to_string()).unwrap_or_default();
    let reply: String = conn
        .eval(
            &scripts::FORMAT_SWITCH,
            &[&key],
            &[from, to.number().to_string()],
        )
        .await?;
    match reply.as_str() {
        "switched" => Ok(Switch::Switched),
        "already" => Ok(Switch::Already),
        "" => Ok(Switch::Moved(None)),
        other if crate::store::format::parse_format(other).is_some() => {
            Ok(Switch::Moved(crate::store::format::parse_format(other)))
        }
        other => Err(Error::corrupt(
            &key,
            format!("the store format is {other:?}, not a positive integer written plainly"),
        )),
    }
}

/// A lease job whose data is in another format than the one the store moves to.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct JobToConvert {
    pub job: String,
    /// Its runs in progress (they move to the other format's keys).
    pub runs_in_progress: u64,
}

/// What a migration would do: the lease jobs to convert, how many are in the target format
/// already, and jobs that could not be read.
#[derive(Debug, Default)]
pub struct Plan {
    pub to_convert: Vec<JobToConvert>,
    pub already: u64,
    pub unreadable: Vec<Unreadable>,
}

/// Looks at every lease job under `prefix` (SCAN, then one pipeline per 500 jobs) for a move to
/// format `to`. Reads only.
pub async fn plan(conn: &mut Connection, prefix: &str, to: LeaseFormat) -> Result<Plan> {
    let jobs: Vec<String> = find_jobs(conn, prefix, "*")
        .await?
        .into_iter()
        .filter(|j| j.layout == Layout::Lease)
        .map(|j| j.name)
        .collect();
    let mut plan = Plan::default();
    for batch in jobs.chunks(crate::store::read::BATCH) {
        let mut pipe = redis::pipe();
        for job in batch {
            let k = LeaseKeys::new(prefix, job);
            pipe.cmd("TYPE").arg(&k.state);
            pipe.cmd("SCARD").arg(&k.active);
            pipe.cmd("HLEN").arg(&k.live);
        }
        let mut replies = conn.replies(&pipe).await?.into_iter();
        for job in batch {
            let k = LeaseKeys::new(prefix, job);
            let mut next = || replies.next().unwrap_or(redis::Value::Nil);
            let (state, active, live) = (next(), next(), next());
            let read = decode::<String>(&k.state, state).and_then(|t| {
                Ok((
                    t,
                    decode::<u64>(&k.active, active)?,
                    decode::<u64>(&k.live, live)?,
                ))
            });
            match read {
                Ok((t, active, live)) => {
                    // A job with neither format's :state (no runs left) needs nothing.
                    let of_job = LeaseFormat::of_job(&t, to);
                    if of_job == to {
                        plan.already += 1;
                        continue;
                    }
                    let runs_in_progress = match of_job {
                        LeaseFormat::V1 => active,
                        LeaseFormat::V2 => live,
                    };
                    plan.to_convert.push(JobToConvert {
                        job: job.clone(),
                        runs_in_progress,
                    })
                }
                Err(error) => plan.unreadable.push(Unreadable {
                    job: job.clone(),
                    layout: Layout::Lease,
                    error,
                }),
            }
        }
    }
    Ok(plan)
}

/// The staging keys a stopped `migrate --to 1` left under `prefix` (SCAN, never KEYS).
pub async fn staging_left(conn: &mut Connection, prefix: &str) -> Result<Vec<String>> {
    let pattern = format!(
        "{{{}*}}{}*",
        crate::store::discover::glob_escape(prefix),
        v1::convert::STAGING_INFIX
    );
    let mut keys = crate::store::discover::scan(conn, &pattern).await?;
    keys.sort();
    keys.dedup();
    Ok(keys)
}

/// Deletes the staging keys a stopped `migrate --to 1` left under `prefix`: the caller holds the
/// migration lock, so no other migration is staging. Freed off the server's main thread.
pub async fn delete_staging_left(conn: &mut Connection, prefix: &str) -> Result<()> {
    for key in staging_left(conn, prefix).await? {
        conn.query::<()>(redis::cmd("UNLINK").arg(&key)).await?;
    }
    Ok(())
}

/// Converts one job to format `to` (a no-op when it is in `to` already): whether it was
/// converted, and how many runs in progress moved.
pub async fn convert_job(
    conn: &mut Connection,
    prefix: &str,
    job: &str,
    to: LeaseFormat,
) -> Result<(bool, u64)> {
    let keys = LeaseKeys::new(prefix, job);
    match to {
        LeaseFormat::V2 => {
            let reply: Vec<String> = conn
                .eval(&v2::CONVERT, &v2::script_keys(&keys), &[])
                .await?;
            // Whatever a stopped `migrate --to 1` staged for it is stale now.
            v1::convert::discard_staging(conn, &keys).await?;
            match reply.as_slice() {
                [done, moved] => Ok((done == "1", moved.parse().unwrap_or(0))),
                _ => Err(Error::corrupt(
                    &keys.state,
                    format!("the conversion script answered {reply:?}"),
                )),
            }
        }
        LeaseFormat::V1 => Ok(
            match v1::convert::convert_job(conn, &keys, v2::MARKER).await? {
                Some(moved) => (true, moved),
                None => (false, 0),
            },
        ),
    }
}
