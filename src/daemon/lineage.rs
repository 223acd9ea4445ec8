//! How `anarchon cron` gives a job its earlier names (issue 46, item 5): `--was OLD` in its
//! `# anarchon:` line (several allowed), and, on a reload, the name this daemon ran the same line
//! under (the same command renamed, or a derived name's line edited in place: [`carry_over`]).
//! What a slot does with them (claimed under each old name first, so that a rename never runs one
//! scheduled time twice, nor beside the old name's run in progress under `--overlap forbid`) is
//! `scheduler::lineage`, on the one path every slot takes (`scheduler::take_slot`).

use std::collections::HashSet;

use crate::settings::crontab::{Crontab, derived_name};
use crate::settings::run::RunSettings;

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
