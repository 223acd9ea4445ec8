//! The command line, defined once with clap derive. Each flag is documented where it is defined;
//! `--help`, the man pages in `man/` and the completions in `completions/` all come from here.

use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::schedule::CatchUpPolicy;
use crate::strategy::OverlapPolicy;
use crate::strategy::lease::ReleaseStatus;
use crate::time::{SlotSpec, TimeRange, parse_duration, parse_slot, parse_time_range};

/// Operator tool for the Redis/Valkey store of the anarchon distributed cron scheduler.
///
/// It reads and writes the same keys as the scheduler's RedisBackend: claim a run so exactly one
/// host runs it, keep its lease alive, finish it, and look inside the store during an incident.
#[derive(Debug, Parser)]
#[command(name = "anarchon", version, about, long_about, after_long_help = crate::error::ExitCode::help_table())]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// Parses a command line (`args`, the program's name first), as `Cli::try_parse_from` does.
    ///
    /// `anarchon run ...`, the crontab wrapper every host starts every minute, is parsed first
    /// with a command of the global options and `run` alone: clap building all of anarchon's
    /// commands copies each of the 19 global options into each of them, half of the instructions
    /// of `anarchon run -- true` (callgrind). The same definitions parse the same words into the
    /// same value (a test compares the two); anything that parse does not accept as it is (help,
    /// `--version`, an error, whose messages name the whole command) is parsed again in full.
    pub fn from_command_line(args: Vec<std::ffi::OsString>) -> Result<Cli, clap::Error> {
        match Cli::run_alone(&args) {
            Some(cli) => Ok(cli),
            None => {
                use clap::FromArgMatches;
                let mut matches = Cli::command_for_users().try_get_matches_from(args)?;
                Cli::from_arg_matches_mut(&mut matches)
                    .map_err(|e| e.format(&mut Cli::command_for_users()))
            }
        }
    }

    /// The whole command as users meet it (parsing, `--help`, man pages, completions): `man` and
    /// `completions` read no store and write no report, so they take none of the connection,
    /// store and output options, and their help, pages and completions offer none. clap has no
    /// way to keep a global option out of one command (a hidden copy still shows in zsh's and
    /// bash's completions), so the options are global from each other command down instead of
    /// from the top; before the command's name they are the top's, as ever.
    pub fn command_for_users() -> clap::Command {
        use clap::CommandFactory;
        const OWN_OPTIONS_ONLY: [&str; 2] = ["man", "completions"];
        let whole = Cli::command();
        let globals: Vec<clap::Arg> = whole
            .get_arguments()
            .filter(|a| a.is_global_set())
            .cloned()
            .collect();
        whole.mut_args(|a| a.global(false)).mut_subcommands(|sub| {
            if OWN_OPTIONS_ONLY.contains(&sub.get_name()) {
                sub
            } else {
                sub.args(globals.iter().cloned())
            }
        })
    }

    /// `args` parsed as `anarchon run ...` by a command of the global options and `run` alone;
    /// None when they are not such a line, or not one it accepts as it is.
    fn run_alone(args: &[std::ffi::OsString]) -> Option<Cli> {
        use clap::FromArgMatches;
        if args.get(1).is_none_or(|a| a != "run") {
            return None;
        }
        let run = RunArgs::augment_args(clap::Command::new("run"));
        let only_run = GlobalArgs::augment_args(clap::Command::new("anarchon")).subcommand(run);
        let matches = only_run.try_get_matches_from(args).ok()?;
        Cli::from_arg_matches(&matches).ok()
    }
}

/// Flags every command takes.
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// Redis or Valkey URL: redis://[user:password@]host:port[/db], rediss:// for TLS,
    /// redis+cluster:// for Redis Cluster, redis+sentinel://host:port[,host:port]/<master>[/db]
    /// to ask Sentinel for the current primary (after a failover, the new one).
    ///
    /// Without it: --host/--port/--db when given, else $ANARCHON_REDIS_URL, then $REDIS_URL,
    /// then redis://localhost:6379. The password is never printed.
    #[arg(long, global = true, value_name = "URL", help_heading = "Connection")]
    pub redis: Option<String>,

    /// Host to connect to [default: localhost, or the URL's]. --host, --port and --db, like
    /// redis-cli's, replace those parts of $ANARCHON_REDIS_URL / $REDIS_URL and keep the others.
    #[arg(
        long,
        global = true,
        value_name = "HOST",
        conflicts_with = "redis",
        help_heading = "Connection"
    )]
    pub host: Option<String>,

    /// Port [default: 6379, or the URL's].
    #[arg(
        long,
        short = 'p',
        global = true,
        value_name = "PORT",
        conflicts_with = "redis",
        help_heading = "Connection"
    )]
    pub port: Option<u16>,

    /// Database number [default: 0, or the URL's].
    #[arg(
        long,
        short = 'n',
        global = true,
        value_name = "DB",
        conflicts_with = "redis",
        help_heading = "Connection"
    )]
    pub db: Option<u32>,

    /// ACL user name (on any URL or --host).
    #[arg(long, global = true, value_name = "USER", help_heading = "Connection")]
    pub user: Option<String>,

    /// Read the password from the first line of this file (else $ANARCHON_REDIS_PASSWORD).
    /// Used when the URL carries none. Never printed.
    #[arg(long, global = true, value_name = "FILE", help_heading = "Connection")]
    pub password_file: Option<std::path::PathBuf>,

    /// Connect with TLS (as a rediss:// URL does), with --host or --port.
    #[arg(
        long,
        global = true,
        conflicts_with = "redis",
        help_heading = "Connection"
    )]
    pub tls: bool,

    /// Trust this PEM CA bundle for TLS instead of the system's.
    #[arg(long, global = true, value_name = "FILE", help_heading = "Connection")]
    pub tls_ca: Option<std::path::PathBuf>,

    /// Do not verify the server's TLS certificate (testing only).
    #[arg(long, global = true, help_heading = "Connection")]
    pub tls_insecure: bool,

    /// Use the Redis Cluster client (also implied by a redis+cluster:// or rediss+cluster:// URL).
    #[arg(long, global = true, help_heading = "Connection")]
    pub cluster: bool,

    /// Prefix of every key, as the scheduler's `prefix` option.
    #[arg(long, global = true, value_name = "PREFIX", env = "ANARCHON_PREFIX", default_value = crate::store::DEFAULT_PREFIX, help_heading = "Store")]
    pub prefix: String,

    /// redis, or valkey: the Valkey flavour, which refuses the idmp strategy.
    #[arg(long, global = true, value_enum, env = "ANARCHON_BACKEND", default_value_t = Backend::Redis, value_name = "BACKEND", help_heading = "Store")]
    pub backend: Backend,

    /// Print one JSON document instead of text (stable shape, see docs/guide.md, "JSON output").
    #[arg(long, global = true, help_heading = "Output")]
    pub json: bool,

    /// Output format, as kubectl's -o: table (default), json (as --json), wide (tables are never
    /// cut to the terminal's width), name (only each row's first column: job names for `list`).
    #[arg(
        long,
        short = 'o',
        global = true,
        value_enum,
        value_name = "FORMAT",
        help_heading = "Output"
    )]
    pub output: Option<OutputFormat>,

    /// Print tables without their header row (for scripts, as kubectl --no-headers).
    #[arg(long, global = true, help_heading = "Output")]
    pub no_headers: bool,

    /// When to use colour: auto (a terminal without NO_COLOR), always, never.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN", help_heading = "Output")]
    pub color: ColorChoice,

    /// How text output shows times: auto (compact UTC with "3m ago" on a terminal, RFC 3339 with
    /// milliseconds when piped), compact (2026-12-02 15:10:00, UTC), rfc3339, or relative (3m ago).
    #[arg(long, global = true, value_enum, default_value_t = TimeFormat::Auto, value_name = "FORMAT", help_heading = "Output")]
    pub time_format: TimeFormat,

    /// Give up connecting after this long.
    #[arg(long, global = true, value_parser = parse_duration, default_value = "5s", value_name = "DURATION", help_heading = "Connection")]
    pub connect_timeout: Duration,

    /// Give up waiting for one reply after this long.
    #[arg(long, global = true, value_parser = parse_duration, default_value = "10s", value_name = "DURATION", help_heading = "Connection")]
    pub command_timeout: Duration,
}

/// The "Examples:" section of a command's long help, one command line each.
fn examples(lines: &[&str]) -> String {
    let mut text = String::from("Examples:");
    for line in lines {
        text.push_str("\n  ");
        text.push_str(line);
    }
    text
}

/// How many missed runs one `run --catch-up` runs, unless --catch-up-max says otherwise: enough
/// for a few hours of an hourly job, few enough that a long outage of a minutely one does not
/// start a flood.
pub const DEFAULT_CATCH_UP_MAX: u32 = 10;

/// `run --if-unreplicated`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum IfUnreplicated {
    /// Start the command anyway, with a warning.
    Run,
    /// Do not start it: the run ends as failed (exit 88).
    Skip,
}

