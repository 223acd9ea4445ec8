//! How results reach the user: one JSON document with `--json`, text otherwise; colour only on a
//! terminal, never with NO_COLOR or `--color never`.

use std::io::IsTerminal;

use serde::Serialize;

use crate::cli::{ColorChoice, GlobalArgs, OutputFormat, TimeFormat};

mod fit;
pub(crate) use fit::cut;

#[derive(Debug, Clone, Copy)]
pub struct Output {
    pub json: bool,
    pub color: bool,
    /// Whether stdout is a terminal: tables, abbreviations and "3m ago" hints only there.
    pub tty: bool,
    /// How times are shown (`--time-format`).
    pub time_format: TimeFormat,
    /// Whether tables have their header row (`--no-headers`).
    pub headers: bool,
    /// How tables are cut (`-o wide`, `-o name`).
    pub tables: TableStyle,
}

/// How a table is printed (`-o`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableStyle {
    /// Every column; on a terminal, the cuttable ones cut to fit its width.
    Fitted,
    /// Every column, whole (`-o wide`).
    Wide,
    /// Only each row's first column (`-o name`).
    Names,
}

/// A colour for a word of output.
#[derive(Debug, Clone, Copy)]
pub enum Tone {
    Good,
    Warn,
    Bad,
    Dim,
}

impl Output {
    pub fn from_args(global: &GlobalArgs) -> Self {
        let tty = std::io::stdout().is_terminal();
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let color = match global.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => tty && !no_color,
        };
        Output {
            json: global.json || global.output == Some(OutputFormat::Json),
            color,
            tty,
            time_format: global.time_format,
            headers: !global.no_headers,
            tables: match global.output {
                Some(OutputFormat::Wide) => TableStyle::Wide,
                Some(OutputFormat::Name) => TableStyle::Names,
                Some(OutputFormat::Table | OutputFormat::Json) | None => TableStyle::Fitted,
            },
        }
    }

    /// Prints one JSON document on stdout, streamed as it is encoded (a `list --json` of 100,000
    /// jobs is tens of MB: never held whole in memory). A closed pipe ends it quietly, as
    /// [`write_line`] does.
    pub fn print_json<T: Serialize>(&self, value: &T) {
        use std::io::Write;
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        let written = serde_json::to_writer_pretty(&mut out, value)
            .map_err(std::io::Error::from)
            .and_then(|()| writeln!(out))
            .and_then(|()| out.flush());
        note_write_failure(written);
    }

    /// One JSON document on one line (`run` and `run-now`, whose output is a log line per run).
    pub fn print_json_line<T: Serialize>(&self, value: &T) {
        match serde_json::to_string(value) {
            Ok(text) => write_line(&text),
            Err(e) => crate::errln!("error: cannot encode the JSON output: {e}"),
        }
    }

    /// `text` in the tone's colour when colour is on.
    pub fn paint(&self, text: &str, tone: Tone) -> String {
        if !self.color {
            return text.to_string();
        }
        let code = match tone {
            Tone::Good => "32;1",
            Tone::Warn => "33;1",
            Tone::Bad => "31;1",
            Tone::Dim => "2",
        };
        format!("\x1b[{code}m{text}\x1b[0m")
    }
}

