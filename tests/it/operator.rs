//! Operator commands (list, inspect, history, trim, run-now, doctor) against data written by the
//! lease scripts themselves and by `run`.

use crate::common;
use std::time::Duration;

use anarchon::store::RunKind;
use anarchon::strategy::claim::{ClaimRequest, HistoryPolicy};
use anarchon::strategy::lease::claim_args;

use crate::common::{Server, json, stderr};
use serde_json::Value;

/// Writes `count` finished runs per job straight through the real claim and finish scripts, in
/// pipelines: fast enough for thousands of runs. In the test store format (format 2 unless
/// `ANARCHON_TEST_STORE_FORMAT=1`).
fn seed(s: &Server, jobs: &[String], runs: i64, status: impl Fn(i64) -> &'static str) {
    use anarchon::store::LeaseFormat;
    let format = Server::test_store_format();
    let scripts = LeaseFormat::from_number(format)
        .expect("a known format")
        .scripts();
    let (claim, finish) = (scripts.claim, scripts.finish);
    let (claim, finish) = (
        redis::Script::new(claim.source()),
        redis::Script::new(finish.source()),
    );
    let mut c = s.client();
    let _: () = redis::cmd("SET")
        .arg("cron:format")
        .arg(format)
        .query(&mut c)
        .unwrap();
    // Pipelines send EVALSHA only: load the scripts first.
    for script in [&claim, &finish] {
        let _: String = script.prepare_invoke().load(&mut c).unwrap();
    }
    for chunk in jobs.chunks(500) {
        let mut pipe = redis::pipe();
        for job in chunk {
            let keys = anarchon::store::LeaseKeys::new("cron:", job);
            let (claim_keys, finish_keys): (Vec<&str>, Vec<&str>) = if format == 1 {
                (keys.with_job().to_vec(), keys.all().to_vec())
            } else {
                (keys.format_2().to_vec(), keys.format_2().to_vec())
            };
            for i in 0..runs {
                let slot = (1_000_000 + i * 60_000).to_string();
                let token = format!("t{i}");
                let mut inv = claim.prepare_invoke();
                for key in &claim_keys {
                    inv.key(*key);
                }
                let req = ClaimRequest {
                    slot: slot.parse().unwrap(),
                    token: token.clone(),
                    runner: format!("host:{i}"),
                    lease: Duration::from_secs(30),
                    max_attempts: 3,
                    overlap: anarchon::strategy::OverlapPolicy::Allow,
                    kind: RunKind::Scheduled,
                    history: HistoryPolicy {
                        size: 100_000,
                        ..HistoryPolicy::default()
                    },
                    continues: false,
                    owed_within: std::time::Duration::ZERO,
                };
                for arg in claim_args(&req) {
                    inv.arg(arg);
                }
                pipe.invoke_script(&inv);
                let mut inv = finish.prepare_invoke();
                for key in &finish_keys {
                    inv.key(*key);
                }
                inv.arg(&slot)
                    .arg(&token)
                    .arg(status(i))
                    .arg(format!("{{\"i\":{i}}}"));
                pipe.invoke_script(&inv);
            }
        }
        pipe.ignore_errors();
        let replies: Vec<redis::Value> = pipe.query(&mut c).unwrap();
        let errors: Vec<_> = replies
            .iter()
            .filter(|v| matches!(v, redis::Value::ServerError(_)))
            .collect();
        assert!(errors.is_empty(), "seeding failed: {:?}", errors.first());
    }
}

fn claim_json(s: &Server, job: &str, slot: &str, extra: &[&str]) -> Value {
    let out = s.cli(&[&["claim", job, "--slot", slot, "--json"], extra].concat());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    json(&out)
}

/// How many reads the server has processed, where INFO reports it (not Redis 5).
fn reads_processed(s: &Server) -> Option<i64> {
    s.info_field("stats", "total_reads_processed")
        .map(|v| v.parse().unwrap())
}

