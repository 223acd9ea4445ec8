//! A job's earlier names (issue 46, item 5): a rename (`--job` changed, or a derived name
//! re-derived by an edit of its line) must never run one scheduled time twice, nor start beside
//! the old name's run in progress under `--overlap forbid`, on one replica that reloads or across
//! a rolling deploy where old replicas run the old name and new ones the new name.
//!
//! A job's lineage is its earlier names: `--was OLD` in its `# anarchon:` line (several allowed),
//! and, on a reload, the name this daemon ran the same line under (the same command renamed, or a
//! derived name's line edited in place: [`carry_over`]). Each slot `T` of the job `B` is first
//! claimed under each old name `A`, by `A`'s own claim script, with `B`'s settings
//! ([`before_slot`]):
//! - **won**: `T` is `B`'s. A marker `{<prefix>A}:handed:<T>` = `<attempt>:<B>` says so, and the
//!   claim of `A`'s `T` is held, heartbeated, while `B` takes `T` (so that under forbid a replica
//!   still running `A` sees `A` busy, as it would see its own run); when `B`'s run of `T` has ended,
//!   `A`'s `T` is finished (`finished`, result `{"handed_to": B}`), and old replicas claiming it
//!   are answered `done`. If `B`'s run did not end here (a shutdown's hand-over, a lost lease),
//!   `A`'s `T` is handed over too (its lease ends now), so that whoever takes `A`'s `T` over next
//!   decides again.
//! - **done**: when the marker names this attempt and `B`, a replica of `B` handed it: go on to
//!   claim `B`'s `T` (one of them runs it, the others are answered by `B`'s claim). Otherwise an
//!   old replica ran `T` as `A` (or its attempt ended with nobody to hand it on): `B` does not run
//!   it, and records `T` skipped ("ran as A").
//! - **running**: another replica holds `A`'s `T` (an old one running it, or a new one handing it
//!   to `B`): wait for it, as a backup stands by; a holder that dies leaves a lease that expires,
//!   and the claim then takes it over (and decides as above).
//! - **overlap** (`forbid`, `replace`, `buffer`): an older run of `A` holds a live lease: `T` is
//!   skipped, as the overlap of one job's own runs is.
//! - **paused**: `A` is paused, which is `A`'s own affair: `B` goes on.
//!
//! `A`'s and `B`'s keys are in two hash slots, so this is two steps: a crash between them leaves
//! `A`'s `T` held by a lease that expires, and the next claim of it (an old replica's takeover, a
//! new replica waiting, or this replica restarted) decides `T` again; the marker's attempt tells a
//! hand-over of this attempt from a later attempt that ran as `A`.

use std::collections::HashSet;
use std::time::Duration;

use tokio::task::JoinHandle;

use crate::commands::run::Outcome;
use crate::connection::Connection;
use crate::error::Result;
use crate::runner::SlotOutcome;
use crate::settings::crontab::{Crontab, derived_name};
use crate::settings::run::RunSettings;
use crate::store::{LeaseKeys, RunKind, StoreCheck};
use crate::strategy::claim::{ClaimOutcome, ClaimRequest};
use crate::strategy::lease;
use crate::time::rfc3339;

/// The marker of a slot of `old` handed to a new name: `{<prefix><old>}:handed:<slot>`, a string
/// `<attempt>:<new name>`, in `old`'s hash slot, expiring with the run's claimable state.
pub fn handed_key(keys: &LeaseKeys, slot: i64) -> String {
    // `keys.job` is `{<prefix><old>}:job`: the hash tag, then the suffix.
    let tag = keys.job.strip_suffix(":job").unwrap_or(&keys.job);
    format!("{tag}:handed:{slot}")
}

/// The claim of an old name's slot, held while the new name takes the slot.
pub(super) struct Held {
    old: String,
    keys: LeaseKeys,
    slot: i64,
    token: String,
    heartbeat: JoinHandle<()>,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.heartbeat.abort();
    }
}

