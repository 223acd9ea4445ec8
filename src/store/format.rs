//! The format key, `<prefix>format`: which store format the data under a prefix is written in.
//!
//! A command that writes creates it (`SET NX`, in [`NEW_STORE_FORMAT`]) and every command reads it
//! first. A number newer than [`STORE_FORMAT`] means a newer anarchon wrote the data: we refuse
//! before writing anything, since guessing at a layout we do not know could lose runs or run them
//! twice.

use redis::Value;

use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::store::keys::{LeaseFormat, format_key};

/// The newest store format this build reads and writes. A store is in it only because an operator
/// chose it (`anarchon migrate`): every reader of format 1 (the scheduler's RedisBackend, earlier
/// anarchon releases) refuses a format 2 store, writing nothing.
pub const STORE_FORMAT: u32 = LeaseFormat::NEWEST.number();

/// The format a store with no format key is created in: format 1, the seed's layout
/// (`redis-backend.md`), which every scheduler sharing the store reads. Which format a shared store
/// is in is the fleet's decision, never a side effect of whichever process writes first.
pub const NEW_STORE_FORMAT: u32 = LeaseFormat::NEW.number();

/// What a store's format means for the other programs that share it, for people (`doctor`,
/// `inspect`): format 1 is the scheduler's own layout, format 2 anarchon's.
pub fn readers(format: Option<u32>) -> &'static str {
    match format.map(LeaseFormat::from_number) {
        None => LeaseFormat::NEW.who_reads_a_new_store(),
        Some(Some(known)) => known.who_reads(),
        Some(None) => "newer than this anarchon reads: upgrade it",
    }
}

/// What the first round trip of every command learns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreCheck {
    /// The format found (None: no anarchon data under this prefix yet, for a read-only command).
    pub format: Option<u32>,
    /// The server's clock, ms since the epoch.
    pub server_now_ms: i64,
    /// When its reply arrived, by this machine's monotonic clock.
    pub server_now_read_at: std::time::Instant,
    /// When it was asked for: the server read its clock between this and the reply.
    pub server_now_asked_at: std::time::Instant,
    /// The lease format [`StoreCheck::format`] names (see [`StoreCheck::lease_format`]).
    lease: LeaseFormat,
}

impl StoreCheck {
    /// The server's clock when this process started: its clock at the check, less the time since
    /// (by this machine's monotonic clock). A server that stalls (`CLIENT PAUSE`, a slow fork)
    /// answers late, and its clock then has moved past the moment cron started the process.
    ///
    /// The server read its clock somewhere between the request and the reply, so the start lies
    /// between its clock less the time from the start to the reply (a server that stalled before
    /// reading it) and its clock less the time to the request (a reply that this process was slow
    /// to read: a loaded machine). Within those bounds, this machine's wall clock at the start
    /// decides (the same clock on one machine, or close to it under NTP): taking the first bound
    /// alone put a run started a few ms after its fire time, on a loaded machine, on the slot
    /// before (next::after_an_outage..., a 4 s schedule, failed so under the suite's load).
    pub fn server_ms_at_process_start(&self) -> i64 {
        use crate::time::{millis, since_process_start};
        process_start_within(
            self.server_now_ms,
            millis(since_process_start(self.server_now_read_at)),
            millis(since_process_start(self.server_now_asked_at)),
            crate::time::process_start_wall_ms(),
        )
    }

    /// This check as it would read at `server_now_ms` (by the caller's own reckoning of the
    /// server's clock): a long-running process that checked the format once (`anarchon cron`,
    /// [`crate::scheduler::open::KnownStores`]) takes each slot with what it found then.
    pub fn as_of(&self, server_now_ms: i64) -> StoreCheck {
        StoreCheck {
            server_now_ms,
            server_now_read_at: std::time::Instant::now(),
            server_now_asked_at: std::time::Instant::now(),
            ..*self
        }
    }

    /// The format the lease layout's scripts must write in: the one the format key names, or
    /// [`LeaseFormat::NEW`] for a store with no format key yet. [`judge`] refused every number
    /// this build does not know before a check exists.
    pub fn lease_format(&self) -> LeaseFormat {
        self.lease
    }

    /// The keys of lease job `job` under `prefix`, for this store's format: how commands name a
    /// job's keys, so that none carries the format around itself.
    pub fn lease_keys(&self, prefix: &str, job: &str) -> crate::store::LeaseKeys {
        crate::store::LeaseKeys::new(prefix, job).with_format(self.lease)
    }

    /// The keys of `job` in `layout` under `prefix`, for this store's format.
    pub fn job_keys(
        &self,
        layout: crate::store::Layout,
        prefix: &str,
        job: &str,
    ) -> crate::store::JobKeys {
        crate::store::JobKeys::new(layout, prefix, job, self.lease)
    }
}

