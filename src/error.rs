//! Errors and the exit-code table.
//!
//! Every way the CLI can end has one stable exit code, so cron wrappers and incident scripts can
//! branch on `$?`. The codes live here and nowhere else; docs/guide.md repeats this table.
//!
//! Outcomes that are not failures of the tool (another host won, the run is done already) still get
//! their own non-zero code: a script must be able to tell "I won" from "someone else has it".
//! They sit in 80..=95, away from the codes a wrapped command commonly returns (1, 2, 126, 127, 128+N).

use std::fmt;

/// The documented exit codes. `as i32` gives the process exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i32)]
pub enum ExitCode {
    /// Claimed / done what was asked.
    Ok = 0,
    /// Something unexpected (a bug, an I/O error of the machine).
    Failure = 1,
    /// Bad arguments: nothing was sent to Redis.
    Usage = 2,
    /// `claim`/`run`: an older run of the job still holds a live lease.
    Overlap = 80,
    /// `claim`/`run`: this run is over already (finished, failed or interrupted).
    Done = 81,
    /// `claim`/`run`: another runner holds a live lease on this run.
    Running = 82,
    /// `heartbeat`/`finish`/`run`: our lease was taken over or the run's state is gone.
    LeaseLost = 83,
    /// `run`: the scheduled slot is older than `--max-late`.
    TooLate = 84,
    /// `inspect`/`history`/...: the job has no keys under the prefix.
    NotFound = 85,
    /// `doctor`: at least one check failed.
    CheckFailed = 86,
    /// `claim`/`run`: the job is paused (`anarchon pause`); nothing was claimed.
    Paused = 87,
    /// `run --wait-replicas --if-unreplicated skip`: too few replicas acknowledged the claim in
    /// time; the run was ended as failed without starting the command.
    Unreplicated = 88,
    /// `run-now JOB` (no command): no live `anarchon cron` replica has the job in its crontab, or
    /// none picked the request up in time (it is then recorded skipped); nothing ran.
    NoReplica = 89,
    /// `run --limit NAME=N`: the limit had no room within `--max-late`; the run was recorded
    /// interrupted without starting the command.
    NoPermit = 94,
    /// `run --timeout`: the command ran too long and was killed (as coreutils `timeout`).
    Timeout = 124,
    /// Redis could not be reached, refused our credentials, or timed out.
    Connection = 90,
    /// The store was written by a newer anarchon (`ANARCHON_STORE_FORMAT`); nothing was written.
    StoreFormat = 91,
    /// A key has the wrong type, or its contents cannot be decoded.
    StoreData = 92,
    /// The server lacks a feature the command needs (for example idmp before Redis 8.6).
    Unsupported = 93,
}

/// What a command exits with: one of anarchon's documented codes, or one that is not anarchon's to
/// define and is passed on as it came (as `timeout(1)` and `ssh` pass on their command's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// A code of the table above.
    Code(ExitCode),
    /// The wrapped command's own exit status (`run`, `run-now`; `wait` and `logs -f` for the run
    /// they followed), or `check`'s monitoring-plugin status (0 OK to 3 UNKNOWN).
    External(i32),
}

impl ExitStatus {
    pub const OK: ExitStatus = ExitStatus::Code(ExitCode::Ok);

    /// The process exit status.
    pub fn code(self) -> i32 {
        match self {
            ExitStatus::Code(code) => code.code(),
            ExitStatus::External(code) => code,
        }
    }

    pub fn is_success(self) -> bool {
        self.code() == 0
    }
}

impl From<ExitCode> for ExitStatus {
    fn from(code: ExitCode) -> Self {
        ExitStatus::Code(code)
    }
}

impl ExitCode {
    /// Every exit code, in the order `--help` lists them.
    pub const ALL: [ExitCode; 19] = [
        ExitCode::Ok,
        ExitCode::Failure,
        ExitCode::Usage,
        ExitCode::Connection,
        ExitCode::StoreFormat,
        ExitCode::StoreData,
        ExitCode::Unsupported,
        ExitCode::Overlap,
        ExitCode::Done,
        ExitCode::Running,
        ExitCode::LeaseLost,
        ExitCode::TooLate,
        ExitCode::NotFound,
        ExitCode::CheckFailed,
        ExitCode::Paused,
        ExitCode::Unreplicated,
        ExitCode::NoReplica,
        ExitCode::NoPermit,
        ExitCode::Timeout,
    ];

