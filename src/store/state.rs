//! Decoding the lease layout's state hash, `{<prefix><job>}:state`.
//!
//! The hash holds every run of the job side by side, one field per run and attribute, named
//! `<slot>:<attribute>` (for example `1796220300000:status`). `HGETALL` is therefore readable as is,
//! and a script touches one run with a single HMGET.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::error::{Error, Result};

/// Where a run is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Claimed; the holder of `token` runs it while its lease lives.
    Running,
    /// Ended with success.
    Finished,
    /// Ended with failure (non-zero exit, signal, timeout).
    Failed,
    /// Every attempt's lease expired without a finish: the holders died.
    Interrupted,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Finished => "finished",
            RunStatus::Failed => "failed",
            RunStatus::Interrupted => "interrupted",
        }
    }
}

impl FromStr for RunStatus {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "running" => Ok(RunStatus::Running),
            "finished" => Ok(RunStatus::Finished),
            "failed" => Ok(RunStatus::Failed),
            "interrupted" => Ok(RunStatus::Interrupted),
            other => Err(format!(
                "status {other:?} is none of running, finished, failed, interrupted"
            )),
        }
    }
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a run came from the schedule or from `run-now`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunKind {
    Scheduled,
    Manual,
}

impl RunKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RunKind::Scheduled => "scheduled",
            RunKind::Manual => "manual",
        }
    }
}

/// One run as the state hash records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunState {
    /// The run's scheduled time, ms since the epoch; it names the run.
    pub slot: i64,
    pub status: RunStatus,
    /// 1 for the first attempt, +1 for each takeover after a lease expired.
    pub attempt: u32,
    /// The current attempt's token: only its holder may heartbeat or finish.
    pub token: String,
    /// Who holds the current attempt (`host:pid` by default).
    pub runner: String,
    /// When the current lease ends, by the server's clock.
    pub lease_end: i64,
    /// When the current attempt was claimed.
    pub claimed_at: i64,
    /// When attempt 1 was claimed.
    pub started_at: i64,
    /// When the run ended (absent while running).
    pub finished_at: Option<i64>,
    pub kind: RunKind,
    /// The lease the current attempt was claimed with (format 2 records it; format 1 does not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lease_ms: Option<i64>,
    /// The current attempt's fencing token (format 2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fence: Option<i64>,
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
/// RUN_FIELDS in lua/lib.lua).
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

/// The state hash's field for one attribute of one run: `<slot>:<attribute>`.
pub fn field_name(slot: impl std::fmt::Display, attribute: &str) -> String {
    format!("{slot}:{attribute}")
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
    /// RUN_FIELDS here and in lua/lib.lua are one list written twice: they must not drift.
    #[test]
    fn the_lua_run_fields_are_the_rust_ones() {
        let lib = include_str!("../../lua/lib.lua");
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
}
