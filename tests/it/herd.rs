//! A fleet at the same minute: every host runs `anarchon run` for the same slot, one wins. The
//! losers of a held run must not cost the shared Redis a script each (src/strategy/lease/look.rs,
//! the registry's read before its write): what they decide from plain reads is checked here by the server's own
//! count of script calls (INFO commandstats), and that the command still ran exactly once by what
//! the command itself wrote.

use crate::common;
use std::path::Path;

use crate::common::Server;

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
