//! Store format 2, anarchon's own layout (docs/store-format.md, "Lease layout, format 2"): runs in
//! progress in `:live` (one JSON field per run), an ended run its `:results` members, `:state` a
//! marker string. The one module that knows it: its key order, its scripts (`lua/lease/v2/`), its
//! decoders, and what a claim's look and a catch-up's "was it claimed?" read of a run. Everything
//! else asks [`super::LeaseFormat`].

use std::sync::LazyLock;

use redis::Value;

use super::{LeaseKeys, LookedRun, Scripts};
use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::scripts::{FunctionLibrary, LuaScript};
use crate::store::state::{RunKind, RunState, RunStatus};

/// The type of a format 2 job's `:state` key: the marker string.
pub const STATE_TYPE: &str = "string";

/// The text of a converted job's `:state` (lua/lease/v2/lib.lua `MARKER`; a test keeps the two
/// the same): any other string there is bad data, not a format 2 job.
pub const MARKER: &str =
    "anarchon store format 2: runs in progress are in :live, ended ones in :results";

/// Where format 2 keeps runs in progress (`migrate`'s words).
pub const RUNS_IN_PROGRESS_KEYS: &str = ":live";

/// Who reads a format 2 store.
pub const WHO_READS: &str = "anarchon's own layout (anarchon migrate): RedisBackend and anarchon releases before format 2 refuse it";

/// Who reads a store that has no format key yet, were new stores created in format 2.
pub const WHO_READS_A_NEW_STORE: &str =
    "no format key yet: the first write creates format 2, which only this anarchon reads";

/// What `migrate` (to format 2) costs the other readers of the store, said before it asks to go on.
pub const WHAT_THE_MOVE_COSTS: &str = "Format 2 is read by this anarchon only. Afterwards every reader of format 1 under this prefix is locked out and writes nothing:
  - the scheduler's RedisBackend / ValkeyBackend instances refuse to start (ANARCHON_STORE_FORMAT),
  - earlier anarchon releases exit 91 and their runs are skipped.
