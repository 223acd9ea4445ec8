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

/// The URL with its secrets replaced by `***`, for messages and logs: the password, and a lone user
/// name (`redis://s3cret@host` puts a password in the user slot, a common slip).
pub fn redact_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            if parsed.password().is_some() {
                let _ = parsed.set_password(Some("***"));
            } else if !parsed.username().is_empty() {
                let _ = parsed.set_username("***");
            }
            parsed.to_string()
        }
        Err(_) => "<unparsable URL>".to_string(),
    }
}

/// Removes the URL's secrets (as [`redact_url`] sees them) from a text: some client errors quote the
/// URL or its parts.
pub(super) fn redact_text(text: &str, url: &str) -> String {
    let Ok(parsed) = url::Url::parse(url) else {
        return text.to_string();
    };
    let secret = match parsed.password() {
        Some(password) => password.to_string(),
        None => parsed.username().to_string(),
    };
    if secret.is_empty() {
        return text.to_string();
    }
    let decoded = url::form_urlencoded::parse(format!("s={secret}").as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default();
    let mut out = text.replace(&secret, "***");
    if !decoded.is_empty() {
        out = out.replace(&decoded, "***");
    }
    out
}
