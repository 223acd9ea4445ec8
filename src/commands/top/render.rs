//! Drawing the [`App`] with ratatui: every view fits an 80x24 terminal (long cells are cut with
//! `…`, never wrapped onto a second line; the tables get the rows that are left), and colour is
//! used only when it is on (never with NO_COLOR or `--color never`: then selection and headings
//! are shown by reverse video and bold, which are not colours).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{
    Block, Borders, Cell, Clear, Paragraph, Row as TableRow, Table, TableState, Wrap,
};

use super::model::{App, Dialog, JobRow, Row, Stage, View};
use crate::output::{Tone, health_tone, result_summary, status_tone};
use crate::store::Layout as KeyLayout;
use crate::store::read::ResultEntry;
use crate::store::state::RunState;
use crate::time::{humanize, lease_left};

/// Styles, by whether colour is on.
struct Paint {
    colour: bool,
}

impl Paint {
    fn tone(&self, tone: Tone) -> Style {
        if !self.colour {
            return Style::default();
        }
        match tone {
            Tone::Good => Style::default().fg(Color::Green),
            Tone::Warn => Style::default().fg(Color::Yellow),
            Tone::Bad => Style::default().fg(Color::Red),
            Tone::Dim => Style::default().fg(Color::DarkGray),
        }
    }

    fn heading(&self) -> Style {
        Style::default().add_modifier(Modifier::BOLD)
    }

    fn selected(&self) -> Style {
        Style::default().add_modifier(Modifier::REVERSED)
    }
}

/// `text` cut to `width` characters with `…` (a runner `host:pid` keeps its pid).
fn fit(column: &str, text: &str, width: u16) -> String {
    let width = usize::from(width);
    if text.chars().count() <= width || width < 2 {
        return text.chars().take(width).collect();
    }
    crate::output::cut(column, text, width)
}

/// The columns' widths: each fixed one as given, the `flex` one what is left of `total` after
/// them, the gaps (one space) and `reserved` (the selection mark), at least `least`.
fn widths(total: u16, fixed: &[u16], flex: usize, reserved: u16, least: u16) -> Vec<u16> {
    let gaps = fixed.len().saturating_sub(1) as u16;
    let used: u16 = fixed
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != flex)
        .map(|(_, w)| *w)
        .sum();
    let left = total.saturating_sub(used + gaps + reserved).max(least);
    fixed
        .iter()
        .enumerate()
        .map(|(i, w)| if i == flex { left } else { *w })
        .collect()
}

/// A table of `header` and `rows`, each cell cut to its column.
fn table<'a>(
    paint: &Paint,
    header: &[&'a str],
    columns: &[&str],
    widths: &[u16],
    rows: Vec<Vec<(String, Style)>>,
) -> Table<'a> {
    let rows: Vec<TableRow> = rows
        .into_iter()
        .map(|cells| {
            TableRow::new(cells.into_iter().enumerate().map(|(i, (text, style))| {
                let w = widths.get(i).copied().unwrap_or(0);
                Cell::from(fit(columns.get(i).copied().unwrap_or(""), &text, w)).style(style)
            }))
        })
        .collect();
    Table::new(rows, widths.iter().map(|w| Constraint::Length(*w)))
        .header(TableRow::new(header.iter().copied()).style(paint.heading()))
        .column_spacing(1)
}

/// A section's heading: `─ title ───…` across the width.
fn section<'a>(paint: &Paint, title: String, width: u16) -> Line<'a> {
    let used = title.chars().count() + 3;
    let rest = usize::from(width).saturating_sub(used);
    Line::from(vec![
        Span::raw("─ "),
        Span::styled(title, paint.heading()),
        Span::raw(" "),
        Span::raw("─".repeat(rest)),
    ])
}

/// A time relative to now: "in 3m", "2h ago", "now" within a second, or "-".
fn relative(ms: Option<i64>, now: i64) -> String {
    match ms {
        None => "-".to_string(),
        Some(t) if (t - now).abs() < 1000 => "now".to_string(),
        Some(t) => crate::time::relative(t, now),
    }
}

/// A slot in a table: month, day and time of day (UTC), short enough for 80 columns.
fn slot(ms: i64) -> String {
    let full = crate::time::compact(ms);
    full.get(5..).map_or(full.clone(), str::to_string)
}

