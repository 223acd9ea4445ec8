//! The lease layout (strategy `lease`) and its store formats, one module each: [`v1`] (the seed's
//! layout, every scheduler reads it) and [`v2`] (anarchon's own, chosen by `anarchon migrate`).
//!
//! A format module owns all that differs between formats: its script KEYS order, its scripts
//! (`lua/lease/v<N>/`), its decoders, the read a claim's look makes of a run, the read that tells
//! whether a slot was ever claimed, and its runs in progress. Everything above asks a job's
//! [`LeaseFormat`], whose methods are the only `match` on formats: adding a format is one module,
//! one variant, one Lua folder, and the compiler lists every arm to write (CONTRIBUTING.md, "How to add a
//! store format"). docs/store-format.md is the prose version.

use std::sync::LazyLock;

use redis::Value;
use serde::Serialize;

use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::scripts::LuaScript;
use crate::store::state::{RunState, RunStatus};

pub mod v1;
pub mod v2;

/// Which store format a job's lease-layout keys are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub enum LeaseFormat {
    /// The seed's layout: every run's state in `:state`, kept as long as the run's history.
    V1,
    /// Only runs in progress in `:live`; an ended run is its `:results` members.
    V2,
}

/// Reads the runs in progress that [`LeaseFormat::in_progress_from_replies`] could name by their
/// slot alone (format 1 keeps a run's fields in `:state` fields, which cannot be named before
/// `:active` is read): one pipeline for every job of a batch. Each job's runs, or the error that
/// names its bad data (one job's bad data never hides the others).
pub async fn read_named_runs(
    conn: &mut Connection,
    jobs: &[(&LeaseKeys, &[i64])],
) -> Result<Vec<Result<Vec<RunState>>>> {
    if jobs.iter().all(|(_, slots)| slots.is_empty()) {
        return Ok(jobs.iter().map(|_| Ok(Vec::new())).collect());
    }
    v1::read_runs(conn, jobs).await
}

impl LeaseFormat {
    /// Every format this build reads and writes, oldest first.
    pub const ALL: [LeaseFormat; 2] = [LeaseFormat::V1, LeaseFormat::V2];
    /// The format a store with no format key is created in: the seed's, which every scheduler
    /// sharing the store reads. Which format a shared store is in is the fleet's decision.
    pub const NEW: LeaseFormat = LeaseFormat::V1;
    /// The newest format this build reads and writes (`anarchon migrate` converts to it).
    pub const NEWEST: LeaseFormat = LeaseFormat::V2;

    /// Its number, as the format key holds it.
    pub const fn number(self) -> u32 {
        match self {
            LeaseFormat::V1 => 1,
            LeaseFormat::V2 => 2,
        }
    }

