//! One module per command. Each takes its parsed arguments and the [`Context`] and returns the
//! exit code; errors travel up as [`crate::error::Error`] and `main` prints them.

pub mod calendar;
pub mod check;
pub mod claim;
pub mod cron;
pub mod doctor;
pub mod finish;
pub mod forget;
pub mod heartbeat;
pub mod history;
pub mod inspect;
pub mod list;
pub mod logs;
pub mod metrics;
pub mod migrate;
pub mod next;
pub mod pause;
pub mod release;
pub mod run;
pub mod run_now;
pub mod serve;
pub mod shared;
pub mod timeline;
pub mod top;
pub mod trim;
pub mod wait;

use crate::cli::{Command, GlobalArgs, StrategyArgs};
use crate::connection::Connection;
use crate::error::{Error, ExitStatus, Result};
use crate::output::Output;
use crate::settings::claim::{ClaimCommand, FinishCommand, HeartbeatCommand, RunNowCommand};
use crate::settings::global::GlobalSettings;
use crate::settings::operator::{
    ForgetSettings, MigrateSettings, PauseSettings, ReleaseSettings, ResumeSettings, TrimSettings,
};
use crate::settings::read::{
    CheckSettings, DoctorSettings, HistorySettings, InspectSettings, ListSettings, LogsSettings,
    MetricsSettings, WaitSettings,
};
use crate::settings::run::RunSettings;
use crate::store::{LeaseKeys, validate_job_name, validate_prefix};
use crate::store::{StoreCheck, format};
use crate::strategy::Strategy;

/// What every command gets besides its own arguments.
pub struct Context {
    pub global: GlobalSettings,
    pub out: Output,
    /// Where runs' spans go, started by the first command that runs something
    /// ([`Context::trace`]), sent off by [`Context::finish_trace`] as the process ends.
    trace: std::sync::OnceLock<Option<crate::trace::Exporter>>,
}

impl Context {
    pub fn new(flags: &GlobalArgs) -> Self {
        Context {
            global: GlobalSettings::resolve(flags),
            out: Output::from_args(flags),
            trace: std::sync::OnceLock::new(),
        }
    }

    /// The span exporter the `OTEL_*` variables ask for (None: off), started once per process,
    /// its spans from `runner`. Variables it cannot follow are said, and tracing stays off: a
    /// run never fails for its traces.
    pub fn trace(&self, runner: &str) -> Option<crate::trace::Exporter> {
        self.trace
            .get_or_init(|| {
                crate::trace::Exporter::from_env(runner).unwrap_or_else(|why| {
                    crate::errln!("anarchon: warning: traces are off: {why}");
                    None
                })
            })
            .clone()
    }

    /// Sends the spans still queued, waiting [`crate::trace::export::EXIT_WAIT`] at most: called
    /// once every run of the process is recorded, outside its async runtime.
    pub fn finish_trace(&self) {
        if let Some(Some(exporter)) = self.trace.get() {
            exporter.finish(crate::trace::export::EXIT_WAIT);
        }
    }

    pub fn prefix(&self) -> &str {
        &self.global.prefix
    }

    /// Opens the connection (after the arguments were checked, so usage errors need no server).
    pub async fn connect(&self) -> Result<Connection> {
        Connection::open(&self.global.connect_options()?).await
    }

    /// The strategy the flags name, refused where the backend cannot have it.
    pub fn strategy(&self, args: &StrategyArgs) -> Result<Strategy> {
        crate::settings::strategy(args, self.global.backend)
    }

    /// Connects for a command that writes: checks that the server can run the strategy (before
    /// anything is written), then the store format.
    pub async fn open_for_write(&self, strategy: Strategy) -> Result<(Connection, StoreCheck)> {
        let mut conn = self.connect_for(strategy).await?;
        let check = format::check_for_write(&mut conn, self.prefix()).await?;
        Ok((conn, check))
    }

