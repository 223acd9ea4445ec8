//! A store that bad data cannot break, and the backend contract kept to the letter: hand-written
//! garbage, oversized input and secrets, each against a real server.

use crate::common;
use std::collections::HashMap;
use std::process::Output;

use crate::common::{Server, json, stderr};

/// Every key and its full contents, to prove that a refused command wrote nothing.
fn snapshot(s: &Server) -> Vec<(String, Vec<u8>)> {
    s.keys()
        .into_iter()
        .map(|k| {
            let dump: Vec<u8> = s.cmd(&["DUMP", &k]);
            (k, dump)
        })
        .collect()
}

/// Runs `args`, which must be refused as bad data (92) with every one of `named` in the message,
/// having written nothing.
#[track_caller]
fn refused_as_bad_data(s: &Server, args: &[&str], named: &[&str]) {
    let before = snapshot(s);
    let out = s.cli(args);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(92), "{}", out.dump());
    for name in named {
        assert!(err.contains(name), "{name} is not named: {err}");
    }
    assert!(
        !err.contains("user_script"),
        "a raw Lua error leaked: {err}"
    );
    assert_eq!(snapshot(s), before, "{args:?} wrote before failing");
}

fn won_token(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
    json(out)["token"].as_str().unwrap().to_string()
}

/// Garbage in a run's fields makes claim, heartbeat and finish refuse with 92, naming the key and
/// the field, before they write anything (format 1: nine `:state` fields per run).
#[test]
fn scripts_validate_before_their_first_write() {
    let s = Server::start();
    let format_1 = || {
        let _: () = s.cmd(&["SET", "cron:format", "1"]);
    };
    let cases: [(&str, &str, &str); 5] = [
        ("attempt", "-3", "1000:attempt"),
        ("attempt", "99999999999", "1000:attempt"),
        ("status", "paused", "1000:status"),
        ("lease_end", "soon", "1000:lease_end"),
        ("kind", "weekly", "1000:kind"),
    ];
    for (attribute, value, named) in cases {
        let _: () = s.cmd(&["FLUSHALL"]);
        format_1();
        let token = won_token(&s.cli(&["claim", "g", "--slot", "1000", "--json"]));
        let _: () = s.cmd(&[
            "HSET",
            "{cron:g}:state",
            &format!("1000:{attribute}"),
            value,
        ]);
        for args in [
            vec!["claim", "g", "--slot", "1000"],
            vec!["heartbeat", "g", "--slot", "1000", "--token", &token],
            vec![
                "finish", "g", "--slot", "1000", "--token", &token, "--status", "ok",
            ],
        ] {
            refused_as_bad_data(&s, &args, &["{cron:g}:state", named]);
        }
    }

    // A missing token on a running run.
    let _: () = s.cmd(&["FLUSHALL"]);
    format_1();
    let token = won_token(&s.cli(&["claim", "g", "--slot", "1000", "--json"]));
    let _: () = s.cmd(&["HDEL", "{cron:g}:state", "1000:token"]);
    refused_as_bad_data(
        &s,
        &[
            "finish", "g", "--slot", "1000", "--token", &token, "--status", "ok",
        ],
        &["1000:token"],
    );
}