    /// The format a format key's number names; None for one this build does not know, which the
    /// format check refuses (`store::format`): never mapped to the nearest known one.
    pub fn from_number(number: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.number() == number)
    }

    /// The type of a job's `:state` key in this format.
    fn state_type(self) -> &'static str {
        match self {
            LeaseFormat::V1 => v1::STATE_TYPE,
            LeaseFormat::V2 => v2::STATE_TYPE,
        }
    }

    /// Which format a job's data is in, by its `:state` key's type: a hash is format 1 data (the
    /// store may say 2 before `migrate` or a claim converted the job), the marker string format 2;
    /// with neither (a job with no runs left, or written by hand), the store's format `store`.
    pub fn of_job(state_type: &str, store: LeaseFormat) -> Self {
        Self::ALL
            .into_iter()
            .find(|f| f.state_type() == state_type)
            .unwrap_or(store)
    }

    /// Queues, for a reader of many jobs at once that learns each job's format from the same
    /// pipeline (`TYPE` of `:state`), every format's read of a job's runs in progress, with the
    /// checks that go with it: a job has one format's keys, and the others' reads answer empty.
    /// [`LeaseFormat::in_progress_from_replies`] takes their replies in that order.
    pub fn queue_in_progress_of_any(pipe: &mut redis::Pipeline, keys: &LeaseKeys) {
        for format in Self::ALL {
            match format {
                LeaseFormat::V1 => v1::queue_in_progress(pipe, keys),
                LeaseFormat::V2 => v2::queue_in_progress(pipe, keys),
            }
        }
    }

    /// The runs in progress of a job in this format, from the replies to
    /// [`LeaseFormat::queue_in_progress_of_any`] (every format's are checked and taken, this
    /// format's decoded): the runs read whole (format 2), and the slots of those the reply names
    /// alone (format 1), which [`read_named_runs`] reads.
    pub fn in_progress_from_replies(
        self,
        keys: &LeaseKeys,
        replies: &mut dyn Iterator<Item = Value>,
    ) -> Result<(Vec<RunState>, Vec<i64>)> {
        let mut mine = (Vec::new(), Vec::new());
        for format in Self::ALL {
            let found = match format {
                LeaseFormat::V1 => (Vec::new(), v1::in_progress_from(keys, replies)?),
                LeaseFormat::V2 => (v2::in_progress_from(keys, replies)?, Vec::new()),
            };
            if format == self {
                mine = found;
            }
        }
        Ok(mine)
    }

    /// Where this format keeps runs in progress, as `migrate` names the keys it moves them to.
    pub fn runs_in_progress_keys(self) -> &'static str {
        match self {
            LeaseFormat::V1 => v1::RUNS_IN_PROGRESS_KEYS,
            LeaseFormat::V2 => v2::RUNS_IN_PROGRESS_KEYS,
        }
    }

    /// Who reads a store in this format, for people (`doctor`, `inspect`, `migrate`).
    pub fn who_reads(self) -> &'static str {
        match self {
            LeaseFormat::V1 => v1::WHO_READS,
            LeaseFormat::V2 => v2::WHO_READS,
        }
    }

    /// The same for a store with no format key yet, which the first write creates in this format.
    pub fn who_reads_a_new_store(self) -> &'static str {
        match self {
            LeaseFormat::V1 => v1::WHO_READS_A_NEW_STORE,
            LeaseFormat::V2 => v2::WHO_READS_A_NEW_STORE,
        }
    }

    /// What moving a store to this format costs, said before `migrate` asks to go on.
    pub fn what_the_move_costs(self) -> &'static str {
        match self {
            LeaseFormat::V1 => v1::WHAT_THE_MOVE_COSTS,
            LeaseFormat::V2 => v2::WHAT_THE_MOVE_COSTS,
        }
    }

    /// This format's scripts.
    pub fn scripts(self) -> Scripts {
        match self {
            LeaseFormat::V1 => v1::scripts(),
            LeaseFormat::V2 => v2::scripts(),
        }
    }

    /// The KEYS every script of this format takes, in its order.
    pub fn script_keys(self, keys: &LeaseKeys) -> Vec<&str> {
        match self {
            LeaseFormat::V1 => v1::script_keys(keys),
            LeaseFormat::V2 => v2::script_keys(keys),
        }
    }

    /// The format a job was converted to after this command read the format key, when `error` (a
    /// script of this format refused, writing nothing) says so; None when it was not. Either way
    /// (`anarchon migrate`, `migrate --to 1`): the converted job's `:state` has the other
    /// format's type, which this format's scripts refuse before writing.
    /// (Decided here, above both formats, so that neither format's module reads the other's.)
    fn converted_to(self, error: &Error, keys: &LeaseKeys) -> Option<LeaseFormat> {
        let Error::WrongType { key, found, .. } = error else {
            return None;
        };
        Self::ALL
            .into_iter()
            .find(|other| *other != self && *key == keys.state && found == other.state_type())
    }

    /// Runs the script `pick` chooses of this format on `keys`. A script refused because the job
    /// was converted meanwhile ([`LeaseFormat::converted_to`]) wrote nothing, so the converted
    /// format's runs in its place; a job converted again meanwhile (a migration one way met right
    /// after one the other way) is followed again, a few times.
    pub async fn eval(
        self,
        conn: &mut Connection,
        keys: &LeaseKeys,
        pick: fn(&Scripts) -> &'static LazyLock<LuaScript>,
        args: &[String],
    ) -> Result<Vec<String>> {
        let mut format = self;
        let mut followed = 0;
        loop {
            match conn
                .eval(pick(&format.scripts()), &format.script_keys(keys), args)
                .await
            {
                Err(e) => match format.converted_to(&e, keys) {
                    Some(other) if followed < 4 => {
                        format = other;
                        followed += 1;
                    }
                    _ => return Err(e),
                },
                ok => return ok,
            }
        }
    }

    /// Queues the read a claim's look makes of `slot` (one command).
    pub fn queue_look(self, pipe: &mut redis::Pipeline, keys: &LeaseKeys, slot: i64) {
        match self {
            LeaseFormat::V1 => v1::queue_look(pipe, keys, slot),
            LeaseFormat::V2 => v2::queue_look(pipe, keys, slot),
        }
    }

    /// The run the look's reply shows, when it is one the script would read the same way.
    pub fn decode_look(self, keys: &LeaseKeys, slot: i64, reply: Value) -> Option<LookedRun> {
        match self {
            LeaseFormat::V1 => v1::decode_look(reply),
            LeaseFormat::V2 => v2::decode_look(keys, slot, reply),
        }
    }

    /// Queues the commands that tell whether any claim of `slot` ever reached the store; returns
    /// how many (a slot was claimed when any of their integer replies is not 0).
    pub fn queue_claimed(self, pipe: &mut redis::Pipeline, keys: &LeaseKeys, slot: i64) -> usize {
        match self {
            LeaseFormat::V1 => v1::queue_claimed(pipe, keys, slot),
            LeaseFormat::V2 => v2::queue_claimed(pipe, keys, slot),
        }
    }

    /// The job's runs in progress, in no order.
    pub async fn runs_in_progress(
        self,
        conn: &mut Connection,
        keys: &LeaseKeys,
    ) -> Result<Vec<RunState>> {
        match self {
            LeaseFormat::V1 => v1::runs_in_progress(conn, keys).await,
            LeaseFormat::V2 => v2::runs_in_progress(conn, keys).await,
        }
    }
}

