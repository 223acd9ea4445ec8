//! The timeline as text: a time axis as wide as asked, one line per attempt under its slot, a
//! note at the end of each line, a summary per job and a legend. Every line fits the width.

use std::collections::BTreeSet;

use crate::output::{Output, Tone};
use crate::time::humanize;

use super::TimelineReport;
use super::axis::{Axis, TimeStyle};
use super::model::{Attempt, Drawn, JobTimeline, NoRun, Outcome, SlotRow};

const HELD: char = '━';
const SLOT_TO_CLAIM: char = '·';
const OPEN: char = '┄';
const TAKEOVER: char = '↳';
const EARLIER: char = '◂';
const LATER: char = '▸';
const AT_ONCE: char = '▓';
const OVERLAP_MARK: char = '!';
const POSSIBLE_MARK: char = '?';
const MISSED: char = '✕';
const PAUSED: char = '‖';
const PENDING: char = '◌';

/// The columns a bar gets at least, before host names are cut.
const MIN_BAR: usize = 24;

/// The widest a host is shown.
const MAX_HOST: usize = 16;

/// How many overlaps (or takeovers) a summary names before it counts the rest.
const NAMED: usize = 5;

/// Every glyph, in the legend's order, with what it means.
const LEGEND: [(char, &str); 21] = [
    (HELD, "held the run"),
    ('✓', "finished"),
    ('✗', "failed"),
    ('↯', "lease expired"),
    ('↪', "handed over"),
    ('⇥', "replaced"),
    ('»', "superseded"),
    ('⊗', "released"),
    ('○', "skipped"),
    (LATER, "running / goes on"),
    (OPEN, "open: lease expired, or no result yet"),
    (TAKEOVER, "takeover"),
    (SLOT_TO_CLAIM, "slot to first claim"),
    (EARLIER, "began earlier"),
    (AT_ONCE, "held by two attempts at once"),
    (OVERLAP_MARK, "overlap"),
    (POSSIBLE_MARK, "possible overlap"),
    ('-', "attempt 0: a skip, or a claim-only run"),
    (MISSED, "missed: due, never claimed"),
    (PAUSED, "no run: paused"),
    (PENDING, "no run yet: within its grace"),
];

/// The mark of a slot with no run, and its colour.
fn no_run_mark(reason: NoRun) -> Cell {
    let (glyph, tone) = match reason {
        NoRun::Missed => (MISSED, Tone::Bad),
        NoRun::Paused => (PAUSED, Tone::Dim),
        NoRun::Pending => (PENDING, Tone::Dim),
    };
    Cell {
        glyph,
        tone: Some(tone),
    }
}

/// What the line of consecutive slots with no run for one reason says after its marks.
pub(super) fn no_run_note(style: TimeStyle, rows: &[&SlotRow]) -> Vec<Piece> {
    let (Some(first), Some(last)) = (rows.first(), rows.last()) else {
        return Vec::new();
    };
    let Some(no_run) = &first.no_run else {
        return Vec::new();
    };
    let grace = humanize((no_run.due_by - first.slot).max(0) as u64);
    // What matters first, the count and the span after: a note cut to fit keeps the reason.
    let said = match no_run.reason {
        NoRun::Missed => format!("missed: never claimed (grace {grace})"),
        NoRun::Paused => {
            let p = no_run.pause.as_ref();
            format!(
                "paused by {}{}",
                p.and_then(|p| p.paused_by.as_deref()).unwrap_or("someone"),
                p.and_then(|p| p.paused_reason.as_deref())
                    .map_or(String::new(), |why| format!(": {why}"))
            )
        }
        NoRun::Pending => format!("not claimed yet (grace {grace})"),
    };
    let tone = if no_run.reason == NoRun::Missed {
        Tone::Bad
    } else {
        Tone::Dim
    };
    let said = if rows.len() > 1 {
        format!(
            "{said}; {} to {}",
            plural(rows.len() as u64, "slot"),
            style.slot(last.slot)
        )
    } else {
        said
    };
    vec![(said, Some(tone))]
}

