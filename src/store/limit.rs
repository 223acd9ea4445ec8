//! Named limits shared by any jobs and hosts (`--limit NAME=N`, issue #50 item 2): at most N runs
//! of all the jobs that name a limit hold a permit at once. A run takes its permits just after its
//! claim is won and before its command starts, renews them with each heartbeat of its lease, and
//! gives them back when it ends; a permit lapses with its lease, so a holder that dies keeps none.
//! Permits are the run's (`<job>@<slot>`), fenced by the attempt's token: a takeover of the run
//! takes its permits over; the attempt it took over can neither renew nor give them back.
//! The store's side is lua/store/limit.lua; docs/store-format.md, "Limits", says it in prose.

use crate::connection::Connection;
use crate::error::{Error, Result};

/// One limit a job names: at most `max` runs hold its permits at once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limit {
    pub name: String,
    pub max: u32,
}

impl Limit {
    /// Parses `NAME=N` (`--limit`).
    pub fn parse(text: &str) -> std::result::Result<Limit, String> {
        let (name, max) = text
            .split_once('=')
            .ok_or_else(|| format!("{text:?} is not NAME=N (for example db-heavy=2)"))?;
        let max: u32 = max
            .parse()
            .ok()
            .filter(|n| (1..=100_000).contains(n))
            .ok_or_else(|| format!("{text:?}: N must be a whole number from 1 to 100000"))?;
        if name.is_empty()
            || name.len() > crate::store::keys::MAX_JOB_NAME_BYTES
            || name.contains(['{', '}', ':', '*', '?', '[', ']', '\\'])
            || name.chars().any(|c| c.is_control() || c.is_whitespace())
        {
            return Err(format!(
                "{text:?}: the limit's name must be 1 to 200 bytes, without braces, colons, glob characters, spaces or control characters"
            ));
        }
        Ok(Limit {
            name: name.to_string(),
            max,
        })
    }
}

/// The keys of limit `name`: its permits (a sorted set) and its holders (a hash). Every limit of a
/// prefix shares one hash tag, the prefix's own (as its run-now requests do), so one script takes
/// all of a run's permits at once; no job's key has that form (a job's tag holds its name).
pub fn limit_keys(prefix: &str, name: &str) -> (String, String) {
    let permits = format!("{{{prefix}}}:limit:{name}");
    let who = format!("{permits}:who");
    (permits, who)
}

/// The runs waiting for room under limit `name` (a sorted set: member the run, score when its
/// wait lapses unless it asks again).
pub fn waiting_key(prefix: &str, name: &str) -> String {
    format!("{{{prefix}}}:limit:{name}:waiting")
}

/// How many runs gave up waiting for room under limit `name` (a counter).
pub fn refused_key(prefix: &str, name: &str) -> String {
    format!("{{{prefix}}}:limit:{name}:refused")
}

/// How a run is named among a limit's permits.
pub fn run_member(job: &str, slot: i64) -> String {
    format!("{job}@{slot}")
}

/// A run's permits, as its holder keeps them.
#[derive(Debug, Clone)]
pub struct Permits {
    pub prefix: String,
    pub limits: Vec<Limit>,
    /// `<job>@<slot>`.
    pub run: String,
    /// The attempt's token.
    pub token: String,
    pub runner: String,
    /// How long a permit lives past its last renewal: the run's lease.
    pub lease_ms: i64,
}

/// A permit held, as `take` saw it when a limit was full.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Holder {
    /// `<job>@<slot>`.
    pub run: String,
    pub runner: String,
    /// When its permit lapses unless renewed (ms, the server's clock).
    pub until: i64,
}

impl std::fmt::Display for Holder {
    /// `<job>@<slot> on <runner>`: how records, events and screens name a holder.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} on {}", self.run, self.runner)
    }
}

