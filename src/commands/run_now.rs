//! `anarchon run-now JOB [-- COMMAND...]`: a manual run, now.
//!
//! Its slot is the server's clock in ms, its kind `manual` (docs/store-format.md). Without a
//! command a replica of `anarchon cron` runs the job's own line ([`on_replica`]). With a command it
//! runs here exactly like `run`; with `--claim-only` it only claims, prints the slot and token, and
//! leaves heartbeat and finish to the caller.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::commands::Context;
use crate::commands::shared::awaited::{Seen, exit_code_of, look};
use crate::commands::shared::claim_report::{ClaimReport, exit_code, print_claim};
use crate::error::{ExitCode, ExitStatus, Result};
use crate::runner::{Target, run_slot};
use crate::settings::claim::{RunNowCommand, RunNowMode};
use crate::store::JobKeys;
use crate::store::RunKind;
use crate::store::events::{self, Action};
use crate::store::history::HistoryEntry;
use crate::store::requests::{self, Replica};
use crate::strategy;
use crate::time::{humanize, rfc3339};

pub async fn execute(r: &RunNowCommand, ctx: &Context) -> Result<ExitStatus> {
    if let RunNowMode::OnReplica { wait } = r.mode {
        return on_replica(r, wait, ctx).await;
    }
    let keys = ctx.lease_keys(&r.job)?;
    let strategy = r.strategy;
    let (mut conn, check) = ctx.open_for_a_run(strategy, &keys).await?;
    crate::store::job::require_job_or_new(
        &mut conn,
        ctx.prefix(),
        &r.job,
        super::may_create(r.new),
    )
    .await?;
    let now = check.server_now_ms;
    let req = r.claim.request(now, RunKind::Manual);
    // Recorded before the run, which may last hours: the events say who asked for it and why
    // from the start; the run's own claim and end follow as run events.
    let asked = match &r.mode {
        RunNowMode::Here(_) => format!("asked for a manual run on {}", req.runner),
        RunNowMode::ClaimOnly | RunNowMode::OnReplica { .. } => format!(
            "asked for a manual run on {} (claimed only: heartbeat and finish by hand)",
            req.runner
        ),
    };
    let action =
        Action::new("run-now", &r.audit.by, r.audit.reason.as_deref(), asked).at_slot(req.slot);
    events::record(&mut conn, ctx.prefix(), &r.job, &action).await;
    match &r.mode {
        RunNowMode::Here(opts) => {
            let target = Target::new(ctx.prefix(), &r.job, strategy, &check);
            let opts = &crate::runner::RunnerOptions {
                trace: ctx.trace(&req.runner),
                ..(**opts).clone()
            };
            let report = run_slot(&mut conn, target, req, opts, now).await?;
            if ctx.out.json {
                ctx.out.print_json_line(&report);
            } else if !opts.quiet && std::io::stderr().is_terminal() {
                // A run that did not happen says why, as `run` does.
                crate::errln!(
                    "anarchon: {}",
                    crate::scheduler::describe(&report, now, std::time::Duration::ZERO)
                );
            }
            Ok(report.exit_status())
        }
        RunNowMode::ClaimOnly | RunNowMode::OnReplica { .. } => {
            let target = strategy::Target::new(ctx.prefix(), &r.job, strategy, &check);
            let reply = strategy::claim(&mut conn, target, &req, now).await?;
            print_claim(ctx, &ClaimReport::new(&r.job, &req, &reply));
            Ok(exit_code(reply.outcome).into())
        }
    }
}

/// How long a request waits for a replica to claim it before it is recorded skipped and reported.
const PICKUP_WITHIN: Duration = Duration::from_secs(5);

/// How often the store is looked at while the request is picked up, and while `--wait` waits.
const LOOK_EVERY: Duration = Duration::from_millis(25);
const WAIT_EVERY: Duration = Duration::from_millis(250);

