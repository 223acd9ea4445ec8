//! Store format 1, the seed's layout (docs/store-format.md, "Lease layout, format 1"): every run's
//! state in `:state` as `<slot>:<attribute>` fields, beside `:active`, `:slots`, `:runs`,
//! `:results` and `:job`. The one module that knows it: its key order, its scripts
//! (`lua/lease/v1/`), its decoders, and what a claim's look and a catch-up's "was it claimed?"
//! read of a run. Everything else asks [`super::LeaseFormat`].

use std::collections::BTreeMap;
use std::sync::LazyLock;

use redis::Value;

use super::{LeaseKeys, LookedRun, Scripts};
use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::scripts::{FunctionLibrary, LuaScript};
use crate::store::decode::decode;
use crate::store::state::{RunKind, RunState, RunStatus};

/// The type of a format 1 job's `:state` key.
pub const STATE_TYPE: &str = "hash";

/// Where format 1 keeps runs in progress (`migrate`'s words).
pub const RUNS_IN_PROGRESS_KEYS: &str = ":state and :active";

/// Who reads a format 1 store.
pub const WHO_READS: &str = "the scheduler's own layout: RedisBackend and every anarchon read it";

/// Who reads a store that has no format key yet, when new stores are created in format 1.
pub const WHO_READS_A_NEW_STORE: &str =
    "no format key yet: the first write creates format 1, which every scheduler reads";

