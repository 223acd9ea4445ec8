//! The overlap policy: what a run of a job does when an older run of the same job still holds a
//! live lease. The one type for it, from the command line (`run --overlap`, `claim --overlap`,
//! resolved in `settings.rs`), a crontab line, the job registry or a ping's report, to the claim
//! script's argument and the runner's behaviour; every use matches it exhaustively, so a new policy
//! is a compile error wherever it must be handled.

/// `--overlap`: Kubernetes' `concurrencyPolicy` and Temporal's overlap policies, by their names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OverlapPolicy {
    /// Skip the new slot while an older run holds the job (recorded skipped).
    #[default]
    Forbid,
    /// Run the new slot beside the older run.
    Allow,
    /// Stop the older run (as `anarchon release` does), then run the new slot (`run` only).
    Replace,
    /// Run the new slot as soon as the older run ends, within `--max-late`; one slot waits at
    /// most, a further one is recorded skipped (`run` only).
    Buffer,
}

impl OverlapPolicy {
    /// Every policy, in the order `--help` lists them.
    pub const ALL: [OverlapPolicy; 4] = [
        OverlapPolicy::Forbid,
        OverlapPolicy::Allow,
        OverlapPolicy::Replace,
        OverlapPolicy::Buffer,
    ];

    /// Its name on the command line, in the registry and in reports.
    pub const fn name(self) -> &'static str {
        match self {
            OverlapPolicy::Forbid => "forbid",
            OverlapPolicy::Allow => "allow",
            OverlapPolicy::Replace => "replace",
            OverlapPolicy::Buffer => "buffer",
        }
    }

    /// What `--help` says of it.
    pub const fn help(self) -> &'static str {
        match self {
            OverlapPolicy::Forbid => {
                "Skip the new slot while an older run holds the job (recorded skipped)"
            }
            OverlapPolicy::Allow => "Run the new slot beside the older run",
            OverlapPolicy::Replace => {
                "Stop the older run (as `anarchon release` does), then run the new slot (`run` only)"
            }
            OverlapPolicy::Buffer => {
                "Run the new slot as soon as the older run ends, within --max-late; one slot waits at most, a further one is recorded skipped (`run` only)"
            }
        }
    }

    /// Whether the claim script may start a run beside a live older one (its `allow overlap`
    /// argument). Only `allow`: `replace` and `buffer` are the runner's work after an `overlap`
    /// answer, which the script gives them as it gives `forbid`.
    pub const fn claims_beside_a_live_run(self) -> bool {
        match self {
            OverlapPolicy::Allow => true,
            OverlapPolicy::Forbid | OverlapPolicy::Replace | OverlapPolicy::Buffer => false,
        }
    }

    /// Whether an older run whose holder is gone, with attempts left, is owed its takeover before
    /// a newer slot's run may start (the claim script's `owed` argument): under `forbid` and
    /// `buffer` the newer slot's claim answers overlap and the runner takes the older run over
    /// first (`runner::owed_takeover`), so that a run a fault cut short is never lost to the next
    /// fire time while its attempts and `--max-late` allow it. `replace` supersedes it, as it
    /// would stop it; `allow` starts beside it, and the older run's backups take it over.
    pub const fn owes_lapsed_runs_their_takeover(self) -> bool {
        match self {
            OverlapPolicy::Forbid | OverlapPolicy::Buffer => true,
            OverlapPolicy::Allow | OverlapPolicy::Replace => false,
        }
    }

    /// Whether only `run` can carry it out (a claim by hand cannot stop or wait for a run).
    pub const fn needs_a_runner(self) -> bool {
        match self {
            OverlapPolicy::Replace | OverlapPolicy::Buffer => true,
            OverlapPolicy::Forbid | OverlapPolicy::Allow => false,
        }
    }
}

impl std::fmt::Display for OverlapPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The command line parses a name back into its policy (cli.rs `domain_values`): each name
    /// names one policy.
    #[test]
    fn every_policy_has_a_name_of_its_own() {
        let mut names: Vec<&str> = OverlapPolicy::ALL.iter().map(|p| p.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names, ["allow", "buffer", "forbid", "replace"]);
        assert_eq!(OverlapPolicy::default(), OverlapPolicy::Forbid);
    }
}
