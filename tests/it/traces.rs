//! One trace per scheduled run, at a collector (issue 51): anarchon's spans of a run (the slot,
//! each attempt, each host's waits, the command) reach an OTLP receiver the test starts, in the
//! one trace every host derives, each span sent once; and a collector hung or gone costs no run.

use std::process::Stdio;
use std::time::Duration;

use crate::common::otlp::{Collector, Span, Stalled};
use crate::common::{Server, stderr, wait_for_claim};
use crate::run::{documented_traceparent, kill_host, sleeper};

const SLOT: &str = "1796220300000";

/// `anarchon run` sending its spans to `endpoint`, batches sent at once (a test need not wait
/// the processor's 5 s).
fn traced_run(s: &Server, endpoint: &str) -> std::process::Command {
    use std::os::unix::process::CommandExt;
    let mut cmd = s.anarchon_process();
    cmd.env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
        .env("OTEL_BSP_SCHEDULE_DELAY", "100")
        .arg("run")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0);
    cmd
}

fn named<'a>(spans: &'a [Span], name: &str) -> Vec<&'a Span> {
    spans.iter().filter(|s| s.name == name).collect()
}

fn one<'a>(spans: &'a [Span], name: &str) -> &'a Span {
    let found = named(spans, name);
    assert_eq!(found.len(), 1, "one {name:?} span in {spans:#?}");
    found[0]
}

/// The done-when of item 1: the winner is killed mid-run (host gone: it sends nothing more), a
/// backup on another host takes the run over; at the collector, one trace holds the slot, both
/// attempts (the killed host's, sent on its behalf by the host whose takeover recorded its end,
/// with its host and claim time from the store) and the backup's wait and command; the IDs are
/// those the commands got in `TRACEPARENT`, each span once.
#[test]
fn a_run_taken_over_by_a_second_host_is_one_trace_at_the_collector() {
    let s = Server::start();
    let collector = Collector::start();
    let seen = |name: &str| s.dir.path().join(name);
    let pidfile = seen("winner.pid");
    let record = |file: &std::path::Path| format!("echo \"$TRACEPARENT\" > {}", file.display());
    let winner_line = format!("{}; {}", record(&seen("winner.tp")), sleeper(&pidfile));
    let job = ["--job", "traced", "--slot", SLOT, "--lease", "1s"];
    let winner = traced_run(&s, &collector.endpoint())
        .args(job)
        .args(["--runner", "host-a", "--shell", "--", &winner_line])
        .spawn()
        .unwrap();
    wait_for_claim(&s, "traced", SLOT);
    let backup_line = format!("{}; sleep 0.2", record(&seen("backup.tp")));
    let backup = traced_run(&s, &collector.endpoint())
        .args(job)
        .args(["--runner", "host-b", "--backup-for", "20s", "--shell", "--"])
        .arg(&backup_line)
        .spawn()
        .unwrap();
    crate::common::wait_for_clients(&s, 3);
    kill_host(winner, &pidfile);
    let out = backup.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    let spans = collector.wait_for("the slot's span", |spans| {
        spans.iter().any(|s| s.name == "traced")
    });
    let tp = |attempt| documented_traceparent("cron:", "traced", SLOT, "scheduled", attempt);
    let (first, second) = (tp(1), tp(2));
    let read = |name: &str| {
        std::fs::read_to_string(seen(name))
            .unwrap()
            .trim()
            .to_string()
    };
    assert_eq!(read("winner.tp"), first);
    assert_eq!(read("backup.tp"), second);
    let trace = first.split('-').nth(1).unwrap();
    let parent_of = |tp: &str| tp.split('-').nth(2).unwrap().to_string();
    assert!(
        spans.iter().all(|s| s.trace_id == trace),
        "every span in the run's one trace {trace}: {spans:#?}"
    );

    let slot = one(&spans, "traced");
    assert_eq!(slot.parent, "", "the slot's span is the root");
    assert_eq!(slot.status, 1, "{slot:?}");
    assert_eq!(slot.attr("anarchon.status"), "finished");
    assert_eq!(slot.attr("anarchon.recorded_by"), "host-b");
    assert_eq!(
        slot.start_ns,
        1_796_220_300_000 * 1_000_000,
        "from the fire time"
    );

    let a1 = one(&spans, "attempt 1");
    assert_eq!(
        a1.span_id,
        parent_of(&first),
        "the killed host's command's parent"
    );
    assert_eq!(a1.parent, slot.span_id);
    assert_eq!(a1.attr("anarchon.runner"), "host-a");
    assert_eq!(a1.attr("anarchon.recorded_by"), "host-b");
    assert_eq!(a1.attr("anarchon.status"), "interrupted");
    assert_eq!(a1.status, 2, "{a1:?}");
    assert!(a1.status_message.contains("taken over by host-b"), "{a1:?}");
    assert_eq!(a1.host, "host-b", "sent by the host that recorded it");

    let a2 = one(&spans, "attempt 2");
    assert_eq!(a2.span_id, parent_of(&second));
    assert_eq!(a2.parent, slot.span_id);
    assert_eq!(a2.attr("anarchon.runner"), "host-b");
    assert_eq!(a2.attr("anarchon.status"), "finished");
    assert_eq!(a2.status, 1);
    assert!(
        a1.start_ns < a1.end_ns && a1.end_ns <= a2.start_ns + 1_000_000,
        "{a1:?} {a2:?}"
    );

    let command = one(&spans, "command");
    assert_eq!(command.parent, a2.span_id);
    assert_eq!(command.attr("process.exit.code"), "0");
    assert!(
        a2.start_ns <= command.start_ns && command.end_ns <= a2.end_ns,
        "{a2:?} {command:?}"
    );
    let standing = one(&spans, "standing by");
    assert_eq!(standing.parent, slot.span_id);
    assert_eq!(standing.attr("anarchon.held_by"), "host-a");
    assert_eq!(standing.attr("anarchon.then"), "took over");
    assert!(spans.iter().all(|s| s.service == "anarchon"), "{spans:#?}");
}

