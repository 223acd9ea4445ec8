//! The lease strategy end to end: the real binary against a real server, keys checked with a client.

use crate::common;
use std::collections::HashMap;
use std::process::Output;

use crate::common::{Server, json, stderr};
use serde_json::Value;

/// A slot far enough in the past that history trimming may drop it.
const OLD: i64 = 1_600_000_000_000;

fn claim(s: &Server, job: &str, slot: &str, extra: &[&str]) -> Output {
    s.anarchon()
        .args(["claim", job, "--slot", slot, "--json"])
        .args(extra)
        .output()
        .unwrap()
}

fn heartbeat(s: &Server, job: &str, slot: &str, token: &str, extra: &[&str]) -> Output {
    s.anarchon()
        .args(["heartbeat", job, "--slot", slot, "--token", token, "--json"])
        .args(extra)
        .output()
        .unwrap()
}

fn finish(s: &Server, job: &str, slot: &str, token: &str, extra: &[&str]) -> Output {
    s.anarchon()
        .args(["finish", job, "--slot", slot, "--token", token, "--json"])
        .args(extra)
        .output()
        .unwrap()
}

fn state(s: &Server, job: &str) -> HashMap<String, String> {
    s.state_map(job)
}

fn won(out: &Output) -> (String, i64) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "claim did not win: {}",
        stderr(out)
    );
    let v = json(out);
    assert_eq!(v["outcome"], "won");
    (
        v["token"].as_str().unwrap().to_string(),
        v["attempt"].as_i64().unwrap(),
    )
}

#[test]
fn a_won_claim_writes_the_documented_keys_in_format_2() {
    let s = Server::start();
    // A store an operator moved to format 2 (`anarchon migrate` marks an empty prefix so).
    let _: () = s.cmd(&["SET", "cron:format", "2"]);
    let slot = "2026-12-02T14:05:00Z";
    let out = claim(
        &s,
        "sync",
        slot,
        &["--runner", "host-a:1", "--lease", "30s"],
    );
    let (token, _) = won(&out);
    let server_time = json(&out)["server_time"].as_i64().unwrap();
    assert_eq!(
        s.keys(),
        vec![
            "cron:format",
            "{cron:sync}:job",
            "{cron:sync}:live",
            "{cron:sync}:state"
        ]
    );
    assert_eq!(s.cmd::<String>(&["GET", "cron:format"]), "2");
    // :state is the format 2 marker: a format 1 script that meets it is refused (WRONGTYPE).
    assert_eq!(s.cmd::<String>(&["TYPE", "{cron:sync}:state"]), "string");
    let live: HashMap<String, String> = s.cmd(&["HGETALL", "{cron:sync}:live"]);
    assert_eq!(live.len(), 1);
    let run: Value = serde_json::from_str(&live["1796220300000"]).unwrap();
    assert_eq!(
        run,
        serde_json::json!({"attempt": 1, "token": token, "runner": "host-a:1",
            "lease_end": server_time + 30_000, "claimed_at": server_time,
            "started_at": server_time, "kind": "scheduled", "lease_ms": 30_000, "fence": 1})
    );

    let job: HashMap<String, String> = s.cmd(&["HGETALL", "{cron:sync}:job"]);
    assert_eq!(job["format"], "2");
    assert_eq!(job["fence"], "1");
    assert_eq!(job["protect_ms"], "3600000");

    // Finishing moves the run from :live to one :results member: all an ended run keeps.
    let out = finish(
        &s,
        "sync",
        "1796220300000",
        &token,
        &["--status", "ok", "--result-json", r#"{"rows":1}"#],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(s.cmd::<i64>(&["EXISTS", "{cron:sync}:live"]), 0);
    let results: Vec<(String, i64)> =
        s.cmd(&["ZRANGE", "{cron:sync}:results", "0", "-1", "WITHSCORES"]);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].1, 1_796_220_300_000);
    let member: Value = serde_json::from_str(&results[0].0).unwrap();
    let ended_at = member["ended_at"].as_i64().unwrap();
    assert_eq!(
        member,
        serde_json::json!({"attempt": 1, "token": token, "runner": "host-a:1",
            "status": "finished", "claimed_at": server_time, "ended_at": ended_at, "fence": 1,
            "result": {"rows": 1}})
    );
    assert_eq!(
        s.keys(),
        vec![
            "cron:format",
            "{cron:sync}:job",
            "{cron:sync}:results",
            "{cron:sync}:state"
        ]
    );
}