    /// [`Context::open_for_write`], with more reads sent in the format check's round trip; their
    /// replies as they came (none where they could not go along: see
    /// [`format::check_for_write_and_read`]).
    pub async fn open_for_write_and_read(
        &self,
        strategy: Strategy,
        also: &[redis::Cmd],
        before_writing: impl FnOnce(&[redis::Value]) -> Result<()>,
    ) -> Result<(Connection, StoreCheck, Vec<redis::Value>)> {
        let mut conn = self.connect_for(strategy).await?;
        let (check, read) =
            format::check_for_write_and_read(&mut conn, self.prefix(), also, before_writing)
                .await?;
        Ok((conn, check, read))
    }

    /// [`Context::open_for_write`] for a command that starts a run of `keys`' job (`claim`,
    /// `run-now`): the types of the job's keys are read in the same round trip, and a key of
    /// another type than the scripts write refuses the job before anything is written. Else the
    /// claim could win and the caller do its work, and only the `finish` find the key it cannot
    /// write, leaving the run in progress for good.
    pub async fn open_for_a_run(
        &self,
        strategy: Strategy,
        keys: &LeaseKeys,
    ) -> Result<(Connection, StoreCheck)> {
        if !strategy.has_leases() {
            return self.open_for_write(strategy).await;
        }
        let (conn, check, _) = self
            .open_for_write_and_read(strategy, &keys.type_reads(), |types| {
                keys.refuse_other_types(types)
            })
            .await?;
        Ok((conn, check))
    }

    /// Connects, and checks that the server can run the strategy (before anything is written).
    pub async fn connect_for(&self, strategy: Strategy) -> Result<Connection> {
        crate::strategy::connect_for(&self.global.connect_options()?, strategy).await
    }

    /// The lease-layout keys of `job`, after checking the job name and the prefix.
    pub fn lease_keys(&self, job: &str) -> Result<LeaseKeys> {
        validate_prefix(self.prefix())?;
        validate_job_name(job)?;
        Ok(LeaseKeys::new(self.prefix(), job))
    }

    /// The opening of a command that reads one job: its name checked, a connection, the format
    /// check, and the job's keys in the layout it has (`layout` picks one when it has both); a
    /// job the store does not know is refused there, with near names.
    pub async fn open_job(
        &self,
        job: &str,
        layout: Option<crate::store::Layout>,
    ) -> Result<(Connection, crate::store::StoreCheck, crate::store::JobKeys)> {
        self.lease_keys(job)?;
        let mut conn = self.connect().await?;
        let check = crate::store::format::check_for_read(&mut conn, self.prefix()).await?;
        let (layout, _) =
            crate::store::job::locate_job(&mut conn, self.prefix(), job, layout).await?;
        let keys = check.job_keys(layout, self.prefix(), job);
        Ok((conn, check, keys))
    }
}

/// Asks a person before a command changes the store (`trim`, `release`, `migrate`). Without a
/// terminal it refuses: scripts pass --yes, and --dry-run shows what would change.
/// `action`: "trim 3 runs"; `unchanged`: "nothing was trimmed".
pub fn confirm(action: &str, prompt: &str, unchanged: &str) -> Result<()> {
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        return Err(Error::usage(format!(
            "refusing to {action} without confirmation: stdin is not a terminal\n  hint: pass --yes in scripts, or --dry-run to see what would change"
        )));
    }
    let yes = dialoguer::Confirm::new()
        .with_prompt(prompt)
        .default(false)
        .interact()
        .map_err(|e| Error::Other(format!("cannot ask for confirmation: {e}")))?;
    if yes {
        Ok(())
    } else {
        Err(Error::usage(format!("not confirmed; {unchanged}")))
    }
}

/// A token as a person pastes it from a table (`9100687e…`): a prefix of at least 6 characters
/// of the current attempt's token, the ellipsis allowed, stands for the whole token. Anything else
/// is passed on as given, and the script, which compares whole tokens, answers `lost`.
pub async fn full_token(
    conn: &mut Connection,
    keys: &LeaseKeys,
    slot: i64,
    given: &str,
    now: i64,
) -> Result<String> {
    let prefix = given.trim_end_matches('…');
    // A whole token of this version (22 characters) or of an earlier one (32) is used as given.
    if prefix.len() >= crate::store::token::TOKEN_LEN {
        return Ok(given.to_string());
    }
    let active = crate::store::job::active_runs_for(conn, keys, now).await?;
    let holder = active
        .into_iter()
        .find(|a| a.state.slot == slot && a.state.token.starts_with(prefix));
    match holder {
        // Too short to stand for a token: say so, rather than let the script answer `lost`
        // ("held by ...") for what is the holder's own token, cut.
        Some(_) if prefix.chars().count() < 6 => Err(Error::usage(format!(
            "--token {given:?} is shorter than 6 characters: it is the start of the run's token, but too short to stand for it\n  hint: give at least 6 characters of the token (or all of it)"
        ))),
        Some(run) => Ok(run.state.token),
        None => Ok(given.to_string()),
    }
}