/// What the old names said of a slot.
pub(super) enum Before {
    /// Take the slot under the job's own name; the old names' claims held meanwhile.
    Take(Vec<Held>),
    /// Not run here (said on stderr, recorded skipped where the store has a place for it).
    Skip,
}

/// Each old name's answer.
enum Step {
    Hold(Box<Held>),
    Through,
    NotHere(String),
}

/// Before `job`'s slot is taken: its old names' claims of the slot ([`Step`], module docs).
/// Connection trouble is retried as a claim's; an error that stays leaves the slot to the
/// other replicas (what is held is handed over: its lease ends now).
pub(super) async fn before_slot(
    conn: &mut Connection,
    prefix: &str,
    job: &RunSettings,
    check: &StoreCheck,
    slot: i64,
) -> Before {
    if job.lineage.is_empty() || !job.strategy.has_leases() {
        return Before::Take(Vec::new());
    }
    let format = crate::strategy::Target::new(prefix, &job.job, job.strategy, check)
        .lease_keys()
        .format;
    let mut held = Vec::new();
    for old in &job.lineage {
        let keys = LeaseKeys::new(prefix, old).with_format(format);
        match step(conn, job, old, &keys, slot).await {
            Ok(Step::Hold(h)) => held.push(*h),
            Ok(Step::Through) => {}
            Ok(Step::NotHere(reason)) => {
                finish_held(conn, job, held, true).await;
                let keys = LeaseKeys::new(prefix, &job.job).with_format(format);
                let recorded = crate::runner::retrying(conn, async |c| {
                    lease::skip(c, &keys, slot, &job.claim.runner, &reason).await
                })
                .await
                .is_ok_and(|o| o == lease::SkipOutcome::Skipped);
                crate::errln!(
                    "anarchon: {} @ {}: not run here ({reason}){}",
                    job.job,
                    rfc3339(slot),
                    if recorded {
                        "; recorded as skipped"
                    } else {
                        ""
                    }
                );
                return Before::Skip;
            }
            Err(e) => {
                crate::errln!(
                    "anarchon: {} @ {}: cannot claim it under {old}, its old name ({}); not taken here (another replica may)",
                    job.job,
                    rfc3339(slot),
                    e.with_hint()
                );
                finish_held(conn, job, held, false).await;
                return Before::Skip;
            }
        }
    }
    Before::Take(held)
}

/// One old name's claim of `slot`, waiting while another replica holds it.
async fn step(
    conn: &mut Connection,
    job: &RunSettings,
    old: &str,
    keys: &LeaseKeys,
    slot: i64,
) -> Result<Step> {
    // One token for every try: a claim whose reply was lost is answered won again. The old
    // name's lease is three of the new name's: the new name's command is always stopped by its
    // own lease's rules (its heartbeats fail, its guard's deadline) long before this one could
    // lapse under the same faults, so an old replica never claims past it while the command runs.
    let mut req: ClaimRequest = job.claim.request(slot, RunKind::Scheduled);
    req.lease *= OLD_NAME_LEASES;
    let mut said = false;
    loop {
        let reply =
            crate::runner::retrying(conn, async |c| lease::claim(c, keys, &req).await).await?;
        match reply.outcome {
            ClaimOutcome::Won => {
                let attempt = reply.attempt.unwrap_or(1);
                return Ok(Step::Hold(Box::new(
                    hold(conn, job, old, keys, &req, attempt).await?,
                )));
            }
            ClaimOutcome::Done => {
                let key = handed_key(keys, slot);
                let marker: Option<String> = crate::runner::retrying(conn, async |c| {
                    c.query(redis::cmd("GET").arg(&key)).await
                })
                .await?;
                let ours = reply
                    .attempt
                    .map(|attempt| format!("{attempt}:{}", job.job));
                if marker.is_some() && marker == ours {
                    return Ok(Step::Through);
                }
                let by = if reply.runner.is_empty() {
                    String::new()
                } else {
                    format!(", by {}", reply.runner)
                };
                return Ok(Step::NotHere(match reply.status.as_str() {
                    // Skipped under the old name (an overlap under forbid, a catch-up's policy):
                    // skipped under both.
                    "skipped" | "trimmed" => {
                        format!("{} under {old}, its old name{by}", reply.status)
                    }
                    status => format!("ran as {old}, its old name ({status}{by})"),
                }));
            }
            ClaimOutcome::Running => {
                if !said {
                    crate::errln!(
                        "anarchon: {} @ {}: {old}, its old name, holds this time (held by {}); waiting for it",
                        job.job,
                        rfc3339(slot),
                        reply.runner
                    );
                    said = true;
                }
                tokio::time::sleep(job.runner.standby_poll.max(Duration::from_millis(100))).await;
            }
            ClaimOutcome::Overlap => {
                return Ok(Step::NotHere(format!(
                    "--overlap {}: the run of {} under {old}, its old name (attempt {}, {}), was still in progress",
                    job.claim.overlap,
                    reply
                        .other_slot
                        .map_or_else(|| "an older slot".to_string(), rfc3339),
                    reply.attempt.unwrap_or(1),
                    reply.runner
                )));
            }
            ClaimOutcome::Paused => return Ok(Step::Through),
        }
    }
}

