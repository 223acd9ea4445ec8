//! A small HTTP/1.1 server on loopback that records what it is sent: the other end of `run --ping`
//! (a Healthchecks stand-in). It answers each request with the next status of a script (then 200),
//! so a test can make the first tries fail.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request as received.
#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    /// The path and query, as sent.
    pub target: String,
    pub body: String,
    /// The body as sent (an OTLP export's protobuf).
    pub bytes: Vec<u8>,
    pub content_type: String,
}

impl Request {
    /// The path without the query.
    pub fn path(&self) -> &str {
        self.target.split('?').next().unwrap_or_default()
    }

    /// A query parameter's value.
    pub fn param(&self, name: &str) -> Option<String> {
        let query = self.target.split_once('?')?.1;
        query.split('&').find_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            (k == name).then(|| v.to_string())
        })
    }
}

pub struct HttpServer {
    pub port: u16,
    requests: Arc<Mutex<Vec<Request>>>,
}

impl HttpServer {
    /// Starts on a free loopback port; answers the first requests with `statuses`, then 200.
    pub fn start(statuses: &[u16]) -> HttpServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(statuses.to_vec()));
        let seen = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (seen, script) = (seen.clone(), script.clone());
                std::thread::spawn(move || serve(stream, &seen, &script));
            }
        });
        HttpServer { port, requests }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

/// `GET path` of a server on loopback `port` (the daemon's `--listen`): its status and body.
pub fn get(port: u16, path: &str) -> (u16, String) {
    let (status, text) = request(port, "GET", path);
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    (status, body)
}

/// The value of an unlabelled series in Prometheus text (`/metrics`): its `NAME VALUE` line.
pub fn sample(metrics: &str, series: &str) -> Option<u64> {
    metrics.lines().find_map(|l| {
        l.strip_prefix(series)?
            .strip_prefix(' ')?
            .trim()
            .parse()
            .ok()
    })
}

/// `METHOD path` without a body, of a server on loopback `port`: its status, and the whole
/// answer (headers and body).
pub fn request(port: u16, method: &str, path: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    stream.read_to_string(&mut text).unwrap();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, text)
}

/// Reads requests off one connection (keep-alive) and answers each.
fn serve(stream: TcpStream, seen: &Mutex<Vec<Request>>, script: &Mutex<Vec<u16>>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut parts = line.split_whitespace();
        let (Some(method), Some(target)) = (parts.next(), parts.next()) else {
            return;
        };
        let (method, target) = (method.to_string(), target.to_string());
        let mut length = 0usize;
        let mut content_type = String::new();
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse().unwrap_or(0);
                } else if name.eq_ignore_ascii_case("content-type") {
                    content_type = value.trim().to_string();
                }
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        seen.lock().unwrap().push(Request {
            method,
            target,
            body: String::from_utf8_lossy(&body).to_string(),
            bytes: body,
            content_type,
        });
        let status = {
            let mut script = script.lock().unwrap();
            if script.is_empty() {
                200
            } else {
                script.remove(0)
            }
        };
        let reply = format!("HTTP/1.1 {status} X\r\nContent-Length: 2\r\n\r\nOK");
        if writer.write_all(reply.as_bytes()).is_err() {
            return;
        }
    }
}
