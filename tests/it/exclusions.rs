//! Exclusion windows (`--exclude`) and named calendars (`anarchon calendar`, `--calendar`): a slot
//! in a window is not run on any host and is recorded skipped with the window's name; an edit of a
//! calendar applies to every replica's next slot; windows read in the schedule's zone, across
//! daylight saving too. Judged by what the command did (its own log) and what the store records.

use std::time::Duration;

use crate::common::replica::Replica;
use crate::common::ticker::{copies, ticker_as};
use crate::common::{Server, spawn_run, wait_for};

fn ms(rfc: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(rfc)
        .unwrap()
        .timestamp_millis()
}

#[test]
fn a_slot_in_a_window_is_recorded_skipped_by_every_host_and_run_by_none() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let cmd = ticker_as(&log, "$ANARCHON_SLOT", 100, false);
    let run = |slot: &str, host: &str| {
        spawn_run(
            &s,
            &[
                "--job",
                "report",
                "--slot",
                slot,
                "--runner",
                host,
                "--exclude",
                "weekend=sat,sun",
                "--exclude",
                "12-25",
                "--shell",
                "--",
                &cmd,
            ],
        )
    };
    // A Sunday, Christmas (a Friday), and a Monday.
    for slot in [
        "2026-12-06T10:00:00Z",
        "2026-12-25T10:00:00Z",
        "2026-12-07T10:00:00Z",
    ] {
        let hosts = [run(slot, "host-a"), run(slot, "host-b")];
        for h in hosts {
            let out = h.wait_with_output().unwrap();
            assert!(
                matches!(out.status.code(), Some(0) | Some(81) | Some(82)),
                "{slot}: {out:?}"
            );
        }
    }
    let ran: Vec<i64> = copies(&log)
        .iter()
        .filter_map(|c| c.label.parse().ok())
        .collect();
    assert_eq!(ran, vec![ms("2026-12-07T10:00:00Z")], "only Monday ran");
    let mut records: Vec<(i64, String, String)> = s
        .results("report")
        .into_iter()
        .map(|r| {
            let reason = r.result["reason"].as_str().unwrap_or_default().to_string();
            (r.slot, r.status, reason)
        })
        .collect();
    records.sort();
    assert_eq!(
        records,
        vec![
            (
                ms("2026-12-06T10:00:00Z"),
                "skipped".into(),
                "excluded: weekend".into()
            ),
            (ms("2026-12-07T10:00:00Z"), "finished".into(), String::new()),
            (
                ms("2026-12-25T10:00:00Z"),
                "skipped".into(),
                "excluded: 12-25".into()
            ),
        ]
    );
}

/// Two replicas name a calendar; an operator sets it to exclude the time now, and every slot after
/// is skipped by both (recorded once each); deleting it lets the slots run again. The calendar
/// shows both edits, by whom and why.
#[test]
fn a_calendar_edit_applies_to_every_replica_s_next_slot() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let file = dir.path().join("crontab");
    std::fs::write(
        &file,
        format!(
            "# anarchon: --job nightly --calendar freeze\n*/2 * * * * * {}\n",
            ticker_as(&log, "$ANARCHON_SLOT", 100, false)
        ),
    )
    .unwrap();
    let _a = Replica::start(&s.url, &file, dir.path(), "a", &[]);
    let _b = Replica::start(&s.url, &file, dir.path(), "b", &[]);
    wait_for("a slot to run", Duration::from_secs(20), || {
        !copies(&log).is_empty()
    });
    // The freeze: this hour and the next, by the server's clock (the job's zone is UTC).
    let now = s.now_ms();
    let hour = chrono::DateTime::from_timestamp_millis(now).unwrap();
    let from = hour.format("%H:00").to_string();
    let to = (hour + chrono::Duration::hours(2))
        .format("%H:00")
        .to_string();
    s.cli(&[
        "calendar",
        "set",
        "freeze",
        &format!("release-freeze={from}-{to}"),
        "--by",
        "ops",
        "--reason",
        "CHG-9",
    ])
    .expect(0);
    let set_at = s.now_ms();
    wait_for("three slots skipped", Duration::from_secs(30), || {
        s.results("nightly")
            .iter()
            .filter(|r| r.slot > set_at && r.status == "skipped")
            .count()
            >= 3
    });
    let ran_during: Vec<i64> = copies(&log)
        .iter()
        .filter_map(|c| c.label.parse::<i64>().ok())
        .filter(|slot| *slot > set_at + 2_000)
        .collect();
    assert!(ran_during.is_empty(), "ran in the freeze: {ran_during:?}");
    for r in s
        .results("nightly")
        .iter()
        .filter(|r| r.status == "skipped")
    {
        assert_eq!(r.result["reason"], "excluded: release-freeze", "{r:?}");
    }
    let shown = s
        .cli(&["calendar", "show", "freeze", "--json"])
        .expect(0)
        .json();
    assert_eq!(shown["edits"][0]["action"], "set", "{shown}");
    assert_eq!(shown["edits"][0]["by"], "ops", "{shown}");
    assert_eq!(shown["edits"][0]["reason"], "CHG-9", "{shown}");
    s.cli(&[
        "calendar", "delete", "freeze", "--by", "ops", "--reason", "done",
    ])
    .expect(0);
    let deleted_at = s.now_ms();
    wait_for("a slot to run again", Duration::from_secs(20), || {
        copies(&log)
            .iter()
            .filter_map(|c| c.label.parse::<i64>().ok())
            .any(|slot| slot > deleted_at)
    });
    let show = s.cli(&["calendar", "show", "freeze", "--json"]);
    assert_eq!(show.code(), Some(85), "deleted");
    // The audit keeps the deletion.
    let audit: redis::streams::StreamRangeReply = redis::cmd("XRANGE")
        .arg("{cron:}:calendar:freeze:events")
        .arg("-")
        .arg("+")
        .query(&mut s.client())
        .unwrap();
    let actions: Vec<String> = audit
        .ids
        .iter()
        .filter_map(|e| e.get::<String>("action"))
        .collect();
    assert_eq!(actions, vec!["set", "delete"]);
}