pub fn draw(frame: &mut Frame, app: &mut App) {
    let area = frame.area();
    let paint = Paint { colour: app.colour };
    match app.view {
        View::Jobs => jobs_view(frame, app, &paint, area),
        View::Job => job_view(frame, app, &paint, area),
        View::Logs => logs_view(frame, app, &paint, area),
        View::Help => help_view(frame, app, &paint, area),
    }
    if let Some(dialog) = &app.dialog {
        dialog_box(frame, app, dialog, &paint, area);
    }
}

/// The first line: what top looks at, how much, and the server's clock (or that it is silent).
fn title_line(app: &App, paint: &Paint, width: u16) -> Line<'static> {
    let (counts, clock) = match &app.snapshot {
        Some(s) => {
            let shown = app.rows().len();
            let all = s.jobs.len() + s.unreadable.len();
            let jobs = if app.filter.is_empty() {
                format!("{all} jobs")
            } else {
                format!("{shown} of {all} jobs")
            };
            let running = s
                .jobs
                .iter()
                .map(|j| j.view.in_progress.len())
                .sum::<usize>();
            (format!("{jobs}, {running} in progress"), {
                // The time of day of the server's clock.
                let at = crate::time::compact(s.now());
                format!("{} UTC", at.get(11..).unwrap_or(&at))
            })
        }
        None => ("reading the store…".to_string(), String::new()),
    };
    let (clock, clock_style) = if app.outage.since.is_some() {
        (
            "no answer".to_string(),
            paint.tone(Tone::Bad).add_modifier(Modifier::BOLD),
        )
    } else {
        (clock, Style::default())
    };
    let right = format!("  {counts}  {clock}");
    let left_width = usize::from(width).saturating_sub(right.chars().count());
    let left = fit(
        "JOB",
        &format!(
            "anarchon top · {} · {}",
            app.prefix,
            app.server.strip_prefix("redis://").unwrap_or(&app.server)
        ),
        left_width as u16,
    );
    let pad = left_width.saturating_sub(left.chars().count());
    Line::from(vec![
        Span::styled(left, paint.heading()),
        Span::raw(" ".repeat(pad)),
        Span::raw(format!("  {counts}  ")),
        Span::styled(clock, clock_style),
    ])
}

/// The status line: the outage first, then an action in flight, then the last news.
fn status_line(app: &App, paint: &Paint) -> Line<'static> {
    if let Some(said) = app.outage.said() {
        return Line::styled(said, paint.tone(Tone::Bad).add_modifier(Modifier::BOLD));
    }
    if let Some(busy) = &app.busy {
        return Line::styled(format!("{busy}…"), paint.tone(Tone::Warn));
    }
    match &app.status {
        Some(s) => Line::styled(s.text.clone(), paint.tone(s.tone)),
        None if app.snapshot.is_none() => Line::raw("reading the store…"),
        None => Line::raw(""),
    }
}

/// The last line: the keys that work here.
fn keys_line(app: &App, paint: &Paint) -> Line<'static> {
    let pairs: Vec<(&str, String)> = if let Some(d) = &app.dialog {
        match d.stage {
            Stage::Text => vec![("Enter", "go on".into()), ("Esc", "cancel".into())],
            Stage::Confirm => vec![
                ("y", "yes".into()),
                ("n", "no".into()),
                ("Esc", "cancel".into()),
            ],
        }
    } else if app.editing_filter {
        return Line::from(vec![
            Span::styled("/", paint.heading()),
            Span::raw(format!("{}▌", app.filter)),
            Span::raw("   Enter keeps it, Esc clears it"),
        ]);
    } else {
        let pause = match app.selected_job() {
            Some(j) if j.paused(app.now()) => "resume",
            _ => "pause",
        };
        match app.view {
            View::Jobs => vec![
                ("⏎", "open".into()),
                ("/", "filter".into()),
                ("l", "logs".into()),
                ("r", "release".into()),
                ("p", pause.into()),
                ("n", "run now".into()),
                ("?", "help".into()),
                ("q", "quit".into()),
            ],
            View::Job => vec![
                ("↑↓", "run".into()),
                ("r", "release".into()),
                ("p", pause.into()),
                ("n", "run now".into()),
                ("l", "logs".into()),
                ("Esc", "back".into()),
                ("?", "help".into()),
                ("q", "quit".into()),
            ],
            View::Logs => vec![
                ("↑↓ PgUp PgDn", "scroll".into()),
                ("Esc", "back".into()),
                ("q", "quit".into()),
            ],
            View::Help => vec![
                ("↑↓", "scroll".into()),
                ("Esc", "back".into()),
                ("q", "quit".into()),
            ],
        }
    };
    let mut spans = Vec::new();
    for (i, (key, what)) in pairs.into_iter().enumerate() {
        if i > 0 {
            spans.push(Span::raw("  "));
        }
        spans.push(Span::styled(key.to_string(), paint.heading()));
        spans.push(Span::raw(format!(" {what}")));
    }
    Line::from(spans)
}