#[test]
fn a_won_claim_writes_the_documented_keys_in_format_1() {
    let s = Server::start();
    // A store nobody wrote to yet: created in format 1, the seed's layout.
    let _: () = s.cmd(&["DEL", "cron:format"]);
    let slot = "2026-12-02T14:05:00Z";
    let out = claim(
        &s,
        "sync",
        slot,
        &["--runner", "host-a:1", "--lease", "30s"],
    );
    let (token, attempt) = won(&out);
    let v = json(&out);
    assert_eq!(attempt, 1);
    assert_eq!(token.len(), 22);
    assert_eq!(v["slot"], 1_796_220_300_000i64);
    assert_eq!(v["slot_time"], "2026-12-02T14:05:00.000Z");
    assert_eq!(v["runner"], "host-a:1");
    let server_time = v["server_time"].as_i64().unwrap();
    assert_eq!(v["lease_end"].as_i64().unwrap(), server_time + 30_000);

    assert_eq!(
        s.keys(),
        vec![
            "cron:format",
            "{cron:sync}:active",
            "{cron:sync}:job",
            "{cron:sync}:slots",
            "{cron:sync}:state"
        ]
    );
    // How late a claimant may still claim (the claim's default protection, 1 h), for trimmers.
    let job: HashMap<String, String> = s.cmd(&["HGETALL", "{cron:sync}:job"]);
    assert_eq!(job["protect_ms"], "3600000");
    // When the job's first claim reached the store (run --catch-up catches up nothing before it).
    assert_eq!(job["first_seen"], server_time.to_string());
    // The last fencing token given, and the run's: this claim's, the job's first (in `:job`, which
    // format 1 readers never read: a new `:state` attribute would be a new format).
    assert_eq!(job["fence"], "1");
    assert_eq!(job["fence:1796220300000"], "1");
    assert_eq!(v["fence"], 1);
    assert_eq!(job.len(), 4);
    assert_eq!(s.cmd::<String>(&["GET", "cron:format"]), "1");
    assert_eq!(s.cmd::<String>(&["TYPE", "{cron:sync}:state"]), "hash");
    assert_eq!(s.cmd::<String>(&["TYPE", "{cron:sync}:active"]), "set");
    assert_eq!(s.cmd::<String>(&["TYPE", "{cron:sync}:slots"]), "zset");
    let st: HashMap<String, String> = s.cmd(&["HGETALL", "{cron:sync}:state"]);
    let f = |name: &str| st[&format!("1796220300000:{name}")].clone();
    assert_eq!(f("status"), "running");
    assert_eq!(f("attempt"), "1");
    assert_eq!(f("token"), token);
    assert_eq!(f("runner"), "host-a:1");
    assert_eq!(f("lease_end"), (server_time + 30_000).to_string());
    assert_eq!(f("claimed_at"), server_time.to_string());
    assert_eq!(f("started_at"), server_time.to_string());
    // A scheduled run's kind is not written (absent means scheduled), nor finished_at.
    assert_eq!(st.len(), 7, "{st:?}");
    let active: Vec<String> = s.cmd(&["SMEMBERS", "{cron:sync}:active"]);
    assert_eq!(active, vec!["1796220300000"]);
    let slots: Vec<(String, i64)> =
        s.cmd(&["ZRANGE", "{cron:sync}:slots", "0", "-1", "WITHSCORES"]);
    assert_eq!(
        slots,
        vec![("1796220300000".to_string(), 1_796_220_300_000)]
    );
}

#[test]
fn slots_are_accepted_as_ms_rfc3339_and_now() {
    let s = Server::start();
    let out = claim(&s, "a", "1796220300000", &[]);
    assert_eq!(json(&out)["slot"], 1_796_220_300_000i64);
    let out = claim(&s, "b", "2026-12-02T15:05:00+01:00", &[]);
    assert_eq!(json(&out)["slot"], 1_796_220_300_000i64);
    let before = s.now_ms();
    let out = claim(&s, "c", "now", &[]);
    let slot = json(&out)["slot"].as_i64().unwrap();
    assert_eq!(slot % 60_000, 0);
    assert!(slot <= before + 1000 && slot > before - 61_000);
}

