//! A fleet at the same minute: every host runs `anarchon run` for the same slot, one wins (and
//! three daemons share a herd of slots due at one instant among them). The
//! losers of a held run must not cost the shared Redis a script each (src/strategy/lease/look.rs,
//! the registry's read before its write): what they decide from plain reads is checked here by the server's own
//! count of script calls (INFO commandstats), and that the command still ran exactly once by what
//! the command itself wrote.

use crate::common;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use crate::common::Server;
use crate::common::replica::Replica;

/// Every script run so far, by any verb.
fn scripts_run(s: &Server) -> u64 {
    [
        "fcall",
        "fcall_ro",
        "evalsha",
        "evalsha_ro",
        "eval",
        "eval_ro",
    ]
    .iter()
    .map(|name| s.command_calls(name))
    .sum()
}

/// `anarchon run` of `slot` appending one timestamped line to `log` (what the command did).
fn run_args(slot: &str, log: &Path, extra: &[&str]) -> Vec<String> {
    let mut args = common::owned(&["run", "--job", "herd", "--slot", slot, "--no-backup"]);
    args.extend(common::owned(extra));
    args.extend(common::owned(&[
        "--",
        "sh",
        "-c",
        &format!("date +%s%N >> {}", log.display()),
    ]));
    args
}

#[test]
fn the_losers_of_a_herd_run_no_script_and_the_command_runs_once() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("ran");
    let release = dir.path().join("release");
    let slot = s.now_ms().to_string();

    // The winner holds the run until the test lets it go.
    let mut holder = common::spawn_run(
        &s,
        &[
            "--job",
            "herd",
            "--slot",
            &slot,
            "--",
            "sh",
            "-c",
            &format!(
                "date +%s%N >> {}; while [ ! -f {} ]; do sleep 0.05; done",
                log.display(),
                release.display()
            ),
        ],
    );
    common::wait_for_line(&log);
    // The look: format 1 reads the slot's :state fields (HMGET), format 2 its :live field (HGET).
    let format_1 = s.is_format_1("herd");
    let look = if format_1 { "hmget" } else { "hget" };
    let (scripts_before, looks_before) = (scripts_run(&s), s.command_calls(look));

    // Twelve more hosts while it runs: each told running (82), without a script.
    let outputs = common::race(&s, 12, |_| run_args(&slot, &log, &[]));
    assert_eq!(common::codes(&outputs), vec![82; 12], "{}", dump(&outputs));
    assert_eq!(
        scripts_run(&s),
        scripts_before,
        "a claim of a held run, or an unchanged registry, ran a script"
    );
    assert!(
        s.command_calls(look) >= looks_before + 12,
        "each loser looked at the slot"
    );
    assert!(
        outputs
            .iter()
            .all(|o| common::stderr(o).contains("held by") || o.stderr.is_empty()),
        "{}",
        dump(&outputs)
    );

    // Once it ended: done (81).
    std::fs::write(&release, "").unwrap();
    let held = holder.wait().unwrap();
    assert!(held.success(), "the winner's run failed");
    let scripts_before = scripts_run(&s);
    let outputs = common::race(&s, 12, |_| run_args(&slot, &log, &["--json"]));
    assert_eq!(common::codes(&outputs), vec![81; 12], "{}", dump(&outputs));
    for o in &outputs {
        assert_eq!(common::json(o)["status"], "finished");
    }
    // Format 1: a final status in :state is the look's to answer too (no script); format 2's
    // ended runs are in :results, the claim script's to answer (one each). The registry still
    // needs none.
    let scripts = if format_1 { 0 } else { 12 };
    assert_eq!(scripts_run(&s), scripts_before + scripts);

    // The command itself ran once.
    let lines = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        lines.lines().count(),
        1,
        "the command ran more than once: {lines}"
    );
}

#[test]
fn a_racing_herd_still_has_one_winner_and_new_settings_are_still_registered() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("ran");
    let slot = s.now_ms().to_string();
    // Sixteen hosts at once, none ahead of the others: the looks see nothing, the scripts decide.
    let outputs = common::race(&s, 16, |_| run_args(&slot, &log, &[]));
    let codes = common::codes(&outputs);
    assert_eq!(codes.iter().filter(|c| **c == 0).count(), 1, "{codes:?}");
    assert!(codes.iter().all(|c| [0, 81, 82].contains(c)), "{codes:?}");
    let lines = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        lines.lines().count(),
        1,
        "the command ran more than once: {lines}"
    );

    // The registry read found nothing to write for the same settings; a changed setting is written.
    let before: String = s.cmd(&["HGET", "{cron:herd}:registry", "max_late_ms"]);
    let next = (s.now_ms() + 1).to_string();
    common::race(&s, 1, |_| run_args(&next, &log, &["--max-late", "7m"]));
    let after: String = s.cmd(&["HGET", "{cron:herd}:registry", "max_late_ms"]);
    assert_ne!(before, after);
    assert_eq!(after, "420000");
}

