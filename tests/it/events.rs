//! A job's events (`inspect`, `history --events`): what happened to its runs, read back from
//! their records, and every operator action with who, when and why, kept in `{<prefix><job>}:events`.

use crate::common::{Server, json, stderr, wait_for};
use serde_json::Value;
use std::time::Duration;

fn events(s: &Server, job: &str) -> Vec<Value> {
    let out = s.cli(&["history", job, "--events", "--last", "200", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    json(&out)["events"].as_array().unwrap().clone()
}

/// The events named `event`.
fn named<'a>(events: &'a [Value], event: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["event"] == event).collect()
}

#[test]
fn a_takeover_on_another_host_says_whom_it_took_the_run_from() {
    let s = Server::start();
    // host-a claims and dies (it never heartbeats); host-b stands by and takes the run over.
    let out = s.cli(&[
        "claim",
        "sync",
        "--new",
        "--slot",
        "120000",
        "--lease",
        "1s",
        "--runner",
        "host-a:11",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = s.cli(&[
        "run",
        "--job",
        "sync",
        "--slot",
        "120000",
        "--runner",
        "host-b:22",
        "--",
        "true",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let all = events(&s, "sync");
    let words: Vec<(String, String)> = all
        .iter()
        .rev()
        .map(|e| {
            (
                e["event"].as_str().unwrap().to_string(),
                e["by"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        words,
        [
            ("claimed".to_string(), "host-a:11".to_string()),
            ("lease_expired".to_string(), "host-a:11".to_string()),
            ("took_over".to_string(), "host-b:22".to_string()),
            ("finished".to_string(), "host-b:22".to_string()),
        ],
        "{all:#?}"
    );
    let took = named(&all, "took_over")[0];
    assert_eq!(took["attempt"], 2);
    assert_eq!(took["source"], "run");
    assert!(
        took["detail"].as_str().unwrap().contains("from host-a:11"),
        "{took}"
    );
    // The claim of a slot long past says it came late.
    assert!(
        named(&all, "claimed")[0]["detail"]
            .as_str()
            .unwrap()
            .starts_with("late by"),
        "{all:#?}"
    );
    // inspect ends with them, as kubectl describe does.
    let text = String::from_utf8_lossy(&s.cli(&["inspect", "sync"]).stdout).into_owned();
    let tail = &text[text.find("\nevents:").expect("an events section")..];
    assert!(
        tail.contains("took_over") && tail.contains("from host-a:11"),
        "{tail}"
    );
    let v = json(&s.cli(&["inspect", "sync", "--json"]));
    assert_eq!(v["events"][0]["event"], "finished", "{v:#}");
}

#[test]
fn operator_actions_are_recorded_with_who_when_and_why() {
    let s = Server::start();
    for slot in ["60000", "120000", "180000"] {
        assert_eq!(
            s.cli(&["run", "--job", "nightly", "--slot", slot, "--", "true"])
                .status
                .code(),
            Some(0)
        );
    }
    let before = s.now_ms();
    let ok = |args: &[&str]| {
        let out = s.cli(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
    };
    ok(&[
        "pause",
        "nightly",
        "--for",
        "1h",
        "--reason",
        "INC-42: the warehouse is down",
        "--by",
        "alice",
    ]);
    ok(&[
        "resume",
        "nightly",
        "--reason",
        "INC-42 fixed",
        "--by",
        "bob",
    ]);
    ok(&[
        "run-now",
        "nightly",
        "--reason",
        "rerun for INC-42",
        "--",
        "true",
    ]);
    // A run in progress whose holder went away: released by an operator.
    ok(&[
        "claim",
        "nightly",
        "--slot",
        "240000",
        "--lease",
        "1s",
        "--runner",
        "host-c:33",
    ]);
    ok(&[
        "release",
        "nightly",
        "--slot",
        "240000",
        "--yes",
        "--reason",
        "host-c is gone",
    ]);
    // The run it released says so too, by the same operator.
    let all = events(&s, "nightly");
    let released = named(&all, "released");
    assert_eq!(released.len(), 1, "{all:#?}");
    assert_eq!(released[0]["by"], named(&all, "release")[0]["by"]);
    assert_eq!(released[0]["reason"], "host-c is gone");
    ok(&[
        "trim",
        "nightly",
        "--keep",
        "1",
        "--yes",
        "--reason",
        "too much history",
    ]);
    let after = s.now_ms();

    let all = events(&s, "nightly");
    let operator: Vec<&Value> = all.iter().filter(|e| e["source"] == "operator").collect();
    let actions: Vec<&str> = operator
        .iter()
        .rev()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        actions,
        ["pause", "resume", "run-now", "release", "trim"],
        "{all:#?}"
    );
    for e in &operator {
        // When: the server's clock, as the stream entry's ID.
        let at = e["at"].as_i64().unwrap();
        assert!(before <= at && at <= after, "{e}");
        assert!(!e["by"].as_str().unwrap().is_empty(), "{e}");
    }
    let pause = named(&all, "pause")[0];
    assert_eq!(pause["by"], "alice");
    assert_eq!(pause["reason"], "INC-42: the warehouse is down");
    assert!(pause["detail"].as_str().unwrap().starts_with("until "));
    assert_eq!(named(&all, "resume")[0]["by"], "bob");
    // The default who: $USER@host:pid.
    let by = named(&all, "run-now")[0]["by"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        by.contains('@') && by.rsplit(':').next().unwrap().parse::<u32>().is_ok(),
        "{by}"
    );
    let release = named(&all, "release")[0];
    assert_eq!(release["slot"], 240000);
    assert_eq!(release["reason"], "host-c is gone");
    assert!(
        release["detail"]
            .as_str()
            .unwrap()
            .contains("attempt 1 of host-c:33"),
        "{release}"
    );
    // Run events go with the runs trimmed (bounded like history); operators' actions stay.
    assert!(named(&all, "released").is_empty(), "{all:#?}");
    assert!(
        named(&all, "trim")[0]["detail"]
            .as_str()
            .unwrap()
            .starts_with("removed "),
        "{all:#?}"
    );
    // A dry run changes nothing, and records nothing.
    let n: usize = s.cmd(&["XLEN", "{cron:nightly}:events"]);
    ok(&["trim", "nightly", "--keep", "1", "--dry-run"]);
    let m: usize = s.cmd(&["XLEN", "{cron:nightly}:events"]);
    assert_eq!(n, m);
    // inspect shows the newest, newest first.
    let text = String::from_utf8_lossy(&s.cli(&["inspect", "nightly"]).stdout).into_owned();
    let tail = &text[text.find("\nevents:").unwrap()..];
    assert!(tail.contains("too much history"), "{tail}");
}

#[test]
fn a_skip_says_why_and_the_events_key_stays_bounded() {
    let s = Server::start();
    // slot 2 meets slot 1 in progress under --overlap forbid: recorded skipped, with why.
    let out = s.cli(&[
        "claim", "rep", "--new", "--slot", "60000", "--lease", "1m", "--runner", "host-a:1",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = s.cli(&[
        "run",
        "--job",
        "rep",
        "--slot",
        "120000",
        "--skipped-ok",
        "--",
        "true",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let all = events(&s, "rep");
    let skipped = named(&all, "skipped");
    assert_eq!(skipped.len(), 1, "{all:#?}");
    assert_eq!(skipped[0]["slot"], 120000);
    assert!(
        skipped[0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("--overlap forbid"),
        "{all:#?}"
    );

    // Bounded like history: the newest 100 operator actions stay.
    for i in 0..104 {
        let out = s.cli(&["pause", "rep", "--reason", &format!("round {i}")]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let kept: usize = s.cmd(&["XLEN", "{cron:rep}:events"]);
    assert_eq!(kept, 100);
    let newest = events(&s, "rep");
    assert_eq!(named(&newest, "pause")[0]["reason"], "round 103");
    // The events key is nobody's job: a store of events alone lists no job.
    let _: () = s.cmd(&[
        "XADD",
        "{cron:ghost}:events",
        "*",
        "action",
        "pause",
        "by",
        "x",
    ]);
    let v = json(&s.cli(&["list", "--json"]));
    let names: Vec<&str> = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["job"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["rep"], "{v:#}");
}

#[test]
fn migrate_records_each_job_it_converts() {
    let s = Server::start();
    for job in ["a", "b"] {
        let out = s.cli(&["run", "--job", job, "--slot", "60000", "--", "true"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let now: u32 = s.cmd::<String>(&["GET", "cron:format"]).parse().unwrap();
    let to = if now == 1 { "2" } else { "1" };
    let out = s.cli(&[
        "migrate", "--to", to, "--yes", "--reason", "CHG-7", "--by", "carol",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for job in ["a", "b"] {
        let all = events(&s, job);
        let migrated = named(&all, "migrate");
        assert_eq!(migrated.len(), 1, "{all:#?}");
        assert_eq!(migrated[0]["by"], "carol");
        assert_eq!(migrated[0]["reason"], "CHG-7");
        assert!(
            migrated[0]["detail"]
                .as_str()
                .unwrap()
                .contains(&format!("store format {to}")),
            "{all:#?}"
        );
        // The run recorded before the conversion reads the same after it.
        assert_eq!(named(&all, "finished").len(), 1, "{all:#?}");
    }
}

#[test]
fn an_events_key_of_another_type_warns_and_the_action_still_counts() {
    let s = Server::start();
    let out = s.cli(&["run", "--job", "w", "--slot", "60000", "--", "true"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let _: () = s.cmd(&["SET", "{cron:w}:events", "not a stream"]);
    let out = s.cli(&["pause", "w", "--for", "1m"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("could not be written"),
        "{}",
        stderr(&out)
    );
    // The pause itself holds.
    wait_for("the pause", Duration::from_secs(5), || {
        json(&s.cli(&["inspect", "w", "--json"]))["paused"] == true
    });
    // Reading it says what is wrong with which key.
    let out = s.cli(&["history", "w", "--events"]);
    assert_eq!(out.status.code(), Some(92), "{}", stderr(&out));
    assert!(stderr(&out).contains("{cron:w}:events"), "{}", stderr(&out));
}

#[test]
fn a_claim_only_jobs_runs_are_claims_and_ends_not_skips() {
    let s = Server::start();
    for (slot, cmd) in [("60000", "true"), ("120000", "false")] {
        s.cli(&[
            "run",
            "--job",
            "co",
            "--strategy",
            "stream-id",
            "--slot",
            slot,
            "--",
            cmd,
        ]);
    }
    let all = events(&s, "co");
    let words: Vec<&str> = all
        .iter()
        .rev()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        words,
        ["claimed", "finished", "claimed", "failed"],
        "{all:#?}"
    );
    assert!(all.iter().all(|e| e["attempt"] == 1), "{all:#?}");
}

#[test]
fn events_are_kept_by_when_they_happened_and_a_manual_run_says_so() {
    let s = Server::start();
    // An old slot claimed now: its events happened now, inside --since 1m.
    let out = s.cli(&["run", "--job", "old", "--slot", "60000", "--", "true"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = s.cli(&["run-now", "old", "--", "true"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = s.cli(&["history", "old", "--events", "--since", "1m", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let all = json(&out)["events"].as_array().unwrap().clone();
    let of_old_slot: Vec<&Value> = all.iter().filter(|e| e["slot"] == 60000).collect();
    assert_eq!(of_old_slot.len(), 2, "{all:#?}");
    // The manual run's claim says it was one, whatever the format keeps.
    let manual: Vec<&Value> = named(&all, "claimed")
        .into_iter()
        .filter(|e| e["slot"] != 60000)
        .collect();
    assert_eq!(manual.len(), 1, "{all:#?}");
    assert_eq!(manual[0]["detail"], "manual run", "{all:#?}");
    // Nothing happened after now.
    let out = s.cli(&[
        "history",
        "old",
        "--events",
        "--since",
        "2099-01-01T00:00:00Z",
        "--json",
    ]);
    assert_eq!(json(&out)["events"].as_array().unwrap().len(), 0);
}
