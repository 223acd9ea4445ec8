//! `anarchon migrate`: a format 1 store becomes format 2 with every run keeping its meaning, while
//! hosts claim; a format 1 script after the switch is refused and writes nothing; a second
//! migration waits for the first.

use crate::common;
use std::process::Output;

use crate::common::{Server, json, owned, spawn_run, stderr, wait_for_claim};
use serde_json::Value;

fn format_1_store() -> Server {
    let s = Server::start();
    let _: () = s.cmd(&["SET", "cron:format", "1"]);
    s
}

fn claim(s: &Server, job: &str, slot: &str) -> Output {
    s.cli(&["claim", job, "--slot", slot, "--overlap", "allow", "--json"])
        .output
}

fn finish(s: &Server, job: &str, slot: &str, token: &str, status: &str) -> Output {
    s.cli(&[
        "finish", job, "--slot", slot, "--token", token, "--status", status,
    ])
    .output
}

/// Every key with its type and content, to show that something wrote nothing.
fn snapshot(s: &Server) -> Vec<(String, String, String)> {
    s.keys()
        .into_iter()
        .map(|k| {
            let kind: String = s.cmd(&["TYPE", &k]);
            let dump: Vec<u8> = s.cmd(&["DUMP", &k]);
            (k, kind, format!("{dump:?}"))
        })
        .collect()
}

