//! How Redis errors become [`Error`]s: our scripts' markers, connection trouble, refusals with a
//! hint that fits them; and URLs: built from parts, and with secrets kept out of every message.

use redis::{ErrorKind, RedisError};

use crate::error::Error;

pub(super) fn connection_error(shown_url: &str, e: &RedisError, url: &str) -> Error {
    let text = e.to_string();
    Error::Connection {
        url: shown_url.to_string(),
        detail: auth_words(&text).map_or_else(|| redact_text(&text, url), str::to_string),
    }
}

/// An authentication failure said plainly, instead of the client library's words (`Pipeline
/// failures: [(Index 0, error: "NOAUTH"...`): None for any other error.
pub(super) fn auth_words(text: &str) -> Option<&'static str> {
    if text.contains("NOAUTH") {
        Some("the server requires a password (NOAUTH), and none was given")
    } else if text.contains("WRONGPASS") || text.contains("AuthenticationFailed") {
        Some("the server refused this user name and password (WRONGPASS)")
    } else {
        None
    }
}

/// What a refused password means when the server has none: said instead of `auth_words`' (which
/// the server's refusal alone cannot tell apart).
pub(super) const NO_PASSWORD_SET: &str =
    "a password was given, but the server has no password set (AUTH refused)";

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
            Some(
                "NOAUTH"
                    | "WRONGPASS"
                    | "LOADING"
                    | "MASTERDOWN"
                    | "BUSY"
                    | "TRYAGAIN"
                    | "READONLY"
                    | "CLUSTERDOWN"
            )
        )
        // A pipeline's error carries its commands' codes only in its text.
        || ["\"NOAUTH\"", "\"WRONGPASS\""].iter().any(|code| text.contains(code));
    if is_connection {
        return Error::Connection {
            url: shown_url.to_string(),
            detail: auth_words(&text).map_or(text, str::to_string),
        };
    }
    Error::Redis {
        code: e.code().map(str::to_string),
        message: text,
    }
}

/// The URL of a server named by parts (`--host`, `--port`, `--db`, `--tls`): port 6379 and
/// database 0 unless given.
pub fn url_for(host: &str, port: Option<u16>, db: Option<u32>, tls: bool) -> String {
    let scheme = if tls { "rediss" } else { "redis" };
    format!(
        "{scheme}://{host}:{}/{}",
        port.unwrap_or(6379),
        db.unwrap_or(0)
    )
}

/// The secrets a connection URL carries, as written and percent-decoded: the password of its user
/// information (or a lone user name: `redis://s3cret@host` puts a password in the user slot, a
/// common slip), a `pass` or `password` query value (`unix:///run/redis.sock?pass=...`) or any
/// other that names a secret (`sentinel_password`, [`is_secret_parameter`]), and a query item
/// that is no `name=value` pair. Read by hand, not by the url crate, which refuses the documented
/// multi-Sentinel form (`redis+sentinel://:PW@h1:26379,h2:26379/name`): a URL it cannot parse
/// must not hide a secret.
pub fn url_secrets(url: &str) -> Vec<String> {
    let Some((_, rest)) = url.split_once("://") else {
        return Vec::new();
    };
    let mut raw: Vec<&str> = Vec::new();
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if let Some((userinfo, _)) = authority.rsplit_once('@') {
        raw.push(match userinfo.split_once(':') {
            Some((_, password)) => password,
            None => userinfo,
        });
    }
    if let Some((_, query)) = rest.split_once('?') {
        let query = query.split('#').next().unwrap_or("");
        for pair in query.split('&') {
            match pair.split_once('=') {
                Some((name, value)) if is_secret_parameter(name) => raw.push(value),
                Some(_) => {}
                // A lone value (`?S3cr3t`): nothing says it is not a password.
                None => raw.push(pair),
            }
        }
    }
    let mut secrets = Vec::new();
    for secret in raw.into_iter().filter(|s| !s.is_empty()) {
        let decoded: String = url::form_urlencoded::parse(format!("s={secret}").as_bytes())
            .next()
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default();
        secrets.push(secret.to_string());
        if !decoded.is_empty() && decoded != secret {
            secrets.push(decoded);
        }
    }
    secrets
}

/// Whether a URL's query parameter carries a secret: `pass`, `password`, and any name that
/// says password, pass, secret or token (`sentinel_password`, `auth_token`).
fn is_secret_parameter(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name == "pass"
        || name.ends_with("_pass")
        || ["password", "secret", "token"]
            .iter()
            .any(|word| name.contains(word))
}

/// The URL with its secrets ([`url_secrets`]) replaced by `***`, for messages and logs (a text
/// with no `://`, where no secret can be told apart, is not shown at all).
pub fn redact_url(url: &str) -> String {
    if !url.contains("://") {
        return "<unparsable URL>".to_string();
    }
    redact_text(url, url)
}

/// A URL that did not parse, as a message may show it: nothing of what stands between `//` (or
/// the start, when it has no scheme) and its last `@` is shown, whatever it is: a password with an
/// unencoded `#`, `/` or `?` ends where a parser thinks the host begins, so no parse can say which
/// part is secret. Then the query's secrets are hidden as ever ([`redact_text`]).
pub fn redact_unparsed_url(text: &str) -> String {
    let (scheme, rest) = match text.split_once("://") {
        Some((scheme, rest)) => (format!("{scheme}://"), rest),
        None => (String::new(), text),
    };
    let shown = match rest.rsplit_once('@') {
        Some((_, after)) => format!("{scheme}***@{after}"),
        None => format!("{scheme}{rest}"),
    };
    redact_text(&shown, &shown)
}

/// What is wrong with a Redis URL that did not parse, when it can be told without showing it: a
/// user or password holding a character that must be percent-encoded there.
pub fn unparsed_url_problem(text: &str) -> Option<String> {
    let (_, rest) = text.split_once("://")?;
    let (userinfo, _) = rest.rsplit_once('@')?;
    let odd: Vec<String> = ['#', '/', '?', '@']
        .into_iter()
        .filter(|c| userinfo.contains(*c))
        .map(|c| format!("{c} as {}", percent(c)))
        .collect();
    (!odd.is_empty()).then(|| {
        format!(
            "its user or password holds a character that must be percent-encoded there: {}",
            odd.join(", ")
        )
    })
}

fn percent(c: char) -> String {
    format!("%{:02X}", u32::from(c))
}

/// Removes the URL's secrets ([`url_secrets`]) from a text: some client errors quote the URL or
/// its parts.
pub(super) fn redact_text(text: &str, url: &str) -> String {
    let mut secrets = url_secrets(url);
    // The longest first: a secret that contains another is replaced whole.
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    let mut out = text.to_string();
    for secret in secrets {
        out = out.replace(&secret, "***");
    }
    out
}
