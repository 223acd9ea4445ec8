//! The job registry: `{<prefix><job>}:registry`, a hash of what `anarchon run` was told about the
//! job (its schedule, time zone, strategy, lease, ...) and the hosts that ran it recently, so that
//! monitoring (`list`, `inspect`, `check`, `metrics`) knows when runs are due without being told.
//! An addition to both store formats that readers may ignore (docs/store-format.md, "Job
//! registry"); the Node scheduler can write the same fields.

use std::time::Duration;

use serde::Serialize;

use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::scripts;
use crate::time::millis;

/// A host's last-seen time is written again once it is this old: a minutely job writes it every
/// ten minutes, not every run.
pub const HOST_REFRESH: Duration = Duration::from_secs(600);

/// The registry key of `job` under `prefix` (the job's hash tag, so it sits beside its keys).
pub fn registry_key(prefix: &str, job: &str) -> String {
    format!("{{{prefix}{job}}}:registry")
}

/// What `run` records of a job. Empty texts and absent numbers are written as empty strings.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct JobSettings {
    /// The cron expression as given (None: runs of explicit `--slot`s only).
    pub schedule: Option<String>,
    /// The IANA time zone of the schedule.
    pub tz: String,
    pub strategy: String,
    pub lease_ms: Option<i64>,
    pub max_attempts: Option<u32>,
    pub max_late_ms: i64,
    pub catch_up_ms: i64,
    pub catch_up_policy: String,
    pub jitter_ms: i64,
    /// The overlap policy as the host wrote it: forbid, allow, replace or buffer (text: another
    /// scheduler may write a name this build does not know, shown as it is).
    pub overlap: String,
    /// The anarchon version that wrote them.
    pub version: String,
    /// The service whose `anarchon cron` replicas run the job (`cron --service`; None: `run`
    /// hosts, or replicas that name none): monitoring reads the job removed when live replicas of
    /// the service run and none of them has it in its crontab.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
    /// `--retries` as `N,<delay>,<backoff>,<max delay>` (durations in ms; empty: none).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub retries: String,
    /// `--limit`s as `NAME=N,...` (empty: none).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub limits: String,
    /// `--exclude` windows, one a line (empty: none).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub exclude: String,
    /// `--calendar` names, comma-separated (empty: none).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub calendars: String,
}

impl JobSettings {
    /// The fields in the registry's order (docs/store-format.md).
    fn fields(&self) -> Vec<(&'static str, String)> {
        let opt = |v: Option<i64>| v.map_or(String::new(), |v| v.to_string());
        vec![
            ("schedule", self.schedule.clone().unwrap_or_default()),
            ("tz", self.tz.clone()),
            ("strategy", self.strategy.clone()),
            ("lease_ms", opt(self.lease_ms)),
            ("max_attempts", opt(self.max_attempts.map(i64::from))),
            ("max_late_ms", self.max_late_ms.to_string()),
            ("catch_up_ms", self.catch_up_ms.to_string()),
            ("catch_up_policy", self.catch_up_policy.clone()),
            ("jitter_ms", self.jitter_ms.to_string()),
            ("overlap", self.overlap.clone()),
            ("version", self.version.clone()),
            ("service", self.service.clone().unwrap_or_default()),
            ("retries", self.retries.clone()),
            ("limits", self.limits.clone()),
            ("exclude", self.exclude.clone()),
            ("calendars", self.calendars.clone()),
        ]
    }
}

/// The registry as read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Registry {
    #[serde(flatten)]
    pub settings: JobSettings,
    /// When the settings last changed (server ms).
    pub updated_at: Option<i64>,
    /// Hosts that ran the job, with when each was last seen (server ms), newest first.
    pub hosts: Vec<SeenHost>,
    /// The job's earlier names (a crontab's `--was`, or a reload's carried-over name), every one
    /// any replica named: monitoring counts their runs as this job's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub was: Vec<String>,
    /// When a name was last added to `was` (server ms; 0: never).
    #[serde(skip_serializing_if = "is_zero")]
    pub was_at: i64,
    /// The name this job runs under now, when it was renamed (written by the new name's
    /// registration): monitoring reports it renamed instead of judging it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub renamed_to: Option<String>,
    /// When an operator retired the job (`anarchon forget`), by whom and why: monitoring stops
    /// expecting its runs, unless a host runs it again after.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retired: Option<Retired>,
}