/// The glyph an attempt's bar ends with.
fn end_glyph(outcome: Outcome) -> char {
    match outcome {
        Outcome::Finished => '✓',
        Outcome::Failed => '✗',
        Outcome::Interrupted => '↯',
        Outcome::HandedOver => '↪',
        Outcome::Replaced => '⇥',
        Outcome::Superseded => '»',
        Outcome::Released => '⊗',
        Outcome::Skipped => '○',
        Outcome::Running => LATER,
        Outcome::Expired | Outcome::Claimed => OPEN,
    }
}

/// The colour of an attempt's bar.
pub fn tone(outcome: Outcome) -> Tone {
    match outcome {
        Outcome::Finished => Tone::Good,
        Outcome::Failed | Outcome::Interrupted | Outcome::Expired => Tone::Bad,
        Outcome::HandedOver
        | Outcome::Replaced
        | Outcome::Superseded
        | Outcome::Released
        | Outcome::Running => Tone::Warn,
        Outcome::Skipped | Outcome::Claimed => Tone::Dim,
    }
}

/// A run of text in one colour (or none).
type Piece = (String, Option<Tone>);

/// `text` cut to `width` characters, ending in `…` when cut.
fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut out: String = text.chars().take(width - 1).collect();
    out.push('…');
    out
}

/// Pieces cut to `width` characters in all.
fn cut_pieces(pieces: Vec<Piece>, width: usize) -> Vec<Piece> {
    let total: usize = pieces.iter().map(|(t, _)| t.chars().count()).sum();
    if total <= width {
        return pieces;
    }
    let mut left = width;
    let mut out = Vec::new();
    for (text, tone) in pieces {
        if left == 0 {
            break;
        }
        let n = text.chars().count();
        if n < left {
            left -= n;
            out.push((text, tone));
        } else {
            out.push((cut(&text, left), tone));
            left = 0;
        }
    }
    // The last piece holds the `…` when it was cut at its very end.
    if let Some((text, _)) = out.last_mut()
        && !text.ends_with('…')
    {
        let keep: String = text
            .chars()
            .take(text.chars().count().saturating_sub(1))
            .collect();
        *text = keep + "…";
    }
    out
}

/// Words wrapped to `width` columns: the first line keeps `text`'s leading spaces, the others
/// are indented by `indent`. A word longer than a line is cut.
fn wrap(text: &str, width: usize, indent: usize) -> Vec<String> {
    let lead = text.len() - text.trim_start_matches(' ').len();
    let mut lines: Vec<String> = Vec::new();
    let mut line = " ".repeat(lead);
    let mut empty = true;
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        let len = line.chars().count();
        if !empty && len + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
            line = " ".repeat(indent);
            empty = true;
        }
        let room = width
            .saturating_sub(line.chars().count() + usize::from(!empty))
            .max(1);
        if !empty {
            line.push(' ');
        }
        line.push_str(&cut(word, room));
        empty = false;
    }
    lines.push(line);
    lines
}

/// A cell of a bar.
#[derive(Clone, Copy)]
struct Cell {
    glyph: char,
    tone: Option<Tone>,
}

/// The widths of the parts of a line.
struct Widths {
    slot: usize,
    attempt: usize,
    host: usize,
    bar: usize,
    note: usize,
}

impl Widths {
    fn label(&self) -> usize {
        self.slot + 1 + self.attempt + 1 + self.host + 1
    }
}

/// The picture, line by line (each at most `width` characters).
pub fn render(report: &TimelineReport, width: usize, out: &Output) -> Vec<String> {
    let slots = report
        .jobs
        .iter()
        .flat_map(|j| j.slots.iter().map(|r| r.slot))
        .filter(|s| *s >= report.since - 86_400_000);
    let style = TimeStyle::of(report.since, report.until, slots);
    let painter = Painter {
        out,
        used: BTreeSet::new(),
    };
    let mut picture = Picture {
        report,
        style,
        width,
        painter,
        layout: Widths {
            slot: 0,
            attempt: 0,
            host: 0,
            bar: 0,
            note: 0,
        },
    };
    picture.layout = picture.layout_for(width);
    picture.draw()
}

/// Paints pieces, and remembers which glyphs the legend must explain.
struct Painter<'a> {
    out: &'a Output,
    used: BTreeSet<char>,
}