/// Heartbeats the held claim of an old name's slot while the new name takes it.
/// An old name's claim of the slot won as `attempt`: marked handed to `job` (the marker a later
/// claimant reads to tell this hand-over from a run under the old name) and kept alive while
/// `job` takes the slot.
async fn hold(
    conn: &mut Connection,
    job: &RunSettings,
    old: &str,
    keys: &LeaseKeys,
    req: &ClaimRequest,
    attempt: u32,
) -> Result<Held> {
    let keep = u64::try_from(job.claim.history.keep_claimable.as_millis())
        .unwrap_or(u64::MAX)
        .max(60_000);
    let marker = format!("{attempt}:{}", job.job);
    let key = handed_key(keys, req.slot);
    crate::runner::retrying(conn, async |c| {
        c.query::<()>(redis::cmd("SET").arg(&key).arg(&marker).arg("PX").arg(keep))
            .await
    })
    .await?;
    Ok(Held {
        old: old.to_string(),
        keys: keys.clone(),
        slot: req.slot,
        token: req.token.clone(),
        heartbeat: keep_alive(conn.clone(), keys.clone(), req.slot, req, job),
    })
}

/// How many of the new name's leases an old name's claim of a slot lasts ([`step`]).
const OLD_NAME_LEASES: u32 = 3;

fn keep_alive(
    mut conn: Connection,
    keys: LeaseKeys,
    slot: i64,
    req: &ClaimRequest,
    job: &RunSettings,
) -> JoinHandle<()> {
    let (token, lease) = (req.token.clone(), req.lease);
    let every = job
        .runner
        .heartbeat
        .min(lease / 3)
        .max(Duration::from_millis(100));
    tokio::task::spawn_local(async move {
        loop {
            tokio::time::sleep(every).await;
            match lease::heartbeat(&mut conn, &keys, slot, &token, lease).await {
                Ok(reply) if reply.outcome != lease::TokenOutcome::Ok => return,
                Ok(_) => {}
                // Connection trouble: a fresh connection, and the next beat tries again while
                // the lease lives (a broken one would fail every beat after).
                Err(_) => {
                    let _ = tokio::time::timeout(lease / 3, conn.reconnect()).await;
                }
            }
        }
    })
}

