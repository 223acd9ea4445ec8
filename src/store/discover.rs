//! Finding jobs: SCAN (never KEYS, which blocks the server) for the keys of both layouts.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::connection::Connection;
use crate::error::Result;
use crate::store::{ClaimKeys, Layout};

/// A job found in the store.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
pub struct JobRef {
    pub name: String,
    pub layout: Layout,
}

/// A lease job is found by its history keys in either format (its `:job` hash alone is no job).
const LEASE_SUFFIXES: &[&str] = &[":state", ":active", ":slots", ":runs", ":results", ":live"];
const CLAIM_SUFFIXES: &[&str] = &ClaimKeys::SUFFIXES;

/// Escapes Redis glob metacharacters, so a prefix matches only itself.
pub fn glob_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Which layout and job a key belongs to, if it is one of ours under `prefix`.
pub fn classify_key(prefix: &str, key: &str) -> Option<JobRef> {
    let valid = |job: &&str| !job.is_empty() && !job.contains(['{', '}']);
    if let Some(rest) = key.strip_prefix('{').and_then(|k| k.strip_prefix(prefix)) {
        return LEASE_SUFFIXES.iter().find_map(|suffix| {
            rest.strip_suffix(suffix)
                .and_then(|r| r.strip_suffix('}'))
                .filter(valid)
                .map(|job| JobRef {
                    name: job.to_string(),
                    layout: Layout::Lease,
                })
        });
    }
    let rest = key.strip_prefix(prefix)?;
    CLAIM_SUFFIXES.iter().find_map(|suffix| {
        rest.strip_suffix(suffix).filter(valid).map(|job| JobRef {
            name: job.to_string(),
            layout: Layout::ClaimOnly,
        })
    })
}

/// Every key matching `pattern` (a Redis glob), by SCAN (never KEYS, which blocks the server), on
/// every primary of a cluster. A key may come twice (SCAN's own guarantee).
pub async fn scan(conn: &mut Connection, pattern: &str) -> Result<Vec<String>> {
    let mut found = Vec::new();
    for mut node in conn.primaries().await? {
        let mut cursor: u64 = 0;
        loop {
            let (next, keys): (u64, Vec<String>) = node
                .query(
                    redis::cmd("SCAN")
                        .arg(cursor)
                        .arg("MATCH")
                        .arg(pattern)
                        .arg("COUNT")
                        .arg(1000),
                )
                .await?;
            found.extend(keys);
            if next == 0 {
                break;
            }
            cursor = next;
        }
    }
    Ok(found)
}

/// Every job under `prefix` whose name matches `pattern` (a Redis glob; `*` for all), sorted by name.
/// A job with keys in both layouts is listed once per layout. In a cluster, every primary is scanned.
pub async fn find_jobs(conn: &mut Connection, prefix: &str, pattern: &str) -> Result<Vec<JobRef>> {
    let escaped = glob_escape(prefix);
    let patterns = [
        format!("{{{escaped}{pattern}}}:*"),
        format!("{escaped}{pattern}:*"),
    ];
    let mut found: BTreeMap<(String, Layout), ()> = BTreeMap::new();
    for scan_pattern in &patterns {
        for key in scan(conn, scan_pattern).await? {
            if let Some(job) = classify_key(prefix, &key) {
                found.insert((job.name, job.layout), ());
            }
        }
    }
    Ok(found
        .into_keys()
        .map(|(name, layout)| JobRef { name, layout })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_classified_by_layout() {
        let p = "cron:";
        assert_eq!(
            classify_key(p, "{cron:sync}:state"),
            Some(JobRef {
                name: "sync".into(),
                layout: Layout::Lease
            })
        );
        assert_eq!(
            classify_key(p, "{cron:a:b}:results").map(|j| j.name),
            Some("a:b".to_string())
        );
        assert_eq!(
            classify_key(p, "cron:sync:runs"),
            Some(JobRef {
                name: "sync".into(),
                layout: Layout::ClaimOnly
            })
        );
        assert_eq!(classify_key(p, "cron:format"), None);
        assert_eq!(classify_key(p, "cron:sync:other"), None);
        assert_eq!(classify_key(p, "{cron:sync}:other"), None);
        assert_eq!(classify_key(p, "{other:sync}:state"), None);
        assert_eq!(classify_key(p, "cron::runs"), None);
        assert_eq!(
            classify_key("", "{x}:state").map(|j| j.name),
            Some("x".into())
        );
    }

    #[test]
    fn globs_in_prefixes_are_escaped() {
        assert_eq!(glob_escape("a*b?[c]\\"), "a\\*b\\?\\[c\\]\\\\");
        assert_eq!(glob_escape("cron:"), "cron:");
    }
}