/// What `migrate --to 1` costs, said before it asks to go on.
pub const WHAT_THE_MOVE_COSTS: &str = "Format 1 is the seed's layout, which the scheduler's RedisBackend / ValkeyBackend instances and
every anarchon release read. Moving back to it:
  - rebuilds each job's history as format 1 keeps it: a read of every result and about three
    writes per run of history, sent as plain commands (the one script per job reads only its runs
    in progress); hosts claim on meanwhile,
  - costs more memory per run of history (about 570 B against 315 B) and about a fifth more script
    time per run (docs/guide.md, \"Store formats: which to use\").
Start the seed's schedulers after it ends: until then some jobs are still in format 2.";

/// The KEYS of every format 1 script (lua/lease/v1/lib.lua): the five history keys, then `:job`.
pub fn script_keys(keys: &LeaseKeys) -> Vec<&str> {
    keys.with_job().to_vec()
}

/// Each script is `lua/lease/v1/lib.lua` (with the helpers both formats share) followed by its own
/// file, and a function of [`LIBRARY`].
const LIB: [&str; 5] = [
    include_str!("../../../lua/lease/v1/lib.lua"),
    include_str!("../../../lua/lease/pause.lua"),
    include_str!("../../../lua/lease/released.lua"),
    include_str!("../../../lua/lease/retry.lua"),
    include_str!("../../../lua/lease/handed_over.lua"),
];

/// Every format 1 script, by file: one library of functions holds them all.
const FILES: [(&str, &str); 8] = [
    ("claim.lua", include_str!("../../../lua/lease/v1/claim.lua")),
    (
        "heartbeat.lua",
        include_str!("../../../lua/lease/v1/heartbeat.lua"),
    ),
    (
        "finish.lua",
        include_str!("../../../lua/lease/v1/finish.lua"),
    ),
    ("trim.lua", include_str!("../../../lua/lease/v1/trim.lua")),
    (
        "release.lua",
        include_str!("../../../lua/lease/v1/release.lua"),
    ),
    ("skip.lua", include_str!("../../../lua/lease/v1/skip.lua")),
    (
        "unskip.lua",
        include_str!("../../../lua/lease/v1/unskip.lua"),
    ),
    (
        "convert.lua",
        include_str!("../../../lua/lease/v1/convert.lua"),
    ),
];

/// The format 1 scripts as a Redis Functions library (see [`FunctionLibrary`]).
pub static LIBRARY: LazyLock<FunctionLibrary> =
    LazyLock::new(|| FunctionLibrary::new(&LIB, &FILES, LIBRARY_HASH));

/// The hash in [`LIBRARY`]'s name, worked out when anarchon is compiled.
const LIBRARY_HASH: u64 = crate::scripts::library_hash(&LIB, &FILES);

macro_rules! script {
    ($file:literal) => {
        LazyLock::new(|| {
            LuaScript::in_library(
                &LIB,
                &LIBRARY,
                $file,
                include_str!(concat!("../../../lua/lease/v1/", $file)),
            )
        })
    };
}

/// Claims a run: won / overlap / done / running / paused.
pub static CLAIM: LazyLock<LuaScript> = script!("claim.lua");
/// Extends the lease of the current attempt.
pub static HEARTBEAT: LazyLock<LuaScript> = script!("heartbeat.lua");
/// Ends the current attempt as finished or failed.
pub static FINISH: LazyLock<LuaScript> = script!("finish.lua");
/// Trims history on demand.
pub static TRIM: LazyLock<LuaScript> = script!("trim.lua");
/// Ends a run in progress for an operator (`anarchon release`).
pub static RELEASE: LazyLock<LuaScript> = script!("release.lua");
/// Records a missed run that `run --catch-up` will not run as skipped, once.
pub static SKIP: LazyLock<LuaScript> = script!("skip.lua");
/// Takes a skip back, for `run --backfill --include-skipped`.
pub static UNSKIP: LazyLock<LuaScript> = script!("unskip.lua");
/// The last step of converting a format 2 job back to format 1 (`anarchon migrate --to 1`,
/// [`convert`]).
pub static CONVERT: LazyLock<LuaScript> = script!("convert.lua");

pub mod convert;

pub(super) fn scripts() -> Scripts {
    Scripts {
        claim: &CLAIM,
        heartbeat: &HEARTBEAT,
        finish: &FINISH,
        trim: &TRIM,
        release: &RELEASE,
        skip: &SKIP,
        unskip: &UNSKIP,
    }
}

/// The fields of one run the scripts read (lua/lease/v1/lib.lua `read_run`), in that order: the
/// look reads the same, so that it answers only what the script would.
pub const READ_FIELDS: [&str; 7] = [
    "status",
    "attempt",
    "token",
    "runner",
    "lease_end",
    "claimed_at",
    "kind",
];

/// The look's read of `slot`: its [`READ_FIELDS`], one HMGET.
pub(super) fn queue_look(pipe: &mut redis::Pipeline, keys: &LeaseKeys, slot: i64) {
    let mut read = redis::cmd("HMGET");
    read.arg(&keys.state);
    for name in READ_FIELDS {
        read.arg(field_name(slot, name));
    }
    pipe.add_command(read);
}

/// The run a look read, when it is sound (as the script's `validate_run` judges): a run in
/// progress has every field but `kind`; an ended one keeps fewer as it ages, and answers with its
/// status alone. None when there is no run, or anything the script would refuse (the script then
/// names it).
pub(super) fn decode_look(reply: Value) -> Option<LookedRun> {
    let [status, attempt, token, runner, lease_end, claimed_at, kind]: [Option<String>; 7] =
        redis::from_redis_value(reply).ok()?;
    let status: RunStatus = status?.parse().ok()?;
    let int = |text: &Option<String>| -> Option<Option<i64>> {
        match text {
            None => Some(None),
            Some(t) if is_int(t) => Some(t.parse().ok()),
            Some(_) => None,
        }
    };
    let (attempt, lease_end, claimed_at) = (int(&attempt)?, int(&lease_end)?, int(&claimed_at)?);
    if attempt.is_some_and(|a| !(1..=1_000_000).contains(&a))
        || token.as_deref() == Some("")
        || kind
            .as_deref()
            .is_some_and(|k| k != "scheduled" && k != "manual")
    {
        return None;
    }
    let whole = attempt.is_some() && token.is_some() && lease_end.is_some() && claimed_at.is_some();
    if status == RunStatus::Running && !whole {
        return None;
    }
    Some(LookedRun {
        status,
        attempt: attempt.and_then(|a| u32::try_from(a).ok()),
        token,
        runner: runner.unwrap_or_default(),
        lease_end,
    })
}

/// An integer as the scripts accept one (lua/lease/v1/lib.lua `is_int`): an optional minus sign
/// and at most 16 characters of decimal digits.
fn is_int(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    text.len() <= 16 && !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Whether any claim of `slot` reached the store: its state exists. One reply.
pub(super) fn queue_claimed(pipe: &mut redis::Pipeline, keys: &LeaseKeys, slot: i64) -> usize {
    pipe.cmd("HEXISTS")
        .arg(&keys.state)
        .arg(field_name(slot, "status"));
    1
}

/// The runs in `:active`, each read from `:state`.
pub(super) async fn runs_in_progress(
    conn: &mut Connection,
    keys: &LeaseKeys,
) -> Result<Vec<RunState>> {
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
            cmd.arg(field_name(slot, f));
        }
        pipe.add_command(cmd);
    }
    let values = conn.replies(&pipe).await?;
    let mut pairs = Vec::new();
    for (slot, value) in slots.iter().zip(values) {
        let fields: Vec<Option<String>> = decode(&keys.state, value)?;
        for (name, v) in RUN_FIELDS.iter().zip(fields) {
            if let Some(v) = v {
                pairs.push((field_name(slot, name), v));
            }
        }
    }
    Ok(decode_state(&keys.state, &pairs)?.into_values().collect())
}