/// `history JOB --json` entries without the fields a conversion may not keep (kind, ids).
fn history(s: &Server, job: &str) -> Vec<(i64, String, u64, String, String)> {
    let out = s.cli(&["history", job, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    json(&out)["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["slot"].as_i64().unwrap(),
                e["status"].as_str().unwrap().to_string(),
                e["attempt"].as_u64().unwrap(),
                e["runner"].as_str().unwrap().to_string(),
                e["token"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Runs 60000, 120000 and 180000 of each job to their end (the second one failed).
fn three_ended_runs_each(s: &Server, jobs: &[&str]) {
    for job in jobs {
        for (i, slot) in ["60000", "120000", "180000"].iter().enumerate() {
            let token = json(&claim(s, job, slot))["token"]
                .as_str()
                .unwrap()
                .to_string();
            let status = if i == 1 { "failed" } else { "ok" };
            assert_eq!(finish(s, job, slot, &token, status).status.code(), Some(0));
        }
    }
}

/// After a migration of job `a` (three ended runs, 240000 held with `held`): the ended runs are
/// done, the run in progress heartbeats and finishes with its token, and is then done.
fn ended_runs_stay_done_and_the_held_run_goes_on(s: &Server, held: &str) {
    for slot in ["60000", "120000", "180000"] {
        assert_eq!(claim(s, "a", slot).status.code(), Some(81), "{slot}");
    }
    let out = s.cli(&["heartbeat", "a", "--slot", "240000", "--token", held]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(finish(s, "a", "240000", held, "ok").status.code(), Some(0));
    assert_eq!(claim(s, "a", "240000").status.code(), Some(81));
}

#[test]
fn a_format_1_store_is_migrated_and_every_run_keeps_its_meaning() {
    let s = format_1_store();
    three_ended_runs_each(&s, &["a", "b"]);
    let held = json(&claim(&s, "a", "240000"))["token"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(s.is_format_1("a"));
    let before = (history(&s, "a"), history(&s, "b"));

    // A dry run reports and writes nothing.
    let snap = snapshot(&s);
    let out = s.cli(&["migrate", "--dry-run", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(v["from"], 1);
    assert_eq!(v["jobs_to_convert"].as_array().unwrap().len(), 2);
    assert_eq!(v["jobs_to_convert"][0]["runs_in_progress"], 1);
    assert_eq!(snapshot(&s), snap);

    // Without a terminal and without --yes: refused.
    let out = s.cli(&["migrate"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(snapshot(&s), snap);

    let out = s.cli(&["migrate", "--yes", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(
        (v["converted"].as_u64(), v["runs_moved"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(s.cmd::<String>(&["GET", "cron:format"]), "2");
    assert!(
        !s.cmd::<Vec<String>>(&["KEYS", "cron:migrating"])
            .iter()
            .any(|_| true)
    );
    for job in ["a", "b"] {
        assert_eq!(
            s.cmd::<String>(&["TYPE", &format!("{{cron:{job}}}:state")]),
            "string"
        );
        for gone in ["active", "slots", "runs"] {
            assert_eq!(
                s.cmd::<i64>(&["EXISTS", &format!("{{cron:{job}}}:{gone}")]),
                0,
                "{job}:{gone} is left"
            );
        }
    }
    assert_eq!(s.in_progress("a"), vec![240_000]);
    // The history reads the same (runs in progress first, then ended attempts, newest first).
    assert_eq!((history(&s, "a"), history(&s, "b")), before);

    // Ended runs stay done, the run in progress goes on with its token, new runs are claimed.
    ended_runs_stay_done_and_the_held_run_goes_on(&s, &held);
    assert_eq!(claim(&s, "a", "300000").status.code(), Some(0));

    // Again: nothing left to do.
    let out = s.cli(&["migrate", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("nothing to convert"));
}

/// Sends `script` by EVAL, as a host of another build would, and returns the error it answers.
fn eval_error(
    s: &Server,
    script: &anarchon::scripts::LuaScript,
    keys: &[&str],
    args: &[String],
) -> String {
    redis::cmd("EVAL")
        .arg(script.source())
        .arg(keys.len())
        .arg(keys)
        .arg(args)
        .query::<redis::Value>(&mut s.client())
        .unwrap_err()
        .to_string()
}

/// A format 1 anarchon that read the format key just before the switch sends its claim after it:
/// the converted job's :state is the format 2 marker, and the format 1 script is refused by its
/// first command, writing nothing (the run is not claimed a second time).
#[test]
fn a_format_1_script_after_the_switch_is_refused_and_writes_nothing() {
    let s = format_1_store();
    let token = json(&claim(&s, "j", "60000"))["token"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(s.cli(&["migrate", "--yes"]).status.code(), Some(0));
    let snap = snapshot(&s);
    let keys = anarchon::store::LeaseKeys::new("cron:", "j");
    let req = anarchon::strategy::claim::ClaimRequest {
        slot: 60_000,
        token: "a-format-1-host".into(),
        runner: "old:1".into(),
        lease: std::time::Duration::from_secs(30),
        max_attempts: 3,
        overlap: anarchon::strategy::OverlapPolicy::Forbid,
        kind: anarchon::store::RunKind::Scheduled,
        history: Default::default(),
        continues: false,
        owed_within: std::time::Duration::ZERO,
    };
    use anarchon::store::lease::v1;
    let claim_args = anarchon::strategy::lease::claim_args(&req);
    let finish_args = owned(&["60000", &token, "finished", "null"]);
    let heartbeat_args = owned(&["60000", &token, "30000"]);
    for (script, keys, args) in [
        (&*v1::CLAIM, keys.with_job().to_vec(), &claim_args),
        (&*v1::FINISH, keys.all().to_vec(), &finish_args),
        (&*v1::HEARTBEAT, vec![keys.state.as_str()], &heartbeat_args),
    ] {
        let err = eval_error(&s, script, &keys, args);
        assert!(err.contains("WRONGTYPE"), "{err}");
        assert_eq!(snapshot(&s), snap);
    }
    // This build, given the old format by a stale read, falls back to format 2's scripts.
    assert_eq!(
        finish(&s, "j", "60000", &token, "ok").status.code(),
        Some(0)
    );
}

/// A run claimed in one format whose command outlives a migration (`migrate_args`) to the other:
/// its heartbeats and its finish (the old format's scripts, refused, then the new one's) record it
/// once, in the new format.
fn a_run_spans_a_migration(s: &Server, migrate_args: &[&str]) {
    // The store's format before the migration: the run is claimed in it.
    let before = s.cmd::<String>(&["GET", "cron:format"]) == "1";
    let file = s.dir.path().join("ran.txt");
    let line = format!("sleep 3; echo $ANARCHON_ATTEMPT >> {}", file.display());
    let child = spawn_run(
        s,
        &[
            "--job", "long", "--slot", "60000", "--lease", "2s", "--json", "--shell", "--", &line,
        ],
    );
    wait_for_claim(s, "long", "60000");
    assert_eq!(s.is_format_1("long"), before);
    let out = s.cli(migrate_args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(s.is_format_1("long"), !before);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "1\n");
    let results = s.results("long");
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].status, "finished");
    if !before {
        assert_eq!(v1_status(s, "long", "60000").as_deref(), Some("finished"));
    }
    assert!(s.in_progress("long").is_empty());
}

#[test]
fn a_run_spanning_the_migration_finishes_once() {
    a_run_spans_a_migration(&format_1_store(), &["migrate", "--yes"]);
}

/// Fencing tokens go on rising across the migration: a run in progress keeps the fence format 1
/// gave it (moved from `:job` `fence:<slot>` into its `:live` entry), format 1's per-run fence
/// fields go, and the next claim gets one more than the last.
#[test]
fn fences_go_on_rising_across_the_migration() {
    let s = format_1_store();
    for slot in ["60000", "120000"] {
        let out = claim(&s, "f", slot);
        assert_eq!(json(&out)["fence"], if slot == "60000" { 1 } else { 2 });
    }
    let token = json(&claim(&s, "f", "180000"))["token"]
        .as_str()
        .unwrap()
        .to_string();
    let out = finish(&s, "f", "180000", &token, "ok");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = s.cli(&["migrate", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let fields: Vec<String> = s.cmd(&["HKEYS", "{cron:f}:job"]);
    assert!(
        !fields.iter().any(|f| f.starts_with("fence:")),
        "{fields:?}"
    );
    let live: String = s.cmd(&["HGET", "{cron:f}:live", "120000"]);
    let live: Value = serde_json::from_str(&live).unwrap();
    assert_eq!(live["fence"], 2, "{live}");
    assert_eq!(json(&claim(&s, "f", "240000"))["fence"], 4);
}

/// Ten hosts claim while the store is migrated under them: each slot runs once.
#[test]
fn claims_racing_a_migration_run_each_slot_once() {
    let s = format_1_store();
    // Some jobs to convert, so the migration takes a while.
    for i in 0..40 {
        assert_eq!(
            claim(&s, &format!("other{i}"), "60000").status.code(),
            Some(0)
        );
    }
    let file = s.dir.path().join("ran.txt");
    for slot in ["60000", "120000", "180000"] {
        let line = format!("echo {slot} >> {}", file.display());
        let mut migration = s.anarchon_process();
        migration
            .args(["migrate", "--yes"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let mut migration = migration.spawn().unwrap();
        let outputs = common::race(&s, 10, |_| {
            common::owned(&[
                "run", "--job", "race", "--slot", slot, "--shell", "--", &line,
            ])
        });
        assert!(migration.wait().unwrap().success());
        let codes = common::codes(&outputs);
        assert_eq!(
            codes.iter().filter(|c| **c == 0).count(),
            1,
            "{slot}: {codes:?}"
        );
        assert!(
            codes.iter().all(|c| [0, 81, 82].contains(c)),
            "{slot}: {codes:?}"
        );
        // The next round starts from format 1 again.
        let _: () = s.cmd(&["SET", "cron:format", "1"]);
        let _: () = s.cmd(&["DEL", "{cron:race}:state"]);
        let _: () = s.cmd(&["HDEL", "{cron:race}:job", "format"]);
    }
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines, vec!["60000", "120000", "180000"], "{text}");
}

#[test]
fn a_second_migration_is_refused_while_one_runs() {
    let s = format_1_store();
    assert_eq!(claim(&s, "j", "60000").status.code(), Some(0));
    let _: () = s.cmd(&["SET", "cron:migrating", "tok other-host:42", "PX", "60000"]);
    let out = s.cli(&["migrate", "--yes"]);
    assert_eq!(out.status.code(), Some(82), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("another `anarchon migrate`") && err.contains("other-host:42"),
        "{err}"
    );
    assert_eq!(s.cmd::<String>(&["GET", "cron:format"]), "1");
    assert!(s.is_format_1("j"));
}

#[test]
fn an_empty_prefix_is_marked_format_2_only_by_migrate() {
    let s = Server::start();
    let _: () = s.cmd(&["DEL", "cron:format"]);
    // A dry run says what it would do and writes nothing.
    let out = s.cli(&["migrate", "--dry-run"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("would mark the empty prefix"), "{said}");
    assert!(s.keys().is_empty());
    // Without --yes and no terminal to ask on: refused, nothing written.
    let out = s.cli(&["migrate"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("RedisBackend"), "{}", stderr(&out));
    assert!(s.keys().is_empty());

    let out = s.cli(&["migrate", "--yes", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["from"], Value::Null);
    assert_eq!(json(&out)["to"], 2);
    assert_eq!(s.keys(), vec!["cron:format"]);
    assert_eq!(s.cmd::<String>(&["GET", "cron:format"]), "2");
    // From then on the prefix's jobs are written in format 2.
    let out = s.cli(&["run", "--job", "j", "--schedule", "* * * * *", "--", "true"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(s.cmd::<String>(&["TYPE", "{cron:j}:live"]), "none");
    assert_eq!(s.cmd::<String>(&["TYPE", "{cron:j}:state"]), "string");
    assert_eq!(s.cmd::<String>(&["GET", "cron:format"]), "2");
}

fn format_2_store() -> Server {
    let s = Server::start();
    let _: () = s.cmd(&["SET", "cron:format", "2"]);
    s
}

/// What a format 1 reader needs of an ended run: its `status` in `:state`, its slot in `:slots`.
fn v1_status(s: &Server, job: &str, slot: &str) -> Option<String> {
    s.cmd(&[
        "HGET",
        &format!("{{cron:{job}}}:state"),
        &format!("{slot}:status"),
    ])
}

/// The way back: a format 2 store (ended runs, a takeover, a skip-free history, a run in
/// progress, a manual run) becomes format 1 as the seed's layout has it, history and fences kept.
#[test]
fn a_format_2_store_is_migrated_back_and_every_run_keeps_its_meaning() {
    let s = format_2_store();
    three_ended_runs_each(&s, &["a", "b"]);
    let out = s.cli(&["run-now", "b", "--json", "--", "true"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let held = json(&claim(&s, "a", "240000"))["token"]
        .as_str()
        .unwrap()
        .to_string();
    let fence_held = s.cmd::<String>(&["HGET", "{cron:a}:live", "240000"]);
    let fence_held = serde_json::from_str::<Value>(&fence_held).unwrap()["fence"].clone();
    assert!(!s.is_format_1("a"));
    let before = (history(&s, "a"), history(&s, "b"));

    // A dry run reports and writes nothing.
    let snap = snapshot(&s);
    let out = s.cli(&["migrate", "--to", "1", "--dry-run", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!((v["from"].as_u64(), v["to"].as_u64()), (Some(2), Some(1)));
    assert_eq!(v["jobs_to_convert"].as_array().unwrap().len(), 2);
    assert_eq!(v["jobs_to_convert"][0]["runs_in_progress"], 1);
    assert_eq!(snapshot(&s), snap);
    // Without a terminal and without --yes: refused, and says what the way back costs.
    let out = s.cli(&["migrate", "--to", "1"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("rebuilds each job's history"),
        "{}",
        stderr(&out)
    );
    assert_eq!(snapshot(&s), snap);

    let out = s.cli(&["migrate", "--to", "1", "--yes", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = json(&out);
    assert_eq!(
        (v["converted"].as_u64(), v["runs_moved"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(s.cmd::<String>(&["GET", "cron:format"]), "1");
    for job in ["a", "b"] {
        assert!(s.is_format_1(job), "{job}");
        assert_eq!(
            s.cmd::<i64>(&["EXISTS", &format!("{{cron:{job}}}:live")]),
            0
        );
        let left: Vec<String> = s.cmd(&["KEYS", &format!("{{cron:{job}}}:to-format-1:*")]);
        assert!(left.is_empty(), "{left:?}");
        // The seed's layout: a status per ended run, every run's slot, an entry per attempt.
        assert_eq!(v1_status(&s, job, "60000").as_deref(), Some("finished"));
        assert_eq!(v1_status(&s, job, "120000").as_deref(), Some("failed"));
        assert_eq!(v1_status(&s, job, "180000").as_deref(), Some("finished"));
        assert_eq!(
            s.cmd::<i64>(&["XLEN", &format!("{{cron:{job}}}:runs")]),
            3 + i64::from(job == "b")
        );
        assert_eq!(
            s.cmd::<i64>(&["ZCARD", &format!("{{cron:{job}}}:slots")]),
            4
        );
    }
    assert_eq!(s.in_progress("a"), vec![240_000]);
    assert_eq!(v1_status(&s, "a", "240000").as_deref(), Some("running"));
    assert_eq!(
        s.cmd::<String>(&["HGET", "{cron:a}:job", "fence:240000"]),
        fence_held.to_string()
    );
    // The history reads the same.
    assert_eq!((history(&s, "a"), history(&s, "b")), before);

    // Ended runs stay done, the run in progress goes on with its token, new runs are claimed, and
    // fencing tokens go on rising.
    ended_runs_stay_done_and_the_held_run_goes_on(&s, &held);
    let next = json(&claim(&s, "a", "300000"));
    assert!(
        next["fence"].as_i64().unwrap() > fence_held.as_i64().unwrap(),
        "{next}"
    );

    // Again: nothing left to do. And forward again: the same history.
    let out = s.cli(&["migrate", "--to", "1", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("nothing to convert"));
    let before = (history(&s, "a"), history(&s, "b"));
    let out = s.cli(&["migrate", "--yes"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!((history(&s, "a"), history(&s, "b")), before);
}

/// A format 2 anarchon that read the format key just before the switch back sends its scripts
/// after it: the job's `:state` is a hash again and its `:job` says format 1, so the format 2
/// script is refused by its first look, writing nothing (it does not convert the job forward
/// again), and this build runs format 1's script instead.
#[test]
fn a_format_2_script_after_the_switch_back_is_refused_and_writes_nothing() {
    let s = format_2_store();
    let token = json(&claim(&s, "j", "60000"))["token"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        s.cli(&["migrate", "--to", "1", "--yes"]).status.code(),
        Some(0)
    );
    assert!(s.is_format_1("j"));
    let snap = snapshot(&s);
    let keys = anarchon::store::LeaseKeys::new("cron:", "j");
    let req = anarchon::strategy::claim::ClaimRequest {
        slot: 120_000,
        token: "a-stale-format-2-host".into(),
        runner: "old:1".into(),
        lease: std::time::Duration::from_secs(30),
        max_attempts: 3,
        overlap: anarchon::strategy::OverlapPolicy::Allow,
        kind: anarchon::store::RunKind::Scheduled,
        history: Default::default(),
        continues: false,
        owed_within: std::time::Duration::ZERO,
    };
    use anarchon::store::lease::v2;
    let v2_keys = v2::script_keys(&keys);
    let claim_args = anarchon::strategy::lease::claim_args(&req);
    let finish_args = owned(&["60000", &token, "finished", "null"]);
    let heartbeat_args = owned(&["60000", &token, "30000"]);
    let trim_args = owned(&["1", "0", "0", "100", "0", "-inf", "0"]);
    for (script, args) in [
        (&*v2::CLAIM, &claim_args),
        (&*v2::HEARTBEAT, &heartbeat_args),
        (&*v2::FINISH, &finish_args),
        (&*v2::TRIM, &trim_args),
    ] {
        let err = eval_error(&s, script, &v2_keys, args);
        assert!(err.contains("WRONGTYPE") && err.contains("hash"), "{err}");
        assert_eq!(snapshot(&s), snap);
    }
    // This build, whichever format it read, ends the run once.
    assert_eq!(
        finish(&s, "j", "60000", &token, "ok").status.code(),
        Some(0)
    );
    assert_eq!(v1_status(&s, "j", "60000").as_deref(), Some("finished"));
}

#[test]
fn a_run_spanning_the_migration_back_finishes_once() {
    a_run_spans_a_migration(&format_2_store(), &["migrate", "--to", "1", "--yes"]);
}

/// Five hosts run each slot while the store is migrated under them, one way and back, round after
/// round, with jobs of long histories to convert meanwhile: each slot runs once, and the history
/// reads the same after each migration.
#[test]
fn five_hosts_racing_migrations_both_ways_run_each_slot_once() {
    let s = format_1_store();
    // Jobs with some history, so that each migration takes a while.
    let others: Vec<String> = (0..20).map(|i| format!("other{i}")).collect();
    three_ended_runs_each(&s, &others.iter().map(String::as_str).collect::<Vec<_>>());
    let file = s.dir.path().join("ran.txt");
    let mut expected = Vec::new();
    for round in 0..6 {
        let to = if round % 2 == 0 { "2" } else { "1" };
        let slot = ((round + 1) * 60_000).to_string();
        let line = format!("echo {slot} >> {}", file.display());
        let before = if round == 0 {
            Vec::new()
        } else {
            history(&s, "race")
        };
        let mut migration = s.anarchon_process();
        migration
            .args(["migrate", "--to", to, "--yes"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        let migration = migration.spawn().unwrap();
        let outputs = common::race(&s, 5, |_| {
            common::owned(&[
                "run", "--job", "race", "--slot", &slot, "--shell", "--", &line,
            ])
        });
        let migrated = migration.wait_with_output().unwrap();
        assert!(migrated.status.success(), "{}", stderr(&migrated));
        assert_eq!(s.cmd::<String>(&["GET", "cron:format"]), to);
        let codes = common::codes(&outputs);
        assert_eq!(
            codes.iter().filter(|c| **c == 0).count(),
            1,
            "{slot}: {codes:?}"
        );
        assert!(
            codes.iter().all(|c| [0, 81, 82].contains(c)),
            "{slot}: {codes:?} {:?}",
            outputs.iter().map(stderr).collect::<Vec<_>>()
        );
        expected.push(slot.clone());
        // Every job is in the store's format now, and the history is the one before plus this run.
        assert_eq!(s.is_format_1("race"), to == "1", "round {round}");
        assert_eq!(s.is_format_1("other7"), to == "1", "round {round}");
        let after = history(&s, "race");
        assert_eq!(after.len(), before.len() + 1, "{after:?}");
        assert_eq!(&after[1..], &before[..]);
        assert_eq!(history(&s, "other7").len(), 3);
        for old in &expected {
            assert_eq!(claim(&s, "race", old).status.code(), Some(81), "{old}");
        }
    }
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines, expected, "{text}");
}

#[test]
fn trim_waits_for_a_migration() {
    let s = format_1_store();
    assert_eq!(claim(&s, "j", "60000").status.code(), Some(0));
    let _: () = s.cmd(&["SET", "cron:migrating", "tok other-host:42", "PX", "60000"]);
    let snap = snapshot(&s);
    let out = s.cli(&["trim", "j", "--keep", "1", "--yes"]);
    assert_eq!(out.status.code(), Some(82), "{}", stderr(&out));
    assert!(stderr(&out).contains("other-host:42"), "{}", stderr(&out));
    assert_eq!(snapshot(&s), snap);
}

/// While `migrate --to 1` converts a store, a job is still in format 2 under format key 1 (or
/// left so when a migration was stopped): a catch-up and a backfill read it in its own format
/// and run (they answered 92 when they read it in the store's).
#[test]
fn catch_up_and_backfill_read_a_job_in_its_own_format_during_a_migration() {
    let s = format_2_store();
    let minute = s.now_ms() / 60_000 * 60_000;
    for back in [5, 4] {
        let slot = (minute - back * 60_000).to_string();
        s.cli(&[
            "run",
            "--job",
            "y",
            "--slot",
            &slot,
            "--max-late",
            "1h",
            "--",
            "true",
        ])
        .expect(0);
    }
    // Where `migrate --to 1` stands between the switch and this job's conversion.
    let _: () = s.cmd(&["SET", "cron:format", "1"]);
    assert!(!s.is_format_1("y"));
    let out = s.cli(&[
        "run",
        "--job",
        "y",
        "--schedule",
        "* * * * *",
        "--max-late",
        "1h",
        "--catch-up",
        "10m",
        "--",
        "true",
    ]);
    assert_eq!(out.code(), Some(0), "{}", out.dump());
    let range = format!("{}..{}", minute - 7 * 60_000, minute - 60_000);
    let out = s.cli(&[
        "run",
        "--job",
        "y",
        "--schedule",
        "* * * * *",
        "--backfill",
        &range,
        "--",
        "true",
    ]);
    assert_eq!(out.code(), Some(0), "{}", out.dump());
    // Each slot once, in the job's own format still; the migration then converts it.
    let results = s.results("y");
    let mut slots: Vec<i64> = results.iter().map(|r| r.slot).collect();
    slots.dedup();
    assert_eq!(slots.len(), results.len(), "{results:?}");
    s.cli(&["migrate", "--to", "1", "--yes"]).expect(0);
    assert!(s.is_format_1("y"));
}

/// A host whose first read of the format key came before a migration's switch (here: it slept
/// its `--jitter` meanwhile) creates the job in the format the store is in when it claims: its
/// claim reads the format key again with its look.
#[test]
fn a_claim_creates_its_job_in_the_format_the_store_is_in_when_it_claims() {
    for (before, after) in [("2", "1"), ("1", "2")] {
        let s = Server::start();
        let _: () = s.cmd(&["SET", "cron:format", before]);
        let now = s.now_ms();
        let slot = now / 60_000 * 60_000;
        // A job whose claim time for this slot (the slot plus its jitter: a jitter is waited for
        // from the slot) is 3 to 15 s from now: long enough to switch the format meanwhile.
        let job = (0..1000)
            .map(|i| format!("jittery{i}"))
            .find(|j| {
                let d =
                    anarchon::scheduler::jitter_delay(j, slot, std::time::Duration::from_secs(120));
                let wait = slot + i64::try_from(d.as_millis()).unwrap() - now;
                (3_000..15_000).contains(&wait)
            })
            .unwrap();
        let slot = slot.to_string();
        let child = spawn_run(
            &s,
            &[
                "--job",
                &job,
                "--slot",
                &slot,
                "--jitter",
                "2m",
                "--max-late",
                "1h",
                "--",
                "true",
            ],
        );
        // Its first round trip (the format check) registered the job.
        common::wait_for(
            "the run's first round trip",
            std::time::Duration::from_secs(10),
            || s.cmd::<i64>(&["EXISTS", &format!("{{cron:{job}}}:registry")]) == 1,
        );
        let _: () = s.cmd(&["SET", "cron:format", after]);
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(s.is_format_1(&job), after == "1", "{before} -> {after}");
        assert_eq!(s.results(&job).len(), 1);
    }
}

/// A `migrate --to 1` stopped while it staged leaves staging keys: the next migration, either
/// way, deletes them.
#[test]
fn staging_a_stopped_migration_left_is_deleted_by_the_next() {
    let s = format_2_store();
    three_ended_runs_each(&s, &["a"]);
    for name in ["state", "slots", "runs"] {
        let _: () = s.cmd(&["SET", &format!("{{cron:a}}:to-format-1:{name}"), "left"]);
    }
    // Nothing to convert to format 2, but the staging left behind.
    let out = s.cli(&["migrate", "--yes"]);
    assert_eq!(out.code(), Some(0), "{}", out.dump());
    let left: Vec<String> = s.cmd(&["KEYS", "{cron:a}:to-format-1:*"]);
    assert!(left.is_empty(), "{left:?}");
    assert!(!s.is_format_1("a"));
}

/// A catch-up reads which missed slots were ever claimed in two steps (the job's format, then its
/// marks): a job converted between them is read again in its new format, not refused as data of
/// another type (exit 92).
#[test]
fn a_catch_up_whose_job_is_converted_under_its_reads_reads_it_again() {
    let s = format_1_store();
    let minute = s.now_ms() / 60_000 * 60_000;
    let slot = (minute - 2 * 60_000).to_string();
    s.cli(&[
        "run",
        "--job",
        "c",
        "--slot",
        &slot,
        "--max-late",
        "1h",
        "--",
        "true",
    ])
    .expect(0);
    // The job was first seen 5 minutes ago: the slots since that no host claimed are missed.
    let first_seen = (minute - 5 * 60_000).to_string();
    let _: () = s.cmd(&["HSET", "{cron:c}:job", "first_seen", &first_seen]);
    let proxy = crate::common::proxy::FaultProxy::start(s.port);
    // The catch-up's read of the slots' marks (format 1: HEXISTS of `<slot>:status`) waits.
    proxy.hold_next_request_containing(b"HEXISTS");
    let mut run = s.anarchon_process();
    run.env("ANARCHON_REDIS_URL", &proxy.url)
        .args([
            "run",
            "--job",
            "c",
            "--schedule",
            "* * * * *",
            "--max-late",
            "1h",
            "--catch-up",
            "10m",
            "--",
            "true",
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let child = run.spawn().unwrap();
    common::wait_for(
        "the catch-up's read to be held",
        std::time::Duration::from_secs(10),
        || proxy.holding(),
    );
    s.cli(&["migrate", "--yes"]).expect(0);
    assert!(!s.is_format_1("c"));
    proxy.release();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