#[test]
fn the_decision_tree_running_done_and_token_checks() {
    let s = Server::start();
    let slot = "1796220300000";
    let (token, _) = won(&claim(&s, "sync", slot, &["--runner", "a"]));

    // A second claimant while the lease lives: running, told who holds it, no token.
    let out = claim(&s, "sync", slot, &["--runner", "b"]);
    assert_eq!(out.status.code(), Some(82));
    let v = json(&out);
    assert_eq!(v["outcome"], "running");
    assert_eq!(v["runner"], "a");
    assert_eq!(v["token"], Value::Null);

    // Heartbeat with a wrong token changes nothing.
    let lease_before = state(&s, "sync")[&format!("{slot}:lease_end")].clone();
    let out = heartbeat(&s, "sync", slot, "not-the-token", &[]);
    assert_eq!(out.status.code(), Some(83), "{}", stderr(&out));
    assert_eq!(json(&out)["outcome"], "lost");
    assert_eq!(
        state(&s, "sync")[&format!("{slot}:lease_end")],
        lease_before
    );

    // Heartbeat with the token pushes the lease end forward.
    let claimed_at: i64 = state(&s, "sync")[&format!("{slot}:claimed_at")]
        .parse()
        .unwrap();
    common::wait_for_server_time(&s, claimed_at);
    let out = heartbeat(&s, "sync", slot, &token, &["--lease", "1m"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["outcome"], "ok");
    let new_end = v["lease_end"].as_i64().unwrap();
    assert_eq!(new_end, v["server_time"].as_i64().unwrap() + 60_000);
    assert!(new_end > lease_before.parse::<i64>().unwrap());

    // Finish with a wrong token: lost, nothing written.
    let out = finish(&s, "sync", slot, "nope", &["--status", "ok"]);
    assert_eq!(out.status.code(), Some(83));
    assert_eq!(s.cmd::<i64>(&["EXISTS", "{cron:sync}:results"]), 0);

    // Finish with the token: finished, result and attempt recorded, no longer active.
    let out = finish(
        &s,
        "sync",
        slot,
        &token,
        &["--status", "ok", "--result-json", r#"{"rows": 42}"#],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["status"], "finished");
    let st = state(&s, "sync");
    assert_eq!(st[&format!("{slot}:status")], "finished");
    assert!(s.in_progress("sync").is_empty());
    let results: Vec<(String, i64)> =
        s.cmd(&["ZRANGE", "{cron:sync}:results", "0", "-1", "WITHSCORES"]);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].1, 1_796_220_300_000);
    let member: Value = serde_json::from_str(&results[0].0).unwrap();
    assert_eq!(member["attempt"], 1);
    assert_eq!(member["token"], token.as_str());
    assert_eq!(member["runner"], "a");
    assert_eq!(member["status"], "finished");
    assert_eq!(member["result"]["rows"], 42);
    if s.is_format_1("sync") {
        let runs: Vec<(String, HashMap<String, String>)> =
            s.cmd(&["XRANGE", "{cron:sync}:runs", "-", "+"]);
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].1["slot"], slot);
        assert_eq!(runs[0].1["attempt"], "1");
        assert_eq!(runs[0].1["status"], "finished");
    }

    // A finished run: every later claim answers done; heartbeat and finish are lost.
    let out = claim(&s, "sync", slot, &[]);
    assert_eq!(out.status.code(), Some(81));
    assert_eq!(json(&out)["status"], "finished");
    assert_eq!(
        heartbeat(&s, "sync", slot, &token, &[]).status.code(),
        Some(83)
    );
    assert_eq!(
        finish(&s, "sync", slot, &token, &["--status", "failed"])
            .status
            .code(),
        Some(83)
    );
    // Nothing was recorded twice.
    assert_eq!(s.cmd::<i64>(&["ZCARD", "{cron:sync}:results"]), 1);
}

