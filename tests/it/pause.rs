//! `anarchon pause` / `resume`: every host's `run` skips a paused job (exit 87), atomically in the
//! claim script; the slots due during a pause stay skipped; manual runs go on.

use crate::common;
use crate::common::{Server, json, stderr};

fn run(s: &Server, job: &str, slot: &str, extra: &[&str]) -> Option<i32> {
    let mut args = vec!["run", "--job", job, "--slot", slot];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--", "true"]);
    s.cli(&args).status.code()
}

#[test]
fn a_pause_stops_every_host_and_after_resume_the_next_slot_runs_once() {
    let s = Server::start();
    assert_eq!(run(&s, "p", "60000", &[]), Some(0));
    let out = s.cli(&[
        "pause",
        "p",
        "--reason",
        "bank holiday, INC-77",
        "--by",
        "ops",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(json(&out)["paused"], true);
    let during = s.now_ms().to_string();

    // Ten hosts: none runs, each says paused.
    let file = s.dir.path().join("ran.txt");
    let line = format!("echo ran >> {}", file.display());
    let outputs = common::race(&s, 10, |_| {
        common::owned(&[
            "run", "--job", "p", "--slot", "120000", "--shell", "--", &line,
        ])
    });
    assert!(
        common::codes(&outputs).iter().all(|c| *c == 87),
        "{:?}",
        common::codes(&outputs)
    );
    assert!(!file.exists(), "a paused job ran");
    assert_eq!(run(&s, "p", "120000", &["--skipped-ok"]), Some(0));
    // Nothing was claimed.
    assert!(s.run("p", "120000").is_none());

    // Everyone can see who paused it and why.
    let v = json(&s.cli(&["list", "--json"]));
    assert_eq!(v["jobs"][0]["state"], "paused");
    let v = json(&s.cli(&["inspect", "p", "--json"]));
    assert_eq!(v["paused"], true);
    assert_eq!(v["pause"]["paused_by"], "ops");
    assert_eq!(v["pause"]["paused_reason"], "bank holiday, INC-77");
    let text = String::from_utf8_lossy(&s.cli(&["inspect", "p"]).stdout).into_owned();
    assert!(
        text.contains("paused") && text.contains("bank holiday"),
        "{text}"
    );

    // A manual run still works (an operator's explicit act).
    assert_eq!(
        s.cli(&["run-now", "p", "--", "true"]).status.code(),
        Some(0)
    );

    let out = s.cli(&["resume", "p"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The slot that was due during the pause stays skipped: it is not caught up.
    assert_eq!(run(&s, "p", &during, &[]), Some(87));
    // The next slot runs once.
    let next = (s.now_ms() + 60_000).to_string();
    let outputs = common::race(&s, 10, |_| {
        common::owned(&["run", "--job", "p", "--slot", &next, "--shell", "--", &line])
    });
    assert_eq!(
        common::codes(&outputs).iter().filter(|c| **c == 0).count(),
        1
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "ran\n");
    let out = s.cli(&["resume", "p"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("not paused"));
}

#[test]
fn a_pause_with_an_end_ends_by_itself() {
    let s = Server::start();
    assert_eq!(run(&s, "t", "60000", &[]), Some(0));
    let out = s.cli(&["pause", "t", "--until", "60000"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "a pause that ended already: {}",
        stderr(&out)
    );
    let out = s.cli(&["pause", "t", "--for", "400ms", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let until = json(&out)["paused_until"].as_i64().unwrap();
    assert_eq!(run(&s, "t", "120000", &[]), Some(87));
    common::wait_for_server_time(&s, until);
    // After its end, even a slot from before the pause is claimed as usual.
    assert_eq!(run(&s, "t", "120000", &[]), Some(0));
    // A job that does not exist cannot be paused (a typo).
    assert_eq!(s.cli(&["pause", "nope"]).status.code(), Some(85));
}