/// For commands that write: creates the format key if absent, then checks it, in one round trip.
pub async fn check_for_write(conn: &mut Connection, prefix: &str) -> Result<StoreCheck> {
    check(conn, prefix, true).await
}

/// For commands that only read: checks the format key without creating it.
pub async fn check_for_read(conn: &mut Connection, prefix: &str) -> Result<StoreCheck> {
    check(conn, prefix, false).await
}

/// `check_for_write`, with more reads (`also`) sent in the same round trip, for a command that
/// needs them before it starts (`run`: the job registry, the eviction policy, the types of the
/// job's keys). Their replies come back as they came, an error as a `Value::ServerError`; none on
/// a cluster connection, where the keys may live on different nodes: the caller reads them itself
/// there. `before_writing` judges them before anything is written: a new store's format key is
/// created only once it has said yes, so a command it refuses leaves the server as it was.
pub async fn check_for_write_and_read(
    conn: &mut Connection,
    prefix: &str,
    also: &[redis::Cmd],
    before_writing: impl FnOnce(&[Value]) -> Result<()>,
) -> Result<(StoreCheck, Vec<Value>)> {
    if conn.is_cluster() {
        return Ok((check_for_write(conn, prefix).await?, Vec::new()));
    }
    let key = format_key(prefix);
    let mut pipe = format_reads(&key, false);
    for cmd in also {
        pipe.add_command(cmd.clone());
    }
    let asked_at = std::time::Instant::now();
    let mut replies = conn.replies(&pipe).await?.into_iter();
    let (found, time) = (replies.next(), replies.next());
    let extra: Vec<Value> = replies.collect();
    let decoded = (
        found.and_then(|v| redis::from_redis_value::<Option<String>>(v).ok()),
        time.and_then(|v| redis::from_redis_value::<(String, String)>(v).ok()),
    );
    match decoded {
        (Some(Some(found)), Some((secs, micros))) => {
            let check = judge(conn, key, Some(found), &secs, &micros, asked_at)?;
            before_writing(&extra)?;
            Ok((check, extra))
        }
        // A new store (no format key yet): created once the reads are judged.
        (Some(None), Some(_)) => {
            before_writing(&extra)?;
            Ok((check_for_write(conn, prefix).await?, extra))
        }
        // The format key of another type (or a reply that is no format): the plain check says
        // what is wrong.
        _ => Ok((check_for_write(conn, prefix).await?, Vec::new())),
    }
}

/// [`StoreCheck::server_ms_at_process_start`]: the server's clock `server_now`, read between
/// `to_request` and `to_reply` ms after the process started; the start by this machine's wall
/// clock `wall`, taken within those bounds.
fn process_start_within(server_now: i64, to_reply: i64, to_request: i64, wall: Option<i64>) -> i64 {
    let earliest = server_now - to_reply;
    // (+1: the reply's clock is truncated to the millisecond.)
    let latest = (server_now + 1 - to_request).max(earliest);
    wall.map_or(earliest, |wall| wall.clamp(earliest, latest))
}

/// The format check's reads: `SET NX` of the format key (for a write; its reply ignored), `GET`,
/// `TIME`.
fn format_reads(key: &str, create: bool) -> redis::Pipeline {
    let mut pipe = redis::pipe();
    if create {
        pipe.cmd("SET")
            .arg(key)
            .arg(NEW_STORE_FORMAT)
            .arg("NX")
            .ignore();
    }
    pipe.cmd("GET").arg(key).cmd("TIME");
    pipe
}

async fn check(conn: &mut Connection, prefix: &str, create: bool) -> Result<StoreCheck> {
    let key = format_key(prefix);
    let pipe = format_reads(&key, create);
    let asked_at = std::time::Instant::now();
    let reply: Result<(Option<String>, (String, String))> = conn.pipeline(&pipe).await;
    let (found, (secs, micros)) = match reply {
        Err(e) if e.is_wrongtype() => {
            let found: String = conn.query(redis::cmd("TYPE").arg(&key)).await?;
            return Err(Error::WrongType {
                key,
                found,
                expected: "string".into(),
            });
        }
        other => other?,
    };
    judge(conn, key, found, &secs, &micros, asked_at)
}

/// The check's verdict on the format key's value and the server's TIME.
fn judge(
    conn: &Connection,
    key: String,
    found: Option<String>,
    secs: &str,
    micros: &str,
    asked_at: std::time::Instant,
) -> Result<StoreCheck> {
    let server_now_ms = parse_time_reply(secs, micros)?;
    let (format, lease) = match found {
        None => (None, LeaseFormat::NEW),
        Some(text) => {
            let (number, lease) = known_format(conn, &key, &text)?;
            (Some(number), lease)
        }
    };
    Ok(StoreCheck {
        format,
        server_now_ms,
        server_now_read_at: std::time::Instant::now(),
        server_now_asked_at: asked_at,
        lease,
    })
}