/// Holders as one list: `a@1 on host-a, b@1 on host-b`.
pub fn holders_text(holders: &[Holder]) -> String {
    holders
        .iter()
        .map(Holder::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// What `take` came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Taken {
    Yes,
    /// Limit `name` (of `max`) has no room: who holds its permits.
    Full {
        name: String,
        max: u32,
        holders: Vec<Holder>,
    },
}

impl Permits {
    fn keys(&self) -> Vec<String> {
        self.limits
            .iter()
            .flat_map(|l| {
                let (permits, who) = limit_keys(&self.prefix, &l.name);
                [permits, who, waiting_key(&self.prefix, &l.name)]
            })
            .collect()
    }

    fn args(&self, action: &str) -> Vec<String> {
        let mut args = vec![
            action.to_string(),
            self.run.clone(),
            self.token.clone(),
            self.runner.clone(),
            self.lease_ms.to_string(),
        ];
        if action == "take" {
            args.extend(self.limits.iter().map(|l| l.max.to_string()));
        }
        args
    }

    async fn call(&self, conn: &mut Connection, action: &str) -> Result<Vec<String>> {
        let keys = self.keys();
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        conn.eval(&crate::scripts::LIMIT, &keys, &self.args(action))
            .await
    }

    /// Takes a permit of every limit for the run, or says which limit is full and who holds it.
    pub async fn take(&self, conn: &mut Connection) -> Result<Taken> {
        let reply = self.call(conn, "take").await?;
        match reply.first().map(String::as_str) {
            Some("taken") => Ok(Taken::Yes),
            Some("full") if reply.len() >= 3 && (reply.len() - 3) % 3 == 0 => Ok(Taken::Full {
                name: reply[1].clone(),
                max: reply[2].parse().unwrap_or(0),
                holders: reply[3..]
                    .chunks(3)
                    .map(|h| Holder {
                        run: h[0].clone(),
                        runner: h[1].clone(),
                        until: h[2].parse().unwrap_or(0),
                    })
                    .collect(),
            }),
            _ => Err(self.odd(&reply)),
        }
    }

    /// Renews the run's permits for another lease: Ok(None), or the limit whose permit is no
    /// longer this attempt's.
    pub async fn renew(&self, conn: &mut Connection) -> Result<Option<String>> {
        let reply = self.call(conn, "renew").await?;
        match reply.as_slice() {
            [renewed] if renewed == "renewed" => Ok(None),
            [lost, name] if lost == "lost" => Ok(Some(name.clone())),
            _ => Err(self.odd(&reply)),
        }
    }

    /// Gives the run's permits back (those this attempt holds).
    pub async fn give(&self, conn: &mut Connection) -> Result<()> {
        self.call(conn, "give").await.map(|_| ())
    }

    fn odd(&self, reply: &[String]) -> Error {
        let (key, _) = limit_keys(&self.prefix, &self.limits[0].name);
        Error::corrupt(key, format!("the limit script answered {reply:?}"))
    }
}

/// The views of limits `names` among `all` (as [`all`] read them), in `names`' order; a limit with
/// no key (nothing held, waiting or refused) is there empty.
pub fn named(all: &[LimitView], names: &[&str]) -> Vec<LimitView> {
    names
        .iter()
        .map(|name| {
            all.iter()
                .find(|l| l.name == *name)
                .cloned()
                .unwrap_or_else(|| LimitView {
                    name: name.to_string(),
                    held: Vec::new(),
                    waiting: Vec::new(),
                    refused: 0,
                })
        })
        .collect()
}

/// The limit names of a registry's `limits` field (`NAME=N,...`).
pub fn names_of(registered: &str) -> Vec<&str> {
    registered
        .split(',')
        .filter_map(|l| l.split('=').next())
        .filter(|n| !n.is_empty())
        .collect()
}

impl LimitView {
    /// `NAME: N held (who), N waiting, N gave up waiting`: the limit in one line, for `list`,
    /// `inspect` and `top`.
    pub fn summary(&self) -> String {
        format!(
            "{}: {} held{}, {} waiting, {} gave up waiting",
            self.name,
            self.held.len(),
            if self.held.is_empty() {
                String::new()
            } else {
                format!(" ({})", holders_text(&self.held))
            },
            self.waiting.len(),
            self.refused
        )
    }
}

/// Counts a run that gave up waiting for room under limit `name`.
pub async fn count_refused(conn: &mut Connection, prefix: &str, name: &str) -> Result<()> {
    conn.query::<i64>(redis::cmd("INCR").arg(refused_key(prefix, name)))
        .await
        .map(|_| ())
}

/// A limit as `list` and the metrics show it.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct LimitView {
    pub name: String,
    /// The permits held now (lapsed ones left out).
    pub held: Vec<Holder>,
    /// The runs waiting for room now (`runner` empty; `until`: when the wait lapses unless the
    /// run asks again).
    pub waiting: Vec<Holder>,
    /// How many runs gave up waiting, ever (recorded interrupted, exit 94).
    pub refused: u64,
}