impl Output {
    /// A table: bordered on a terminal, plain aligned columns when piped (for grep and awk).
    pub fn table(&self, header: &[&str], rows: Vec<Vec<String>>) -> String {
        use comfy_table::{Table, presets};
        if self.tables == TableStyle::Names {
            return rows
                .into_iter()
                .filter_map(|row| row.into_iter().next())
                .collect::<Vec<_>>()
                .join("\n");
        }
        let mut table = Table::new();
        // Borderless, as kubectl and gh print: columns two spaces apart, one row per line.
        table.load_preset(presets::NOTHING);
        let fit = self.tty && self.tables == TableStyle::Fitted;
        let fitted = match table.width().map(usize::from).filter(|_| fit) {
            // A terminal's width is kept by what gives way first (src/output/fit.rs: free text
            // cut, narrower gaps, the least needed columns left out, the name cut last; never a
            // pid, a token's digits or a time). A terminal that reports no width worth fitting
            // (0 columns, as under some multiplexers) gets the whole table.
            Some(width) if width >= 40 => fit::fit_to_width(header, rows, width),
            _ => fit::Fitted {
                header: header.to_vec(),
                rows,
                gap: 2,
            },
        };
        let (header, rows, gap) = (&fitted.header, fitted.rows, fitted.gap as u16);
        if self.headers {
            table.set_header(header.iter().map(|h| h.to_string()));
        }
        // A STATUS, STATE or HEALTH column is coloured by what it says (failed red, running
        // yellow, missed red...), through comfy-table's own styling, which keeps the widths right.
        let tone_of = |column: usize, text: &str| match header.get(column).copied() {
            Some("STATUS" | "STATE") => Some(status_tone(text)),
            Some("HEALTH") => Some(health_tone(text)),
            Some("EVENT") => Some(event_tone(text)),
            _ => None,
        };
        for row in rows {
            let cells = row.into_iter().enumerate().map(|(i, text)| {
                let cell = comfy_table::Cell::new(&text);
                match tone_of(i, &text).filter(|_| self.color) {
                    Some(Tone::Good) => cell.fg(comfy_table::Color::Green),
                    Some(Tone::Bad) => cell.fg(comfy_table::Color::Red),
                    Some(Tone::Warn) => cell.fg(comfy_table::Color::Yellow),
                    Some(Tone::Dim) | None => cell,
                }
            });
            table.add_row(cells.collect::<Vec<_>>());
        }
        // No gap after the last column: a coloured cell keeps its padding inside its colour, where
        // trimming the line cannot reach it, and a row of exactly the terminal's width would wrap.
        let last = header.len().saturating_sub(1);
        for (i, column) in table.column_iter_mut().enumerate() {
            column.set_padding((0, if i == last { 0 } else { gap }));
        }
        let text = table.to_string();
        // Plain mode pads the last column too; trailing blanks only get in the way of scripts.
        text.lines()
            .map(str::trim_end)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// A time for text output: RFC 3339, plus "(3m ago)" on a terminal.
    pub fn when(&self, ms: Option<i64>, now_ms: i64) -> String {
        let Some(ms) = ms else {
            return "-".to_string();
        };
        match self.time_format {
            TimeFormat::Auto if self.tty => format!(
                "{} ({})",
                crate::time::compact(ms),
                crate::time::relative(ms, now_ms)
            ),
            TimeFormat::Relative => crate::time::relative(ms, now_ms),
            _ => self.time(ms),
        }
    }

    /// A time that is best read relative to now (NEXT, LAST OK): "in 3m" / "2h ago" on a terminal
    /// (and with --time-format relative), else as [`Output::time`].
    pub fn relative(&self, ms: Option<i64>, now_ms: i64) -> String {
        let Some(ms) = ms else {
            return "-".to_string();
        };
        match self.time_format {
            TimeFormat::Relative => crate::time::relative(ms, now_ms),
            TimeFormat::Auto if self.tty => crate::time::relative(ms, now_ms),
            TimeFormat::Auto | TimeFormat::Compact | TimeFormat::Rfc3339 => self.time(ms),
        }
    }

    /// A time in a table: compact on a terminal (UTC, whole seconds), RFC 3339 with milliseconds
    /// when piped, for scripts.
    pub fn time(&self, ms: i64) -> String {
        match self.time_format {
            TimeFormat::Compact | TimeFormat::Relative => crate::time::compact(ms),
            TimeFormat::Rfc3339 => crate::time::rfc3339(ms),
            TimeFormat::Auto if self.tty => crate::time::compact(ms),
            TimeFormat::Auto => crate::time::rfc3339(ms),
        }
    }

    /// A token for text output: whole when piped, abbreviated on a terminal.
    pub fn token(&self, token: &str) -> String {
        // By characters: a token read from the store may be anything, not ASCII hex.
        if self.tty && token.chars().count() > 12 {
            format!("{}…", token.chars().take(8).collect::<String>())
        } else {
            token.to_string()
        }
    }
}

/// Events as a table (`inspect`, `history --events`): WHEN, EVENT, SLOT, ATTEMPT, BY, DETAIL;
/// an event's reason leads its detail.
pub fn event_table(
    out: &Output,
    events: &[crate::store::events::Event],
    now_ms: i64,
) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let header = vec!["WHEN", "EVENT", "SLOT", "ATTEMPT", "BY", "DETAIL"];
    let rows = events
        .iter()
        .map(|e| {
            let detail = match (&e.reason, e.detail.is_empty()) {
                (Some(r), true) => format!("reason: {r}"),
                (Some(r), false) => format!("reason: {r}; {}", e.detail),
                (None, _) => e.detail.clone(),
            };
            let (detail, by) = (shown_text(&detail), shown_text(&e.by));
            vec![
                // How long ago, as kubectl describe's AGE, on a terminal (80 columns hold the
                // row); the time itself when piped.
                out.relative(Some(e.at), now_ms),
                e.event.clone(),
                e.slot.map_or("-".to_string(), |s| out.time(s)),
                e.attempt.map_or("-".to_string(), |a| a.to_string()),
                by,
                if detail.is_empty() {
                    "-".to_string()
                } else {
                    detail
                },
            ]
        })
        .collect();
    (header, rows)
}