/// A domain enum's values as clap's possible values, each with its help, parsed into the type
/// itself: one type from the command line down (`--overlap`: [`OverlapPolicy`];
/// `--catch-up-policy`: [`CatchUpPolicy`]), whose module cannot know clap.
fn domain_values<T: Copy + Send + Sync + 'static, const N: usize>(
    all: [T; N],
    name: fn(T) -> &'static str,
    help: fn(T) -> &'static str,
) -> impl clap::builder::TypedValueParser<Value = T> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    PossibleValuesParser::new(all.map(|v| PossibleValue::new(name(v)).help(help(v)))).try_map(
        move |text| {
            all.into_iter()
                .find(|v| name(*v) == text)
                .ok_or("not one of the possible values")
        },
    )
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Table,
    Json,
    Wide,
    Name,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TimeFormat {
    Auto,
    Compact,
    Rfc3339,
    Relative,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Claim one run of a job: exactly one caller wins it.
    ///
    /// Prints the outcome: won (with the token and attempt to pass to heartbeat and finish),
    /// overlap, done or running, each with its own exit code.
    #[command(
        after_long_help = examples(&["anarchon claim sync --slot 2026-12-02T14:05:00Z --lease 30s --json"])
    )]
    Claim(ClaimArgs),

    /// Push the lease of a run you hold forward (only with the current attempt's token).
    Heartbeat(HeartbeatArgs),

    /// End a run you hold as ok or failed, recording its result.
    Finish(FinishArgs),

    /// Run a command for one scheduled run, on whichever host wins it (the crontab wrapper).
    ///
    /// Put the same line in every host's crontab; each scheduled run is claimed once, and only
    /// the winner runs the command. The others wait as backups and take over if the winner dies.
    /// anarchon exits with the command's exit code (128+N for signal N), so cron mail and
    /// monitoring see the truth; a skipped run exits with its own code (80-84).
    #[command(after_long_help = examples(&["*/5 * * * *  anarchon run --job sync --schedule '*/5 * * * *' -- /usr/local/bin/sync.sh --full", "anarchon run --job report --slot now --timeout 10m -- ./report.sh", "anarchon run --job backup --schedule '@daily' --catch-up 6h --shell -- 'pg_dump db | gzip > /backups/db.gz'", "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 anarchon run --job export -- ./export.sh   # its spans to a collector (OTLP/HTTP); one trace per run across hosts"]))]
    Run(Box<RunArgs>),

    /// Run every job of a crontab file, each scheduled run once across the replicas running it.
    ///
    /// A long-running scheduler for services that run as several replicas (Kubernetes, Nomad,
    /// ECS, docker compose), where there is no cron: run the same file in every replica, and each
    /// scheduled run of each line is claimed once and runs on one replica, exactly as `anarchon
    /// run` would run it from every host's crontab (lease, backups, overlap, catch-up, pause,
    /// fencing, records). The file is crontab syntax as supercronic and Vixie cron read it (5
    /// fields, 6 with seconds first, @hourly, NAME=value lines, CRON_TZ); a `# anarchon: FLAGS`
    /// line above a job carries `run`'s own flags for it (`--job NAME` names it: without one the
    /// name is derived from the line, and editing the line renames the job), and one of its own:
    /// `--was OLD` (repeatable) names a job's earlier names, so that a job renamed in a rolling
    /// deploy is claimed under its old name first and replicas old and new never run one
    /// scheduled time twice (`--check` shows them).
    ///
    /// SIGHUP or a change of the file reloads it (a file that does not read keeps the jobs
    /// running as they were); SIGTERM stops claiming, gives running commands --shutdown-grace to
    /// finish, then stops them and hands their runs to another replica, and exits 0. Each line a
    /// command prints goes to this process's stdout or stderr labelled with its job, slot and
    /// attempt.
    #[command(after_long_help = examples(&["anarchon cron --check /etc/anarchon/crontab", "anarchon --redis redis://redis:6379 cron /etc/anarchon/crontab --listen 0.0.0.0:9464", "anarchon cron crontab --log-format json --shutdown-grace 50s", "OTEL_EXPORTER_OTLP_ENDPOINT=http://otel-collector:4318 anarchon cron /etc/anarchon/crontab   # every run's spans over OTLP/HTTP"]))]
    Cron(CronArgs),

    /// List every job under the prefix: layout, runs in progress, last run, last result, history.
    ///
    /// Finds jobs with SCAN (never KEYS) and reads them in pipelined batches.
    #[command(
        after_long_help = examples(&["anarchon list", "anarchon list --pattern 'billing*' --json | jq '.jobs[] | select(.in_progress > 0)'"])
    )]
    List(ListArgs),

    /// Show one job in full: runs in progress with their leases, recent runs and results, keys,
    /// and its newest events (as kubectl describe): claims, takeovers, skips, releases, and who
    /// paused, resumed, released or ran it by hand, when and why.
    #[command(
        after_long_help = examples(&["anarchon inspect billing", "anarchon inspect billing --last 100 --json"])
    )]
    Inspect(InspectArgs),

    /// A full-screen live view for on-call: jobs worst first, runs in progress, and actions on them.
    ///
    /// Every job under the prefix sorted by health (what needs a person first, as `list --sort
    /// health`), the runs in progress with their holder and the time their lease has left, and
    /// the selected job's newest results, read again every --interval (one pipelined read per
    /// batch of jobs). Arrows or j/k move, Enter opens a job (its settings, pause, runs in
    /// progress and results, as `inspect` shows them), `/` filters by name, `l` shows its last
    /// failure's output (as `logs`), Esc goes back, `?` lists every key, `q` or Ctrl-C quits.
    ///
    /// Actions ask on screen first (y/n, with an optional reason) and are done by this same
    /// binary's own commands, as typed at a shell (so each is recorded as they are): `r`
    /// releases a run in progress (`release --no-wait`), `p` pauses the job or resumes it, `n`
    /// asks for a command and runs it now in the terminal (`run-now --shell`), then returns to
    /// the screen. A server that stops answering is said on screen with since when; the last
    /// picture stays until it answers again. Needs a terminal: in a pipe, `list -w` or
    /// `inspect JOB -w` show the same.
    #[command(
        after_long_help = examples(&["anarchon top", "anarchon top --pattern 'billing*' --interval 5s", "NO_COLOR=1 anarchon --redis redis://redis.internal:6379 top"])
    )]
    Top(TopArgs),

    /// When a job runs next: its fire times, jitter, the daylight-saving changes ahead, and what
    /// --catch-up would do after an outage.
    ///
    /// The job's schedule, zone, jitter and catch-up come from the job registry (what `anarchon
    /// run` recorded), and the times from the server's clock; with --schedule (and --tz) no
    /// server is needed and the times start from this machine's clock. --from starts elsewhere
    /// (the output is then the same every time). Every time is shown in UTC and in the schedule's
    /// zone, with the delay `run --jitter` waits before claiming it: the same on every host, derived
    /// from the job's name and the slot (without a job, only its range).
    ///
    /// Daylight saving: the zone's offset changes in the next 12 months (or up to the last time
    /// shown, if later), each with what the scheduler does with this schedule there, computed by
    /// the code that schedules it: a fixed-hour time the change skips (30 2 * * * on a
    /// spring-forward night) runs once, right after the jump; one it repeats runs once, the first
    /// time; wildcard hours (*/15 * * * *) follow the local clock: skipped times do not run,
    /// repeated ones run each time.
    ///
    /// --after-outage D: what the first run after every host was down for D (until --from, or
    /// now) would do with --catch-up (the registry's, or the flags below): the missed runs it
    /// runs, those it records skipped and why (older than the window, over --catch-up-max, policy
    /// latest), and those nobody runs. The first run is the one cron starts at the schedule's next
    /// fire time after the outage; runs before the outage are supposed claimed, and none from
    /// before the store first saw the job is caught up. Decided by `run`'s own catch-up code.
    #[command(
        after_long_help = examples(&["anarchon next sync", "anarchon next sync --after-outage 2h --json", "anarchon next --schedule '30 2 * * *' --tz Europe/Berlin --from 2026-03-27T00:00:00Z", "anarchon next nightly --schedule '0 3 * * *' --jitter 10m   # what run --job nightly --jitter 10m would wait"])
    )]
    Next(NextArgs),

    /// Show a job's attempts and results, newest first (or, with --events, what happened to it and
    /// who did what).
    #[command(
        after_long_help = examples(&["anarchon history sync --since 6h --status failed", "anarchon history sync --last 5 --json", "anarchon history sync --events --since 1d"])
    )]
    History(HistoryArgs),

    /// Draw a job's runs on a time axis: overlaps, takeovers, late starts, skips, failures.
    ///
    /// A row per slot, a line per attempt in it, over a time axis as wide as the terminal (100
    /// columns when piped, or --width): a bar from the attempt's claim to its end (a run in
    /// progress: to now), the attempt's host, and how it ended: finished, failed, interrupted (its
    /// lease expired), replaced (`--overlap replace`), superseded by a newer slot, released by an
    /// operator, skipped by a policy (with the reason). A takeover (attempt N+1 after attempt N's
    /// lease expired) says from which host; a late start (a first claim more than --late-after
    /// after its slot) says how late. Any instant at which two attempts of one job held it at once
    /// is drawn ▓ and said in a summary line: under --overlap forbid it must never happen. A
    /// legend ends the picture; colours only on a terminal.
    ///
    /// The range is the last hour unless --since and --until say otherwise; a run that ran in it
    /// for an older slot (a catch-up, a takeover, a long run) is drawn when its slot is no further
    /// before --since than the range is long (an hour at least, a day at most). Several jobs share
    /// one axis (JOB JOB ..., or --all: every job with an attempt in the range), for "what ran
    /// during the incident". --svg FILE writes the same picture as an SVG document for a postmortem; --json
    /// writes the data (docs/schemas/timeline.schema.json).
    #[command(
        after_long_help = examples(&["anarchon timeline billing", "anarchon timeline billing --since 6h", "anarchon timeline --all --since 2026-12-02T03:00:00Z --until 2026-12-02T04:00:00Z --svg incident.svg", "anarchon timeline sync --json | jq '.jobs[].overlaps'"])
    )]
    Timeline(TimelineArgs),

    /// Show what a job's runs left behind: stderr tail, exit code or signal, timeout, duration.
    ///
    /// The newest failure by default; --slot for one run's attempts, --last N for the newest N
    /// attempts whatever their status; -f follows a run's output as it prints, from any host, when
    /// it was started with `run --live-output`.
    #[command(
        after_long_help = examples(&["anarchon logs billing", "anarchon logs billing --slot 2026-12-02T03:00:00Z", "anarchon logs billing --last 5 --json", "anarchon logs -f billing"])
    )]
    Logs(LogsArgs),

    /// Wait for a run to end and exit with how it ended, as `gh run watch --exit-status`.
    ///
    /// Waits for the job's newest run in progress (or the run of --slot, also one not claimed
    /// yet), including takeovers by backups, then prints how it ended and exits 0 when it
    /// finished or was skipped, with the command's exit code when it failed (1 when there is
    /// none, or it was interrupted), and 124 at --timeout. A job with no run in progress reports
    /// its newest ended run at once.
    #[command(
        after_long_help = examples(&["anarchon wait billing && echo the run succeeded", "anarchon wait billing --slot 2026-12-02T03:00:00Z --timeout 1h"])
    )]
    Wait(WaitArgs),

    /// Trim a job's history (or every job's) with the scheduler's rules.
    ///
    /// Never removes a run in progress or one younger than --protect, which a late claim could
    /// still ask for. Asks for confirmation on a terminal; scripts pass --yes.
    #[command(
        after_long_help = examples(&["anarchon trim sync --keep 100 --dry-run", "anarchon trim --all --older-than 30d --yes"])
    )]
    Trim(TrimArgs),

    /// Stop a run in progress without its token (a hung or vanished holder), safely.
    ///
    /// Guaranteed: nothing else runs the job while the released holder may still be running its
    /// command. A holder with a live lease is told at its next heartbeat (within --heartbeat, a
    /// third of its lease by default); `anarchon run` then stops its command (SIGTERM, SIGKILL
    /// after its --kill-after, never past its lease) and records the attempt interrupted (or
    /// --status failed) with who released it, --reason, and how the command ended. Until then the
    /// run stays held: backups stand by, later slots and `run-now` wait or answer overlap. A holder
    /// that is gone does not delay the release past its lease's end: the run ends then. This
    /// command waits for that end (at most the lease) and says how it came, so `run-now` right
    /// after it runs the job once; --no-wait returns once the run is marked. A run whose lease has
    /// expired ends at once. Names the active run when the job has just one; --expired ends every
    /// run whose lease expired (with --all, across jobs). Asks on a terminal; scripts pass --yes.
    #[command(
        after_long_help = examples(&["anarchon release billing --reason \"hung on a lock, INC-1234\"", "anarchon release billing --slot 2026-12-02T03:00:00Z --status failed --yes", "anarchon release --expired --all --dry-run"])
    )]
    Release(ReleaseArgs),

    /// Pause a job across the fleet: every host's `run` skips it (exit 87) until `resume` or --until.
    ///
    /// Like Kubernetes CronJob `suspend`: runs in progress go on, manual runs (`run-now`) still
    /// work, and the slots due during the pause are skipped, not caught up later. `list` and
    /// `inspect` show who paused it, why and until when. Lease strategy.
    #[command(
        after_long_help = examples(&["anarchon pause billing --reason \"bank holiday, INC-77\"", "anarchon pause billing --until 2026-12-26T00:00:00Z", "anarchon pause billing --for 2h"])
    )]
    Pause(PauseArgs),

    /// End a job's pause: its next scheduled run is claimed as usual.
    #[command(after_long_help = examples(&["anarchon resume billing"]))]
    Resume(ResumeArgs),

    /// Keep named calendars of exclusion windows (holidays, freezes) that jobs share.
    ///
    /// A job that names a calendar (`run --calendar NAME`, or `# anarchon: --calendar NAME`) does
    /// not run the slots in its windows: they are recorded skipped with the window's name, and
    /// monitoring counts them decided. The windows are read at each slot, so an edit here applies
    /// to every host's next slot at once. Every edit is audited (`calendar show`).
    #[command(
        after_long_help = examples(&["anarchon calendar set holidays xmas=2026-12-24..2026-12-26 new-year=01-01 --reason \"CHG-881\"", "anarchon calendar show holidays", "anarchon calendar list --json", "anarchon calendar delete holidays"])
    )]
    Calendar(CalendarArgs),

    /// Retire a job that no host runs any more: monitoring stops expecting its runs.
    ///
    /// A job taken out of every crontab (or every replica's `anarchon cron` file) is still
    /// expected by `check`, `list`, `metrics` and `top`, and reads missed once its next run is due:
    /// an alert that never ends. `forget` records the job retired in its registry, with who, when
    /// and why (and in its events); it then reads `retired` (OK) and is judged no more. Its history
    /// stays, for `inspect` and `history`, unless --drop-history deletes it (its registry and
    /// events stay as the record). Refused (exit 82) while a run of it is in progress. A host that
    /// runs it again brings it back: a run claimed after the retirement is judged as ever.
    #[command(
        after_long_help = examples(&["anarchon forget nyc-report --reason \"moved to the warehouse, CHG-12\"", "anarchon forget nyc-report --drop-history --yes"])
    )]
    Forget(ForgetArgs),

    /// Move the store to format 2 (anarchon's own layout), or back to format 1 with --to 1.
    ///
    /// Format 1 is the scheduler's own layout (RedisBackend's `redis-backend.md`) and the one a
    /// new store is created in. Format 2 is read by this anarchon only: after the move, every
    /// reader of format 1 under this prefix is locked out, writing nothing: the Node scheduler's
    /// RedisBackend and ValkeyBackend instances refuse to start, and earlier anarchon releases exit
    /// 91 (their runs are skipped). Move only a prefix that anarchon alone uses, after upgrading
    /// every host.
    ///
    /// What format 2 buys (bench/server.sh on Redis 7.0, an every-minute job; docs/guide.md, "Store
    /// formats: which to use"): less than half the memory per run of history (about 315 B against
    /// 570 B: format 1 keeps a run's state beside its history) and about a fifth less script time
    /// per run. Both run every run exactly once, under the same faults.
    ///
    /// To format 2: converted job by job while hosts claim, one short script per job whatever its
    /// history (the format 1 keys are dropped: ended runs are their results already); an empty
    /// prefix is marked format 2.
    ///
    /// Back to format 1 (--to 1), for a store the seed's scheduler must share again: each job's
    /// whole history is rebuilt as format 1 keeps it (a status, a slot and a stream entry per run),
    /// so it costs a read of every result and about three writes per run of history, sent as plain
    /// pipelined commands; the one script per job that switches it reads only its runs in progress.
    /// Hosts claim on meanwhile. Start the seed's schedulers after it ends: until then some jobs are
    /// still in format 2, which they cannot read.
    ///
    /// Either way it can be stopped and run again (it goes on with the jobs left), refuses to run
    /// twice at once, and `anarchon trim` waits for it. Asks for confirmation on a terminal;
    /// scripts pass --yes.
    #[command(after_long_help = examples(&["anarchon migrate --dry-run", "anarchon migrate --yes", "anarchon migrate --to 1 --dry-run"]))]
    Migrate(MigrateArgs),

    /// Start a manual run of a job now: on a replica of `anarchon cron`, or here.
    ///
    /// Without a command, one replica of `anarchon cron` that has the job in its crontab runs the
    /// job's own command from its line, once, as a manual run (`kubectl create job
    /// --from=cronjob/x`); this prints its slot, where it runs and how to follow it, and with
    /// --wait waits for its end and exits as `anarchon wait` does. Refused (exit 89) when no live
    /// replica runs the job. With a command it runs here under a lease exactly like `run`. With
    /// --claim-only it only claims the manual run and prints its slot and token for `heartbeat`
    /// and `finish` by hand.
    #[command(
        name = "run-now",
        after_long_help = examples(&["anarchon run-now sync --reason 'INC-42: rerun after the fix'   # on a replica", "anarchon run-now sync --wait   # on a replica, exits with its exit status", "anarchon run-now sync -- /usr/local/bin/sync.sh   # here", "anarchon run-now sync --claim-only --json   # then heartbeat/finish with the printed slot and token"])
    )]
    RunNow(RunNowArgs),

    /// Check that jobs ran when their schedules said: a dead man's switch for monitoring.
    ///
    /// One line per job, worst first, as monitoring plugins print (Nagios, Icinga, Sensu,
    /// check_mk): OK, WARNING (a run is late, or failed), CRITICAL (runs were missed, or failed
    /// --failures times in a row), UNKNOWN (no schedule recorded, unreadable data, Redis
    /// unreachable), with performance data after `|`. Exits 0, 1, 2 or 3 accordingly. Reads only.
    #[command(
        after_long_help = examples(&["anarchon check --all", "anarchon check billing --grace 10m", "*/5 * * * *  anarchon check --all --json > /var/lib/anarchon/check.json"])
    )]
    Check(CheckArgs),

    /// Print Prometheus metrics of every job (health, last success, leases, ...), or serve them.
    ///
    /// Without --listen, prints the text once: for node_exporter's textfile collector. With
    /// --listen, serves them at http://ADDR/metrics, reading the store at each scrape, and the
    /// read-only status page at http://ADDR/ (as `anarchon serve`).
    #[command(
        after_long_help = examples(&["* * * * *  anarchon metrics > /var/lib/node_exporter/anarchon.prom.tmp && mv /var/lib/node_exporter/anarchon.prom.tmp /var/lib/node_exporter/anarchon.prom", "anarchon metrics --listen 127.0.0.1:9464"])
    )]
    Metrics(MetricsArgs),

    /// Serve a read-only status page of every job (and /metrics) to a browser.
    ///
    /// http://ADDR/ lists every job worst first with its health, schedule, next and last runs (as
    /// `list`); /job/NAME shows one job's runs in progress, newest results and the operators'
    /// actions (as `inspect`); /metrics is `metrics`' text. Plain HTML, no script, refreshed
    /// every 10 s by the page itself. Read-only: nothing on it acts on the store, and no secret is
    /// on it (the store's address without its password; no run's output). Loopback unless ADDR
    /// says otherwise: to show it to others, put it behind the organisation's proxy (docs/guide.md,
    /// "The status page"). `anarchon cron --listen` serves the same pages.
    #[command(after_long_help = examples(&["anarchon serve", "anarchon serve --listen 127.0.0.1:8080"]))]
    Serve(ServeArgs),

    /// Check the server: kind and version, strategies, mode, eviction, format, clock, latency.
    ///
    /// Each line is ok, warn or fail; exits 86 when any check fails.
    Doctor(DoctorArgs),

    /// Print shell completions (bash, zsh, fish, powershell, elvish), or write them all to --dir.
    #[command(
        after_long_help = examples(&["anarchon completions bash > /etc/bash_completion.d/anarchon", "anarchon completions zsh > \"${fpath[1]}/_anarchon\""])
    )]
    Completions(CompletionsArgs),

    /// Print the man page, or write one per command to --dir.
    #[command(after_long_help = examples(&["anarchon man --dir /usr/local/share/man/man1"]))]
    Man(ManArgs),
}

