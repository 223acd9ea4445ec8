//! The connection to Redis or Valkey: one standalone server, a cluster, or the primary Sentinel
//! names ([`sentinel`]); its errors become [`Error`]s in [`errors`].
//!
//! Every command goes through [`Connection`]: it knows the (password-free) address for messages,
//! applies the timeouts, runs Lua scripts (a lease store format's as a function of its library by
//! FCALL, loading the library on first use; where a server has no Functions or an ACL denies them,
//! and for every other script, by EVALSHA, falling back to EVAL on NOSCRIPT), and turns Redis
//! errors into errors that name the key and say what to do next.

use std::time::Duration;

use redis::aio::{ConnectionLike, MultiplexedConnection};
use redis::cluster_async::ClusterConnection;
use redis::{
    AsyncConnectionConfig, Cmd, ErrorKind, FromRedisValue, IntoConnectionInfo, Pipeline,
    RedisError, RedisFuture, ServerErrorKind, TlsCertificates, Value,
};

use crate::error::{Error, Result};
use crate::scripts::LuaScript;

mod errors;
pub mod retry;
mod sentinel;

use errors::{connection_error, redact_text};
pub use errors::{
    map_redis_error, redact_unparsed_url, redact_url, unparsed_url_problem, url_for, url_secrets,
};
pub use sentinel::SentinelTarget;
use sentinel::open_via_sentinels;

/// Where and how to connect, resolved from flags and the environment (by `settings`).
#[derive(Clone)]
pub struct ConnectOptions {
    /// The URL, password included: never printed (see [`redact_url`]).
    pub url: String,
    /// Use the Redis Cluster client (`--cluster`, or a `redis+cluster://` URL).
    pub cluster: bool,
    /// PEM root certificates to trust for `rediss://` instead of the system's.
    pub tls_ca: Option<Vec<u8>>,
    pub connect_timeout: Duration,
    pub command_timeout: Duration,
    /// Ask these sentinels for the primary instead of connecting to `url`'s host (a
    /// `redis+sentinel://` URL); `url` then only carries the credentials, database and TLS.
    pub sentinel: Option<SentinelTarget>,
}

impl std::fmt::Debug for ConnectOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectOptions")
            .field("url", &redact_url(&self.url))
            .field("cluster", &self.cluster)
            .field("tls_ca", &self.tls_ca.as_ref().map(Vec::len))
            .finish()
    }
}

impl ConnectOptions {
    /// The server's address as messages and pages show it: a Sentinel's as Sentinel, any
    /// password removed.
    pub fn shown_url(&self) -> String {
        match &self.sentinel {
            Some(target) => target.shown(&self.url),
            None => redact_url(&self.url),
        }
    }

    pub fn new(url: impl Into<String>) -> Self {
        ConnectOptions {
            url: url.into(),
            cluster: false,
            tls_ca: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            command_timeout: DEFAULT_COMMAND_TIMEOUT,
            sentinel: None,
        }
    }
}

impl ConnectOptions {
    /// With TLS: whether the server's certificate is verified (false only with `--tls-insecure`).
    /// None without TLS.
    pub fn tls_verified(&self) -> Option<bool> {
        let url = url::Url::parse(&self.url).ok()?;
        url.scheme()
            .starts_with("rediss")
            .then(|| url.fragment() != Some("insecure"))
    }
}

/// How long connecting may take, unless told otherwise (`--connect-timeout`).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long one reply may take, unless told otherwise (`--command-timeout`).
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// A standalone server or a cluster: every command of ours goes to one node either way, since a
/// job's lease keys share one hash tag and the claim-only commands touch one key.
#[derive(Clone)]
enum Link {
    Single(MultiplexedConnection),
    Cluster(ClusterConnection),
}

impl ConnectionLike for Link {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Link::Single(c) => c.req_packed_command(cmd),
            Link::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Link::Single(c) => c.req_packed_commands(pipeline, offset, count),
            Link::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Link::Single(c) => c.get_db(),
            Link::Cluster(c) => c.get_db(),
        }
    }
}