/// The frame of every view: title, body areas, status and keys.
fn frame_parts(
    frame: &mut Frame,
    app: &App,
    paint: &Paint,
    area: Rect,
    body: &[Constraint],
) -> Vec<Rect> {
    let mut constraints = vec![Constraint::Length(1)];
    constraints.extend_from_slice(body);
    constraints.extend([Constraint::Length(1), Constraint::Length(1)]);
    let parts = Layout::vertical(constraints).split(area);
    frame.render_widget(Paragraph::new(title_line(app, paint, area.width)), parts[0]);
    let n = parts.len();
    frame.render_widget(Paragraph::new(status_line(app, paint)), parts[n - 2]);
    frame.render_widget(Paragraph::new(keys_line(app, paint)), parts[n - 1]);
    parts[1..n - 2].to_vec()
}

fn jobs_view(frame: &mut Frame, app: &mut App, paint: &Paint, area: Rect) {
    let now = app.now();
    let running = app
        .snapshot
        .as_ref()
        .map_or(0, |s| s.runs_in_progress().len());
    let recent = app.selected_job().map_or(0, |j| j.view.recent.len());
    // The runs in progress take up to 4 rows and the selected job's results at least 5 (as many
    // as it has); the jobs table what it needs of the rest, and the results more when it leaves
    // room (up to the 16 read).
    let body = area.height.saturating_sub(3);
    let in_progress = 2 + running.clamp(1, 4) as u16;
    let jobs = (1 + app.rows().len().max(1) as u16)
        .min(body.saturating_sub(in_progress + 2 + recent.clamp(1, 5) as u16))
        .max(4);
    let results = (2 + recent.clamp(1, 16) as u16).min(body.saturating_sub(jobs + in_progress));
    let parts = frame_parts(
        frame,
        app,
        paint,
        area,
        &[
            Constraint::Length(jobs),
            Constraint::Length(in_progress),
            Constraint::Length(results),
            Constraint::Min(0),
        ],
    );
    jobs_table(frame, app, paint, parts[0], now);
    runs_in_progress(frame, app, paint, parts[1], now, running);
    let (title, results) = match app.selected_job() {
        Some(j) => (
            format!("{}: newest results", j.view.job),
            j.view.recent.as_slice(),
        ),
        None => ("newest results".to_string(), &[][..]),
    };
    results_table(frame, paint, parts[2], title, results, now);
}

fn jobs_table(frame: &mut Frame, app: &mut App, paint: &Paint, area: Rect, now: i64) {
    const HEADER: [&str; 7] = [
        "JOB", "HEALTH", "SCHEDULE", "NEXT", "LAST OK", "LAST RUN", "STATUS",
    ];
    let widths = widths(area.width, &[0, 10, 12, 7, 8, 8, 11], 0, 2, 8);
    let rows: Vec<Vec<(String, Style)>> = app
        .rows()
        .iter()
        .map(|row| match row {
            Row::Job(j) => job_cells(j, paint, now),
            Row::Unreadable(u) => {
                let mut cells = vec![("-".to_string(), Style::default()); 7];
                cells[0] = (name(&u.job, u.layout), Style::default());
                cells[1] = ("unreadable".to_string(), paint.tone(Tone::Bad));
                cells
            }
        })
        .collect();
    if rows.is_empty() {
        let said = match &app.snapshot {
            None => String::new(),
            Some(_) if !app.filter.is_empty() => format!("no job matches {:?}", app.filter),
            Some(_) => format!("no jobs under prefix {:?}", app.prefix),
        };
        frame.render_widget(
            Paragraph::new(vec![
                Line::styled(fit("", &HEADER.join("  "), area.width), paint.heading()),
                Line::raw(said),
            ]),
            area,
        );
        return;
    }
    let mut state = TableState::new()
        .with_offset(app.jobs_offset)
        .with_selected(app.cursor());
    app.page = usize::from(area.height.saturating_sub(1)).max(1);
    let table = table(paint, &HEADER, &HEADER, &widths, rows)
        .row_highlight_style(paint.selected())
        .highlight_symbol("> ");
    frame.render_stateful_widget(table, area, &mut state);
    app.jobs_offset = state.offset();
}

