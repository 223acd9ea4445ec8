//! The HTTP side of the pages and of `/metrics` (`anarchon serve`, `metrics --listen`): hyper on
//! the tokio runtime already in use, one connection to the store shared by the requests (it
//! multiplexes) and opened again after a failure. A page is read from the store one at a time and
//! served again to whoever asks within [`FRESH_FOR`]: a wall screen and a team refreshing cost the
//! shared Redis one read of a page a second, however many look (bench/page.sh).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Method, Request, Response, StatusCode};
use tokio::net::TcpListener;
use tokio::sync::Mutex;

use super::admission::{Admission, Admitted, Serving};
use super::html;
use super::read::{JobPage, JobsPage};
use crate::connection::{ConnectOptions, Connection};
use crate::error::{Error, Result};
use crate::metrics::{scrape, store_unreadable, text_reply};

/// The pages of one store: where it is, and the connection to it (opened on first use, again
/// after a failure). `anarchon serve` and `metrics --listen` serve them with `/metrics`
/// ([`serve`]); `cron --listen` beside its own `/metrics`, `/healthz` and `/readyz`
/// ([`Pages::answer`]).
pub struct Pages {
    options: ConnectOptions,
    prefix: String,
    /// The store's address as the pages show it (no password).
    shown: String,
    conn: Mutex<Option<Connection>>,
    /// The pages read within [`FRESH_FOR`], by path and query; held across a read, so that
    /// requests arriving meanwhile wait for it rather than read again.
    fresh: Mutex<std::collections::HashMap<String, Fresh>>,
}

/// How long a page read from the store is served again: the pages refresh themselves every
/// 10 s, and a second is as fresh as `list` run twice.
pub const FRESH_FOR: Duration = Duration::from_secs(1);

/// A page as read, with when.
struct Fresh {
    read_at: Instant,
    status: StatusCode,
    body: String,
}

/// How long a client may take to send a request's headers (a connection kept open between
/// requests included): a slow or silent client cannot hold a connection for long, and at the
/// connection cap it is closed sooner for a newcomer ([`super::admission`]).
const HEADERS_WITHIN: Duration = Duration::from_secs(5);

/// How long one connection is served in all, however busy: a browser opens another.
const CONNECTION_FOR: Duration = Duration::from_secs(120);

/// What a listener on `addr` shows to whom, when that is more than this machine: the pages have
/// no login (as `/metrics` has none), so an address others reach is said, with the ways to keep
/// them to the people meant to read them. None for a loopback address.
pub fn exposure(addr: std::net::SocketAddr) -> Option<String> {
    (!addr.ip().is_loopback()).then(|| {
        format!(
            "the status page and /metrics answer anyone who reaches {addr}, with no login (read-only: job names, schedules, runners and results, never a command's output); listen on 127.0.0.1, or serve them behind a proxy that authenticates (the guide's \"The status page\")"
        )
    })
}

/// Serves the pages and `/metrics` on `listener` until `shutdown` completes.
pub async fn serve(
    listener: TcpListener,
    options: ConnectOptions,
    prefix: &str,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<()> {
    let pages = Arc::new(Pages::new(options, prefix));
    let admission = Admission::new(super::admission::connections_allowed());
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = admission.room() => {}
            () = &mut shutdown => return Ok(()),
        };
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                // Out of descriptors (EMFILE) or a connection reset before it was taken: a
                // pause, not a spin.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            () = &mut shutdown => return Ok(()),
        };
        let pages = pages.clone();
        let admitted = admission.admit();
        let serving = admitted.serving_flag();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                let (pages, serving) = (pages.clone(), serving.clone());
                async move {
                    let _serving = Serving::on(&serving);
                    let reply = match req.uri().path() {
                        "/metrics" => metrics_reply(&pages, req.method()).await,
                        _ => pages.answer(&req).await,
                    };
                    Ok::<_, Infallible>(reply.unwrap_or_else(|| {
                        page_reply(
                            StatusCode::NOT_FOUND,
                            html::error_page(
                                "Not found",
                                "This page does not exist.",
                                &back_to_root(req.uri().path()),
                            ),
                        )
                    }))
                }
            });
            serve_connection(stream, service, admitted).await;
        });
    }
}