/// `run-now --json` without a command: what became of the request.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct RequestReport {
    job: String,
    /// The manual run's slot (absent when nothing was asked: no replica runs the job).
    slot: Option<i64>,
    slot_time: Option<String>,
    /// `started` (a replica claimed it and runs it), `ended` (with --wait, or ended before it was
    /// seen running), `no_replica` (no live replica has the job in its crontab: nothing was
    /// asked), `not_picked_up` (no replica claimed it in time: recorded skipped, nothing ran),
    /// `overlap` or `paused` (the replicas' claim answered so: nothing ran).
    status: String,
    /// The replica that holds (or held) the run, and its attempt.
    runner: Option<String>,
    attempt: Option<u32>,
    /// Milliseconds from the request to the replica's claim (server clock).
    picked_up_after_ms: Option<i64>,
    /// The live replicas that run the job (each one's runner name).
    replicas: Vec<String>,
    /// Why, for every status but `started` and `ended`.
    reason: Option<String>,
    /// The run as `history` shows it, once ended.
    run: Option<HistoryEntry>,
    /// What the command exits with.
    exit_code: i32,
}

impl RequestReport {
    fn new(job: &str, replicas: &[&Replica]) -> Self {
        RequestReport {
            job: job.to_string(),
            slot: None,
            slot_time: None,
            status: String::new(),
            runner: None,
            attempt: None,
            picked_up_after_ms: None,
            replicas: replicas.iter().map(|r| r.runner.clone()).collect(),
            reason: None,
            run: None,
            exit_code: 0,
        }
    }

    /// Prints it (the document with --json; else the error and hint on stderr) and returns its code.
    fn refused(
        mut self,
        ctx: &Context,
        status: &str,
        code: ExitCode,
        why: String,
        hint: &str,
    ) -> ExitStatus {
        self.status = status.to_string();
        self.reason = Some(why.clone());
        self.exit_code = code.code();
        if ctx.out.json {
            ctx.out.print_json(&self);
        }
        crate::errln!("error: {why}\n  hint: {hint}");
        code.into()
    }
}

/// The JSON Schema of `run-now --json` without a command (docs/schemas/).
pub(crate) fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![(
        "run-now-on-replica",
        crate::commands::output_schema::<RequestReport>(),
    )]
}

/// `run-now JOB` without a command: asks the replicas of `anarchon cron` that run the job
/// (docs/store-format.md, "Run-now requests and replicas"), waits up to [`PICKUP_WITHIN`] for one
/// to claim it, says where it runs and how to follow it, and with `--wait` waits for its end. A
/// request no replica claims in time is recorded skipped (atomically against a late claim: it
/// then never runs) and reported.
async fn on_replica(r: &RunNowCommand, wait: bool, ctx: &Context) -> Result<ExitStatus> {
    let keys = ctx.lease_keys(&r.job)?;
    let (mut conn, check) = ctx.open_for_a_run(r.strategy, &keys).await?;
    let prefix = ctx.prefix();
    let now = check.server_now_ms;
    let all = requests::read_replicas(&mut conn, prefix).await?;
    let live: Vec<&Replica> = all.iter().filter(|x| x.is_live(now)).collect();
    let running: Vec<&Replica> = live.iter().copied().filter(|x| x.runs(&r.job)).collect();
    let mut report = RequestReport::new(&r.job, &running);
    if running.is_empty() {
        let no = no_replica(r, prefix, now, &all, &live);
        return Ok(report.refused(ctx, &no.status, no.code, no.why, &no.hint));
    }
    let slot = now;
    report.slot = Some(slot);
    report.slot_time = Some(rfc3339(slot));
    let started = ask(&mut conn, r, prefix, slot, &report.replicas).await?;
    let target = strategy::Target::new(prefix, &r.job, r.strategy, &check);
    let lease_keys = target.lease_keys();
    let asked = Asked {
        r,
        prefix,
        slot,
        now,
        started,
        job_keys: JobKeys::Lease(lease_keys.clone()),
        lease_keys,
    };
    let seen = match asked.picked_up(&mut conn, &report.replicas).await? {
        Pickup::Seen(seen) => *seen,
        Pickup::Refused(no) => {
            return Ok(report.refused(ctx, &no.status, no.code, no.why, &no.hint));
        }
    };
    let entry = match &seen {
        Seen::Waiting(Some(e)) | Seen::Ended(e) => e.clone(),
        Seen::Waiting(None) => unreachable!("the loop ends on a claim"),
    };
    report.runner = Some(entry.runner.clone());
    report.attempt = entry.attempt;
    report.picked_up_after_ms = entry.claimed_at.map(|c| c - slot);
    if !ctx.out.json {
        // `logs -f` follows only an attempt that sends its output to the store (--live-output):
        // offered then, not for a run it cannot follow.
        let live = match (&seen, entry.attempt) {
            (Seen::Waiting(_), Some(attempt)) => {
                let key = crate::store::output::output_key(prefix, &r.job, slot, attempt);
                sends_its_output(&mut conn, &key).await
            }
            _ => false,
        };
        print_picked_up(&asked, &seen, &entry, report.picked_up_after_ms, wait, live);
    }
    let ended = match seen {
        Seen::Ended(e) => Some(e),
        _ if wait => Some(asked.wait_for_end(&mut conn).await?),
        _ => None,
    };
    Ok(finish(ctx, r, report, ended))
}