impl Painter<'_> {
    fn pieces(&self, pieces: &[Piece]) -> String {
        pieces
            .iter()
            .map(|(text, tone)| match tone {
                Some(t) => self.out.paint(text, *t),
                None => text.clone(),
            })
            .collect()
    }

    /// Cells as text, each run of one colour painted once.
    fn cells(&mut self, cells: &[Cell]) -> String {
        let mut pieces: Vec<Piece> = Vec::new();
        for cell in cells {
            if cell.glyph != ' ' {
                self.used.insert(cell.glyph);
            }
            match pieces.last_mut() {
                Some((text, tone)) if same_tone(*tone, cell.tone) => text.push(cell.glyph),
                _ => pieces.push((cell.glyph.to_string(), cell.tone)),
            }
        }
        self.pieces(&pieces)
    }
}

/// Whether two cells are painted alike.
fn same_tone(a: Option<Tone>, b: Option<Tone>) -> bool {
    a.as_ref().map(std::mem::discriminant) == b.as_ref().map(std::mem::discriminant)
}

struct Picture<'a> {
    report: &'a TimelineReport,
    style: TimeStyle,
    width: usize,
    painter: Painter<'a>,
    layout: Widths,
}

impl Picture<'_> {
    fn axis(&self) -> Axis {
        Axis {
            since: self.report.since,
            until: self.report.until,
            width: self.layout.bar.max(1),
        }
    }

    /// How wide each part of a line is for `width` columns.
    fn layout_for(&self, width: usize) -> Widths {
        let rows = || self.report.jobs.iter().flat_map(|j| j.slots.iter());
        let slot = rows()
            .map(|r| self.style.slot(r.slot).chars().count())
            .chain(["SLOT".len()])
            .max()
            .unwrap_or(4);
        let attempt = rows()
            .flat_map(|r| r.attempts.iter())
            .map(|a| attempt_label(a).chars().count())
            .chain([1])
            .max()
            .unwrap_or(1);
        let widest_host = rows()
            .flat_map(|r| r.attempts.iter())
            .map(|a| a.shown.chars().count())
            .chain(["HOST".len()])
            .max()
            .unwrap_or(4)
            .min(MAX_HOST);
        let fixed = slot + 1 + attempt + 1 + 1;
        // Hosts are cut (to 4 at least) before a bar gets fewer than MIN_BAR columns.
        let host = widest_host
            .min(width.saturating_sub(fixed + MIN_BAR))
            .max(4);
        let avail = width.saturating_sub(fixed + host).max(1);
        let note_need = self
            .report
            .jobs
            .iter()
            .flat_map(|j| j.slots.iter())
            .flat_map(|r| {
                r.attempts
                    .iter()
                    .enumerate()
                    .map(move |(i, a)| note(self.style, self.report.clock.server_time, r, i, a))
            })
            .chain(self.report.jobs.iter().flat_map(|j| {
                j.drawn().into_iter().filter_map(|d| match d {
                    Drawn::NoRun(rows) => Some(no_run_note(self.style, &rows)),
                    Drawn::Slot(_) => None,
                })
            }))
            .map(|pieces| pieces.iter().map(|(t, _)| t.chars().count()).sum::<usize>())
            .max()
            .unwrap_or(0);
        let note = note_need
            .min(avail.saturating_sub(MIN_BAR + 1))
            .min(avail / 2);
        let bar = if note > 0 { avail - note - 1 } else { avail };
        Widths {
            slot,
            attempt,
            host,
            bar,
            note,
        }
    }

    fn draw(&mut self) -> Vec<String> {
        let mut lines = Vec::new();
        let report = self.report;
        let axis = self.axis();
        let span = humanize((report.until - report.since).max(0) as u64);
        let until = if (report.until - report.clock.server_time).abs() < 1000 {
            format!("now ({} UTC)", crate::time::compact(report.until))
        } else {
            format!("{} UTC", crate::time::compact(report.until))
        };
        let title = format!(
            "from {} to {until}: {span}, {} a column",
            crate::time::compact(report.since),
            humanize(axis.column_ms().max(1) as u64)
        );
        lines.extend(wrap(&title, self.width, 2));
        let (labels, ruler) = self.axis_lines();
        lines.push(labels);
        lines.push(ruler);
        for job in &report.jobs {
            lines.extend(self.job(job));
        }
        if report.idle_jobs > 0 {
            lines.extend(wrap(
                &format!(
                    "{} under the prefix had no attempt in the range",
                    plural(report.idle_jobs, "other job")
                ),
                self.width,
                2,
            ));
        }
        lines.extend(self.legend());
        lines
    }

    /// The tick labels, and the ruler under them with the columns' headings.
    fn axis_lines(&self) -> (String, String) {
        let l = &self.layout;
        let axis = self.axis();
        let mut label_cells = vec![' '; l.bar];
        let mut ruler = vec!['─'; l.bar];
        let mut free_from = 0;
        for (t, label) in axis.ticks() {
            let c = axis.col(t);
            ruler[c] = '┬';
            let n = label.chars().count();
            if c >= free_from && c + n <= l.bar {
                for (i, ch) in label.chars().enumerate() {
                    label_cells[c + i] = ch;
                }
                free_from = c + n + 1;
            }
        }
        let labels = format!(
            "{}{}",
            " ".repeat(l.label()),
            label_cells.into_iter().collect::<String>()
        );
        let ruler = format!(
            "{:<sw$} {:>aw$} {:<hw$} {}",
            "SLOT",
            "#",
            "HOST",
            ruler.into_iter().collect::<String>(),
            sw = l.slot,
            aw = l.attempt,
            hw = l.host
        );
        (labels.trim_end().to_string(), ruler)
    }

    fn job(&mut self, job: &JobTimeline) -> Vec<String> {
        let mut lines = Vec::new();
        let mut header = job.job.clone();
        if job.layout == crate::store::Layout::ClaimOnly {
            header.push_str(" (claim-only)");
        }
        if let Some(policy) = &job.overlap_policy {
            header.push_str(&format!(" · --overlap {policy}"));
        }
        header.push_str(&format!(
            " · late: first claim over {} after the slot",
            humanize(job.late_after_ms.max(0) as u64)
        ));
        lines.extend(wrap(&header, self.width, 2));
        if job.slots.is_empty() {
            lines.extend(wrap("  (no attempt in the range)", self.width, 2));
        }
        for drawn in job.drawn() {
            match drawn {
                Drawn::Slot(row) => {
                    for (i, attempt) in row.attempts.iter().enumerate() {
                        lines.push(self.attempt_line(row, i, attempt));
                    }
                }
                Drawn::NoRun(rows) => lines.push(self.no_run_line(&rows)),
            }
        }
        if !job.overlaps.is_empty() {
            lines.push(self.overlap_line(job));
        }
        lines.extend(self.summary(job));
        lines
    }

    fn attempt_line(&mut self, row: &SlotRow, i: usize, a: &Attempt) -> String {
        let l = &self.layout;
        let slot = if i == 0 {
            self.style.slot(row.slot)
        } else {
            String::new()
        };
        let label = format!(
            "{:<sw$} {:>aw$} {:<hw$} ",
            slot,
            attempt_label(a),
            cut(&a.shown, l.host),
            sw = l.slot,
            aw = l.attempt,
            hw = l.host
        );
        let cells = self.bar(row, i, a);
        let bar = self.painter.cells(&cells);
        let note = cut_pieces(
            note(self.style, self.report.clock.server_time, row, i, a),
            l.note,
        );
        let mut line = label + &bar;
        if !note.is_empty() {
            line.push(' ');
            line.push_str(&self.painter.pieces(&note));
        }
        line.trim_end().to_string()
    }

    /// Consecutive slots with no run for one reason: a mark at each, and why.
    fn no_run_line(&mut self, rows: &[&SlotRow]) -> String {
        let l = &self.layout;
        let axis = self.axis();
        let (since, until) = (self.report.since, self.report.until);
        let mut cells = vec![
            Cell {
                glyph: ' ',
                tone: None
            };
            l.bar
        ];
        for row in rows {
            if let Some(no_run) = row
                .no_run
                .as_ref()
                .filter(|_| (since..=until).contains(&row.slot))
            {
                cells[axis.col(row.slot)] = no_run_mark(no_run.reason);
            }
        }
        let label = format!(
            "{:<sw$} {:>aw$} {:<hw$} ",
            rows.first()
                .map_or(String::new(), |r| self.style.slot(r.slot)),
            "-",
            "",
            sw = l.slot,
            aw = l.attempt,
            hw = l.host
        );
        let bar = self.painter.cells(&cells);
        let note = cut_pieces(no_run_note(self.style, rows), l.note);
        let mut line = label + &bar;
        if !note.is_empty() {
            line.push(' ');
            line.push_str(&self.painter.pieces(&note));
        }
        line.trim_end().to_string()
    }

    /// An attempt's bar: dots from the slot to the first claim, the held span, its end.
    fn bar(&self, row: &SlotRow, i: usize, a: &Attempt) -> Vec<Cell> {
        let axis = self.axis();
        let now = self.report.clock.server_time;
        let (since, until) = (self.report.since, self.report.until);
        let mut cells = vec![
            Cell {
                glyph: ' ',
                tone: None
            };
            self.layout.bar
        ];
        let last = cells.len() - 1;
        let (start, end) = (a.start(row.slot), a.end(row.slot, now));
        let tone = Some(tone(a.outcome));
        if end < since {
            cells[0] = Cell {
                glyph: EARLIER,
                tone: Some(Tone::Dim),
            };
            return cells;
        }
        if start > until {
            cells[last] = Cell {
                glyph: LATER,
                tone: Some(Tone::Dim),
            };
            return cells;
        }
        let span = Span {
            axis,
            since,
            until,
            start,
            end,
            c0: axis.col(start.max(since)),
            c1: axis.col(end.min(until)),
        };
        if i == 0 && row.slot <= until && row.slot < start {
            let dots = Some(if row.late { Tone::Warn } else { Tone::Dim });
            for cell in &mut cells[axis.col(row.slot.max(since))..span.c0] {
                *cell = Cell {
                    glyph: SLOT_TO_CLAIM,
                    tone: dots,
                };
            }
        }
        held(&mut cells, a, &span, tone);
        at_once(&mut cells, a, &span);
        ends(&mut cells, a, &span, tone);
        cells
    }

    /// The row under a job's slots that marks every instant two of its attempts held it.
    fn overlap_line(&mut self, job: &JobTimeline) -> String {
        let l = &self.layout;
        let axis = self.axis();
        let (since, until) = (self.report.since, self.report.until);
        let mut cells = vec![
            Cell {
                glyph: ' ',
                tone: None
            };
            l.bar
        ];
        for o in &job.overlaps {
            if o.to <= since || o.from >= until {
                continue;
            }
            let (c0, c1) = (
                axis.col(o.from.max(since)),
                axis.col((o.to - 1).max(o.from).min(until)),
            );
            for cell in cells.iter_mut().take(c1 + 1).skip(c0) {
                if cell.glyph != OVERLAP_MARK {
                    *cell = if o.certain {
                        Cell {
                            glyph: OVERLAP_MARK,
                            tone: Some(Tone::Bad),
                        }
                    } else {
                        Cell {
                            glyph: POSSIBLE_MARK,
                            tone: Some(Tone::Warn),
                        }
                    };
                }
            }
        }
        let label = format!("{:<w$}", "OVERLAP", w = l.label());
        let label = self.painter.out.paint(&label, Tone::Bad);
        format!("{label}{}", self.painter.cells(&cells))
            .trim_end()
            .to_string()
    }

    /// A job's summary lines, painted.
    fn summary(&self, job: &JobTimeline) -> Vec<String> {
        summary(job, self.style, self.width)
            .into_iter()
            .map(|(line, tone)| match tone {
                Some(t) => self.painter.out.paint(&line, t),
                None => line,
            })
            .collect()
    }

    /// The glyphs the picture used, each with what it means.
    fn legend(&self) -> Vec<String> {
        let mut used = self.painter.used.clone();
        if self
            .report
            .jobs
            .iter()
            .flat_map(|j| j.slots.iter().flat_map(|r| r.attempts.iter()))
            .any(|a| a.attempt.is_none_or(|n| n == 0))
        {
            used.insert('-');
        }
        let entries: Vec<String> = LEGEND
            .iter()
            .filter(|(glyph, _)| used.contains(glyph))
            .map(|(glyph, meaning)| format!("{glyph} {meaning}"))
            .collect();
        if entries.is_empty() {
            return Vec::new();
        }
        // Entries are kept whole on a line, two spaces apart.
        let mut lines = Vec::new();
        let mut line = String::from("legend:");
        for entry in entries {
            let entry = cut(&entry, self.width.saturating_sub(8));
            if line.chars().count() + 2 + entry.chars().count() > self.width {
                lines.push(std::mem::take(&mut line));
                line.push_str("       ");
            } else if line != "legend:" {
                line.push(' ');
            }
            line.push(' ');
            line.push_str(&entry);
        }
        lines.push(line);
        lines
    }
}