/// The tone of a health word: as the tables of the other commands colour it, and every state that
/// needs a person stands out (a new one `output::health_tone` does not know yet too).
fn health_of(state: crate::health::HealthState) -> Tone {
    match health_tone(state.as_str()) {
        Tone::Dim if state.needs_a_person() => Tone::Bad,
        tone => tone,
    }
}

/// A job's name as rows show it: a claim-only job's says so (as `list`'s).
fn name(job: &str, layout: KeyLayout) -> String {
    match layout {
        KeyLayout::Lease => job.to_string(),
        KeyLayout::ClaimOnly => format!("{job} (claim-only)"),
    }
}

fn job_cells(j: &JobRow, paint: &Paint, now: i64) -> Vec<(String, Style)> {
    let h = &j.health;
    let summary = j.view.summary();
    let state = summary.state(now).unwrap_or("-").to_string();
    let schedule = j
        .view
        .registry
        .as_ref()
        .and_then(|r| r.settings.schedule.clone())
        .unwrap_or_else(|| "-".into());
    vec![
        (name(&j.view.job, j.view.layout), Style::default()),
        (h.state.as_str().to_string(), paint.tone(health_of(h.state))),
        (schedule, Style::default()),
        (relative(h.next_due, now), Style::default()),
        (relative(h.last_success, now), Style::default()),
        (relative(summary.last_slot, now), Style::default()),
        (state.clone(), paint.tone(status_tone(&state))),
    ]
}

fn runs_in_progress(
    frame: &mut Frame,
    app: &App,
    paint: &Paint,
    area: Rect,
    now: i64,
    count: usize,
) {
    let parts = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).split(area);
    frame.render_widget(
        Paragraph::new(section(paint, format!("In progress ({count})"), area.width)),
        parts[0],
    );
    let runs = app
        .snapshot
        .as_ref()
        .map(|s| s.runs_in_progress())
        .unwrap_or_default();
    if runs.is_empty() {
        frame.render_widget(Paragraph::new("no run in progress"), parts[1]);
        return;
    }
    const HEADER: [&str; 6] = ["JOB", "SLOT", "ATT", "HOLDER", "RUNNING", "LEASE"];
    const COLUMNS: [&str; 6] = ["JOB", "SLOT", "ATT", "RUNNER", "RUNNING", "LEASE"];
    let widths = widths(area.width, &[0, 14, 3, 20, 7, 15], 0, 0, 8);
    let rows = runs
        .iter()
        .map(|(j, r)| {
            let mut cells = run_cells(r, paint, now);
            cells.insert(0, (name(&j.view.job, j.view.layout), Style::default()));
            cells.remove(5); // no RENEWED column here
            cells.truncate(6);
            cells
        })
        .collect();
    frame.render_widget(table(paint, &HEADER, &COLUMNS, &widths, rows), parts[1]);
}

/// A run in progress: SLOT, ATT, HOLDER, RUNNING, RENEWED, LEASE, KIND.
fn run_cells(r: &RunState, paint: &Paint, now: i64) -> Vec<(String, Style)> {
    let left = r.lease_end - now;
    let renewed = r
        .lease_ms
        .map(|lease| r.lease_end - lease)
        .map_or("-".to_string(), |at| {
            format!("{} ago", humanize((now - at).max(0) as u64))
        });
    vec![
        (slot(r.slot), Style::default()),
        (r.attempt.to_string(), Style::default()),
        (r.runner.clone(), Style::default()),
        (
            humanize((now - r.started_at).max(0) as u64),
            Style::default(),
        ),
        (renewed, Style::default()),
        (
            lease_left(left),
            if left > 0 {
                Style::default()
            } else {
                paint.tone(Tone::Bad)
            },
        ),
        (r.kind.as_str().to_string(), Style::default()),
    ]
}