/// Text another writer put in the store, as a table shows it: control characters (an escape
/// sequence that would clear the screen, a carriage return) as their escapes, and at most 512
/// characters (`--json` has all of it).
fn shown_text(text: &str) -> String {
    const LONGEST: usize = 512;
    let mut shown = String::new();
    for (i, c) in text.chars().enumerate() {
        if i == LONGEST {
            shown.push('…');
            break;
        }
        if c.is_control() {
            shown.extend(c.escape_default());
        } else {
            shown.push(c);
        }
    }
    shown
}

/// How an event's word is coloured: what lost or refused a run in red or yellow.
fn event_tone(event: &str) -> Tone {
    match event {
        "failed" | "lease_expired" => Tone::Bad,
        "took_over" | "handed_over" | "skipped" | "superseded" | "released" | "replaced"
        | "release" | "pause" => Tone::Warn,
        "finished" | "resume" => Tone::Good,
        _ => Tone::Dim,
    }
}

/// How a run's result says it ended, whole, for a line that ends a wait (`wait`, `logs -f`): an
/// exit code, a signal, a timeout, or the reason it ended without its command's result (a
/// release, a replacement).
pub fn how_it_ended(result: &serde_json::Value) -> Option<String> {
    crate::store::attempt::command_end(result).or_else(|| {
        result
            .get("reason")
            .and_then(|v| v.as_str())
            .map(str::to_string)
    })
}

/// The server's clock in a `--json` document: `server_time` (ms) and its RFC 3339 twin
/// (`server_time_rfc3339`: the name `server_time_time` would not read). Flattened into reports.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct ServerClock {
    /// The server's clock when the command read the store, ms since the epoch.
    pub server_time: i64,
    /// The same, RFC 3339.
    pub server_time_rfc3339: String,
}

impl ServerClock {
    pub fn at(ms: i64) -> Self {
        ServerClock {
            server_time: ms,
            server_time_rfc3339: crate::time::rfc3339(ms),
        }
    }
}

/// How a HEALTH column's word is coloured: what needs a person red or yellow, a healthy job green.
pub fn health_tone(health: &str) -> Tone {
    match health {
        "ok" => Tone::Good,
        "missed" | "failing" | "expired" => Tone::Bad,
        "late" | "running" => Tone::Warn,
        _ => Tone::Dim,
    }
}