/// What a line says after its bar.
pub(super) fn note(style: TimeStyle, now: i64, row: &SlotRow, i: usize, a: &Attempt) -> Vec<Piece> {
    let mut parts: Vec<Piece> = Vec::new();
    if a.overlapping {
        let sure = a.overlap_spans.iter().any(|s| s.2);
        parts.push(if sure {
            ("OVERLAP".to_string(), Some(Tone::Bad))
        } else {
            ("overlap?".to_string(), Some(Tone::Warn))
        });
    }
    if i == 0 && row.manual {
        parts.push(("manual".to_string(), None));
    }
    if i == 0 && row.no_run.is_some() {
        // A claim-only claim with no result: health (and `check`) counts its slot missed.
        parts.push(("counted missed: no result".into(), Some(Tone::Bad)));
    }
    if let Some(from) = &a.takeover_from {
        let who = if from.shown == a.shown {
            &from.runner
        } else {
            &from.shown
        };
        parts.push((format!("took over from {who}"), None));
    }
    let first_run = row
        .attempts
        .iter()
        .position(|x| x.outcome != Outcome::Skipped);
    if row.late && first_run == Some(i) {
        let delay = row.start_delay_ms.unwrap_or(0).max(0) as u64;
        parts.push((format!("late {}", humanize(delay)), Some(Tone::Warn)));
    }
    let reason = a.reason.clone().unwrap_or_default();
    let newer = a.newer_slot.map(|s| style.slot(s)).unwrap_or_default();
    let said = match a.outcome {
        Outcome::Finished => None,
        Outcome::Failed => Some(format!("failed: {reason}")),
        Outcome::Interrupted | Outcome::HandedOver => Some(reason),
        Outcome::Replaced => Some(format!("replaced by {newer}")),
        Outcome::Superseded => Some(format!("superseded by {newer}")),
        Outcome::Released => Some(match (&a.released_by, reason.as_str()) {
            (Some(by), "" | "released by an operator") => format!("released by {by}"),
            (Some(by), why) => format!("released by {by}: {why}"),
            (None, why) => format!("released: {why}"),
        }),
        Outcome::Skipped => Some(format!(
            "skipped: {}",
            reason.split(": ").next().unwrap_or_default()
        )),
        Outcome::Running => {
            let left = a.lease_end.unwrap_or(0) - now;
            Some(format!(
                "running, lease {} left",
                humanize(left.max(0) as u64)
            ))
        }
        Outcome::Expired => {
            let ago = now - a.lease_end.unwrap_or(0);
            Some(format!(
                "lease expired {} ago, not taken over",
                humanize(ago.max(0) as u64)
            ))
        }
        Outcome::Claimed => Some("claimed, no result yet".to_string()),
    };
    if let Some(said) = said.filter(|s| !s.is_empty()) {
        parts.push((said, Some(tone(a.outcome))));
    }
    let mut out: Vec<Piece> = Vec::new();
    for (k, part) in parts.into_iter().enumerate() {
        if k > 0 {
            out.push(("; ".to_string(), None));
        }
        out.push(part);
    }
    out
}