/// The newest ended attempts of a job, newest first.
fn results_table(
    frame: &mut Frame,
    paint: &Paint,
    area: Rect,
    title: String,
    results: &[ResultEntry],
    now: i64,
) {
    let parts = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).split(area);
    frame.render_widget(Paragraph::new(section(paint, title, area.width)), parts[0]);
    if results.is_empty() {
        frame.render_widget(Paragraph::new("no ended run yet"), parts[1]);
        return;
    }
    const HEADER: [&str; 7] = ["SLOT", "ATT", "STATUS", "RUNNER", "ENDED", "TOOK", "RESULT"];
    let widths = widths(area.width, &[14, 3, 11, 18, 8, 6, 0], 6, 0, 8);
    let rows = results
        .iter()
        .map(|e| {
            let took = match (e.claimed_at, e.ended_at) {
                (Some(a), Some(b)) if b >= a => humanize((b - a) as u64),
                _ => "-".to_string(),
            };
            let status = if e.was_replaced() {
                "replaced".to_string()
            } else {
                e.status.clone()
            };
            vec![
                (slot(e.slot), Style::default()),
                (
                    e.attempt.map_or("-".to_string(), |a| a.to_string()),
                    Style::default(),
                ),
                (status.clone(), paint.tone(status_tone(&status))),
                (e.runner.clone(), Style::default()),
                (relative(e.ended_at, now), Style::default()),
                (took, Style::default()),
                (result_summary(Some(&e.result)), Style::default()),
            ]
        })
        .collect();
    frame.render_widget(table(paint, &HEADER, &HEADER, &widths, rows), parts[1]);
}

/// The open job's facts, one line each, as `inspect` tells them.
fn facts(j: &JobRow, format: Option<u32>, now: i64) -> Vec<Line<'static>> {
    let h = &j.health;
    let v = &j.view;
    let mut lines = vec![Line::raw(format!(
        "job      {} ({} layout, store format {}, {} results kept)",
        v.job,
        v.layout.as_str(),
        format.map_or("none".to_string(), |f| f.to_string()),
        v.history_entries
    ))];
    lines.push(Line::raw(format!(
        "health   {}: next {}, last success {}, last failure {}{}",
        h.state.as_str(),
        relative(h.next_due, now),
        relative(h.last_success, now),
        relative(h.last_failure, now),
        match h.failed_in_a_row {
            0 | 1 => String::new(),
            n => format!("; {n} failed in a row"),
        }
    )));
    // Runs claimed and never run to an end, as `inspect` says them.
    lines.extend(h.lost_slots.iter().map(|slot| {
        Line::raw(format!(
            "lost     the run of {} was claimed and never ran to an end",
            relative(Some(*slot), now)
        ))
    }));
    lines.extend(registry_facts(v.registry.as_ref(), now));
    lines.extend(standing_facts(j, now));
    lines.extend(last_failure_fact(&v.recent));
    lines
}

/// What the job's registry records: how it is scheduled and run, and the hosts that ran it.
fn registry_facts(
    registry: Option<&crate::store::registry::Registry>,
    now: i64,
) -> Vec<Line<'static>> {
    let Some(r) = registry else {
        return vec![Line::raw(
            "schedule none known: no `anarchon run --schedule` recorded this job",
        )];
    };
    let s = &r.settings;
    let mut lines = vec![Line::raw(format!(
        "schedule {} ({}), strategy {}, lease {}, max-late {}, overlap {}",
        s.schedule.as_deref().unwrap_or("none (explicit slots)"),
        s.tz,
        s.strategy,
        s.lease_ms
            .map_or("-".to_string(), |l| humanize(l.max(0) as u64)),
        humanize(s.max_late_ms.max(0) as u64),
        if s.overlap.is_empty() {
            "-"
        } else {
            &s.overlap
        }
    ))];
    let hosts: Vec<String> = r
        .hosts
        .iter()
        .map(|h| format!("{} ({})", h.host, crate::time::relative(h.last_seen, now)))
        .collect();
    if !hosts.is_empty() {
        lines.push(Line::raw(format!("hosts    {}", hosts.join(", "))));
    }
    lines
}

