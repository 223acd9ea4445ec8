//! How results reach the user: one JSON document with `--json`, text otherwise; colour only on a
//! terminal, never with NO_COLOR or `--color never`.

use std::io::IsTerminal;

use serde::Serialize;

use crate::cli::{ColorChoice, GlobalArgs};

#[derive(Debug, Clone, Copy)]
pub struct Output {
    pub json: bool,
    pub color: bool,
    /// Whether stdout is a terminal: tables, abbreviations and "3m ago" hints only there.
    pub tty: bool,
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
            json: global.json,
            color,
            tty,
        }
    }

    /// Prints one JSON document on stdout.
    pub fn print_json<T: Serialize>(&self, value: &T) {
        match serde_json::to_string_pretty(value) {
            Ok(text) => println!("{text}"),
            Err(e) => eprintln!("error: cannot encode the JSON output: {e}"),
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