/// A job's summary, line by line, each line in one colour: what its attempts came to, its
/// takeovers, late starts and overlaps (with what its policy says of them), wrapped to `width`.
pub(super) fn summary(job: &JobTimeline, style: TimeStyle, width: usize) -> Vec<Piece> {
    if job.summary.slots == 0 {
        return Vec::new();
    }
    let mut lines = Wrapped {
        lines: Vec::new(),
        width,
    };
    lines.add(counts(job), 4, None);
    let (sure, possible): (Vec<_>, Vec<_>) = job.overlaps.iter().partition(|o| o.certain);
    if !sure.is_empty() {
        let rule = match job.overlap_policy.as_deref() {
            Some(p) if job.forbids_overlap() => {
                format!(": under --overlap {p} this must never happen")
            }
            Some("allow") => " (--overlap allow lets runs overlap)".to_string(),
            _ => String::new(),
        };
        let head = format!(
            "  OVERLAP: two attempts of {} held it at once ({}){rule}",
            job.job,
            plural(sure.len() as u64, "overlap")
        );
        lines.overlaps(head, &sure, style, Tone::Bad);
    }
    if !possible.is_empty() {
        let head = format!(
            "  {}: an attempt whose end the store learned only later (its lease expired, or its holder never reported) spans another's",
            plural(possible.len() as u64, "possible overlap")
        );
        lines.overlaps(head, &possible, style, Tone::Warn);
    }
    lines.lines
}