/// Why a request was refused: the report's status, the exit code, the error and its hint.
struct Refusal {
    status: String,
    code: ExitCode,
    why: String,
    hint: String,
}

/// What became of the request while it was being picked up.
enum Pickup {
    /// A replica claimed it: the run in progress, or already ended.
    Seen(Box<Seen>),
    /// Nothing runs: the replicas declined it, or none claimed it in time.
    Refused(Refusal),
}

/// The refusal when no live replica runs the job: nothing is asked.
fn no_replica(
    r: &RunNowCommand,
    prefix: &str,
    now: i64,
    all: &[Replica],
    live: &[&Replica],
) -> Refusal {
    let why = if live.is_empty() {
        match all.first() {
            Some(last) => format!(
                "no replica of `anarchon cron` is live under prefix {prefix:?} (the last, {}, was seen {} ago), so none runs {}; nothing was asked",
                last.runner,
                humanize(u64::try_from(now - last.presence.seen).unwrap_or(0)),
                r.job
            ),
            None => format!(
                "no replica of `anarchon cron` is live under prefix {prefix:?}, so none runs {}; nothing was asked",
                r.job
            ),
        }
    } else {
        format!(
            "none of the {} live replicas of `anarchon cron` ({}) has {} in its crontab; nothing was asked",
            live.len(),
            live.iter()
                .map(|x| x.runner.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            r.job
        )
    };
    let nearest = crate::store::requests::nearest_job(&r.job, live.iter().copied())
        .map_or(String::new(), |name| format!("did you mean {name}? or "));
    let hint = format!(
        "{nearest}start a replica whose crontab has the job, or run a command here: `anarchon run-now {} -- COMMAND`; `--claim-only` claims the manual run for heartbeat and finish by hand",
        r.job
    );
    Refusal {
        status: "no_replica".to_string(),
        code: ExitCode::NoReplica,
        why,
        hint,
    }
}

/// Writes the request for the replicas and records who asked; returns when it was asked.
async fn ask(
    conn: &mut crate::connection::Connection,
    r: &RunNowCommand,
    prefix: &str,
    slot: i64,
    replicas: &[String],
) -> Result<Instant> {
    let _: redis::Value = conn
        .query(&requests::request_command(
            prefix,
            &r.job,
            slot,
            &r.audit.by,
            r.audit.reason.as_deref(),
        ))
        .await?;
    let started = Instant::now();
    let action = Action::new(
        "run-now",
        &r.audit.by,
        r.audit.reason.as_deref(),
        format!(
            "asked for a manual run on a replica of anarchon cron ({} live run it: {})",
            replicas.len(),
            replicas.join(", ")
        ),
    )
    .at_slot(slot);
    events::record(conn, prefix, &r.job, &action).await;
    Ok(started)
}

/// A request written to the replicas: what the looks at its run need.
struct Asked<'a> {
    r: &'a RunNowCommand,
    prefix: &'a str,
    slot: i64,
    /// The server's clock when the store was opened.
    now: i64,
    /// When the request was written (this host's clock).
    started: Instant,
    lease_keys: crate::store::LeaseKeys,
    job_keys: JobKeys,
}