/// One format's lease scripts, each as it is sent (the same operations in every format). Each is
/// built (its helpers bundled) the first time it is used, not when the set is named: a `run`
/// process sends claim and finish only.
pub struct Scripts {
    pub claim: &'static LazyLock<LuaScript>,
    pub heartbeat: &'static LazyLock<LuaScript>,
    pub finish: &'static LazyLock<LuaScript>,
    pub trim: &'static LazyLock<LuaScript>,
    pub release: &'static LazyLock<LuaScript>,
    pub skip: &'static LazyLock<LuaScript>,
    /// Takes a skip back (`run --backfill --include-skipped`).
    pub unskip: &'static LazyLock<LuaScript>,
}

impl Scripts {
    /// Each script by its file name (as under `lua/lease/v<N>/`).
    pub fn files(&self) -> [(&'static str, &'static LuaScript); 7] {
        [
            ("claim.lua", &**self.claim),
            ("heartbeat.lua", &**self.heartbeat),
            ("finish.lua", &**self.finish),
            ("trim.lua", &**self.trim),
            ("release.lua", &**self.release),
            ("skip.lua", &**self.skip),
            ("unskip.lua", &**self.unskip),
        ]
    }
}

/// A run as a claim's look read it, in any format: what the one rule of the look (strategy
/// `lease::look`) needs. Fields an ended format 1 run no longer keeps are None.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LookedRun {
    pub status: RunStatus,
    pub attempt: Option<u32>,
    pub token: Option<String>,
    pub runner: String,
    pub lease_end: Option<i64>,
}

/// The keys of one job in the lease layout, and the store format its scripts write.
///
/// Format 1 keeps every run's state in `:state` (nine fields per run) with `:active` and `:slots`
/// beside it; format 2 keeps only runs in progress, in `:live`, and turns `:state` into a marker
/// string. `:runs`, `:results` and `:job` are shared. See docs/store-format.md.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseKeys {
    pub state: String,
    pub active: String,
    pub slots: String,
    pub runs: String,
    pub results: String,
    /// What the job's claimants recorded (how late they may claim, how far trimming went): a hash
    /// that claim and trim read and write; readers of history may ignore it.
    pub job: String,
    /// Format 2: the runs in progress, one field per run.
    pub live: String,
    /// Which format's scripts write to these keys (the store's format key decides).
    pub format: LeaseFormat,
    /// The store's format key (`<prefix>format`), read again by a writer whose first read may be
    /// old ([`crate::store::format::refreshed`]).
    pub format_key: String,
}

impl LeaseKeys {
    /// The marker of a slot of this job handed to a newer name (a renamed job's claim under its
    /// old name, `scheduler::lineage`): `{<prefix><job>}:handed:<slot>`, a string
    /// `<attempt>:<new name>`, in this job's hash slot.
    pub fn handed(&self, slot: i64) -> String {
        // `self.job` is `{<prefix><job>}:job`: the hash tag, then the suffix.
        let tag = self.job.strip_suffix(":job").unwrap_or(&self.job);
        format!("{tag}:handed:{slot}")
    }

    /// The suffixes after the hash tag: format 1's script order (KEYS[1..6]), then `:live`; the one
    /// definition that key names and discovery share.
    pub const SUFFIXES: [&'static str; 7] = [
        ":state", ":active", ":slots", ":runs", ":results", ":job", ":live",
    ];

