//! `run --ping URL`: the Healthchecks.io ping protocol, for a dead man's switch (hosted or
//! self-hosted Healthchecks, or anything that speaks it): `URL/start` when the command starts,
//! `URL` when the run finished, `URL/fail` when it failed, timed out or was interrupted (the body:
//! a summary line and the last 4 KiB of its stderr). Each ping carries `rid`, the attempt's id,
//! so the service pairs the start with its end and times the run.
//!
//! Only the host that runs the attempt pings (the claim's winner, or the backup that took over):
//! the service sees each run once, however many hosts fire. A ping never changes the run: it is
//! sent after the start and after the run was recorded, time-boxed by `--ping-timeout` in all
//! (retries included), retried on connection trouble and 5xx/429 answers, and its failure is said
//! on stderr and nothing else.

use std::time::Duration;

use tokio::task::JoinHandle;
use tokio::time::{Instant, sleep, timeout};

use crate::runner::report::{SlotOutcome, SlotReport};

/// How many times one ping is sent at most.
const TRIES: u32 = 3;

/// Where and how long to ping.
#[derive(Debug, Clone)]
pub struct Ping {
    pub url: url::Url,
    /// The whole of one ping, retries included.
    pub timeout: Duration,
}

/// The `start` ping in flight: its end ping waits for it, so the service sees them in order.
pub struct Started {
    rid: String,
    /// One client for both pings (its TLS roots are read once), or why it could not be made.
    client: Result<reqwest::Client, String>,
    sent: Option<JoinHandle<Option<String>>>,
}

impl Ping {
    /// Sends `URL/start` in the background (the command does not wait for it). `token`: the
    /// attempt's claim token, which names the run to the service.
    pub fn start(&self, token: &str) -> Started {
        let rid = run_id(token);
        let url = self.url_for(Some("start"), &rid);
        let timeout = self.timeout;
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|e| {
                format!(
                    "--ping {}: cannot make an HTTP client: {e}",
                    shown_url(&url)
                )
            });
        let sent = client.clone().ok().map(|client| {
            tokio::spawn(async move { send(&client, url, String::new(), timeout).await })
        });
        Started { rid, client, sent }
    }

    /// Sends the run's end (`URL` or `URL/fail`) once the start ping is done; returns what went
    /// wrong with either, for a line on stderr.
    pub async fn end(&self, report: &SlotReport, mut started: Started) -> Option<String> {
        let start_problem = match started.sent.take() {
            Some(sent) => sent.await.unwrap_or(None),
            None => None,
        };
        let failed = report.outcome != SlotOutcome::Ran || report.exit_code() != 0;
        let url = self.url_for(failed.then_some("fail"), &started.rid);
        let end_problem = match &started.client {
            Ok(client) => send(client, url, body(report), self.timeout).await,
            Err(why) => Some(why.clone()),
        };
        match (start_problem, end_problem) {
            (None, None) => None,
            (Some(p), None) | (None, Some(p)) => Some(p),
            (Some(_), Some(end)) => Some(format!("{end} (the start ping was not sent either)")),
        }
    }

    /// `URL[/suffix]?rid=...`, keeping the URL's own query (Healthchecks takes `create=1`).
    fn url_for(&self, suffix: Option<&str>, rid: &str) -> url::Url {
        let mut url = self.url.clone();
        if let Some(suffix) = suffix
            && let Ok(mut path) = url.path_segments_mut()
        {
            path.pop_if_empty().push(suffix);
        }
        url.query_pairs_mut().append_pair("rid", rid);
        url
    }
}

/// The attempt's token as a UUID, the form Healthchecks takes for `rid` (a token is one, written in
/// base 62: `store::token`); a token of another shape (a hand-made one) gives a fresh one, which
/// still pairs this run's two pings.
fn run_id(token: &str) -> String {
    crate::store::token::token_uuid(token)
        .unwrap_or_else(uuid::Uuid::new_v4)
        .hyphenated()
        .to_string()
}

/// The end ping's body: one line of facts, then the stderr tail of a failed run.
fn body(report: &SlotReport) -> String {
    let mut text = format!(
        "{} @ {}: {} (attempt {}, {}, exit {})\n",
        report.job,
        report.slot_time,
        report.status,
        report.attempt.unwrap_or(1),
        report.runner,
        report.exit_code()
    );
    if report.exit_code() != 0
        && let Some(command) = &report.command
    {
        text.push_str(&command.stderr_tail);
    }
    text
}

/// POSTs `body` to `url`, retrying trouble that may pass, within `limit` in all. Returns what went
/// wrong, or None.
async fn send(
    client: &reqwest::Client,
    url: url::Url,
    body: String,
    limit: Duration,
) -> Option<String> {
    let shown = shown_url(&url);
    let give_up = Instant::now() + limit;
    let tries = async {
        let mut last = String::new();
        for attempt in 1..=TRIES {
            match client.post(url.clone()).body(body.clone()).send().await {
                Ok(answer) if answer.status().is_success() => return None,
                Ok(answer) => {
                    last = format!("answered {}", answer.status());
                    let status = answer.status();
                    if !(status.is_server_error() || status.as_u16() == 429) {
                        break;
                    }
                }
                Err(e) => last = without_url(&e),
            }
            if attempt < TRIES {
                let pause = Duration::from_millis(500 * u64::from(attempt));
                if Instant::now() + pause >= give_up {
                    break;
                }
                sleep(pause).await;
            }
        }
        Some(last)
    };
    match timeout(limit, tries).await {
        Ok(None) => None,
        Ok(Some(why)) => Some(format!("--ping {shown}: {why}")),
        Err(_) => Some(format!(
            "--ping {shown}: no answer within --ping-timeout {}",
            humantime::format_duration(limit)
        )),
    }
}

/// The URL as said in a message: without its query (a key may be in it).
fn shown_url(url: &url::Url) -> String {
    let mut shown = url.clone();
    shown.set_query(None);
    shown.to_string()
}

/// reqwest's error, without the URL it repeats (the message names it once).
fn without_url(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    if let Some(url) = e.url() {
        text = text.replace(&format!(" for url ({url})"), "");
    }
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(&format!(": {s}"));
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_urls_are_the_healthchecks_protocols() {
        let ping = Ping {
            url: url::Url::parse("https://hc.example/ping/abc?create=1").unwrap(),
            timeout: Duration::from_secs(1),
        };
        let rid = run_id("4Pc4aGlvsKi3UuNqD51KHH");
        assert_eq!(rid, "9100687e-787a-406f-b4f9-380ab342e7a7");
        assert_eq!(
            ping.url_for(Some("start"), &rid).as_str(),
            "https://hc.example/ping/abc/start?create=1&rid=9100687e-787a-406f-b4f9-380ab342e7a7"
        );
        assert_eq!(
            ping.url_for(None, &rid).as_str(),
            "https://hc.example/ping/abc?create=1&rid=9100687e-787a-406f-b4f9-380ab342e7a7"
        );
        let slash = Ping {
            url: url::Url::parse("http://127.0.0.1:8000/ping/k/").unwrap(),
            timeout: Duration::from_secs(1),
        };
        assert!(
            slash
                .url_for(Some("fail"), &rid)
                .as_str()
                .starts_with("http://127.0.0.1:8000/ping/k/fail?rid=")
        );
        assert_eq!(shown_url(&ping.url), "https://hc.example/ping/abc");
    }
}