/// One connection to the store's server. Clones share the underlying connection (it multiplexes),
/// so a heartbeat task can use a clone while the main task waits on a child.
#[derive(Clone)]
pub struct Connection {
    inner: Link,
    options: ConnectOptions,
    /// The URL without its password, for messages.
    shown_url: String,
    /// Set once the server showed it cannot run our functions (Redis before 7, an ACL that
    /// denies FCALL or FUNCTION LOAD): scripts go by EVALSHA from then on. Shared by clones.
    no_functions: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// [`Connection::serial`].
    serial: u64,
    /// Held while a library is loaded, shared by clones: a herd of claims that all find the
    /// library missing (a new or flushed server) loads it once, the others waiting and then
    /// finding it. One `FUNCTION LOAD` each was a copy of the library's source per claim (500
    /// claims held 58 MB in the daemon at once) and as many compilations stalling the server.
    loading: std::sync::Arc<tokio::sync::Mutex<()>>,
}

/// The next opening's [`Connection::serial`].
static NEXT_SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Connection {
    pub async fn open(options: &ConnectOptions) -> Result<Self> {
        let shown_url = options.shown_url();
        let bad_url = |e: RedisError| {
            Error::usage(format!(
                "--redis {shown_url} is not a usable Redis URL: {}\n  hint: use redis://[user:password@]host:port[/db], rediss:// for TLS, redis+cluster:// for a cluster",
                redact_text(&e.to_string(), &options.url)
            ))
        };
        let certs = || TlsCertificates {
            client_tls: None,
            root_cert: options.tls_ca.clone(),
        };
        let inner = if let Some(target) = &options.sentinel {
            Link::Single(open_via_sentinels(options, target, &shown_url).await?)
        } else if options.cluster {
            let mut builder = redis::cluster::ClusterClientBuilder::new(vec![options.url.as_str()])
                .connection_timeout(options.connect_timeout)
                .response_timeout(options.command_timeout);
            if options.tls_ca.is_some() {
                builder = builder.certs(certs());
            }
            let client = builder.build().map_err(bad_url)?;
            Link::Cluster(
                client
                    .get_async_connection()
                    .await
                    .map_err(|e| connection_error(&shown_url, &e, &options.url))?,
            )
        } else {
            // No `CLIENT SETINFO` after connecting: it is a round trip of its own before the
            // first command, in every process of a fleet that starts at the same minute, for a
            // library name in CLIENT LIST.
            let info = options
                .url
                .as_str()
                .into_connection_info()
                .map_err(bad_url)?;
            let info = info
                .clone()
                .set_redis_settings(info.redis_settings().clone().set_skip_set_lib_name());
            let client = match options.tls_ca {
                Some(_) => redis::Client::build_with_tls(info, certs()),
                None => redis::Client::open(info),
            }
            .map_err(bad_url)?;
            let config = AsyncConnectionConfig::new()
                .set_connection_timeout(Some(options.connect_timeout))
                .set_response_timeout(Some(options.command_timeout));
            match client
                .get_multiplexed_async_connection_with_config(&config)
                .await
            {
                Ok(link) => Link::Single(link),
                Err(e) => {
                    let mut error = connection_error(&shown_url, &e, &options.url);
                    if matches!(e.kind(), redis::ErrorKind::AuthenticationFailed)
                        && server_has_no_password(&options.url, &config).await
                    {
                        error = Error::Connection {
                            url: shown_url.clone(),
                            detail: errors::NO_PASSWORD_SET.to_string(),
                        };
                    }
                    return Err(error);
                }
            }
        };
        Ok(Connection {
            inner,
            options: options.clone(),
            shown_url,
            no_functions: Default::default(),
            loading: Default::default(),
            serial: NEXT_SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        })
    }

    /// Which opening this is: clones share it, a [`Connection::reconnect`] changes it. A holder of
    /// a shared connection learns so that a task found it broken and opened a fresh one (the
    /// daemon then adopts the fresh one rather than hand the broken one to the next slot).
    pub fn serial(&self) -> u64 {
        self.serial
    }

    /// Whether this is a cluster connection (SCAN must then visit every primary).
    pub fn is_cluster(&self) -> bool {
        matches!(self.inner, Link::Cluster(_))
    }

    /// One standalone connection per primary: SCAN in a cluster must visit every primary, and the
    /// cluster client sends it to one. On a single server, this connection alone.
    pub async fn primaries(&self) -> Result<Vec<Connection>> {
        if !self.is_cluster() {
            return Ok(vec![self.clone()]);
        }
        let mut me = self.clone();
        let nodes: String = me.query(redis::cmd("CLUSTER").arg("NODES")).await?;
        let mut out = Vec::new();
        for address in primary_addresses(&nodes) {
            let mut url = url::Url::parse(&self.options.url)
                .map_err(|e| Error::Other(format!("cluster URL: {e}")))?;
            let (host, port) = address
                .rsplit_once(':')
                .unwrap_or((address.as_str(), "6379"));
            let _ = url.set_host(Some(host));
            let _ = url.set_port(port.parse().ok());
            let options = ConnectOptions {
                url: url.to_string(),
                cluster: false,
                ..self.options.clone()
            };
            out.push(Box::pin(Connection::open(&options)).await?);
        }
        Ok(out)
    }

    /// Opens a fresh connection in place of this one: after a server restart the old one stays broken.
    pub async fn reconnect(&mut self) -> Result<()> {
        *self = Connection::open(&self.options).await?;
        Ok(())
    }

    /// The options this connection was opened with.
    pub fn options(&self) -> &ConnectOptions {
        &self.options
    }

    /// The server's address with any password removed.
    pub fn shown_url(&self) -> &str {
        &self.shown_url
    }

    /// The server's clock (`TIME`), in ms: the clock every lease and slot is judged by.
    pub async fn server_ms(&mut self) -> Result<i64> {
        let (secs, micros): (i64, i64) = self.query(&redis::cmd("TIME")).await?;
        Ok(secs * 1000 + micros / 1000)
    }

    /// Sends one command.
    pub async fn query<T: FromRedisValue>(&mut self, cmd: &redis::Cmd) -> Result<T> {
        cmd.query_async(&mut self.inner)
            .await
            .map_err(|e| self.map_error(e))
    }

    /// `WAIT replicas timeout`: blocks until that many replicas acknowledged every write this
    /// connection made so far, or the timeout passed; returns how many did. (The multiplexed
    /// connection carries only this until it answers, so callers wait before starting heartbeats.)
    pub async fn wait_for_replicas(&mut self, replicas: u32, timeout: Duration) -> Result<u32> {
        let ms = u64::try_from(timeout.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        self.query(redis::cmd("WAIT").arg(replicas).arg(ms)).await
    }

    /// Sends a pipeline in one round trip.
    pub async fn pipeline<T: FromRedisValue>(&mut self, pipe: &redis::Pipeline) -> Result<T> {
        pipe.query_async(&mut self.inner)
            .await
            .map_err(|e| self.map_error(e))
    }

    /// Sends the commands of `pipe` and returns every reply in order, a command's error as a
    /// `Value::ServerError` (so the caller can name the key). One round trip on a single server. A
    /// cluster client's pipeline must stay within one hash slot, so there the commands go one by
    /// one, all at once: the multiplexed connections still pipeline them on the wire.
    pub async fn replies(&mut self, pipe: &Pipeline) -> Result<Vec<Value>> {
        if !self.is_cluster() {
            let mut pipe = pipe.clone();
            pipe.ignore_errors();
            return self.pipeline(&pipe).await;
        }
        let sends = pipe.cmd_iter().map(|cmd| {
            let mut link = self.inner.clone();
            async move { (cmd, cmd.query_async::<Value>(&mut link).await) }
        });
        let mut out = Vec::with_capacity(pipe.len());
        for (cmd, reply) in futures::future::join_all(sends).await {
            match reply {
                Ok(value) => out.push(value),
                Err(e) if e.code() == Some("WRONGTYPE") => {
                    let key = cmd
                        .args_iter()
                        .nth(1)
                        .map(|a| match a {
                            redis::Arg::Simple(bytes) => {
                                String::from_utf8_lossy(bytes).into_owned()
                            }
                            _ => "?".to_string(),
                        })
                        .unwrap_or_default();
                    return Err(Error::WrongType {
                        key,
                        found: "another type".into(),
                        expected: "the type docs/store-format.md gives".into(),
                    });
                }
                Err(e) => return Err(self.map_error(e)),
            }
        }
        Ok(out)
    }

    /// Runs a Lua script: as a function (FCALL) where the script has one and the server can run
    /// it, loading its library when the server does not have it yet (a restarted server, a
    /// failover, FUNCTION FLUSH); else by its SHA1, loaded with EVAL when the server does not know
    /// it yet. The two run the same text with the same atomicity. Only an answer that says the
    /// function did not run (not found, unknown command, not permitted) ever leads to the other
    /// way: never a lost reply, which the callers' retries handle as before.
    pub async fn eval<T: FromRedisValue>(
        &mut self,
        script: &LuaScript,
        keys: &[&str],
        args: &[String],
    ) -> Result<T> {
        use std::sync::atomic::Ordering;
        // A cluster client would have to load the library on every primary: scripts there.
        if let Some((function, library)) = script.function()
            && !self.is_cluster()
            && !self.no_functions.load(Ordering::Relaxed)
        {
            let call = eval_cmd("FCALL", function, keys, args);
            match call.query_async(&mut self.inner).await {
                Err(e) if function_missing(&e) => {
                    let loading = self.loading.clone();
                    let _one_at_a_time = loading.lock().await;
                    // Loaded meanwhile by the claim that held the lock: called at once.
                    match call.query_async(&mut self.inner).await {
                        Err(e) if function_missing(&e) || functions_unavailable(&e) => {}
                        other => return other.map_err(|e| self.map_error(e)),
                    }
                    match self.load_library(library).await {
                        Ok(()) => return self.query(&call).await,
                        Err(()) => self.no_functions.store(true, Ordering::Relaxed),
                    }
                }
                Err(e) if functions_unavailable(&e) => {
                    self.no_functions.store(true, Ordering::Relaxed);
                }
                other => return other.map_err(|e| self.map_error(e)),
            }
        }
        let by_sha = eval_cmd("EVALSHA", script.sha1(), keys, args);
        match by_sha.query_async(&mut self.inner).await {
            Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                let by_source = eval_cmd("EVAL", script.source(), keys, args);
                self.query(&by_source).await
            }
            other => other.map_err(|e| self.map_error(e)),
        }
    }

    /// `FUNCTION LOAD` of `library`; another host loading it at the same moment is no failure.
    /// Err when the server will not (no Functions, an ACL without FUNCTION): use scripts.
    async fn load_library(
        &mut self,
        library: &crate::scripts::FunctionLibrary,
    ) -> std::result::Result<(), ()> {
        let load = redis::cmd("FUNCTION")
            .arg("LOAD")
            .arg(library.source())
            .clone();
        match load.query_async::<Value>(&mut self.inner).await {
            Ok(_) => Ok(()),
            Err(e) if e.to_string().contains("already exists") => Ok(()),
            Err(_) => Err(()),
        }
    }

    /// Translates a Redis error into ours, keeping the password out of every message.
    pub fn map_error(&self, e: RedisError) -> Error {
        map_redis_error(&self.shown_url, e)
    }
}

