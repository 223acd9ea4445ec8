//! A table fitted to a terminal's width: what gives way first (free text cut, gaps narrowed, a
//! relative time dropped, the least needed columns left out) and what last (the row's name).

/// The columns of a table that may be cut to fit a terminal (with `…`): names and free text.
/// Every other column (times, pids, attempts, tokens, counts, kinds) is shown whole, but for
/// RUNNER (`host:pid`), whose host is cut in its middle, keeping the pid.
const CUTTABLE: [&str; 8] = [
    "JOB", "SCHEDULE", "RESULT", "KEY", "REASON", "RUNNER", "BY", "DETAIL",
];

/// The column that names each row: what a person scans a table for, so it is cut only when the
/// row cannot fit with everything else given way (#48, item 5).
const NAME: &str = "JOB";

/// Columns left out, in this order, when a table does not fit with its free text cut to 16:
/// counts and identifiers that `inspect`, `-o wide` and `--json` still show, and which a person
/// reads a narrow table without.
const DROPPABLE: [&str; 5] = ["HISTORY", "ACTIVE", "TOKEN", "KIND", "ATTEMPT"];

/// Time columns shown as `<time> (<relative>)` that keep their time alone when a table still does
/// not fit a terminal.
const SHORTENED_TIMES: [&str; 3] = ["ENDED", "CLAIMED", "STARTED"];

/// `cell` cut to `to` characters: its end replaced by `…`, or for a runner (`host:pid`) the end of
/// its host, so the pid stays whole (`ip-10-0-12-34.eu-w…:4311`).
pub(crate) fn cut(column: &str, cell: &str, to: usize) -> String {
    if column == "RUNNER"
        && let Some((host, pid)) = cell.rsplit_once(':')
        && to > pid.chars().count() + 2
    {
        let keep = to - pid.chars().count() - 2;
        return format!("{}…:{pid}", host.chars().take(keep).collect::<String>());
    }
    format!("{}…", cell.chars().take(to - 1).collect::<String>())
}

/// A table as fitted: the columns kept, their rows, and the gap between columns.
pub(crate) struct Fitted<'h> {
    pub header: Vec<&'h str>,
    pub rows: Vec<Vec<String>>,
    pub gap: usize,
}

/// One way of fitting, from the one that keeps the most to the one that keeps the least.
#[derive(Debug, Clone, Copy)]
struct Plan {
    /// Free text (but the name) is cut to no less than this.
    floor: usize,
    gap: usize,
    /// Whether a time keeps its time alone, without its relative part.
    short_times: bool,
    /// How many of the table's droppable columns are left out, in [`DROPPABLE`]'s order.
    dropped: usize,
    /// Whether the name column may be cut too (last, and only as far as the row needs).
    cut_name: bool,
}

/// The plans in the order they are tried: free text cut to 16, then one-space gaps, then times
/// without their relative part, then the least needed columns left out one by one, then free
/// text cut to 8, and only then the name.
fn plans(droppable: usize) -> Vec<Plan> {
    let plan = |floor, gap, short_times, dropped, cut_name| Plan {
        floor,
        gap,
        short_times,
        dropped,
        cut_name,
    };
    let mut plans = vec![plan(16, 2, false, 0, false), plan(16, 1, false, 0, false)];
    plans.extend((0..=droppable).map(|d| plan(16, 1, true, d, false)));
    plans.push(plan(8, 1, true, droppable, false));
    plans.push(plan(8, 1, true, droppable, true));
    plans
}

/// `rows` fitted to `width` terminal columns by the first plan that fits ([`plans`]). A table that
/// fits no plan is left as the last one makes it: its lines run past the edge rather than wrap a
/// cell over several lines.
pub(crate) fn fit_to_width<'h>(
    header: &[&'h str],
    rows: Vec<Vec<String>>,
    width: usize,
) -> Fitted<'h> {
    let droppable = header.iter().filter(|h| DROPPABLE.contains(h)).count();
    let mut fitted = None;
    for plan in plans(droppable) {
        let tried = apply(plan, header, rows.clone(), width);
        if total(&widths(&tried.header, &tried.rows), tried.gap) <= width {
            return tried;
        }
        fitted = Some(tried);
    }
    fitted.expect("there is always a plan")
}

