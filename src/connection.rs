//! The connection to Redis or Valkey, and how its errors become [`Error`]s.
//!
//! Every command goes through [`Connection`]: it knows the (password-free) address for messages,
//! applies the timeouts, runs Lua scripts with EVALSHA (falling back to EVAL on NOSCRIPT), and turns
//! Redis errors into errors that name the key and say what to do next.

use std::time::Duration;

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, ErrorKind, FromRedisValue, RedisError, ServerErrorKind};

use crate::error::{Error, Result};
use crate::scripts::LuaScript;

/// Where and how to connect, resolved from flags and the environment.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    pub url: String,
    pub connect_timeout: Duration,
    pub command_timeout: Duration,
}

impl ConnectOptions {
    pub fn new(url: impl Into<String>) -> Self {
        ConnectOptions {
            url: url.into(),
            connect_timeout: Duration::from_secs(5),
            command_timeout: Duration::from_secs(10),
        }
    }
}

/// One connection to the store's server. Clones share the underlying connection (it multiplexes),
/// so a heartbeat task can use a clone while the main task waits on a child.
#[derive(Clone)]
pub struct Connection {
    inner: MultiplexedConnection,
    options: ConnectOptions,
    /// The URL without its password, for messages.
    shown_url: String,
}

impl Connection {
    pub async fn open(options: &ConnectOptions) -> Result<Self> {
        let shown_url = redact_url(&options.url);
        let client = redis::Client::open(options.url.as_str()).map_err(|e| Error::Usage(format!(
            "--redis {shown_url} is not a usable Redis URL: {}\n  hint: use redis://[user:password@]host:port[/db] or rediss:// for TLS",
            redact_text(&e.to_string(), &options.url)
        )))?;
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(options.connect_timeout))
            .set_response_timeout(Some(options.command_timeout));
        let inner = client
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .map_err(|e| connection_error(&shown_url, &e, &options.url))?;
        Ok(Connection {
            inner,
            options: options.clone(),
            shown_url,
        })
    }

    /// Opens a fresh connection in place of this one: after a server restart the old one stays broken.
    pub async fn reconnect(&mut self) -> Result<()> {
        *self = Connection::open(&self.options).await?;
        Ok(())
    }

    /// The server's address with any password removed.
    pub fn shown_url(&self) -> &str {
        &self.shown_url
    }

    /// Sends one command.
    pub async fn query<T: FromRedisValue>(&mut self, cmd: &redis::Cmd) -> Result<T> {
        cmd.query_async(&mut self.inner)
            .await
            .map_err(|e| self.map_error(e))
    }

    /// Sends a pipeline in one round trip.
    pub async fn pipeline<T: FromRedisValue>(&mut self, pipe: &redis::Pipeline) -> Result<T> {
        pipe.query_async(&mut self.inner)
            .await
            .map_err(|e| self.map_error(e))
    }

    /// Runs a Lua script by its SHA1; loads it with EVAL when the server does not know it yet
    /// (a restarted server, a failover, SCRIPT FLUSH).
    pub async fn eval<T: FromRedisValue>(
        &mut self,
        script: &LuaScript,
        keys: &[&str],
        args: &[String],
    ) -> Result<T> {
        let by_sha = eval_cmd("EVALSHA", script.sha1(), keys, args);
        match by_sha.query_async(&mut self.inner).await {
            Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::NoScript) => {
                let by_source = eval_cmd("EVAL", script.source(), keys, args);
                self.query(&by_source).await
            }
            other => other.map_err(|e| self.map_error(e)),
        }
    }

    /// Translates a Redis error into ours, keeping the password out of every message.
    pub fn map_error(&self, e: RedisError) -> Error {
        map_redis_error(&self.shown_url, e)
    }
}

fn eval_cmd(verb: &str, script: &str, keys: &[&str], args: &[String]) -> redis::Cmd {
    let mut cmd = redis::cmd(verb);
    cmd.arg(script).arg(keys.len()).arg(keys).arg(args);
    cmd
}

fn connection_error(shown_url: &str, e: &RedisError, url: &str) -> Error {
    Error::Connection {
        url: shown_url.to_string(),
        detail: redact_text(&e.to_string(), url),
    }
}

/// Maps a Redis error: our scripts' own error codes first, then connection trouble, then the rest.
pub fn map_redis_error(shown_url: &str, e: RedisError) -> Error {
    let text = e.to_string();
    // Our scripts answer `ANARCHON_<KIND> <details>`; Redis may append " script: <sha>, on ...".
    let detail = e
        .detail()
        .map(|d| d.split(" script:").next().unwrap_or(d).trim().to_string())
        .unwrap_or_default();
    match e.code() {
        Some("ANARCHON_WRONGTYPE") => {
            let mut parts = detail.split_whitespace();
            let mut next = || parts.next().unwrap_or("?").to_string();
            return Error::WrongType {
                key: next(),
                found: next(),
                expected: next(),
            };
        }
        Some("ANARCHON_CORRUPT") => {
            let (key, what) = detail.split_once(' ').unwrap_or((&detail, ""));
            return Error::corrupt(key, what.trim());
        }
        _ => {}
    }
    let is_connection = e.is_io_error()
        || e.is_timeout()
        || e.is_connection_refusal()
        || e.is_connection_dropped()
        || matches!(e.kind(), ErrorKind::AuthenticationFailed)
        || matches!(
            e.code(),
            Some("NOAUTH" | "WRONGPASS" | "LOADING" | "MASTERDOWN")
        );
    if is_connection {
        return Error::Connection {
            url: shown_url.to_string(),
            detail: text,
        };
    }
    if e.code() == Some("OOM") {
        return Error::Redis(format!(
            "{text}\n  hint: the server reached maxmemory; free memory or trim history (`anarchon trim`); nothing was changed by this command"
        ));
    }
    if e.code() == Some("NOPERM") {
        return Error::Redis(format!(
            "{text}\n  hint: the Redis ACL user lacks a command or key pattern anarchon needs; see the ACL line in README.md"
        ));
    }
    Error::Redis(text)
}

/// The URL with its password replaced by `***`, for messages and logs.
pub fn redact_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        Ok(parsed) => parsed.to_string(),
        Err(_) => "<unparsable URL>".to_string(),
    }
}

/// Removes the URL's password from a text (some client errors quote the URL).
fn redact_text(text: &str, url: &str) -> String {
    match url::Url::parse(url)
        .ok()
        .and_then(|u| u.password().map(str::to_string))
    {
        Some(password) if !password.is_empty() => text.replace(&password, "***"),
        _ => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_messages() {
        assert_eq!(
            redact_url("redis://user:s3cret@cache:6379/1"),
            "redis://user:***@cache:6379/1"
        );
        assert_eq!(redact_url("redis://cache:6379"), "redis://cache:6379");
        assert_eq!(redact_url("not a url"), "<unparsable URL>");
        assert_eq!(
            redact_text("failed at redis://:pw123@h", "redis://:pw123@h"),
            "failed at redis://:***@h"
        );
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
