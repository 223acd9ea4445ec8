//! What kind of server we talk to: Redis or Valkey, which version, standalone or cluster.
//! `doctor` reports it; the claim-only strategies use it to refuse idmp where it can't work.

use std::collections::HashMap;

use serde::Serialize;

use crate::connection::Connection;
use crate::error::Result;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ServerKind {
    Redis,
    Valkey,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ServerInfo {
    pub kind: ServerKind,
    /// The product's own version (valkey_version on Valkey).
    pub version: String,
    /// `standalone`, `cluster` or `sentinel`.
    pub mode: String,
    pub maxmemory_policy: Option<String>,
}

impl ServerInfo {
    /// Parses the text of `INFO` (any sections; the ones used are server and memory).
    pub fn parse(info: &str) -> ServerInfo {
        let fields: HashMap<&str, &str> = info
            .lines()
            .filter_map(|l| l.trim().split_once(':'))
            .collect();
        let valkey =
            fields.get("server_name") == Some(&"valkey") || fields.contains_key("valkey_version");
        let version = if valkey {
            fields.get("valkey_version").or(fields.get("redis_version"))
        } else {
            fields.get("redis_version")
        };
        ServerInfo {
            kind: if valkey {
                ServerKind::Valkey
            } else {
                ServerKind::Redis
            },
            version: version.unwrap_or(&"unknown").to_string(),
            mode: fields
                .get("redis_mode")
                .or(fields.get("server_mode"))
                .unwrap_or(&"standalone")
                .to_string(),
            maxmemory_policy: fields.get("maxmemory_policy").map(|s| s.to_string()),
        }
    }

    /// (major, minor, patch); unknown parts are 0.
    pub fn version_tuple(&self) -> (u32, u32, u32) {
        let mut parts = self
            .version
            .split('.')
            .map(|p| p.parse::<u32>().unwrap_or(0));
        (
            parts.next().unwrap_or(0),
            parts.next().unwrap_or(0),
            parts.next().unwrap_or(0),
        )
    }

    /// `Redis 7.0.15` / `Valkey 8.0.1`.
    pub fn describe(&self) -> String {
        let name = match self.kind {
            ServerKind::Redis => "Redis",
            ServerKind::Valkey => "Valkey",
        };
        format!("{name} {}", self.version)
    }

    /// idmp needs idempotent XADD: Redis 8.6 or newer, never Valkey.
    pub fn supports_idmp(&self) -> bool {
        self.kind == ServerKind::Redis && self.version_tuple() >= (8, 6, 0)
    }

    /// Every strategy needs at least Redis 5 (streams); Valkey descends from Redis 7.2.
    pub fn supports_anarchon(&self) -> bool {
        self.kind == ServerKind::Valkey || self.version_tuple() >= (5, 0, 0)
    }
}

/// Asks the server with `INFO server` and `INFO memory` (one round trip).
pub async fn detect(conn: &mut Connection) -> Result<ServerInfo> {
    let mut pipe = redis::pipe();
    pipe.cmd("INFO").arg("server").cmd("INFO").arg("memory");
    let (server, memory): (String, String) = conn.pipeline(&pipe).await?;
    Ok(ServerInfo::parse(&format!("{server}\n{memory}")))
}

/// Whether a `maxmemory-policy` may evict the store's keys: the `allkeys-*` policies evict any key,
/// a claim's or a finished run's state or the format key among them, and an evicted claim can run
/// again. (The `volatile-*` policies evict only keys with a TTL, which the store's keys never have.)
pub fn evicts_store_keys(policy: &str) -> bool {
    policy.starts_with("allkeys")
}

/// `CONFIG GET maxmemory-policy`, which `run` sends in its first round trip to warn when the server
/// may evict the store ([`eviction_warning`]). An ACL may deny it: then nothing is said.
pub fn eviction_policy_read() -> redis::Cmd {
    let mut cmd = redis::cmd("CONFIG");
    cmd.arg("GET").arg("maxmemory-policy");
    cmd
}

/// The warning for the reply of [`eviction_policy_read`], when the policy may evict the store.
pub fn eviction_warning(reply: &redis::Value) -> Option<String> {
    let pairs: Vec<String> = redis::from_redis_value(reply.clone()).ok()?;
    let policy = pairs.get(1)?;
    evicts_store_keys(policy).then(|| {
        format!(
            "warning: the server's maxmemory-policy {policy} may evict the store's keys: an evicted claim or result lets a slot run again, and an evicted format key lets another format be written\n  hint: set maxmemory-policy noeviction (writes then fail when memory is full, and anarchon retries); `anarchon doctor` checks the server"
        )
    })
}

/// How the server keeps its data across a restart, as `doctor` judges it: (fine, what it means).
/// `aof`: INFO persistence's aof_enabled; `save`: CONFIG GET save (None when not readable).
pub fn persistence_verdict(aof: Option<bool>, save: Option<&str>) -> (bool, String) {
    match (aof, save.map(str::trim)) {
        (Some(true), _) => (
            true,
            "appendonly yes: claims and results survive a restart (up to appendfsync's last second)"
                .to_string(),
        ),
        (_, Some(save)) if !save.is_empty() => (
            false,
            format!(
                "RDB snapshots only (save \"{save}\"): a restart loses the claims made since the last snapshot, and a run in progress then can run again on another host; use appendonly yes"
            ),
        ),
        (Some(false), Some(_)) => (
            false,
            "no persistence (appendonly no, save \"\"): a restart loses every claim and result, and a run in progress then can run again on another host; use appendonly yes".to_string(),
        ),
        _ => (
            false,
            "persistence not reported (CONFIG GET save refused?): if a restart loses data, a run in progress can run again".to_string(),
        ),
    }
}

/// Reads what [`persistence_verdict`] judges: INFO persistence's aof_enabled, and CONFIG GET save
/// (None when an ACL denies it).
pub async fn read_persistence(conn: &mut Connection) -> (Option<bool>, Option<String>) {
    let mut pipe = redis::pipe();
    pipe.cmd("INFO").arg("persistence");
    pipe.cmd("CONFIG").arg("GET").arg("save");
    let replies = conn.replies(&pipe).await.unwrap_or_default();
    let aof = replies
        .first()
        .and_then(|v| redis::from_redis_value::<String>(v.clone()).ok())
        .and_then(|info| {
            info.lines()
                .find_map(|l| l.trim().strip_prefix("aof_enabled:"))
                .map(|v| v == "1")
        });
    let save = replies
        .get(1)
        .and_then(|v| redis::from_redis_value::<Vec<String>>(v.clone()).ok())
        .and_then(|pairs| pairs.get(1).cloned());
    (aof, save)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_and_valkey_are_told_apart() {
        let redis = ServerInfo::parse(
            "# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\n# Memory\r\nmaxmemory_policy:noeviction\r\n",
        );
        assert_eq!(redis.kind, ServerKind::Redis);
        assert_eq!(redis.version_tuple(), (7, 0, 15));
        assert!(!redis.supports_idmp());
        assert!(redis.supports_anarchon());
        assert_eq!(redis.maxmemory_policy.as_deref(), Some("noeviction"));

        let valkey = ServerInfo::parse(
            "redis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.0.1\r\nredis_mode:cluster\r\n",
        );
        assert_eq!(valkey.kind, ServerKind::Valkey);
        assert_eq!(valkey.version, "8.0.1");
        assert_eq!(valkey.mode, "cluster");
        assert!(!valkey.supports_idmp());
        assert_eq!(valkey.describe(), "Valkey 8.0.1");

        let new = ServerInfo::parse("redis_version:8.6.0\r\n");
        assert!(new.supports_idmp());
        let old = ServerInfo::parse("redis_version:4.0.9\r\n");
        assert!(!old.supports_anarchon());
    }
}