impl Asked<'_> {
    /// The server's clock now, from its reading at the start.
    fn server_now(&self) -> i64 {
        self.now + crate::time::millis(self.started.elapsed())
    }

    /// Looks at the request until a replica claims it, the replicas decline it, or (after
    /// [`PICKUP_WITHIN`]) it is recorded skipped.
    async fn picked_up(
        &self,
        conn: &mut crate::connection::Connection,
        replicas: &[String],
    ) -> Result<Pickup> {
        let r = self.r;
        let mut skipped_once = false;
        loop {
            let mut at = Some(self.slot);
            match look(conn, &self.job_keys, &mut at, self.server_now()).await? {
                Seen::Waiting(Some(entry)) => {
                    return Ok(Pickup::Seen(Box::new(Seen::Waiting(Some(entry)))));
                }
                Seen::Ended(entry) => return Ok(Pickup::Seen(Box::new(Seen::Ended(entry)))),
                Seen::Waiting(None) => {}
            }
            let declined = requests::declined(conn, self.prefix, &r.job, self.slot).await?;
            // Every replica that runs the job answers the same claim; the first answer says why.
            if let Some(d) = declined.first() {
                return Ok(Pickup::Refused(declined_refusal(r, d)));
            }
            if self.started.elapsed() >= PICKUP_WITHIN && !skipped_once {
                skipped_once = true;
                match self.skip_unclaimed(conn, replicas).await? {
                    Some(no) => return Ok(Pickup::Refused(no)),
                    // Claimed meanwhile: it is looked at once more.
                    None => continue,
                }
            }
            tokio::time::sleep(LOOK_EVERY).await;
        }
    }

    /// Records the request skipped, as no replica claimed it in time: the refusal, or None when a
    /// replica claimed it meanwhile.
    async fn skip_unclaimed(
        &self,
        conn: &mut crate::connection::Connection,
        replicas: &[String],
    ) -> Result<Option<Refusal>> {
        let (r, slot) = (self.r, self.slot);
        let reason = format!(
            "run-now: no replica of anarchon cron claimed the request within {}",
            humantime::format_duration(PICKUP_WITHIN)
        );
        Ok(
            match strategy::lease::skip(conn, &self.lease_keys, slot, &r.audit.by, &reason).await? {
                strategy::lease::SkipOutcome::Skipped => Some(Refusal {
                    status: "not_picked_up".to_string(),
                    code: ExitCode::NoReplica,
                    why: format!(
                        "{} @ {}: no replica claimed the request within {} (live replicas that run it: {}); recorded skipped, so it never runs late; nothing ran",
                        r.job,
                        rfc3339(slot),
                        humantime::format_duration(PICKUP_WITHIN),
                        replicas.join(", ")
                    ),
                    hint: "the replicas' logs say why (a store they cannot reach, a replica stopped); `anarchon run-now` again asks again".to_string(),
                }),
                strategy::lease::SkipOutcome::Paused => Some(Refusal {
                    status: "paused".to_string(),
                    code: ExitCode::Paused,
                    why: format!("{} @ {}: the job is paused; nothing ran", r.job, rfc3339(slot)),
                    hint: format!("`anarchon resume {}` ends the pause", r.job),
                }),
                strategy::lease::SkipOutcome::Claimed(_) => None,
            },
        )
    }

    /// Waits (`--wait`) for the claimed run's end.
    async fn wait_for_end(&self, conn: &mut crate::connection::Connection) -> Result<HistoryEntry> {
        loop {
            tokio::time::sleep(WAIT_EVERY).await;
            let mut at = Some(self.slot);
            if let Seen::Ended(e) = look(conn, &self.job_keys, &mut at, self.server_now()).await? {
                return Ok(e);
            }
        }
    }
}