/// A summary's first line: what a job's attempts came to, its takeovers, late starts and slots
/// with no run.
fn counts(job: &JobTimeline) -> String {
    let s = &job.summary;
    let mut text = format!(
        "  {}: {}, {}",
        job.job,
        plural(s.slots, "slot"),
        plural(s.attempts, "attempt")
    );
    if !s.outcomes.is_empty() {
        let each: Vec<String> = s
            .outcomes
            .iter()
            .map(|(o, n)| format!("{n} {}", o.as_str()))
            .collect();
        text.push_str(&format!(": {}", each.join(", ")));
    }
    if s.takeovers > 0 {
        let mut pairs: Vec<String> = Vec::new();
        for a in job.slots.iter().flat_map(|r| r.attempts.iter()) {
            if let Some(from) = &a.takeover_from {
                let pair = format!("{} → {}", from.shown, a.shown);
                if !pairs.contains(&pair) {
                    pairs.push(pair);
                }
            }
        }
        pairs.truncate(NAMED);
        text.push_str(&format!(
            "; {}: {}",
            plural(s.takeovers, "takeover"),
            pairs.join(", ")
        ));
    }
    if s.late > 0 {
        text.push_str(&format!("; {}", plural(s.late, "late start")));
    }
    for (reason, n) in &s.no_run {
        text.push_str(&format!("; {} {}", plural(*n, "slot"), reason.as_str()));
    }
    if s.overlaps == 0 && s.possible_overlaps == 0 {
        text.push_str("; never two attempts at once");
    }
    text
}

