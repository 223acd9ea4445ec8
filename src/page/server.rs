//! The HTTP side of the pages and of `/metrics` (`anarchon serve`, `metrics --listen`): hyper on
//! the tokio runtime already in use, one connection to the store shared by the requests (it
//! multiplexes) and opened again after a failure. Every page reads the store afresh.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Instant;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Method, Request, Response, StatusCode};
use tokio::net::TcpListener;
use tokio::sync::Mutex;

use super::html;
use super::read::{JobPage, JobsPage};
use crate::connection::{ConnectOptions, Connection};
use crate::error::{Error, Result};
use crate::metrics::{scrape, store_unreadable, text_reply};

/// What every request shares: where the store is, and the connection to it.
struct Place {
    options: ConnectOptions,
    prefix: String,
    /// The store's address as the pages show it (no password).
    shown: String,
    conn: Mutex<Option<Connection>>,
}

/// Serves the pages and `/metrics` on `listener` until `shutdown` completes.
pub async fn serve(
    listener: TcpListener,
    options: ConnectOptions,
    prefix: &str,
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<()> {
    let place = Arc::new(Place {
        shown: crate::connection::redact_url(&options.url),
        options,
        prefix: prefix.to_string(),
        conn: Mutex::new(None),
    });
    tokio::pin!(shutdown);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(_) => continue,
            },
            () = &mut shutdown => return Ok(()),
        };
        let place = place.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                let place = place.clone();
                async move { Ok::<_, Infallible>(respond(&req, &place).await) }
            });
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, service)
                .await;
        });
    }
}

/// What a request is answered: a page, the metrics, or why not.
async fn respond(req: &Request<hyper::body::Incoming>, place: &Place) -> Response<Full<Bytes>> {
    if req.method() != Method::GET && req.method() != Method::HEAD {
        // Read-only: nothing here acts on the store.
        let mut reply = text_reply(
            StatusCode::METHOD_NOT_ALLOWED,
            "read-only: GET and HEAD only\n".to_string(),
        );
        reply.headers_mut().insert(
            "allow",
            hyper::header::HeaderValue::from_static("GET, HEAD"),
        );
        return reply;
    }
    let path = req.uri().path();
    if path == "/metrics" {
        return metrics(place).await;
    }
    let job = path.strip_prefix("/job/").map(|name| {
        url::form_urlencoded::parse(format!("j={name}").as_bytes())
            .next()
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default()
    });
    if path != "/" && job.is_none() {
        return page_reply(
            StatusCode::NOT_FOUND,
            html::error_page(
                "Not found",
                "This page does not exist.",
                &back_to_root(path),
            ),
        );
    }
    let mut conn = match connection(place).await {
        Ok(conn) => conn,
        Err(e) => return unreadable(place, &e, path).await,
    };
    let read = match &job {
        None => JobsPage::read(&mut conn, &place.prefix)
            .await
            .map(|p| html::jobs_page(&p, &place.shown)),
        Some(job) => JobPage::read(&mut conn, &place.prefix, job)
            .await
            .map(|p| html::job_page(&p, &place.shown)),
    };
    match read {
        Ok(body) => page_reply(StatusCode::OK, body),
        Err(Error::NotFound(m)) => page_reply(
            StatusCode::NOT_FOUND,
            html::error_page("No such job", &m.text, &back_to_root(path)),
        ),
        Err(Error::Usage(m)) => page_reply(
            StatusCode::BAD_REQUEST,
            html::error_page("Not a job's name", &m.text, &back_to_root(path)),
        ),
        Err(e) => unreadable(place, &e, path).await,
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
async fn connection(place: &Place) -> Result<Connection> {
    let mut held = place.conn.lock().await;
    if held.is_none() {
        *held = Some(Connection::open(&place.options).await?);
    }
    held.clone()
        .ok_or_else(|| Error::Other("cannot connect".into()))
}

/// The store could not be read: said on the page (503), and a fresh connection next time (after
/// a restart the old one stays broken).
async fn unreadable(place: &Place, e: &Error, path: &str) -> Response<Full<Bytes>> {
    *place.conn.lock().await = None;
    let why = e.to_string();
    page_reply(
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
async fn metrics(place: &Place) -> Response<Full<Bytes>> {
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
    use super::back_to_root;

    #[test]
    fn the_way_back_is_relative_to_the_page() {
        assert_eq!(back_to_root("/"), "./");
        assert_eq!(back_to_root("/nosuch"), "./");
        assert_eq!(back_to_root("/job/export"), "../");
        assert_eq!(back_to_root("/job/a/b"), "../../");
    }
}