/// An operator's retirement of a job (`anarchon forget`), as its registry records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Retired {
    /// Server ms.
    pub at: i64,
    pub by: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Not recorded but read as of `at` (the read's time): the job was removed from the crontab
    /// of a service (`cron --service`), whose live replicas none has it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub removed: bool,
}

/// The write that records a job retired at `now` (server ms): `retired_at`, `retired_by` and
/// `retired_reason` in its registry (docs/store-format.md, "Job registry").
pub fn retire(prefix: &str, job: &str, retired: &Retired) -> redis::Cmd {
    let mut cmd = redis::cmd("HSET");
    cmd.arg(registry_key(prefix, job))
        .arg("retired_at")
        .arg(retired.at)
        .arg("retired_by")
        .arg(&retired.by)
        .arg("retired_reason")
        .arg(retired.reason.as_deref().unwrap_or(""));
    cmd
}

fn is_zero(v: &i64) -> bool {
    *v == 0
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SeenHost {
    pub host: String,
    pub last_seen: i64,
}

/// The host part of a runner name (`host:pid`).
pub fn host_of(runner: &str) -> &str {
    runner.rsplit_once(':').map_or(runner, |(host, _)| host)
}

/// One run's record in the job registry: `settings`, and `host` as seen now. Most runs of a job
/// change nothing, and every host of a fleet runs at the same minute, so it is read first, with one
/// plain HMGET of the fields it would write ([`Registration::read`], which `run` sends in its first
/// round trip), and written by lua/store/register.lua (which decides again, atomically, by the server's
/// clock) only when a setting differs or the host's last-seen time is due ([`HOST_REFRESH`]).
pub struct Registration<'a> {
    prefix: &'a str,
    job: &'a str,
    key: String,
    settings: &'a JobSettings,
    host: &'a str,
    /// The job's earlier names ([`Registry::was`]).
    was: &'a [String],
}

impl<'a> Registration<'a> {
    pub fn new(
        prefix: &'a str,
        job: &'a str,
        settings: &'a JobSettings,
        host: &'a str,
        was: &'a [String],
    ) -> Self {
        Registration {
            prefix,
            job,
            key: registry_key(prefix, job),
            settings,
            host,
            was,
        }
    }

    /// The read that tells whether anything is due: the settings' fields, then the host's, then
    /// the earlier names.
    pub fn read(&self) -> redis::Cmd {
        let mut cmd = redis::cmd("HMGET");
        cmd.arg(&self.key);
        for (name, _) in self.settings.fields() {
            cmd.arg(name);
        }
        cmd.arg(format!("host:{}", self.host));
        cmd.arg("was");
        cmd
    }

    /// What this registration would write, in one text: a process that registered it once
    /// (`anarchon cron`, [`crate::scheduler::open::KnownStores`]) knows it need not read the registry
    /// again while this stays the same (and the host's last-seen time is not due).
    pub fn digest(&self) -> String {
        let mut text = String::new();
        for (name, value) in self.settings.fields() {
            text.push_str(&format!("{name}={value}\n"));
        }
        text.push_str(&format!("host={}\nwas={}", self.host, self.was.join(",")));
        text
    }