fn dump(outputs: &[std::process::Output]) -> String {
    outputs
        .iter()
        .map(|o| format!("{:?}: {}", o.status.code(), common::stderr(o)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// How many jobs the daemons' herd has: enough that each of three replicas' share of the jobs'
/// first choices (src/daemon/herd.rs: a hash of job and replica) is far from the bound below.
const HERD_JOBS: usize = 150;

/// A herd on a fleet of daemons: `HERD_JOBS` jobs due at the same instants, three replicas of
/// `anarchon cron`. Each replica runs a share of the herd (each job's first choice among the live
/// replicas claims first, the others a moment later); it was nearly all one replica's (985 / 15 /
/// 0 of 1,000), whichever claims reached the store first. Every slot still ran, each once: who
/// runs it is the claim's decision, the replicas only claim in turns. And the first herd, on a
/// new store, loaded the scripts' library once per replica, not once per claim.
#[test]
fn three_daemons_share_a_herd_and_run_each_slot_once() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let (file, log) = (dir.path().join("crontab"), dir.path().join("ran"));
    let mut tab = String::new();
    for i in 0..HERD_JOBS {
        tab.push_str(&format!(
            "# anarchon: --job h{i}\n*/3 * * * * * echo \"$ANARCHON_JOB $ANARCHON_SLOT $ANARCHON_RUNNER\" >> {}\n",
            log.display()
        ));
    }
    std::fs::write(&file, tab).unwrap();
    let replicas: Vec<Replica> = (0..3)
        .map(|i| Replica::start(&s.url, &file, dir.path(), &format!("r{i}"), &[]))
        .collect();
    // The herds counted are those after every replica has read the others' presences: each
    // writes its own every 2 s and reads them all as often.
    common::wait_for("three presences", Duration::from_secs(20), || {
        s.cmd::<i64>(&["HLEN", "{cron:}:replicas"]) == 3
    });
    let known = s.now_ms() + 4_000;
    let herds = || -> BTreeMap<i64, Vec<(String, String)>> {
        let mut by_slot: BTreeMap<i64, Vec<(String, String)>> = BTreeMap::new();
        for line in std::fs::read_to_string(&log).unwrap_or_default().lines() {
            let mut words = line.split_whitespace();
            if let (Some(job), Some(slot), Some(runner)) =
                (words.next(), words.next(), words.next())
                && let Ok(slot) = slot.parse::<i64>()
            {
                by_slot
                    .entry(slot)
                    .or_default()
                    .push((job.to_string(), runner.to_string()));
            }
        }
        by_slot
    };
    common::wait_for("three whole herds", Duration::from_secs(90), || {
        herds()
            .range(known..)
            .filter(|(_, runs)| runs.len() >= HERD_JOBS)
            .count()
            >= 3
    });
    for r in replicas {
        drop(r);
    }
    // The first herd found the store's library not loaded: each replica loaded it once, not once
    // per claim (each a copy of its source, compiled again by the server).
    let loads = s.command_calls("function|load");
    assert!(loads <= 3, "{loads} FUNCTION LOADs");
    let herds = herds();
    // Each slot ran once (the runs of a slot still in progress when the replicas were stopped
    // are at most once each too).
    for (slot, runs) in &herds {
        let mut jobs: Vec<&String> = runs.iter().map(|(job, _)| job).collect();
        jobs.sort();
        let n = jobs.len();
        jobs.dedup();
        assert_eq!(jobs.len(), n, "a job ran twice for slot {slot}: {runs:?}");
    }
    // Each herd shared: a third each is the fair share (the first choices alone are 50 ± 6 of
    // 150); none ran half of it, each a tenth at least, generously (a replica late by more than
    // the step back on a loaded machine loses some of its first choices to the others).
    for (slot, runs) in herds
        .range(known..)
        .filter(|(_, runs)| runs.len() >= HERD_JOBS)
        .take(3)
    {
        let mut share: BTreeMap<&str, usize> = BTreeMap::new();
        for (_, runner) in runs {
            *share.entry(runner.as_str()).or_default() += 1;
        }
        assert!(
            share.len() == 3
                && share
                    .values()
                    .all(|n| *n * 10 >= runs.len() && *n * 2 < runs.len()),
            "the herd of {slot} was not shared: {share:?} of {} runs",
            runs.len()
        );
    }
}