What it buys: less than half the memory per run of history (about 315 B against 570 B) and about
a fifth less script time per run (docs/guide.md, \"Store formats: which to use\"). Move only a prefix
that anarchon alone uses. `anarchon migrate --to 1` moves it back.";

/// The KEYS of every format 2 script (lua/lease/v2/lib.lua): its own keys (`:state` holds its
/// marker), then the format 1 keys it converts a job from (`migrate`).
pub fn script_keys(keys: &LeaseKeys) -> Vec<&str> {
    keys.format_2().to_vec()
}

/// Each script is `lua/lease/v2/lib.lua` (with the helpers both formats share) followed by its own
/// file, and a function of [`LIBRARY`].
const LIB: [&str; 5] = [
    include_str!("../../../lua/lease/v2/lib.lua"),
    include_str!("../../../lua/lease/pause.lua"),
    include_str!("../../../lua/lease/released.lua"),
    include_str!("../../../lua/lease/retry.lua"),
    include_str!("../../../lua/lease/handed_over.lua"),
];

/// Every format 2 script, by file: one library of functions holds them all.
const FILES: [(&str, &str); 8] = [
    ("claim.lua", include_str!("../../../lua/lease/v2/claim.lua")),
    (
        "heartbeat.lua",
        include_str!("../../../lua/lease/v2/heartbeat.lua"),
    ),
    (
        "finish.lua",
        include_str!("../../../lua/lease/v2/finish.lua"),
    ),
    ("trim.lua", include_str!("../../../lua/lease/v2/trim.lua")),
    (
        "release.lua",
        include_str!("../../../lua/lease/v2/release.lua"),
    ),
    (
        "convert.lua",
        include_str!("../../../lua/lease/v2/convert.lua"),
    ),
    ("skip.lua", include_str!("../../../lua/lease/v2/skip.lua")),
    (
        "unskip.lua",
        include_str!("../../../lua/lease/v2/unskip.lua"),
    ),
];

/// The format 2 scripts as a Redis Functions library (see [`FunctionLibrary`]).
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
                include_str!(concat!("../../../lua/lease/v2/", $file)),
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
/// Converts one format 1 job (`anarchon migrate`).
pub static CONVERT: LazyLock<LuaScript> = script!("convert.lua");
/// Records a missed run that `run --catch-up` will not run as skipped, once.
pub static SKIP: LazyLock<LuaScript> = script!("skip.lua");
/// Takes a skip back, for `run --backfill --include-skipped`.
pub static UNSKIP: LazyLock<LuaScript> = script!("unskip.lua");

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

/// The look's read of `slot`: its `:live` field.
pub(super) fn queue_look(pipe: &mut redis::Pipeline, keys: &LeaseKeys, slot: i64) {
    pipe.cmd("HGET").arg(&keys.live).arg(slot);
}

/// The run in progress a look read, when it is sound. An ended run is not in `:live`: its
/// answer is the script's.
pub(super) fn decode_look(keys: &LeaseKeys, slot: i64, reply: Value) -> Option<LookedRun> {
    let text: String = redis::from_redis_value(reply).ok()?;
    let run = decode_live(&keys.live, &slot.to_string(), &text).ok()?;
    Some(LookedRun {
        status: run.status,
        attempt: Some(run.attempt),
        token: Some(run.token),
        runner: run.runner,
        lease_end: Some(run.lease_end),
    })
}

/// Whether any claim of `slot` reached the store: in progress, or with results. Two replies.
pub(super) fn queue_claimed(pipe: &mut redis::Pipeline, keys: &LeaseKeys, slot: i64) -> usize {
    pipe.cmd("HEXISTS").arg(&keys.live).arg(slot);
    pipe.cmd("ZCOUNT").arg(&keys.results).arg(slot).arg(slot);
    2
}

/// The runs in `:live`.
pub(super) async fn runs_in_progress(
    conn: &mut Connection,
    keys: &LeaseKeys,
) -> Result<Vec<RunState>> {
    let fields: Vec<(String, String)> = conn
        .query(redis::cmd("HGETALL").arg(&keys.live))
        .await
        .map_err(|e| e.on_key(&keys.live, "hash"))?;
    fields
        .iter()
        .map(|(field, value)| decode_live(&keys.live, field, value))
        .collect()
}

/// The monitor's read of a format 2 job's runs in progress: `:live`, whole.
pub(super) fn queue_in_progress(pipe: &mut redis::Pipeline, keys: &LeaseKeys) {
    pipe.cmd("HGETALL").arg(&keys.live);
}

/// The runs in progress [`queue_in_progress`] read, whole.
pub(super) fn in_progress_from(
    keys: &LeaseKeys,
    replies: &mut dyn Iterator<Item = Value>,
) -> Result<Vec<RunState>> {
    let live: Vec<(String, String)> =
        crate::store::decode::decode(&keys.live, replies.next().unwrap_or(Value::Nil))?;
    live.iter()
        .map(|(field, value)| decode_live(&keys.live, field, value))
        .collect()
}

/// A run in progress as store format 2 keeps it: a `:live` field `<slot>` whose value is a JSON
/// object (see docs/store-format.md). Unknown JSON keys are ignored: format 2 may add some.
pub fn decode_live(key: &str, field: &str, value: &str) -> Result<RunState> {
    #[derive(serde::Deserialize)]
    struct Live {
        attempt: u32,
        token: String,
        runner: String,
        lease_end: i64,
        claimed_at: i64,
        started_at: i64,
        kind: String,
        #[serde(default)]
        lease_ms: Option<i64>,
        #[serde(default)]
        fence: Option<i64>,
    }
    let slot: i64 = field
        .parse()
        .map_err(|_| Error::corrupt(key, format!("field {field:?} is not a slot")))?;
    let live: Live = serde_json::from_str(value).map_err(|e| {
        Error::corrupt(key, format!("field {field} is not a run in progress ({e})"))
    })?;
    let kind = match live.kind.as_str() {
        "scheduled" => RunKind::Scheduled,
        "manual" => RunKind::Manual,
        other => {
            return Err(Error::corrupt(
                key,
                format!("field {field} has kind {other:?}, not scheduled or manual"),
            ));
        }
    };
    if live.attempt == 0 || live.token.is_empty() {
        return Err(Error::corrupt(
            key,
            format!("field {field} has no attempt or no token"),
        ));
    }
    Ok(RunState {
        slot,
        status: RunStatus::Running,
        attempt: live.attempt,
        token: live.token,
        runner: live.runner,
        lease_end: live.lease_end,
        claimed_at: live.claimed_at,
        started_at: live.started_at,
        finished_at: None,
        kind,
        lease_ms: live.lease_ms.filter(|ms| *ms > 0),
        fence: live.fence,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_marker_is_the_scripts_marker() {
        let lib = include_str!("../../../lua/lease/v2/lib.lua");
        assert!(lib.contains(&format!("local MARKER = '{}'", super::MARKER)));
    }

    use super::*;

    #[test]
    fn decodes_format_2_runs_in_progress() {
        let r = decode_live(
            "{cron:j}:live",
            "1000",
            r#"{"attempt":2,"token":"abc","runner":"h:1","lease_end":31000,"claimed_at":1500,"started_at":1001,"kind":"manual","lease_ms":30000,"later":1}"#,
        )
        .unwrap();
        assert_eq!((r.slot, r.attempt, r.kind), (1000, 2, RunKind::Manual));
        assert_eq!(r.status, RunStatus::Running);
        for (field, bad) in [
            ("x", r#"{}"#),
            ("1000", "running"),
            (
                "1000",
                r#"{"attempt":0,"token":"a","runner":"","lease_end":1,"claimed_at":1,"started_at":1,"kind":"scheduled"}"#,
            ),
            (
                "1000",
                r#"{"attempt":1,"token":"a","runner":"","lease_end":1,"claimed_at":1,"started_at":1,"kind":"other"}"#,
            ),
        ] {
            let err = decode_live("{cron:j}:live", field, bad)
                .unwrap_err()
                .to_string();
            assert!(err.contains("{cron:j}:live"), "{err}");
        }
    }

    fn live(token: &str, lease_end: i64) -> String {
        format!(
            r#"{{"attempt":2,"token":"{token}","runner":"other:9","lease_end":{lease_end},"claimed_at":1,"started_at":1,"kind":"scheduled","lease_ms":30000,"fence":7}}"#
        )
    }

    #[test]
    fn a_look_decodes_runs_in_progress_only() {
        let keys = LeaseKeys::new("cron:", "j");
        let bulk = |t: &str| Value::BulkString(t.as_bytes().to_vec());
        let run = decode_look(&keys, 60_000, bulk(&live("theirs", 100_001))).expect("sound");
        assert_eq!(
            (run.attempt, run.lease_end, run.runner.as_str()),
            (Some(2), Some(100_001), "other:9")
        );
        // Not in progress, garbage in :live, or a reply that is no string: the script's.
        assert!(decode_look(&keys, 60_000, Value::Nil).is_none());
        assert!(decode_look(&keys, 60_000, bulk("{")).is_none());
        assert!(decode_look(&keys, 60_000, Value::Array(vec![])).is_none());
    }
}