/// After `job`'s slot was taken: the old names' held claims end. Finished, handed to `job`, when
/// its run of the slot is decided (ran and ended, held by another replica of it, done, skipped);
/// handed over (the lease ends now) when it may still need a run (handed over at a shutdown, its
/// lease lost, an error), so that the next claim of the old name's slot decides again.
pub(super) async fn after_slot(
    conn: &mut Connection,
    job: &RunSettings,
    held: Vec<Held>,
    taken: &Result<Outcome>,
) {
    if held.is_empty() {
        return;
    }
    let decided = match taken {
        Ok(outcome) => match outcome.report.outcome {
            SlotOutcome::Ran => !matches!(
                outcome.report.status.as_str(),
                "interrupted" | "unknown" | "running" | ""
            ),
            // Decided under the new name, with its record there (ran, or a skip it wrote), or
            // held by another of its replicas, which decides it.
            SlotOutcome::Done | SlotOutcome::Running | SlotOutcome::Overlap => true,
            // Not run, and no record under the new name: the old name's claim must not say
            // `finished` over a slot nobody ran. Handed over, the old name decides it again.
            SlotOutcome::Paused | SlotOutcome::TooLate | SlotOutcome::Unreplicated => false,
        },
        Err(_) => false,
    };
    finish_held(conn, job, held, decided).await;
}

async fn finish_held(conn: &mut Connection, job: &RunSettings, held: Vec<Held>, decided: bool) {
    let result = serde_json::json!({ "handed_to": job.job }).to_string();
    for h in held {
        h.heartbeat.abort();
        let done = crate::runner::retrying(conn, async |c| {
            if decided {
                lease::finish(
                    c,
                    &h.keys,
                    h.slot,
                    &h.token,
                    lease::FinishStatus::Finished,
                    &result,
                    true,
                )
                .await
            } else {
                lease::hand_over(c, &h.keys, h.slot, &h.token).await
            }
        })
        .await;
        if let Err(e) = done {
            crate::errln!(
                "anarchon: {} @ {}: the claim under {}, its old name, was not ended ({e}); its lease ends by itself",
                job.job,
                rfc3339(h.slot),
                h.old
            );
        }
    }
}

/// A job the daemon ran before a reload, as [`carry_over`] compares it.
pub(super) struct Previous<'a> {
    pub line: usize,
    pub job: &'a RunSettings,
}

