//! What the store holds about a lease job, read with a real client in whichever store format the
//! job is in (format 1: `:state` hash; format 2: `:live` + `:results`), so the tests of behaviour
//! hold for both formats. The suite runs in format 1 (a new store's, the seed's layout) unless
//! `ANARCHON_TEST_STORE_FORMAT=2`, which marks every test store format 2 first, as `anarchon
//! migrate` does (see [`super::Server::start_with`]); the tests of one format's data say so
//! themselves.

use std::collections::BTreeMap;

use anarchon::store::RunState;
use anarchon::store::lease::v1::decode_state;
use anarchon::store::lease::v2::decode_live;
use anarchon::store::read::ResultEntry;

use super::Server;

/// A run as the store records it: its current (or final) attempt.
#[derive(Debug, Clone, PartialEq)]
pub struct RunView {
    pub status: String,
    pub attempt: u32,
    pub token: String,
    pub runner: String,
    pub kind: String,
    /// The current lease's end (runs in progress; format 1 keeps it after the end too).
    pub lease_end: Option<i64>,
    /// When the current (or final) attempt was claimed.
    pub claimed_at: Option<i64>,
}

impl From<RunState> for RunView {
    fn from(r: RunState) -> Self {
        RunView {
            status: r.status.as_str().to_string(),
            attempt: r.attempt,
            token: r.token,
            runner: r.runner,
            kind: r.kind.as_str().to_string(),
            lease_end: Some(r.lease_end),
            claimed_at: Some(r.claimed_at),
        }
    }
}

fn key(job: &str, name: &str) -> String {
    format!("{{cron:{job}}}:{name}")
}