/// The run a command acts on.
#[derive(Debug, Clone, Args)]
pub struct JobSlot {
    /// The job's name (at most 200 bytes; no braces or control characters).
    pub job: String,

    /// The run: `now` (this minute by the server's clock), ms since the epoch, or RFC 3339.
    #[arg(long, value_parser = parse_slot, value_name = "SLOT")]
    pub slot: SlotSpec,
}

/// `--ping URL`: an http or https URL.
/// `--retry-backoff`: a factor from 1 (every wait the same) to 10.
fn parse_backoff(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if (1.0..=10.0).contains(&f) => Ok(f),
        _ => Err(format!(
            "{s:?} is not a factor from 1 to 10 (2 doubles each wait)"
        )),
    }
}

fn parse_ping_url(text: &str) -> Result<url::Url, String> {
    let url = url::Url::parse(text).map_err(|e| format!("{text:?} is not a URL ({e})"))?;
    match url.scheme() {
        "http" | "https" => Ok(url),
        other => Err(format!(
            "{other}:// is not HTTP; give an http:// or https:// URL (https://hc-ping.com/<uuid>)"
        )),
    }
}

/// How a claim behaves; shared by every command that claims. Every flag here except --runner is
/// a lease option: the claim-only strategies refuse them, so they have no default in clap (the
/// defaults below are applied by [`LeaseArgs`]'s methods once the strategy is known).
#[derive(Debug, Clone, Args)]
pub struct LeaseArgs {
    /// How long a claim holds the run without a heartbeat [default: 30s].
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub lease: Option<Duration>,