    pub fn code(self) -> i32 {
        self as i32
    }

    /// What the code means, in a few words (the `--help` table).
    pub fn meaning(self) -> &'static str {
        match self {
            ExitCode::Ok => "won / done as asked",
            ExitCode::Failure => "unexpected failure",
            ExitCode::Usage => "usage error",
            ExitCode::Connection => "Redis unreachable or auth",
            ExitCode::StoreFormat => "newer store format",
            ExitCode::StoreData => "wrong key type / bad data",
            ExitCode::Unsupported => "server lacks a feature",
            ExitCode::Overlap => "overlap: another run of the job still holds a live lease",
            ExitCode::Done => "done: this run is over already",
            ExitCode::Running => "running: another runner holds a live lease",
            ExitCode::LeaseLost => "lease lost: the token is no longer current",
            ExitCode::TooLate => "too late: the slot is older than --max-late",
            ExitCode::NotFound => "job not found",
            ExitCode::CheckFailed => "doctor: a check failed",
            ExitCode::Paused => "paused: the job is paused (anarchon pause); nothing was claimed",
            ExitCode::Unreplicated => {
                "unreplicated: too few replicas acknowledged the claim; the command did not start"
            }
            ExitCode::NoReplica => {
                "no replica: run-now found no live cron replica running the job, or none took the request; nothing ran"
            }
            ExitCode::NoPermit => {
                "no permit: a --limit had no room within --max-late; the command did not start"
            }
            ExitCode::Timeout => "run --timeout killed the command",
        }
    }

    /// The exit-code table of `--help`, generated from this enum so the two cannot disagree.
    pub fn help_table() -> String {
        let mut text = String::from("Exit codes:\n");
        for code in Self::ALL {
            text.push_str(&format!("  {:<4}{}\n", code.code(), code.meaning()));
        }
        text.push_str(
            "`anarchon run` exits with its command's own exit code (128+N for signal N).",
        );
        text
    }
}

/// A message for a person, and optionally what to do next. `main` prints the hint once, on its
/// own line; the message alone is what other messages quote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub text: String,
    pub hint: Option<String>,
}

/// The separator between a message and its hint where both are written as one string.
const HINT: &str = "\n  hint: ";

impl From<String> for Message {
    /// `"what happened\n  hint: what to do"` becomes the message and its hint.
    fn from(text: String) -> Self {
        match text.split_once(HINT) {
            Some((text, hint)) => Message {
                text: text.to_string(),
                hint: Some(hint.to_string()),
            },
            None => Message { text, hint: None },
        }
    }
}

impl From<&str> for Message {
    fn from(text: &str) -> Self {
        Message::from(text.to_string())
    }
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Everything that can go wrong, each variant knowing its exit code and what to do next
/// ([`Error::hint`]).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Usage(Message),

    #[error("cannot reach Redis at {url}: {detail}")]
    Connection { url: String, detail: String },

    #[error(
        "the store at {url} uses format {found} (key {key}), newer than format {supported} that this anarchon reads (error ANARCHON_STORE_FORMAT)"
    )]
    StoreFormat {
        url: String,
        key: String,
        found: String,
        supported: u32,
    },

    #[error(
        "key {key} holds {}, but anarchon expects {}",
        with_article(found),
        with_article(expected)
    )]
    WrongType {
        key: String,
        found: String,
        expected: String,
    },

    #[error("key {key} holds data anarchon cannot read: {detail}")]
    CorruptData { key: String, detail: String },

    #[error("{0}")]
    NotFound(Message),

    #[error("{0}")]
    Unsupported(Message),

    /// An error reply of the server, with its code (`OOM`, `NOPERM`, `ERR`, ...).
    #[error("Redis answered an error: {message}")]
    Redis {
        code: Option<String>,
        message: String,
    },

    #[error("{0}")]
    Other(String),
}

