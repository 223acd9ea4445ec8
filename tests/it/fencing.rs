//! Fencing tokens, in both store formats: every won claim of a job gets a number strictly greater
//! than every earlier won claim's, assigned in the claim script, kept with the attempt (format 2:
//! for the whole history; format 1: in the job hash until the run is compacted), and given to the
//! command as ANARCHON_FENCE.

use crate::common;
use crate::common::{Server, json, stderr};

fn claim(s: &Server, job: &str, slot: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["claim", job, "--slot", slot, "--json", "--overlap", "allow"];
    args.extend_from_slice(extra);
    let out = s.cli(&args);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    json(&out)
}

#[test]
fn every_won_claim_gets_a_greater_fence_and_the_command_sees_it() {
    let s = Server::start();
    let mut seen = Vec::new();
    // First attempts of scheduled slots, in any order of slots.
    for slot in ["180000", "60000", "120000"] {
        seen.push(claim(&s, "f", slot, &[])["fence"].as_i64().unwrap());
    }
    // A takeover after an expired lease.
    let held = claim(&s, "f", "240000", &["--lease", "200ms"]);
    seen.push(held["fence"].as_i64().unwrap());
    common::wait_for_lease_end(&s, "f", "240000");
    let taken = claim(&s, "f", "240000", &[]);
    assert_eq!(taken["attempt"], 2);
    seen.push(taken["fence"].as_i64().unwrap());
    // A manual run, and commands run by `run`, which see it as ANARCHON_FENCE.
    seen.push(
        json(&s.cli(&[
            "run-now",
            "f",
            "--claim-only",
            "--json",
            "--overlap",
            "allow",
        ]))["fence"]
            .as_i64()
            .unwrap(),
    );
    let file = s.dir.path().join("fence.txt");
    for slot in ["300000", "360000"] {
        let line = format!("echo $ANARCHON_FENCE >> {}", file.display());
        let out = s.cli(&[
            "run",
            "--job",
            "f",
            "--slot",
            slot,
            "--overlap",
            "allow",
            "--shell",
            "--",
            &line,
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let from_commands: Vec<i64> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    seen.extend(&from_commands);
    assert!(
        seen.windows(2).all(|w| w[0] < w[1]),
        "not strictly increasing: {seen:?}"
    );

    // Kept with the attempt: format 2's history shows each ended attempt's fence (format 1's
    // `:results` members do not carry it: the bytes of every run of history).
    if Server::test_store_format() == 1 {
        return;
    }
    let v = json(&s.cli(&["history", "f", "--json"]));
    let fences: Vec<i64> = v["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["fence"].as_i64())
        .collect();
    assert!(fences.contains(&from_commands[1]), "{fences:?}");
}

/// 100 won claims of one job, in the ways a fleet makes them: scheduled slots one after another,
/// kill -9 of a holder mid-run and its backup's takeover, a catch-up of missed slots, manual runs.
/// Every command appends its ANARCHON_FENCE when it starts; in that order (the order of the claims:
/// nothing here claims while another claim's command has yet to start), the fences strictly rise.
#[test]
fn fences_seen_by_commands_rise_across_100_claims_with_takeovers_and_catch_up() {
    use std::os::unix::process::CommandExt;
    use std::process::Stdio;

    let s = Server::start();
    let log = s.dir.path().join("fences.log");
    let note = format!(
        "echo $ANARCHON_FENCE $ANARCHON_SLOT $ANARCHON_ATTEMPT >> {}",
        log.display()
    );
    let lines = || -> Vec<(i64, i64, u32)> {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .map(|l| {
                let mut f = l.split(' ');
                let mut next = || f.next().unwrap().parse::<i64>().unwrap();
                (next(), next(), next() as u32)
            })
            .collect()
    };
    let run = |slot: &str, extra: &[&str], command: &str| {
        s.anarchon_process()
            .args([
                "run",
                "--job",
                "fenced",
                "--slot",
                slot,
                "--overlap",
                "allow",
            ])
            .args(extra)
            .args(["--shell", "--", command])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap()
    };
    let minute = 60_000_i64;
    let base = (s.now_ms() / minute - 2000) * minute;
    let mut slot = base;

    // 40 scheduled slots, one after another.
    for _ in 0..40 {
        slot += minute;
        assert!(run(&slot.to_string(), &[], &note).wait().unwrap().success());
    }
    // 6 takeovers: the holder is killed with SIGKILL while its command runs; the backup (waiting
    // since) takes the run over when the lease ends, as attempt 2.
    for _ in 0..6 {
        slot += minute;
        let before = lines().len();
        let slow = format!("{note}; sleep 60");
        let mut holder = run(&slot.to_string(), &["--lease", "1s"], &slow);
        common::wait_for(
            "the holder's command",
            std::time::Duration::from_secs(10),
            || lines().len() > before,
        );
        let mut backup = run(&slot.to_string(), &["--lease", "1s"], &note);
        common::wait_for_clients(&s, 3);
        holder.kill().unwrap();
        holder.wait().unwrap();
        assert!(backup.wait().unwrap().success());
        let last = *lines().last().unwrap();
        assert_eq!((last.1, last.2), (slot, 2), "the backup ran attempt 2");
    }
    // Manual runs.
    for _ in 0..6 {
        let out = s
            .anarchon()
            .args([
                "run-now",
                "fenced",
                "--overlap",
                "allow",
                "--shell",
                "--",
                &note,
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    // A catch-up of the schedule's missed minutes (the job was first seen long ago): about 45
    // claims, the missed slots of the window and the current one.
    let _: () = s.cmd(&["HSET", "{cron:fenced}:job", "first_seen", &base.to_string()]);
    let out = s
        .anarchon()
        .args([
            "run",
            "--job",
            "fenced",
            "--schedule",
            "* * * * *",
            "--overlap",
            "allow",
        ])
        .args([
            "--catch-up",
            "45m",
            "--catch-up-max",
            "100",
            "--max-late",
            "1m",
        ])
        .args(["--shell", "--", &note])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let seen = lines();
    assert!(seen.len() >= 100, "{} claims", seen.len());
    let fences: Vec<i64> = seen.iter().map(|l| l.0).collect();
    assert!(
        fences.windows(2).all(|w| w[0] < w[1]),
        "fences not strictly rising in claim order: {fences:?}"
    );
    // Each scheduled slot ran once (a takeover's two lines are its two attempts).
    let mut first_attempts: Vec<i64> = seen.iter().filter(|l| l.2 == 1).map(|l| l.1).collect();
    let n = first_attempts.len();
    first_attempts.sort();
    first_attempts.dedup();
    assert_eq!(first_attempts.len(), n, "a slot ran twice as attempt 1");
}
