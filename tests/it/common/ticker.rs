//! The wrapped command's own log, the ground truth of "never two copies at once": a shell command
//! line that appends `<id> <epoch-ms>` every 50 ms while it runs, and the checks on that log. Two
//! ids whose time spans intersect are two copies of the command running at the same instant,
//! whatever the exit codes say.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::path::Path;
use std::str::FromStr;

/// A shell command line that logs `<id> <ms>` every 50 ms for `ms` milliseconds, then exits 0. `id`
/// is a shell word (`$ANARCHON_ATTEMPT`, `$ANARCHON_SLOT/$ANARCHON_ATTEMPT`). With `ignore_term`
/// it survives SIGTERM, so only a SIGKILL stops it.
pub fn ticker_as(log: &Path, id: &str, ms: u64, ignore_term: bool) -> String {
    format!(
        "{}end=$(( $(date +%s%3N) + {ms} )); while [ $(date +%s%3N) -lt $end ]; do echo \"{id} $(date +%s%3N)\" >> {log}; sleep 0.05; done",
        if ignore_term { "trap '' TERM; " } else { "" },
        log = log.display()
    )
}

/// Each id's first and last logged time.
pub fn spans_of<K: FromStr + Ord>(log: &Path) -> BTreeMap<K, (i64, i64)>
where
    K::Err: Debug,
{
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let mut spans: BTreeMap<K, (i64, i64)> = BTreeMap::new();
    for line in text.lines() {
        let mut parts = line.split_whitespace();
        let (Some(id), Some(t)) = (parts.next(), parts.next()) else {
            continue;
        };
        let Ok(t) = t.parse::<i64>() else {
            continue; // a line cut short by a SIGKILL
        };
        let span = spans.entry(id.parse().unwrap()).or_insert((t, t));
        span.0 = span.0.min(t);
        span.1 = span.1.max(t);
    }
    spans
}

/// Fails when two ids' spans overlap: two copies of the command ran at once.
pub fn assert_no_two_spans_overlap<K: FromStr + Ord + Clone + Debug>(
    log: &Path,
) -> BTreeMap<K, (i64, i64)>
where
    K::Err: Debug,
{
    let spans = spans_of::<K>(log);
    let list: Vec<(K, (i64, i64))> = spans.iter().map(|(a, s)| (a.clone(), *s)).collect();
    for (i, (a, (a0, a1))) in list.iter().enumerate() {
        for (b, (b0, b1)) in &list[i + 1..] {
            assert!(
                a1 < b0 || b1 < a0,
                "{a:?} ({a0}..{a1}) and {b:?} ({b0}..{b1}) ran at the same time, for {} ms",
                a1.min(b1) - a0.max(b0)
            );
        }
    }
    spans
}