/// The refusal when the replicas' claim declined the request (a pause, or an overlap).
fn declined_refusal(r: &RunNowCommand, d: &requests::Declined) -> Refusal {
    let code = match d.outcome.as_str() {
        "paused" => ExitCode::Paused,
        _ => ExitCode::Overlap,
    };
    let hint = match code {
        ExitCode::Paused => format!("`anarchon resume {}` ends the pause", r.job),
        _ => format!(
            "`anarchon wait {}` waits for the run in progress, then ask again; `anarchon inspect {}` shows it; `anarchon release {}` ends a stuck one",
            r.job, r.job, r.job
        ),
    };
    Refusal {
        status: d.outcome.clone(),
        code,
        why: d.detail.clone(),
        hint,
    }
}

/// Whether the attempt whose output key is `key` sends its output to the store (`--live-output`):
/// its runner writes the key's first entry as the command starts, a moment after the claim that
/// run-now saw, so it is looked for a little while (without live output it never comes).
async fn sends_its_output(conn: &mut crate::connection::Connection, key: &str) -> bool {
    const LOOK_FOR: std::time::Duration = std::time::Duration::from_millis(1_500);
    let since = std::time::Instant::now();
    loop {
        match conn.query::<i64>(redis::cmd("EXISTS").arg(key)).await {
            Ok(n) if n > 0 => return true,
            Ok(_) if since.elapsed() < LOOK_FOR => {
                tokio::time::sleep(std::time::Duration::from_millis(50)).await
            }
            _ => return false,
        }
    }
}

/// Prints where the claimed run runs and, without `--wait`, how to follow it.
fn print_picked_up(
    asked: &Asked,
    seen: &Seen,
    entry: &HistoryEntry,
    picked_up_after_ms: Option<i64>,
    wait: bool,
    live_output: bool,
) {
    let (r, slot) = (asked.r, asked.slot);
    let picked = picked_up_after_ms.map_or(String::new(), |ms| {
        format!(", claimed {ms}ms after the request")
    });
    crate::outln!(
        "{} @ {} (slot {slot}): {} on {} (attempt {}){picked}",
        r.job,
        rfc3339(slot),
        if matches!(seen, Seen::Ended(_)) {
            "ran"
        } else {
            "running"
        },
        entry.runner,
        entry.attempt.map_or("-".to_string(), |a| a.to_string()),
    );
    if !wait {
        if live_output {
            crate::outln!("  follow  anarchon logs -f {} --slot {slot}", r.job);
        }
        crate::outln!("  wait    anarchon wait {} --slot {slot}", r.job);
        crate::outln!("  logs    anarchon logs {} --slot {slot}", r.job);
    }
}

/// Completes the report with the run's end, if it ended, prints it and returns the exit status.
fn finish(
    ctx: &Context,
    r: &RunNowCommand,
    mut report: RequestReport,
    ended: Option<HistoryEntry>,
) -> ExitStatus {
    match ended {
        Some(e) => {
            report.status = "ended".to_string();
            report.exit_code = exit_code_of(&e);
            report.runner = Some(e.runner.clone());
            report.attempt = e.attempt;
            if !ctx.out.json {
                crate::outln!(
                    "{} @ {}: {} as attempt {} on {}{}{}",
                    r.job,
                    e.slot_time,
                    e.status,
                    e.attempt.map_or("-".to_string(), |a| a.to_string()),
                    e.runner,
                    crate::output::how_it_ended(&e.result)
                        .map_or(String::new(), |how| format!(" ({how})")),
                    e.duration_ms.map_or(String::new(), |d| format!(
                        " after {}",
                        humanize(d.max(0) as u64)
                    ))
                );
            }
            report.run = Some(e);
        }
        None => report.status = "started".to_string(),
    }
    if ctx.out.json {
        ctx.out.print_json(&report);
    }
    // An ended run exits with its command's own status, as `wait` does.
    match report.run {
        Some(_) => ExitStatus::External(report.exit_code),
        None => ExitStatus::OK,
    }
}
