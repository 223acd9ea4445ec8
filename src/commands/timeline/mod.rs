//! `anarchon timeline JOB... [--all] [--since T] [--until T]`: what happened, as a picture, as
//! text (fit to the terminal), SVG (`--svg`) or JSON: the front-end of [`crate::timeline`] (the
//! model, the read and the pictures, which the status page draws too).

use crate::commands::Context;
use crate::error::{Error, ExitCode, Result};
use crate::settings::timeline::{DEFAULT_RANGE, DEFAULT_WIDTH, SvgTarget, TimelineSettings};
use crate::store::discover::JobRef;
use crate::time::{millis, rfc3339};

use crate::timeline::{Spec, TimelineReport, Window, svg, text};

pub async fn execute(settings: &TimelineSettings, ctx: &Context) -> Result<ExitCode> {
    crate::store::validate_prefix(ctx.prefix())?;
    for job in &settings.jobs {
        ctx.lease_keys(job)?;
    }
    let mut conn = ctx.connect().await?;
    let check = crate::store::format::check_for_read(&mut conn, ctx.prefix()).await?;
    let now = check.server_now_ms;
    let window = window(settings, now)?;
    let refs = job_refs(&mut conn, ctx.prefix(), settings).await?;
    let spec = Spec {
        all: settings.all,
        grace: settings.grace,
        late_after: settings.late_after.map(millis),
    };
    let (mut report, empty) =
        crate::timeline::read(&mut conn, ctx.prefix(), &check, &spec, window, &refs).await?;
    if !settings.all {
        // As named, in that order.
        report
            .jobs
            .sort_by_key(|j| settings.jobs.iter().position(|n| *n == j.job));
    }
    let code = if report.errors.is_empty() {
        ExitCode::Ok
    } else {
        ExitCode::StoreData
    };
    save_svg(settings, &report)?;
    for bad in &report.errors {
        crate::errln!("anarchon: {}: cannot be read: {}", bad.job, bad.error);
    }
    if !print(settings, ctx, &report) {
        return Ok(code);
    }
    if !settings.all {
        for (job, results) in &empty {
            crate::errln!(
                "{}",
                newest_run_hint(&mut conn, job, results, window).await?
            );
        }
    }
    Ok(code)
}

/// The range asked for (`--since`, `--until`) by the server's clock; an empty one is refused.
fn window(settings: &TimelineSettings, now: i64) -> Result<Window> {
    let until = settings.until.map_or(now, |u| u.resolve(now));
    let since = settings
        .since
        .map_or(until - millis(DEFAULT_RANGE), |s| s.resolve(now));
    if since >= until {
        return Err(Error::usage(format!(
            "the range is empty: --since {} is not before --until {}\n  hint: give --since an earlier time, or a longer duration ago",
            rfc3339(since),
            rfc3339(until)
        )));
    }
    Ok(Window { since, until, now })
}

/// The jobs to draw: every job with `--all` (of the layout asked for), else those named, each
/// located in the store.
async fn job_refs(
    conn: &mut crate::connection::Connection,
    prefix: &str,
    settings: &TimelineSettings,
) -> Result<Vec<JobRef>> {
    if settings.all {
        return Ok(crate::store::discover::find_jobs(conn, prefix, "*")
            .await?
            .into_iter()
            .filter(|j| settings.layout.is_none_or(|l| j.layout == l))
            .collect());
    }
    let mut refs = Vec::with_capacity(settings.jobs.len());
    for job in &settings.jobs {
        let (layout, _) = crate::store::job::locate_job(conn, prefix, job, settings.layout).await?;
        refs.push(JobRef {
            name: job.clone(),
            layout,
        });
    }
    Ok(refs)
}

/// Writes the SVG to the file `--svg` names, if it names one.
fn save_svg(settings: &TimelineSettings, report: &TimelineReport) -> Result<()> {
    if let Some(SvgTarget::File(path)) = &settings.svg {
        std::fs::write(path, svg::render(report)).map_err(|e| {
            Error::Other(format!(
                "cannot write the SVG to {}: {e}\n  hint: give --svg a path in a directory you can write to",
                path.display()
            ))
        })?;
        crate::errln!("anarchon: wrote the timeline to {}", path.display());
    }
    Ok(())
}

/// Prints the report: JSON, SVG on stdout, or the text picture. Returns whether the text picture
/// was printed whole (the hints for empty jobs follow only it).
fn print(settings: &TimelineSettings, ctx: &Context, report: &TimelineReport) -> bool {
    if ctx.out.json {
        ctx.out.print_json(report);
        return false;
    }
    if settings.svg == Some(SvgTarget::Stdout) {
        crate::output::write_raw(svg::render(report).as_bytes());
        return false;
    }
    let width = usize::from(settings.width.unwrap_or_else(|| terminal_width(ctx)));
    for line in text::render(report, width, &ctx.out) {
        crate::outln!("{line}");
        if crate::output::output_gone() {
            return false;
        }
    }
    true
}

/// The width of the picture: the terminal's, or [`DEFAULT_WIDTH`] when stdout is none (or a
/// terminal that reports no width worth drawing in).
fn terminal_width(ctx: &Context) -> u16 {
    let tty = ctx
        .out
        .tty
        .then(|| terminal_size::terminal_size_of(std::io::stdout()))
        .flatten()
        .map(|(terminal_size::Width(w), _)| w)
        .filter(|w| *w >= 40);
    tty.unwrap_or(DEFAULT_WIDTH).min(2000)
}

/// What to say of a named job with nothing in the range: when its newest run was, and a --since
/// that reaches it.
async fn newest_run_hint(
    conn: &mut crate::connection::Connection,
    job: &str,
    results: &str,
    window: Window,
) -> Result<String> {
    let newest = crate::store::read::results_page(conn, results, i64::MIN, i64::MAX, 0, 1).await?;
    let nothing = format!(
        "no attempt of {job} from {} to {}",
        rfc3339(window.since),
        rfc3339(window.until)
    );
    let Some(newest) = newest.into_iter().next() else {
        return Ok(format!("{nothing}; it has no ended run at all"));
    };
    let at = newest.claimed_at.unwrap_or(newest.slot);
    if at > window.until {
        return Ok(format!(
            "{nothing}\n  hint: its newest run ({}) is after --until",
            rfc3339(newest.slot)
        ));
    }
    let ago = (window.now - at).max(0);
    let reach = match ago {
        a if a < 3_600_000 => format!("{}m", a / 60_000 + 1),
        a if a < 2 * 86_400_000 => format!("{}h", a / 3_600_000 + 1),
        a => format!("{}d", a / 86_400_000 + 1),
    };
    Ok(format!(
        "{nothing}\n  hint: its newest run is {} (claimed {}): `anarchon timeline {job} --since {reach}` reaches it",
        rfc3339(newest.slot),
        rfc3339(at)
    ))
}

/// The JSON Schema of this command's `--json` output (docs/schemas/, checked by tests/it/schemas.rs).
pub(crate) fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![(
        "timeline",
        crate::commands::output_schema::<TimelineReport>(),
    )]
}