/// One plan applied: columns left out, times shortened, then free text cut, widest first.
fn apply<'h>(plan: Plan, header: &[&'h str], rows: Vec<Vec<String>>, width: usize) -> Fitted<'h> {
    let mut fitted = leave_out(header, rows, plan.dropped);
    if plan.short_times {
        shorten_times(&fitted.header, &mut fitted.rows);
    }
    fitted.gap = plan.gap;
    let header = fitted.header.clone();
    let mut w = widths(&header, &fitted.rows);
    while total(&w, plan.gap) > width {
        let floor_of = |i: usize| plan.floor.max(len(header[i]));
        let widest = |name: bool| {
            (0..header.len())
                .filter(|&i| CUTTABLE.contains(&header[i]) && (header[i] == NAME) == name)
                .filter(|&i| w[i] > floor_of(i))
                .max_by_key(|&i| w[i])
        };
        // The name only when nothing else can give way.
        let Some(i) = widest(false).or_else(|| widest(true).filter(|_| plan.cut_name)) else {
            break;
        };
        let to = w[i]
            .saturating_sub(total(&w, plan.gap) - width)
            .max(floor_of(i));
        for row in &mut fitted.rows {
            if let Some(cell) = row.get_mut(i).filter(|c| len(c) > to) {
                *cell = cut(header[i], cell, to);
            }
        }
        w = widths(&header, &fitted.rows);
    }
    fitted
}

/// The table without the first `dropped` of its droppable columns.
fn leave_out<'h>(header: &[&'h str], rows: Vec<Vec<String>>, dropped: usize) -> Fitted<'h> {
    let gone: Vec<&str> = DROPPABLE
        .iter()
        .copied()
        .filter(|d| header.contains(d))
        .take(dropped)
        .collect();
    let kept: Vec<usize> = (0..header.len())
        .filter(|&i| !gone.contains(&header[i]))
        .collect();
    Fitted {
        header: kept.iter().map(|&i| header[i]).collect(),
        rows: rows
            .into_iter()
            .map(|row| {
                row.into_iter()
                    .enumerate()
                    .filter(|(i, _)| kept.contains(i))
                    .map(|(_, cell)| cell)
                    .collect()
            })
            .collect(),
        gap: 2,
    }
}

/// A time shown as `<time> (<relative>)` keeps its time alone.
fn shorten_times(header: &[&str], rows: &mut [Vec<String>]) {
    for (i, column) in header.iter().enumerate() {
        if !SHORTENED_TIMES.contains(column) {
            continue;
        }
        for row in rows.iter_mut() {
            if let Some(cell) = row.get_mut(i)
                && let Some(at) = cell.rfind(" (").filter(|_| cell.ends_with(')'))
            {
                cell.truncate(at);
            }
        }
    }
}

fn len(s: &str) -> usize {
    s.chars().count()
}

/// Each column's width: its widest cell or its header.
fn widths(header: &[&str], rows: &[Vec<String>]) -> Vec<usize> {
    header
        .iter()
        .enumerate()
        .map(|(i, h)| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| len(c))
                .chain([len(h)])
                .max()
                .unwrap_or(0)
        })
        .collect()
}

/// A row's width: its columns and the gaps between them.
fn total(widths: &[usize], gap: usize) -> usize {
    widths.iter().sum::<usize>() + gap * widths.len().saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(cells: &[&str]) -> Vec<String> {
        cells.iter().map(|c| c.to_string()).collect()
    }

    #[test]
    fn a_name_that_fits_stays_whole_and_counts_give_way_first() {
        let header = ["JOB", "SCHEDULE", "STATUS", "ACTIVE", "HISTORY"];
        let rows = vec![row(&[
            "billing-reconcile-eu-west",
            "30 2 * * 1-5 (Europe/Amsterdam)",
            "finished",
            "0",
            "12",
        ])];
        let fitted = fit_to_width(&header, rows, 60);
        assert_eq!(fitted.rows[0][0], "billing-reconcile-eu-west");
        let fitted = fit_to_width(&header, fitted.rows, 45);
        assert_eq!(fitted.header, ["JOB", "SCHEDULE", "STATUS"]);
        assert_eq!(fitted.rows[0][0], "billing-reconcile-eu-west");
        assert!(fitted.rows[0][1].ends_with('…'));
        let fitted = fit_to_width(&header, fitted.rows, 30);
        assert!(fitted.rows[0][0].ends_with('…'), "{:?}", fitted.rows);
    }
}