/// Serves one connection with the limits that keep a slow client from holding it, until it ends,
/// its time is up, or its place is given to a newcomer ([`Admitted::closed`]).
pub async fn serve_connection<S>(stream: tokio::net::TcpStream, service: S, admitted: Admitted)
where
    S: hyper::service::Service<
            Request<hyper::body::Incoming>,
            Response = Response<Full<Bytes>>,
            Error = Infallible,
        >,
    S::Future: 'static,
{
    let io = hyper_util::rt::TokioIo::new(stream);
    let served = hyper::server::conn::http1::Builder::new()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(HEADERS_WITHIN)
        .serve_connection(io, service);
    tokio::select! {
        _ = tokio::time::timeout(CONNECTION_FOR, served) => {}
        () = admitted.closed() => {}
    }
}

/// `/metrics` for GET and HEAD.
async fn metrics_reply(pages: &Pages, method: &Method) -> Option<Response<Full<Bytes>>> {
    if method != Method::GET && method != Method::HEAD {
        return Some(read_only());
    }
    Some(metrics(pages).await)
}

/// Anything but GET and HEAD: nothing here acts on the store.
fn read_only() -> Response<Full<Bytes>> {
    let mut reply = text_reply(
        StatusCode::METHOD_NOT_ALLOWED,
        "read-only: GET and HEAD only\n".to_string(),
    );
    reply.headers_mut().insert(
        "allow",
        hyper::header::HeaderValue::from_static("GET, HEAD"),
    );
    reply
}

impl Pages {
    pub fn new(options: ConnectOptions, prefix: &str) -> Pages {
        Pages {
            shown: options.shown_url(),
            options,
            prefix: prefix.to_string(),
            conn: Mutex::new(None),
            fresh: Mutex::new(Default::default()),
        }
    }

    /// The answer to `req` when its path is a page's (`/`, `/job/<name>`), None otherwise.
    pub async fn answer<B>(&self, req: &Request<B>) -> Option<Response<Full<Bytes>>> {
        let path = req.uri().path();
        let job = match path.strip_prefix("/job/") {
            // A path's segment is percent-decoded only: `+` and `&` are a job's own characters
            // there, not a form's space and separator.
            Some(name) => Some(
                percent_encoding::percent_decode_str(name)
                    .decode_utf8_lossy()
                    .into_owned(),
            ),
            // A name a path cannot carry (`.`, `..`: every browser resolves them away), as
            // the pages link it: `/job?name=<form-encoded>`.
            None if path == "/job" => Some(
                url::form_urlencoded::parse(req.uri().query().unwrap_or("").as_bytes())
                    .find(|(k, _)| k == "name")
                    .map(|(_, v)| v.into_owned())
                    .unwrap_or_default(),
            ),
            None if path == "/" => None,
            None => return None,
        };
        if req.method() != Method::GET && req.method() != Method::HEAD {
            return Some(read_only());
        }
        let key = match req.uri().query() {
            Some(query) => format!("{path}?{query}"),
            None => path.to_string(),
        };
        let mut fresh = self.fresh.lock().await;
        fresh.retain(|_, page| page.read_at.elapsed() < FRESH_FOR);
        if let Some(page) = fresh.get(&key) {
            return Some(page_reply(page.status, page.body.clone()));
        }
        let (status, body) = self.page(path, job.as_deref()).await;
        // A store that cannot be read is tried again by the next request.
        if status != StatusCode::SERVICE_UNAVAILABLE {
            let read_at = Instant::now();
            let page = Fresh {
                read_at,
                status,
                body: body.clone(),
            };
            fresh.insert(key, page);
        }
        Some(page_reply(status, body))
    }