/// A summary's lines as they are wrapped to its width.
struct Wrapped {
    lines: Vec<Piece>,
    width: usize,
}

impl Wrapped {
    /// Adds a text, wrapped with continuation lines indented by `indent`, in one colour.
    fn add(&mut self, text: String, indent: usize, tone: Option<Tone>) {
        let width = self.width;
        self.lines
            .extend(wrap(&text, width, indent).into_iter().map(|l| (l, tone)));
    }

    /// Adds overlaps of one kind: their heading, the first [`NAMED`] each on its line, a count
    /// of the rest.
    fn overlaps(
        &mut self,
        head: String,
        overlaps: &[&super::model::Overlap],
        style: TimeStyle,
        tone: Tone,
    ) {
        self.add(head, 4, Some(tone));
        for o in overlaps.iter().take(NAMED) {
            self.add(named(o, style), 6, Some(tone));
        }
        if overlaps.len() > NAMED {
            self.add(
                format!(
                    "    and {} more (--json lists them all)",
                    overlaps.len() - NAMED
                ),
                6,
                None,
            );
        }
    }
}

/// An overlap's line in a summary: how long, from when to when, and who held it.
fn named(o: &super::model::Overlap, style: TimeStyle) -> String {
    let who: Vec<String> = o
        .attempts
        .iter()
        .map(|a| {
            let n = a.attempt.map_or("-".to_string(), |n| n.to_string());
            format!("{} #{n} on {}", style.slot(a.slot), a.shown)
        })
        .collect();
    format!(
        "    {} from {} to {}: {}",
        humanize(o.duration_ms.max(0) as u64),
        style.clock(o.from),
        style.clock(o.to),
        who.join(" and ")
    )
}