/// A collector that takes the connection and never answers, and one that is not there: the run
/// runs and is recorded as ever, the wrapper ends (its wait for the collector is bounded), and a
/// collector gone is said once.
#[test]
fn a_hung_or_absent_collector_costs_no_run() {
    let s = Server::start();
    let stalled = Stalled::start();
    let gone = format!("http://127.0.0.1:{}", crate::common::dead_port());
    for (job, endpoint) in [("hung", stalled.endpoint()), ("gone", gone)] {
        let started = std::time::Instant::now();
        let out = traced_run(&s, &endpoint)
            .args(["--job", job, "--slot", SLOT, "--", "true"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{job}: {}", stderr(&out));
        assert_eq!(
            s.state_map(job)
                .get(&format!("{SLOT}:status"))
                .map(String::as_str),
            Some("finished"),
            "{job}"
        );
        // Not a timing claim: the wrapper must end, whatever the collector does (the exporter's
        // own timeout is 10 s; the exit waits 2 s at most).
        assert!(
            started.elapsed() < Duration::from_secs(9),
            "{job}: {:?}",
            started.elapsed()
        );
        if job == "gone" {
            let said = stderr(&out);
            assert_eq!(
                said.matches("could not be sent to the trace collector")
                    .count(),
                1,
                "{said}"
            );
        }
    }
}

/// The variables anarchon cannot follow are said, with what to set, and the run runs untraced.
#[test]
fn a_protocol_it_does_not_speak_is_said_and_the_run_runs() {
    let s = Server::start();
    let out = s
        .anarchon_process()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317")
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        .args(["run", "--job", "grpc", "--slot", SLOT, "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(
        said.contains("traces are off") && said.contains("hint:"),
        "{said}"
    );
}
