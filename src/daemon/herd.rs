//! A herd shared among the replicas, without a coordinator: when many slots come due at one
//! instant (a thousand `* * * * *` lines), every replica used to claim them all at once, and the
//! one whose claims reached the store first won nearly all (985 / 15 / 0 of 1,000 on three
//! replicas), then started a thousand commands alone, seconds late.
//!
//! Each job has a first choice among the live replicas that run it: the one with the highest
//! `hash(job, replica)` (rendezvous hashing), which every replica computes alike from the same
//! presences (`{<prefix>}:replicas`, written by each daemon every 2 s: [`super::requests`]). The
//! first choice claims at once; the others [`STEP_BACK`] for a moment first, then claim as ever.
//! So each replica starts about its share of a herd (1/N each; the hash spreads jobs evenly), and
//! no run waits on a replica that is gone or busy for more than the step back: a first choice
//! that is slow, stopped or killed (its presence lives 10 s) is beaten by the next claim, and a
//! job whose replicas all step back (presences read at different moments) is claimed after one
//! step back by all of them. Who runs the slot is still the claim's to decide: the step back only
//! changes when a claim is made, never whether.
//!
//! Jobs of the claim-only strategies are not in the presences (a request names lease jobs only):
//! they are claimed at once, as before, and so is every job of a replica whose own presence is
//! not read yet (it has just started).

use std::sync::Mutex;
use std::time::Duration;

use crate::settings::run::RunSettings;
use crate::store::requests::{PRESENCE_EVERY, Replica};

/// How long a replica that is not a job's first choice waits before it claims a slot of it: long
/// enough for the first choice's claim to reach the store first when it is busy starting its own
/// share of a herd, short against a run's `--max-late` (and capped at a tenth of it).
pub(super) const STEP_BACK: Duration = Duration::from_millis(250);

/// How often the presences are read (`supervisor::watch_fleet`): as often as they are written.
pub(super) const READ_EVERY: Duration = PRESENCE_EVERY;

/// The live replicas as last read, and who this one is.
pub(super) struct Fleet {
    /// This replica's name in the presences (`host:pid`).
    me: String,
    replicas: Mutex<Vec<Replica>>,
}

impl Fleet {
    pub(super) fn new(me: String) -> Fleet {
        Fleet {
            me,
            replicas: Mutex::new(Vec::new()),
        }
    }

    /// How long this replica waits before it claims a slot of `job` (`now`: the server's time):
    /// nothing when it is the job's first choice, or when it cannot tell.
    pub(super) fn step_back(&self, job: &RunSettings, now: i64) -> Duration {
        if job.strategy.has_leases() && self.first_choice_elsewhere(&job.job, now) {
            STEP_BACK.min(job.max_late / 10)
        } else {
            Duration::ZERO
        }
    }

    /// Whether another live replica that runs `job` is its first choice, this one running it too
    /// (by the presences: a replica not read yet, this one included, is not counted).
    fn first_choice_elsewhere(&self, job: &str, now: i64) -> bool {
        let replicas = self.replicas.lock().unwrap_or_else(|e| e.into_inner());
        let runs = |r: &Replica| {
            r.is_live(now)
                && r.presence
                    .jobs
                    .binary_search_by(|j| j.as_str().cmp(job))
                    .is_ok()
        };
        if !replicas.iter().any(|r| r.runner == self.me && runs(r)) {
            return false;
        }
        let mine = score(job, &self.me);
        replicas
            .iter()
            .any(|r| r.runner != self.me && runs(r) && score(job, &r.runner) > mine)
    }

    /// The presences as read now (their job lists sorted, for the look-ups above).
    pub(super) fn note(&self, mut replicas: Vec<Replica>) {
        for r in &mut replicas {
            r.presence.jobs.sort_unstable();
        }
        *self.replicas.lock().unwrap_or_else(|e| e.into_inner()) = replicas;
    }
}

/// The rendezvous weight of `runner` for `job`: FNV-1a of both, through splitmix64's finalizer
/// (FNV alone spreads names that differ in their last characters, `host:pid`, poorly).
fn score(job: &str, runner: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in job.bytes().chain([0xff]).chain(runner.bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash ^= hash >> 30;
    hash = hash.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    hash ^= hash >> 27;
    hash = hash.wrapping_mul(0x94d0_49bb_1331_11eb);
    hash ^ (hash >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_job_has_one_first_choice_and_the_replicas_share_them_evenly() {
        let replicas = ["web-1:17", "web-2:17", "web-3:17"];
        let mut firsts = [0usize; 3];
        for i in 0..3000 {
            let job = format!("h{i}");
            let best = (0..3).max_by_key(|r| score(&job, replicas[*r])).unwrap();
            firsts[best] += 1;
        }
        // 1,000 each expected; a binomial's spread is about 26.
        assert!(firsts.iter().all(|n| (850..1150).contains(n)), "{firsts:?}");
    }

    fn replica(runner: &str, seen: i64, jobs: &[&str]) -> Replica {
        Replica {
            runner: runner.to_string(),
            presence: crate::store::requests::Presence {
                seen,
                jobs: jobs.iter().map(|j| j.to_string()).collect(),
                service: None,
                crontab: Vec::new(),
            },
        }
    }

    #[test]
    fn one_replica_goes_first_and_the_others_only_while_they_are_known_and_live() {
        let now = 1_796_220_300_000;
        let names = ["a:1", "b:2", "c:3"];
        let fleets: Vec<Fleet> = names.iter().map(|n| Fleet::new(n.to_string())).collect();
        for f in &fleets {
            f.note(
                names
                    .iter()
                    .map(|n| replica(n, now, &["z", "job", "x"]))
                    .collect(),
            );
        }
        let behind = |job: &str| -> Vec<bool> {
            fleets
                .iter()
                .map(|f| f.first_choice_elsewhere(job, now))
                .collect()
        };
        // Exactly one first choice (its presence's jobs were sorted on reading).
        assert_eq!(behind("job").iter().filter(|b| !**b).count(), 1);
        // A job that only one replica runs, and one nobody lists: nobody steps back.
        let first = behind("job").iter().position(|b| !*b).unwrap();
        for f in &fleets {
            let mut rs: Vec<Replica> = names.iter().map(|n| replica(n, now, &[])).collect();
            rs[(first + 1) % 3] = replica(names[(first + 1) % 3], now, &["job"]);
            f.note(rs);
        }
        assert_eq!(behind("job"), [false; 3]);
        assert_eq!(behind("other"), [false; 3]);
        // The first choice's presence gone stale (killed): the others go at once.
        for f in &fleets {
            let mut rs: Vec<Replica> = names.iter().map(|n| replica(n, now, &["job"])).collect();
            rs[first] = replica(names[first], now - 11_000, &["job"]);
            f.note(rs);
        }
        let now_behind = behind("job");
        assert!(
            !now_behind[first],
            "a stale replica steps back only for itself"
        );
        assert_eq!(
            now_behind.iter().filter(|b| !**b).count(),
            2,
            "{now_behind:?}"
        );
    }
}
