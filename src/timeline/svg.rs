//! The timeline as an SVG document, for a postmortem: the picture the text draws, with each
//! attempt a bar (`<rect class="attempt <outcome>">`) whose `<title>` says all about it (shown on
//! hover), every overlap a red band over the job's rows, the notes, summaries and a legend. Built
//! with the `svg` crate, which writes the elements and escapes their text; names from the store
//! go only into text, never into attributes.

use svg::Document;
use svg::node::element::{Group, Line, Rectangle, Style, Text, Title};

use crate::output::Tone;
use crate::time::humanize;

use super::TimelineReport;
use super::axis::{Axis, TimeStyle};
use super::model::{Attempt, Drawn, JobTimeline, NoRun, Outcome, Overlap, SlotRow};
use super::text::{no_run_note, note, summary};

/// The width of a character of the monospace font, in px (12px text).
const CHAR: f64 = 7.2;
/// The same, generously, for the document's width: a viewer without the font uses a wider one.
const WIDE_CHAR: f64 = 8.0;
const ROW: f64 = 18.0;
const BAR_HEIGHT: f64 = 10.0;
const PAD: f64 = 12.0;
/// The width of the time axis, in px.
const AXIS: usize = 900;

const CSS: &str = "
text { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; fill: #222; }
.title { font-size: 14px; font-weight: bold; }
.job { font-weight: bold; }
.tick { stroke: #ddd; stroke-width: 1; }
.tick-label { fill: #666; }
.slot-to-claim { stroke: #999; stroke-width: 1; stroke-dasharray: 2 2; }
.slot-to-claim.late { stroke: #e0a000; stroke-width: 2; }
.attempt { stroke: none; }
.finished { fill: #2e7d32; }
.failed { fill: #c62828; }
.interrupted { fill: #ef6c00; }
.replaced { fill: #8e24aa; }
.superseded { fill: #8d6e63; }
.released { fill: #1565c0; }
.skipped { fill: #9e9e9e; }
.running { fill: #f9a825; }
.expired { fill: #ef9a9a; }
.claimed { fill: #b0bec5; }
.no-run.missed { fill: #c62828; }
.no-run.paused { fill: #9e9e9e; }
.no-run.pending { fill: #b0bec5; }
.at-once { fill: #d50000; }
.overlap { fill: #d50000; fill-opacity: 0.15; stroke: #d50000; stroke-width: 1; }
.possible-overlap { fill: #ff9800; fill-opacity: 0.12; stroke: #ff9800; stroke-dasharray: 3 2; }
.takeover { fill: #222; font-weight: bold; }
.bad { fill: #c62828; }
.warn { fill: #b26a00; }
.dim { fill: #777; }
.good { fill: #2e7d32; }
";

/// Every outcome, in the legend's order.
const OUTCOMES: [Outcome; 11] = [
    Outcome::Finished,
    Outcome::Failed,
    Outcome::Interrupted,
    Outcome::HandedOver,
    Outcome::Replaced,
    Outcome::Superseded,
    Outcome::Released,
    Outcome::Skipped,
    Outcome::Running,
    Outcome::Expired,
    Outcome::Claimed,
];

/// What an outcome is called in the legend.
fn meaning(outcome: Outcome) -> &'static str {
    match outcome {
        Outcome::Finished => "finished",
        Outcome::Failed => "failed",
        Outcome::Interrupted => "lease expired",
        Outcome::HandedOver => "handed over (its replica shut down)",
        Outcome::Replaced => "replaced (--overlap replace)",
        Outcome::Superseded => "superseded by a newer slot",
        Outcome::Released => "released by an operator",
        Outcome::Skipped => "skipped by a policy",
        Outcome::Running => "running",
        Outcome::Expired => "in progress, lease expired",
        Outcome::Claimed => "claimed, no result yet",
    }
}

fn class_of(tone: Option<Tone>) -> &'static str {
    match tone {
        Some(Tone::Bad) => "bad",
        Some(Tone::Warn) => "warn",
        Some(Tone::Dim) => "dim",
        Some(Tone::Good) => "good",
        None => "",
    }
}

/// `text` fit for XML: characters XML 1.0 cannot hold (control characters a store value may
/// have) become U+FFFD. The svg crate escapes `&`, `<` and `>`.
fn clean(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() && !matches!(c, '\t' | '\n') {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .collect()
}

fn px(v: f64) -> String {
    format!("{v:.1}")
}

/// A line of text at (x, y).
fn text(x: f64, y: f64, content: &str, class: &str) -> Text {
    let t = Text::new(clean(content))
        .set("x", px(x))
        .set("y", px(y))
        .set("xml:space", "preserve");
    if class.is_empty() {
        t
    } else {
        t.set("class", class)
    }
}

/// Where things go across the picture: the time style, the clock, the axis and the columns.
#[derive(Clone, Copy)]
struct Layout {
    style: TimeStyle,
    now: i64,
    axis: Axis,
    /// The x of the axis's start, of the notes, of the attempt numbers and of the hosts.
    x0: f64,
    x_note: f64,
    x_attempt: f64,
    x_host: f64,
}

impl Layout {
    /// The columns for a report: wide enough for its slots and hosts.
    fn of(report: &TimelineReport) -> Layout {
        let slots = report
            .jobs
            .iter()
            .flat_map(|j| j.slots.iter().map(|r| r.slot))
            .filter(|s| *s >= report.since - 86_400_000);
        let style = TimeStyle::of(report.since, report.until, slots);
        let rows = || report.jobs.iter().flat_map(|j| j.slots.iter());
        let attempts = || rows().flat_map(|r| r.attempts.iter());
        let slot_chars = rows()
            .map(|r| style.slot(r.slot).chars().count())
            .chain([7])
            .max()
            .unwrap_or(7);
        let host_chars = attempts()
            .map(|a| a.shown.chars().count())
            .chain([4])
            .max()
            .unwrap_or(4)
            .min(40);
        let x_attempt = PAD + (slot_chars as f64 + 1.0) * WIDE_CHAR;
        let x_host = x_attempt + 4.0 * WIDE_CHAR;
        let x0 = x_host + (host_chars as f64 + 2.0) * WIDE_CHAR;
        Layout {
            style,
            now: report.clock.server_time,
            axis: Axis {
                since: report.since,
                until: report.until,
                width: AXIS,
            },
            x0,
            x_note: x0 + AXIS as f64 + 2.0 * CHAR,
            x_attempt,
            x_host,
        }
    }

    /// The x of a time, clamped to the range.
    fn x_of(&self, t: i64) -> f64 {
        self.x0 + self.axis.x(t.clamp(self.axis.since, self.axis.until))
    }
}

/// The picture as an SVG document.
pub fn render(report: &TimelineReport) -> String {
    let layout = Layout::of(report);
    let mut body = Group::new();
    let mut widest = layout.x_note;
    let mut y = PAD + 14.0;
    let title = format!(
        "anarchon timeline: {} to {} UTC ({})",
        crate::time::compact(report.since),
        crate::time::compact(report.until),
        humanize((report.until - report.since).max(0) as u64)
    );
    body = body.add(text(PAD, y, &title, "title"));
    y += ROW * 1.5;
    // Ticks are chosen as for text: as many labels as fit the axis in characters.
    let ticks = Axis {
        width: (AXIS as f64 / CHAR) as usize,
        ..layout.axis
    }
    .ticks();
    for (t, label) in &ticks {
        body = body.add(text(layout.x_of(*t), y, label, "tick-label"));
    }
    y += 6.0;
    let grid_top = y;
    let mut jobs = Group::new().set("class", "jobs");
    for job in &report.jobs {
        let (group, bottom, right) = draw_job(job, &layout, y);
        jobs = jobs.add(group);
        widest = widest.max(right);
        y = bottom;
    }
    let grid = grid(&layout, &ticks, grid_top, y);
    y += ROW;
    if report.idle_jobs > 0 {
        let idle = format!(
            "{} under the prefix had no attempt in the range",
            super::text::plural(report.idle_jobs, "other job")
        );
        body = body.add(text(PAD, y, &idle, "dim"));
        y += ROW;
    }
    let (legend, legend_right) = legend(report, y);
    widest = widest.max(legend_right);
    y += ROW;
    document(widest, y, [grid, body, jobs, legend])
}

/// The grid: a vertical line at each tick, from `top` to `bottom`.
fn grid(layout: &Layout, ticks: &[(i64, String)], top: f64, bottom: f64) -> Group {
    let mut grid = Group::new().set("class", "grid");
    for (t, _) in ticks {
        grid = grid.add(
            Line::new()
                .set("class", "tick")
                .set("x1", px(layout.x_of(*t)))
                .set("x2", px(layout.x_of(*t)))
                .set("y1", px(top))
                .set("y2", px(bottom)),
        );
    }
    grid
}

/// The document around its groups (the grid, the body, the jobs, the legend, in drawing order),
/// sized to reach `widest` across and `bottom` down.
fn document(widest: f64, bottom: f64, groups: [Group; 4]) -> String {
    let width = (widest + PAD).ceil();
    let height = (bottom + PAD).ceil();
    let mut document = Document::new()
        .set("width", width)
        .set("height", height)
        .set("viewBox", (0, 0, width, height))
        .add(Style::new(CSS))
        .add(
            Rectangle::new()
                .set("width", "100%")
                .set("height", "100%")
                .set("fill", "#fff"),
        );
    for group in groups {
        document = document.add(group);
    }
    format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{document}\n")
}

/// The legend at `y`: a swatch per outcome shown and per reason a slot shown has no run, and the
/// marks. Returns the group and the rightmost x it reaches.
fn legend(report: &TimelineReport, y: f64) -> (Group, f64) {
    let rows = || report.jobs.iter().flat_map(|j| j.slots.iter());
    let attempts = || rows().flat_map(|r| r.attempts.iter());
    let shown: Vec<Outcome> = OUTCOMES
        .into_iter()
        .filter(|o| attempts().any(|a| a.outcome == *o))
        .collect();
    let mut legend = Group::new().set("class", "legend");
    let mut x = PAD;
    legend = legend.add(text(x, y, "legend:", ""));
    x += 9.0 * CHAR;
    for outcome in shown {
        legend = legend.add(
            Rectangle::new()
                .set("class", outcome.as_str())
                .set("x", px(x))
                .set("y", px(y - BAR_HEIGHT + 1.0))
                .set("width", 14)
                .set("height", px(BAR_HEIGHT)),
        );
        let label = meaning(outcome);
        legend = legend.add(text(x + 18.0, y, label, ""));
        x += 18.0 + (label.chars().count() as f64 + 2.0) * CHAR;
    }
    for reason in [NoRun::Missed, NoRun::Paused, NoRun::Pending] {
        let shown = rows().any(|r| r.no_run.as_ref().is_some_and(|n| n.reason == reason));
        if !shown {
            continue;
        }
        legend = legend.add(
            Rectangle::new()
                .set("class", format!("no-run {}", reason.as_str()))
                .set("x", px(x + 5.0))
                .set("y", px(y - BAR_HEIGHT + 1.0))
                .set("width", 3)
                .set("height", px(BAR_HEIGHT)),
        );
        let label = match reason {
            NoRun::Missed => "missed: due, never claimed",
            NoRun::Paused => "no run: paused",
            NoRun::Pending => "no run yet: within its grace",
        };
        legend = legend.add(text(x + 18.0, y, label, ""));
        x += 18.0 + (label.chars().count() as f64 + 2.0) * CHAR;
    }
    let marks = "↳ takeover · dashes: slot to first claim (amber: late) · red: held by two attempts at once";
    legend = legend.add(text(x, y, marks, "dim"));
    (legend, x + marks.chars().count() as f64 * WIDE_CHAR)
}

/// One job's rows from `y` down: its name, a line per attempt, its overlaps, its summary.
/// Returns the group, the y below it and the rightmost x it reaches.
fn draw_job(job: &JobTimeline, layout: &Layout, mut y: f64) -> (Group, f64, f64) {
    let mut group = Group::new().set("class", "job-timeline");
    let mut right = layout.x_note;
    y += ROW;
    group = group.add(text(PAD, y, &job_header(job), "job"));
    let rows_top = y + 4.0;
    if job.slots.is_empty() {
        y += ROW;
        group = group.add(text(PAD, y, "(no attempt in the range)", "dim"));
    }
    for drawn in job.drawn() {
        let lines = match drawn {
            Drawn::NoRun(rows) => {
                y += ROW;
                vec![no_run_line(&rows, layout, y)]
            }
            Drawn::Slot(row) => (row.attempts.iter().enumerate())
                .map(|(i, a)| {
                    y += ROW;
                    attempt_line(row, i, a, layout, y)
                })
                .collect(),
        };
        for (line, note_right) in lines {
            group = group.add(line);
            right = right.max(note_right);
        }
    }
    let rows_bottom = y + 6.0;
    for o in &job.overlaps {
        group = group.add(overlap_band(o, layout, rows_top, rows_bottom));
    }
    for (line, tone) in summary(job, layout.style, 160) {
        y += ROW;
        right = right.max(PAD + line.chars().count() as f64 * WIDE_CHAR);
        group = group.add(text(PAD, y, &line, class_of(tone)));
    }
    (group, y + ROW / 2.0, right)
}

/// A job's header line: its name, its overlap policy, and when a start is late.
fn job_header(job: &JobTimeline) -> String {
    let mut header = job.job.clone();
    if let Some(policy) = &job.overlap_policy {
        header.push_str(&format!("  --overlap {policy}"));
    }
    header.push_str(&format!(
        "  late: first claim over {} after the slot",
        humanize(job.late_after_ms.max(0) as u64)
    ));
    header
}

/// An overlap's band over the job's rows, from `top` to `bottom`, its `<title>` who overlapped.
fn overlap_band(o: &Overlap, layout: &Layout, top: f64, bottom: f64) -> Rectangle {
    let (x1, x2) = (layout.x_of(o.from), layout.x_of(o.to));
    let band = Rectangle::new()
        .set(
            "class",
            if o.certain {
                "overlap"
            } else {
                "possible-overlap"
            },
        )
        .set("x", px(x1))
        .set("y", px(top))
        .set("width", px((x2 - x1).max(1.0)))
        .set("height", px(bottom - top));
    let who: Vec<String> = o
        .attempts
        .iter()
        .map(|a| {
            let n = a.attempt.map_or("-".to_string(), |n| n.to_string());
            format!("{} #{n} on {}", layout.style.slot(a.slot), a.runner)
        })
        .collect();
    band.add(Title::new(clean(&format!(
        "{}overlap of {} from {} to {}: {}",
        if o.certain { "" } else { "possible " },
        humanize(o.duration_ms.max(0) as u64),
        o.from_time,
        o.to_time,
        who.join(" and ")
    ))))
}

/// Consecutive slots with no run for one reason: a mark at each (`<rect class="no-run
/// <reason>">`, its `<title>` why), and the note. Returns the group and the rightmost x its note
/// reaches.
fn no_run_line(rows: &[&SlotRow], layout: &Layout, y: f64) -> (Group, f64) {
    let (style, x_note) = (layout.style, layout.x_note);
    let mut g = Group::new();
    if let Some(first) = rows.first() {
        g = g.add(text(PAD, y, &style.slot(first.slot), ""));
    }
    for row in rows {
        let Some(no_run) = &row.no_run else { continue };
        g = g.add(
            Rectangle::new()
                .set("class", format!("no-run {}", no_run.reason.as_str()))
                .set("data-slot", row.slot)
                .set("x", px(layout.x_of(row.slot) - 1.5))
                .set("y", px(y - BAR_HEIGHT + 1.0))
                .set("width", 3)
                .set("height", px(BAR_HEIGHT))
                .add(Title::new(clean(&format!(
                    "{}: {}",
                    row.slot_time, no_run.why
                )))),
        );
    }
    let pieces = no_run_note(style, rows);
    let class = class_of(pieces.first().and_then(|(_, t)| *t));
    let said: String = pieces.into_iter().map(|(t, _)| t).collect();
    g = g.add(text(x_note, y, &said, class));
    (g, x_note + said.chars().count() as f64 * WIDE_CHAR)
}

/// An attempt's line: its labels, the dashes from its slot, its bar, the overlapping part, its
/// note. Returns the group and the rightmost x its note reaches.
fn attempt_line(row: &SlotRow, i: usize, a: &Attempt, layout: &Layout, y: f64) -> (Group, f64) {
    let (style, now) = (layout.style, layout.now);
    let mut g = Group::new();
    if i == 0 {
        g = g.add(text(PAD, y, &style.slot(row.slot), ""));
    }
    let number = match a.attempt {
        Some(n) if n > 0 => n.to_string(),
        _ => "-".to_string(),
    };
    g = g.add(text(layout.x_attempt, y, &number, ""));
    g = g.add(text(layout.x_host, y, &a.shown, ""));
    let (start, end) = (a.start(row.slot), a.end(row.slot, now));
    let bar_y = y - BAR_HEIGHT + 1.0;
    if i == 0 && row.slot < start {
        g = g.add(slot_to_claim(row, start, layout, bar_y));
    }
    let (x1, x2) = (layout.x_of(start), layout.x_of(end));
    g = g.add(attempt_bar(row, a, &number, (x1, x2), bar_y));
    for &(from, to, sure) in &a.overlap_spans {
        let (o1, o2) = (layout.x_of(from.max(start)), layout.x_of(to.min(end)));
        g = g.add(
            Rectangle::new()
                .set("class", if sure { "at-once" } else { "possible-overlap" })
                .set("x", px(o1))
                .set("y", px(bar_y + 2.0))
                .set("width", px((o2 - o1).max(1.0)))
                .set("height", px(BAR_HEIGHT - 4.0)),
        );
    }
    if a.takeover_from.is_some() {
        g = g.add(text(x1 - CHAR, y, "↳", "takeover"));
    }
    let (note, note_right) = attempt_note(row, i, a, layout, y);
    (g.add(note), note_right)
}

/// The dashes from a slot to its first claim at `start` (amber when the start was late).
fn slot_to_claim(row: &SlotRow, start: i64, layout: &Layout, bar_y: f64) -> Line {
    let class = if row.late {
        "slot-to-claim late"
    } else {
        "slot-to-claim"
    };
    Line::new()
        .set("class", class)
        .set("x1", px(layout.x_of(row.slot)))
        .set("x2", px(layout.x_of(start)))
        .set("y1", px(bar_y + BAR_HEIGHT / 2.0))
        .set("y2", px(bar_y + BAR_HEIGHT / 2.0))
}

/// An attempt's bar from x1 to x2, its `<title>` all about it.
fn attempt_bar(
    row: &SlotRow,
    a: &Attempt,
    number: &str,
    (x1, x2): (f64, f64),
    bar_y: f64,
) -> Rectangle {
    let about = format!(
        "{} attempt {number} on {}: {}{}{}",
        row.slot_time,
        a.runner,
        a.outcome.as_str(),
        a.reason
            .as_deref()
            .map_or(String::new(), |r| format!(" ({r})")),
        match (&a.claimed_at_time, &a.ended_at_time) {
            (Some(c), Some(e)) => format!(", claimed {c}, ended {e}"),
            (Some(c), None) => format!(", claimed {c}, open"),
            _ => String::new(),
        }
    );
    Rectangle::new()
        .set("class", format!("attempt {}", a.outcome.as_str()))
        .set("data-slot", row.slot)
        .set("data-attempt", a.attempt.map_or(-1, i64::from))
        .set("x", px(x1))
        .set("y", px(bar_y))
        .set("width", px((x2 - x1).max(3.0)))
        .set("height", px(BAR_HEIGHT))
        .add(Title::new(clean(&about)))
}

/// An attempt's note at the right of its line. Returns the text and the rightmost x it reaches.
fn attempt_note(row: &SlotRow, i: usize, a: &Attempt, layout: &Layout, y: f64) -> (Text, f64) {
    // One text per note, in the colour of its gravest part (tspans would each start a line of
    // the document, and their whitespace would show).
    let pieces = note(layout.style, layout.now, row, i, a);
    let tone = [Tone::Bad, Tone::Warn, Tone::Good, Tone::Dim]
        .into_iter()
        .find(|t| {
            pieces.iter().any(|(_, p)| {
                p.as_ref().map(std::mem::discriminant) == Some(std::mem::discriminant(t))
            })
        });
    let said: String = pieces.into_iter().map(|(t, _)| t).collect();
    let x_note = layout.x_note;
    (
        text(x_note, y, &said, class_of(tone)),
        x_note + said.chars().count() as f64 * WIDE_CHAR,
    )
}