/// The format number the format key `key` holds as `text`, and its lease format: a text that is
/// no number written plainly is bad data; a number this build does not know is refused here,
/// where the format key is read, never mapped to the nearest known format.
fn known_format(conn: &Connection, key: &str, text: &str) -> Result<(u32, LeaseFormat)> {
    let number = parse_format(text).ok_or_else(|| {
        Error::corrupt(
            key,
            format!("the store format is {text:?}, not a positive integer written plainly"),
        )
    })?;
    let lease = LeaseFormat::from_number(number).ok_or_else(|| Error::StoreFormat {
        url: conn.shown_url().to_string(),
        key: key.to_string(),
        found: number.to_string(),
        supported: STORE_FORMAT,
    })?;
    Ok((number, lease))
}

/// The lease format the store's format key names now, from `found` (its value, read again by a
/// writer whose first read may be old: a claim after `--jitter`'s sleep, a catch-up's later
/// slot, a backup that took over minutes later). A migration may have switched it since; the
/// writer then writes the new format, and no job is created in a format the store left. An
/// absent key keeps `keys`' format; a number this build does not know is refused, as at the
/// start.
pub fn refreshed(
    conn: &Connection,
    keys: &crate::store::LeaseKeys,
    found: Option<String>,
) -> Result<crate::store::LeaseKeys> {
    let Some(text) = found else {
        return Ok(keys.clone());
    };
    let (_, format) = known_format(conn, &keys.format_key, &text)?;
    Ok(keys.clone().with_format(format))
}

/// [`refreshed`], with its own round trip (for writers that create a job without a look first:
/// a catch-up's skip, a backfill's unskip).
pub async fn refresh(
    conn: &mut Connection,
    keys: &crate::store::LeaseKeys,
) -> Result<crate::store::LeaseKeys> {
    let found: Option<String> = conn
        .query(redis::cmd("GET").arg(&keys.format_key))
        .await
        .map_err(|e| e.on_key(&keys.format_key, "string"))?;
    refreshed(conn, keys, found)
}

/// A format number as the format key must hold it: a positive decimal integer with no sign, space
/// or leading zero (`1`, `2`, ...). Anything else was not written by an anarchon.
pub fn parse_format(text: &str) -> Option<u32> {
    let canonical =
        !text.is_empty() && !text.starts_with('0') && text.bytes().all(|b| b.is_ascii_digit());
    canonical.then(|| text.parse().ok()).flatten()
}

/// The server's clock as ms since the epoch, from a TIME reply.
pub fn parse_time_reply(secs: &str, micros: &str) -> Result<i64> {
    let s: i64 = secs
        .parse()
        .map_err(|_| Error::redis(None, format!("TIME answered {secs:?} seconds")))?;
    let us: i64 = micros
        .parse()
        .map_err(|_| Error::redis(None, format!("TIME answered {micros:?} microseconds")))?;
    Ok(s * 1000 + us / 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_process_start_is_the_wall_clock_within_what_the_server_clock_allows() {
        let now = 1_796_220_004_030;
        // Asked 2 ms after the start, answered 30 ms after: the start lies in [now-30, now-1].
        // A reply read late (a loaded machine): this machine's clock says when.
        assert_eq!(process_start_within(now, 30, 2, Some(now - 25)), now - 25);
        // A server that stalled 5 s before reading its clock: the start is 5 s before it, even
        // by a wall clock 2 s ahead.
        assert_eq!(
            process_start_within(now, 5_030, 2, Some(now - 3_030)),
            now - 3_030
        );
        assert_eq!(
            process_start_within(now, 5_030, 5_028, Some(now)),
            now - 5_027
        );
        // A wall clock far off is bounded either way; none known: the earliest.
        assert_eq!(
            process_start_within(now, 30, 2, Some(now + 90_000)),
            now - 1
        );
        assert_eq!(
            process_start_within(now, 30, 2, Some(now - 90_000)),
            now - 30
        );
        assert_eq!(process_start_within(now, 30, 2, None), now - 30);
    }

    #[test]
    fn only_canonical_format_numbers_are_read() {
        assert_eq!(parse_format("1"), Some(1));
        assert_eq!(parse_format("12"), Some(12));
        for bad in ["0", " 1", "1 ", "01", "+1", "-1", "", "1.0", "99999999999"] {
            assert_eq!(parse_format(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn time_reply() {
        assert_eq!(
            parse_time_reply("1796220300", "123999").unwrap(),
            1_796_220_300_123
        );
        assert!(parse_time_reply("x", "1").is_err());
    }
}