    /// Attempts in all: after a holder's lease expires, a new claim takes attempt+1 until this
    /// many [default: 3]. An attempt handed over (a replica of `cron` shutting down) is not
    /// counted (up to 10 such).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000), value_name = "N")]
    pub max_attempts: Option<u32>,

    /// What a slot does while an older run of the job holds a live lease: forbid (skip it), allow
    /// (run both), replace (stop the older one first), buffer (run it when the older one ends)
    /// [default: forbid].
    #[arg(long, value_parser = domain_values(OverlapPolicy::ALL, OverlapPolicy::name, OverlapPolicy::help), value_name = "MODE")]
    pub overlap: Option<OverlapPolicy>,

    /// Who is claiming, recorded in the run (default host:pid).
    #[arg(long, value_name = "NAME")]
    pub runner: Option<String>,

    /// Keep about this many runs of history per job (the scheduler's historySize) [default: 1000].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..), value_name = "N")]
    pub history_size: Option<u32>,

    /// Also drop history older than this (the scheduler's historyTtlMs).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub history_ttl: Option<Duration>,
}

/// Which strategy picks the one winner, and its own settings (nothing else: a setting of another
/// strategy is a usage error).
#[derive(Debug, Clone, Args)]
pub struct StrategyArgs {
    /// lease (default): leases, backups, overlap protection, retries. stream-id, idmp, script:
    /// claim-only strategies that only decide who runs (see docs/guide.md, "Strategies").
    #[arg(long, value_enum, value_name = "STRATEGY")]
    pub strategy: Option<StrategyName>,

    /// script strategy: how long a claimed run is remembered; must exceed --max-late [default: 5m].
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub window: Option<Duration>,

    /// idmp strategy: seconds Redis remembers a run's idempotency ID (1..86400) [default: 300].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=86400), value_name = "SECONDS")]
    pub idmp_duration: Option<u32>,

    /// idmp strategy: run IDs Redis keeps per job (1..10000) [default: 1000].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=10000), value_name = "N")]
    pub idmp_max_size: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StrategyName {
    Lease,
    StreamId,
    Idmp,
    Script,
}

/// Which backend flavour: valkey accepts only the strategies Valkey supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    Redis,
    Valkey,
}

#[derive(Debug, Args)]
pub struct ClaimArgs {
    #[command(flatten)]
    pub target: JobSlot,

    #[command(flatten)]
    pub strategy: StrategyArgs,

    #[command(flatten)]
    pub lease: LeaseArgs,

    /// Create the job if the store does not know it yet. Needed only on a terminal (a person's
    /// typo must not create a job); scripts and crontabs create jobs as they claim them.
    #[arg(long)]
    pub new: bool,
}

#[derive(Debug, Args)]
pub struct HeartbeatArgs {
    #[command(flatten)]
    pub target: JobSlot,

    #[command(flatten)]
    pub strategy: StrategyArgs,

    /// The token `claim` printed.
    #[arg(long, value_name = "TOKEN")]
    pub token: String,

    /// The new lease, from now by the server's clock.
    #[arg(long, value_parser = parse_duration, default_value = "30s", value_name = "DURATION")]
    pub lease: Duration,
}

#[derive(Debug, Args)]
pub struct FinishArgs {
    #[command(flatten)]
    pub target: JobSlot,

    #[command(flatten)]
    pub strategy: StrategyArgs,

    /// The token `claim` printed.
    #[arg(long, value_name = "TOKEN")]
    pub token: String,

    /// How the run ended.
    #[arg(long, value_enum, value_name = "STATUS")]
    pub status: FinishStatusArg,

    /// A result to record, as text.
    #[arg(long, value_name = "TEXT", conflicts_with = "result_json")]
    pub result: Option<String>,