    /// Key names for `job` under `prefix`, for the format a new store is created in (change it
    /// with [`LeaseKeys::with_format`]). The job name must have been validated.
    pub fn new(prefix: &str, job: &str) -> Self {
        let tag = format!("{{{prefix}{job}}}");
        let [state, active, slots, runs, results, job, live] =
            Self::SUFFIXES.map(|suffix| format!("{tag}{suffix}"));
        LeaseKeys {
            state,
            active,
            slots,
            runs,
            results,
            job,
            live,
            format: LeaseFormat::NEW,
            format_key: crate::store::names::format_key(prefix),
        }
    }

    /// The key a backup standing by for `slot` announces itself in (both formats): a string, the
    /// backup's runner, with a TTL of a few of its polls, written again as it polls (no script
    /// reads it; docs/store-format.md, "Standing by"). A holder that hands its run over reads it to
    /// say whether a replica takes the run over.
    pub fn standby(&self, slot: i64) -> String {
        let tag = self.job.strip_suffix(":job").unwrap_or(&self.job);
        format!("{tag}:standby:{slot}")
    }

    /// Each key with the types the scripts write to it, in either format: `:state` is format 1's
    /// hash or format 2's marker string (a job's data is in the format its `:state` says, which
    /// may lag the store's until it is converted). `TYPE` of each, sent before anything is
    /// written, lets a command refuse a job whose data is of another type before it writes or
    /// runs anything ([`LeaseKeys::refuse_other_types`]).
    pub fn expected_types(&self) -> [(&str, &'static [&'static str]); 7] {
        [
            (&self.state, &[v1::STATE_TYPE, v2::STATE_TYPE]),
            (&self.active, &["set"]),
            (&self.slots, &["zset"]),
            (&self.runs, &["stream"]),
            (&self.results, &["zset"]),
            (&self.job, &["hash"]),
            (&self.live, &["hash"]),
        ]
    }

    /// The `TYPE` reads of [`LeaseKeys::expected_types`], for a pipeline, then a `GET` of
    /// `:state`: a string there is format 2's marker only when it is the marker text (on a hash
    /// the `GET` answers an error, which is fine).
    pub fn type_reads(&self) -> Vec<redis::Cmd> {
        let mut reads: Vec<redis::Cmd> = self
            .expected_types()
            .iter()
            .map(|(key, _)| {
                let mut cmd = redis::cmd("TYPE");
                cmd.arg(*key);
                cmd
            })
            .collect();
        let mut marker = redis::cmd("GET");
        marker.arg(&self.state);
        reads.push(marker);
        reads
    }

    /// Refuses the job when one of its keys holds another type than its scripts write, from the
    /// replies of [`LeaseKeys::type_reads`] in order (a missing key is fine).
    pub fn refuse_other_types(&self, replies: &[redis::Value]) -> Result<()> {
        for ((key, expected), reply) in self.expected_types().iter().zip(replies) {
            let found: String = redis::from_redis_value(reply.clone()).unwrap_or_default();
            if !found.is_empty() && found != "none" && !expected.contains(&found.as_str()) {
                return Err(crate::error::Error::WrongType {
                    key: key.to_string(),
                    found,
                    expected: expected[0].to_string(),
                });
            }
        }
        let state_type: Option<String> = replies
            .first()
            .and_then(|r| redis::from_redis_value(r.clone()).ok());
        if state_type.as_deref() == Some(v2::STATE_TYPE) {
            let text: Option<String> = replies
                .get(self.expected_types().len())
                .and_then(|r| redis::from_redis_value(r.clone()).ok());
            if text.is_some_and(|t| t != v2::MARKER) {
                return Err(crate::error::Error::corrupt(
                    &self.state,
                    "holds a string that is not the format 2 marker",
                ));
            }
        }
        Ok(())
    }

    /// The same keys, written by `format`'s scripts.
    pub fn with_format(mut self, format: LeaseFormat) -> Self {
        self.format = format;
        self
    }

    /// Format 1's five history keys, in its script order (KEYS[1..5]).
    pub fn all(&self) -> [&str; 5] {
        [
            &self.state,
            &self.active,
            &self.slots,
            &self.runs,
            &self.results,
        ]
    }

    /// Format 1's five history keys and the job key (KEYS[1..6] of its claim and trim).
    pub fn with_job(&self) -> [&str; 6] {
        [
            &self.state,
            &self.active,
            &self.slots,
            &self.runs,
            &self.results,
            &self.job,
        ]
    }

    /// Format 2's script order (KEYS[1..7], see lua/lease/v2/lib.lua): its own keys (`:state` holds its
    /// marker), then the format 1 keys it converts a job from (`migrate`).
    pub fn format_2(&self) -> [&str; 7] {
        [
            &self.live,
            &self.results,
            &self.job,
            &self.state,
            &self.active,
            &self.slots,
            &self.runs,
        ]
    }

    /// Every key a job may have in either format, in [`LeaseKeys::SUFFIXES`] order.
    pub fn every(&self) -> [&str; 7] {
        [
            &self.state,
            &self.active,
            &self.slots,
            &self.runs,
            &self.results,
            &self.job,
            &self.live,
        ]
    }

    /// The Redis types each key of [`LeaseKeys::every`] may have (`:state` is a hash in format 1
    /// and the marker string in format 2).
    pub const TYPES: [&'static [&'static str]; 7] = [
        &["hash", "string"],
        &["set"],
        &["zset"],
        &["stream"],
        &["zset"],
        &["hash"],
        &["hash"],
    ];
}