    /// Whether the registry as [`Registration::read`] found it (None: not read) needs a write at
    /// `server_now`. A reply that is not the fields (a registry of another type) is due too: the
    /// script then says what is wrong.
    pub fn is_due(&self, stored: Option<redis::Value>, server_now: i64) -> bool {
        let Some(stored) =
            stored.and_then(|v| redis::from_redis_value::<Vec<Option<String>>>(v).ok())
        else {
            return true;
        };
        let fields = self.settings.fields();
        if stored.len() != fields.len() + 2 {
            return true;
        }
        let (stored, stored_was) = stored.split_at(fields.len() + 1);
        // `was` only grows (lua/store/register.lua): due when this run names one it lacks.
        let stored_was = stored_was[0].as_deref().unwrap_or("");
        let was_grows = self
            .was
            .iter()
            .any(|name| !stored_was.split(',').any(|s| s == name));
        // A run without a schedule (an operator's `run --slot` of a scheduled job: running a slot
        // again, a takeover by hand) is no crontab line: it must not erase the schedule the
        // crontab line recorded, or monitoring would stop judging the job (`unknown`).
        let stored_schedule = stored.first().and_then(Option::as_deref).unwrap_or("");
        if self.settings.schedule.is_none() && !stored_schedule.is_empty() {
            return false;
        }
        let changed = fields
            .iter()
            .zip(stored)
            .any(|((_, value), stored)| stored.as_deref() != Some(value.as_str()));
        let seen_recently = stored
            .last()
            .and_then(|seen| seen.as_deref()?.parse::<i64>().ok())
            .is_some_and(|seen| server_now - seen < millis(HOST_REFRESH));
        changed || !seen_recently || was_grows
    }

    /// Writes what changed: one short script (lua/store/register.lua). A job with earlier names
    /// then marks each old name's registry with this name (lua/store/mark_renamed.lua), so that monitoring reports them
    /// renamed (one script each: the old names' keys are in other hash slots; a rename names one or
    /// two). Marked whenever the registration writes (a host's refresh at least), so a mark lost
    /// to a crash between the two is made again within [`HOST_REFRESH`].
    pub async fn write(&self, conn: &mut Connection) -> Result<()> {
        let mut args = vec![
            self.host.to_string(),
            millis(HOST_REFRESH).to_string(),
            self.was.join(","),
        ];
        for (name, value) in self.settings.fields() {
            args.push(name.to_string());
            args.push(value);
        }
        let (_written, was_at): (i64, i64) = conn
            .eval(&scripts::REGISTER, &[self.key.as_str()], &args)
            .await?;
        if self.was.is_empty() {
            return Ok(());
        }
        let args = [self.job.to_string(), was_at.to_string()];
        for old in self.was {
            let key = registry_key(self.prefix, old);
            let _: i64 = conn.eval(&scripts::MARK_RENAMED, &[&key], &args).await?;
        }
        Ok(())
    }
}