/// The run a report is about, flattened into the JSON of `claim`, `heartbeat` and `finish`.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct RunRef<'a> {
    pub job: &'a str,
    pub slot: i64,
    pub slot_time: String,
}

impl<'a> RunRef<'a> {
    pub fn new(job: &'a str, slot: i64) -> Self {
        RunRef {
            job,
            slot,
            slot_time: crate::time::rfc3339(slot),
        }
    }
}

/// Runs the parsed command and returns the process exit code.
///
/// `flags`: the global flags, which only the settings of a command are resolved from here; the
/// command itself gets them resolved, in `ctx`.
pub async fn dispatch(command: Command, flags: &GlobalArgs, ctx: &Context) -> Result<ExitStatus> {
    let code = match command {
        Command::Claim(args) => claim::execute(&ClaimCommand::resolve(args, flags)?, ctx).await?,
        Command::Heartbeat(args) => {
            heartbeat::execute(&HeartbeatCommand::resolve(args, flags)?, ctx).await?
        }
        Command::Finish(args) => {
            finish::execute(&FinishCommand::resolve(args, flags)?, ctx).await?
        }
        Command::List(args) => {
            let settings = ListSettings::from(args);
            watched(&settings.watch, ctx, || list::execute(&settings, ctx)).await?
        }
        Command::Inspect(args) => {
            let settings = InspectSettings::from(args);
            watched(&settings.watch, ctx, || inspect::execute(&settings, ctx)).await?
        }
        Command::History(args) => {
            let settings = HistorySettings::from(args);
            if settings.follow {
                history::follow(&settings, ctx).await?
            } else {
                watched(&settings.watch, ctx, || history::execute(&settings, ctx)).await?
            }
        }
        Command::Next(args) => {
            let settings = crate::settings::next::NextSettings::resolve(args)?;
            if let Some(job) = settings.job() {
                crate::store::validate_job_name(job)?;
            }
            next::execute(&settings, ctx).await?
        }
        Command::Top(args) => {
            let settings = crate::settings::top::TopSettings::resolve(args, flags)?;
            top::execute(&settings, ctx).await?
        }
        Command::Trim(args) => trim::execute(&TrimSettings::from(args), ctx).await?,
        Command::Migrate(args) => migrate::execute(&MigrateSettings::resolve(args)?, ctx).await?,
        Command::Timeline(args) => {
            let settings =
                crate::settings::timeline::TimelineSettings::resolve(args, ctx.out.json)?;
            timeline::execute(&settings, ctx).await?
        }
        Command::Logs(args) => {
            let settings = LogsSettings::from(args);
            if settings.follow {
                // `logs -f` exits as `wait` does: with how the followed run ended.
                return logs::follow(&settings, ctx).await;
            }
            logs::execute(&settings, ctx).await?
        }
        // `wait` exits with the run's own outcome (the command's exit code when it failed).
        Command::Wait(args) => return wait::execute(&WaitSettings::from(args), ctx).await,
        Command::Release(args) => release::execute(&ReleaseSettings::from(args), ctx).await?,
        Command::Pause(args) => pause::pause(&PauseSettings::from(args), ctx).await?,
        Command::Resume(args) => pause::resume(&ResumeSettings::from(args), ctx).await?,
        Command::Calendar(args) => calendar::execute(args.action.into(), ctx).await?,
        Command::Forget(args) => forget::execute(&ForgetSettings::from(args), ctx).await?,
        Command::Doctor(args) => doctor::execute(&DoctorSettings::from(args), ctx).await?,
        Command::Metrics(args) => metrics::execute(&MetricsSettings::from(args), ctx).await?,
        Command::Serve(args) => serve::execute(&args.listen, ctx).await?,
        Command::Cron(args) => {
            cron::execute(
                &crate::settings::cron::CronSettings::resolve(args, flags)?,
                ctx,
            )
            .await?
        }
        Command::Completions(args) => generated(match (args.dir, args.shell, args.install) {
            (Some(dir), _, _) => crate::generate::write_completions(&dir),
            (None, Some(shell), true) => crate::generate::install_completion(shell).map(|path| {
                crate::errln!("installed {}", path.display());
                if let Some(hint) = crate::generate::completion_hint(shell, &path) {
                    crate::errln!("{hint}");
                }
            }),
            (None, Some(shell), false) => write_stdout(&crate::generate::completion(shell)),
            (None, None, _) => Ok(()),
        })?,
        Command::Man(args) => {
            generated(match (args.dir, args.install) {
                (Some(dir), _) => crate::generate::write_man_pages(&dir),
                (None, true) => crate::generate::install_man_pages().map(|dir| {
                    match crate::generate::man_pages_hint(&dir) {
                        None => crate::errln!(
                            "installed the man pages in {} (try `man anarchon`)",
                            dir.display()
                        ),
                        Some(hint) => {
                            crate::errln!("installed the man pages in {}\n{hint}", dir.display())
                        }
                    }
                }),
                (None, false) => crate::generate::man_page().and_then(|page| write_stdout(&page)),
            })?
        }
        Command::RunNow(args) => {
            let settings = RunNowCommand::resolve(args, flags, ctx.out.json)?;
            return run_now::execute(&settings, ctx).await;
        }
        // `check` exits as a monitoring plugin: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.
        Command::Check(args) => return check::execute(&CheckSettings::from(args), ctx).await,
        // `run` passes on its command's own exit code.
        Command::Run(args) => {
            // The job name is checked before anything else is resolved: a usage error first.
            ctx.lease_keys(&args.job)?;
            let settings = RunSettings::resolve(*args, flags, ctx.out.json)?;
            return run::execute(&settings, ctx).await;
        }
    };
    Ok(code.into())
}