    /// The jobs page (`job` None) or one job's.
    async fn page(&self, path: &str, job: Option<&str>) -> (StatusCode, String) {
        let mut conn = match connection(self).await {
            Ok(conn) => conn,
            Err(e) => return unreadable(self, &e, path).await,
        };
        let read = match job {
            None => JobsPage::read(&mut conn, &self.prefix)
                .await
                .map(|p| html::jobs_page(&p, &self.shown)),
            Some(job) => JobPage::read(&mut conn, &self.prefix, job)
                .await
                .map(|p| html::job_page(&p, &self.shown)),
        };
        let back = back_to_root(path);
        match read {
            Ok(body) => (StatusCode::OK, body),
            Err(Error::NotFound(m)) => (
                StatusCode::NOT_FOUND,
                html::error_page("No such job", &m.text, &back),
            ),
            Err(Error::Usage(m)) => (
                StatusCode::BAD_REQUEST,
                html::error_page("Not a job's name", &m.text, &back),
            ),
            // This job's data is bad (a key of another type, a field that does not read): the
            // job is unreadable, not the store; the connection is good.
            Err(e) if e.key().is_some() => (
                StatusCode::INTERNAL_SERVER_ERROR,
                html::error_page("This job's data cannot be read", &e.to_string(), &back),
            ),
            Err(e) => unreadable(self, &e, path).await,
        }
    }
}

/// The jobs page, relative to `path` (`/job/x` -> `../`): every link is relative, so that the
/// pages work at any path a proxy serves them under.
fn back_to_root(path: &str) -> String {
    let depth = path.trim_start_matches('/').matches('/').count();
    if depth == 0 {
        "./".to_string()
    } else {
        "../".repeat(depth)
    }
}

/// The shared connection, opened when there is none.
async fn connection(place: &Pages) -> Result<Connection> {
    let mut held = place.conn.lock().await;
    if held.is_none() {
        *held = Some(Connection::open(&place.options).await?);
    }
    held.clone()
        .ok_or_else(|| Error::Other("cannot connect".into()))
}

/// The store could not be read: said on the page (503), and a fresh connection next time (after
/// a restart the old one stays broken).
async fn unreadable(place: &Pages, e: &Error, path: &str) -> (StatusCode, String) {
    *place.conn.lock().await = None;
    let why = e.to_string();
    (
        StatusCode::SERVICE_UNAVAILABLE,
        html::error_page(
            "The store cannot be read",
            &format!(
                "{}: {}",
                place.shown,
                why.lines().next().unwrap_or_default()
            ),
            &back_to_root(path),
        ),
    )
}

/// `/metrics`: the Prometheus text; a store that cannot be read answers `anarchon_up 0`, as
/// exporters do, so Prometheus alerts on it instead of on a gap.
async fn metrics(place: &Pages) -> Response<Full<Bytes>> {
    let started = Instant::now();
    let text = match connection(place).await {
        Ok(mut c) => scrape(&mut c, &place.prefix).await,
        Err(e) => Err(e),
    };
    match text {
        Ok(text) => text_reply(StatusCode::OK, text),
        Err(e) => {
            *place.conn.lock().await = None;
            let why = e.to_string();
            text_reply(
                StatusCode::OK,
                store_unreadable(
                    why.lines().next().unwrap_or_default(),
                    started.elapsed().as_secs_f64() * 1000.0,
                ),
            )
        }
    }
}

/// An HTML answer with the headers that keep the page from being a way in: no script, no frame,
/// nothing loaded from elsewhere, no referrer, no sniffing, no caching of what may be stale.
fn page_reply(status: StatusCode, body: String) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "text/html; charset=utf-8")
        .header(
            "content-security-policy",
            "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        )
        .header("x-content-type-options", "nosniff")
        .header("x-frame-options", "DENY")
        .header("referrer-policy", "no-referrer")
        .header("cache-control", "no-store")
        .body(Full::new(Bytes::from(body)))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::{back_to_root, exposure};

    #[test]
    fn the_way_back_is_relative_to_the_page() {
        assert_eq!(back_to_root("/"), "./");
        assert_eq!(back_to_root("/nosuch"), "./");
        assert_eq!(back_to_root("/job/export"), "../");
        assert_eq!(back_to_root("/job/a/b"), "../../");
    }

    /// An address other machines reach is said, with what to do; loopback is not.
    #[test]
    fn an_address_beyond_loopback_is_said() {
        for quiet in ["127.0.0.1:9090", "[::1]:9090"] {
            assert_eq!(exposure(quiet.parse().unwrap()), None, "{quiet}");
        }
        for open in ["0.0.0.0:9090", "[::]:9090", "10.1.2.3:9090"] {
            let said = exposure(open.parse().unwrap()).unwrap_or_default();
            assert!(
                said.contains("no login") && said.contains("127.0.0.1"),
                "{said}"
            );
        }
    }
}
