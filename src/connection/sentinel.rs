//! Redis Sentinel: `redis+sentinel://` names the sentinels and the master; every connection asks
//! them for the current primary (the redis crate's sentinel client), so a reconnect after a
//! failover reaches the new one.

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, RedisError, TlsCertificates};

use super::ConnectOptions;
use super::errors::connection_error;
use crate::error::{Error, Result};

/// Where the sentinels are and which primary to ask them for, from
/// `redis+sentinel://[user:password@]host:port[,host:port...]/<master-name>[/<db>][?query]`
/// (`rediss+sentinel://` for TLS to the data nodes). The port defaults to 26379. The query may
/// carry only [`QUERY_PARAMETERS`]: the data nodes' password (`password` or `pass`, as for a
/// unix socket URL) and the sentinels' own credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SentinelTarget {
    pub sentinels: Vec<(String, u16)>,
    pub master: String,
}

impl SentinelTarget {
    /// Splits a sentinel URL into the target and a plain URL (`redis://` or `rediss://`) that
    /// carries its user, password and database, so the rest of the connection options (password
    /// file, TLS flags) apply as for any URL.
    pub fn parse(text: &str) -> std::result::Result<(SentinelTarget, String), String> {
        let (scheme, rest) = text
            .split_once("+sentinel://")
            .ok_or_else(|| "not a redis+sentinel:// URL".to_string())?;
        if scheme != "redis" && scheme != "rediss" {
            return Err(format!("unknown scheme {scheme}+sentinel"));
        }
        // The query and fragment first: they may hold secrets, and are no part of the hosts,
        // the master name or the database (shown in messages).
        let (rest, fragment) = match rest.split_once('#') {
            Some((r, f)) => (r, Some(f)),
            None => (rest, None),
        };
        let (rest, query) = match rest.split_once('?') {
            Some((r, q)) => (r, Some(q)),
            None => (rest, None),
        };
        for pair in query.into_iter().flat_map(|q| q.split('&')) {
            let known = pair
                .split_once('=')
                .is_some_and(|(name, _)| QUERY_PARAMETERS.contains(&name));
            if !pair.is_empty() && !known {
                // Not quoted: a misplaced password would be printed.
                return Err(format!(
                    "its query may carry only {}",
                    QUERY_PARAMETERS.map(|p| format!("{p}=")).join(", ")
                ));
            }
        }
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let (userinfo, hosts) = match authority.rsplit_once('@') {
            Some((u, h)) => (Some(u), h),
            None => (None, authority),
        };
        let mut sentinels = Vec::new();
        for host in hosts.split(',').filter(|h| !h.is_empty()) {
            let (name, port) = match host.rsplit_once(':') {
                Some((name, port)) => (
                    name,
                    port.parse::<u16>()
                        .map_err(|_| format!("sentinel port {port:?} is not a number"))?,
                ),
                None => (host, 26379),
            };
            sentinels.push((name.to_string(), port));
        }
        if sentinels.is_empty() {
            return Err("no sentinel address (host:port[,host:port...])".into());
        }
        let mut parts = path.split('/').filter(|p| !p.is_empty());
        let master = parts
            .next()
            .ok_or_else(|| "no master name (redis+sentinel://host:port/<master-name>)".to_string())?
            .to_string();
        let db = parts.next().unwrap_or("0");
        let (first_host, first_port) = &sentinels[0];
        let userinfo = userinfo.map(|u| format!("{u}@")).unwrap_or_default();
        let mut plain = format!("{scheme}://{userinfo}{first_host}:{first_port}/{db}");
        if let Some(query) = query.filter(|q| !q.is_empty()) {
            plain = format!("{plain}?{query}");
        }
        if let Some(fragment) = fragment {
            plain = format!("{plain}#{fragment}");
        }
        Ok((SentinelTarget { sentinels, master }, plain))
    }