/// What a full server means, said with its OOM error wherever it ends a command.
pub const OOM_HINT: &str = "the server reached maxmemory and its eviction policy (noeviction) refuses every write until memory is freed: free memory (raise maxmemory, remove other data) or trim history (`anarchon trim`); nothing was changed by this command";

/// Whether a server's error carries `code`: as its code, or inside its text (a script's refused
/// write, "-OOM command not allowed ..." on Redis 5 and 6; a pipeline's failure, `Pipeline
/// failure: [(Index 0, error: "OOM": ...)]`, whose code the client does not keep).
fn has_code(code: &Option<String>, message: &str, wanted: &str) -> bool {
    code.as_deref() == Some(wanted)
        || message.starts_with(wanted)
        || message.contains(&format!(" {wanted} "))
        || message.contains(&format!("-{wanted} "))
        || message.contains(&format!("\"{wanted}\""))
}

impl Error {
    /// What to do next, fitted to the error (printed once by `main`, after the message).
    pub fn hint(&self) -> Option<String> {
        match self {
            Error::Usage(m) | Error::NotFound(m) | Error::Unsupported(m) => m.hint.clone(),
            Error::Connection { url, detail } => Some(match local_port_refused(url, detail) {
                // Nothing listens on this machine: say how to start a throwaway server there.
                Some(port) => format!(
                    "nothing listens there; for a throwaway server on this machine (nothing kept on disk): `redis-server --port {port} --save '' --daemonize yes` (Debian/Ubuntu: `apt-get install redis-server`; in a container its service does not start by itself); else check the host and port (--redis, $ANARCHON_REDIS_URL, --host/--port)"
                ),
                None => connection_hint(detail).to_string(),
            }),
            Error::StoreFormat { .. } => Some("upgrade anarchon; nothing was written".into()),
            Error::WrongType { key, .. } => Some(format!(
                "another program wrote this key, or --prefix is wrong; inspect it with `redis-cli TYPE {key}`"
            )),
            Error::CorruptData { .. } => Some(
                "inspect it with redis-cli; it was not written by anarchon's store format".into(),
            ),
            Error::Redis { .. } if self.is_oom() => Some(OOM_HINT.into()),
            Error::Redis { code, .. } => match code.as_deref() {
                Some("NOPERM") => Some("the Redis ACL user lacks a command or key pattern anarchon needs; see \"A least-privilege ACL user\" in docs/guide.md".into()),
                _ => None,
            },
            Error::Other(_) => None,
        }
    }

    /// The message and, on its own line, the hint: how `main` and the runner print an error.
    pub fn with_hint(&self) -> String {
        match self.hint() {
            Some(hint) => format!("{self}{HINT}{hint}"),
            None => self.to_string(),
        }
    }

    pub fn exit_code(&self) -> ExitCode {
        match self {
            Error::Usage(_) => ExitCode::Usage,
            Error::Connection { .. } => ExitCode::Connection,
            Error::StoreFormat { .. } => ExitCode::StoreFormat,
            Error::WrongType { .. } | Error::CorruptData { .. } => ExitCode::StoreData,
            Error::NotFound(_) => ExitCode::NotFound,
            Error::Unsupported(_) => ExitCode::Unsupported,
            Error::Redis { .. } | Error::Other(_) => ExitCode::Failure,
        }
    }

    /// Whether the server could not be reached (worth a retry with a fresh connection).
    pub fn is_connection(&self) -> bool {
        matches!(self, Error::Connection { .. })
    }

    /// The key a data error names, if any.
    pub fn key(&self) -> Option<&str> {
        match self {
            Error::WrongType { key, .. } | Error::CorruptData { key, .. } => Some(key),
            Error::StoreFormat { key, .. } => Some(key),
            Error::Usage(_)
            | Error::Connection { .. }
            | Error::NotFound(_)
            | Error::Unsupported(_)
            | Error::Redis { .. }
            | Error::Other(_) => None,
        }
    }

    /// Whether trying again (with a fresh connection) may succeed: the server could not be reached
    /// or timed out, or answered that it is busy, loading, failing over or read-only for now (see
    /// `connection::map_redis_error`). The one retry rule of the runner: a refusal (OOM, NOPERM,
    /// bad data) is not retried.
    pub fn is_transient(&self) -> bool {
        matches!(self, Error::Connection { .. })
    }