/// What holds the job up now, each an operator may act on: a pause, a slot waiting for the run
/// in progress, runs whose lease expired.
fn standing_facts(j: &JobRow, now: i64) -> Vec<Line<'static>> {
    let v = &j.view;
    let mut lines = Vec::new();
    if let Some(p) = v.pause.as_ref().filter(|p| p.is_paused(now)) {
        lines.push(Line::raw(format!(
            "paused   {} (since {})",
            p.describe(),
            p.paused_at.map_or("-".to_string(), crate::time::compact)
        )));
    }
    if let Some((slot_at, until)) = v.waiting_at(now) {
        lines.push(Line::raw(format!(
            "waiting  the run of {} waits for the run in progress to end, until {}",
            slot(slot_at),
            slot(until)
        )));
    }
    for run in &v.in_progress {
        let failed = ResultEntry::awaited_retry(&v.recent, run);
        if let Some(due) = failed.and_then(|r| r.retry_due()) {
            lines.push(Line::raw(format!(
                "retry    the run of {} failed (#{}); its retry is due {}",
                slot(run.slot),
                run.attempt,
                crate::time::relative(due, now)
            )));
        }
    }
    for l in &j.limits {
        lines.push(Line::raw(format!("limit    {}", l.summary())));
    }
    for expired in &j.health.expired_slots {
        lines.push(Line::raw(format!(
            "expired  {} lost its lease and nobody took it over (r releases it)",
            slot(*expired)
        )));
    }
    lines
}

/// The newest failure among the recent runs, what `l` opens (None: none failed).
fn last_failure_fact(recent: &[ResultEntry]) -> Option<Line<'static>> {
    let e = recent.iter().find(|e| {
        matches!(e.status.as_str(), "failed" | "interrupted")
                && !e.was_replaced()
                // A hand-over (a replica shut down: a deploy) is no failure; its takeover is
                // listed as itself.
                && e.result.get("handed_over_by").is_none()
    })?;
    let detail = crate::output::result_detail(&e.result);
    Some(Line::raw(format!(
        "failed   {} #{} on {}, {} (l shows it){}",
        slot(e.slot),
        e.attempt.map_or("-".to_string(), |a| a.to_string()),
        e.runner,
        result_summary(Some(&e.result)),
        if detail.is_empty() {
            String::new()
        } else {
            format!(": {detail}")
        }
    )))
}

fn job_view(frame: &mut Frame, app: &mut App, paint: &Paint, area: Rect) {
    let now = app.now();
    let Some(j) = app.selected_job() else {
        app.view = View::Jobs;
        return jobs_view(frame, app, paint, area);
    };
    let facts = facts(j, app.snapshot.as_ref().and_then(|s| s.format), now);
    let runs = j.runs_in_progress();
    let parts = frame_parts(
        frame,
        app,
        paint,
        area,
        &[
            Constraint::Length(facts.len() as u16),
            Constraint::Length(2 + runs.len().clamp(1, 5) as u16),
            Constraint::Min(3),
        ],
    );
    frame.render_widget(Paragraph::new(facts), parts[0]);
    // The job's runs in progress, the one `r` releases selected.
    let run_parts = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).split(parts[1]);
    frame.render_widget(
        Paragraph::new(section(
            paint,
            format!("In progress ({})", runs.len()),
            area.width,
        )),
        run_parts[0],
    );
    if runs.is_empty() {
        frame.render_widget(Paragraph::new("no run in progress"), run_parts[1]);
    } else {
        const HEADER: [&str; 7] = [
            "SLOT", "ATT", "HOLDER", "RUNNING", "RENEWED", "LEASE", "KIND",
        ];
        const COLUMNS: [&str; 7] = [
            "SLOT", "ATT", "RUNNER", "RUNNING", "RENEWED", "LEASE", "KIND",
        ];
        let widths = widths(area.width, &[14, 3, 0, 7, 8, 15, 9], 2, 2, 10);
        let rows = runs.iter().map(|r| run_cells(r, paint, now)).collect();
        let mut state = TableState::new().with_selected(Some(app.run_cursor.min(runs.len() - 1)));
        frame.render_stateful_widget(
            table(paint, &HEADER, &COLUMNS, &widths, rows)
                .row_highlight_style(paint.selected())
                .highlight_symbol("> "),
            run_parts[1],
            &mut state,
        );
    }
    results_table(
        frame,
        paint,
        parts[2],
        format!("Newest results ({})", j.view.recent.len()),
        &j.view.recent,
        now,
    );
}

