//! The pages as HTML, composed with maud (every text from the store escaped by it). One style
//! sheet inline; tables that become one card per job on a narrow screen; no script.

use maud::{DOCTYPE, Markup, PreEscaped, html};

use super::read::{JobLine, JobPage, JobsPage};
use crate::health::{Health, HealthState};
use crate::time::{compact, humanize, relative};

/// How often a page asks the browser to load it again (a `<meta http-equiv="refresh">`).
pub const REFRESH_SECS: u32 = 10;

const STYLE: &str = "\
:root{color-scheme:light dark;--ok:#1a7f37;--bad:#cf222e;--warn:#9a6700;--dim:#6e7781}\
body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:72rem;padding:1rem}\
h1{font-size:1.3rem;margin:.2rem 0}h2{font-size:1.05rem;margin:1.4rem 0 .4rem}\
p.meta{color:var(--dim);margin:.2rem 0 1rem}\
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #8884;vertical-align:top}\
th{font-size:.8rem;text-transform:uppercase;color:var(--dim)}\
.h{font-weight:600;white-space:nowrap}.h-ok,.h-running{color:var(--ok)}\
.h-missed,.h-expired,.h-failing,.h-late{color:var(--bad)}.h-paused,.h-unknown{color:var(--warn)}\
.h-renamed,.h-retired{color:var(--dim)}.why{color:var(--dim);font-size:.9rem}\
a{color:inherit}td{overflow-wrap:anywhere}h1{overflow-wrap:anywhere}td.t{white-space:nowrap;overflow-wrap:normal}.timeline{overflow-x:auto}.timeline img{display:block;max-width:none}#summary{width:auto}#summary th{padding-right:2rem}\
@media (max-width:40rem){thead{display:none}tr{display:block;border-bottom:1px solid #8886;padding:.4rem 0}\
td{display:block;border:0;padding:.1rem 0}td[data-l]::before{content:attr(data-l) ': ';color:var(--dim);font-size:.85rem}}";

fn page(title: &str, body: Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta http-equiv="refresh" content=(REFRESH_SECS);
                meta name="referrer" content="no-referrer";
                title { (title) }
                style { (PreEscaped(STYLE)) }
            }
            body { (body) }
        }
    }
    .into_string()
}

/// A time as `list` shows it on a terminal: relative, with the UTC time as its title.
fn when(ms: Option<i64>, now: i64) -> Markup {
    match ms {
        Some(ms) => {
            html! { time datetime=(crate::time::rfc3339(ms)) title=(compact(ms)) { (relative(ms, now)) } }
        }
        None => html! { "-" },
    }
}

fn health_badge(state: HealthState) -> Markup {
    html! { span class={ "h h-" (state.as_str()) } { (state.as_str()) } }
}

/// Why a job reads as it does, in a few words (what `check` says at length).
pub fn why(h: &Health) -> String {
    let mut said = Vec::new();
    if let Some(to) = &h.renamed_to {
        said.push(format!("renamed to {to}"));
    }
    if h.retired.is_some() {
        said.push("retired".to_string());
    }
    if !h.missed_slots.is_empty() {
        said.push(format!("{} scheduled run(s) missed", h.missed_slots.len()));
    }
    if !h.lost_slots.is_empty() {
        said.push(format!("{} run(s) lost", h.lost_slots.len()));
    }
    if !h.expired_slots.is_empty() {
        said.push(format!(
            "{} run(s) with no holder for {}",
            h.expired_slots.len(),
            humanize(u64::try_from(h.expired_for_ms).unwrap_or(0))
        ));
    }
    if h.failed_in_a_row > 0 {
        said.push(format!("failed {} time(s) in a row", h.failed_in_a_row));
    }
    if h.late_ms > 0 && h.state == HealthState::Late {
        said.push(format!(
            "late by {}",
            humanize(u64::try_from(h.late_ms).unwrap_or(0))
        ));
    }
    said.join("; ")
}

