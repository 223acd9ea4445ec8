//! `anarchon top` on a real pseudo-terminal (portable-pty), as a person at a terminal has it:
//! keys typed in, the screen read back as a terminal shows it (vt100), each wait on what the
//! screen says with a deadline. What it changes is checked in the store with a real client.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

use crate::common::{self, Server};

const DOWN: &str = "\x1b[B";
const ENTER: &str = "\r";
const ESC: &str = "\x1b";

/// top draws each frame as one synchronized update (DEC mode 2026), between these two.
const FRAME_BEGINS: &[u8] = b"\x1b[?2026h";
const FRAME_ENDS: &[u8] = b"\x1b[?2026l";

/// The terminal: what it was sent, and the screen as a terminal that knows synchronized updates
/// shows it: whole frames only, never one half drawn.
struct Terminal {
    parser: vt100::Parser,
    /// The screen at the end of the last whole frame (or of the last output outside frames).
    shown: vt100::Screen,
    in_frame: bool,
    /// Bytes not parsed yet: the start of a frame sequence cut by a read.
    carry: Vec<u8>,
    raw: Vec<u8>,
}

impl Terminal {
    fn new(rows: u16, cols: u16) -> Self {
        let parser = vt100::Parser::new(rows.try_into().unwrap(), cols.try_into().unwrap(), 0);
        Terminal {
            shown: parser.screen().clone(),
            parser,
            in_frame: false,
            carry: Vec::new(),
            raw: Vec::new(),
        }
    }

    fn feed(&mut self, bytes: &[u8]) {
        self.raw.extend_from_slice(bytes);
        self.carry.extend_from_slice(bytes);
        let find = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).position(|w| w == needle);
        loop {
            let begins = find(&self.carry, FRAME_BEGINS).map(|at| (at, true));
            let ends = find(&self.carry, FRAME_ENDS).map(|at| (at, false));
            let next = match (begins, ends) {
                (Some(b), Some(e)) => Some(b.min(e)),
                (b, e) => b.or(e),
            };
            let Some((at, begin)) = next else {
                // Hold back a tail that may be the start of a frame sequence.
                let keep = (self.carry.len().saturating_sub(7)..self.carry.len())
                    .find(|&i| {
                        let tail = &self.carry[i..];
                        FRAME_BEGINS.starts_with(tail) || FRAME_ENDS.starts_with(tail)
                    })
                    .unwrap_or(self.carry.len());
                let now: Vec<u8> = self.carry.drain(..keep).collect();
                self.parser.process(&now);
                if !self.in_frame {
                    self.shown = self.parser.screen().clone();
                }
                return;
            };
            let upto: Vec<u8> = self.carry.drain(..at + FRAME_ENDS.len()).collect();
            self.parser.process(&upto);
            self.in_frame = begin;
            if !begin {
                self.shown = self.parser.screen().clone();
            }
        }
    }
}

/// `anarchon top` (or a shell line around it) running on a pseudo-terminal.
struct Top {
    child: Box<dyn portable_pty::Child + Send + Sync>,
    writer: Box<dyn Write + Send>,
    terminal: Arc<Mutex<Terminal>>,
    _master: Box<dyn portable_pty::MasterPty + Send>,
}

impl Top {
    /// `anarchon ARGS` against `s` on an 80x24 terminal.
    fn start(s: &Server, args: &[&str]) -> Top {
        Top::start_with(s, args, &[], 24, 80)
    }

    fn start_with(s: &Server, args: &[&str], env: &[(&str, &str)], rows: u16, cols: u16) -> Top {
        let mut cmd = CommandBuilder::new(common::anarchon_path());
        cmd.args(args);
        Top::spawn(s, cmd, env, rows, cols)
    }