fn logs_view(frame: &mut Frame, app: &mut App, paint: &Paint, area: Rect) {
    let parts = frame_parts(
        frame,
        app,
        paint,
        area,
        &[Constraint::Length(1), Constraint::Min(1)],
    );
    let job = app.logs.job.clone();
    frame.render_widget(
        Paragraph::new(section(
            paint,
            format!("anarchon logs {job}: its newest failed or interrupted run"),
            area.width,
        )),
        parts[0],
    );
    app.page = usize::from(parts[1].height).max(1);
    let width = usize::from(area.width).max(1);
    let text: Text = match &app.logs.lines {
        None => Text::raw("reading…"),
        Some(lines) => {
            // Long lines are wrapped (a stderr line is read whole here); scrolling is by screen
            // lines, kept within the text.
            let rows: usize = lines
                .iter()
                .map(|l| l.chars().count().div_ceil(width).max(1))
                .sum();
            app.logs.scroll = app.logs.scroll.min(rows.saturating_sub(app.page));
            lines
                .iter()
                .map(|l| Line::raw(l.replace('\t', "    ")))
                .collect()
        }
    };
    frame.render_widget(
        Paragraph::new(text)
            .wrap(Wrap { trim: false })
            .scroll((app.logs.scroll as u16, 0)),
        parts[1],
    );
}

/// The help: every key, and how the actions are done (it fits 80x24; smaller terminals scroll
/// it).
const HELP: &str = "\
Jobs worst first (missed, expired, failing, late: as `list --sort health`), read
again every --interval; times count on between reads.
  Up Down j k PgUp PgDn g G  move; in a job, pick one of its runs in progress
  Enter   open the job: settings, pause, runs, results (as `anarchon inspect`)
  Esc     back; in the jobs, clear the filter
  /       filter the jobs by name as you type (Enter keeps it, Esc clears it)
  l       the job's last failure's output (`anarchon logs JOB`)
  r       release a run in progress (`anarchon release JOB --slot S --no-wait`)
  p       pause the job (`anarchon pause JOB`), or resume it (`anarchon resume`)
  n       run the job now (`anarchon run-now JOB --shell -- CMD`)
  ?       this help        q, Ctrl-C  quit
Actions ask first: type a reason if you like (release and pause record it),
Enter, then y does it; n or Esc changes nothing. Each is anarchon's own command,
run as at a shell against the same server and prefix; the status line shows its
answer. The store keeps no job's command (commands may hold secrets), so n asks
for one, leaves the screen, runs it in this terminal (Ctrl-C stops it) and comes
back on Enter. A server that does not answer is said on the status line with
since when; the last picture stays until it answers.";

fn help_view(frame: &mut Frame, app: &mut App, paint: &Paint, area: Rect) {
    let parts = frame_parts(frame, app, paint, area, &[Constraint::Min(1)]);
    let mut lines = vec![section(paint, "Help".to_string(), area.width)];
    lines.extend(HELP.lines().map(|l| Line::raw(l.to_string())));
    let last = lines.len().saturating_sub(usize::from(parts[0].height));
    app.help_scroll = app.help_scroll.min(last);
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .scroll((app.help_scroll as u16, 0)),
        parts[0],
    );
}