/// Runs a read command once, or with --watch again every --interval until Ctrl-C: on a terminal
/// the screen is cleared and redrawn under a line saying when, piped each round follows a line
/// with the time (like `watch` and `kubectl get -w`). The watch ends when its reader goes away
/// (`| head -3`); a server that cannot be reached (a restart, a failover) is ridden out
/// ([`Outage`]); any other error ends it.
async fn watched<F, Fut>(
    watch: &crate::settings::read::Watch,
    ctx: &Context,
    mut run: F,
) -> Result<crate::error::ExitCode>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<crate::error::ExitCode>>,
{
    if !watch.repeat {
        return run().await;
    }
    let mut interrupt = Interrupt::new()?;
    let mut outage = Outage::default();
    let mut code = crate::error::ExitCode::Ok;
    // Piped text: the lines of the last round, so that each round prints only what changed.
    let mut changes = (!ctx.out.tty && !ctx.out.json).then(Changes::default);
    loop {
        let stamp = chrono::Utc::now().format("%Y-%m-%d %H:%M:%S UTC");
        if ctx.out.tty && !ctx.out.json {
            crate::outln!(
                "\x1b[H\x1b[2Jevery {}: {stamp} (Ctrl-C to stop)\n",
                humantime::format_duration(watch.interval)
            );
        }
        let round = match &mut changes {
            Some(changes) => {
                let (round, lines) = crate::lines::capture(run()).await;
                changes.print(&stamp.to_string(), lines);
                round
            }
            None => run().await,
        };
        let wait = match round {
            Ok(round) => {
                code = round;
                outage.over();
                watch.interval
            }
            Err(e) => outage.failed(e, watch.interval)?,
        };
        if crate::output::output_gone() || interrupt.sleep(wait).await {
            return Ok(code);
        }
    }
}