#[test]
fn list_on_an_empty_store() {
    let s = Server::start();
    let _: () = s.cmd(&["DEL", "cron:format"]);
    let out = s.cli(&["list", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let v = json(&out);
    assert_eq!(v["jobs"], Value::Array(vec![]));
    assert_eq!(v["format"], Value::Null);
    let out = s.cli(&["list"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("no jobs"));
    assert!(s.keys().is_empty(), "list wrote something");
}

#[test]
fn list_shows_every_job_of_both_layouts_sorted() {
    let s = Server::start();
    for job in ["charlie", "alpha", "bravo"] {
        claim_json(&s, job, "1000", &["--runner", &format!("{job}-host")]);
    }
    let token = claim_json(&s, "alpha", "2000", &["--overlap", "allow"])["token"]
        .as_str()
        .unwrap()
        .to_string();
    let before_finish = s.now_ms();
    let out = s.cli(&[
        "finish", "alpha", "--slot", "2000", "--token", &token, "--status", "failed",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let after_finish = s.now_ms();
    // A claim-only job, as the stream-id strategy writes it.
    let _: String = s.cmd(&[
        "XADD",
        "cron:legacy:runs",
        "5000-0",
        "slot",
        "5000",
        "token",
        "x",
        "runner",
        "old",
    ]);

    let v = json(&s.cli(&["list", "--json"]));
    let jobs = v["jobs"].as_array().unwrap();
    let names: Vec<&str> = jobs.iter().map(|j| j["job"].as_str().unwrap()).collect();
    assert_eq!(names, vec!["alpha", "bravo", "charlie", "legacy"]);
    let alpha = &jobs[0];
    assert_eq!(alpha["layout"], "lease");
    assert_eq!(alpha["in_progress"], 1);
    assert_eq!(alpha["last_slot"], 2000);
    assert_eq!(alpha["last_status"], "failed");
    assert_eq!(alpha["history_entries"], 1);
    // The result is the finish above, and its age is measured on the server's clock the
    // document was read at.
    let last_result_at = alpha["last_result_at"].as_i64().unwrap();
    assert!(
        (before_finish..=after_finish).contains(&last_result_at),
        "{before_finish}..={after_finish}: {alpha}"
    );
    assert_eq!(
        alpha["last_result_age_ms"].as_i64(),
        Some(v["server_time"].as_i64().unwrap() - last_result_at),
        "{v}"
    );
    assert_eq!(jobs[1]["last_status"], "running");
    assert_eq!(jobs[1]["last_runner"], "bravo-host");
    assert_eq!(jobs[3]["layout"], "claim-only");
    assert_eq!(jobs[3]["last_slot"], 5000);
    assert_eq!(jobs[3]["last_runner"], "old");

    let v = json(&s.cli(&["list", "--json", "--pattern", "b*"]));
    assert_eq!(v["jobs"].as_array().unwrap().len(), 1);
    let v = json(&s.cli(&["list", "--json", "--strategy", "stream-id"]));
    assert_eq!(v["jobs"].as_array().unwrap().len(), 1);
    assert_eq!(v["jobs"][0]["job"], "legacy");
    let v = json(&s.cli(&["list", "--json", "--strategy", "lease"]));
    assert_eq!(v["jobs"].as_array().unwrap().len(), 3);

    // Piped text: aligned columns, no colour, no borders.
    let out = s.cli(&["list"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("JOB"), "{text}");
    assert!(lines[1].starts_with("alpha "), "{text}");
    assert!(!text.contains('\x1b') && !text.contains('│'), "{text}");
}

#[test]
fn list_of_5000_jobs_is_pipelined() {
    let s = Server::start();
    let jobs: Vec<String> = (0..5000).map(|i| format!("job{i:05}")).collect();
    seed(&s, &jobs, 1, |_| "finished");
    let before = reads_processed(&s);
    let out = s.cli(&["list", "--json"]);
    let after = reads_processed(&s);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    let listed = v["jobs"].as_array().unwrap();
    assert_eq!(listed.len(), 5000);
    assert_eq!(listed[0]["job"], "job00000");
    assert_eq!(listed[4999]["job"], "job04999");
    assert!(
        listed
            .iter()
            .all(|j| j["last_status"] == "finished" && j["history_entries"] == 1)
    );
    // SCAN pages (25000 keys / 1000 per page) plus two pipelines per 500 jobs: far below one read
    // per job. (A pipeline may arrive in a few reads; allow for that.)
    match (before, after) {
        (Some(before), Some(after)) => {
            let reads = after - before;
            assert!(reads < 400, "{reads} reads for 5000 jobs: not pipelined");
        }
        _ => common::skip("INFO has no total_reads_processed: the read count is not checked"),
    }
}

/// `list --json | head -c 100` in an incident: the reader goes away mid-output. The output is
/// streamed as it is encoded; a closed pipe ends it quietly (no panic, no error, exit 0).
#[test]
fn list_json_into_a_closed_pipe_ends_quietly() {
    use std::io::Read;
    use std::process::Stdio;
    let s = Server::start();
    let jobs: Vec<String> = (0..2000).map(|i| format!("job{i:05}")).collect();
    seed(&s, &jobs, 1, |_| "finished");
    let mut child = s
        .anarchon_process()
        .args(["list", "--json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Read the first bytes (the output has started), then close the pipe: ~1 MB remains unwritten.
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 100];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    assert!(
        first.starts_with(b"{"),
        "{}",
        String::from_utf8_lossy(&first)
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "", "a closed pipe is not an error");
}

#[test]
fn inspect_shows_active_runs_history_and_keys() {
    let s = Server::start();
    seed(&s, &["billing".to_string()], 3, |i| {
        if i == 1 { "failed" } else { "finished" }
    });
    let v = claim_json(
        &s,
        "billing",
        "now",
        &["--runner", "live-host", "--lease", "1m"],
    );
    let token = v["token"].as_str().unwrap();

    let out = s.cli(&["inspect", "billing", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let d = json(&out);
    assert_eq!(d["layout"], "lease");
    let format = Server::test_store_format();
    assert_eq!(d["format"], format);
    let active = d["active"].as_array().unwrap();
    assert_eq!(active.len(), 1);
    assert_eq!(active[0]["token"], token, "the whole token in JSON");
    assert_eq!(active[0]["runner"], "live-host");
    let left = active[0]["lease_left_ms"].as_i64().unwrap();
    assert!(left > 50_000 && left <= 60_000, "{left}");
    let runs = d["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    assert_eq!(runs[0]["slot"], 1_000_000 + 2 * 60_000, "newest first");
    assert_eq!(runs[1]["status"], "failed");
    assert_eq!(runs[1]["result"]["i"], 1);
    let keys: Vec<&str> = d["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys[0], "{cron:billing}:state");
    assert!(d["keys"][0]["memory_bytes"].as_u64().unwrap() > 0);
    assert_eq!(
        d["keys"][0]["type"],
        if format == 1 { "hash" } else { "string" }
    );

    let out = s.cli(&["inspect", "billing", "--last", "1", "--json"]);
    assert_eq!(json(&out)["runs"].as_array().unwrap().len(), 1);

    // Text: the table names the live run; piped, the token is whole.
    let text = String::from_utf8_lossy(&s.cli(&["inspect", "billing"]).stdout).into_owned();
    assert!(
        text.contains("active runs: 1") && text.contains(token),
        "{text}"
    );
}

#[test]
fn inspect_of_a_missing_job_suggests_near_names() {
    let s = Server::start();
    claim_json(&s, "billing", "1000", &[]);
    let out = s.cli(&["inspect", "biling"]);
    assert_eq!(out.status.code(), Some(85));
    let err = stderr(&out);
    assert!(err.starts_with("error: no job \"biling\""), "{err}");
    assert!(err.contains("did you mean billing?"), "{err}");
    let out = s.cli(&["history", "zzz"]);
    assert_eq!(out.status.code(), Some(85));
}

#[test]
fn inspect_and_history_name_a_key_of_the_wrong_type() {
    let s = Server::start();
    let _: () = s.cmd(&["SET", "{cron:j}:runs", "x"]);
    for cmd in ["inspect", "history"] {
        let out = s.cli(&[cmd, "j"]);
        assert_eq!(out.status.code(), Some(92), "{cmd}");
        assert!(stderr(&out).contains("{cron:j}:runs"), "{}", stderr(&out));
    }
    let out = s.cli(&["list"]);
    assert_eq!(out.status.code(), Some(92));
    assert!(stderr(&out).contains("{cron:j}:runs"), "{}", stderr(&out));
}

#[test]
fn history_of_a_thousand_runs_newest_first_with_filters() {
    let s = Server::start();
    seed(&s, &["big".to_string()], 1000, |i| {
        if i % 10 == 0 { "failed" } else { "finished" }
    });
    let out = s.cli(&["history", "big", "--last", "1000", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let entries = json(&out)["entries"].as_array().unwrap().clone();
    assert_eq!(entries.len(), 1000);
    let slots: Vec<i64> = entries
        .iter()
        .map(|e| e["slot"].as_i64().unwrap())
        .collect();
    assert!(slots.windows(2).all(|w| w[0] > w[1]), "not newest first");
    assert_eq!(slots[0], 1_000_000 + 999 * 60_000);
    // Each from its claim to its end (a run's claim and finish are one pipeline apart here, so
    // most are 0 ms and some cross a millisecond: every entry is compared).
    for entry in &entries {
        assert_eq!(
            entry["duration_ms"].as_i64(),
            Some(entry["ended_at"].as_i64().unwrap() - entry["claimed_at"].as_i64().unwrap()),
            "{entry}"
        );
    }

    let failed = json(&s.cli(&[
        "history", "big", "--status", "failed", "--last", "1000", "--json",
    ]));
    let failed = failed["entries"].as_array().unwrap();
    assert_eq!(failed.len(), 100);
    assert!(failed.iter().all(|e| e["status"] == "failed"));

    let since = (1_000_000 + 990 * 60_000).to_string();
    let recent = json(&s.cli(&["history", "big", "--since", &since, "--json"]));
    assert_eq!(recent["entries"].as_array().unwrap().len(), 10);

    let default = json(&s.cli(&["history", "big", "--json"]));
    assert_eq!(default["entries"].as_array().unwrap().len(), 50);
}

#[test]
fn history_lists_runs_in_progress_first() {
    let s = Server::start();
    let out = s
        .anarchon()
        .args(["run", "--job", "h", "--slot", "1000", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    claim_json(&s, "h", "2000", &[]);
    let v = json(&s.cli(&["history", "h", "--json"]));
    let e = v["entries"].as_array().unwrap();
    assert_eq!(e[0]["status"], "running");
    assert_eq!(e[1]["status"], "finished");
    assert_eq!(e[1]["result"]["exit_code"], 0);
    let text = String::from_utf8_lossy(&s.cli(&["history", "h"]).stdout).into_owned();
    assert!(text.contains("exit 0"), "{text}");
    // KIND: a manual run (run-now with a command) beside the scheduled ones.
    s.cli(&["run", "--job", "k", "--slot", "1000", "--", "true"])
        .expect(0);
    s.cli(&["run-now", "k", "--", "true"]).expect(0);
    let text = String::from_utf8_lossy(&s.cli(&["history", "k"]).stdout).into_owned();
    let kinds: Vec<&str> = text
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert!(
        text.lines().next().unwrap().starts_with("SLOT  ") && text.contains(" KIND "),
        "{text}"
    );
    assert!(
        kinds.contains(&"manual") && kinds.contains(&"scheduled"),
        "{text}"
    );
}

#[test]
fn trim_never_touches_an_active_run_and_asks_first() {
    let s = Server::start();
    seed(&s, &["t".to_string()], 10, |_| "finished");
    // An old run still in progress.
    claim_json(&s, "t", "500000", &["--overlap", "allow"]);
    let before = s.runs("t").len();
    assert_eq!(before, 11);

    // Without a terminal and without --yes: refused, nothing removed.
    let out = s
        .anarchon()
        .args(["trim", "t", "--keep", "2"])
        .write_stdin("y\n")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--yes"), "{}", stderr(&out));
    assert_eq!(s.runs("t").len(), 11);

    let out = s.cli(&["trim", "t", "--keep", "2", "--dry-run", "--json"]);
    let v = json(&out);
    assert_eq!(v["dry_run"], true);
    assert_eq!(v["total"], 9);
    assert_eq!(s.runs("t").len(), 11);

    let out = s.cli(&["trim", "t", "--keep", "2", "--yes", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["total"], 9);
    let runs = s.runs("t");
    assert_eq!(
        runs.get(&500_000).map(|r| r.status.as_str()),
        Some("running"),
        "the active run was trimmed"
    );
    assert_eq!(runs.len(), 2);
    assert_eq!(s.cmd::<i64>(&["ZCARD", "{cron:t}:results"]), 1);
    if s.is_format_1("t") {
        assert_eq!(s.cmd::<i64>(&["XLEN", "{cron:t}:runs"]), 1);
    }

    // A run inside --protect is kept even over --keep.
    claim_json(&s, "u", "now", &[]);
    let out = s.cli(&[
        "trim",
        "u",
        "--keep",
        "1",
        "--older-than",
        "1ms",
        "--yes",
        "--json",
    ]);
    assert_eq!(json(&out)["total"], 0);
}

#[test]
fn trim_all_covers_every_lease_job() {
    let s = Server::start();
    let jobs: Vec<String> = (0..5).map(|i| format!("j{i}")).collect();
    seed(&s, &jobs, 4, |_| "finished");
    let out = s.cli(&["trim", "--all", "--keep", "1", "--yes", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["total"], 15);
    assert_eq!(v["jobs"].as_array().unwrap().len(), 5);
    for job in &jobs {
        assert_eq!(s.runs(job).len(), 1);
    }
    let out = s.cli(&["trim", "nope", "--yes"]);
    assert_eq!(out.status.code(), Some(85));
}

#[test]
fn run_now_claims_a_manual_run_for_the_caller() {
    let s = Server::start();
    let before = s.now_ms();
    let out = s.cli(&["run-now", "sync", "--claim-only", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    let slot = v["slot"].as_i64().unwrap();
    assert!(slot >= before && slot <= s.now_ms());
    let token = v["token"].as_str().unwrap();
    let slot = slot.to_string();
    assert_eq!(s.run("sync", &slot).unwrap().kind, "manual");
    let out = s.cli(&["heartbeat", "sync", "--slot", &slot, "--token", token]);
    assert_eq!(out.status.code(), Some(0));
    let out = s.cli(&[
        "finish", "sync", "--slot", &slot, "--token", token, "--status", "ok",
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(s.run("sync", &slot).unwrap().kind, "manual");
    if !s.is_format_1("sync") {
        // Format 2 keeps the kind with the ended attempt (format 1 kept it in :state).
        assert_eq!(s.results("sync")[0].kind.as_deref(), Some("manual"));
    }
}

#[test]
fn run_now_with_a_command_runs_it_like_run() {
    let s = Server::start();
    let out = s.cli(&[
        "run-now",
        "sync",
        "--json",
        "--",
        "sh",
        "-c",
        "echo $ANARCHON_JOB; exit 4",
    ]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    // Under --json stdout is the document alone (`| jq` parses it); the command's own stdout
    // went to stderr.
    let v: Value = json(&out);
    assert!(
        stderr(&out).lines().any(|l| l == "sync"),
        "{}",
        stderr(&out)
    );
    assert_eq!(v["outcome"], "ran");
    assert_eq!(v["status"], "failed");
    let slot = v["slot"].as_i64().unwrap();
    let run = s.run("sync", &slot.to_string()).unwrap();
    assert_eq!(
        (run.kind.as_str(), run.status.as_str()),
        ("manual", "failed")
    );
}

#[test]
fn doctor_reports_the_server() {
    // A server that keeps its data across a restart (appendonly): every check passes.
    let s = Server::start_with(&["--appendonly", "yes"]);
    let out = s.cli(&["doctor", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["ok"], true);
    let kind = if common::is_valkey() {
        "valkey"
    } else {
        "redis"
    };
    assert_eq!(v["server"]["kind"], kind);
    assert_eq!(v["server"]["mode"], "standalone");
    assert_eq!(
        v["strategies"],
        serde_json::json!(["lease", "stream-id", "script"])
    );
    let names: Vec<&str> = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for name in [
        "connection",
        "server",
        "strategies",
        "mode",
        "eviction",
        "persistence",
        "format",
        "scripting",
        "clock",
        "latency",
    ] {
        assert!(names.contains(&name), "{name} missing: {names:?}");
    }
    assert!(
        v["checks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["status"] == "ok"),
        "{v}"
    );
    let text = String::from_utf8_lossy(&s.cli(&["doctor"]).stdout).into_owned();
    assert!(text.lines().all(|l| l.starts_with("ok ")), "{text}");
}

#[test]
fn doctor_warns_about_eviction_and_fails_on_a_newer_format() {
    let s = Server::start_with(&["--maxmemory-policy", "allkeys-lru"]);
    let v = json(&s.cli(&["doctor", "--json"]));
    let eviction = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "eviction")
        .unwrap()
        .clone();
    assert_eq!(eviction["status"], "warn");
    assert_eq!(v["ok"], true);

    let _: () = s.cmd(&["SET", "cron:format", "7"]);
    let out = s.cli(&["doctor"]);
    assert_eq!(out.status.code(), Some(86));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("fail") && text.contains("ANARCHON_STORE_FORMAT"),
        "{text}"
    );
    // Read commands refuse a newer format too.
    let out = s.cli(&["list"]);
    assert_eq!(out.status.code(), Some(91));
}

#[test]
fn colour_follows_color_and_no_color() {
    let s = Server::start();
    let out = s.cli(&["doctor", "--color", "always"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("\x1b["));
    let out = s.cli(&["doctor"]);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("\x1b["));
    let out = s
        .anarchon()
        .env("NO_COLOR", "1")
        .args(["doctor", "--color", "auto"])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("\x1b["));
}
