//! The listeners (`cron --listen`, `serve`, `metrics --listen`) against a flood of slow and idle
//! clients (issue 62 items 1 and 2), with real sockets: 1,100 connections that send half a
//! header and wait, against a process held to systemd's default descriptor limit (1,024, the
//! shipped unit's floor). The probes must answer within a second (Kubernetes' default probe
//! timeout), the page and /metrics within two, and a daemon's slots must run, each once: the
//! listener may hold only a few dozen descriptors (1,100 such clients once made every slot fail with EMFILE), and its idle connections make room for new
//! ones (`page::admission`).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::common::ticker::{copies, ticker_as};
use crate::common::{Server, served_port, wait_for};

/// Slow clients in a flood.
const FLOOD: usize = 1_100;

/// This test process may hold the flood's descriptors: its soft limit raised to its hard one.
fn room_for_the_flood() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).unwrap();
    let wanted = (FLOOD as u64 * 2 + 512).min(hard);
    if soft < wanted {
        setrlimit(Resource::RLIMIT_NOFILE, wanted, hard).unwrap();
    }
    assert!(
        getrlimit(Resource::RLIMIT_NOFILE).unwrap().0 >= FLOOD as u64 + 256,
        "this test needs {} descriptors; the hard limit is {hard}",
        FLOOD + 256
    );
}

/// A process of the test's that ends with it, a failing one too (a daemon left behind would run
/// on after the suite).
struct Running(Child);

impl std::ops::Deref for Running {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for Running {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `anarchon ARGS` on `s`, held to 1,024 descriptors (systemd's default soft limit), its stderr
/// to `err`.
fn limited(s: &Server, args: &[&str], err: &Path) -> Running {
    use std::os::unix::process::CommandExt;
    let mut cmd = s.anarchon_process();
    cmd.args(args)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(err).unwrap());
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE, 1_024, 1_024)
                .map_err(std::io::Error::from)
        });
    }
    Running(cmd.spawn().unwrap())
}

/// The port the process said it serves on (its stderr's `http://127.0.0.1:PORT` line).
fn port_of(err: &Path) -> u16 {
    let mut port = None;
    wait_for("the listener's address", Duration::from_secs(20), || {
        port = std::fs::read_to_string(err)
            .unwrap_or_default()
            .lines()
            .find_map(served_port);
        port.is_some()
    });
    port.unwrap()
}

/// A thousand connections that each send half a request's headers, then nothing: kept open by
/// this test (a connection the listener closes stays closed).
fn flood(port: u16) -> Vec<TcpStream> {
    (0..FLOOD)
        .filter_map(|_| {
            let mut c = TcpStream::connect_timeout(
                &std::net::SocketAddr::from(([127, 0, 0, 1], port)),
                Duration::from_secs(2),
            )
            .ok()?;
            let _ = c.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ");
            Some(c)
        })
        .collect()
}