/// Decodes every run in a state hash (the pairs of HGETALL), keyed by slot.
/// Any field anarchon does not know, or cannot parse, is an error naming `key` and the field.
pub fn decode_state(key: &str, fields: &[(String, String)]) -> Result<BTreeMap<i64, RunState>> {
    let mut by_slot: BTreeMap<i64, BTreeMap<&str, &str>> = BTreeMap::new();
    for (name, value) in fields {
        let (slot, attribute) = name.split_once(':').ok_or_else(|| {
            Error::corrupt(key, format!("field {name:?} is not <slot>:<attribute>"))
        })?;
        let slot: i64 = slot.parse().map_err(|_| {
            Error::corrupt(
                key,
                format!("field {name:?} does not start with a slot in ms"),
            )
        })?;
        by_slot.entry(slot).or_default().insert(attribute, value);
    }
    by_slot
        .into_iter()
        .map(|(slot, attrs)| decode_run(key, slot, &attrs).map(|run| (slot, run)))
        .collect()
}

/// Every attribute a run has in the state hash, as `<slot>:<attribute>` (the same list as
/// RUN_FIELDS in lua/lease/v1/lib.lua).
pub const RUN_FIELDS: [&str; 9] = [
    "status",
    "attempt",
    "token",
    "runner",
    "lease_end",
    "claimed_at",
    "started_at",
    "finished_at",
    "kind",
];

/// The monitor's read of a format 1 job's runs in progress: `:active`, and, as checks only (a job
/// whose history keys are of another type, or whose newest `:slots` member is no slot, is refused
/// naming the key, as its reads would be), the newest `:runs` entry and `:slots` member.
pub(super) fn queue_in_progress(pipe: &mut redis::Pipeline, keys: &LeaseKeys) {
    pipe.cmd("SMEMBERS").arg(&keys.active);
    pipe.cmd("XREVRANGE")
        .arg(&keys.runs)
        .arg("+")
        .arg("-")
        .arg("COUNT")
        .arg(1);
    pipe.cmd("ZREVRANGE").arg(&keys.slots).arg(0).arg(0);
}

/// The runs in progress [`queue_in_progress`] read: their slots alone (a run's fields are
/// `:state` fields, which cannot be named before `:active` is read: [`read_runs`] reads them).
pub(super) fn in_progress_from(
    keys: &LeaseKeys,
    replies: &mut dyn Iterator<Item = Value>,
) -> Result<Vec<i64>> {
    let mut next = || replies.next().unwrap_or(Value::Nil);
    let active: Vec<String> = decode(&keys.active, next())?;
    // The newest entry of :runs, which no reader of this build needs (a member holds all an
    // attempt has) but every format 1 reader may read: bad data there is named.
    let newest_entry: Vec<(String, Vec<(String, String)>)> = decode(&keys.runs, next())?;
    for (id, fields) in newest_entry {
        crate::store::state::RunEntry::parse(&keys.runs, id, &fields)?;
    }
    let newest_slot: Vec<String> = decode(&keys.slots, next())?;
    if let Some(bad) = newest_slot.iter().find(|s| s.parse::<i64>().is_err()) {
        return Err(Error::corrupt(
            &keys.slots,
            format!("member {bad:?} is not a slot"),
        ));
    }
    active
        .iter()
        .map(|s| {
            s.parse()
                .map_err(|_| Error::corrupt(&keys.active, format!("member {s:?} is not a slot")))
        })
        .collect()
}