/// Windows read in the schedule's zone across daylight saving: Berlin's spring-forward night runs
/// `30 2 * * *` once at the jump (03:00 CEST), which `02:00-03:30` covers and `02:00-03:00` does not;
/// the autumn night's first 02:30 (CEST) is covered by `02:00-03:00`.
#[test]
fn windows_follow_the_zone_across_daylight_saving() {
    for (clock, window, skipped) in [
        ("2026-03-29 01:00:05", "night=02:00-03:30", true),
        ("2026-03-29 01:00:05", "night=02:00-03:00", false),
        ("2026-10-25 00:30:05", "night=02:00-03:00", true),
    ] {
        let Some(s) = Server::start_with_clock_at(clock) else {
            return;
        };
        let out = s
            .anarchon()
            .args([
                "run",
                "--job",
                "dst",
                "--schedule",
                "30 2 * * *",
                "--tz",
                "Europe/Berlin",
            ])
            .args(["--exclude", window, "--json", "--", "true"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{clock} {window}: {out:?}");
        let records = s.results("dst");
        assert_eq!(records.len(), 1, "{clock} {window}: {records:?}");
        if skipped {
            assert_eq!(records[0].status, "skipped", "{clock} {window}");
            assert_eq!(records[0].result["reason"], "excluded: night");
        } else {
            assert_eq!(records[0].status, "finished", "{clock} {window}");
        }
    }
}

/// A backfill meets the job's exclusion windows as the schedule does (issue 62 item 4): its
/// dry run says which slots are excluded and by what; run, it records them skipped with the
/// window's name and runs only the others, reading the windows in the schedule's zone across the
/// daylight-saving change; `--include-skipped` runs slots a policy skipped, never excluded ones.
#[test]
fn a_backfill_skips_and_records_the_slots_in_an_exclusion_window() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    s.cli(&["calendar", "set", "freeze", "f=2026-03-29"])
        .expect(0);
    // Europe/Berlin's clocks go forward at 01:00 UTC on 2026-03-29: 22:00 UTC the day before is
    // 23:00 there (not frozen), 23:00 UTC is midnight there (frozen).
    let backfill = |extra: &[&str]| {
        let mut args = vec![
            "run",
            "--job",
            "d",
            "--schedule",
            "0 * * * *",
            "--tz",
            "Europe/Berlin",
            "--calendar",
            "freeze",
            "--backfill",
            "2026-03-28T22:00:00Z..2026-03-29T02:00:00Z",
            "--json",
        ];
        args.extend_from_slice(extra);
        args.extend(["--shell", "--"]);
        let cmd = ticker_as(&log, "$ANARCHON_SLOT", 50, false);
        args.push(&cmd);
        s.cli(&args)
    };
    let plan = backfill(&["--dry-run"]).expect(0).json();
    let actions: Vec<(String, String)> = plan["slots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["action"].as_str().unwrap().to_string(),
                p["excluded_by"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let excluded = ("excluded".to_string(), "f".to_string());
    let run = ("run".to_string(), String::new());
    assert_eq!(
        actions,
        vec![
            run.clone(),
            excluded.clone(),
            excluded.clone(),
            excluded.clone(),
            excluded.clone()
        ]
    );
    backfill(&[]).expect(0);
    backfill(&["--include-skipped"]).expect(0);
    let ran: Vec<i64> = copies(&log)
        .iter()
        .map(|c| c.label.parse().unwrap())
        .collect();
    assert_eq!(
        ran,
        vec![ms("2026-03-28T22:00:00Z")],
        "only the slot outside the window ran"
    );
    let skipped: Vec<(i64, String)> = s
        .results("d")
        .into_iter()
        .filter(|r| r.status == "skipped")
        .map(|r| {
            (
                r.slot,
                r.result["reason"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let expected: Vec<(i64, String)> = [
        "2026-03-28T23:00:00Z",
        "2026-03-29T00:00:00Z",
        "2026-03-29T01:00:00Z",
        "2026-03-29T02:00:00Z",
    ]
    .iter()
    .map(|t| (ms(t), "excluded: f".to_string()))
    .collect();
    assert_eq!(skipped, expected);
}

/// A replica at its `--max-running` (its one room held by a long command) still records a slot
/// of an excluded job skipped at its fire time: an excluded slot runs nothing and waits for no
/// room (issue 62 item 4; it left no record at all).
#[test]
fn an_excluded_slot_is_recorded_by_a_full_replica() {
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("log");
    let file = dir.path().join("crontab");
    std::fs::write(
        &file,
        format!(
            "# anarchon: --job long\n* * * * * * {}\n# anarchon: --job off --exclude always=mon-sun --max-late 5s\n*/2 * * * * * true\n",
            ticker_as(&log, "$ANARCHON_SLOT", 60_000, false)
        ),
    )
    .unwrap();
    let replica = Replica::start(&s.url, &file, dir.path(), "r", &["--max-running", "1"]);
    wait_for(
        "the long command to hold the room",
        Duration::from_secs(10),
        || !copies(&log).is_empty(),
    );
    let from = s.now_ms();
    wait_for(
        "an excluded slot recorded skipped",
        Duration::from_secs(10),
        || {
            s.results("off").iter().any(|r| {
                r.slot > from && r.status == "skipped" && r.result["reason"] == "excluded: always"
            })
        },
    );
    drop(replica);
}