    /// A result to record, as JSON.
    #[arg(long, value_name = "JSON")]
    pub result_json: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FinishStatusArg {
    Ok,
    Failed,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The job's name (at most 200 bytes; no braces or control characters).
    #[arg(long, value_name = "JOB")]
    pub job: String,

    /// Cron schedule the crontab line follows: 5 fields, 6 with seconds first, or @hourly style.
    /// The run is its latest fire time at or before the Redis server's clock.
    #[arg(long, value_name = "CRON", required_unless_present = "slot")]
    pub schedule: Option<String>,

    /// Time zone of --schedule (IANA name) [default: UTC]. Across daylight saving, a fixed-hour
    /// time the change skips runs once right after the jump, one it repeats runs once (the first);
    /// wildcard hours follow the local clock.
    #[arg(long, value_name = "ZONE")]
    pub tz: Option<String>,

    /// Run this slot instead of one from --schedule: `now` (this minute), ms, or RFC 3339.
    #[arg(long, value_parser = parse_slot, value_name = "SLOT", conflicts_with = "schedule")]
    pub slot: Option<SlotSpec>,

    /// Do not run a scheduled slot this much later than its time (exit 84).
    #[arg(long, value_parser = parse_duration, default_value = "1m", value_name = "DURATION")]
    pub max_late: Duration,

    /// Wait a delay of up to this long before claiming, the same on every host for one job and
    /// slot (derived from both), so that many jobs on one schedule do not all hit Redis and start
    /// their work in the same second (the backend's jitterMs). Not counted against --max-late.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub jitter: Option<Duration>,

    /// Also run, oldest first, the schedule's slots within this window that no host ever claimed
    /// (never one from before the store first saw the job: a first deployment catches up nothing).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub catch_up: Option<Duration>,

    /// Instead of the current slot, run every slot of --schedule from FROM to TO (both included;
    /// each `now`, ms, RFC 3339, or a duration ago: `6h..now`) that never ran, oldest first, one at
    /// a time, each claimed like any run: several hosts backfilling one range run each slot once.
    /// Slots before the job was first seen are run too (you asked for them).
    #[arg(long, value_parser = parse_time_range, value_name = "FROM..TO", requires = "schedule", conflicts_with_all = ["catch_up", "slot", "jitter"])]
    pub backfill: Option<TimeRange>,

    /// With --backfill: run at most this many slots (the oldest); say how many were left.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=100_000), value_name = "N", requires = "backfill")]
    pub backfill_max: u32,

    /// With --backfill: also run slots a policy recorded skipped (--catch-up-policy, --overlap),
    /// as long as nothing ever ran them.
    #[arg(long, requires = "backfill")]
    pub include_skipped: bool,

    /// With --backfill: list the range's slots and what would become of each; run nothing.
    #[arg(long, requires = "backfill")]
    pub dry_run: bool,

    /// After winning, wait until N replicas hold the claim (Redis WAIT) before starting the
    /// command, and again for the result after it ends: narrows the window in which a failover
    /// loses a claim and another host runs the slot again.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100))]
    pub wait_replicas: Option<u32>,

    /// How long --wait-replicas waits (shorter than half the lease and than --command-timeout).
    #[arg(long, value_parser = parse_duration, default_value = "1s", value_name = "DURATION", requires = "wait_replicas")]
    pub wait_timeout: Duration,

    /// When fewer than --wait-replicas acknowledged the claim in time: run the command anyway, with
    /// a warning, or skip it: end the run as failed without starting it, exit 88 (a failover can
    /// then lose the run, never run it twice).
    #[arg(long, value_enum, default_value_t = IfUnreplicated::Run, value_name = "ACTION", requires = "wait_replicas")]
    pub if_unreplicated: IfUnreplicated,

    /// Which missed runs --catch-up runs: all of them (the newest --catch-up-max), or latest: only
    /// the newest due run, when it was missed. The others are recorded as skipped, so no host runs
    /// them later and history shows them (store format 2).
    #[arg(long, value_parser = domain_values(CatchUpPolicy::ALL, CatchUpPolicy::name, CatchUpPolicy::help), default_value = "all", value_name = "POLICY", requires = "catch_up")]
    pub catch_up_policy: CatchUpPolicy,

    /// Run at most this many missed runs at once (the newest; older ones are recorded as skipped).
    #[arg(long, default_value_t = DEFAULT_CATCH_UP_MAX, value_parser = clap::value_parser!(u32).range(1..=1000), value_name = "N", requires = "catch_up")]
    pub catch_up_max: u32,

    #[command(flatten)]
    pub strategy: StrategyArgs,

    #[command(flatten)]
    pub lease: LeaseArgs,

    /// When another host holds the run, exit at once (82) instead of waiting as its backup.
    #[arg(long)]
    pub no_backup: bool,

    /// Exit 0 instead of 80/81/82/87 when another host holds or already ran the slot, or the job
    /// is paused (for monitoring that treats any non-zero cron exit as a failure). Too late (84)
    /// stays non-zero.
    #[arg(long)]
    pub skipped_ok: bool,

    /// After an attempt this host ran fails (failed, interrupted, timed out), run CMD through
    /// /bin/sh with the run's facts in its environment: ANARCHON_JOB, ANARCHON_SLOT,
    /// ANARCHON_SLOT_TIME, ANARCHON_ATTEMPT, ANARCHON_RUNNER, ANARCHON_STATUS,
    /// ANARCHON_EXIT_CODE, ANARCHON_SIGNAL, ANARCHON_TIMED_OUT, ANARCHON_STDERR_TAIL (a file
    /// with the last 4 KiB of its stderr) and TRACEPARENT (the failed attempt's, as its command
    /// had it). Only the host that ran it notifies; the hook's own failure is reported and never
    /// changes the run's result or exit code.
    #[arg(long, value_name = "CMD")]
    pub on_failure: Option<String>,

    /// Ping a dead man's switch (the Healthchecks.io protocol) for each attempt this host runs:
    /// URL/start when the command starts, URL when it finished, URL/fail when it failed (with its
    /// stderr tail). Hosts that do not run the slot do not ping.
    #[arg(long, value_parser = parse_ping_url, value_name = "URL")]
    pub ping: Option<url::Url>,

    /// How long one --ping may take in all, retries included; the run never waits longer.
    #[arg(long, value_parser = parse_duration, default_value = "10s", value_name = "DURATION", requires = "ping")]
    pub ping_timeout: Duration,

    /// When the command fails, run it again up to N times, each a new attempt of the same slot
    /// that any host standing by may take (this one too), after --retry-delay, never beside
    /// another attempt. A pending retry holds the job as a run in progress does (under --overlap
    /// forbid the next slot is skipped while it waits). Counted apart from --max-attempts, which
    /// counts lost leases. Lease strategy only.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=100))]
    pub retries: Option<u32>,

    /// With --retries: the wait before the first retry [default: 30s].
    #[arg(long, value_parser = parse_duration, value_name = "DURATION", requires = "retries")]
    pub retry_delay: Option<Duration>,

    /// With --retries: each later wait is the one before times this [default: 2].
    #[arg(long, value_name = "FACTOR", value_parser = parse_backoff, requires = "retries")]
    pub retry_backoff: Option<f64>,

    /// With --retries: no wait is longer than this [default: 10m].
    #[arg(long, value_parser = parse_duration, value_name = "DURATION", requires = "retries")]
    pub retry_max_delay: Option<Duration>,

    /// With --retries: retry only when the command exits with one of these codes (comma
    /// separated, as `75,111`) [default: any failure, a signal or a timeout included].
    #[arg(long, value_name = "CODES", value_delimiter = ',', value_parser = clap::value_parser!(i32).range(1..=255), requires = "retries")]
    pub retry_on: Vec<i32>,

    /// Hold a permit of the named limit while the command runs: at most N runs of all the jobs
    /// that name it, on any host or replica, run at once (`--limit db-heavy=2`; repeat for
    /// several). A won run waits for a permit up to --max-late, then is recorded interrupted
    /// with who held them (exit 94). A permit lapses with its holder's lease. Give every job of
    /// a limit the same N. Lease strategy only.
    #[arg(long = "limit", value_name = "NAME=N", value_parser = crate::store::limit::Limit::parse)]
    pub limits: Vec<crate::store::limit::Limit>,

    /// Do not run the slots in this window, in the schedule's zone: a date (2026-12-24), dates
    /// (2026-12-24..2026-12-26), a day of every year (12-25), days of the week (sat,sun or
    /// mon-fri), a time of day (02:00-03:00, may wrap past midnight), or days@times
    /// (fri@22:00-06:00); name it with NAME=. Such a slot is recorded skipped with the window's
    /// name (exit 0): monitoring counts it decided, never missed. Repeat for several.
    #[arg(long, value_name = "[NAME=]WINDOW", value_parser = crate::exclusion::Exclusion::parse)]
    pub exclude: Vec<crate::exclusion::Exclusion>,

    /// Also skip the windows of this named calendar, which operators keep in the store
    /// (`anarchon calendar`); read at each slot, so an edit applies to the next one. Repeat for
    /// several.
    #[arg(long = "calendar", value_name = "NAME")]
    pub calendars: Vec<String>,

    /// How long --on-failure may run before it is killed.
    #[arg(long, value_parser = parse_duration, default_value = "30s", value_name = "DURATION", requires = "on_failure")]
    pub on_failure_timeout: Duration,

    /// Stand by as a backup for at most this long [default: as long as the run is held and has
    /// attempts left]. A backup follows the holder's lease and takes over the moment it expires.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION", conflicts_with = "no_backup")]
    pub backup_for: Option<Duration>,

    #[command(flatten)]
    pub exec: ExecArgs,

    /// The command and its arguments, after `--` (not needed for --backfill --dry-run).
    #[arg(
        last = true,
        required_unless_present = "dry_run",
        value_name = "COMMAND"
    )]
    pub command: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LeaseLostAction {
    Terminate,
    Continue,
}

#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    /// Only jobs whose name matches this Redis glob (`*`, `?`, `[abc]`).
    #[arg(long, default_value = "*", value_name = "GLOB")]
    pub pattern: String,

    /// Only jobs of this strategy's layout: lease, or any claim-only one [default: both layouts].
    #[arg(long, value_enum, value_name = "STRATEGY")]
    pub strategy: Option<StrategyName>,

    /// List every run in progress across the jobs instead: job, slot, attempt, runner, running
    /// for, lease left (or expired).
    #[arg(long)]
    pub active: bool,

    /// Only jobs whose newest run is in this state (`expired`: marked running, lease ended).
    #[arg(long, value_parser = ["running", "expired", "paused", "finished", "failed", "interrupted", "claimed"], value_name = "STATE")]
    pub status: Option<String>,

    /// Only jobs that need a person: health late, missed or failing, or a run whose lease expired.
    #[arg(long)]
    pub unhealthy: bool,

    /// Order of the rows.
    #[arg(long, value_enum, default_value = "name", value_name = "KEY")]
    pub sort: ListSort,

    #[command(flatten)]
    pub watch: WatchArgs,
}

/// `--watch`: show it again every --interval, like `watch` or `kubectl get -w`.
#[derive(Debug, Clone, Args)]
pub struct WatchArgs {
    /// Show it again every --interval until interrupted: redrawn in place on a terminal; piped,
    /// as `kubectl get -w`, the first round whole, then below a time line only the lines that
    /// changed (and `gone:` before a line that is no longer there).
    #[arg(long, short = 'w')]
    pub watch: bool,