/// The same in format 2: a run in progress is one JSON value in `:live`, an ended one its
/// `:results` members; garbage in either is refused by every script before it writes.
#[test]
fn format_2_scripts_validate_before_their_first_write() {
    let s = Server::start();
    let cases: [(&str, serde_json::Value); 5] = [
        ("attempt", (-3).into()),
        ("attempt", 99_999_999_999i64.into()),
        ("lease_end", "soon".into()),
        ("kind", "weekly".into()),
        ("token", serde_json::Value::Null),
    ];
    for (attribute, value) in cases {
        let _: () = s.cmd(&["FLUSHALL"]);
        let _: () = s.cmd(&["SET", "cron:format", "2"]);
        let token = won_token(&s.cli(&["claim", "g", "--slot", "1000", "--json"]));
        let text: String = s.cmd(&["HGET", "{cron:g}:live", "1000"]);
        let mut run: serde_json::Value = serde_json::from_str(&text).unwrap();
        run[attribute] = value;
        let _: () = s.cmd(&["HSET", "{cron:g}:live", "1000", &run.to_string()]);
        for args in [
            vec!["claim", "g", "--slot", "1000"],
            vec!["heartbeat", "g", "--slot", "1000", "--token", &token],
            vec![
                "finish", "g", "--slot", "1000", "--token", &token, "--status", "ok",
            ],
        ] {
            refused_as_bad_data(&s, &args, &["{cron:g}:live", "1000"]);
        }
    }
    // Another run in progress is checked too, by a claim that creates a run.
    let _: () = s.cmd(&["HSET", "{cron:g}:live", "500", "not json"]);
    let _: () = s.cmd(&["HDEL", "{cron:g}:live", "1000"]);
    refused_as_bad_data(
        &s,
        &["claim", "g", "--slot", "2000"],
        &["{cron:g}:live", "500"],
    );
    // An ended run's member that is no result: a claim of its slot cannot say how it ended.
    let _: () = s.cmd(&["DEL", "{cron:g}:live"]);
    let _: i64 = s.cmd(&[
        "ZADD",
        "{cron:g}:results",
        "3000",
        "{\"status\":\"sleeping\"}",
    ]);
    refused_as_bad_data(
        &s,
        &["claim", "g", "--slot", "3000"],
        &["{cron:g}:results", "3000"],
    );
}