/// Reads the runs `slots` of each job from its `:state`, in one pipeline: each job's runs, or the
/// error that names its bad data.
pub(super) async fn read_runs(
    conn: &mut Connection,
    jobs: &[(&LeaseKeys, &[i64])],
) -> Result<Vec<Result<Vec<RunState>>>> {
    let mut pipe = redis::pipe();
    for (keys, slots) in jobs {
        for slot in *slots {
            let mut cmd = redis::cmd("HMGET");
            cmd.arg(&keys.state);
            for f in RUN_FIELDS {
                cmd.arg(field_name(slot, f));
            }
            pipe.add_command(cmd);
        }
    }
    let mut values = conn.replies(&pipe).await?.into_iter();
    Ok(jobs
        .iter()
        .map(|(keys, slots)| {
            let replies: Vec<Value> = slots
                .iter()
                .map(|_| values.next().unwrap_or(Value::Nil))
                .collect();
            let mut pairs = Vec::new();
            for (slot, value) in slots.iter().zip(replies) {
                let fields: Vec<Option<String>> = decode(&keys.state, value)?;
                for (name, v) in RUN_FIELDS.iter().zip(fields) {
                    if let Some(v) = v {
                        pairs.push((field_name(slot, name), v));
                    }
                }
            }
            Ok(decode_state(&keys.state, &pairs)?.into_values().collect())
        })
        .collect())
}

/// The state hash's field for one attribute of one run: `<slot>:<attribute>`.
pub fn field_name(slot: impl std::fmt::Display, attribute: &str) -> String {
    format!("{slot}:{attribute}")
}

