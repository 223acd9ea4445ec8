//! The wrapped command's own log, the ground truth of "never two copies at once": a shell command
//! line that appends `<label> <copy> <epoch-ms>` every 50 ms while it runs and `... end` when it
//! completes, and the checks on that log.
//!
//! Each copy names itself: `<copy>` is `<pid>.<start-ms>`, the shell's own pid (`$$`) and the
//! time it started, which the command computes for itself. anarchon cannot give two copies the
//! same one, whatever it sets in the environment. The `<label>` is what anarchon told the command
//! (`$ANARCHON_SLOT/$ANARCHON_ATTEMPT`, `$ANARCHON_SLOT`, ...): the checks use it only to say which
//! slot a copy was run for, never to tell two copies apart. Two copies whose time spans intersect
//! ran at the same instant, whatever their labels, the exit codes and the store say.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::path::Path;
use std::str::FromStr;

/// A shell command line that logs `<label> <copy> <ms>` every 50 ms for `ms` milliseconds, then
/// `<label> <copy> <ms> end` and exits 0. `label` is a shell word (`$ANARCHON_ATTEMPT`,
/// `$ANARCHON_SLOT/$ANARCHON_ATTEMPT`). With `ignore_term` it survives SIGTERM, so only a SIGKILL
/// stops it.
pub fn ticker_as(log: &Path, label: &str, ms: u64, ignore_term: bool) -> String {
    format!(
        "{}copy=$$.$(date +%s%3N); end=$(( $(date +%s%3N) + {ms} )); while [ $(date +%s%3N) -lt $end ]; do echo \"{label} $copy $(date +%s%3N)\" >> {log}; sleep 0.05; done; echo \"{label} $copy $(date +%s%3N) end\" >> {log}",
        if ignore_term { "trap '' TERM; " } else { "" },
        log = log.display()
    )
}

/// One copy of the command, as it logged itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Copy {
    /// What anarchon told it (the ticker's label): which slot and attempt it was run for.
    pub label: String,
    /// Its own identity: its shell's pid and the ms it started at.
    pub id: String,
    pub first: i64,
    pub last: i64,
    /// It logged its end: it ran to completion (not killed).
    pub completed: bool,
}

impl Copy {
    /// Whether this copy and `other` ran at one instant (their spans intersect).
    pub fn overlaps(&self, other: &Copy) -> bool {
        self.first <= other.last && other.first <= self.last
    }

    /// For how long they ran together, ms.
    pub fn together(&self, other: &Copy) -> i64 {
        self.last.min(other.last) - self.first.max(other.first)
    }

    /// The slot of a `[<job>@]<slot>/<attempt>` or `[<job>@]<slot>` label.
    pub fn slot(&self) -> Option<i64> {
        let slot = self.label.split('/').next()?;
        slot.rsplit('@').next()?.parse().ok()
    }

    /// The job of a `<job>@<slot>/<attempt>` label: the name anarchon ran it under.
    pub fn job(&self) -> Option<&str> {
        Some(self.label.split_once('@')?.0)
    }

    /// The attempt of a `<slot>/<attempt>` label.
    pub fn attempt(&self) -> Option<u32> {
        self.label.split_once('/')?.1.parse().ok()
    }
}

/// Every copy of the command that logged a line, in the order they started.
pub fn copies(log: &Path) -> Vec<Copy> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let mut by_id: BTreeMap<String, Copy> = BTreeMap::new();
    for line in text.lines() {
        let mut parts = line.split_whitespace();
        let (Some(label), Some(id), Some(t)) = (parts.next(), parts.next(), parts.next()) else {
            continue; // a line cut short by a SIGKILL
        };
        let Ok(t) = t.parse::<i64>() else {
            continue;
        };
        let completed = parts.next() == Some("end");
        let copy = by_id.entry(id.to_string()).or_insert_with(|| Copy {
            label: label.to_string(),
            id: id.to_string(),
            first: t,
            last: t,
            completed: false,
        });
        assert_eq!(
            copy.label, label,
            "copy {id} logged under two labels: the log is not one ticker's"
        );
        copy.first = copy.first.min(t);
        copy.last = copy.last.max(t);
        copy.completed |= completed;
    }
    let mut list: Vec<Copy> = by_id.into_values().collect();
    list.sort_by_key(|c| (c.first, c.id.clone()));
    list
}

/// Each pair of copies that ran at one instant, with how long, ms.
pub fn overlapping(copies: &[Copy]) -> Vec<(Copy, Copy, i64)> {
    let mut found = Vec::new();
    for (i, a) in copies.iter().enumerate() {
        for b in &copies[i + 1..] {
            if a.overlaps(b) {
                found.push((a.clone(), b.clone(), a.together(b)));
            }
        }
    }
    found
}

/// Each label's first and last logged time, over all its copies: for waiting on a run (whether a
/// label has appeared), never for judging one. [`assert_no_two_spans_overlap`] judges.
pub fn spans_of<K: FromStr + Ord>(log: &Path) -> BTreeMap<K, (i64, i64)>
where
    K::Err: Debug,
{
    let mut spans: BTreeMap<K, (i64, i64)> = BTreeMap::new();
    for c in copies(log) {
        let span = spans
            .entry(c.label.parse().unwrap())
            .or_insert((c.first, c.last));
        span.0 = span.0.min(c.first);
        span.1 = span.1.max(c.last);
    }
    spans
}

/// Fails when two copies of the command ran at one instant (by their own identities, whatever
/// their labels), and when one label was run by two copies (one after the other): anarchon gave
/// one slot's attempt (or, for a slot label, one slot) to two commands. Returns each label's span.
pub fn assert_no_two_spans_overlap<K: FromStr + Ord + Clone + Debug>(
    log: &Path,
) -> BTreeMap<K, (i64, i64)>
where
    K::Err: Debug,
{
    let all = copies(log);
    assert_no_two_copies_at_once(&all);
    let mut spans: BTreeMap<K, (i64, i64)> = BTreeMap::new();
    for c in &all {
        let earlier = spans.insert(c.label.parse().unwrap(), (c.first, c.last));
        assert!(
            earlier.is_none(),
            "{:?} was run by two copies, one after the other: {:?}",
            c.label,
            all.iter()
                .filter(|o| o.label == c.label)
                .collect::<Vec<_>>()
        );
    }
    spans
}

/// Fails when two copies ran at one instant, whatever their labels.
pub fn assert_no_two_copies_at_once(all: &[Copy]) {
    if let Some((a, b, ms)) = overlapping(all).into_iter().next() {
        panic!("two copies ran at the same time, for {ms} ms: {a:?} and {b:?}");
    }
}