/// A piped `--watch`, as `kubectl get -w` prints: the first round whole, then, under a `---
/// <time>` line, only the lines that are new or changed since the round before (a run that
/// started, a status that changed), and `gone: ` before a line that is no longer there (a job
/// removed, a run no longer in progress) when no new line took its place; a round with no change
/// prints nothing. Messages on stderr ("no run in progress") are said when they change, not every
/// round.
#[derive(Default)]
struct Changes {
    /// The last round's lines by their words, with the line as shown.
    last: Option<std::collections::HashMap<String, String>>,
    last_stderr: std::collections::HashSet<String>,
}

impl Changes {
    fn print(&mut self, stamp: &str, round: crate::lines::Captured) {
        // Compared by their words: a table's columns widen or narrow with what a row says, and
        // a row (or the header) whose words are the same has not changed.
        let words = |line: &str| line.split_whitespace().collect::<Vec<_>>().join(" ");
        let now: std::collections::HashMap<String, String> = round
            .stdout
            .iter()
            .map(|l| (words(l), l.clone()))
            .filter(|(w, _)| !w.is_empty())
            .collect();
        let (changed, gone): (Vec<&String>, Vec<&String>) = match &self.last {
            None => (round.stdout.iter().collect(), Vec::new()),
            Some(last) => {
                let changed: Vec<&String> = round
                    .stdout
                    .iter()
                    .filter(|l| !words(l).is_empty() && !last.contains_key(&words(l)))
                    .collect();
                // A line whose first word (a job, a slot) starts a changed line was changed, not
                // removed.
                let firsts: std::collections::HashSet<&str> = changed
                    .iter()
                    .filter_map(|l| l.split_whitespace().next())
                    .collect();
                let mut gone: Vec<&String> = last
                    .iter()
                    .filter(|(w, _)| !now.contains_key(*w))
                    .filter(|(w, _)| w.split(' ').next().is_none_or(|f| !firsts.contains(f)))
                    .map(|(_, l)| l)
                    .collect();
                gone.sort();
                (changed, gone)
            }
        };
        if !changed.is_empty() || !gone.is_empty() {
            crate::outln!("--- {stamp}");
            for line in changed {
                crate::outln!("{line}");
            }
            for line in gone {
                crate::outln!("gone: {}", line.trim_start());
            }
        }
        for line in round
            .stderr
            .iter()
            .filter(|l| !self.last_stderr.contains(*l))
        {
            crate::errln!("{line}");
        }
        self.last_stderr = round.stderr.into_iter().collect();
        self.last = Some(now);
    }
}

/// A live view's server outage: a round that could not reach the server (a restart, a failover,
/// a server loading its data) is tried again after 1 s, then twice as long each time up to the
/// view's interval; any other error ends the view. The line views (`-w`, `logs -f`) say it on
/// stderr ([`Outage::failed`], [`Outage::over`]); `top` on its screen ([`Outage::note`],
/// [`Outage::end`], [`Outage::said`]): one rule, two ways of saying it.
#[derive(Debug, Default)]
pub struct Outage {
    /// When the first failed round was noticed (monotonic, and the wall clock to show).
    pub since: Option<(std::time::Instant, chrono::DateTime<chrono::Utc>)>,
    /// The newest failure, in words.
    pub error: String,
    backoff: std::time::Duration,
}

impl Outage {
    /// How long to wait before the next round after `error`, or the error when it ends the view;
    /// the first failure is said on stderr.
    pub fn failed(
        &mut self,
        error: Error,
        interval: std::time::Duration,
    ) -> Result<std::time::Duration> {
        let first = self.since.is_none();
        let wait = self.note(error, interval)?;
        if first {
            crate::errln!(
                "anarchon: {}; trying again until it answers (Ctrl-C to stop)",
                self.error
            );
        }
        Ok(wait)
    }

    /// [`Outage::failed`], said nowhere.
    pub fn note(
        &mut self,
        error: Error,
        interval: std::time::Duration,
    ) -> Result<std::time::Duration> {
        if !(error.is_transient() || error.can_pass()) {
            return Err(error);
        }
        let first = std::time::Duration::from_secs(1);
        if self.since.is_none() {
            self.since = Some((std::time::Instant::now(), chrono::Utc::now()));
            self.backoff = first;
        } else {
            self.backoff = (self.backoff * 2).min(interval.max(first));
        }
        self.error = error.to_string();
        Ok(self.backoff)
    }