/// Decodes an `HGETALL` of the registry; None when the job has none (never run by a `run` that
/// records it). Unknown fields are ignored; a number that is not one names the key.
pub fn decode(key: &str, fields: &[(String, String)]) -> Result<Option<Registry>> {
    if fields.is_empty() {
        return Ok(None);
    }
    let get = |name: &str| {
        fields
            .iter()
            .find(|(f, _)| f == name)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.is_empty())
    };
    let int = |name: &str| crate::store::read::int_field(key, name, get(name));
    let text = |name: &str| get(name).unwrap_or_default().to_string();
    let mut hosts: Vec<SeenHost> = fields
        .iter()
        .filter_map(|(f, v)| {
            f.strip_prefix("host:").map(|host| {
                v.parse().map(|last_seen| SeenHost {
                    host: host.to_string(),
                    last_seen,
                })
            })
        })
        .collect::<std::result::Result<_, _>>()
        .map_err(|_| Error::corrupt(key, "a host:<name> field is not a time in ms"))?;
    hosts.sort_by_key(|h| std::cmp::Reverse(h.last_seen));
    Ok(Some(Registry {
        settings: JobSettings {
            schedule: get("schedule").map(str::to_string),
            tz: get("tz").unwrap_or("UTC").to_string(),
            strategy: text("strategy"),
            lease_ms: int("lease_ms")?,
            max_attempts: int("max_attempts")?.and_then(|v| u32::try_from(v).ok()),
            max_late_ms: int("max_late_ms")?.unwrap_or(0),
            catch_up_ms: int("catch_up_ms")?.unwrap_or(0),
            catch_up_policy: text("catch_up_policy"),
            jitter_ms: int("jitter_ms")?.unwrap_or(0),
            overlap: text("overlap"),
            version: text("version"),
            service: get("service").map(str::to_string),
            retries: text("retries"),
            limits: text("limits"),
            exclude: text("exclude"),
            calendars: text("calendars"),
        },
        updated_at: int("updated_at")?,
        hosts,
        was: get("was")
            .map(|v| v.split(',').map(str::to_string).collect())
            .unwrap_or_default(),
        was_at: int("was_at")?.unwrap_or(0),
        renamed_to: get("renamed_to").map(str::to_string),
        retired: int("retired_at")?.map(|at| Retired {
            at,
            by: text("retired_by"),
            reason: get("retired_reason").map(str::to_string),
            removed: false,
        }),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_what_register_writes_and_names_bad_numbers() {
        let settings = JobSettings {
            schedule: Some("*/5 * * * *".into()),
            tz: "Europe/Berlin".into(),
            strategy: "lease".into(),
            lease_ms: Some(30_000),
            max_attempts: Some(3),
            max_late_ms: 60_000,
            catch_up_ms: 0,
            catch_up_policy: "all".into(),
            jitter_ms: 0,
            overlap: "forbid".into(),
            version: "0.1.0".into(),
            service: Some("billing-svc".into()),
            retries: "2,30000,2,600000".into(),
            limits: "db-heavy=2".into(),
            exclude: "xmas=12-25\nsat,sun".into(),
            calendars: "holidays".into(),
        };
        let mut fields: Vec<(String, String)> = settings
            .fields()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        fields.push(("host:a".into(), "10".into()));
        fields.push(("host:b".into(), "20".into()));
        fields.push(("updated_at".into(), "5".into()));
        let r = decode("k", &fields).unwrap().unwrap();
        assert_eq!(r.settings, settings);
        assert_eq!(r.hosts[0].host, "b");
        assert_eq!(r.updated_at, Some(5));
        assert!(decode("k", &[]).unwrap().is_none());
        let bad = vec![("lease_ms".to_string(), "soon".to_string())];
        assert!(
            decode("k", &bad)
                .unwrap_err()
                .to_string()
                .contains("lease_ms")
        );
        assert_eq!(host_of("web-1:4242"), "web-1");
    }

    /// `was` only grows: a run naming an earlier name the registry lacks is due; one naming fewer
    /// (an old replica during a rolling deploy) is not, nor one naming none.
    #[test]
    fn earlier_names_are_due_only_when_one_is_new() {
        let settings = JobSettings::default();
        let stored = |was: Option<&str>| {
            let mut v: Vec<redis::Value> = settings
                .fields()
                .into_iter()
                .map(|(_, value)| redis::Value::BulkString(value.into_bytes()))
                .collect();
            v.push(redis::Value::BulkString(b"100".to_vec()));
            v.push(was.map_or(redis::Value::Nil, |w| {
                redis::Value::BulkString(w.as_bytes().to_vec())
            }));
            Some(redis::Value::Array(v))
        };
        let due = |was: &[&str], stored_was: Option<&str>| {
            let was: Vec<String> = was.iter().map(|w| w.to_string()).collect();
            Registration::new("cron:", "b", &settings, "h", &was).is_due(stored(stored_was), 200)
        };
        assert!(!due(&[], None));
        assert!(due(&["a"], None));
        assert!(!due(&["a"], Some("x,a")));
        assert!(due(&["a", "y"], Some("x,a")));
        assert!(!due(&[], Some("x,a")));
    }
}