    /// How the target is shown in messages: the sentinels and the master name, no secrets.
    pub(super) fn shown(&self, plain_url: &str) -> String {
        let scheme = plain_url.split("://").next().unwrap_or("redis");
        let hosts: Vec<String> = self
            .sentinels
            .iter()
            .map(|(h, p)| format!("{h}:{p}"))
            .collect();
        format!("{scheme}+sentinel://{}/{}", hosts.join(","), self.master)
    }
}

/// What a Sentinel URL's query may carry: the data nodes' password (`password`, or `pass` as
/// in a unix socket URL; the user information's password wins) and the sentinels' own user and
/// password (a sentinel with `requirepass` or ACL users).
pub const QUERY_PARAMETERS: [&str; 4] =
    ["password", "pass", "sentinel_username", "sentinel_password"];

/// Asks the sentinels for the current primary of `target.master` and connects to it. A reconnect
/// asks again, so after a failover the next connection goes to the new primary.
pub(super) async fn open_via_sentinels(
    options: &ConnectOptions,
    target: &SentinelTarget,
    shown_url: &str,
) -> Result<MultiplexedConnection> {
    use redis::sentinel::{SentinelClientBuilder, SentinelServerType};
    let fail = |e: RedisError| connection_error(shown_url, &e, &options.url);
    let plain = url::Url::parse(&options.url)
        .map_err(|e| Error::usage(format!("{shown_url} is not a usable sentinel URL: {e}")))?;
    let addresses = target
        .sentinels
        .iter()
        .map(|(host, port)| redis::ConnectionAddr::Tcp(host.clone(), *port));
    let mut builder =
        SentinelClientBuilder::new(addresses, &target.master, SentinelServerType::Master)
            .map_err(fail)?;
    let db = plain
        .path()
        .trim_start_matches('/')
        .parse::<i64>()
        .unwrap_or(0);
    builder = builder.set_client_to_redis_db(db);
    if !plain.username().is_empty() {
        builder = builder.set_client_to_redis_username(plain.username());
    }
    let query = |names: &[&str]| {
        plain
            .query_pairs()
            .find(|(name, _)| names.contains(&name.as_ref()))
            .map(|(_, value)| value.into_owned())
    };
    if let Some(password) = plain.password() {
        let password = url::form_urlencoded::parse(format!("p={password}").as_bytes())
            .next()
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default();
        builder = builder.set_client_to_redis_password(password);
    } else if let Some(password) = query(&["password", "pass"]) {
        builder = builder.set_client_to_redis_password(password);
    }
    if let Some(user) = query(&["sentinel_username"]) {
        builder = builder.set_client_to_sentinel_username(user);
    }
    if let Some(password) = query(&["sentinel_password"]) {
        builder = builder.set_client_to_sentinel_password(password);
    }
    if plain.scheme() == "rediss" {
        let insecure = plain.fragment() == Some("insecure");
        builder = builder.set_client_to_redis_tls_mode(if insecure {
            redis::TlsMode::Insecure
        } else {
            redis::TlsMode::Secure
        });
        if let Some(ca) = &options.tls_ca {
            builder = builder.set_client_to_redis_certificates(TlsCertificates {
                client_tls: None,
                root_cert: Some(ca.clone()),
            });
        }
    }
    let mut sentinel = builder.build().map_err(fail)?;
    let client = tokio::time::timeout(options.connect_timeout, sentinel.async_get_client())
        .await
        .map_err(|_| Error::Connection {
            url: shown_url.to_string(),
            detail: format!(
                "no sentinel named a primary for {:?} within the connect timeout",
                target.master
            ),
        })?
        .map_err(fail)?;
    let config = AsyncConnectionConfig::new()
        .set_connection_timeout(Some(options.connect_timeout))
        .set_response_timeout(Some(options.command_timeout));
    client
        .get_multiplexed_async_connection_with_config(&config)
        .await
        .map_err(fail)
}