/// A :slots or :active member that is not a slot stops a claim (and trim) before any write
/// (format 1).
#[test]
fn a_bad_member_of_slots_or_active_is_refused_before_writing() {
    let s = Server::start();
    let _: () = s.cmd(&["SET", "cron:format", "1"]);
    for i in 0..3 {
        let slot = (60_000 * (i + 1)).to_string();
        let token = won_token(&s.cli(&[
            "claim",
            "m",
            "--slot",
            &slot,
            "--json",
            "--history-size",
            "1",
        ]));
        let out = s.cli(&[
            "finish", "m", "--slot", &slot, "--token", &token, "--status", "ok",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let _: i64 = s.cmd(&["ZADD", "{cron:m}:slots", "0", "notaslot"]);
    refused_as_bad_data(
        &s,
        &["claim", "m", "--slot", "9000000", "--history-size", "1"],
        &["{cron:m}:slots", "notaslot"],
    );
    refused_as_bad_data(&s, &["trim", "m", "--keep", "1", "--yes"], &[]);

    let _: i64 = s.cmd(&["ZREM", "{cron:m}:slots", "notaslot"]);
    let _: i64 = s.cmd(&["SADD", "{cron:m}:active", "later"]);
    refused_as_bad_data(
        &s,
        &["claim", "m", "--slot", "9000000"],
        &["{cron:m}:active"],
    );
}

/// The format key holds a canonical positive integer, or it is bad data.
#[test]
fn only_a_canonical_format_number_is_read() {
    let s = Server::start();
    for bad in ["0", " 1", "01", "1.0"] {
        let _: () = s.cmd(&["SET", "cron:format", bad]);
        let out = s.cli(&["claim", "f", "--slot", "1000"]);
        assert_eq!(out.status.code(), Some(92), "{bad:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("cron:format"));
        let out = s.cli(&["list"]);
        assert_eq!(out.status.code(), Some(92), "{bad:?}: {}", stderr(&out));
    }
}

/// Results every reader can decode: bounded depth and size, refused before anything is sent.
#[test]
fn finish_refuses_results_no_reader_could_decode() {
    let s = Server::start();
    let token = won_token(&s.cli(&["claim", "r", "--slot", "1000", "--json"]));
    let deep = format!("{}{}", "[".repeat(127), "]".repeat(127));
    let huge = "x".repeat(70_000);
    for (flag, value) in [
        ("--result-json", deep.as_str()),
        ("--result", huge.as_str()),
    ] {
        let out = s.cli(&[
            "finish", "r", "--slot", "1000", "--token", &token, "--status", "ok", flag, value,
        ]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    }
    let out = s.cli(&[
        "finish",
        "r",
        "--slot",
        "1000",
        "--token",
        &token,
        "--status",
        "ok",
        "--result-json",
        "{\"rows\":[[1,2],[3]]}",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for read in [vec!["list"], vec!["inspect", "r"], vec!["history", "r"]] {
        let out = s.cli(&read);
        assert_eq!(out.status.code(), Some(0), "{read:?}: {}", stderr(&out));
    }
}

/// Durations the store cannot hold, or that would round to nothing, are usage errors before any
/// connection (the server here is a dead port).
#[test]
fn durations_are_bounded_before_anything_is_sent() {
    let url = format!("redis://127.0.0.1:{}", common::dead_port());
    for lease in ["300000000y", "1ns", "999us"] {
        let out = common::anarchon()
            .args([
                "claim", "d", "--slot", "1000", "--lease", lease, "--redis", &url,
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{lease}: {}", stderr(&out));
    }
    let out = common::anarchon()
        .args([
            "claim",
            "d",
            "--slot",
            "999999999999999999",
            "--redis",
            &url,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// A heartbeat never shortens a lease: `--lease 1ms` after `claim --lease 1h` leaves it an hour.
#[test]
fn a_heartbeat_never_moves_the_lease_end_back() {
    let s = Server::start();
    let out = s.cli(&["claim", "h", "--slot", "1000", "--lease", "1h", "--json"]);
    let end = json(&out)["lease_end"].as_i64().unwrap();
    let token = won_token(&out);
    let out = s.cli(&[
        "heartbeat",
        "h",
        "--slot",
        "1000",
        "--token",
        &token,
        "--lease",
        "1ms",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(json(&out)["lease_end"].as_i64().unwrap() >= end);
    let out = s.cli(&["claim", "h", "--slot", "1000"]);
    assert_eq!(
        out.status.code(),
        Some(82),
        "the run is still held: {}",
        stderr(&out)
    );
}

/// The wrapped command does not inherit anarchon's credentials.
#[test]
fn credentials_do_not_reach_the_command() {
    let s = Server::start_with(&["--requirepass", "s3cret-pw"]);
    let file = s.dir.path().join("env.txt");
    let with_user = s.url.replace("redis://", "redis://default:unused@");
    let out = s
        .anarchon()
        .env("ANARCHON_REDIS_PASSWORD", "s3cret-pw")
        .env("REDIS_URL", &with_user)
        .args(["run", "--job", "e", "--slot", "1000", "--", "sh", "-c"])
        .arg(format!("env > {}", file.display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let env = std::fs::read_to_string(&file).unwrap();
    assert!(!env.contains("s3cret-pw"), "{env}");
    assert!(!env.contains("REDIS_URL=redis://default"), "{env}");
    assert!(env.contains("ANARCHON_JOB=e"), "{env}");
}

/// A password typed in the URL's user slot is never printed.
#[test]
fn a_password_in_the_user_slot_is_redacted() {
    let url = format!("redis://Sup3rS3cret@127.0.0.1:{}", common::dead_port());
    let out = common::anarchon()
        .args(["list", "--redis", &url, "--connect-timeout", "1s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(90), "{}", stderr(&out));
    assert!(!stderr(&out).contains("Sup3rS3cret"), "{}", stderr(&out));
}

/// A secret in a Sentinel URL's query (`?password=`, `?pass=`, `?sentinel_password=`, and
/// beside no master name) is masked in errors, as every other form is (issue 46, item 10).
#[test]
fn a_secret_in_a_sentinel_url_query_is_redacted() {
    let hosts = format!(
        "127.0.0.1:{},127.0.0.1:{}",
        common::dead_port(),
        common::dead_port()
    );
    let mut running = Vec::new();
    for query in [
        "/mymaster?password=S3cr3tPW",
        "/mymaster?pass=S3cr3tPW",
        "/mymaster/0?password=S3cr3tPW",
        "/mymaster?sentinel_password=S3cr3tPW",
        "/mymaster?password=Other9PW&sentinel_password=S3cr3tPW",
        "/mymaster?password=S3cr3t%50W",
        "?password=S3cr3tPW",
        "/mymaster?S3cr3tPW",
        "/mymaster?unknown=S3cr3tPW",
    ] {
        let url = format!("redis+sentinel://{hosts}{query}");
        for args in [
            &["list"][..],
            &["run", "--job", "q", "--schedule", "* * * * *", "--", "true"][..],
            &["doctor"][..],
        ] {
            for (flag, env) in [(Some(url.as_str()), None), (None, Some(url.as_str()))] {
                let mut cmd = common::anarchon();
                if let Some(url) = flag {
                    cmd.args(["--redis", url]);
                }
                if let Some(url) = env {
                    cmd.env("ANARCHON_REDIS_URL", url);
                }
                cmd.args(["--connect-timeout", "1s"]).args(args);
                // At once: `run` retries an unreachable server for 10 s.
                let child = std::thread::spawn(move || cmd.output().unwrap());
                running.push((format!("{url} {args:?}"), child));
            }
        }
    }
    for (what, child) in running {
        let out = child.join().unwrap();
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
        assert_ne!(out.status.code(), Some(0), "{what}: {said}");
        for secret in ["S3cr3tPW", "Other9PW", "S3cr3t%50W"] {
            assert!(!said.contains(secret), "{what}: {said}");
        }
    }
}

/// Keys of a claim match what docs/store-format.md gives for the :job hash.
#[test]
fn the_job_hash_records_protection_and_the_trim_horizon() {
    let s = Server::start();
    for slot in ["60000", "120000", "180000"] {
        let token = won_token(&s.cli(&["claim", "t", "--slot", slot, "--json"]));
        let out = s.cli(&[
            "finish", "t", "--slot", slot, "--token", &token, "--status", "ok",
        ]);
        assert_eq!(out.status.code(), Some(0));
    }
    let out = s.cli(&["trim", "t", "--keep", "1", "--yes", "--json"]);
    assert_eq!(json(&out)["total"], 2, "{}", stderr(&out));
    let job: HashMap<String, String> = s.cmd(&["HGETALL", "{cron:t}:job"]);
    assert_eq!(job["trimmed_to"], "120000");
    // A trimmed run is never claimed again.
    let out = s.cli(&["claim", "t", "--slot", "60000", "--json"]);
    assert_eq!(out.status.code(), Some(81), "{}", stderr(&out));
    assert_eq!(json(&out)["status"], "trimmed");
    assert_eq!(
        s.results("t").len(),
        1,
        "the trimmed runs' results are gone"
    );
    if s.is_format_1("t") {
        assert_eq!(
            s.cmd::<i64>(&["XLEN", "{cron:t}:runs"]),
            1,
            "the trimmed runs' entries are gone"
        );
    }
}

/// One result per claim-only run: a second finish is refused (83) and writes nothing, so `list`
/// and `inspect` cannot disagree about it.
#[test]
fn a_claim_only_run_is_finished_once() {
    let s = Server::start();
    for strategy in ["stream-id", "script"] {
        let job = format!("once-{strategy}");
        let token = won_token(&s.cli(&[
            "claim",
            &job,
            "--strategy",
            strategy,
            "--slot",
            "60000",
            "--json",
        ]));
        let finish = |status: &str| {
            s.cli(&[
                "finish",
                &job,
                "--strategy",
                strategy,
                "--slot",
                "60000",
                "--token",
                &token,
                "--status",
                status,
            ])
        };
        let out = finish("ok");
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let before = snapshot(&s);
        let out = finish("failed");
        assert_eq!(out.status.code(), Some(83), "{}", stderr(&out));
        assert!(String::from_utf8_lossy(&out.stdout).contains("finished already"));
        assert_eq!(snapshot(&s), before);
        assert_eq!(s.cmd::<i64>(&["ZCARD", &format!("cron:{job}:results")]), 1);
    }
}

/// Claims trim claim-only history too, within the strategy's memory: stream-id keeps its last ID
/// (an older slot stays refused); the script strategy never trims inside its window.
#[test]
fn claim_only_history_is_trimmed_on_claim_within_the_strategys_memory() {
    let s = Server::start();
    for i in 1..=10 {
        let slot = (i * 60_000).to_string();
        let out = s.cli(&[
            "claim",
            "sid",
            "--strategy",
            "stream-id",
            "--slot",
            &slot,
            "--history-size",
            "3",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    assert_eq!(s.cmd::<i64>(&["XLEN", "cron:sid:runs"]), 3);
    let out = s.cli(&[
        "claim",
        "sid",
        "--strategy",
        "stream-id",
        "--slot",
        "120000",
    ]);
    assert_eq!(
        out.status.code(),
        Some(81),
        "a trimmed slot is still refused"
    );

    for i in 1..=10 {
        let slot = (i * 60_000).to_string();
        let out = s.cli(&[
            "claim",
            "win",
            "--strategy",
            "script",
            "--slot",
            &slot,
            "--history-size",
            "3",
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    assert_eq!(
        s.cmd::<i64>(&["XLEN", "cron:win:runs"]),
        10,
        "entries inside the window stay"
    );
    let out = s.cli(&["claim", "win", "--strategy", "script", "--slot", "60000"]);
    assert_eq!(out.status.code(), Some(81));
}

/// `inspect` of a claim-only job shows each key's own hash slot and no shared one.
#[test]
fn inspect_shows_hash_slots_as_the_layout_has_them() {
    let s = Server::start();
    let out = s.cli(&["claim", "co", "--strategy", "stream-id", "--slot", "60000"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&s.cli(&["inspect", "co", "--json"]));
    assert_eq!(v["hash_slot"], serde_json::Value::Null);
    let runs = v["keys"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["key"] == "cron:co:runs")
        .unwrap();
    // (CLUSTER KEYSLOT needs cluster mode; the function is checked against Redis's reference values.)
    let expected = anarchon::store::keys::hash_slot("cron:co:runs");
    assert_eq!(runs["hash_slot"], expected);

    let out = s.cli(&["claim", "le", "--slot", "60000"]);
    assert_eq!(out.status.code(), Some(0));
    let v = json(&s.cli(&["inspect", "le", "--json"]));
    assert_eq!(v["hash_slot"], anarchon::store::keys::hash_slot("cron:le"));
}

/// `run --jitter`: every host waits the same delay, derived from the job and the slot, and the
/// script strategy's window must cover jitter + max-late.
#[test]
fn jitter_delays_the_claim_the_same_on_every_host() {
    let s = Server::start();
    let jitter = std::time::Duration::from_secs(2);
    // A slot that is now: the jitter is waited for from the slot (a slot long past has waited
    // its jitter already).
    let started = std::time::Instant::now();
    let slot: i64 = s.now_ms();
    let at = slot.to_string();
    let delay = anarchon::scheduler::jitter_delay("jit", slot, jitter);
    let file = s.dir.path().join("started.txt");
    let line = format!("date +%s%3N >> {}", file.display());
    let outputs = common::race(&s, 3, |_| {
        common::owned(&[
            "run", "--job", "jit", "--slot", &at, "--jitter", "2s", "--shell", "--", &line,
        ])
    });
    let codes = common::codes(&outputs);
    assert_eq!(codes.iter().filter(|c| **c == 0).count(), 1, "{codes:?}");
    assert!(
        started.elapsed() >= delay,
        "the claim waited the jitter delay"
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.lines().count(), 1);

    let out = s.cli(&[
        "run",
        "--job",
        "w",
        "--slot",
        "now",
        "--strategy",
        "script",
        "--window",
        "1m",
        "--jitter",
        "30s",
        "--max-late",
        "40s",
        "--",
        "true",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--jitter"), "{}", stderr(&out));
}

/// One unreadable job never blinds `list` or `trim --all`: the others are shown and trimmed, the
/// bad one is named with its key and reason, and the exit code says data was bad (92) at the end.
#[test]
fn one_unreadable_job_does_not_hide_the_others() {
    let s = Server::start();
    for job in ["a", "b", "c"] {
        for slot in ["60000", "120000"] {
            let token = won_token(&s.cli(&["claim", job, "--slot", slot, "--json"]));
            let out = s.cli(&[
                "finish", job, "--slot", slot, "--token", &token, "--status", "ok",
            ]);
            assert_eq!(out.status.code(), Some(0));
        }
    }
    // b's results hold a member that is not a result, and its runs key is a string.
    let _: i64 = s.cmd(&["ZADD", "{cron:b}:results", "999999", "not json"]);
    let out = s.cli(&["list", "--json"]);
    assert_eq!(out.status.code(), Some(92), "{}", stderr(&out));
    let v = json(&out);
    let names: Vec<&str> = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["job"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["a", "c"]);
    assert_eq!(v["errors"][0]["job"], "b");
    assert_eq!(v["errors"][0]["key"], "{cron:b}:results");

    let out = s.cli(&["list"]);
    assert_eq!(out.status.code(), Some(92));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("unreadable") && text.contains('a') && text.contains('c'),
        "{text}"
    );
    assert!(
        stderr(&out).contains("{cron:b}:results"),
        "{}",
        stderr(&out)
    );

    // A key the trim reads has another type: format 1's stream, format 2's runs in progress.
    let bad_key = if s.is_format_1("b") {
        "{cron:b}:runs"
    } else {
        "{cron:b}:live"
    };
    let _: () = s.cmd(&["DEL", bad_key]);
    let _: () = s.cmd(&["SET", bad_key, "x"]);
    let out = s.cli(&["list"]);
    assert_eq!(out.status.code(), Some(92));
    let err = stderr(&out);
    assert!(
        !err.contains("a another") && !err.contains("a the"),
        "{err}"
    );

    let out = s.cli(&[
        "trim",
        "--all",
        "--keep",
        "1",
        "--protect",
        "1h",
        "--yes",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(92), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["total"], 2, "a and c were trimmed");
    assert_eq!(v["errors"][0]["job"], "b");
}

/// Every server-side script compiles on this server, the idmp one included (which only Redis 8.6
/// runs): a syntax error would otherwise surface in production first.
#[test]
fn every_script_compiles_on_the_server() {
    let s = Server::start();
    let every = anarchon::store::lease::every_script();
    assert!(every.len() >= 19, "{} scripts", every.len());
    for (name, script) in every {
        let sha: String = s.cmd(&["SCRIPT", "LOAD", script.source()]);
        assert_eq!(sha, script.sha1(), "{name}");
    }
}

/// A reader that goes away (`| head`) ends the output quietly, in every command that prints; a
/// full disk is an error message and exit 1, never a panic.
#[test]
fn a_closed_pipe_is_quiet_and_a_full_disk_is_an_error() {
    use std::process::Stdio;
    let s = Server::start();
    for i in 0..300 {
        let job = format!("pipe{i:03}");
        let out = s.cli(&["claim", &job, "--slot", "60000"]);
        assert_eq!(out.code(), Some(0), "{}", out.dump());
    }
    let out = s.cli(&[
        "run",
        "--job",
        "pipe000",
        "--slot",
        "120000",
        "--overlap",
        "allow",
        "--",
        "false",
    ]);
    assert_eq!(out.code(), Some(1), "{}", out.dump());
    let commands: [&[&str]; 13] = [
        &["list"],
        &["list", "--json"],
        &["list", "--active"],
        &["inspect", "pipe000"],
        &["inspect", "pipe000", "--json"],
        &["history", "pipe000"],
        &["history", "pipe000", "-v"],
        &["logs", "pipe000"],
        &["claim", "pipe999", "--slot", "60000", "--overlap", "allow"],
        &["release", "pipe001", "--dry-run"],
        &["pause", "pipe002"],
        &["migrate", "--dry-run"],
        &["doctor"],
    ];
    // Runs `args` with stdout going to `stdout`; returns the exit code and stderr.
    let run_into = |args: &[&str], stdout: Stdio| {
        let out = s
            .anarchon_process()
            .args(args)
            .stdout(stdout)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for args in commands {
        // The reading end is closed before anarchon writes a byte.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let (code, err) = run_into(args, Stdio::from(writer));
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_ne!(code, Some(101), "{args:?}: {err}");

        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let (code, err) = run_into(args, Stdio::from(full));
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(err.contains("cannot write the output"), "{args:?}: {err}");
        assert_ne!(code, Some(0), "{args:?}: {err}");
    }

    // One rule for every kind of output: help, version and generated text too. A closed pipe is
    // quiet and exits 0; a full disk exits 1; stderr full as well is still exit 1, never a panic.
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    for args in [
        &["--help"][..],
        &["--version"],
        &["completions", "bash"],
        &["man"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let (code, err) = run_into(args, Stdio::from(writer));
        assert_eq!(
            (code, err.as_str()),
            (Some(0), ""),
            "{args:?} into a closed pipe"
        );
        let (code, err) = run_into(args, Stdio::from(full()));
        assert_eq!(code, Some(1), "{args:?} > /dev/full: {err}");
        assert!(err.contains("cannot write the output"), "{args:?}: {err}");
    }
    for args in [&["list"][..], &["--help"], &["list", "--no-such-flag"]] {
        let out = s
            .anarchon_process()
            .args(args)
            .stdout(Stdio::from(full()))
            .stderr(Stdio::from(full()))
            .output()
            .unwrap();
        let expected = if args.len() == 2 { 2 } else { 1 };
        assert_eq!(
            out.status.code(),
            Some(expected),
            "{args:?} with stdout and stderr full"
        );
    }
}

/// A job key of another type is refused before anything runs or is written (#35, items 9 and
/// 10): a `:runs` or `:results` of another type stopped only the finish, after the command had
/// run, and left the slot `running`; a `:active` of another type refused the claim after the job
/// registry and a new store's format key were written. Each key in turn, `run --schedule` and
/// `run --slot`: exit 92, the command never ran, the keys as they were.
#[test]
fn a_job_key_of_another_type_is_refused_before_anything_runs_or_is_written() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let ran = dir.path().join("ran");
    let snapshot = |s: &Server| -> Vec<(String, String)> {
        s.keys()
            .into_iter()
            .map(|k| {
                let dump: Option<Vec<u8>> = s.cmd(&["DUMP", &k]);
                (k, format!("{:?}", dump))
            })
            .collect()
    };
    for (i, suffix) in [
        ":state", ":active", ":slots", ":runs", ":results", ":job", ":live",
    ]
    .iter()
    .enumerate()
    {
        for how in ["--schedule", "--slot"] {
            let job = format!("w{i}{}", &how[2..4]);
            // A list: no key of a job is one in either format (a string `:state` is format 2's
            // marker).
            let _: i64 = s.cmd(&["RPUSH", &format!("{{cron:{job}}}{suffix}"), "junk"]);
            let before = snapshot(&s);
            let when = if how == "--schedule" {
                "* * * * *"
            } else {
                "now"
            };
            let out = s.cli(&[
                "run",
                "--job",
                &job,
                how,
                when,
                "--shell",
                "--",
                &format!("echo RAN >> {}", ran.display()),
            ]);
            assert_eq!(out.code(), Some(92), "{suffix} {how}: {}", out.dump());
            assert!(
                String::from_utf8_lossy(&out.stderr).contains(suffix),
                "{suffix} {how}: {}",
                out.dump()
            );
            assert!(!ran.exists(), "{suffix} {how}: the command ran");
            assert_eq!(
                snapshot(&s),
                before,
                "{suffix} {how}: something was written"
            );
        }
    }
}

/// A key of another type than its scripts write, for every job key in both store formats, met by
/// every command that writes: each command either does its work or is refused, and a refused one
/// (any exit but 0) wrote nothing and ran nothing; `run`, `claim` and `run-now` are always refused
/// (92) before the command starts. The matrix the red team's fuzz found writes in (#35, item 10).
#[test]
fn every_write_command_meets_a_key_of_another_type_refused_and_writing_nothing() {
    let s = Server::start();
    let mark = s.dir.path().join("ran");
    let touch = format!("touch {}", mark.display());
    // (suffix, whether `run` and `claim` must refuse it, the wrong values put there)
    let keys: [(&str, bool, [&str; 2]); 8] = [
        (":state", true, ["list", "zset"]),
        (":active", true, ["list", "string"]),
        (":slots", true, ["list", "string"]),
        (":runs", true, ["list", "string"]),
        (":results", true, ["list", "string"]),
        (":job", true, ["list", "string"]),
        (":live", true, ["list", "string"]),
        (":registry", false, ["list", "string"]),
    ];
    let commands: Vec<Vec<&str>> = vec![
        vec![
            "run", "--job", "g", "--slot", "now", "--shell", "--", &touch,
        ],
        vec![
            "run",
            "--job",
            "g",
            "--schedule",
            "* * * * * *",
            "--shell",
            "--",
            &touch,
        ],
        vec!["claim", "g", "--slot", "1000"],
        vec!["release", "g", "--yes", "--no-wait"],
        vec!["pause", "g", "--for", "1m"],
        vec!["resume", "g"],
        vec!["trim", "g", "--yes"],
        vec!["run-now", "g", "--new", "--shell", "--", &touch],
        vec!["run-now", "g", "--new", "--claim-only"],
    ];
    let mut tried = 0;
    for format in ["1", "2"] {
        for (suffix, lease_key, wrongs) in keys {
            for wrong in wrongs {
                let key = format!("{{cron:g}}{suffix}");
                for args in &commands {
                    let _: () = s.cmd(&["FLUSHALL"]);
                    let _: () = s.cmd(&["SET", "cron:format", format]);
                    match wrong {
                        "list" => s.cmd::<()>(&["RPUSH", &key, "junk"]),
                        "zset" => s.cmd::<()>(&["ZADD", &key, "1", "junk"]),
                        _ => s.cmd::<()>(&["SET", &key, "junk"]),
                    }
                    let _ = std::fs::remove_file(&mark);
                    let before = snapshot(&s);
                    let out = s.cli(args);
                    let code = out.status.code();
                    let err = stderr(&out);
                    let case = format!("format {format}, {key} a {wrong}, {args:?}");
                    tried += 1;
                    assert_ne!(code, Some(101), "{case} panicked: {err}");
                    // A usage error would make the case assert nothing.
                    assert_ne!(code, Some(2), "{case} is no valid command line: {err}");
                    assert!(!err.contains("user_script"), "{case}: raw Lua error: {err}");
                    if lease_key && matches!(args[0], "run" | "claim" | "run-now") {
                        assert_eq!(code, Some(92), "{case}: not refused as bad data: {err}");
                    }
                    if code != Some(0) {
                        assert_eq!(snapshot(&s), before, "{case} wrote before failing: {err}");
                        assert!(!mark.exists(), "{case}: refused, yet the command ran");
                    }
                }
            }
        }
    }
    assert_eq!(tried, 2 * 8 * 2 * 9);
}

/// A `:state` string is format 2's marker only when it is the marker: in a format 1 store, a
/// string another program wrote there is refused (92, naming the key) by `claim` and `run`, never
/// taken for a job converted to format 2 and written as one (red team, #37's format 1 work).
#[test]
fn a_state_string_that_is_not_the_format_2_marker_is_refused() {
    let s = Server::start();
    let _: () = s.cmd(&["SET", "cron:format", "1"]);
    let _: () = s.cmd(&["SET", "{cron:wt}:state", "hello, some other program"]);
    refused_as_bad_data(
        &s,
        &["claim", "wt", "--slot", "60000"],
        &["{cron:wt}:state"],
    );
    refused_as_bad_data(
        &s,
        &["run", "--job", "wt", "--slot", "60000", "--", "true"],
        &["{cron:wt}:state"],
    );
    // The same over a job with history.
    let _: () = s.cmd(&["DEL", "{cron:wt}:state"]);
    let out = s.cli(&["run", "--job", "wt", "--slot", "120000", "--", "true"]);
    assert_eq!(out.status.code(), Some(0), "{}", out.dump());
    let _: () = s.cmd(&["DEL", "{cron:wt}:state"]);
    let _: () = s.cmd(&["SET", "{cron:wt}:state", "junk"]);
    refused_as_bad_data(
        &s,
        &["claim", "wt", "--slot", "180000"],
        &["{cron:wt}:state"],
    );
}