    fn spawn(
        s: &Server,
        mut cmd: CommandBuilder,
        env: &[(&str, &str)],
        rows: u16,
        cols: u16,
    ) -> Top {
        for var in [
            "ANARCHON_REDIS_URL",
            "REDIS_URL",
            "ANARCHON_PREFIX",
            "ANARCHON_BACKEND",
            "ANARCHON_REDIS_PASSWORD",
            "NO_COLOR",
        ] {
            cmd.env_remove(var);
        }
        cmd.env("ANARCHON_REDIS_URL", &s.url);
        cmd.env("TERM", "xterm-256color");
        cmd.cwd(s.dir.path());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("a pseudo-terminal");
        let child = pair.slave.spawn_command(cmd).expect("spawn on the pty");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().unwrap();
        let writer = pair.master.take_writer().unwrap();
        let terminal = Arc::new(Mutex::new(Terminal::new(rows, cols)));
        {
            let terminal = terminal.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                while let Ok(n) = reader.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    terminal.lock().unwrap().feed(&buf[..n]);
                }
            });
        }
        Top {
            child,
            writer,
            terminal,
            _master: pair.master,
        }
    }

    /// What the screen shows.
    fn screen(&self) -> vt100::Screen {
        self.terminal.lock().unwrap().shown.clone()
    }

    /// The screen's lines, trailing blanks trimmed.
    fn lines(&self) -> Vec<String> {
        let screen = self.screen();
        let (_, cols) = screen.size();
        screen
            .rows(0, cols.get())
            .map(|l| l.trim_end().to_string())
            .collect()
    }

    fn text(&self) -> String {
        self.lines().join("\n")
    }

    /// Waits (20 s at most) until `ready` holds for the screen; fails showing the screen.
    #[track_caller]
    fn wait_until(&self, what: &str, ready: impl Fn(&[String]) -> bool) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let lines = self.lines();
            if ready(&lines) {
                return lines;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; the screen:\n{}",
                lines.join("\n")
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[track_caller]
    fn wait_for(&self, text: &str) -> Vec<String> {
        self.wait_until(&format!("{text:?} on the screen"), |lines| {
            lines.iter().any(|l| l.contains(text))
        })
    }

    fn keys(&mut self, keys: &str) {
        self.writer.write_all(keys.as_bytes()).unwrap();
        self.writer.flush().unwrap();
        // A key at a time, as typed: Esc must not run into the next key as one sequence.
        std::thread::sleep(Duration::from_millis(30));
    }

    fn typed(&mut self, text: &str) {
        for c in text.chars() {
            self.keys(&c.to_string());
        }
    }

    /// Waits (10 s at most) for the program to exit; its exit code.
    fn exit_code(&mut self) -> u32 {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.exit_code();
            }
            assert!(
                Instant::now() < deadline,
                "top did not exit; the screen:\n{}",
                self.text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn raw(&self) -> Vec<u8> {
        self.terminal.lock().unwrap().raw.clone()
    }

    fn pid(&self) -> i32 {
        self.child.process_id().unwrap() as i32
    }
}

impl Drop for Top {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The rows of the jobs table: the job names, top to bottom.
fn job_rows(lines: &[String]) -> Vec<String> {
    let Some(start) = lines
        .iter()
        .position(|l| l.contains("JOB") && l.contains("HEALTH"))
    else {
        return Vec::new();
    };
    lines[start + 1..]
        .iter()
        .take_while(|l| !l.starts_with("─"))
        .filter_map(|l| l.get(2..))
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

/// Three jobs whose health order is not their name order: alpha ok, bravo with a run in progress
/// held by web-3:303, charlie failing (its stderr "disk full on /var"). Returns bravo's slot.
fn seed(s: &Server) -> i64 {
    // @hourly with a max-late of 2h: this hour's slot runs now, and no slot falls due while the
    // test runs, so the health stays what the runs made it.
    s.cli(&[
        "run",
        "--job",
        "alpha",
        "--schedule",
        "@hourly",
        "--max-late",
        "2h",
        "--runner",
        "web-1:101",
        "--",
        "true",
    ])
    .expect(0);
    s.cli(&[
        "run",
        "--job",
        "charlie",
        "--schedule",
        "@hourly",
        "--max-late",
        "2h",
        "--runner",
        "web-2:202",
        "--",
        "sh",
        "-c",
        "echo disk full on /var >&2; exit 3",
    ])
    .expect(3);
    let claim = s
        .cli(&[
            "claim",
            "bravo",
            "--slot",
            "now",
            "--runner",
            "web-3:303",
            "--lease",
            "10m",
            "--new",
            "--json",
        ])
        .expect(0);
    claim.json()["slot"].as_i64().expect("the claim's slot")
}

#[test]
fn jobs_are_worst_first_with_the_holder_of_a_run_in_progress() {
    let s = Server::start();
    seed(&s);
    let mut top = Top::start(&s, &["top", "--interval", "300ms"]);
    let lines = top.wait_for("charlie");
    assert_eq!(
        job_rows(&lines),
        ["charlie", "bravo", "alpha"],
        "failing, running, ok:\n{}",
        lines.join("\n")
    );
    assert!(lines[0].contains("3 jobs, 1 in progress"), "{}", lines[0]);
    let held = lines
        .iter()
        .skip_while(|l| !l.starts_with("─ In progress (1)"))
        .find(|l| l.starts_with("bravo"))
        .unwrap_or_else(|| panic!("bravo's run in progress:\n{}", lines.join("\n")));
    assert!(held.contains("web-3:303"), "{held}");
    assert!(held.contains("m left"), "its lease's time left: {held}");
    // The selected job (charlie, the first) shows its newest results.
    let results = top.wait_for("─ charlie: newest results");
    assert!(
        results
            .iter()
            .any(|l| l.contains("failed") && l.contains("web-2:202") && l.contains("exit 3")),
        "{}",
        results.join("\n")
    );
    top.keys("q");
    assert_eq!(top.exit_code(), 0);
}

#[test]
fn arrows_and_enter_open_a_job_and_esc_goes_back() {
    let s = Server::start();
    seed(&s);
    let mut top = Top::start(&s, &["top", "--interval", "300ms"]);
    top.wait_for("charlie");
    // Down twice to alpha, up once (k) to bravo.
    top.keys(DOWN);
    top.keys(DOWN);
    top.keys("k");
    top.wait_for("> bravo");
    top.keys(ENTER);
    let lines = top.wait_for("job      bravo (lease layout");
    let run = lines
        .iter()
        .skip_while(|l| !l.starts_with("─ In progress (1)"))
        .find(|l| l.contains("web-3:303"))
        .unwrap_or_else(|| panic!("bravo's run:\n{}", lines.join("\n")));
    assert!(
        run.starts_with("> "),
        "the run r would release is selected: {run}"
    );
    assert!(run.contains("scheduled"), "{run}");
    top.keys(ESC);
    top.wait_for("> bravo");
    top.keys("k");
    top.keys(ENTER);
    let lines = top.wait_for("job      charlie");
    let text = lines.join("\n");
    assert!(
        text.contains("schedule @hourly (UTC), strategy lease"),
        "{text}"
    );
    assert!(text.contains("health   failing"), "{text}");
    assert!(text.contains("hosts    "), "{text}");
    assert!(
        text.contains("disk full on /var"),
        "the last failure's stderr line:\n{text}"
    );
    top.keys("q");
    assert_eq!(top.exit_code(), 0);
}

#[test]
fn slash_filters_the_jobs_by_name() {
    let s = Server::start();
    seed(&s);
    let mut top = Top::start(&s, &["top", "--interval", "300ms"]);
    top.wait_for("charlie");
    top.keys("/");
    top.typed("ALP");
    let lines = top.wait_until("only alpha", |l| job_rows(l) == ["alpha"]);
    assert!(lines[0].contains("1 of 3 jobs"), "{}", lines[0]);
    top.keys(ENTER);
    // The filter stays through the reads that follow; Esc clears it.
    top.wait_for("─ alpha: newest results");
    top.keys(ESC);
    top.wait_until("every job again", |l| job_rows(l).len() == 3);
    top.keys("q");
    assert_eq!(top.exit_code(), 0);
}

#[test]
fn l_shows_the_stderr_of_the_last_failure() {
    let s = Server::start();
    seed(&s);
    let mut top = Top::start(&s, &["top", "--interval", "300ms"]);
    top.wait_for("> charlie");
    top.keys("l");
    let lines = top.wait_for("disk full on /var");
    let text = lines.join("\n");
    assert!(text.contains("anarchon logs charlie"), "{text}");
    assert!(text.contains("failed, exit 3"), "{text}");
    assert!(text.contains("stderr (its last 4 KiB):"), "{text}");
    top.keys(ESC);
    top.wait_for("─ In progress");
    top.keys("q");
    assert_eq!(top.exit_code(), 0);
}

#[test]
fn pause_and_resume_change_the_store_after_yes_and_nothing_after_no() {
    let s = Server::start();
    seed(&s);
    let job_field = |field: &str| -> Option<String> { s.cmd(&["HGET", "{cron:alpha}:job", field]) };
    let mut top = Top::start(&s, &["top", "--interval", "300ms"]);
    top.wait_for("charlie");
    top.keys("G");
    top.wait_for("> alpha");
    // Asked, then refused: nothing changes.
    top.keys("p");
    top.wait_for("Reason (optional)");
    top.typed("no, wrong job");
    top.keys(ENTER);
    top.wait_for("Pause it? y/n");
    top.keys("n");
    top.wait_for("not confirmed; nothing was changed");
    assert_eq!(job_field("paused_at"), None);
    // Asked and confirmed: `anarchon pause` records it, with the reason.
    top.keys("p");
    top.wait_for("Reason (optional)");
    top.typed("INC-77 bank holiday");
    top.keys(ENTER);
    top.wait_for("Pause it? y/n");
    top.keys("y");
    top.wait_for("alpha is paused by");
    assert!(job_field("paused_at").is_some());
    assert_eq!(
        job_field("paused_reason").as_deref(),
        Some("INC-77 bank holiday")
    );
    // The next read shows it paused; p now offers to resume it, with its own reason.
    top.wait_until("alpha paused", |lines| {
        lines
            .iter()
            .any(|l| l.starts_with("> alpha") && l.contains("paused"))
    });
    top.keys("p");
    top.wait_for("Reason (optional)");
    top.typed("INC-77 over");
    top.keys(ENTER);
    top.wait_for("Resume it? y/n");
    top.keys("y");
    top.wait_for("alpha is resumed");
    assert!(job_field("resumed_at").is_some());
    // Both are in the job's events, by the person at this screen (top's own pid), with why.
    let out = s.cli(&["history", "alpha", "--events", "--json"]);
    let events: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let actions: Vec<(String, String, String)> = events["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["source"] == "operator")
        .map(|e| {
            (
                e["event"].as_str().unwrap().to_string(),
                e["by"].as_str().unwrap().to_string(),
                e["reason"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let by = format!(":{}", top.pid());
    assert_eq!(actions.len(), 2, "{actions:?}");
    assert_eq!(
        (actions[0].0.as_str(), actions[0].2.as_str()),
        ("resume", "INC-77 over")
    );
    assert_eq!(
        (actions[1].0.as_str(), actions[1].2.as_str()),
        ("pause", "INC-77 bank holiday")
    );
    assert!(
        actions.iter().all(|a| a.1.ends_with(&by)),
        "{actions:?} {by}"
    );
    top.keys("q");
    assert_eq!(top.exit_code(), 0);
}

#[test]
fn release_marks_the_run_after_yes_and_leaves_it_after_no() {
    let s = Server::start();
    let slot = seed(&s);
    let mark =
        || -> Option<String> { s.cmd(&["HGET", "{cron:bravo}:job", &format!("released:{slot}")]) };
    let mut top = Top::start(&s, &["top", "--interval", "300ms"]);
    top.wait_for("charlie");
    top.keys(DOWN);
    top.wait_for("> bravo");
    top.keys("r");
    top.wait_for("Release bravo @");
    top.keys(ENTER);
    top.wait_for("Release it? y/n");
    top.keys("n");
    top.wait_for("not confirmed; nothing was changed");
    assert_eq!(mark(), None);
    assert_eq!(s.in_progress("bravo"), [slot]);
    top.keys("r");
    top.wait_for("Reason (optional)");
    top.typed("hung on a lock, INC-9");
    top.keys(ENTER);
    top.keys("y");
    // Its holder (web-3:303, nobody) has a live lease: the run is marked, and ends at the
    // holder's next heartbeat or its lease's end.
    top.wait_for("release bravo @");
    let said = top.wait_for("marked released");
    assert!(
        said.iter().any(|l| l.contains("marked released")),
        "{said:?}"
    );
    let mark: serde_json::Value =
        serde_json::from_str(&mark().expect("the run is marked released")).unwrap();
    assert_eq!(mark["result"]["reason"], "hung on a lock, INC-9");
    assert_eq!(mark["status"], "interrupted");
    top.keys("q");
    assert_eq!(top.exit_code(), 0);
}

#[test]
fn run_now_asks_for_the_command_runs_it_on_the_terminal_and_comes_back() {
    let s = Server::start();
    seed(&s);
    let mut top = Top::start(&s, &["top", "--interval", "300ms"]);
    top.wait_for("charlie");
    top.keys("G");
    top.wait_for("> alpha");
    top.keys("n");
    top.wait_for("Command (run by /bin/sh)");
    top.typed("echo made-by-run-now; echo on-stderr >&2");
    top.keys(ENTER);
    top.wait_for("y/n");
    top.keys("y");
    top.wait_for("Press Enter to go back");
    let text = top.text();
    assert!(text.contains("made-by-run-now"), "{text}");
    assert!(text.contains("the command finished (exit 0)"), "{text}");
    top.keys(ENTER);
    top.wait_for("run-now alpha: the command finished (exit 0)");
    top.wait_for("─ In progress");
    let manual: Vec<_> = s
        .results("alpha")
        .into_iter()
        .filter(|r| r.kind.as_deref() == Some("manual"))
        .collect();
    assert_eq!(manual.len(), 1, "one manual run recorded");
    assert_eq!(manual[0].status, "finished");
    top.keys("q");
    assert_eq!(top.exit_code(), 0);
}

#[test]
fn a_server_restart_is_said_and_ridden_out() {
    let mut s = Server::start();
    seed(&s);
    let mut top = Top::start(&s, &["top", "--interval", "300ms"]);
    top.wait_for("charlie");
    s.stop();
    let lines = top.wait_for("no answer since ");
    let text = lines.join("\n");
    assert!(
        text.contains("; trying again: cannot reach Redis"),
        "{text}"
    );
    assert!(lines[0].contains("no answer"), "{}", lines[0]);
    // The last picture stays.
    assert_eq!(job_rows(&lines), ["charlie", "bravo", "alpha"], "{text}");
    s.restart(&[]);
    top.wait_for("the server answers again (after ");
    // A restart without persistence comes back empty: the picture follows.
    top.wait_for("no jobs under prefix \"cron:\"");
    top.keys("q");
    assert_eq!(top.exit_code(), 0);
}

/// Whether `raw` turns on a colour anywhere: an SGR sequence with a foreground or background
/// colour (30-38, 40-48, 90-97, 100-107; 39 and 49, "the default colour", are none).
fn sets_a_colour(raw: &[u8]) -> bool {
    let text = String::from_utf8_lossy(raw);
    let sgr = regex::Regex::new(r"\x1b\[([0-9;:]*)m").unwrap();
    sgr.captures_iter(&text).any(|c| {
        c[1].split([';', ':']).any(|p| {
            matches!(
                p.parse::<u32>(),
                Ok(30..=38 | 40..=48 | 90..=97 | 100..=107)
            )
        })
    })
}

fn coloured_cells(top: &Top) -> usize {
    let screen = top.screen();
    let (rows, cols) = screen.size();
    let mut n = 0;
    for row in 0..rows.get() {
        for col in 0..cols.get() {
            if let Some(cell) = screen.cell(row, col)
                && (cell.fgcolor() != vt100::Color::Default
                    || cell.bgcolor() != vt100::Color::Default)
            {
                n += 1;
            }
        }
    }
    n
}

#[test]
fn no_colour_with_no_color_or_color_never() {
    let s = Server::start();
    seed(&s);
    // With colour on, failing is red: the check below can see a colour.
    let mut top = Top::start(&s, &["top", "--interval", "300ms"]);
    top.wait_for("charlie");
    assert!(
        coloured_cells(&top) > 0,
        "colour is on by default:\n{}",
        top.text()
    );
    assert!(sets_a_colour(&top.raw()));
    top.keys("q");
    assert_eq!(top.exit_code(), 0);
    for (args, env) in [
        (
            &["top", "--interval", "300ms"][..],
            &[("NO_COLOR", "1")][..],
        ),
        (&["--color", "never", "top", "--interval", "300ms"], &[]),
    ] {
        let mut top = Top::start_with(&s, args, env, 24, 80);
        top.wait_for("charlie");
        // A dialog and the help too.
        top.keys("p");
        top.wait_for("Reason (optional)");
        top.keys(ESC);
        // Esc and a key in one read are Alt and the key to a terminal (seen once at eight tests
        // at a time: "?" typed into the reason): the next key waits for the dialog to close.
        top.wait_until("the dialog to close", |l| {
            !l.iter().any(|line| line.contains("Reason (optional)"))
        });
        top.keys("?");
        top.wait_for("─ Help");
        top.keys(ESC);
        top.wait_for("─ In progress");
        assert_eq!(coloured_cells(&top), 0, "{args:?} {env:?}:\n{}", top.text());
        assert!(!sets_a_colour(&top.raw()), "{args:?} {env:?}");
        top.keys("q");
        assert_eq!(top.exit_code(), 0);
    }
}

#[test]
fn every_view_fits_80x24() {
    let s = Server::start();
    seed(&s);
    let long = "nightly-reconciliation-of-the-billing-ledger-against-the-bank";
    s.cli(&[
        "claim",
        long,
        "--slot",
        "now",
        "--runner",
        "ip-10-0-12-34.eu-west-1.compute.internal:43117",
        "--lease",
        "10m",
        "--new",
    ])
    .expect(0);
    let mut top = Top::start(&s, &["top", "--interval", "300ms"]);
    top.wait_for("charlie");
    let fits = |top: &Top, view: &str| {
        let lines = top.lines();
        let screen = top.screen();
        for row in 0..24 {
            assert!(
                !screen.row_wrapped(row),
                "{view}: row {row} wrapped:\n{}",
                lines.join("\n")
            );
        }
        assert!(
            lines[23].contains("q quit"),
            "{view}: the keys line:\n{}",
            lines.join("\n")
        );
        lines
    };
    let lines = fits(&top, "jobs");
    let text = lines.join("\n");
    assert!(
        text.contains("nightly-reconci…"),
        "the name cut, not wrapped:\n{text}"
    );
    assert!(
        text.contains("…:43117"),
        "the holder's pid kept whole:\n{text}"
    );
    assert!(text.contains("─ In progress (2)"), "{text}");
    assert!(text.contains("─ charlie: newest results"), "{text}");
    top.keys(ENTER);
    top.wait_for("job      charlie");
    fits(&top, "job");
    top.keys("l");
    top.wait_for("disk full on /var");
    fits(&top, "logs");
    top.keys(ESC);
    top.keys("?");
    top.wait_for("─ Help");
    fits(&top, "help");
    top.keys("q");
    assert_eq!(top.exit_code(), 0);
}

#[test]
fn q_ctrl_c_and_sigterm_give_the_terminal_back() {
    let s = Server::start();
    seed(&s);
    // `stty -a` after top ends, on the same terminal, says whether raw mode was left.
    let stty = s.dir.path().join("stty.txt");
    for (how, ending) in [
        ("q", Some("q")),
        ("Ctrl-C", Some("\x03")),
        ("SIGTERM", None),
    ] {
        let mut cmd = CommandBuilder::new("sh");
        cmd.args([
            "-c",
            r#""$0" top --interval 300ms; code=$?; stty -a > "$1"; echo "top exited $code""#,
            common::anarchon_path().to_str().unwrap(),
            stty.to_str().unwrap(),
        ]);
        let mut top = Top::spawn(&s, cmd, &[], 24, 80);
        top.wait_for("charlie");
        assert!(top.screen().alternate_screen());
        match ending {
            Some(keys) => top.keys(keys),
            None => {
                // top is the shell's child: find it by its parent.
                let sh = top.pid();
                let children =
                    std::fs::read_to_string(format!("/proc/{sh}/task/{sh}/children")).unwrap();
                let pid: i32 = children.split_whitespace().next().unwrap().parse().unwrap();
                nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGTERM,
                )
                .unwrap();
            }
        }
        top.wait_for("top exited 0");
        let raw = top.raw();
        let text = String::from_utf8_lossy(&raw);
        let left = text
            .rfind("\x1b[?1049l")
            .unwrap_or_else(|| panic!("{how}: the alternate screen was not left"));
        let entered = text.rfind("\x1b[?1049h").unwrap();
        assert!(left > entered, "{how}");
        assert!(
            text[left..].contains("\x1b[?25h"),
            "{how}: the cursor is shown"
        );
        let screen = top.screen();
        assert!(!screen.alternate_screen(), "{how}");
        assert!(!screen.hide_cursor(), "{how}");
        let modes = std::fs::read_to_string(&stty).unwrap();
        for mode in ["icanon", "echo", "isig"] {
            assert!(
                modes.split_whitespace().any(|w| w == mode),
                "{how}: {mode} is not back on:\n{modes}"
            );
        }
        std::fs::remove_file(&stty).unwrap();
    }
}

#[test]
fn top_without_a_terminal_says_what_to_use_instead() {
    let s = Server::start();
    let out = s.cli(&["top"]).expect(2);
    let said = common::stderr(&out);
    assert!(said.contains("top needs a terminal"), "{said}");
    assert!(said.contains("anarchon list -w"), "{said}");
    assert!(said.contains("anarchon inspect JOB -w"), "{said}");
    let out = s.cli(&["top", "--json"]).expect(2);
    assert!(common::stderr(&out).contains("anarchon list --json"));
}

/// The README's screen of top, between the `$ anarchon top` line of its block and the block's
/// end.
const README_SCREEN: &str = "$ anarchon top";

/// A line with what varies from run to run masked: times of day, slots, durations, times relative
/// to now, the server's port; runs of blanks made one (a narrower value leaves wider gaps).
fn masked(line: &str) -> String {
    let masks = [
        (r"\d\d-\d\d \d\d:\d\d:\d\d", "SLOT"),
        (r"\d\d:\d\d:\d\d UTC", "CLOCK"),
        (r"\d+(ms|s|m|h|d) left|expired \d+(ms|s|m|h|d) ago", "LEASE"),
        (r"in \d+(ms|s|m|h|d)|\d+(ms|s|m|h|d) ago|\bnow\b", "WHEN"),
        (r"\b\d+(ms|s|m|h|d)\b", "SPAN"),
        (r"127\.0\.0\.1:\d+", "SERVER"),
        (r" +", " "),
    ];
    let mut text = line.trim_end().to_string();
    for (pattern, by) in masks {
        text = regex::Regex::new(pattern)
            .unwrap()
            .replace_all(&text, by)
            .into_owned();
    }
    text
}

/// The README shows top as it draws: a store seeded as the README's screen shows it, top at 80x24,
/// its screen compared with the README's block (times masked). `UPDATE_GENERATED=1` writes the
/// screen into the README instead.
#[test]
fn the_readme_shows_top_as_it_draws() {
    let s = Server::start();
    let run = |job: &str, schedule: &str, runner: &str, command: &[&str], code: i32| {
        let mut args = vec![
            "run",
            "--job",
            job,
            "--schedule",
            schedule,
            "--max-late",
            "1d",
            "--runner",
            runner,
            "--",
        ];
        args.extend_from_slice(command);
        s.cli(&args).expect(code);
    };
    // billing-export ran well the two hours before this one (explicit slots), and fails now.
    let hour = s.now_ms() / 3_600_000 * 3_600_000;
    for back in [2, 1] {
        let slot = (hour - back * 3_600_000).to_string();
        s.cli(&[
            "run",
            "--job",
            "billing-export",
            "--slot",
            &slot,
            "--max-late",
            "1d",
            "--runner",
            "web-1:977",
            "--",
            "true",
        ])
        .expect(0);
    }
    run(
        "billing-export",
        "@hourly",
        "web-2:2211",
        &[
            "sh",
            "-c",
            "echo 'psql: FATAL: too many connections' >&2; exit 3",
        ],
        3,
    );
    run("db-backup", "0 */6 * * *", "db-1:4311", &["true"], 0);
    run("cache-warm", "*/5 * * * *", "web-1:977", &["true"], 0);
    run("report-daily", "30 6 * * *", "web-2:2211", &["true"], 0);
    run("sync", "@hourly", "web-1:977", &["true"], 0);
    s.cli(&[
        "pause",
        "report-daily",
        "--reason",
        "INC-311 quarter close",
        "--by",
        "ops",
    ])
    .expect(0);
    // A run in progress: the minute now (`--slot now`), unless that is the fire time `run` just
    // ran above (the first minute of every sixth hour, UTC: the claim answered done, 81, on
    // 2026-12-07 at 18:00), then the minute before.
    let now = s.now_ms();
    let minute = now - now.rem_euclid(60_000);
    let in_progress = if minute.rem_euclid(6 * 3_600_000) == 0 {
        minute - 60_000
    } else {
        minute
    }
    .to_string();
    s.cli(&[
        "claim",
        "db-backup",
        "--slot",
        &in_progress,
        "--runner",
        "db-1:4312",
        "--lease",
        "10m",
    ])
    .expect(0);
    let mut top = Top::start(&s, &["top"]);
    let screen = top.wait_until("the seeded jobs, whole", |lines| {
        job_rows(lines).len() == 5
            && lines
                .iter()
                .any(|l| l.contains("psql: FATAL") || l.contains("exit 3"))
    });
    top.keys("q");
    assert_eq!(top.exit_code(), 0);

    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = readme.lines().collect();
    let start = lines
        .iter()
        .position(|l| *l == README_SCREEN)
        .expect("README.md has a block with `$ anarchon top`")
        + 1;
    let end = start
        + lines[start..]
            .iter()
            .position(|l| l.trim_start().starts_with("```"))
            .expect("the block's end");
    if std::env::var_os("UPDATE_GENERATED").is_some() {
        let mut out: Vec<String> = lines[..start].iter().map(|l| l.to_string()).collect();
        out.extend(screen.iter().cloned());
        out.extend(lines[end..].iter().map(|l| l.to_string()));
        std::fs::write(&path, out.join("\n") + "\n").unwrap();
        return;
    }
    let shown: Vec<String> = lines[start..end].iter().map(|l| masked(l)).collect();
    let drawn: Vec<String> = screen.iter().map(|l| masked(l)).collect();
    assert_eq!(
        shown,
        drawn,
        "README.md's screen of top is not what it draws (UPDATE_GENERATED=1 writes it):\n{}",
        screen.join("\n")
    );
}

/// A job whose failed run waits for its retry, under a limit: its page says when the retry is due
/// and what the limit holds.
#[test]
fn a_pending_retry_and_a_limit_are_on_the_job_s_page() {
    let s = Server::start();
    let slot = (s.now_ms() / 1000 * 1000).to_string();
    let mut waiting = crate::common::spawn_run(
        &s,
        &[
            "--job",
            "solo",
            "--slot",
            &slot,
            "--limit",
            "heavy=1",
            "--retries",
            "1",
            "--retry-delay",
            "60s",
            "--",
            "false",
        ],
    );
    crate::common::wait_for("the failure", std::time::Duration::from_secs(20), || {
        s.results("solo").iter().any(|r| r.status == "failed")
    });
    let mut top = Top::start(&s, &["top", "--interval", "300ms"]);
    top.wait_for("solo");
    top.keys(ENTER);
    let lines = top.wait_for("retry    the run of");
    let text = lines.join("\n");
    assert!(text.contains("failed (#1); its retry is due"), "{text}");
    assert!(
        text.contains("limit    heavy: 0 held, 0 waiting, 0 gave up waiting"),
        "{text}"
    );
    top.keys("q");
    assert_eq!(top.exit_code(), 0);
    let _ = waiting.kill();
    let _ = waiting.wait();
}

/// A lost run (claimed, and never run to an end) shows in `top` as in `inspect`: the job's state
/// is missed, and the open job says which run was lost (issue 61 item 7: every monitor).
#[test]
fn a_lost_run_is_on_the_open_job() {
    let s = Server::start();
    crate::deadlines::plant_a_lost_slot(&s, "gone");
    let mut top = Top::start(&s, &["top", "--interval", "300ms"]);
    let lines = top.wait_for("─ gone: newest results");
    let row = lines
        .iter()
        .find(|l| l.trim_start_matches("> ").starts_with("gone "))
        .unwrap_or_else(|| panic!("no row of gone:\n{}", lines.join("\n")));
    assert!(row.contains("missed"), "{row}");
    top.keys("\r");
    let lines = top.wait_for("was claimed and never ran to an end");
    assert!(
        lines.iter().any(|l| l.starts_with("lost ")),
        "{}",
        lines.join("\n")
    );
    top.keys("q");
    assert_eq!(top.exit_code(), 0);
}
