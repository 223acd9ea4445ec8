//! `run --ping URL`: the Healthchecks protocol, against a loopback HTTP server. Several hosts run
//! the same slot; the server sees one start and one end per run, from the host that ran it.

use crate::common;
use std::time::{Duration, Instant};

use crate::common::Server;
use crate::common::http::HttpServer;

fn run_with_ping<'a>(slot: &'a str, url: &'a str, runner: &'a str, line: &'a str) -> Vec<&'a str> {
    vec![
        "--job", "pg", "--slot", slot, "--runner", runner, "--ping", url, "--shell", "--", line,
    ]
}

#[test]
fn three_hosts_one_run_one_start_and_one_success_ping() {
    let s = Server::start();
    let http = HttpServer::start(&[]);
    let url = http.url("/ping/abc");
    let slot = s.now_ms().to_string();
    let hosts: Vec<_> = (1..=3)
        .map(|i| {
            let runner = format!("host-{i}:1");
            common::spawn_run(&s, &run_with_ping(&slot, &url, &runner, "sleep 0.3"))
        })
        .collect();
    let codes: Vec<i32> = hosts
        .into_iter()
        .map(|h| h.wait_with_output().unwrap().status.code().unwrap_or(-1))
        .collect();
    assert_eq!(codes.iter().filter(|c| **c == 0).count(), 1, "{codes:?}");
    let got = http.requests();
    let paths: Vec<&str> = got.iter().map(|r| r.path()).collect();
    assert_eq!(paths, vec!["/ping/abc/start", "/ping/abc"], "{got:?}");
    assert!(got.iter().all(|r| r.method == "POST"), "{got:?}");
    // One run id pairs them: the attempt's token, as the UUID it was made from.
    let rid = got[0].param("rid").expect("a run id");
    assert_eq!(got[1].param("rid"), Some(rid.clone()));
    let token = s.run("pg", &slot).expect("the run").token;
    assert_eq!(
        anarchon::store::token::token_uuid(&token).map(|u| u.hyphenated().to_string()),
        Some(rid)
    );
}

#[test]
fn a_failed_run_pings_fail_with_its_stderr_and_a_refused_ping_is_retried() {
    let s = Server::start();
    // The first answer is a 503: the start ping is sent again.
    let http = HttpServer::start(&[503]);
    let url = http.url("/p/key");
    let slot = s.now_ms().to_string();
    let out = s.cli(
        &[
            &["run"][..],
            &run_with_ping(&slot, &url, "h:1", "echo disk full >&2; exit 3"),
        ]
        .concat(),
    );
    assert_eq!(out.code(), Some(3), "{}", out.dump());
    let got = http.requests();
    let paths: Vec<&str> = got.iter().map(|r| r.path()).collect();
    assert_eq!(
        paths,
        vec!["/p/key/start", "/p/key/start", "/p/key/fail"],
        "{got:?}"
    );
    let body = &got[2].body;
    assert!(
        body.contains("disk full") && body.contains("exit 3"),
        "{body}"
    );
}

#[test]
fn a_ping_that_cannot_be_sent_changes_nothing_but_a_warning() {
    let s = Server::start();
    let url = format!("http://127.0.0.1:{}/ping/x", common::dead_port());
    let slot = s.now_ms().to_string();
    let started = Instant::now();
    let out = s.cli(
        &[
            &["run", "--ping-timeout", "3s"][..],
            &run_with_ping(&slot, &url, "h:1", "true"),
        ]
        .concat(),
    );
    assert_eq!(out.code(), Some(0), "{}", out.dump());
    assert!(
        out.dump().contains("--ping http://127.0.0.1"),
        "{}",
        out.dump()
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(
        s.run("pg", &slot).map(|r| r.status),
        Some("finished".into())
    );
}

#[test]
fn a_ping_url_must_be_http() {
    let s = Server::start();
    let out = s.cli(&[
        "run",
        "--job",
        "pg",
        "--slot",
        "now",
        "--ping",
        "ftp://x/y",
        "--",
        "true",
    ]);
    assert_eq!(out.code(), Some(2), "{}", out.dump());
    assert!(out.dump().contains("http://"), "{}", out.dump());
}