/// A job's page, as a path's segment (`job/a%20b`; the server decodes `%XX` only, so `+` is a
/// job's own character). Relative, so that the page works at any path a proxy serves it under.
/// `.` and `..` go as a query (`job?name=..`): a browser resolves such a segment away.
fn job_href(job: &str) -> String {
    use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
    /// Every byte but RFC 3986's unreserved characters.
    const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'.')
        .remove(b'_')
        .remove(b'~');
    if job == "." || job == ".." {
        let name: String = url::form_urlencoded::byte_serialize(job.as_bytes()).collect();
        return format!("job?name={name}");
    }
    format!("job/{}", utf8_percent_encode(job, SEGMENT))
}

fn job_row(j: &JobLine, now: i64) -> Markup {
    html! {
        tr data-job=(j.job) data-health=(j.health.state.as_str()) {
            td data-l="job" {
                a href=(job_href(&j.job)) { bdi { (j.job) } }
                @if j.claim_only { " " span class="why" { "(claim-only)" } }
                @let reason = why(&j.health);
                @if !reason.is_empty() { br; span class="why" { (reason) } }
            }
            td data-l="health" { (health_badge(j.health.state)) }
            td data-l="schedule" { code { (j.schedule.as_deref().unwrap_or("-")) } }
            td.t data-l="next" { (when(j.health.next_due, now)) }
            td.t data-l="last ok" { (when(j.health.last_success, now)) }
            td.t data-l="last run" { (when(j.last_slot, now)) }
            td data-l="status" { (j.state.as_deref().unwrap_or("-")) }
            td data-l="active" { (j.in_progress) }
        }
    }
}

/// `/`: every job, worst first.
pub fn jobs_page(p: &JobsPage, store: &str) -> String {
    let now = p.server_now;
    // A job whose data cannot be read needs a person as much as any: counted, and shown first.
    let needs: usize = p
        .jobs
        .iter()
        .filter(|j| j.health.state.needs_a_person())
        .count()
        + p.unreadable.len();
    let body = html! {
        h1 { "anarchon: jobs" }
        p.meta {
            (p.jobs.len()) " job(s) under prefix " code { (p.prefix) } " on " (store)
            @if let Some(f) = p.format { ", store format " (f) }
            "; " strong { (needs) " need(s) a person" } "; read at " (compact(now)) " UTC, again every " (REFRESH_SECS) " s."
        }
        @if p.jobs.is_empty() && p.unreadable.is_empty() {
            p { "No job has run under this prefix yet." }
        } @else {
            table id="jobs" {
                thead { tr { th { "Job" } th { "Health" } th { "Schedule" } th { "Next" } th { "Last OK" } th { "Last run" } th { "Status" } th { "Active" } } }
                tbody {
                    @for u in &p.unreadable {
                        tr data-job=(u.job) data-health="unreadable" {
                            td data-l="job" { (u.job) br; span class="why" { (u.error.to_string()) } }
                            td data-l="health" { span class="h h-missed" { "unreadable" } }
                            td {} td {} td {} td {} td {} td {}
                        }
                    }
                    @for j in &p.jobs { (job_row(j, now)) }
                }
            }
        }
        @if !p.limits.is_empty() {
            h2 { "Limits" }
            ul id="limits" {
                @for l in &p.limits { li data-limit=(l.name) { (l.summary()) } }
            }
        }
        p.meta { "Read-only. " a href="metrics" { "Prometheus metrics" } "." }
    };
    page("anarchon: jobs", body)
}