/// `1 slot`, `2 slots`.
pub(super) fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// Where an attempt falls on the axis: the range shown, the span it held, and the columns of
/// that span's shown part.
struct Span {
    axis: Axis,
    since: i64,
    until: i64,
    start: i64,
    end: i64,
    c0: usize,
    c1: usize,
}

/// Draws the span an attempt held, open (┄) where it is.
fn held(cells: &mut [Cell], a: &Attempt, span: &Span, tone: Option<Tone>) {
    let (axis, since, until) = (span.axis, span.since, span.until);
    // Where the bar is open (drawn ┄): after an expired lease's end; a claim with no result
    // all along.
    let open = |c: usize| match a.outcome {
        Outcome::Expired => a
            .lease_end
            .is_none_or(|e| c > axis.col(e.clamp(since, until))),
        Outcome::Claimed => true,
        _ => false,
    };
    for (c, cell) in cells.iter_mut().enumerate().take(span.c1 + 1).skip(span.c0) {
        *cell = Cell {
            glyph: if open(c) { OPEN } else { HELD },
            tone,
        };
    }
}

/// Marks where another attempt held the run at the same time as this one.
fn at_once(cells: &mut [Cell], a: &Attempt, span: &Span) {
    let (axis, since, until) = (span.axis, span.since, span.until);
    for &(from, to, sure) in &a.overlap_spans {
        if to <= since || from >= until {
            continue;
        }
        let o0 = axis.col(from.max(since)).max(span.c0);
        let o1 = axis.col((to - 1).max(from).min(until)).min(span.c1);
        for cell in cells.iter_mut().take(o1 + 1).skip(o0) {
            // A sure overlap is never drawn over by a possible one.
            if !(cell.glyph == AT_ONCE && same_tone(cell.tone, Some(Tone::Bad))) {
                *cell = Cell {
                    glyph: AT_ONCE,
                    tone: Some(if sure { Tone::Bad } else { Tone::Warn }),
                };
            }
        }
    }
}

/// Draws the ends of the held span: began earlier or a takeover, goes on or how it ended.
fn ends(cells: &mut [Cell], a: &Attempt, span: &Span, tone: Option<Tone>) {
    let (c0, c1) = (span.c0, span.c1);
    if span.start < span.since {
        cells[c0] = Cell {
            glyph: EARLIER,
            tone,
        };
    } else if a.takeover_from.is_some() && c1 > c0 {
        cells[c0] = Cell {
            glyph: TAKEOVER,
            tone,
        };
    }
    if span.end > span.until {
        cells[c1] = Cell { glyph: LATER, tone };
    } else if !matches!(a.outcome, Outcome::Expired | Outcome::Claimed) {
        cells[c1] = Cell {
            glyph: end_glyph(a.outcome),
            tone,
        };
    }
}

/// The attempt's number as a line shows it: `1`, `-` for a skip or a claim-only run.
fn attempt_label(a: &Attempt) -> String {
    match a.attempt {
        Some(n) if n > 0 => n.to_string(),
        _ => "-".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_cut_and_wrapped_to_its_width() {
        assert_eq!(cut("host-abcdef", 6), "host-…");
        assert_eq!(cut("abc", 6), "abc");
        let pieces = cut_pieces(
            vec![("late 2m".into(), None), ("; lease expired".into(), None)],
            12,
        );
        let text: String = pieces.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(text, "late 2m; le…");
        let lines = wrap("one two three four five", 10, 2);
        assert_eq!(lines, ["one two", "  three", "  four", "  five"]);
        assert!(lines.iter().all(|l| l.chars().count() <= 10));
    }
}