/// `host:port` of every primary in a CLUSTER NODES reply.
fn primary_addresses(nodes: &str) -> Vec<String> {
    nodes
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let flags = fields.get(2)?;
            if !flags.split(',').any(|f| f == "master") || flags.contains("fail") {
                return None;
            }
            // host:port@cport[,hostname]
            let address = fields.get(1)?.split('@').next()?;
            Some(address.to_string())
        })
        .collect()
}

/// FCALL of a function the server does not have (its library not loaded yet).
fn function_missing(e: &RedisError) -> bool {
    e.to_string().contains("Function not found")
}

/// FCALL refused before running: a server without Functions, or an ACL that denies it.
fn functions_unavailable(e: &RedisError) -> bool {
    let text = e.to_string().to_ascii_lowercase();
    e.code() == Some("NOPERM") || text.contains("unknown command")
}

fn eval_cmd(verb: &str, script: &str, keys: &[&str], args: &[String]) -> redis::Cmd {
    let mut cmd = redis::cmd(verb);
    cmd.arg(script).arg(keys.len()).arg(keys).arg(args);
    cmd
}

/// Whether a server that refused a password would take the same connection without one (it has
/// no password set): one more connection, on the error path only, so the message can say so.
async fn server_has_no_password(url: &str, config: &AsyncConnectionConfig) -> bool {
    let Ok(mut bare) = url::Url::parse(url) else {
        return false;
    };
    if bare.password().is_none() && bare.username().is_empty() {
        return false;
    }
    let _ = bare.set_password(None);
    let _ = bare.set_username("");
    let Ok(client) = redis::Client::open(bare.as_str()) else {
        return false;
    };
    match client
        .get_multiplexed_async_connection_with_config(config)
        .await
    {
        Ok(mut link) => redis::cmd("PING")
            .query_async::<String>(&mut link)
            .await
            .is_ok(),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_primaries_are_read_from_cluster_nodes() {
        let nodes = "\
07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004 slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected
67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:30002@31002 master - 0 1426238316232 2 connected 5461-10922
e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@31001 myself,master - 0 0 1 connected 0-5460
6ec23923021cf3ffec47632106199cb7f496ce01 127.0.0.1:30005@31005 master,fail - 0 1426238316232 5 connected
";
        assert_eq!(
            primary_addresses(nodes),
            vec!["127.0.0.1:30002", "127.0.0.1:30001"]
        );
    }

    #[test]
    fn sentinel_urls_name_the_sentinels_the_master_and_the_credentials() {
        let (t, plain) =
            SentinelTarget::parse("redis+sentinel://app:pw@10.0.0.1:26379,s2/mymaster/2").unwrap();
        assert_eq!(
            t.sentinels,
            vec![("10.0.0.1".to_string(), 26379), ("s2".to_string(), 26379)]
        );
        assert_eq!(t.master, "mymaster");
        assert_eq!(plain, "redis://app:pw@10.0.0.1:26379/2");
        assert_eq!(
            t.shown(&plain),
            "redis+sentinel://10.0.0.1:26379,s2:26379/mymaster"
        );
        // The query is no part of the master name or the database (#46, item 10): it goes to
        // the plain URL, which is never shown.
        for (url, db) in [
            ("redis+sentinel://h:1,h:2/mymaster?password=S3cr3tPW", "0"),
            ("redis+sentinel://h:1,h:2/mymaster/3?pass=S3cr3tPW", "3"),
        ] {
            let (t, plain) = SentinelTarget::parse(url).unwrap();
            assert_eq!(t.master, "mymaster");
            assert_eq!(t.shown(&plain), "redis+sentinel://h:1,h:2/mymaster");
            assert!(plain.starts_with(&format!("redis://h:1/{db}?")), "{plain}");
            assert!(plain.ends_with("=S3cr3tPW"), "{plain}");
        }
        let (_, plain) =
            SentinelTarget::parse("redis+sentinel://h/m?sentinel_password=S&password=P").unwrap();
        assert_eq!(plain, "redis://h:26379/0?sentinel_password=S&password=P");
        for bad in [
            "redis+sentinel://h/m?S3cr3tPW",
            "redis+sentinel://h/m?other=S3cr3tPW",
            "redis+sentinel://h:2?password=S3cr3tPW",
        ] {
            let err = SentinelTarget::parse(bad).unwrap_err();
            assert!(!err.contains("S3cr3tPW"), "{bad}: {err}");
        }
        assert!(SentinelTarget::parse("redis+sentinel://h:1").is_err());
        assert!(SentinelTarget::parse("redis+sentinel:///m").is_err());
    }

    #[test]
    fn passwords_never_reach_messages() {
        assert_eq!(
            redact_url("redis://user:s3cret@cache:6379/1"),
            "redis://user:***@cache:6379/1"
        );
        assert_eq!(redact_url("redis://cache:6379"), "redis://cache:6379");
        assert_eq!(redact_url("not a url"), "<unparsable URL>");
        assert_eq!(
            redact_url("redis://Sup3rS3cret@cache:6379"),
            "redis://***@cache:6379"
        );
        assert_eq!(
            redact_text("cannot log in as Sup3rS3cret", "redis://Sup3rS3cret@h"),
            "cannot log in as ***"
        );
        assert_eq!(
            redact_text("failed at redis://:pw123@h", "redis://:pw123@h"),
            "failed at redis://:***@h"
        );
        // Forms the url crate reads differently or not at all (#35, item 11).
        assert_eq!(
            redact_url("redis+sentinel://:S3nt@h1:26379,h2:26379/mymaster"),
            "redis+sentinel://:***@h1:26379,h2:26379/mymaster"
        );
        assert_eq!(
            redact_url("unix:///run/redis.sock?db=1&pass=WRONGPW"),
            "unix:///run/redis.sock?db=1&pass=***"
        );
        assert_eq!(
            redact_url("redis+unix:///s.sock?password=a%40b"),
            "redis+unix:///s.sock?password=***"
        );
        assert_eq!(
            redact_text("auth failed for a@b", "redis+unix:///s.sock?password=a%40b"),
            "auth failed for ***"
        );
        assert!(url_secrets("redis://cache:6379/0?db=2").is_empty());
        // Any query parameter that names a secret, and a lone item (#46, item 10).
        assert_eq!(
            redact_url("redis+sentinel://h:1,h:2/m?password=S3cr3tPW"),
            "redis+sentinel://h:1,h:2/m?password=***"
        );
        assert_eq!(
            redact_url("redis+sentinel://h/m?db=1&sentinel_password=Sp&auth_token=Tk&x_pass=Xp"),
            "redis+sentinel://h/m?db=1&sentinel_password=***&auth_token=***&x_pass=***"
        );
        assert_eq!(redact_url("redis://h/0?S3cr3tPW"), "redis://h/0?***");
        // A URL that did not parse: nothing up to its last `@` (issue 62 item 3).
        for (text, shown) in [
            (
                "redis://u:Pw#S1@127.0.0.1:6379",
                "redis://***@127.0.0.1:6379",
            ),
            ("redis://u:Pw/S2@h:1", "redis://***@h:1"),
            ("redis://u:Pw?S3@h:1", "redis://***@h:1"),
            ("redis://u:a@b@h:1", "redis://***@h:1"),
            ("u:S4@localhost:6379", "***@localhost:6379"),
            ("localhost:6379", "localhost:6379"),
            ("redis://h:x/?password=S5", "redis://h:x/?password=***"),
        ] {
            assert_eq!(redact_unparsed_url(text), shown, "{text}");
        }
        assert_eq!(
            unparsed_url_problem("redis://u:Pw#S1@h:1").as_deref(),
            Some(
                "its user or password holds a character that must be percent-encoded there: # as %23"
            )
        );
        assert_eq!(unparsed_url_problem("redis://u:pw@h:x"), None);
    }

    #[test]
    fn script_markers_become_typed_errors() {
        let e = redis::make_extension_error(
            "ANARCHON_WRONGTYPE".to_string(),
            Some("{cron:a}:state string hash script: abc, on @user_script:12.".to_string()),
        );
        match map_redis_error("redis://h", e) {
            Error::WrongType {
                key,
                found,
                expected,
            } => {
                assert_eq!(key, "{cron:a}:state");
                assert_eq!(found, "string");
                assert_eq!(expected, "hash");
            }
            other => panic!("{other:?}"),
        }
    }
}
