//! `anarchon timeline`'s settings, resolved once from its flags.

use std::path::PathBuf;
use std::time::Duration;

use crate::cli::{StrategyName, TimelineArgs};
use crate::error::{Error, Result};
use crate::store::Layout;
use crate::time::{RangeEnd, Since};

/// Where `--svg` writes the picture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SvgTarget {
    /// `--svg -`: stdout, instead of the text.
    Stdout,
    File(PathBuf),
}

/// `anarchon timeline`.
#[derive(Debug, Clone)]
pub struct TimelineSettings {
    /// The jobs named (empty with `--all`).
    pub jobs: Vec<String>,
    /// Every job under the prefix with an attempt in the range.
    pub all: bool,
    pub layout: Option<Layout>,
    /// Start of the range (None: an hour before its end).
    pub since: Option<Since>,
    /// End of the range (None: now).
    pub until: Option<RangeEnd>,
    /// Columns of the text picture (None: the terminal's, or [`DEFAULT_WIDTH`] when piped).
    pub width: Option<u16>,
    /// How long after its slot a first claim counts late (None: the job's jitter and
    /// [`crate::store::attempt::LATE_SLACK_MS`]).
    pub late_after: Option<Duration>,
    /// How long after its slot a slot with no run is missed (None: the job's default grace,
    /// `crate::health::default_grace`), as `check --grace`.
    pub grace: Option<Duration>,
    pub svg: Option<SvgTarget>,
}

/// The width of the text picture when stdout is no terminal.
pub const DEFAULT_WIDTH: u16 = 100;

/// The range when `--since` is not given: this long before its end.
pub const DEFAULT_RANGE: Duration = Duration::from_secs(3600);

impl TimelineSettings {
    /// `json`: the command prints JSON (`--svg -` then has no stdout to write to).
    pub fn resolve(args: TimelineArgs, json: bool) -> Result<Self> {
        let svg = args.svg.map(|path| {
            if path.as_os_str() == "-" {
                SvgTarget::Stdout
            } else {
                SvgTarget::File(path)
            }
        });
        if json && svg == Some(SvgTarget::Stdout) {
            return Err(Error::usage(
                "--svg - and --json both want stdout\n  hint: write the SVG to a file (--svg timeline.svg), or leave out --json",
            ));
        }
        Ok(TimelineSettings {
            jobs: if args.all { Vec::new() } else { args.jobs },
            all: args.all,
            layout: args.strategy.map(StrategyName::layout),
            since: args.since,
            until: args.until,
            width: args.width,
            late_after: args.late_after,
            grace: args.grace,
            svg,
        })
    }
}