/// `/job/<name>`: one job.
pub fn job_page(p: &JobPage, store: &str) -> String {
    let now = p.server_now;
    let j = &p.line;
    let reason = why(&j.health);
    let body = html! {
        // `job/NAME` is one level down; `job?name=..` (see `job_href`) is not.
        p.meta { a href=(if j.job == "." || j.job == ".." { "./" } else { "../" }) { "← every job" } }
        h1 { bdi { (j.job) } " " (health_badge(j.health.state)) }
        p.meta {
            "Prefix " code { (p.prefix) } " on " (store) "; read at " (compact(now)) " UTC, again every " (REFRESH_SECS) " s."
        }
        @if !reason.is_empty() { p { (reason) } }
        @if let Some(pause) = &p.pause { (paused(pause, &j.job, now)) }
        table id="summary" {
            tbody {
                tr { th { "Schedule" } td { code { (j.schedule.as_deref().unwrap_or("-")) } } }
                tr { th { "Next" } td { (when(j.health.next_due, now)) } }
                tr { th { "Last OK" } td { (when(j.health.last_success, now)) } }
                tr { th { "Last failure" } td { (when(j.health.last_failure, now)) } }
                tr { th { "Status" } td { (j.state.as_deref().unwrap_or("-")) } }
            }
        }
        h2 { "In progress (" (p.in_progress.len()) ")" }
        (in_progress(&p.in_progress, now))
        h2 { "The last " (humanize(crate::time::millis(super::read::TIMELINE_RANGE).unsigned_abs())) }
        @match &p.timeline_svg {
            Some(svg) => div class="timeline" {
                img src=(svg_data_uri(svg)) alt={ "timeline of " (j.job) ": each slot's attempts as bars, as `anarchon timeline " (j.job) "` draws them" };
            },
            None => p.why { "The timeline could not be drawn." },
        }
        h2 { "Newest results" }
        @if p.results.is_empty() { p.why { "No run has ended yet." } } @else {
            table id="results" {
                thead { tr { th { "Slot" } th { "Attempt" } th { "Status" } th { "Runner" } th { "Ended" } th { "Result" } } }
                tbody { @for r in &p.results {
                    tr data-status=(r.status) {
                        td.t data-l="slot" { (compact(r.slot)) }
                        td data-l="attempt" { (r.attempt.map_or("-".to_string(), |a| a.to_string())) }
                        td data-l="status" { span class={ "h h-" (status_class(&r.status)) } { (r.status) } }
                        td data-l="runner" { (r.runner) }
                        td.t data-l="ended" { (when(r.ended_at, now)) }
                        td data-l="result" { (crate::output::result_summary(Some(&r.result))) }
                    }
                } }
            }
        }
        h2 { "Operators' actions" }
        @if p.actions.is_empty() { p.why { "None recorded." } } @else {
            table id="actions" {
                thead { tr { th { "When" } th { "Action" } th { "By" } th { "Why" } } }
                tbody { @for a in &p.actions {
                    tr {
                        td.t data-l="when" { (when(Some(a.at), now)) }
                        td data-l="action" { (a.event) }
                        td data-l="by" { (a.by) }
                        td data-l="why" { (a.reason.as_deref().unwrap_or("-")) }
                    }
                } }
            }
        }
    };
    page(&format!("anarchon: {}", j.job), body)
}

/// A paused job's pause: who, why, until when, since when, and how it ends.
fn paused(pause: &crate::store::pause::Pause, job: &str, now: i64) -> Markup {
    html! {
        p id="paused" {
            strong { "Paused" } " " (pause.describe()) "; since " (when(pause.paused_at, now))
            ". No slot runs while it lasts; " code { "anarchon resume " (job) } " ends it."
        }
    }
}

/// A job's runs in progress, as `inspect` lists them.
fn in_progress(runs: &[crate::store::state::RunState], now: i64) -> Markup {
    html! {
        @if runs.is_empty() { p.why { "Nothing runs now." } } @else {
            table id="in-progress" {
                thead { tr { th { "Slot" } th { "Attempt" } th { "Runner" } th { "Claimed" } th { "Lease ends" } } }
                tbody { @for r in runs {
                    tr {
                        td.t data-l="slot" { (compact(r.slot)) }
                        td data-l="attempt" { (r.attempt) }
                        td data-l="runner" { (r.runner) }
                        td.t data-l="claimed" { (when(Some(r.claimed_at), now)) }
                        td.t data-l="lease ends" { (when(Some(r.lease_end), now)) }
                    }
                } }
            }
        }
    }
}

/// An SVG as a `data:` URI: an image with its own style, loaded from nowhere else.
fn svg_data_uri(svg: &str) -> String {
    use base64::Engine;
    format!(
        "data:image/svg+xml;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(svg)
    )
}

/// A run's status coloured as health is.
fn status_class(status: &str) -> &'static str {
    match status {
        "finished" => "ok",
        "failed" | "interrupted" => "failing",
        _ => "unknown",
    }
}

/// A page that says what went wrong (no job, the store unreadable), with the way back to the jobs
/// (`back`: relative to where the page is, as every link is).
pub fn error_page(title: &str, text: &str, back: &str) -> String {
    page(
        &format!("anarchon: {title}"),
        html! { p.meta { a href=(back) { "← every job" } } h1 { (title) } p { (text) } },
    )
}
