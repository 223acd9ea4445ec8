//! `anarchon top`: a full-screen live view an on-call engineer moves around in (as k9s or the
//! asynq dashboard): every job worst first, the runs in progress, a job opened in full, its last
//! failure's output, and the operator's actions on it, each confirmed on screen.
//!
//! One loop waits on whatever comes first: a key ([`input`] turns it into a change of the
//! [`model::App`] and maybe an effect), the next read of the store ([`fetch`]: every
//! --interval, the whole picture in one batched read, in flight while keys go on), the answer of
//! an action's command ([`actions`]: this same binary's `release`, `pause`, `resume`, `run-now`
//! and `logs`), a second's tick (times count on), or SIGTERM/SIGINT. After each, the screen is
//! drawn again ([`render`]; ratatui sends only what changed). The terminal is given back on every
//! way out ([`terminal`]).

mod actions;
mod fetch;
mod input;
mod model;
mod render;
mod terminal;

use std::future::Future;
use std::io::IsTerminal;
use std::time::Duration;

use crossterm::event::{Event, EventStream};
use futures::StreamExt;
use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::time::Instant;

use crate::commands::Context;
use crate::connection::Connection;
use crate::error::{Error, ExitCode, Result};
use crate::output::Tone;
use crate::settings::top::TopSettings;
use crate::store::validate_prefix;
use actions::Commands;
use input::Effect;
use model::{App, Request, Status};
use terminal::Screen;

pub async fn execute(settings: &TopSettings, ctx: &Context) -> Result<ExitCode> {
    if ctx.out.json {
        return Err(Error::usage(
            "top is a screen for people: it has no --json\n  hint: `anarchon list --json` and `anarchon inspect JOB --json` answer scripts",
        ));
    }
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return Err(Error::usage(
            "top needs a terminal, and its input or output is not one\n  hint: in a pipe or a script, `anarchon list -w` (every job) or `anarchon inspect JOB -w` (one job) show the same, read again every --interval",
        ));
    }
    validate_prefix(ctx.prefix())?;
    let options = ctx.global.connect_options()?;
    let source = fetch::Source {
        options: options.clone(),
        prefix: ctx.prefix().to_string(),
        pattern: settings.pattern.clone(),
    };
    let commands = Commands::new(&settings.children, &options, ctx.prefix(), &ctx.out)?;
    let mut signals = Signals::new()?;
    let mut app = App::new(
        ctx.prefix(),
        &crate::connection::redact_url(&options.url),
        ctx.out.color,
    );
    let mut screen = Screen::take()?;
    let ended = run(
        &mut screen,
        &mut app,
        &source,
        &commands,
        settings.interval,
        &mut signals,
    )
    .await;
    drop(screen);
    ended.map(|()| ExitCode::Ok)
}

/// SIGINT and SIGTERM, listened for from the start: either ends top (in raw mode Ctrl-C is a key,
/// so SIGINT comes from `kill`), but while run-now's command has the terminal, a Ctrl-C is the
/// command's.
struct Signals {
    int: Signal,
    term: Signal,
}

impl Signals {
    fn new() -> Result<Self> {
        let listen = |kind| {
            signal(kind).map_err(|e| Error::Other(format!("cannot listen for signals: {e}")))
        };
        Ok(Signals {
            int: listen(SignalKind::interrupt())?,
            term: listen(SignalKind::terminate())?,
        })
    }

    async fn quit(&mut self) {
        tokio::select! {
            _ = self.int.recv() => {},
            _ = self.term.recv() => {},
        }
    }
}

/// The output of the future in `slot`, which is then emptied; never, while it is empty.
async fn next_of<F: Future + Unpin>(slot: &mut Option<F>) -> F::Output {
    match slot.as_mut() {
        Some(f) => f.await,
        None => std::future::pending().await,
    }
}