    /// Whether the server refused for a reason that passes by itself: out of memory under
    /// `noeviction` (OOM), a script running too long (BUSY), a restart loading its data (LOADING),
    /// a replica without its primary (MASTERDOWN), a failover in progress (READONLY, TRYAGAIN,
    /// CLUSTERDOWN). Worth retrying with a back-off where giving up would leave a run unrun.
    pub fn can_pass(&self) -> bool {
        const PASSING: [&str; 7] = [
            "OOM",
            "BUSY",
            "LOADING",
            "MASTERDOWN",
            "READONLY",
            "TRYAGAIN",
            "CLUSTERDOWN",
        ];
        match self {
            Error::Redis { code, message } => PASSING.iter().any(|p| has_code(code, message, p)),
            Error::Usage(_)
            | Error::Connection { .. }
            | Error::StoreFormat { .. }
            | Error::WrongType { .. }
            | Error::CorruptData { .. }
            | Error::NotFound(_)
            | Error::Unsupported(_)
            | Error::Other(_) => false,
        }
    }

    /// A refusal that lasted past a slot's `--max-late`, said as what it cost: the slot was
    /// missed (other errors are returned as they are).
    pub fn missed(self, slot_time: &str, max_late: std::time::Duration) -> Error {
        match self {
            Error::Redis { code, message } => Error::Redis {
                code,
                message: format!(
                    "{message} (refused until --max-late {} after the slot {slot_time}: not run, missed)",
                    humantime::format_duration(max_late),
                ),
            },
            other => other,
        }
    }

    /// Whether the server refused a write because it is at maxmemory under `noeviction` (or a
    /// `volatile-*` policy with nothing to evict): a full server, which refuses every write and
    /// answers every read until memory is freed.
    pub fn is_oom(&self) -> bool {
        matches!(self, Error::Redis { code, message } if has_code(code, message, "OOM"))
    }

    /// Whether the server answered WRONGTYPE (a pipeline's error carries its command's code only
    /// in its text).
    pub fn is_wrongtype(&self) -> bool {
        matches!(self, Error::Redis { code, message }
            if code.as_deref() == Some("WRONGTYPE") || message.contains("WRONGTYPE"))
    }

    /// Pins a WRONGTYPE answer to the single key the command touched, so the message names it.
    pub fn on_key(self, key: &str, expected: &str) -> Self {
        match self {
            e if e.is_wrongtype() => Error::WrongType {
                key: key.to_string(),
                found: "another type".into(),
                expected: expected.into(),
            },
            other => other,
        }
    }

    pub fn usage(msg: impl fmt::Display) -> Self {
        Error::Usage(Message::from(msg.to_string()))
    }

    /// An error reply of the server that is none of the kinds above.
    pub fn redis(code: Option<&str>, message: impl fmt::Display) -> Self {
        Error::Redis {
            code: code.map(str::to_string),
            message: message.to_string(),
        }
    }