/// Every limit under `prefix` that has a permit, a waiter or a refusal on record, by name.
pub async fn all(conn: &mut Connection, prefix: &str, now: i64) -> Result<Vec<LimitView>> {
    let pattern = format!(
        "{}*",
        crate::store::discover::glob_escape(&format!("{{{prefix}}}:limit:"))
    );
    let head = format!("{{{prefix}}}:limit:");
    let mut names: Vec<String> = crate::store::discover::scan(conn, &pattern)
        .await?
        .into_iter()
        .filter_map(|key| {
            let rest = key.strip_prefix(&head)?;
            let name = rest.split(':').next()?;
            Some(name.to_string())
        })
        .collect();
    names.sort();
    names.dedup();
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        let held = holders(conn, prefix, &name, now).await?;
        let waiting: Vec<(String, f64)> = conn
            .query(
                redis::cmd("ZRANGEBYSCORE")
                    .arg(waiting_key(prefix, &name))
                    .arg(format!("({now}"))
                    .arg("+inf")
                    .arg("WITHSCORES"),
            )
            .await?;
        let refused: Option<u64> = conn
            .query(redis::cmd("GET").arg(refused_key(prefix, &name)))
            .await?;
        out.push(LimitView {
            name,
            held,
            waiting: waiting
                .into_iter()
                .map(|(run, until)| Holder {
                    run,
                    runner: String::new(),
                    until: until as i64,
                })
                .collect(),
            refused: refused.unwrap_or(0),
        });
    }
    Ok(out)
}

/// Who holds the permits of limit `name` now (lapsed ones left out), for `inspect` and `list`.
pub async fn holders(
    conn: &mut Connection,
    prefix: &str,
    name: &str,
    now: i64,
) -> Result<Vec<Holder>> {
    let (permits, who) = limit_keys(prefix, name);
    let held: Vec<(String, f64)> = conn
        .query(
            redis::cmd("ZRANGEBYSCORE")
                .arg(&permits)
                .arg(format!("({now}"))
                .arg("+inf")
                .arg("WITHSCORES"),
        )
        .await?;
    let mut out = Vec::with_capacity(held.len());
    for (run, until) in held {
        let text: Option<String> = conn.query(redis::cmd("HGET").arg(&who).arg(&run)).await?;
        let runner = text
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| v["runner"].as_str().map(str::to_string))
            .unwrap_or_default();
        out.push(Holder {
            run,
            runner,
            until: until as i64,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limit_reads_name_equals_a_count() {
        assert_eq!(
            Limit::parse("db-heavy=2"),
            Ok(Limit {
                name: "db-heavy".into(),
                max: 2
            })
        );
        for bad in ["db-heavy", "=2", "x=0", "x=two", "{x}=1", "a b=1"] {
            assert!(Limit::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn every_limit_of_a_prefix_shares_one_hash_tag() {
        assert_eq!(
            limit_keys("cron:", "db-heavy"),
            (
                "{cron:}:limit:db-heavy".to_string(),
                "{cron:}:limit:db-heavy:who".to_string()
            )
        );
    }
}