    /// How often --watch (and history --follow) reads the store again.
    #[arg(long, value_parser = parse_duration, default_value = "2s", value_name = "DURATION")]
    pub interval: Duration,
}

/// How `list` orders its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ListSort {
    /// By job name.
    Name,
    /// Newest run first.
    LastRun,
    /// By state, then name (expired and failed first).
    State,
    /// By health, then name: what needs a person first (missed, failing, late).
    Health,
}

#[derive(Debug, Clone, Args)]
pub struct InspectArgs {
    /// The job's name.
    pub job: String,

    /// Which layout to read: lease, or a claim-only strategy [default: whichever exists].
    #[arg(long, value_enum, value_name = "STRATEGY")]
    pub strategy: Option<StrategyName>,

    /// How many of the newest runs to show.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub last: usize,

    #[command(flatten)]
    pub watch: WatchArgs,
}

#[derive(Debug, Clone, Args)]
pub struct NextArgs {
    /// The job: its registered schedule (what `run` recorded), read from the store. With
    /// --schedule only its name is used, for the jitter `run --job JOB` would wait.
    #[arg(value_name = "JOB", required_unless_present = "schedule")]
    pub job: Option<String>,

    /// A cron schedule to show instead of a job's: 5 fields, 6 with seconds first, or @hourly
    /// style. The store is not read.
    #[arg(long, value_name = "CRON")]
    pub schedule: Option<String>,

    /// Time zone of --schedule (IANA name) [default: UTC].
    #[arg(long, value_name = "ZONE", requires = "schedule")]
    pub tz: Option<String>,

    /// How many fire times to show.
    #[arg(long, short = 'c', default_value_t = 5, value_parser = clap::value_parser!(u16).range(1..=1000), value_name = "N")]
    pub count: u16,

    /// Start here instead of now (RFC 3339, or ms since the epoch): fire times at or after it,
    /// and the outage of --after-outage ends here.
    #[arg(long, value_parser = parse_slot, value_name = "TIME")]
    pub from: Option<SlotSpec>,

    /// The jitter to show instead of the registry's (with --schedule: run's --jitter).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub jitter: Option<Duration>,

    /// Also show what the first run after an outage of this long (every host down, until --from
    /// or now) would run, record skipped, and leave, with --catch-up.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub after_outage: Option<Duration>,

    /// With --after-outage: the --catch-up window to suppose instead of the registry's.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION", requires = "after_outage")]
    pub catch_up: Option<Duration>,

    /// With --after-outage: the --catch-up-policy to suppose instead of the registry's.
    #[arg(long, value_parser = domain_values(CatchUpPolicy::ALL, CatchUpPolicy::name, CatchUpPolicy::help), value_name = "POLICY", requires = "after_outage")]
    pub catch_up_policy: Option<CatchUpPolicy>,

    /// With --after-outage: --catch-up-max (the registry does not record it) [default: run's, 10].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000), value_name = "N", requires = "after_outage")]
    pub catch_up_max: Option<u32>,
}

#[derive(Debug, Clone, Args)]
pub struct TopArgs {
    /// Only jobs whose name matches this Redis glob (`*`, `?`, `[abc]`).
    #[arg(long, default_value = "*", value_name = "GLOB")]
    pub pattern: String,

    /// How often the store is read again.
    #[arg(long, value_parser = parse_duration, default_value = "2s", value_name = "DURATION")]
    pub interval: Duration,
}

#[derive(Debug, Clone, Args)]
pub struct HistoryArgs {
    /// The job's name (or --all).
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub job: Option<String>,

    /// Every job under the prefix, newest first with a JOB column (with --follow: jobs that
    /// appear later too). Combine with --since, --status and --runner: "what failed on host-b
    /// in the last hour".
    #[arg(long)]
    pub all: bool,

    /// Only attempts this runner ran: a runner name (`host-b:977`) or a host (`host-b`).
    #[arg(long, value_name = "RUNNER|HOST")]
    pub runner: Option<String>,

    /// Which layout to read: lease, or a claim-only strategy [default: whichever exists].
    #[arg(long, value_enum, value_name = "STRATEGY")]
    pub strategy: Option<StrategyName>,

    /// Only runs whose slot is at or after this: a duration ago (6h) or a time (RFC 3339, ms).
    #[arg(long, value_parser = crate::time::parse_since, value_name = "DURATION|TIME")]
    pub since: Option<crate::time::Since>,

    /// Only attempts with this status (`expired`: still marked running, its lease ended, as
    /// `list` and `inspect` say).
    #[arg(long, value_parser = ["running", "expired", "finished", "failed", "interrupted", "skipped"], value_name = "STATUS")]
    pub status: Option<String>,

    /// At most this many entries.
    #[arg(long, default_value_t = 50, value_name = "N")]
    pub last: usize,

    /// Add a column with the last line each attempt left on stderr (or why it ended).
    #[arg(long, short)]
    pub verbose: bool,

    /// The job's events instead of its attempts, newest first, at most --last: each run's
    /// claim, takeover (from which host), end, skip (why), supersession, release or replacement
    /// (by whom, why), and every operator's release, pause, resume, run-now, trim and migrate
    /// (who, when, why: `--reason`).
    #[arg(long, conflicts_with_all = ["all", "follow", "status", "verbose", "runner"])]
    pub events: bool,

    /// Then print each attempt as it ends, until interrupted (like `tail -f`; the store is read
    /// every --interval).
    #[arg(long, short = 'f', conflicts_with = "watch")]
    pub follow: bool,

    #[command(flatten)]
    pub watch: WatchArgs,
}

#[derive(Debug, Args)]
pub struct WaitArgs {
    /// The job's name.
    pub job: String,

    /// Which layout to read: lease, or a claim-only strategy [default: whichever exists].
    #[arg(long, value_enum, value_name = "STRATEGY")]
    pub strategy: Option<StrategyName>,

    /// The run to wait for [default: the newest in progress].
    #[arg(long, value_parser = parse_slot, value_name = "SLOT")]
    pub slot: Option<SlotSpec>,

    /// Give up after this long (exit 124) [default: wait as long as it takes].
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub timeout: Option<Duration>,

    /// How often the store is read while waiting.
    #[arg(long, value_parser = parse_duration, default_value = "1s", value_name = "DURATION")]
    pub interval: Duration,
}

#[derive(Debug, Args)]
pub struct LogsArgs {
    /// The job's name.
    pub job: String,

    /// Which layout to read: lease, or a claim-only strategy [default: whichever exists].
    #[arg(long, value_enum, value_name = "STRATEGY")]
    pub strategy: Option<StrategyName>,

    /// Every ended attempt of this run.
    #[arg(long, value_parser = parse_slot, value_name = "SLOT", conflicts_with = "last")]
    pub slot: Option<SlotSpec>,

    /// The newest N ended attempts, whatever their status.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub last: Option<u64>,

    /// Follow a run's output as its command prints it, from any host, and end with how the run
    /// ended (exiting as `wait` does): the newest run in progress, or the run of --slot. Across a
    /// takeover it goes on with the next attempt. Needs the run started with `run --live-output`
    /// (or `# anarchon: --live-output` in a crontab); `--json`: a JSON line per line of output.
    #[arg(long, short = 'f', conflicts_with = "last")]
    pub follow: bool,
}

/// How a command runs under a lease; shared by `run` and `run-now`.
#[derive(Debug, Clone, Args)]
pub struct ExecArgs {
    /// Heartbeat interval while the command runs (default: a third of --lease).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub heartbeat: Option<Duration>,

    /// What to do with the command when the lease is lost: terminate it, or let it continue
    /// [default: terminate].
    #[arg(long, value_enum, value_name = "ACTION")]
    pub on_lease_lost: Option<LeaseLostAction>,

    /// Grace between SIGTERM and SIGKILL when anarchon stops the command.
    #[arg(long, value_parser = parse_duration, default_value = "10s", value_name = "DURATION")]
    pub kill_after: Duration,

    /// Stop the command after this long and record it as failed (exit 124).
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub timeout: Option<Duration>,

    /// Run the command line with /bin/sh -c (the words after -- joined by spaces).
    #[arg(long)]
    pub shell: bool,

    /// Keep the command in anarchon's process group, so it can read from the terminal (as
    /// `timeout --foreground`). Signals then reach the command alone, not its children.
    #[arg(long)]
    pub foreground: bool,

    /// Let processes the command started in the background run on after it exits. By default,
    /// as systemd's KillMode=control-group, what the command leaves in its process group when it
    /// exits is stopped (SIGTERM, SIGKILL after --kill-after) before the run is recorded ended:
    /// a child left running would overlap the job's next run.
    #[arg(long, conflicts_with = "foreground")]
    pub leave_children: bool,

    /// Keep the last 4 KiB of the command's stdout in its result (`stdout_tail`, shown by `logs`
    /// and `history -v`), as its stderr is always kept: for jobs that report on stdout. The
    /// command's stdout then goes through a pipe (it is still printed as it comes), so a command
    /// that asks whether its stdout is a terminal hears no.
    #[arg(long, conflicts_with = "foreground")]
    pub keep_stdout: bool,

