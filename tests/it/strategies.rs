//! The claim-only strategies (stream-id, script, idmp) and the valkey backend flavour, against the
//! server the suite runs on (redis-server, or valkey-server with ANARCHON_TEST_SERVER).

use crate::common;
use std::process::{Output, Stdio};

use crate::common::{Server, json, stderr};
use serde_json::Value;

const SLOT: &str = "1796220300000";

fn race(s: &Server, job: &str, strategy: &str, n: usize) -> Vec<Output> {
    common::race(s, n, |i| {
        let runner = format!("r{i}");
        common::owned(&[
            "claim",
            job,
            "--slot",
            SLOT,
            "--json",
            "--strategy",
            strategy,
            "--runner",
            &runner,
        ])
    })
}

#[test]
fn each_claim_only_strategy_has_exactly_one_winner_among_twenty() {
    let s = Server::start();
    for strategy in ["stream-id", "script"] {
        let job = format!("race-{strategy}");
        let outputs = race(&s, &job, strategy, 20);
        let codes = common::codes(&outputs);
        assert_eq!(
            codes.iter().filter(|c| **c == 0).count(),
            1,
            "{strategy}: {codes:?}"
        );
        assert_eq!(
            codes.iter().filter(|c| **c == 81).count(),
            19,
            "{strategy}: {codes:?}"
        );
        let winner = json(outputs.iter().find(|o| o.status.code() == Some(0)).unwrap());
        // The stream holds exactly the winner's claim, with the documented fields.
        let key = format!("cron:{job}:runs");
        let entries: Vec<(String, std::collections::HashMap<String, String>)> =
            s.cmd(&["XRANGE", &key, "-", "+"]);
        assert_eq!(entries.len(), 1, "{strategy}");
        let (id, fields) = &entries[0];
        assert_eq!(fields["slot"], SLOT);
        assert_eq!(fields["token"], winner["token"].as_str().unwrap());
        assert_eq!(fields["runner"], winner["runner"].as_str().unwrap());
        assert_eq!(fields["kind"], "scheduled");
        if strategy == "stream-id" {
            assert_eq!(id, &format!("{SLOT}-0"));
        }
        // Losers learn who won where the strategy can tell.
        for o in outputs.iter().filter(|o| o.status.code() == Some(81)) {
            let v = json(o);
            assert_eq!(v["outcome"], "done");
            assert_eq!(v["status"], "claimed");
            assert_eq!(v["runner"], winner["runner"], "{strategy}");
        }
        // No lease layout keys were written.
        assert_eq!(
            s.cmd::<i64>(&["EXISTS", &format!("{{cron:{job}}}:state")]),
            0
        );
    }
}