impl Server {
    /// The store format a test store is in (`ANARCHON_TEST_STORE_FORMAT`, default 1).
    pub fn test_store_format() -> u32 {
        std::env::var("ANARCHON_TEST_STORE_FORMAT")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1)
    }

    /// Whether `job`'s data is in format 1 (its `:state` is a hash).
    pub fn is_format_1(&self, job: &str) -> bool {
        self.cmd::<String>(&["TYPE", &key(job, "state")]) == "hash"
    }

    /// Every ended attempt of `job` (its `:results` members), oldest slot first, then by attempt.
    pub fn results(&self, job: &str) -> Vec<ResultEntry> {
        let flat: Vec<(String, String)> =
            self.cmd(&["ZRANGE", &key(job, "results"), "0", "-1", "WITHSCORES"]);
        let mut out: Vec<ResultEntry> = flat
            .iter()
            .map(|(m, score)| ResultEntry::parse_scored("results", m, score).unwrap())
            .collect();
        out.sort_by_key(|r| (r.slot, r.attempt));
        out
    }

    /// Every run of `job` the store knows, by slot: in progress and ended.
    pub fn runs(&self, job: &str) -> BTreeMap<i64, RunView> {
        // Format 2: `:live` read before `:results`. A finish moves a run from one to the other in
        // one script, so read in this order it is found in one of them; read the other way round,
        // a finish between the two reads hid it from both.
        let live: Vec<(String, String)> = if self.is_format_1(job) {
            Vec::new()
        } else {
            self.cmd(&["HGETALL", &key(job, "live")])
        };
        let mut runs = self.ended_runs(job);
        if self.is_format_1(job) {
            // Runs in progress have all their fields; an ended run keeps fewer as it ages
            // (docs/store-format.md), its status always: the view takes the attempt's facts from
            // its :results member, as format 2's does, and the status from the state.
            let fields: Vec<(String, String)> = self.cmd(&["HGETALL", &key(job, "state")]);
            let mut by_slot: BTreeMap<i64, Vec<(String, String)>> = BTreeMap::new();
            for (name, value) in fields {
                let slot = name.split_once(':').unwrap().0.parse().unwrap();
                by_slot.entry(slot).or_default().push((name, value));
            }
            for (slot, fields) in by_slot {
                let status = fields
                    .iter()
                    .find(|(name, _)| name.ends_with(":status"))
                    .map(|(_, v)| v.clone())
                    .unwrap_or_else(|| panic!("run {slot} of {job} has no status: {fields:?}"));
                if status == "running" {
                    let run = decode_state("state", &fields)
                        .unwrap()
                        .remove(&slot)
                        .unwrap();
                    runs.insert(slot, run.into());
                } else {
                    let full = decode_state("state", &fields)
                        .ok()
                        .and_then(|mut r| r.remove(&slot));
                    let view = runs.entry(slot).or_insert_with(|| RunView {
                        status: status.clone(),
                        attempt: full.as_ref().map_or(1, |r| r.attempt),
                        token: full.as_ref().map_or(String::new(), |r| r.token.clone()),
                        runner: String::new(),
                        kind: "scheduled".into(),
                        lease_end: None,
                        claimed_at: None,
                    });
                    view.status = status;
                    if let Some(full) = full {
                        view.lease_end = Some(full.lease_end);
                    }
                }
            }
            return runs;
        }
        for (field, value) in live {
            let r = decode_live("live", &field, &value).unwrap();
            runs.insert(r.slot, r.into());
        }
        runs
    }

    /// Each ended run of `job` as its highest attempt's :results member tells it.
    fn ended_runs(&self, job: &str) -> BTreeMap<i64, RunView> {
        let mut runs = BTreeMap::new();
        for r in self.results(job) {
            runs.insert(
                r.slot,
                RunView {
                    status: r.status.clone(),
                    attempt: r.attempt.unwrap_or(1),
                    token: r.token.clone(),
                    runner: r.runner.clone(),
                    kind: r.kind.clone().unwrap_or_else(|| "scheduled".into()),
                    lease_end: None,
                    claimed_at: r.claimed_at,
                },
            );
        }
        runs
    }

    /// The job's runs as `<slot>:<attribute>` pairs (status, attempt, token, runner, kind, and
    /// lease_end and claimed_at where known), in either store format.
    pub fn state_map(&self, job: &str) -> std::collections::HashMap<String, String> {
        let mut out = std::collections::HashMap::new();
        for (slot, r) in self.runs(job) {
            out.insert(format!("{slot}:status"), r.status);
            out.insert(format!("{slot}:attempt"), r.attempt.to_string());
            out.insert(format!("{slot}:token"), r.token);
            out.insert(format!("{slot}:runner"), r.runner);
            out.insert(format!("{slot}:kind"), r.kind);
            if let Some(end) = r.lease_end {
                out.insert(format!("{slot}:lease_end"), end.to_string());
            }
            if let Some(at) = r.claimed_at {
                out.insert(format!("{slot}:claimed_at"), at.to_string());
            }
        }
        out
    }

    /// The run `slot` of `job`, if the store knows it.
    pub fn run(&self, job: &str, slot: &str) -> Option<RunView> {
        self.runs(job).remove(&slot.parse::<i64>().unwrap())
    }

    /// Hands the run in progress `slot` of `job` to another token behind its holder's back (as if
    /// its lease had expired unnoticed and another runner had taken it over).
    pub fn steal_run(&self, job: &str, slot: &str, token: &str) {
        if self.is_format_1(job) {
            let _: () = self.cmd(&["HSET", &key(job, "state"), &format!("{slot}:token"), token]);
            return;
        }
        let text: String = self.cmd(&["HGET", &key(job, "live"), slot]);
        let mut run: serde_json::Value = serde_json::from_str(&text).unwrap();
        run["token"] = token.into();
        let _: () = self.cmd(&["HSET", &key(job, "live"), slot, &run.to_string()]);
    }

    /// The slots of `job`'s runs in progress, oldest first.
    pub fn in_progress(&self, job: &str) -> Vec<i64> {
        let members: Vec<String> = if self.is_format_1(job) {
            self.cmd(&["SMEMBERS", &key(job, "active")])
        } else {
            self.cmd(&["HKEYS", &key(job, "live")])
        };
        let mut slots: Vec<i64> = members.iter().map(|s| s.parse().unwrap()).collect();
        slots.sort();
        slots
    }

    /// The attempts of `job` that ended, as (attempt, runner, status), in slot and attempt order.
    pub fn ended_attempts(&self, job: &str) -> Vec<(String, String, String)> {
        self.results(job)
            .into_iter()
            .map(|r| (r.attempt.unwrap_or(0).to_string(), r.runner, r.status))
            .collect()
    }
}