    /// Send the command's output to the store as it prints, line by line, so that `anarchon logs
    /// -f JOB` follows it from any host while it runs (and for a day after, or the job's
    /// --history-ttl if shorter). At most --live-output-lines lines per attempt. Its stdout then
    /// goes through a pipe, as with --keep-stdout. Off by default: a run costs the server nothing
    /// more without it.
    #[arg(long, conflicts_with = "foreground")]
    pub live_output: bool,

    /// With --live-output: the most lines of an attempt's output sent to the store; the rest is
    /// printed here as usual but not sent.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=1_000_000), value_name = "N", requires = "live_output")]
    pub live_output_lines: u64,

    /// No progress or notes on stderr; errors and lost leases are still reported.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct TrimArgs {
    /// The job to trim (or --all).
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub job: Option<String>,

    /// Trim every job under the prefix (both layouts).
    #[arg(long)]
    pub all: bool,

    /// Which layout to trim for JOB: lease, or a claim-only strategy [default: whichever exists].
    #[arg(long, value_enum, value_name = "STRATEGY")]
    pub strategy: Option<StrategyName>,

    /// Keep about this many runs per job (the scheduler's historySize).
    #[arg(long, default_value_t = crate::strategy::claim::DEFAULT_HISTORY_SIZE, value_parser = clap::value_parser!(u32).range(1..), value_name = "N")]
    pub keep: u32,

    /// Also remove runs whose slot is older than this.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub older_than: Option<Duration>,

    /// Never remove a run younger than this: a late claim could still ask for it [default: what
    /// the job's claimants recorded (max-late + catch-up + lease x attempts), or 24h when the store
    /// does not know; 1h for claim-only jobs]. Shorter than the recorded need is refused.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub protect: Option<Duration>,

    /// Only report what would be removed.
    #[arg(long)]
    pub dry_run: bool,

    /// Do not ask for confirmation (needed when stdin is not a terminal).
    #[arg(long, short)]
    pub yes: bool,

    #[command(flatten)]
    pub audit: AuditArgs,
}

#[derive(Debug, Args)]
pub struct RunNowArgs {
    /// The job's name.
    pub job: String,

    /// Create the job if the store does not know it yet. Needed only on a terminal (a person's
    /// typo must not create a job); scripts create jobs as they run them.
    #[arg(long)]
    pub new: bool,

    #[command(flatten)]
    pub strategy: StrategyArgs,

    #[command(flatten)]
    pub lease: LeaseArgs,

    #[command(flatten)]
    pub exec: ExecArgs,

    #[command(flatten)]
    pub audit: AuditArgs,

    /// Only claim the manual run, here, and print its slot and token for `heartbeat` and `finish`
    /// by hand (the lease protocol), instead of asking a replica of `anarchon cron` to run it.
    #[arg(long, conflicts_with = "command")]
    pub claim_only: bool,

    /// On a replica: wait for the run to end and exit as `anarchon wait` does (0 when it
    /// finished; its command's exit code when it failed).
    #[arg(long, conflicts_with_all = ["command", "claim_only"])]
    pub wait: bool,

    /// The command and its arguments, after `--`, run here (none: the job's own command, on a
    /// replica of `anarchon cron`).
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ReleaseArgs {
    /// The job (or --expired --all).
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub job: Option<String>,

    /// The run to release [default: the job's one run in progress].
    #[arg(long, value_parser = parse_slot, value_name = "SLOT")]
    pub slot: Option<SlotSpec>,

    /// Release only runs whose lease expired more than DURATION ago (every such run of the job,
    /// or of every job with --all): holders that died with nobody standing by.
    #[arg(long, value_parser = parse_duration, value_name = "DURATION", num_args = 0..=1, default_missing_value = "1m")]
    pub expired: Option<Duration>,

    /// Every lease job (with --expired).
    #[arg(long, requires = "expired")]
    pub all: bool,

    /// How the released attempt is recorded.
    #[arg(long, default_value = "interrupted", value_parser = domain_values(ReleaseStatus::ALL, ReleaseStatus::as_str, ReleaseStatus::help), value_name = "STATUS")]
    pub status: ReleaseStatus,

    #[command(flatten)]
    pub audit: AuditArgs,

    /// Only show what would be released.
    #[arg(long)]
    pub dry_run: bool,

    /// Return once the run is marked released, without waiting for its holder to stop it.
    #[arg(long)]
    pub no_wait: bool,

    /// End the run at once, even under a live lease, without waiting for its holder (as releases
    /// did before): the holder may still be running the command when something else runs the
    /// job. For holders that cannot be told (another scheduler, an older anarchon).
    #[arg(long, conflicts_with = "no_wait")]
    pub force: bool,

    /// Do not ask for confirmation (needed when stdin is not a terminal).
    #[arg(long, short)]
    pub yes: bool,
}

#[derive(Debug, Args)]
pub struct PauseArgs {
    /// The job's name.
    pub job: String,

    /// Until this time (RFC 3339, or ms since the epoch) [default: until `resume`].
    #[arg(long, value_parser = parse_slot, value_name = "TIME", conflicts_with = "for_")]
    pub until: Option<SlotSpec>,

    /// For this long from now, by the server's clock.
    #[arg(long = "for", id = "for_", value_parser = parse_duration, value_name = "DURATION")]
    pub for_: Option<Duration>,

    #[command(flatten)]
    pub audit: AuditArgs,
}

#[derive(Debug, Args)]
pub struct ForgetArgs {
    /// The job's name.
    pub job: String,

    /// Also delete the job's history and state (its runs, results and pause); its registry and
    /// events stay, as the record of the retirement.
    #[arg(long)]
    pub drop_history: bool,

    /// Say what would be done, and do nothing.
    #[arg(long)]
    pub dry_run: bool,

    /// Do not ask for confirmation (needed when stdin is not a terminal).
    #[arg(long, short)]
    pub yes: bool,

    #[command(flatten)]
    pub audit: AuditArgs,
}

#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The job's name.
    pub job: String,

    #[command(flatten)]
    pub audit: AuditArgs,
}

/// Who does an operator's action and why (`release`, `pause`, `resume`, `run-now`, `trim`,
/// `migrate`): recorded with it in the job's events, which `inspect` and `history --events` show.
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Why (an incident number, a sentence): recorded in the job's events, and where the action
    /// keeps one (a pause, a released run's result).
    #[arg(long, value_name = "TEXT")]
    pub reason: Option<String>,

    /// Who does it, recorded with it [default: $USER@host:pid].
    #[arg(long, value_name = "NAME")]
    pub by: Option<String>,
}

#[derive(Debug, Args)]
pub struct CalendarArgs {
    #[command(subcommand)]
    pub action: CalendarAction,
}

#[derive(Debug, clap::Subcommand)]
pub enum CalendarAction {
    /// Set a calendar's windows, replacing what it had (creating it).
    Set {
        /// The calendar's name.
        name: String,
        /// Its windows, as `run --exclude` takes them: [NAME=]WINDOW.
        #[arg(required = true, value_name = "[NAME=]WINDOW")]
        windows: Vec<String>,
        #[command(flatten)]
        audit: AuditArgs,
    },
    /// A calendar's windows and its edits, newest first.
    Show { name: String },
    /// Every calendar under the prefix, with its windows.
    List,
    /// Delete a calendar: the jobs that name it run every slot again.
    Delete {
        name: String,
        #[command(flatten)]
        audit: AuditArgs,
    },
}

#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// The store format to move to: 2 (anarchon's own), or 1 (the seed's, which every scheduler
    /// reads).
    #[arg(long, default_value_t = crate::store::LeaseFormat::NEWEST.number(), value_parser = clap::value_parser!(u32).range(1..=i64::from(crate::store::LeaseFormat::NEWEST.number())), value_name = "FORMAT")]
    pub to: u32,

    /// Only report what would change.
    #[arg(long)]
    pub dry_run: bool,

    /// Do not ask for confirmation (needed when stdin is not a terminal).
    #[arg(long, short)]
    pub yes: bool,

    #[command(flatten)]
    pub audit: AuditArgs,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The jobs to check [default: every job under the prefix].
    #[arg(value_name = "JOB")]
    pub jobs: Vec<String>,

    /// Every job under the prefix (the default when no JOB is given).
    #[arg(long, conflicts_with = "jobs")]
    pub all: bool,

    /// How long after its slot a run may start before it counts as late [default: the job's
    /// --max-late + --jitter + 1m, from the job registry].
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub grace: Option<Duration>,

    /// CRITICAL once this many runs in a row failed (fewer: WARNING).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..), value_name = "N")]
    pub failures: u32,

    /// Look at every slot due in the last DURATION for runs missed or lost (claimed but never run
    /// to an end) [default: the newest 10 due slots]. For a check run less often than the job, or
    /// after an incident: "did we lose a run in the last 6h?"
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub window: Option<Duration>,
}

#[derive(Debug, Args)]
pub struct CronArgs {
    /// The crontab file.
    #[arg(value_name = "FILE")]
    pub file: std::path::PathBuf,

    /// Read the file and print each job's name, schedule, time zone and next runs, then exit: 0
    /// when it reads, 2 with every error (FILE:LINE: why) when it does not.
    #[arg(long)]
    pub check: bool,

    /// How many next runs --check shows for each job.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u16).range(1..=100), value_name = "N", requires = "check")]
    pub next: u16,