/// `GET path` as an orchestrator's probe or a browser asks it: the status, and how long the
/// whole answer took (from the connect), or None when it did not come within `within`.
fn timed_get(port: u16, path: &str, within: Duration) -> Option<(u16, Duration)> {
    let began = Instant::now();
    let mut c =
        TcpStream::connect_timeout(&std::net::SocketAddr::from(([127, 0, 0, 1], port)), within)
            .ok()?;
    c.set_read_timeout(Some(within)).ok()?;
    write!(
        c,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut text = String::new();
    c.read_to_string(&mut text).ok()?;
    let status = text.split_whitespace().nth(1)?.parse().ok()?;
    Some((status, began.elapsed()))
}

/// Asks `paths` `rounds` times each, while the flood holds on; each must answer 200 within
/// `within`.
fn answers_through_the_flood(port: u16, paths: &[&str], rounds: usize, within: Duration) {
    for round in 0..rounds {
        for path in paths {
            match timed_get(port, path, within) {
                Some((200, _)) => {}
                other => panic!("{path} (round {round}) with {FLOOD} slow clients: {other:?}"),
            }
        }
    }
}

#[test]
fn a_flood_of_slow_clients_keeps_no_probe_out_and_starves_no_slot() {
    room_for_the_flood();
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let file = dir.path().join("crontab");
    std::fs::write(
        &file,
        format!(
            "# anarchon: --job tick\n* * * * * * {}\n",
            ticker_as(&log, "$ANARCHON_SLOT", 100, false)
        ),
    )
    .unwrap();
    let err = dir.path().join("cron.err");
    let mut cron = limited(
        &s,
        &["cron", file.to_str().unwrap(), "--listen", "127.0.0.1:0"],
        &err,
    );
    let port = port_of(&err);
    wait_for("the first slot", Duration::from_secs(10), || {
        !copies(&log).is_empty()
    });
    let from = s.now_ms();
    let slow = flood(port);
    answers_through_the_flood(port, &["/healthz", "/readyz"], 10, Duration::from_secs(1));
    answers_through_the_flood(port, &["/", "/metrics"], 3, Duration::from_secs(2));
    // The slots due meanwhile ran, each once, their commands started (no EMFILE).
    wait_for(
        "a slot after the flood began",
        Duration::from_secs(10),
        || {
            copies(&log)
                .iter()
                .any(|c| c.label.parse::<i64>().unwrap() > from + 1_000)
        },
    );
    let labels: Vec<String> = copies(&log).into_iter().map(|c| c.label).collect();
    let mut once = labels.clone();
    once.dedup();
    assert_eq!(labels, once, "a slot ran twice");
    let said = std::fs::read_to_string(&err).unwrap();
    assert!(!said.contains("Too many open files"), "{said}");
    assert!(
        !said.contains("the file changed"),
        "a reload nobody made: {said}"
    );
    drop(slow);
    let _ = cron.kill();
    let _ = cron.wait();
}

#[test]
fn a_flood_of_slow_clients_keeps_the_page_and_metrics_answering() {
    room_for_the_flood();
    let s = Server::start();
    s.cli(&["run", "--job", "one", "--slot", "now", "--", "true"])
        .expect(0);
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["serve", "--listen", "127.0.0.1:0"][..],
        &["metrics", "--listen", "127.0.0.1:0"][..],
    ] {
        let err = dir.path().join(format!("{}.err", args[0]));
        let mut listener = limited(&s, args, &err);
        let port = port_of(&err);
        let slow = flood(port);
        answers_through_the_flood(port, &["/", "/metrics"], 5, Duration::from_secs(2));
        drop(slow);
        let _ = listener.kill();
        let _ = listener.wait();
    }
}

/// Whatever path a client asks for (arbitrary text, dots, escapes, a job that is no job), the
/// status page answers it, with no server error, and stays up (issue 62 item 6).
#[test]
fn any_request_path_is_answered_and_the_page_stays_up() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    let s = Server::start();
    s.cli(&["run", "--job", "one", "--slot", "now", "--", "true"])
        .expect(0);
    let dir = tempfile::tempdir().unwrap();
    let err = dir.path().join("serve.err");
    let mut serve = limited(&s, &["serve", "--listen", "127.0.0.1:0"], &err);
    let port = port_of(&err);
    let paths = prop_oneof![
        "/[\\PC]{0,40}",
        "/job/[\\PC]{0,30}",
        "/(job/)?(%[0-9A-Fa-f]{2}|\\.\\.|/|[a-z]){0,12}",
        "[\\PC]{0,20}",
    ];
    let mut runner = TestRunner::new(Config {
        cases: 300,
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&paths, |path| {
            let path = path.replace([' ', '\r', '\n'], "%20");
            let got = timed_get(port, &path, Duration::from_secs(5));
            let (status, _) = got.unwrap_or((0, Duration::ZERO));
            prop_assert!(
                (200..500).contains(&status),
                "{path:?} answered {status} ({got:?})"
            );
            Ok(())
        })
        .unwrap();
    assert!(serve.try_wait().unwrap().is_none(), "serve exited");
    let _ = serve.kill();
    let _ = serve.wait();
}
