//! Live views (`list --watch`, `inspect --watch`, `history --follow`) end when their reader goes
//! away, as `tail -f | head` does, even when they have nothing new to print, and ride out a
//! server restart: they say so on stderr, try again with a back-off, and say when it answers.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::common::Server;

/// Waits for `child` to exit within `limit`; its exit code, or a failure naming `what`.
fn exits_within(child: &mut Child, limit: Duration, what: &str) -> Option<i32> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{what} still ran {limit:?} after its reader went away");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Starts `anarchon ARGS` with stdout piped; reads its first line, then closes the pipe.
fn read_one_line_then_leave(s: &Server, args: &[&str]) -> Child {
    let mut child = s
        .anarchon_process()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    assert!(!line.is_empty(), "{args:?} printed nothing");
    drop(reader);
    child
}

#[test]
fn live_views_end_when_their_reader_goes_away() {
    let s = Server::start();
    s.cli(&["run", "--job", "j", "--slot", "now", "--", "true"])
        .expect(0);
    for args in [
        &["list", "--watch", "--interval", "200ms"][..],
        &["inspect", "j", "--watch", "--interval", "200ms"],
        // Nothing new to print after the first line: it must notice without writing.
        &["history", "j", "--follow", "--interval", "200ms"],
    ] {
        let mut child = read_one_line_then_leave(&s, args);
        let code = exits_within(&mut child, Duration::from_secs(10), &format!("{args:?}"));
        assert_eq!(code, Some(0), "{args:?}");
    }
}

#[test]
fn a_watch_rides_out_a_server_restart() {
    let mut s = Server::start();
    s.cli(&["run", "--job", "j", "--slot", "now", "--", "true"])
        .expect(0);
    let mut child = s
        .anarchon_process()
        .args(["list", "--watch", "--interval", "200ms"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Its first round printed: the watch is running before the server goes.
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert!(first.starts_with("---"), "{first}");
    std::thread::spawn(move || {
        let mut rest = String::new();
        let _ = stdout.read_to_string(&mut rest);
    });
    let stderr = child.stderr.take().unwrap();
    let (lines_tx, lines) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    // The server goes away until the watch has said so (a restart between two rounds could go
    // unnoticed), then comes back on the same port.
    s.stop();
    let said = |what: &str| {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match lines.recv_timeout(left) {
                Ok(line) if line.contains(what) => return line,
                Ok(_) => {}
                Err(_) => panic!("the watch never said {what:?}"),
            }
        }
    };
    let down = said("trying again");
    assert!(down.contains("cannot reach Redis"), "{down}");
    s.restart(&[]);
    said("answers again");
    assert!(
        child.try_wait().unwrap().is_none(),
        "the watch ended at the restart"
    );
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let code = exits_within(
        &mut child,
        Duration::from_secs(10),
        "list --watch after Ctrl-C",
    );
    assert_eq!(code, Some(0));
}
