//! Key names of store formats 1 and 2 (see docs/store-format.md).
//!
//! The lease layout wraps `<prefix><job>` in a Redis Cluster hash tag so all five keys of a job live
//! in one slot and one Lua script may touch them all. The claim-only layout has no hash tag: each of
//! its commands touches a single key. The format key is shared by the whole prefix.

use crate::error::{Error, Result};
pub use crate::store::lease::{LeaseFormat, LeaseKeys};

/// The default prefix of every key, as in the scheduler.
pub const DEFAULT_PREFIX: &str = "cron:";

/// Longest job name accepted, in bytes. Keeps keys short and bounded.
pub const MAX_JOB_NAME_BYTES: usize = 200;

/// Checks a job name: refuses what would break the hash tag (`{`, `}`) or the key layout.
pub fn validate_job_name(job: &str) -> Result<()> {
    if job.is_empty() {
        return Err(Error::usage(
            "the job name is empty\n  hint: name the job, for example `sync`",
        ));
    }
    if job.len() > MAX_JOB_NAME_BYTES {
        return Err(Error::usage(format!(
            "the job name is {} bytes long; at most {MAX_JOB_NAME_BYTES} are allowed",
            job.len()
        )));
    }
    if let Some(c) = job.chars().find(|c| *c == '{' || *c == '}') {
        return Err(Error::usage(format!(
            "the job name {job:?} contains '{c}', which would break the Redis Cluster hash tag of its keys\n  hint: use a name without braces"
        )));
    }
    if job.chars().any(char::is_control) {
        return Err(Error::usage(format!(
            "the job name {job:?} contains a control character\n  hint: use printable characters only"
        )));
    }
    Ok(())
}

/// Checks a key prefix: the same rules as a job name, since it is part of every hash tag, but it
/// may be empty.
pub fn validate_prefix(prefix: &str) -> Result<()> {
    if prefix.contains(['{', '}']) || prefix.chars().any(char::is_control) {
        return Err(Error::usage(format!(
            "the prefix {prefix:?} contains a brace or a control character, which would break the key layout"
        )));
    }
    if prefix.len() > MAX_JOB_NAME_BYTES {
        return Err(Error::usage(format!(
            "the prefix is {} bytes long; at most {MAX_JOB_NAME_BYTES} are allowed",
            prefix.len()
        )));
    }
    Ok(())
}

pub use crate::store::names::format_key;

/// The three keys of one job in the claim-only layout (stream-id, idmp, script strategies).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimKeys {
    pub runs: String,
    pub manual: String,
    pub results: String,
}

impl ClaimKeys {
    /// The suffixes after `<prefix><job>`, in the order of [`ClaimKeys::all`].
    pub const SUFFIXES: [&'static str; 3] = [":runs", ":manual", ":results"];

    pub fn new(prefix: &str, job: &str) -> Self {
        let [runs, manual, results] = Self::SUFFIXES.map(|suffix| format!("{prefix}{job}{suffix}"));
        ClaimKeys {
            runs,
            manual,
            results,
        }
    }

    pub fn all(&self) -> [&str; 3] {
        [&self.runs, &self.manual, &self.results]
    }

    pub const TYPES: [&'static [&'static str]; 3] = [&["stream"], &["stream"], &["zset"]];
}

/// A job's keys in the layout it uses: what the layout-independent readers and trimming take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobKeys {
    Lease(LeaseKeys),
    ClaimOnly(ClaimKeys),
}

impl JobKeys {
    /// `format`: which format's scripts write to a lease job (readers need not care: they look at
    /// each job's own keys).
    pub fn new(layout: crate::store::Layout, prefix: &str, job: &str, format: LeaseFormat) -> Self {
        match layout {
            crate::store::Layout::Lease => {
                JobKeys::Lease(LeaseKeys::new(prefix, job).with_format(format))
            }
            crate::store::Layout::ClaimOnly => JobKeys::ClaimOnly(ClaimKeys::new(prefix, job)),
        }
    }