    pub fn corrupt(key: impl Into<String>, detail: impl fmt::Display) -> Self {
        Error::CorruptData {
            key: key.into(),
            detail: detail.to_string(),
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The port of a refused connection to this machine (localhost, 127.0.0.1, ::1), where a server
/// can be started with one command; None for any other error or host.
fn local_port_refused(url: &str, detail: &str) -> Option<u16> {
    // Only when nothing listened (a server that refused something else is there).
    if !connection_hint(detail).starts_with("nothing listens") {
        return None;
    }
    let parsed = url::Url::parse(url).ok()?;
    matches!(
        parsed.host_str()?,
        "localhost" | "127.0.0.1" | "[::1]" | "::1"
    )
    .then(|| parsed.port().unwrap_or(6379))
}

/// A connection error's next step, by what went wrong.
fn connection_hint(detail: &str) -> &'static str {
    let d = detail.to_ascii_lowercase();
    if d.contains("db index is out of range") || d.contains("invalid db index") {
        "no such database on this server: the URL's /N (or --db) must be below the server's `databases` setting (16 unless configured)"
    } else if d.contains("causedasendentity") {
        "the server presents a CA certificate as its own (self-signed, and its own CA), which TLS verification refuses: give the server a certificate signed by that CA and pass the CA with --tls-ca, or skip verification with --tls-insecure"
    } else if d.contains("invalid peer certificate") || d.contains("unknownissuer") {
        "the server's TLS certificate was not accepted: pass the CA that signed it with --tls-ca, and check that the host name in the URL is one the certificate names (or --tls-insecure to skip verification)"
    } else if d.contains("no password set") {
        "drop the password (from the URL, --password-file and $ANARCHON_REDIS_PASSWORD), or set one on the server (requirepass, or ACL SETUSER)"
    } else if d.contains("noauth") {
        "give the password with --password-file FILE or $ANARCHON_REDIS_PASSWORD (and a user name in the URL, redis://USER@host, for an ACL user)"
    } else if d.contains("wrongpass") || d.contains("authentication") {
        "check the password (--password-file, $ANARCHON_REDIS_PASSWORD or the URL's user:password) and, for an ACL user, the user name in the URL"
    } else if d.contains("refused") {
        "nothing listens there: check the host and port (--redis, $ANARCHON_REDIS_URL, --host/--port) and that the server runs"
    } else if d.contains("timed out") || d.contains("timeout") {
        "the server did not answer in time: check the network, or raise --connect-timeout / --command-timeout"
    } else if d.contains("loading") || d.contains("busy") || d.contains("masterdown") {
        "the server is busy or loading its data set; try again shortly"
    } else if d.contains("readonly") {
        "this server is a replica: point anarchon at the primary (or use redis+sentinel://)"
    } else {
        "check --redis / $ANARCHON_REDIS_URL and that the server runs"
    }
}

/// "a hash", "an other" ...: a Redis type name as a phrase; a phrase already ("another type",
/// "the type ...") as it is.
fn with_article(kind: &str) -> String {
    if kind.contains(' ') {
        kind.to_string()
    } else if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        format!("an {kind}")
    } else {
        format!("a {kind}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_hints_name_the_cause() {
        let db = "Redis server refused to switch database - Server(ResponseError): DB index is out of range";
        assert!(connection_hint(db).contains("no such database"));
        let ca = "invalid peer certificate: Other(OtherError(CaUsedAsEndEntity))";
        assert!(connection_hint(ca).contains("--tls-ca"));
        assert!(connection_hint(ca).contains("its own CA"));
        assert!(connection_hint("Connection refused (os error 111)").contains("nothing listens"));
        let refused = |url: &str| Error::Connection {
            url: url.into(),
            detail: "Connection refused (os error 111)".into(),
        };
        let local = refused("redis://localhost:6390").hint().unwrap();
        assert!(
            local.contains("redis-server --port 6390 --save ''"),
            "{local}"
        );
        assert!(
            refused("redis://127.0.0.1")
                .hint()
                .unwrap()
                .contains("--port 6379")
        );
        let db = Error::Connection {
            url: "redis://127.0.0.1:6379/99".into(),
            detail: "Redis server refused to switch database - DB index is out of range".into(),
        };
        assert!(db.hint().unwrap().contains("no such database"));
        let remote = refused("redis://cache.internal:6379").hint().unwrap();
        assert!(!remote.contains("redis-server --port"), "{remote}");
    }

    #[test]
    fn exit_codes_are_distinct() {
        let all = ExitCode::ALL;
        let mut codes: Vec<i32> = all.iter().map(|c| c.code()).collect();
        codes.sort();
        codes.dedup();
        assert_eq!(codes.len(), all.len());
    }

    #[test]
    fn format_error_names_both_numbers_and_the_variable() {
        let e = Error::StoreFormat {
            url: "redis://localhost:6379".into(),
            key: "cron:format".into(),
            found: "2".into(),
            supported: 1,
        };
        let text = e.to_string();
        assert!(text.contains("ANARCHON_STORE_FORMAT"));
        assert!(text.contains("format 2"));
        assert!(text.contains("format 1"));
        assert_eq!(e.exit_code(), ExitCode::StoreFormat);
    }
}