/// The tone a run status is painted in.
pub fn status_tone(status: &str) -> Tone {
    match status {
        "finished" => Tone::Good,
        "failed" | "interrupted" | "expired" => Tone::Bad,
        "running" => Tone::Warn,
        _ => Tone::Dim,
    }
}

/// The last line of what a run left on stderr (where programs put the error that ended them), or
/// why it ended when it did not run a command, for one table cell (`history -v`; `logs` shows all
/// of it).
pub fn result_detail(result: &serde_json::Value) -> String {
    let text = result
        .get("stderr_tail")
        .or_else(|| result.get("spawn_error"))
        .or_else(|| result.get("reason"))
        .and_then(|v| v.as_str())
        .and_then(|t| t.lines().rev().find(|l| !l.trim().is_empty()))
        .unwrap_or("");
    if text.chars().count() > 60 {
        format!("{}…", text.chars().take(59).collect::<String>())
    } else {
        text.to_string()
    }
}

/// A short text for a result: the exit code for `run`'s results, the reason for a run that ended
/// without one, else compact JSON.
pub fn result_summary(result: Option<&serde_json::Value>) -> String {
    match result {
        None | Some(serde_json::Value::Null) => "-".to_string(),
        Some(v) if v.get("exit_code").is_some() || v.get("signal").is_some() => {
            let end = crate::store::attempt::command_end(v).unwrap_or_else(|| v.to_string());
            // A failed attempt given a retry (`--retries`) says which, and when it was due.
            match (v.get("retry"), v.get("retry_at").and_then(|t| t.as_i64())) {
                (Some(nth), Some(at)) => {
                    format!("{end}; retry {nth} at {}", crate::time::rfc3339(at))
                }
                _ => end,
            }
        }
        Some(v) => {
            // Why a run ended without a command's result (interrupted, released, skipped); else a
            // script's own result (`finish --result-json`) as `key=value` words, which a person
            // reads at a glance where JSON's quotes and braces are noise.
            let text = match (v.get("reason").and_then(|r| r.as_str()), v.as_object()) {
                // A run that ended for a reason (released, replaced, skipped, its lease lost):
                // the reason, whatever else the result holds (the command's own result, under
                // "command", is `logs`'s to show).
                (Some(reason), Some(_)) => reason.to_string(),
                (_, Some(fields)) => fields
                    .iter()
                    .map(|(k, v)| match v {
                        serde_json::Value::String(s) => format!("{k}={s}"),
                        other => format!("{k}={other}"),
                    })
                    .collect::<Vec<_>>()
                    .join(" "),
                _ => v.to_string(),
            };
            if text.chars().count() > 40 {
                format!("{}…", text.chars().take(39).collect::<String>())
            } else {
                text
            }
        }
    }
}

pub use crate::lines::{
    error_line, note_write_failure, output_gone, write_failure, write_line, write_raw,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_reads_as_a_person_would_say_it() {
        let said = |v: serde_json::Value| result_summary(Some(&v));
        assert_eq!(
            said(serde_json::json!({"exit_code": 3, "duration_ms": 5})),
            "exit 3"
        );
        // A failed attempt given a retry.
        assert_eq!(
            said(
                serde_json::json!({"exit_code": 3, "duration_ms": 5, "retry_at": 1796220300000_i64, "retry": 1})
            ),
            "exit 3; retry 1 at 2026-12-02T14:05:00.000Z"
        );
        // A replaced run: its reason, not the command's result it also holds.
        let replaced = serde_json::json!({
            "released_by": "host-b:1", "reason": "replaced by 2026-12-04T20:33:20.000Z",
            "replaced_by": 1, "command": {"exit_code": 143, "duration_ms": 5053}
        });
        assert_eq!(said(replaced), "replaced by 2026-12-04T20:33:20.000Z");
        // A script's own result: key=value words.
        assert_eq!(
            said(serde_json::json!({"rows": 42, "ok": true})),
            "ok=true rows=42"
        );
    }
}