#[test]
fn a_failed_run_is_done_and_keeps_its_text_result() {
    let s = Server::start();
    let (token, _) = won(&claim(&s, "j", "1000", &[]));
    let out = finish(
        &s,
        "j",
        "1000",
        &token,
        &["--status", "failed", "--result", "exit \"3\""],
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(state(&s, "j")["1000:status"], "failed");
    let results: Vec<String> = s.cmd(&["ZRANGE", "{cron:j}:results", "0", "-1"]);
    let member: Value = serde_json::from_str(&results[0]).unwrap();
    assert_eq!(member["status"], "failed");
    assert_eq!(member["result"], "exit \"3\"");
    assert_eq!(claim(&s, "j", "1000", &[]).status.code(), Some(81));
}

#[test]
fn an_expired_lease_is_taken_over_as_the_next_attempt() {
    let s = Server::start();
    let slot = "1796220300000";
    let (first, _) = won(&claim(
        &s,
        "sync",
        slot,
        &["--lease", "300ms", "--runner", "a"],
    ));
    common::wait_for_lease_end(&s, "sync", slot);
    let (second, attempt) = won(&claim(&s, "sync", slot, &["--runner", "b"]));
    assert_eq!(attempt, 2);
    assert_ne!(first, second);
    let st = state(&s, "sync");
    assert_eq!(st[&format!("{slot}:attempt")], "2");
    assert_eq!(st[&format!("{slot}:token")], second);
    assert_eq!(st[&format!("{slot}:runner")], "b");
    assert_eq!(st[&format!("{slot}:status")], "running");

    // The first holder is out: it can neither heartbeat nor finish.
    let out = heartbeat(&s, "sync", slot, &first, &[]);
    assert_eq!(out.status.code(), Some(83));
    assert_eq!(json(&out)["runner"], "b");
    assert_eq!(
        finish(&s, "sync", slot, &first, &["--status", "ok"])
            .status
            .code(),
        Some(83)
    );
    // Attempt 1 is in the history as interrupted.
    assert_eq!(
        s.ended_attempts("sync"),
        vec![("1".to_string(), "a".to_string(), "interrupted".to_string())]
    );
    assert_eq!(
        finish(&s, "sync", slot, &second, &["--status", "ok"])
            .status
            .code(),
        Some(0)
    );
}

#[test]
fn an_expired_lease_nobody_took_over_can_still_be_renewed_by_its_holder() {
    let s = Server::start();
    let (token, _) = won(&claim(&s, "j", "5000", &["--lease", "200ms"]));
    common::wait_for_lease_end(&s, "j", "5000");
    let out = heartbeat(&s, "j", "5000", &token, &["--lease", "30s"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(claim(&s, "j", "5000", &[]).status.code(), Some(82));
}

#[test]
fn with_attempts_exhausted_the_run_ends_interrupted() {
    let s = Server::start();
    let lease = ["--lease", "200ms", "--max-attempts", "2"];
    won(&claim(&s, "j", "7000", &lease));
    common::wait_for_lease_end(&s, "j", "7000");
    let (_, attempt) = won(&claim(&s, "j", "7000", &lease));
    assert_eq!(attempt, 2);
    common::wait_for_lease_end(&s, "j", "7000");
    let out = claim(&s, "j", "7000", &lease);
    assert_eq!(out.status.code(), Some(81), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["outcome"], "done");
    assert_eq!(v["status"], "interrupted");
    let st = state(&s, "j");
    assert_eq!(st["7000:status"], "interrupted");
    assert!(s.in_progress("j").is_empty());
    // Both attempts are in the history as interrupted, each with a result.
    let statuses: Vec<(String, String)> = s
        .ended_attempts("j")
        .into_iter()
        .map(|(a, _, st)| (a, st))
        .collect();
    assert_eq!(
        statuses,
        vec![
            ("1".to_string(), "interrupted".to_string()),
            ("2".to_string(), "interrupted".to_string())
        ]
    );
    assert_eq!(s.cmd::<i64>(&["ZCARD", "{cron:j}:results"]), 2);
    // And it stays done.
    assert_eq!(claim(&s, "j", "7000", &lease).status.code(), Some(81));
}

#[test]
fn overlap_is_refused_while_an_older_run_holds_a_live_lease() {
    let s = Server::start();
    won(&claim(&s, "j", "60000", &["--runner", "old"]));
    let out = claim(&s, "j", "120000", &[]);
    assert_eq!(out.status.code(), Some(80), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["outcome"], "overlap");
    assert_eq!(v["blocking_slot"], 60000);
    assert_eq!(v["runner"], "old");
    // Nothing was written for the refused run.
    assert!(!state(&s, "j").contains_key("120000:status"));

    // --overlap allow skips the check.
    won(&claim(&s, "j", "120000", &["--overlap", "allow"]));
    // A late claim of an older slot meets the newer runs in progress: under forbid no new run
    // starts beside a live one, older or newer (the oldest is named).
    let out = claim(&s, "j", "30000", &[]);
    assert_eq!(out.status.code(), Some(80), "{}", stderr(&out));
    assert_eq!(json(&out)["blocking_slot"], 60000);
    won(&claim(&s, "j", "30000", &["--overlap", "allow"]));
}

#[test]
fn an_older_run_with_an_expired_lease_is_no_overlap() {
    let s = Server::start();
    won(&claim(&s, "j", "60000", &["--lease", "200ms"]));
    common::wait_for_lease_end(&s, "j", "60000");
    won(&claim(&s, "j", "120000", &[]));
}

#[test]
fn twenty_four_concurrent_claims_have_exactly_one_winner() {
    let s = Server::start();
    let outputs = common::race(&s, 24, |i| {
        let runner = format!("r{i}");
        common::owned(&[
            "claim",
            "race",
            "--slot",
            "1796220300000",
            "--json",
            "--runner",
            &runner,
        ])
    });
    let codes = common::codes(&outputs);
    assert_eq!(codes.iter().filter(|c| **c == 0).count(), 1, "{codes:?}");
    assert_eq!(codes.iter().filter(|c| **c == 82).count(), 23, "{codes:?}");
    let winner = outputs.iter().find(|o| o.status.code() == Some(0)).unwrap();
    let v = json(winner);
    let st = state(&s, "race");
    assert_eq!(st["1796220300000:token"], v["token"].as_str().unwrap());
    assert_eq!(st["1796220300000:runner"], v["runner"].as_str().unwrap());
    // Every loser was told who won.
    for o in outputs.iter().filter(|o| o.status.code() == Some(82)) {
        assert_eq!(json(o)["runner"], v["runner"]);
    }
}

#[test]
fn history_is_trimmed_but_never_an_active_or_claimable_run() {
    let s = Server::start();
    let history = ["--history-size", "3", "--overlap", "allow"];
    // An old run left in progress: it must survive every trim.
    won(&claim(&s, "j", &OLD.to_string(), &history));
    for i in 1..=6 {
        let slot = (OLD + i * 60_000).to_string();
        let (token, _) = won(&claim(&s, "j", &slot, &history));
        let out = finish(&s, "j", &slot, &token, &["--status", "ok"]);
        assert_eq!(out.status.code(), Some(0));
    }
    // A run inside the claimable window (now) is kept even over the size.
    won(&claim(&s, "j", "now", &history));
    let slots: Vec<String> = s.runs("j").keys().map(|k| k.to_string()).collect();
    assert!(
        slots.contains(&OLD.to_string()),
        "the active run was trimmed: {slots:?}"
    );
    assert!(slots.len() <= 4, "{slots:?}");
    assert!(slots.contains(&(OLD + 6 * 60_000).to_string()));
    // State, results and runs of trimmed slots are gone; of kept ones, present.
    let st = state(&s, "j");
    for slot in [OLD + 60_000, OLD + 2 * 60_000] {
        assert!(
            !st.keys().any(|k| k.starts_with(&format!("{slot}:"))),
            "{slot} kept"
        );
    }
    for r in s.results("j") {
        assert!(slots.contains(&r.slot.to_string()), "orphan result {r:?}");
    }
    assert!(s.results("j").len() <= 3);
    assert_eq!(st[&format!("{OLD}:status")], "running");
}

#[test]
fn a_newer_store_format_is_refused_and_nothing_is_written() {
    let s = Server::start();
    let _: () = s.cmd(&["SET", "cron:format", "3"]);
    for args in [
        vec!["claim", "sync", "--slot", "now"],
        vec!["heartbeat", "sync", "--slot", "now", "--token", "t"],
        vec![
            "finish", "sync", "--slot", "now", "--token", "t", "--status", "ok",
        ],
    ] {
        let out = s.anarchon().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(91), "{args:?}");
        let err = stderr(&out);
        assert!(err.starts_with("error: "), "{err}");
        assert!(err.contains("ANARCHON_STORE_FORMAT"), "{err}");
        assert!(
            err.contains("format 3") && err.contains("format 2"),
            "{err}"
        );
        assert!(err.contains("upgrade"), "{err}");
        assert_eq!(s.keys(), vec!["cron:format"]);
        assert_eq!(s.cmd::<String>(&["GET", "cron:format"]), "3");
    }
    // An older or equal format is fine; another prefix has its own format key.
    let out = claim(&s, "sync", "now", &["--prefix", "other:"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // A new store is created in format 1, the seed's layout.
    assert_eq!(s.cmd::<String>(&["GET", "other:format"]), "1");
}

#[test]
fn wrong_key_types_are_reported_with_the_key_name() {
    let s = Server::start();
    for (format, key, expected) in [
        ("2", "{cron:sync}:live", "hash"),
        ("1", "{cron:sync}:active", "set"),
    ] {
        let _: () = s.cmd(&["SET", "cron:format", format]);
        let _: () = s.cmd(&["SET", key, "oops"]);
        let out = claim(&s, "sync", "now", &[]);
        assert_eq!(out.status.code(), Some(92));
        let err = stderr(&out);
        assert!(err.contains(key), "{err}");
        assert!(err.contains("string") && err.contains(expected), "{err}");
        assert_eq!(s.cmd::<i64>(&["EXISTS", "{cron:sync}:state"]), 0);
        let _: () = s.cmd(&["DEL", key]);
    }

    let _: () = s.cmd(&["DEL", "cron:format"]);
    let _: () = s.cmd(&["HSET", "cron:format", "v", "1"]);
    let out = claim(&s, "other", "now", &[]);
    assert_eq!(out.status.code(), Some(92));
    assert!(stderr(&out).contains("cron:format"), "{}", stderr(&out));
}

#[test]
fn garbage_in_the_state_hash_is_an_error_naming_the_key() {
    let s = Server::start();
    let _: () = s.cmd(&["SET", "cron:format", "1"]);
    let _: () = s.cmd(&[
        "HSET",
        "{cron:j}:state",
        "1000:status",
        "running",
        "1000:attempt",
        "two",
        "1000:lease_end",
        "1",
        "1000:token",
        "t",
    ]);
    let out = claim(&s, "j", "1000", &[]);
    assert_eq!(out.status.code(), Some(92));
    let err = stderr(&out);
    assert!(
        err.contains("{cron:j}:state") && err.contains("1000:attempt"),
        "{err}"
    );
    let _: () = s.cmd(&["SET", "cron:format", "one"]);
    let out = claim(&s, "k", "1000", &[]);
    assert_eq!(out.status.code(), Some(92));
    assert!(stderr(&out).contains("cron:format"));
}

#[test]
fn bad_job_names_are_usage_errors_before_any_connection() {
    // Pointed at a dead port: a usage error must not even try to connect.
    let url = format!("redis://127.0.0.1:{}", common::dead_port());
    let long = "x".repeat(201);
    for job in ["", "a{b}", "a}", "tab\tname", long.as_str()] {
        let out = common::anarchon()
            .args(["claim", job, "--slot", "now", "--redis", &url])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{job:?}: {}", stderr(&out));
        assert!(stderr(&out).starts_with("error: "));
    }
    for args in [
        vec!["claim", "j", "--slot", "yesterday"],
        vec!["claim", "j", "--slot", "now", "--lease", "0s"],
        vec!["claim", "j", "--slot", "now", "--lease", "30"],
        vec!["claim", "j", "--slot", "now", "--max-attempts", "0"],
        vec!["claim", "j"],
        vec![
            "finish",
            "j",
            "--slot",
            "1",
            "--token",
            "t",
            "--status",
            "ok",
            "--result-json",
            "{no",
        ],
        vec![
            "finish", "j", "--slot", "1", "--token", "t", "--status", "maybe",
        ],
    ] {
        let out = common::anarchon()
            .args(&args)
            .args(["--redis", &url])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn an_unreachable_server_is_a_connection_error_without_the_password() {
    let url = format!("redis://user:hunter2@127.0.0.1:{}", common::dead_port());
    let out = common::anarchon()
        .args(["claim", "j", "--slot", "now", "--redis", &url])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(90));
    let err = stderr(&out);
    assert!(err.contains("cannot reach Redis"), "{err}");
    assert!(err.contains("hint:"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
}

#[test]
fn the_redis_url_falls_back_to_redis_url() {
    // With no --redis and no $ANARCHON_REDIS_URL (common::anarchon clears both), the claim goes
    // to $REDIS_URL's server: the run is in this test's own server, and nowhere else could put it
    // there (a server on localhost:6379 would have it instead).
    let s = Server::start();
    let out = common::anarchon()
        .env("REDIS_URL", &s.url)
        .args(["claim", "from-redis-url", "--slot", "60000", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["outcome"], "won", "{}", stderr(&out));
    let run = s
        .run("from-redis-url", "60000")
        .expect("the claim is in $REDIS_URL's server");
    assert_eq!(run.status, "running");
    assert_eq!(
        json(&out)["token"].as_str(),
        Some(run.token.as_str()),
        "the run in the server is the one this claim won"
    );
    // And it is $REDIS_URL that is used, not a default: a $REDIS_URL where nothing listens fails
    // naming it, whatever listens on localhost:6379.
    let dead = format!("redis://127.0.0.1:{}", common::dead_port());
    let out = common::anarchon()
        .env("REDIS_URL", &dead)
        .args(["claim", "from-redis-url", "--slot", "120000"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(90), "{}", stderr(&out));
    assert!(stderr(&out).contains(&dead), "{}", stderr(&out));
}

#[test]
fn scripts_are_reloaded_after_script_flush() {
    let s = Server::start();
    won(&claim(&s, "j", "1000", &[]));
    let _: () = s.cmd(&["SCRIPT", "FLUSH"]);
    won(&claim(&s, "j", "2000", &["--overlap", "allow"]));
}

#[test]
fn the_lease_is_judged_by_the_server_clock_not_the_client_clock() {
    if common::skewed_anarchon("+0").is_none() {
        assert!(
            !crate::common::nothing_may_be_skipped(),
            "faketime is missing: .ci/run must install it"
        );
        eprintln!("skipped: faketime is not installed");
        return;
    }
    let s = Server::start();
    let (_, _) = won(&claim(&s, "j", "1796220300000", &["--lease", "30s"]));
    // A claimant whose clock is two hours ahead would think the 30 s lease long expired.
    for skew in ["+2h", "-2h"] {
        let out = common::skewed_anarchon(skew)
            .unwrap()
            .args([
                "claim",
                "j",
                "--slot",
                "1796220300000",
                "--json",
                "--redis",
                &s.url,
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(82), "{skew}: {}", stderr(&out));
        // `now` comes from the server too: the skewed client names the same minute.
        let out = common::skewed_anarchon(skew)
            .unwrap()
            .args(["claim", "k", "--slot", "now", "--json", "--redis", &s.url])
            .output()
            .unwrap();
        let slot = json(&out)["slot"].as_i64().unwrap();
        assert!((s.now_ms() - slot).abs() < 120_000, "{skew}: slot {slot}");
    }
}

#[test]
fn text_output_names_the_outcome_and_the_token() {
    let s = Server::start();
    let out = s
        .anarchon()
        .args([
            "claim",
            "sync",
            "--slot",
            "1796220300000",
            "--runner",
            "h:1",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("won sync @ 2026-12-02T14:05:00.000Z"),
        "{text}"
    );
    assert!(text.contains("token"), "{text}");
    assert!(!text.contains('\x1b'), "colour when piped: {text}");
    let out = s
        .anarchon()
        .args(["claim", "sync", "--slot", "1796220300000"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("running sync") && text.contains("held by h:1"),
        "{text}"
    );
}

#[test]
fn help_documents_the_exit_codes() {
    let out = common::anarchon().arg("--help").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Exit codes"), "{text}");
    assert!(text.contains("82  running"), "{text}");
}

/// Format 1's finish checks no key with TYPE: it writes :active, :results and :runs in that order,
/// each through a checked call, and one of another type undoes the writes before it. So a key of
/// another type is still refused (92, naming it) with nothing written, and the run goes on.
#[test]
fn format_1_finish_refuses_a_key_of_another_type_and_writes_nothing() {
    let s = Server::start();
    let _: () = s.cmd(&["SET", "cron:format", "1"]);
    let slot = "1796220300000";
    let (token, _) = won(&claim(&s, "f", slot, &[]));
    let finish = || {
        s.anarchon()
            .args([
                "finish", "f", "--slot", slot, "--token", &token, "--status", "ok",
            ])
            .output()
            .unwrap()
    };
    for (key, kind) in [
        ("{cron:f}:active", "set"),
        ("{cron:f}:results", "zset"),
        ("{cron:f}:runs", "stream"),
    ] {
        let before: Vec<(String, String)> = s.cmd(&["HGETALL", "{cron:f}:state"]);
        let saved: Option<Vec<u8>> = s.cmd(&["DUMP", key]);
        let members: Vec<String> = s.cmd(&["SMEMBERS", "{cron:f}:active"]);
        let _: () = s.cmd(&["DEL", key]);
        let _: () = s.cmd(&["SET", key, "oops"]);
        let out = finish();
        assert_eq!(out.status.code(), Some(92), "{key}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(key) && err.contains(kind), "{err}");
        // Nothing written: the state, :active and the stream/zset as they were.
        let after: Vec<(String, String)> = s.cmd(&["HGETALL", "{cron:f}:state"]);
        assert_eq!(before, after, "{key}");
        let _: () = s.cmd(&["DEL", key]);
        if let Some(dump) = saved {
            let _: () = redis::cmd("RESTORE")
                .arg(key)
                .arg(0)
                .arg(dump)
                .query(&mut s.client())
                .unwrap();
        }
        if key != "{cron:f}:active" {
            let now: Vec<String> = s.cmd(&["SMEMBERS", "{cron:f}:active"]);
            assert_eq!(members, now, "{key}: :active changed");
        }
        assert_eq!(s.cmd::<i64>(&["ZCARD", "{cron:f}:results"]), 0, "{key}");
    }
    // With the keys sound again, the finish is recorded once.
    let out = finish();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(s.cmd::<i64>(&["ZCARD", "{cron:f}:results"]), 1);
    assert_eq!(s.cmd::<i64>(&["XLEN", "{cron:f}:runs"]), 1);
}

/// Format 1 paces its history work by a draw (the microseconds of the claim's `TIME`), not by
/// counting `:slots` on every claim: about one new run in every batch (1% of the history size,
/// here 200 runs: 2) trims the excess and compacts old ended runs to their status. Over many runs
/// the history stays within a few batches of its size, and every ended run older than the claim
/// horizon keeps `status` alone but the newest few that await the next draw.
/// Ended runs are compacted however recent (only `status` stays in `:state`): within the claim
/// horizon too, where earlier builds kept every field for their late claims. A late claim of a
/// compacted run is still answered done, and history still has every attempt's facts.
#[test]
fn format_1_compacts_recent_ended_runs_and_late_claims_still_find_them_done() {
    let s = Server::start();
    let _: () = s.cmd(&["SET", "cron:format", "1"]);
    let minute = 60_000;
    let base = s.now_ms() / minute * minute - 40 * minute;
    // History 100: a batch of 1, so every claim of a new run does the history's work.
    for i in 0..40 {
        let slot = (base + i * minute).to_string();
        let (token, _) = won(&claim(&s, "recent", &slot, &["--history-size", "100"]));
        let out = finish(&s, "recent", &slot, &token, &["--status", "ok"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let fields: Vec<String> = s.cmd(&["HKEYS", "{cron:recent}:state"]);
    let full = fields.iter().filter(|f| f.ends_with(":token")).count();
    assert_eq!(
        full, 1,
        "only the newest run, ended after the last claim: {fields:?}"
    );
    assert_eq!(fields.iter().filter(|f| f.ends_with(":status")).count(), 40);
    let out = claim(&s, "recent", &base.to_string(), &[]);
    assert_eq!(out.status.code(), Some(81), "{}", stderr(&out));
    assert_eq!(json(&out)["status"], "finished");
    // Who ran it and which attempt, from its member (the state no longer says).
    assert_eq!(json(&out)["attempt"], 1, "{}", json(&out));
    assert!(json(&out)["runner"].as_str().is_some_and(|r| !r.is_empty()));
    let v = json(&s.cli(&["history", "recent", "--last", "40", "--json"]));
    let entries = v["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 40);
    assert!(
        entries.iter().all(
            |e| e["runner"].as_str().is_some_and(|r| !r.is_empty()) && e["claimed_at"].is_i64()
        ),
        "{v}"
    );
}

/// Format 1's `:state` of a small history (about a hundred runs) would stay a listpack, where every
/// field a claim or finish reads or writes is a scan of the whole hash: the claims that do history
/// work move it to a hashtable once it holds 64 fields (a field too long for a listpack, written
/// and deleted in the same script). Readers see only the layout's fields.
#[test]
fn format_1_state_of_a_small_history_is_kept_a_hashtable() {
    let s = Server::start();
    let _: () = s.cmd(&["SET", "cron:format", "1"]);
    // History 100: a batch of 1, so every claim of a new run does the history's work.
    for i in 0..64 {
        let slot = (OLD + i * 60_000).to_string();
        let (token, _) = won(&claim(&s, "small", &slot, &["--history-size", "100"]));
        let out = finish(&s, "small", &slot, &token, &["--status", "ok"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let encoding: String = s.cmd(&["OBJECT", "ENCODING", "{cron:small}:state"]);
    assert_eq!(encoding, "hashtable");
    let fields: Vec<String> = s.cmd(&["HKEYS", "{cron:small}:state"]);
    assert_eq!(
        fields.len(),
        64 + 6,
        "64 statuses, the newest run's other fields: {fields:?}"
    );
    assert!(
        fields.iter().all(|f| f
            .split_once(':')
            .is_some_and(|(slot, _)| slot.parse::<i64>().is_ok())),
        "{fields:?}"
    );
    // Every reader reads it as before: inspect checks every field of the hash.
    s.cli(&["inspect", "small", "--json"]).expect(0);
}

#[test]
fn format_1_history_work_keeps_up_with_claims_though_paced_by_a_draw() {
    let s = Server::start();
    let _: () = s.cmd(&["SET", "cron:format", "1"]);
    let size = 200;
    let runs = 260;
    for i in 0..runs {
        let slot = (OLD + i * 60_000).to_string();
        let (token, _) = won(&claim(
            &s,
            "paced",
            &slot,
            &["--history-size", &size.to_string()],
        ));
        let out = finish(&s, "paced", &slot, &token, &["--status", "ok"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let kept: i64 = s.cmd(&["ZCARD", "{cron:paced}:slots"]);
    // A run over the size lasts until the next draw: 30 claims in a row without one (odds 2^-30)
    // would be needed to pass this bound.
    assert!(
        (size..=size + 30).contains(&kept),
        "{kept} runs kept of a history of {size}"
    );
    let trimmed_to: i64 = s.cmd(&["HGET", "{cron:paced}:job", "trimmed_to"]);
    let oldest: Vec<i64> = s.cmd(&["ZRANGE", "{cron:paced}:slots", "0", "0"]);
    assert!(trimmed_to < oldest[0], "{trimmed_to} {oldest:?}");
    // Compaction: each kept run has `status`; a run that kept more has not been compacted yet.
    let fields: Vec<String> = s.cmd(&["HKEYS", "{cron:paced}:state"]);
    let statuses = fields.iter().filter(|f| f.ends_with(":status")).count();
    let full = fields.iter().filter(|f| f.ends_with(":token")).count();
    assert_eq!(
        statuses as i64, kept,
        "every run in history keeps its status"
    );
    assert!(full <= 32, "{full} old ended runs are not compacted");
    // A run's fencing token (`:job` `fence:<slot>`) goes with its other fields: kept by exactly
    // the runs not compacted yet; the job's last fence is the number of claims won.
    let job: HashMap<String, String> = s.cmd(&["HGETALL", "{cron:paced}:job"]);
    let fences = job.keys().filter(|f| f.starts_with("fence:")).count();
    assert_eq!(fences, full, "{job:?}");
    assert_eq!(job["fence"], runs.to_string());
    let compacted_to: i64 = s.cmd(&["HGET", "{cron:paced}:job", "compacted_to"]);
    assert!(compacted_to >= OLD + (runs - 33) * 60_000, "{compacted_to}");
    // The runs stream keeps one entry per kept attempt, lean: the ID is the end, no `kind`, and
    // the runner and claim time are the member's.
    let entries: i64 = s.cmd(&["XLEN", "{cron:paced}:runs"]);
    assert_eq!(entries, kept);
    let newest: Vec<(String, Vec<(String, String)>)> =
        s.cmd(&["XREVRANGE", "{cron:paced}:runs", "+", "-", "COUNT", "1"]);
    let names: Vec<&str> = newest[0].1.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(names, ["slot", "attempt", "token", "status"]);
    // Finish read no TIME: its attempt ended when its entry was added, to the millisecond.
    let slot = &newest[0].1[0].1;
    let members: Vec<String> = s.cmd(&["ZRANGEBYSCORE", "{cron:paced}:results", slot, slot]);
    let member: Value = serde_json::from_str(&members[0]).unwrap();
    let id_ms: i64 = newest[0].0.split('-').next().unwrap().parse().unwrap();
    assert_eq!(member["ended_at"], id_ms, "{}", members[0]);
    // history pairs each entry with its member for the rest.
    let v = json(&s.cli(&["history", "paced", "--last", "1", "--json"]));
    let entry = &v["entries"][0];
    assert_eq!(entry["runner"], member["runner"], "{v}");
    assert_eq!(entry["claimed_at"], member["claimed_at"], "{v}");
}