#[test]
fn stream_id_refuses_a_slot_older_than_the_newest_claim() {
    let s = Server::start();
    assert_eq!(
        s.cli(&["claim", "j", "--slot", "2000", "--strategy", "stream-id"])
            .status
            .code(),
        Some(0)
    );
    let out = s.cli(&[
        "claim",
        "j",
        "--slot",
        "1000",
        "--strategy",
        "stream-id",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(81));
    assert_eq!(
        json(&out)["runner"],
        "",
        "no claim of that slot exists to name"
    );
}

#[test]
fn the_script_strategy_forgets_a_run_after_its_window() {
    let s = Server::start();
    let args = [
        "claim",
        "w",
        "--slot",
        SLOT,
        "--strategy",
        "script",
        "--window",
        "400ms",
    ];
    let before = s.now_ms();
    assert_eq!(s.cli(&args).status.code(), Some(0));
    assert_eq!(s.cli(&args).status.code(), Some(81));
    // The claim's entry ID is its time: once the server's clock is a window past it, it is out.
    let claimed: Vec<(String, std::collections::HashMap<String, String>)> =
        s.cmd(&["XRANGE", "cron:w:runs", "-", "+"]);
    let claimed_ms: i64 = claimed[0].0.split('-').next().unwrap().parse().unwrap();
    assert!(claimed_ms >= before);
    common::wait_for_server_time(&s, claimed_ms + 400);
    assert_eq!(
        s.cli(&args).status.code(),
        Some(0),
        "the window should have forgotten the claim"
    );
}

#[test]
fn idmp_is_refused_before_any_write_on_servers_without_it() {
    let s = Server::start();
    // What the store holds before (the format key of a store moved to format 2, in that pass).
    let before = s.keys();
    let out = s.cli(&["claim", "j", "--slot", "now", "--strategy", "idmp"]);
    assert_eq!(out.status.code(), Some(93), "{}", stderr(&out));
    let err = stderr(&out);
    let product = if common::is_valkey() {
        "Valkey"
    } else {
        "Redis"
    };
    assert!(err.contains(&format!("this server is {product} ")), "{err}");
    assert!(err.contains("8.6") && err.contains("stream-id"), "{err}");
    assert_eq!(s.keys(), before, "something was written");
    let out = s.cli(&[
        "run",
        "--job",
        "j",
        "--slot",
        "now",
        "--strategy",
        "idmp",
        "--",
        "true",
    ]);
    assert_eq!(out.status.code(), Some(93));
    assert_eq!(s.keys(), before, "something was written");
}

#[test]
fn the_valkey_backend_refuses_idmp_as_a_usage_error() {
    let url = format!("redis://127.0.0.1:{}", common::dead_port());
    let out = common::anarchon()
        .args([
            "--redis",
            &url,
            "--backend",
            "valkey",
            "claim",
            "j",
            "--slot",
            "now",
            "--strategy",
            "idmp",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("valkey backend has no idmp"),
        "{}",
        stderr(&out)
    );
    let out = common::anarchon()
        .env("ANARCHON_BACKEND", "valkey")
        .args([
            "--redis",
            &url,
            "claim",
            "j",
            "--slot",
            "now",
            "--strategy",
            "idmp",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // The valkey flavour runs every other strategy.
    let s = Server::start();
    for strategy in ["lease", "stream-id", "script"] {
        let out = s
            .anarchon()
            .args([
                "--backend",
                "valkey",
                "claim",
                &format!("v-{strategy}"),
                "--slot",
                "1000",
                "--strategy",
                strategy,
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{strategy}: {}", stderr(&out));
    }
}

#[test]
fn settings_of_another_strategy_and_lease_options_are_usage_errors() {
    let url = format!("redis://127.0.0.1:{}", common::dead_port());
    let cases: Vec<Vec<&str>> = vec![
        vec![
            "claim",
            "j",
            "--slot",
            "1",
            "--strategy",
            "stream-id",
            "--window",
            "5m",
        ],
        vec!["claim", "j", "--slot", "1", "--window", "5m"],
        vec![
            "claim",
            "j",
            "--slot",
            "1",
            "--strategy",
            "script",
            "--idmp-duration",
            "60",
        ],
        vec![
            "claim",
            "j",
            "--slot",
            "1",
            "--strategy",
            "idmp",
            "--idmp-duration",
            "0",
        ],
        vec![
            "claim",
            "j",
            "--slot",
            "1",
            "--strategy",
            "idmp",
            "--idmp-duration",
            "86401",
        ],
        vec![
            "claim",
            "j",
            "--slot",
            "1",
            "--strategy",
            "idmp",
            "--idmp-max-size",
            "10001",
        ],
        vec![
            "claim",
            "j",
            "--slot",
            "1",
            "--strategy",
            "stream-id",
            "--lease",
            "30s",
        ],
        vec![
            "claim",
            "j",
            "--slot",
            "1",
            "--strategy",
            "script",
            "--max-attempts",
            "2",
        ],
        vec![
            "claim",
            "j",
            "--slot",
            "1",
            "--strategy",
            "stream-id",
            "--overlap",
            "allow",
        ],
        vec![
            "heartbeat",
            "j",
            "--slot",
            "1",
            "--token",
            "t",
            "--strategy",
            "script",
        ],
        vec![
            "run",
            "--job",
            "j",
            "--schedule",
            "* * * * *",
            "--strategy",
            "stream-id",
            "--catch-up",
            "1h",
            "--",
            "true",
        ],
        vec![
            "run",
            "--job",
            "j",
            "--slot",
            "1",
            "--strategy",
            "stream-id",
            "--heartbeat",
            "5s",
            "--",
            "true",
        ],
        vec![
            "run",
            "--job",
            "j",
            "--slot",
            "1",
            "--strategy",
            "script",
            "--no-backup",
            "--",
            "true",
        ],
        vec!["run-now", "j", "--strategy", "stream-id", "--lease", "1m"],
        vec!["claim", "j", "--slot", "1", "--strategy", "paxos"],
    ];
    for args in cases {
        let out = common::anarchon()
            .args(["--redis", &url])
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).starts_with("error"), "{args:?}");
    }
}

#[test]
fn the_script_window_must_exceed_max_late() {
    let s = Server::start();
    let out = s.cli(&[
        "run",
        "--job",
        "j",
        "--slot",
        "1000",
        "--strategy",
        "script",
        "--window",
        "30s",
        "--max-late",
        "1m",
        "--",
        "true",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--window") && stderr(&out).contains("--max-late"),
        "{}",
        stderr(&out)
    );
    let out = s.cli(&[
        "run",
        "--job",
        "j",
        "--slot",
        "1000",
        "--strategy",
        "script",
        "--window",
        "2m",
        "--max-late",
        "1m",
        "--",
        "true",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn run_with_a_claim_only_strategy_runs_once_and_records_the_result() {
    let s = Server::start();
    for strategy in ["stream-id", "script"] {
        let job = format!("cron-{strategy}");
        let file = s.dir.path().join(format!("{job}.txt"));
        let line = format!("echo ran >> {}", file.display());
        let outputs = common::race(&s, 8, |_| {
            common::owned(&[
                "run",
                "--job",
                &job,
                "--slot",
                SLOT,
                "--strategy",
                strategy,
                "--json",
                "--shell",
                "--",
                &line,
            ])
        });
        let codes = common::codes(&outputs);
        assert_eq!(
            codes.iter().filter(|c| **c == 0).count(),
            1,
            "{strategy}: {codes:?}"
        );
        assert!(codes.iter().all(|c| *c == 0 || *c == 81), "{codes:?}");
        assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 1);
        let results: Vec<String> = s.cmd(&["ZRANGE", &format!("cron:{job}:results"), "0", "-1"]);
        assert_eq!(results.len(), 1);
        let r: Value = serde_json::from_str(&results[0]).unwrap();
        assert_eq!(r["status"], "finished");
        assert_eq!(r["slot"].to_string(), SLOT);
        assert_eq!(r["result"]["exit_code"], 0);

        // The operator commands read the claim-only layout.
        let list = json(&s.cli(&["list", "--json", "--pattern", &job]));
        assert_eq!(list["jobs"][0]["layout"], "claim-only");
        assert_eq!(list["jobs"][0]["last_status"], "finished");
        let detail = json(&s.cli(&["inspect", &job, "--json", "--strategy", strategy]));
        assert_eq!(detail["layout"], "claim-only");
        assert_eq!(detail["runs"][0]["status"], "finished");
        assert_eq!(detail["runs"][0]["result"]["exit_code"], 0);
        let history = json(&s.cli(&["history", &job, "--json"]));
        assert_eq!(history["entries"].as_array().unwrap().len(), 1);
        assert_eq!(history["entries"][0]["status"], "finished");
    }
}

#[test]
fn finish_with_a_claim_only_strategy_checks_the_token() {
    let s = Server::start();
    let v = json(&s.cli(&[
        "claim",
        "f",
        "--slot",
        SLOT,
        "--strategy",
        "stream-id",
        "--json",
    ]));
    let token = v["token"].as_str().unwrap();
    let out = s.cli(&[
        "finish",
        "f",
        "--slot",
        SLOT,
        "--token",
        "wrong",
        "--status",
        "ok",
        "--strategy",
        "stream-id",
    ]);
    assert_eq!(out.status.code(), Some(83));
    assert_eq!(s.cmd::<i64>(&["EXISTS", "cron:f:results"]), 0);
    let out = s.cli(&[
        "finish",
        "f",
        "--slot",
        SLOT,
        "--token",
        token,
        "--status",
        "failed",
        "--result",
        "disk full",
        "--strategy",
        "stream-id",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results: Vec<String> = s.cmd(&["ZRANGE", "cron:f:results", "0", "-1"]);
    let r: Value = serde_json::from_str(&results[0]).unwrap();
    assert_eq!(r["status"], "failed");
    assert_eq!(r["token"], token);
    assert_eq!(r["result"], "disk full");
    let history = json(&s.cli(&["history", "f", "--json", "--status", "failed"]));
    assert_eq!(history["entries"].as_array().unwrap().len(), 1);
}

#[test]
fn run_now_with_a_claim_only_strategy_records_a_manual_run() {
    let s = Server::start();
    let out = s.cli(&[
        "run-now",
        "m",
        "--strategy",
        "script",
        "--json",
        "--",
        "true",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let entries: Vec<(String, std::collections::HashMap<String, String>)> =
        s.cmd(&["XRANGE", "cron:m:manual", "-", "+"]);
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].1["kind"], "manual");
    assert_eq!(s.cmd::<i64>(&["EXISTS", "cron:m:runs"]), 0);
    let results: Vec<String> = s.cmd(&["ZRANGE", "cron:m:results", "0", "-1"]);
    let r: Value = serde_json::from_str(&results[0]).unwrap();
    assert_eq!(r["kind"], "manual");
    assert_eq!(r["status"], "finished");
    let detail = json(&s.cli(&["inspect", "m", "--json"]));
    assert_eq!(detail["runs"][0]["kind"], "manual");
}

#[test]
fn trim_keeps_the_newest_claim_only_runs() {
    let s = Server::start();
    for slot in 1..=6 {
        let slot = (slot * 1000).to_string();
        let v = json(&s.cli(&[
            "claim",
            "t",
            "--slot",
            &slot,
            "--strategy",
            "stream-id",
            "--json",
        ]));
        let token = v["token"].as_str().unwrap();
        let out = s.cli(&[
            "finish",
            "t",
            "--slot",
            &slot,
            "--token",
            token,
            "--status",
            "ok",
            "--strategy",
            "stream-id",
        ]);
        assert_eq!(out.status.code(), Some(0));
    }
    let out = s.cli(&["trim", "t", "--keep", "2", "--yes", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["total"], 4);
    assert_eq!(v["jobs"][0]["layout"], "claim-only");
    let ids: Vec<(String, std::collections::HashMap<String, String>)> =
        s.cmd(&["XRANGE", "cron:t:runs", "-", "+"]);
    let ids: Vec<&str> = ids.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, vec!["5000-0", "6000-0"]);
    assert_eq!(s.cmd::<i64>(&["ZCARD", "cron:t:results"]), 2);
    // stream-id still refuses the trimmed slots: the stream remembers its last ID.
    assert_eq!(
        s.cli(&["claim", "t", "--slot", "3000", "--strategy", "stream-id"])
            .status
            .code(),
        Some(81)
    );
}

#[test]
fn doctor_and_list_agree_on_the_server_kind() {
    let s = Server::start();
    let v = json(&s.cli(&["doctor", "--json"]));
    assert_eq!(
        v["server"]["kind"],
        if common::is_valkey() {
            "valkey"
        } else {
            "redis"
        }
    );
    assert!(
        !v["strategies"]
            .as_array()
            .unwrap()
            .contains(&Value::from("idmp"))
    );
}

/// idmp needs Redis 8.6 (`XADD ... IDMP`), which no registry this project may use ships (Debian
/// has 7.0, Valkey 8.0; PyPI's and npm's redis servers fetch their builds from the web): the
/// strategy is untested in CI, and the guide says so. Ignored, so that `cargo test` lists it as
/// not run rather than passed; `ANARCHON_TEST_REDIS86_URL=redis://... cargo test -- --ignored
/// idmp` runs it against such a server (a throwaway one: it writes keys).
#[test]
#[ignore = "needs Redis 8.6 (XADD IDMP), which no registry here ships: set ANARCHON_TEST_REDIS86_URL and run with --ignored"]
fn idmp_on_redis_8_6_has_exactly_one_winner() {
    let url = std::env::var("ANARCHON_TEST_REDIS86_URL")
        .expect("ANARCHON_TEST_REDIS86_URL: a Redis 8.6+ server to run it against");
    let job = format!("idmp-{}", std::process::id());
    let children: Vec<_> = (0..20)
        .map(|_| {
            let mut cmd = std::process::Command::new(common::anarchon_path());
            cmd.args([
                "--redis",
                &url,
                "claim",
                &job,
                "--slot",
                SLOT,
                "--json",
                "--strategy",
                "idmp",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
            cmd.spawn().unwrap()
        })
        .collect();
    let codes: Vec<i32> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap().status.code().unwrap())
        .collect();
    assert_eq!(codes.iter().filter(|c| **c == 0).count(), 1, "{codes:?}");
    assert_eq!(codes.iter().filter(|c| **c == 81).count(), 19, "{codes:?}");
}