/// On a reload: a new job that renames one this daemon ran (the same command under another
/// `--job`, or a derived name whose line was edited in place) gets its old name, and that job's
/// own old names, as its lineage; a job changed in place keeps its old names. A removed job gives
/// its name to one new job at most. At the
/// start (no `previous`): the jobs with old names (`--was`) are said.
pub(super) fn carry_over(previous: &[Previous<'_>], tab: &mut Crontab) {
    if previous.is_empty() {
        // The daemon's start: say which jobs have old names (`--was`).
        for job in tab.jobs.iter().filter(|j| !j.run.lineage.is_empty()) {
            crate::errln!(
                "anarchon: job {} (line {}) was {}: each of its runs is claimed under that name first (--was), so that replicas still running it and this one never run a scheduled time twice",
                job.name,
                job.line,
                job.run.lineage.join(", ")
            );
        }
        return;
    }
    let names: HashSet<String> = tab.jobs.iter().map(|j| j.name.clone()).collect();
    let mut given: HashSet<&str> = HashSet::new();
    let removed: Vec<&Previous<'_>> = previous
        .iter()
        .filter(|p| !names.contains(&p.job.job))
        .collect();
    for new in tab.jobs.iter_mut() {
        if let Some(same) = previous.iter().find(|p| p.job.job == new.name) {
            // A job changed in place keeps the old names it had (a reload's are in no line):
            // replicas may still run them. For the life of the daemon, as a reload's are.
            for name in &same.job.lineage {
                if !new.run.lineage.contains(name) {
                    new.run.lineage.push(name.clone());
                }
            }
            continue;
        }
        let derived = |run: &RunSettings| {
            let (Some(schedule), Some(command)) =
                (run.schedule.as_ref(), run.runner.command.argv.last())
            else {
                return false;
            };
            derived_name(schedule.source(), command) == run.job
        };
        let Some(old) = removed.iter().find(|p| {
            !given.contains(p.job.job.as_str())
                && (p.job.runner.command.argv == new.run.runner.command.argv
                    || (p.line == new.line && derived(p.job) && derived(&new.run)))
        }) else {
            continue;
        };
        given.insert(&old.job.job);
        let mut lineage = new.run.lineage.clone();
        for name in std::iter::once(&old.job.job).chain(&old.job.lineage) {
            if *name != new.name && !lineage.contains(name) {
                lineage.push(name.clone());
            }
        }
        crate::errln!(
            "anarchon: job {} (line {}) was {}: each of its runs is claimed under {} first, so that no scheduled time runs twice and none starts beside a run of the old name in progress (under --overlap forbid)",
            new.name,
            new.line,
            old.job.job,
            lineage.join(", ")
        );
        new.run.lineage = lineage;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn tab(text: &str) -> Crontab {
        let global = crate::cli::Cli::try_parse_from(["anarchon", "list"])
            .unwrap()
            .global;
        crate::settings::crontab::read(text, &global).unwrap()
    }

    /// The jobs of `tab` as a reload compares them.
    fn previous_of(tab: &Crontab) -> Vec<Previous<'_>> {
        tab.jobs
            .iter()
            .map(|j| Previous {
                line: j.line,
                job: &j.run,
            })
            .collect()
    }

    /// The lineage each job of `after` gets on a reload from `before`.
    fn reloaded(before: &str, after: &str) -> Vec<(String, Vec<String>)> {
        let before = tab(before);
        let previous = previous_of(&before);
        let mut after = tab(after);
        carry_over(&previous, &mut after);
        after
            .jobs
            .into_iter()
            .map(|j| (j.name, j.run.lineage))
            .collect()
    }

    #[test]
    fn a_reload_gives_a_renamed_or_re_derived_job_its_old_name() {
        // A renamed --job with the same command.
        let got = reloaded(
            "# anarchon: --job a\n* * * * * /bin/x\n",
            "# anarchon: --job b\n* * * * * /bin/x\n",
        );
        assert_eq!(got, [("b".to_string(), vec!["a".to_string()])]);
        // A derived name's line edited in place.
        let before = "* * * * * /bin/x --old\n";
        let got = reloaded(before, "* * * * * /bin/x --new\n");
        let old = derived_name("* * * * *", "/bin/x --old");
        assert_eq!(got[0].1, std::slice::from_ref(&old));
        // ... and --was on the new line comes first, then the reload's.
        let got = reloaded(
            "# anarchon: --lease 1m\n* * * * * /bin/x --old\n",
            "# anarchon: --was y\n* * * * * /bin/x --new\n",
        );
        assert_eq!(got[0].1, ["y".to_string(), old]);
        // Another job on the same line (named, another command) is no rename.
        let got = reloaded(
            "# anarchon: --job a\n* * * * * /bin/x\n",
            "# anarchon: --job b\n* * * * * /bin/y\n",
        );
        assert!(got[0].1.is_empty(), "{got:?}");
        // A job that stays (a line inserted above a derived one) keeps its name: no lineage.
        let got = reloaded(before, "* * * * * /bin/z\n* * * * * /bin/x --old\n");
        assert!(got.iter().all(|(_, l)| l.is_empty()), "{got:?}");
        // A renamed job changed again (its flags) keeps the old name the reload gave it.
        let renamed = "# anarchon: --job b\n* * * * * /bin/x\n";
        let first = tab("# anarchon: --job a\n* * * * * /bin/x\n");
        let first = previous_of(&first);
        let mut second = tab(renamed);
        carry_over(&first, &mut second);
        let previous = previous_of(&second);
        let mut third = tab("# anarchon: --job b --lease 1m\n* * * * * /bin/x\n");
        carry_over(&previous, &mut third);
        assert_eq!(third.jobs[0].run.lineage, ["a".to_string()]);
        // One old name goes to one new job only.
        let got = reloaded(
            "# anarchon: --job a\n* * * * * /bin/x\n",
            "# anarchon: --job b\n* * * * * /bin/x\n# anarchon: --job c\n* * * * * /bin/x\n",
        );
        assert_eq!(got[0].1, ["a".to_string()]);
        assert!(got[1].1.is_empty(), "{got:?}");
    }
}