fn decode_run(key: &str, slot: i64, attrs: &BTreeMap<&str, &str>) -> Result<RunState> {
    if let Some(unknown) = attrs.keys().find(|a| !RUN_FIELDS.contains(a)) {
        return Err(Error::corrupt(
            key,
            format!("field {slot}:{unknown} is not part of store format 1"),
        ));
    }
    let get = |name: &str| -> Result<&str> {
        attrs
            .get(name)
            .copied()
            .ok_or_else(|| Error::corrupt(key, format!("run {slot} has no field {slot}:{name}")))
    };
    let int = |name: &str| -> Result<i64> {
        let text = get(name)?;
        text.parse().map_err(|_| {
            Error::corrupt(
                key,
                format!("field {slot}:{name} is {text:?}, not an integer"),
            )
        })
    };
    let status = get("status")?
        .parse::<RunStatus>()
        .map_err(|e| Error::corrupt(key, format!("field {slot}:status: {e}")))?;
    let attempt = int("attempt")?;
    let attempt = u32::try_from(attempt)
        .ok()
        .filter(|a| *a >= 1)
        .ok_or_else(|| {
            Error::corrupt(
                key,
                format!("field {slot}:attempt is {attempt}, not 1 or more"),
            )
        })?;
    let kind = match attrs.get("kind").copied().unwrap_or("scheduled") {
        "scheduled" => RunKind::Scheduled,
        "manual" => RunKind::Manual,
        other => {
            return Err(Error::corrupt(
                key,
                format!("field {slot}:kind is {other:?}, not scheduled or manual"),
            ));
        }
    };
    let finished_at = match attrs.get("finished_at") {
        Some(_) => Some(int("finished_at")?),
        None => None,
    };
    Ok(RunState {
        slot,
        status,
        attempt,
        token: get("token")?.to_string(),
        runner: attrs.get("runner").copied().unwrap_or_default().to_string(),
        lease_end: int("lease_end")?,
        claimed_at: int("claimed_at")?,
        started_at: int("started_at")?,
        finished_at,
        kind,
        lease_ms: None,
        fence: None,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_lua_run_fields_are_the_rust_ones() {
        let lib = include_str!("../../../lua/lease/v1/lib.lua");
        let start = lib
            .find("local RUN_FIELDS = {")
            .expect("RUN_FIELDS in lib.lua");
        let list = &lib[start..];
        let list = &list[list.find('{').unwrap() + 1..list.find('}').unwrap()];
        let lua: Vec<&str> = list
            .split(',')
            .map(|f| f.trim().trim_matches('\''))
            .filter(|f| !f.is_empty())
            .collect();
        assert_eq!(lua, super::RUN_FIELDS);
    }

    use super::*;

    fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
        items
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    fn one_run() -> Vec<(String, String)> {
        pairs(&[
            ("1000:status", "running"),
            ("1000:attempt", "2"),
            ("1000:token", "abc"),
            ("1000:runner", "h:1"),
            ("1000:lease_end", "31000"),
            ("1000:claimed_at", "1500"),
            ("1000:started_at", "1001"),
            ("1000:kind", "manual"),
        ])
    }

    #[test]
    fn decodes_runs_by_slot() {
        let mut fields = one_run();
        fields.extend(pairs(&[
            ("900:status", "finished"),
            ("900:attempt", "1"),
            ("900:token", "t"),
            ("900:runner", "h:2"),
            ("900:lease_end", "950"),
            ("900:claimed_at", "900"),
            ("900:started_at", "900"),
            ("900:finished_at", "940"),
        ]));
        let runs = decode_state("k", &fields).unwrap();
        assert_eq!(runs.len(), 2);
        let r = &runs[&1000];
        assert_eq!(r.status, RunStatus::Running);
        assert_eq!(r.attempt, 2);
        assert_eq!(r.kind, RunKind::Manual);
        assert_eq!(r.finished_at, None);
        assert_eq!(runs[&900].finished_at, Some(940));
        assert_eq!(runs[&900].kind, RunKind::Scheduled);
    }

    #[test]
    fn garbage_is_an_error_naming_the_key_and_field() {
        let cases: Vec<(Vec<(String, String)>, &str)> = vec![
            (pairs(&[("nocolon", "x")]), "nocolon"),
            (pairs(&[("abc:status", "running")]), "abc:status"),
            (
                {
                    let mut f = one_run();
                    f[0].1 = "sleeping".into();
                    f
                },
                "1000:status",
            ),
            (
                {
                    let mut f = one_run();
                    f[1].1 = "two".into();
                    f
                },
                "1000:attempt",
            ),
            (
                {
                    let mut f = one_run();
                    f[1].1 = "0".into();
                    f
                },
                "1000:attempt",
            ),
            (
                {
                    let mut f = one_run();
                    f.remove(2);
                    f
                },
                "1000:token",
            ),
            (
                {
                    let mut f = one_run();
                    f.push(("1000:colour".into(), "blue".into()));
                    f
                },
                "1000:colour",
            ),
        ];
        for (fields, needle) in cases {
            let err = decode_state("{cron:job}:state", &fields).unwrap_err();
            let text = err.to_string();
            assert!(text.contains("{cron:job}:state"), "{text}");
            assert!(text.contains(needle), "{needle}: {text}");
        }
    }

    /// A format 1 look: [status, attempt, token, runner, lease_end], claimed_at 1 when there is
    /// an attempt, no kind.
    fn look(fields: [Option<&str>; 5]) -> Value {
        let claimed = if fields[1].is_some() { Some("1") } else { None };
        let all = [
            fields[0], fields[1], fields[2], fields[3], fields[4], claimed, None,
        ];
        let bulk = |t: &str| Value::BulkString(t.as_bytes().to_vec());
        Value::Array(all.iter().map(|f| f.map_or(Value::Nil, bulk)).collect())
    }

    #[test]
    fn a_look_decodes_sound_runs_only() {
        let running = look([
            Some("running"),
            Some("2"),
            Some("t"),
            Some("o:9"),
            Some("100001"),
        ]);
        let run = decode_look(running).expect("sound");
        assert_eq!(
            (run.status, run.attempt, run.lease_end, run.token.as_deref()),
            (RunStatus::Running, Some(2), Some(100_001), Some("t"))
        );
        // An ended run with its status alone (compacted) is sound.
        let ended = decode_look(look([Some("failed"), None, None, None, None])).expect("sound");
        assert_eq!(ended.status, RunStatus::Failed);
        // Garbage the script refuses is the script's: an attempt out of range, a running run
        // without a token, a status no format 1 writer writes, a lease end that is no number.
        for bad in [
            look([Some("running"), Some("-3"), Some("x"), None, Some("100001")]),
            look([Some("running"), Some("2"), None, None, Some("100001")]),
            look([Some("skipped"), None, None, None, None]),
            look([Some("running"), Some("2"), Some("t"), None, Some("soon")]),
            look([None, None, None, None, None]),
        ] {
            assert!(decode_look(bad).is_none());
        }
    }
}