    /// A round succeeded: an outage, if there was one, is over, and said so on stderr.
    pub fn over(&mut self) {
        if let Some(lasted) = self.end() {
            crate::errln!(
                "anarchon: the server answers again (after {})",
                crate::time::humanize(lasted.as_millis() as u64)
            );
        }
    }

    /// [`Outage::over`], said nowhere: how long the outage lasted, if there was one.
    pub fn end(&mut self) -> Option<std::time::Duration> {
        let (since, _) = self.since.take()?;
        self.error.clear();
        Some(since.elapsed())
    }

    /// The outage in progress in one line: since when, for how long, and the newest failure.
    pub fn said(&self) -> Option<String> {
        let (at, wall) = self.since?;
        Some(format!(
            "no answer since {} UTC ({}); trying again: {}",
            wall.format("%H:%M:%S"),
            crate::time::humanize(crate::time::millis(at.elapsed()) as u64),
            self.error,
        ))
    }
}

/// Ctrl-C (SIGINT) or SIGTERM for the live views, listened for from before their first round: a
/// signal that arrives while a round reads the store is kept and ends the view at the next pause,
/// instead of being swallowed by a handler nobody is waiting on.
pub struct Interrupt {
    int: tokio::signal::unix::Signal,
    term: tokio::signal::unix::Signal,
}

impl Interrupt {
    pub fn new() -> Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        let listen = |kind| {
            signal(kind).map_err(|e| Error::Other(format!("cannot listen for signals: {e}")))
        };
        Ok(Interrupt {
            int: listen(SignalKind::interrupt())?,
            term: listen(SignalKind::terminate())?,
        })
    }

    /// Waits for SIGINT or SIGTERM.
    pub async fn wait(&mut self) {
        tokio::select! {
            _ = self.int.recv() => {},
            _ = self.term.recv() => {},
        }
    }

    /// Sleeps for `pause`; true when a signal asked to stop (now or since the last call).
    pub async fn sleep(&mut self, pause: std::time::Duration) -> bool {
        tokio::select! {
            _ = tokio::time::sleep(pause) => false,
            _ = self.int.recv() => true,
            _ = self.term.recv() => true,
        }
    }
}

/// Generated text to stdout, under the output rule ([`crate::output::write_raw`]): a closed pipe
/// (`completions bash | head -1`) ends it quietly, as every other command's output.
fn write_stdout(bytes: &[u8]) -> std::io::Result<()> {
    crate::output::write_raw(bytes);
    Ok(())
}

fn generated(written: std::io::Result<()>) -> Result<crate::error::ExitCode> {
    written
        .map(|()| crate::error::ExitCode::Ok)
        .map_err(|e| Error::Other(format!("cannot write: {e}")))
}

/// Whether a write command may create a job the store does not know yet: with `--new`, or when no
/// person typed it at a terminal (a script or crontab names its jobs on purpose; a typo at a
/// prompt would create a stray job).
pub fn may_create(new: bool) -> bool {
    use std::io::IsTerminal;
    new || !std::io::stdin().is_terminal()
}
/// The JSON Schema of what `T` serializes to (fields skipped when empty are not required).
pub(crate) fn output_schema<T: schemars::JsonSchema>() -> schemars::Schema {
    schemars::generate::SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>()
}

/// Every command's `--json` output as a JSON Schema, by file name under `docs/schemas/`
/// (`<name>.schema.json`): generated from the types that serialize it, so the schema cannot drift
/// from the output; tests/it/schemas.rs keeps the committed files current and validates real output.
pub fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    [
        check::json_schemas(),
        claim::json_schemas(),
        cron::json_schemas(),
        calendar::json_schemas(),
        doctor::json_schemas(),
        forget::json_schemas(),
        heartbeat::json_schemas(),
        history::json_schemas(),
        inspect::json_schemas(),
        list::json_schemas(),
        logs::json_schemas(),
        migrate::json_schemas(),
        next::json_schemas(),
        pause::json_schemas(),
        release::json_schemas(),
        run::json_schemas(),
        run_now::json_schemas(),
        timeline::json_schemas(),
        trim::json_schemas(),
        wait::json_schemas(),
    ]
    .concat()
}