async fn run(
    screen: &mut Screen,
    app: &mut App,
    source: &fetch::Source,
    commands: &Commands,
    interval: Duration,
    signals: &mut Signals,
) -> Result<()> {
    let mut events = EventStream::new();
    let mut conn: Option<Connection> = None;
    let mut reads = Reads {
        reading: Some(source.read(None)),
        next_read: Instant::now(),
        read_again: false,
    };
    let mut acting: Option<actions::Running> = None;
    let mut logs: Option<actions::Reading> = None;
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        screen.draw(|frame| render::draw(frame, app))?;
        tokio::select! {
            event = events.next() => {
                let key = match event {
                    Some(Ok(Event::Key(key))) => key,
                    // A resize: drawn again at the top of the loop.
                    Some(Ok(_)) => continue,
                    Some(Err(e)) => {
                        return Err(Error::Other(format!("cannot read the terminal: {e}")));
                    }
                    // The terminal is gone.
                    None => return Ok(()),
                };
                match input::handle(app, key) {
                    Effect::None => {}
                    Effect::Quit => return Ok(()),
                    Effect::Act(request) => {
                        app.busy = Some(Commands::shown(&request));
                        acting = Some(commands.act(request));
                    }
                    Effect::Logs { job, layout } => logs = Some(commands.logs(&job, layout)),
                    Effect::RunNow(request) => {
                        match run_now(screen, commands, &request, signals, &mut events).await? {
                            Some(said) => app.status = Some(said),
                            None => return Ok(()),
                        }
                        reads.soon();
                    }
                }
            }
            (back, read) = next_of(&mut reads.reading) => {
                reads.reading = None;
                let pause = take_read(app, back.as_ref(), read, interval)?;
                conn = back;
                reads.after(pause);
            }
            _ = tokio::time::sleep_until(reads.next_read), if reads.reading.is_none() => {
                reads.reading = Some(source.read(conn.take()));
            }
            said = next_of(&mut acting) => {
                acting = None;
                app.busy = None;
                app.status = Some(said);
                // What the action changed shows at once.
                reads.soon();
            }
            lines = next_of(&mut logs) => {
                logs = None;
                app.logs.lines = Some(lines);
            }
            _ = tick.tick() => {}
            _ = signals.quit() => return Ok(()),
        }
    }
}

/// When the store is read next: the read in flight, if one is, else when the next starts.
struct Reads {
    reading: Option<fetch::Reading>,
    next_read: Instant,
    /// An action ended while a read was in flight: that read may predate it, so read again.
    read_again: bool,
}

impl Reads {
    /// Reads as soon as can be, so that what an action changed shows at once.
    fn soon(&mut self) {
        if self.reading.is_some() {
            self.read_again = true;
        } else {
            self.next_read = Instant::now();
        }
    }

    /// A read came back: the next is `pause` later, or at once if an action asked meanwhile.
    fn after(&mut self, pause: Duration) {
        self.next_read = Instant::now()
            + if self.read_again {
                Duration::ZERO
            } else {
                pause
            };
        self.read_again = false;
    }
}

/// Takes a read of the store into the screen's model (a failed one into the outage shown), and
/// gives how long until the next.
fn take_read(
    app: &mut App,
    back: Option<&Connection>,
    read: Result<model::Snapshot>,
    interval: Duration,
) -> Result<Duration> {
    match read {
        Ok(snapshot) => {
            if let Some(c) = back {
                app.server = c.shown_url().to_string();
            }
            app.apply(snapshot);
            if let Some(lasted) = app.outage.end() {
                app.say(
                    format!(
                        "the server answers again (after {})",
                        crate::time::humanize(crate::time::millis(lasted) as u64)
                    ),
                    Tone::Good,
                );
            }
            Ok(interval)
        }
        Err(e) => app.outage.note(e, interval),
    }
}

/// run-now on the terminal: top's screen is left, the command runs with the terminal (its output
/// shown as it comes, Ctrl-C its own), then top waits for Enter and takes the screen back. None
/// when SIGTERM came meanwhile (top ends, after passing it on to run-now, which stops its command
/// and records the run).
async fn run_now(
    screen: &mut Screen,
    commands: &Commands,
    request: &Request,
    signals: &mut Signals,
    events: &mut EventStream,
) -> Result<Option<Status>> {
    use crossterm::event::{KeyCode, KeyModifiers};
    screen.lend();
    crate::outln!(
        "anarchon top: {}\n(the command runs in this terminal; Ctrl-C stops it)\n",
        Commands::shown(request)
    );
    let mut terminated = false;
    let status = match commands.run_now(request).spawn() {
        Err(e) => Err(e),
        Ok(mut child) => loop {
            tokio::select! {
                status = child.wait() => break status,
                // The terminal's Ctrl-C reached run-now too, which stops its command.
                _ = signals.int.recv() => {}
                _ = signals.term.recv() => {
                    terminated = true;
                    if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
                        let _ = nix::sys::signal::kill(
                            nix::unistd::Pid::from_raw(pid),
                            nix::sys::signal::Signal::SIGTERM,
                        );
                    }
                }
            }
        },
    };
    let said = actions::run_now_said(request, status);
    if terminated {
        return Ok(None);
    }
    crate::outln!("\nanarchon top: {}", said.text);
    crate::outln!("Press Enter to go back to anarchon top.");
    // A key at a time, read as the screen reads keys (a line read from stdin by another reader
    // would leave the terminal's readiness to that one).
    screen.keys_only()?;
    loop {
        tokio::select! {
            key = events.next() => match key {
                Some(Ok(Event::Key(key))) if matches!(key.code, KeyCode::Enter)
                    || (key.code == KeyCode::Char('c') && key.modifiers.contains(KeyModifiers::CONTROL)) => break,
                Some(Ok(_)) => {}
                Some(Err(_)) | None => return Ok(None),
            },
            _ = signals.quit() => return Ok(None),
        }
    }
    screen.take_back()?;
    Ok(Some(said))
}
