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
    assert_eq!(a1.instance, "host-b", "sent by the host that recorded it");

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
    // The resource: the service, this machine, and the runner that sent each span.
    let hostname = String::from_utf8(
        std::process::Command::new("hostname")
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .trim()
    .to_string();
    assert!(
        spans
            .iter()
            .all(|s| s.service == "anarchon" && s.host == hostname && s.instance == "host-b"),
        "{spans:#?}"
    );
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
        // Credentials in the endpoint (a user's password, an API key) are never said.
        let endpoint =
            endpoint.replace("http://", "http://user:CollPW@") + "/v1/traces?api_key=QSECRET";
        let out = traced_run(&s, "")
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", &endpoint)
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
        let said = stderr(&out);
        let warned = if job == "gone" {
            "could not be sent to the trace collector"
        } else {
            "did not take the last spans"
        };
        assert_eq!(said.matches(warned).count(), 1, "{job}: {said}");
        assert!(
            !said.contains("CollPW") && !said.contains("QSECRET"),
            "{said}"
        );
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

/// The other side of "each span once": the winner is cut off from the store (not killed), its
/// command stopped when its lease could not be kept, while a backup takes the run over and
/// records attempt 1 interrupted. The cut-off host, still reaching the collector, sends its
/// command's span but not a second "attempt 1": that attempt's end was written by the backup's
/// claim, which sent its span.
#[test]
fn a_host_cut_off_from_the_store_sends_no_second_copy_of_its_attempt() {
    use crate::common::proxy::{Fault, FaultProxy};
    let s = Server::start();
    let proxy = FaultProxy::start(s.port);
    let collector = Collector::start();
    let pidfile = s.dir.path().join("winner.pid");
    let flags = [
        "--job",
        "cut",
        "--slot",
        SLOT,
        "--lease",
        "2s",
        "--command-timeout",
        "500ms",
        "--connect-timeout",
        "500ms",
    ];
    let winner = traced_run(&s, &collector.endpoint())
        .env("ANARCHON_REDIS_URL", &proxy.url)
        .args(flags)
        .args(["--runner", "host-a", "--shell", "--", &sleeper(&pidfile)])
        .spawn()
        .unwrap();
    crate::common::wait_for_line(&pidfile);
    let backup = traced_run(&s, &collector.endpoint())
        .args(flags)
        .args(["--runner", "host-b", "--backup-for", "30s", "--", "true"])
        .spawn()
        .unwrap();
    crate::common::wait_for_clients(&s, 3);
    proxy.set(Fault::Partition);
    let out = backup.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let cut_off = winner.wait_with_output().unwrap();
    assert!(stderr(&cut_off).contains("lease"), "{}", stderr(&cut_off));

    // The cut-off host's command span is its last word: once it is in, all it sent is.
    let spans = collector.wait_for("both hosts' command spans and the slot's", |spans| {
        named(spans, "command").len() == 2 && !named(spans, "cut").is_empty()
    });
    let a1 = one(&spans, "attempt 1");
    assert_eq!(a1.attr("anarchon.runner"), "host-a");
    assert_eq!(a1.attr("anarchon.recorded_by"), "host-b");
    let a2 = one(&spans, "attempt 2");
    let commands = named(&spans, "command");
    let parents: Vec<&str> = commands.iter().map(|c| c.parent.as_str()).collect();
    assert!(
        parents.contains(&a1.span_id.as_str()) && parents.contains(&a2.span_id.as_str()),
        "each command under its attempt: {spans:#?}"
    );
    let cut_command = commands.iter().find(|c| c.parent == a1.span_id).unwrap();
    assert_eq!(cut_command.instance, "host-a");
    assert_eq!(
        cut_command.status, 2,
        "stopped, not finished: {cut_command:?}"
    );
    one(&spans, "cut");
}

/// `anarchon cron` in a rolling deploy: the replica running a long command is stopped (SIGTERM)
/// and hands the run over to the replica standing by, which runs attempt 2. One trace at the
/// collector holds both attempts, the first sent by the replica whose claim recorded it handed
/// over, and the stopped replica's command span, sent as it exited. One replica speaks
/// `http/json`, the other protobuf: both land alike.
#[test]
fn a_run_handed_over_in_a_rolling_deploy_is_one_trace() {
    use crate::common::replica::Replica;
    let s = Server::start();
    let collector = Collector::start();
    let dir = s.dir.path();
    let file = dir.join("crontab");
    // Attempt 1 runs long (until its replica stops); attempt 2 ends at once.
    let command = format!(
        "echo \"$TRACEPARENT\" > {}/$ANARCHON_SLOT.$ANARCHON_ATTEMPT.tp; [ \"$ANARCHON_ATTEMPT\" = 1 ] && exec sleep 100; true",
        dir.display()
    );
    std::fs::write(
        &file,
        format!("# anarchon: --job deploy --lease 60s\n*/20 * * * * * {command}\n"),
    )
    .unwrap();
    let endpoint = collector.endpoint();
    let env = |protocol| {
        [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", protocol),
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
        ]
    };
    let grace = ["--shutdown-grace", "1s", "-v"];
    s.wait_for_phase(20_000, 2_000, 10_000);
    let mut holder =
        Replica::start_with_env(&s.url, &file, dir, "a", &grace, &env("http/protobuf"));
    let first_tp = || {
        std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .find(|n| n.ends_with(".1.tp"))
    };
    crate::common::wait_for("attempt 1 to start", Duration::from_secs(30), || {
        first_tp().is_some()
    });
    let slot = first_tp().unwrap().trim_end_matches(".1.tp").to_string();
    let backup = Replica::start_with_env(&s.url, &file, dir, "b", &grace, &env("http/json"));
    crate::common::wait_for("the backup to stand by", Duration::from_secs(10), || {
        backup.stderr().contains("standing by")
    });
    assert_eq!(holder.stop(Duration::from_secs(20)), Some(0));
    let trace = documented_traceparent("cron:", "deploy", &slot, "scheduled", 1)
        .split('-')
        .nth(1)
        .unwrap()
        .to_string();
    let spans = collector.wait_for(
        "the slot's span, and the stopped replica's command",
        |spans| {
            let of_run = |name: &str| {
                spans
                    .iter()
                    .filter(|s| s.trace_id == trace && s.name == name)
                    .count()
            };
            of_run("deploy") == 1 && of_run("command") == 2
        },
    );
    let spans: Vec<Span> = spans.into_iter().filter(|s| s.trace_id == trace).collect();
    let (a, b) = (holder.runner(), backup.runner());
    let a1 = one(&spans, "attempt 1");
    assert_eq!(a1.attr("anarchon.runner"), a);
    assert_eq!(a1.attr("anarchon.recorded_by"), b);
    assert!(a1.status_message.contains("handed over"), "{a1:?}");
    let a2 = one(&spans, "attempt 2");
    assert_eq!((a2.attr("anarchon.runner"), a2.status), (b.as_str(), 1));
    let slot_span = one(&spans, "deploy");
    assert_eq!(slot_span.attr("anarchon.recorded_by"), b);
    for c in named(&spans, "command") {
        let host = if c.parent == a1.span_id { &a } else { &b };
        assert_eq!(&c.instance, host, "{c:?}");
        assert!(c.parent == a1.span_id || c.parent == a2.span_id, "{c:?}");
    }
    one(&spans, "standing by");
    let protocols = collector.content_types();
    assert!(
        protocols.contains("application/json") && protocols.contains("application/x-protobuf"),
        "{protocols:?}"
    );
    drop(backup);
}

/// A slot that `--overlap forbid` skips because an older run holds the job: its host recorded the
/// skip, and sends the slot's span as a skip (status unset, its reason), not as the older run it
/// found (running, its attempts).
#[test]
fn a_slot_skipped_for_an_older_run_is_a_skip_in_its_trace() {
    let s = Server::start();
    let collector = Collector::start();
    let pidfile = s.dir.path().join("older.pid");
    let older = traced_run(&s, &collector.endpoint())
        .args([
            "--job", "held", "--slot", SLOT, "--runner", "host-a", "--shell", "--",
        ])
        .arg(sleeper(&pidfile))
        .spawn()
        .unwrap();
    crate::common::wait_for_line(&pidfile);
    let next = (SLOT.parse::<i64>().unwrap() + 60_000).to_string();
    let out = traced_run(&s, &collector.endpoint())
        .args([
            "--job", "held", "--slot", &next, "--runner", "host-b", "--", "true",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(80), "{}", stderr(&out));
    kill_host(older, &pidfile);
    let trace = documented_traceparent("cron:", "held", &next, "scheduled", 1)
        .split('-')
        .nth(1)
        .unwrap()
        .to_string();
    let spans = collector.wait_for("the skipped slot's span", |spans| {
        spans.iter().any(|s| s.trace_id == trace)
    });
    let skipped: Vec<&Span> = spans.iter().filter(|s| s.trace_id == trace).collect();
    assert_eq!(skipped.len(), 1, "{skipped:#?}");
    let slot = skipped[0];
    assert_eq!((slot.name.as_str(), slot.parent.as_str()), ("held", ""));
    assert_eq!(slot.attr("anarchon.status"), "skipped");
    assert_eq!(slot.attr("anarchon.attempts"), "");
    assert_eq!(slot.status, 0, "a policy's skip is no error: {slot:?}");
    assert!(slot.attr("anarchon.reason").contains("forbid"), "{slot:?}");
}

/// A failed attempt's retry taken by another host, which fails too and ends the run: the slot's
/// span comes from that host alone. The first host, waiting for the retry, learns the run ended
/// and sends none (CI's traced soak found it sending one too: the slot span twice).
#[test]
fn a_retry_another_host_ended_leaves_the_slot_span_to_it() {
    use crate::common::proxy::{Fault, FaultProxy};
    let s = Server::start();
    let proxy = FaultProxy::start(s.port);
    let collector = Collector::start();
    let pidfile = s.dir.path().join("retry.pid");
    let flags = [
        "--job",
        "flaky",
        "--slot",
        SLOT,
        "--lease",
        "2s",
        "--retries",
        "1",
        "--retry-delay",
        "2s",
    ];
    let first = traced_run(&s, &collector.endpoint())
        .env("ANARCHON_REDIS_URL", &proxy.url)
        .args(flags)
        .args([
            "--runner",
            "host-a",
            "--command-timeout",
            "500ms",
            "--",
            "sh",
            "-c",
            "exit 3",
        ])
        .spawn()
        .unwrap();
    crate::common::wait_for(
        "attempt 1 to fail with its retry due",
        Duration::from_secs(20),
        || {
            s.state_map("flaky")
                .get(&format!("{SLOT}:status"))
                .map(String::as_str)
                == Some("running")
                && s.cmd::<Option<String>>(&["HGET", "{cron:flaky}:job", &format!("retry:{SLOT}")])
                    .is_some()
        },
    );
    // The first host cannot reach the store when the retry comes due: the other takes it.
    proxy.set(Fault::Stall);
    let second = traced_run(&s, &collector.endpoint())
        .args(flags)
        .args(["--runner", "host-b", "--backup-for", "30s", "--shell", "--"])
        .arg(format!("echo $$ > {}; exit 3", pidfile.display()))
        .spawn()
        .unwrap();
    crate::common::wait_for_line(&pidfile);
    proxy.set(Fault::Pass);
    let out = second.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let out = first.wait_with_output().unwrap();
    assert!(out.status.code().is_some(), "{}", stderr(&out));
    let spans = collector.wait_for("both attempts' spans and the slot's", |spans| {
        !named(spans, "attempt 2").is_empty() && !named(spans, "flaky").is_empty()
    });
    let slot = one(&spans, "flaky");
    assert_eq!(slot.attr("anarchon.recorded_by"), "host-b", "{slot:?}");
    assert_eq!(slot.attr("anarchon.status"), "failed");
    one(&spans, "attempt 1");
    one(&spans, "attempt 2");
}

/// `cron --listen`'s /metrics counts its spans: those the collector took, and those lost to a
/// collector that is gone (an operator sees a dark trace backend on the dashboard, not only in
/// the log). Two replicas of two crontabs: one sends to the test's collector, one to a port
/// nothing listens on.
#[test]
fn cron_metrics_count_the_spans_the_collector_took_and_those_lost() {
    use crate::common::http::get as http_get;
    use crate::common::replica::Replica;
    let s = Server::start();
    let collector = Collector::start();
    let dir = s.dir.path();
    let gone = format!("http://127.0.0.1:{}", crate::common::free_port());
    let mut replicas = Vec::new();
    for (name, endpoint) in [("up", collector.endpoint()), ("down", gone)] {
        let file = dir.join(format!("{name}.crontab"));
        std::fs::write(
            &file,
            format!("# anarchon: --job {name}\n* * * * * * true\n"),
        )
        .unwrap();
        let env = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
        ];
        let listen = ["--listen", "127.0.0.1:0"];
        replicas.push(Replica::start_with_env(
            &s.url, &file, dir, name, &listen, &env,
        ));
    }
    let counted = |replica: &Replica, series: &str| -> u64 {
        let (status, metrics) = http_get(replica.listening_port(), "/metrics");
        assert_eq!(status, 200, "{metrics}");
        crate::common::http::sample(&metrics, series)
            .unwrap_or_else(|| panic!("no {series} in {metrics}"))
    };
    const EXPORTED: &str = "anarchon_cron_trace_spans_exported_total";
    const DROPPED: &str = "anarchon_cron_trace_spans_dropped_total";
    let (up, down) = (&replicas[0], &replicas[1]);
    collector.wait_for("two runs of `up`", |spans| {
        spans.iter().filter(|s| s.name == "up").count() >= 2
    });
    crate::common::wait_for(
        "`up` to count what it sent",
        Duration::from_secs(10),
        || counted(up, EXPORTED) >= 2 * 3,
    );
    crate::common::wait_for(
        "`down` to count what it lost",
        Duration::from_secs(20),
        || counted(down, DROPPED) >= 2 * 3,
    );
    assert_eq!(counted(up, DROPPED), 0);
    assert_eq!(counted(down, EXPORTED), 0);
    // Every span at the collector is counted (once its batch's answer is back).
    let at_collector = collector.spans().len() as u64;
    crate::common::wait_for(
        "`up` to count what arrived",
        Duration::from_secs(10),
        || counted(up, EXPORTED) >= at_collector,
    );
    assert!(
        collector.spans().iter().all(|s| s.name != "down"),
        "nothing of `down` reached the collector"
    );
    assert!(
        down.stderr().contains("could not be sent"),
        "{}",
        down.stderr()
    );
}