/// An action's dialog in the middle of the screen.
fn dialog_box(frame: &mut Frame, app: &App, dialog: &Dialog, paint: &Paint, area: Rect) {
    let width = area.width.saturating_sub(4).min(72);
    let inner = usize::from(width.saturating_sub(2)).max(1);
    let explain = dialog.action.explain(app.now());
    // Wrapped at words, a line may take a little less than the width: one spare line.
    let explain_lines = explain.chars().count().div_ceil(inner) + 1;
    let mut lines: Vec<Line> = vec![Line::raw(explain), Line::raw("")];
    let asks = dialog.action.asks();
    if let Some(asks) = asks {
        let shown = match dialog.stage {
            Stage::Text => format!("{}▌", dialog.text),
            Stage::Confirm if dialog.text.is_empty() => "none".to_string(),
            Stage::Confirm => dialog.text.clone(),
        };
        lines.push(Line::from(vec![
            Span::styled(format!("{asks}: "), paint.heading()),
            Span::raw(shown),
        ]));
        lines.push(Line::raw(""));
    }
    lines.push(match dialog.stage {
        Stage::Text => Line::raw("Enter: go on    Esc: cancel"),
        Stage::Confirm => Line::from(vec![
            Span::styled(dialog.action.question(&dialog.text), paint.heading()),
            Span::raw(" y/n"),
        ]),
    });
    let height = (explain_lines + lines.len() + 1) as u16;
    let height = height.min(area.height);
    let rect = Rect {
        x: area.x + (area.width.saturating_sub(width)) / 2,
        y: area.y + (area.height.saturating_sub(height)) / 2,
        width,
        height,
    };
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: false }).block(
            Block::default().borders(Borders::ALL).title(Span::styled(
                format!(" {} ", dialog.action.title()),
                paint.heading(),
            )),
        ),
        rect,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::top::model::{Action, Snapshot};
    use crate::store::view::JobView;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    fn screen(app: &mut App, width: u16, height: u16) -> Vec<String> {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        terminal.draw(|f| draw(f, app)).unwrap();
        let buffer = terminal.backend().buffer().clone();
        (0..height)
            .map(|y| {
                (0..width)
                    .map(|x| buffer[(x, y)].symbol().to_string())
                    .collect::<String>()
                    .trim_end()
                    .to_string()
            })
            .collect()
    }

    fn app() -> App {
        let now = 1_800_000_000_000;
        let mut held = JobView::unread(
            "a-job-with-a-name-far-too-long-for-its-column",
            KeyLayout::Lease,
        );
        held.in_progress.push(RunState {
            slot: now - 60_000,
            status: crate::store::RunStatus::Running,
            attempt: 1,
            token: "t".into(),
            runner: "ip-10-0-12-34.eu-west-1.compute.internal:4311".into(),
            lease_end: now + 20_000,
            claimed_at: now - 60_000,
            started_at: now - 60_000,
            finished_at: None,
            kind: crate::store::RunKind::Scheduled,
            lease_ms: Some(30_000),
            fence: None,
        });
        let mut app = App::new("cron:", "redis://127.0.0.1:6379", false);
        let views = (0..30)
            .map(|i| JobView::unread(&format!("job-{i:02}"), KeyLayout::Lease))
            .chain([held])
            .collect();
        app.apply(Snapshot::at(
            views,
            Vec::new(),
            now,
            std::time::Instant::now(),
            Some(1),
        ));
        // The running job sorts after the 30 unknown ones: selecting it scrolls the table.
        app.move_to_end(true);
        app
    }

    #[test]
    fn every_view_fits_80x24_cut_not_wrapped() {
        let mut app = app();
        let lines = screen(&mut app, 80, 24);
        assert!(
            lines[0].starts_with("anarchon top · cron: · 127.0.0.1:6379 "),
            "{lines:#?}"
        );
        assert!(lines[0].contains("31 jobs, 1 in progress"), "{lines:#?}");
        // The selected job's row is shown, its name cut with an ellipsis.
        let selected = lines
            .iter()
            .find(|l| l.starts_with("> "))
            .expect("a selected row");
        assert!(
            selected.starts_with("> a-job-with-a-na… running"),
            "{lines:#?}"
        );
        let holder = lines
            .iter()
            .find(|l| l.contains("…:4311"))
            .expect("the holder, its pid whole");
        assert!(holder.contains("s left"), "{holder}");
        assert!(lines[23].contains("q quit"), "{lines:#?}");
        assert!(
            lines.iter().any(|l| l.starts_with("─ In progress (1) ─")),
            "{lines:#?}"
        );
        for view in [View::Job, View::Help] {
            app.view = view;
            let lines = screen(&mut app, 80, 24);
            assert!(lines[23].contains("q quit"), "{view:?}: {lines:#?}");
        }
        app.view = View::Job;
        let lines = screen(&mut app, 80, 24);
        assert!(
            lines.iter().any(|l| l.starts_with("health   running")),
            "{lines:#?}"
        );
        app.dialog = Some(Dialog::new(Action::Pause { job: "j".into() }));
        let lines = screen(&mut app, 80, 24);
        assert!(
            lines.iter().any(|l| l.contains("Reason (optional): ▌")),
            "{lines:#?}"
        );
        assert!(lines[23].contains("Esc cancel"), "{lines:#?}");
    }

    #[test]
    fn a_tiny_terminal_is_drawn_without_a_panic() {
        let mut app = app();
        for view in [View::Jobs, View::Job, View::Logs, View::Help] {
            app.view = view;
            for (w, h) in [(1, 1), (20, 5), (40, 10), (200, 60)] {
                screen(&mut app, w, h);
            }
        }
        app.dialog = Some(Dialog::new(Action::RunNow {
            job: "j".into(),
            strategy: None,
        }));
        for (w, h) in [(1, 1), (20, 5), (40, 10)] {
            screen(&mut app, w, h);
        }
    }
}