    /// The streams that hold the job's history, newest entries last.
    pub fn history_streams(&self) -> Vec<&str> {
        match self {
            JobKeys::Lease(k) => vec![&k.runs],
            JobKeys::ClaimOnly(k) => vec![&k.runs, &k.manual],
        }
    }

    /// The sorted set of results (score = slot).
    pub fn results(&self) -> &str {
        match self {
            JobKeys::Lease(k) => &k.results,
            JobKeys::ClaimOnly(k) => &k.results,
        }
    }
}

/// Cluster hash slot of a key (CRC16/XMODEM mod 16384, honouring `{hash tags}`), as Redis computes it.
/// `doctor` and `inspect` show it so an operator can find the node that holds a job.
pub fn hash_slot(key: &str) -> u16 {
    let bytes = key.as_bytes();
    // Only the part between the first `{` and the next `}` counts, if it is not empty.
    let hashed = bytes
        .iter()
        .position(|b| *b == b'{')
        .and_then(|open| {
            let rest = &bytes[open + 1..];
            rest.iter()
                .position(|b| *b == b'}')
                .filter(|len| *len > 0)
                .map(|len| &rest[..len])
        })
        .unwrap_or(bytes);
    crc16::State::<crc16::XMODEM>::calculate(hashed) % 16384
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lease_keys_share_one_hash_tag() {
        let k = LeaseKeys::new("cron:", "sync");
        assert_eq!(k.state, "{cron:sync}:state");
        assert_eq!(k.active, "{cron:sync}:active");
        assert_eq!(k.slots, "{cron:sync}:slots");
        assert_eq!(k.runs, "{cron:sync}:runs");
        assert_eq!(k.results, "{cron:sync}:results");
        assert_eq!(k.job, "{cron:sync}:job");
        assert_eq!(k.live, "{cron:sync}:live");
        let slot = hash_slot(&k.state);
        assert!(k.every().iter().all(|key| hash_slot(key) == slot));
        assert_eq!(slot, hash_slot("cron:sync"));
    }

    #[test]
    fn hash_slot_matches_redis_reference_values() {
        // Values from the Redis Cluster specification / CLUSTER KEYSLOT.
        assert_eq!(hash_slot("123456789"), 12739);
        assert_eq!(hash_slot("foo"), 12182);
        assert_eq!(hash_slot("{user1000}.following"), hash_slot("user1000"));
    }

    #[test]
    fn claim_keys_have_no_hash_tag() {
        let k = ClaimKeys::new("billing:cron:", "sync");
        assert_eq!(k.runs, "billing:cron:sync:runs");
        assert_eq!(k.manual, "billing:cron:sync:manual");
        assert_eq!(k.results, "billing:cron:sync:results");
        assert_eq!(format_key("billing:cron:"), "billing:cron:format");
    }

    #[test]
    fn job_names_that_break_the_layout_are_refused() {
        assert!(validate_job_name("sync").is_ok());
        assert!(validate_job_name("billing:nightly-export.v2").is_ok());
        assert!(validate_job_name("jöb with spaces").is_ok());
        assert!(validate_job_name(&"a".repeat(200)).is_ok());
        for bad in ["", "a{b", "a}b", "{x}", "tab\there", "nl\n", "nul\0"] {
            let err = validate_job_name(bad).unwrap_err();
            assert!(matches!(err, Error::Usage(_)), "{bad:?}");
        }
        assert!(validate_job_name(&"a".repeat(201)).is_err());
        // 67 three-byte characters are 201 bytes: the limit is bytes, not characters.
        assert!(validate_job_name(&"€".repeat(67)).is_err());
    }

    #[test]
    fn prefixes_may_be_empty_but_not_braced() {
        assert!(validate_prefix("").is_ok());
        assert!(validate_prefix("billing:cron:").is_ok());
        assert!(validate_prefix("a{").is_err());
    }
}