/// Every script anarchon sends, by its path under `lua/`: each lease format's and the others
/// (`scripts::all`).
pub fn every_script() -> Vec<(String, &'static LuaScript)> {
    let mut all: Vec<(String, &LuaScript)> = crate::scripts::all()
        .into_iter()
        .map(|(name, script)| (name.to_string(), script))
        .collect();
    for format in LeaseFormat::ALL {
        let dir = format!("lease/v{}", format.number());
        all.extend(
            format
                .scripts()
                .files()
                .into_iter()
                .map(|(f, s)| (format!("{dir}/{f}"), s)),
        );
    }
    // Beyond the operations every format has: each format's conversion of a job of the other.
    all.push(("lease/v1/convert.lua".to_string(), &v1::CONVERT));
    all.push(("lease/v2/convert.lua".to_string(), &v2::CONVERT));
    all
}

/// Writes every script into `dir` exactly as it is sent to the server, by its path under `lua/`
/// (for review, and for `bench/server.sh`, which must measure what anarchon runs: `cargo run
/// --example scripts DIR`), and each format's library as `lease/v<N>/library.lua`.
pub fn write_scripts(dir: &std::path::Path) -> std::io::Result<()> {
    for (name, script) in every_script() {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, script.source())?;
    }
    std::fs::write(dir.join("lease/v1/library.lua"), v1::LIBRARY.source())?;
    std::fs::write(dir.join("lease/v2/library.lua"), v2::LIBRARY.source())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_numbers_name_known_formats_only() {
        for f in LeaseFormat::ALL {
            assert_eq!(LeaseFormat::from_number(f.number()), Some(f));
        }
        assert_eq!(LeaseFormat::from_number(3), None);
        assert_eq!(
            LeaseFormat::of_job("hash", LeaseFormat::V2),
            LeaseFormat::V1
        );
        assert_eq!(
            LeaseFormat::of_job("string", LeaseFormat::V1),
            LeaseFormat::V2
        );
        assert_eq!(
            LeaseFormat::of_job("none", LeaseFormat::V2),
            LeaseFormat::V2
        );
    }

    #[test]
    fn each_format_s_lease_scripts_are_functions_of_one_library() {
        for (library, scripts) in [
            (
                &*v1::LIBRARY,
                [&*v1::CLAIM, &*v1::FINISH, &*v1::HEARTBEAT, &*v1::RELEASE],
            ),
            (
                &*v2::LIBRARY,
                [&*v2::CLAIM, &*v2::FINISH, &*v2::HEARTBEAT, &*v2::SKIP],
            ),
        ] {
            assert!(
                library
                    .source()
                    .starts_with(&format!("#!lua name={}\n", library.name))
            );
            for script in scripts {
                let (function, lib) = script.function().unwrap();
                assert_eq!(lib.name, library.name);
                assert!(
                    library.source().contains(&format!("'{function}'")),
                    "{function}"
                );
            }
        }
        assert_ne!(v1::LIBRARY.name, v2::LIBRARY.name);
        // The one-key scripts stay scripts.
        assert!(
            crate::scripts::REGISTER.function().is_none()
                && crate::scripts::CLAIM_WINDOW.function().is_none()
        );
    }

    #[test]
    fn every_script_defines_each_helper_once_and_drops_some() {
        for script in [
            &*v2::CLAIM,
            &*v2::FINISH,
            &*v2::HEARTBEAT,
            &*v2::TRIM,
            &*v1::CLAIM,
            &*v1::FINISH,
        ] {
            assert!(
                script.source().contains("server_now_ms"),
                "{}",
                script.source()
            );
        }
        assert!(!v2::FINISH.source().contains("local function plan_trim"));
        assert!(v2::CLAIM.source().contains("local function plan_trim"));
        assert!(v2::CLAIM.source().contains("local function paused"));
    }
}
