//! `anarchon calendar set|show|list|delete`: named calendars of exclusion windows that jobs share
//! (`run --calendar NAME`; [`crate::store::calendar`]). Every edit is one transaction with its
//! audit entry.

use serde::Serialize;

use crate::commands::Context;
use crate::error::{Error, ExitCode, Message, Result};
use crate::exclusion::Exclusion;
use crate::settings::operator::CalendarSettings;
use crate::store::calendar::{self, Calendar, Edit};

/// `calendar show --json`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct ShowReport<'a> {
    #[serde(flatten)]
    calendar: &'a Calendar,
    /// Its edits, newest first (at most 20).
    edits: &'a [Edit],
}

/// `calendar list --json`.
#[derive(Debug, Serialize, schemars::JsonSchema)]
struct ListReport<'a> {
    calendars: &'a [Calendar],
}

pub async fn execute(settings: CalendarSettings, ctx: &Context) -> Result<ExitCode> {
    match settings {
        CalendarSettings::Set {
            name,
            windows,
            audit,
        } => {
            calendar::validate_name(&name)?;
            for w in &windows {
                Exclusion::parse(w).map_err(Error::usage)?;
            }
            edit(ctx, &name, &windows, (&audit.by, audit.reason.as_deref())).await
        }
        CalendarSettings::Delete { name, audit } => {
            calendar::validate_name(&name)?;
            edit(ctx, &name, &[], (&audit.by, audit.reason.as_deref())).await
        }
        CalendarSettings::Show { name } => show(ctx, &name).await,
        CalendarSettings::List => list(ctx).await,
    }
}

async fn edit(
    ctx: &Context,
    name: &str,
    windows: &[String],
    who: (&str, Option<&str>),
) -> Result<ExitCode> {
    let mut conn = ctx.connect().await?;
    let now = conn.server_ms().await?;
    if windows.is_empty()
        && calendar::read(&mut conn, ctx.prefix(), name)
            .await?
            .is_none()
    {
        return Err(Error::NotFound(Message::from(format!(
            "no calendar {name:?} under prefix {:?}\n  hint: `anarchon calendar list` shows them",
            ctx.prefix()
        ))));
    }
    calendar::write(&mut conn, ctx.prefix(), name, windows, who, now).await?;
    if ctx.out.json {
        let c = calendar::read(&mut conn, ctx.prefix(), name).await?;
        ctx.out
            .print_json(&serde_json::json!({ "name": name, "calendar": c }));
    } else if windows.is_empty() {
        crate::outln!("calendar {name} deleted: the jobs that name it run every slot again");
    } else {
        crate::outln!(
            "calendar {name}: {} (each job that names it skips these slots from its next one)",
            windows.join(", ")
        );
    }
    Ok(ExitCode::Ok)
}

async fn show(ctx: &Context, name: &str) -> Result<ExitCode> {
    let mut conn = ctx.connect().await?;
    let Some(c) = calendar::read(&mut conn, ctx.prefix(), name).await? else {
        return Err(Error::NotFound(Message::from(format!(
            "no calendar {name:?} under prefix {:?}\n  hint: `anarchon calendar list` shows them; `anarchon calendar set {name} WINDOW...` makes it",
            ctx.prefix()
        ))));
    };
    let edits = calendar::edits(&mut conn, ctx.prefix(), name, 20).await?;
    if ctx.out.json {
        ctx.out.print_json(&ShowReport {
            calendar: &c,
            edits: &edits,
        });
        return Ok(ExitCode::Ok);
    }
    crate::outln!("calendar {name}:");
    for w in &c.texts {
        crate::outln!("  {w}");
    }
    crate::outln!("edits, newest first:");
    for e in &edits {
        crate::outln!(
            "  {}  {} by {}{}: {}",
            ctx.out.time(e.at),
            e.action,
            e.by,
            e.reason
                .as_deref()
                .map_or(String::new(), |r| format!(" ({r})")),
            if e.windows.is_empty() {
                "-".to_string()
            } else {
                e.windows.join(", ")
            }
        );
    }
    Ok(ExitCode::Ok)
}

async fn list(ctx: &Context) -> Result<ExitCode> {
    let mut conn = ctx.connect().await?;
    let mut calendars = Vec::new();
    for name in calendar::names(&mut conn, ctx.prefix()).await? {
        if let Some(c) = calendar::read(&mut conn, ctx.prefix(), &name).await? {
            calendars.push(c);
        }
    }
    if ctx.out.json {
        ctx.out.print_json(&ListReport {
            calendars: &calendars,
        });
        return Ok(ExitCode::Ok);
    }
    if calendars.is_empty() {
        crate::errln!("no calendars under prefix {:?}", ctx.prefix());
    }
    for c in &calendars {
        crate::outln!("{}: {}", c.name, c.texts.join(", "));
    }
    Ok(ExitCode::Ok)
}

/// The JSON Schemas of this command's `--json` output (docs/schemas/, checked by tests/it/schemas.rs).
pub(crate) fn json_schemas() -> Vec<(&'static str, schemars::Schema)> {
    vec![
        ("calendar-show", schemars::schema_for!(ShowReport<'static>)),
        ("calendar-list", schemars::schema_for!(ListReport<'static>)),
    ]
}