    /// On SIGTERM or SIGINT, how long running commands may take to finish before they are
    /// stopped (SIGTERM, SIGKILL 2 s later) and their runs handed to another replica. Keep it
    /// under what the orchestrator allows (Kubernetes: terminationGracePeriodSeconds, 30 s).
    #[arg(long, default_value = "25s", value_parser = parse_duration, value_name = "DURATION")]
    pub shutdown_grace: Duration,

    /// How the log is written: text (`TIME LEVEL [job slot #attempt] message`, one line a
    /// record) or json (one object a line, for log collectors: time, level, job, slot, attempt,
    /// event, exit_code, duration, message).
    #[arg(long, value_enum, default_value = "text", value_name = "FORMAT")]
    pub log_format: CronLogFormat,

    /// Also log the routine notes, at level debug: a replica standing by for a run another
    /// holds, a slot another replica ran ("already finished; not run here").
    #[arg(long, short)]
    pub verbose: bool,

    /// Serve /metrics (Prometheus: every job's health, and this daemon's own), /healthz
    /// (liveness: the daemon answers) and /readyz (503 while the store does not answer or refuses
    /// writes, by a probe every second) at ADDR (host:port, or a port alone on 127.0.0.1). Bind
    /// 0.0.0.0 only on purpose.
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,

    /// Run at most N commands at once on this replica: at N it claims no new slot and the other
    /// replicas take the runs; a slot that finds every replica full waits up to its --max-late for
    /// room, then is recorded skipped with why. Takeovers of runs in progress and run-now requests
    /// are not held back. [default: no cap]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub max_running: Option<u32>,

    /// The service whose replicas run this crontab (the same NAME in every replica of it, for
    /// example the Deployment's name). A job removed from the crontab then stops being expected
    /// by `check`, `list`, `metrics` and `top` once no live replica of the service has it (it reads
    /// `retired`); while the service has no live replica, its jobs are judged as any (a service
    /// that is down alerts). Without it, a removed job is retired by `anarchon forget`.
    #[arg(long, value_name = "NAME", env = "ANARCHON_SERVICE")]
    pub service: Option<String>,
}

/// `cron --log-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CronLogFormat {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct MetricsArgs {
    /// Serve the metrics over HTTP at ADDR (host:port, or a port alone on 127.0.0.1) instead of
    /// printing them once [default address: 127.0.0.1:9464]. Bind 0.0.0.0 only on purpose.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:9464")]
    pub listen: Option<String>,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Where to serve: host:port, or a port alone on 127.0.0.1. Bind 0.0.0.0 only on purpose.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9464")]
    pub listen: String,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// How many PINGs measure the latency.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=1000), value_name = "N")]
    pub pings: u16,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum, required_unless_present = "dir")]
    pub shell: Option<clap_complete::Shell>,

    /// Write every shell's completions into this directory instead.
    #[arg(long, value_name = "DIR", conflicts_with = "shell")]
    pub dir: Option<std::path::PathBuf>,

    /// Install SHELL's completions where the shell finds them for this user (bash:
    /// $XDG_DATA_HOME/bash-completion/completions, zsh: $XDG_DATA_HOME/zsh/site-functions (add it
    /// to fpath), fish: $XDG_CONFIG_HOME/fish/completions), and say where.
    #[arg(long, requires = "shell", conflicts_with = "dir")]
    pub install: bool,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write anarchon.1 and one page per command into this directory instead.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<std::path::PathBuf>,

    /// Install the pages where `man` finds them for this user ($XDG_DATA_HOME/man/man1), and say
    /// where.
    #[arg(long, conflicts_with = "dir")]
    pub install: bool,
}

#[derive(Debug, Args)]
pub struct TimelineArgs {
    /// The jobs, drawn on one time axis (or --all).
    #[arg(
        value_name = "JOB",
        required_unless_present = "all",
        conflicts_with = "all"
    )]
    pub jobs: Vec<String>,

    /// Every job under the prefix that has an attempt in the range, in name order.
    #[arg(long)]
    pub all: bool,

    /// Which layout to read: lease, or a claim-only strategy [default: whichever exists].
    #[arg(long, value_enum, value_name = "STRATEGY")]
    pub strategy: Option<StrategyName>,

    /// Start of the range: a duration ago (6h) or a time (RFC 3339, ms) [default: an hour before
    /// --until].
    #[arg(long, value_parser = crate::time::parse_since, value_name = "DURATION|TIME")]
    pub since: Option<crate::time::Since>,

    /// End of the range: `now`, a duration ago (30m) or a time (RFC 3339, ms) [default: now].
    #[arg(long, value_parser = crate::time::parse_range_end, value_name = "now|DURATION|TIME")]
    pub until: Option<crate::time::RangeEnd>,

    /// How many columns the picture takes [default: the terminal's width; 100 when piped].
    #[arg(long, value_parser = clap::value_parser!(u16).range(40..=2000), value_name = "N")]
    pub width: Option<u16>,

    /// A run is late when its first claim came more than this after its slot [default: the job's
    /// --jitter, from the job registry, + 10s].
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub late_after: Option<Duration>,

    /// How long after its slot a run may start: a slot of the schedule with no run is drawn
    /// missed once this has passed, as `check --grace` judges it [default: the job's --max-late
    /// + --jitter + 1m, from the job registry].
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub grace: Option<Duration>,

    /// Also write the picture as an SVG document to FILE (`-`: to stdout, instead of the text).
    #[arg(long, value_name = "FILE")]
    pub svg: Option<std::path::PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<std::ffi::OsString> {
        line.split(' ').map(Into::into).collect()
    }

    /// The crontab wrapper's lines parse to the same value by `run` alone as by the whole command.
    #[test]
    fn run_alone_parses_as_the_whole_command_does() {
        let lines: [&[&str]; 6] = [
            &[
                "anarchon",
                "run",
                "--job",
                "sync",
                "--slot",
                "now",
                "--",
                "/usr/bin/sync.sh",
                "--full",
            ],
            &[
                "anarchon",
                "run",
                "--job",
                "sync",
                "--schedule",
                "*/5 * * * *",
                "--",
                "true",
            ],
            &[
                "anarchon",
                "run",
                "--job",
                "r",
                "--slot",
                "now",
                "--timeout",
                "10m",
                "--json",
                "--",
                "./r.sh",
            ],
            &[
                "anarchon",
                "run",
                "--redis",
                "redis://h:6379/2",
                "--prefix",
                "p:",
                "--job",
                "b",
                "--schedule",
                "@daily",
                "--catch-up",
                "6h",
                "--shell",
                "--",
                "a|b",
            ],
            &[
                "anarchon",
                "run",
                "--job",
                "x",
                "--slot",
                "60000",
                "--overlap",
                "allow",
                "--lease",
                "30s",
                "--max-attempts",
                "5",
                "--quiet",
                "--",
                "true",
            ],
            &[
                "anarchon",
                "run",
                "--job",
                "x",
                "--slot",
                "now",
                "--no-backup",
                "--on-failure",
                "./hook",
                "--",
                "true",
            ],
        ];
        for line in lines {
            let args: Vec<std::ffi::OsString> = line.iter().map(Into::into).collect();
            let alone =
                Cli::run_alone(&args).unwrap_or_else(|| panic!("not parsed alone: {line:?}"));
            let whole = Cli::try_parse_from(args).unwrap();
            assert_eq!(format!("{alone:?}"), format!("{whole:?}"), "{line:?}");
        }
    }

    /// What `run` alone does not take as it is goes to the whole command: help, `--version`, an
    /// error (whose message names the whole command), every other command.
    #[test]
    fn the_rest_is_parsed_by_the_whole_command() {
        for line in [
            "anarchon run --help",
            "anarchon run --job x --bogus -- true",
            "anarchon run",
            "anarchon --json run --job x -- true",
            "anarchon inspect sync",
        ] {
            assert!(Cli::run_alone(&words(line)).is_none(), "{line}");
        }
        let error = Cli::from_command_line(words("anarchon run --job x --bogus -- true"))
            .err()
            .unwrap();
        assert_eq!(error.kind(), clap::error::ErrorKind::UnknownArgument);
        assert!(error.to_string().contains("anarchon run"), "{error}");
    }

    /// The command users meet keeps man and completions free of the connection, store and
    /// output options, and parses every other line into what the derived command does: an
    /// option before the command's name or after it, at any depth, from the environment or not.
    #[test]
    fn the_command_for_users_parses_as_the_derived_one() {
        for line in [
            "anarchon list --json",
            "anarchon --json list",
            "anarchon --redis redis://h:1 inspect sync --prefix p",
            "anarchon calendar set freeze f=2026-03-29 --json -n 2",
            "anarchon --color never check --window 2m",
            "anarchon man --dir /tmp/x",
            "anarchon --json completions bash",
            "anarchon cron /etc/anarchon/crontab --connect-timeout 2s",
        ] {
            let users = Cli::command_for_users()
                .try_get_matches_from(line.split(' '))
                .and_then(|mut m| <Cli as clap::FromArgMatches>::from_arg_matches_mut(&mut m))
                .unwrap_or_else(|e| panic!("{line}: {e}"));
            let derived = Cli::try_parse_from(line.split(' ')).unwrap();
            assert_eq!(format!("{users:?}"), format!("{derived:?}"), "{line}");
        }
        let mut man = Cli::command_for_users();
        man.build();
        let man = man.find_subcommand("man").unwrap();
        assert!(man.get_arguments().all(|a| a.get_long() != Some("redis")));
    }
}
