//! The status page (`anarchon serve`, src/page/) in a real browser: Debian's headless Chromium
//! loads it from a fleet the test starts, and what it shows is checked against `list --json`:
//! every job, worst first, each with the health `list` judges; a job's page with its results;
//! nothing on it that acts or that is secret.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::common::replica::Replica;
use crate::common::{Server, wait_for};

/// Chromium, or None outside CI when it is not installed (CI installs it: a skip there fails).
fn chromium() -> Option<&'static str> {
    let found = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists());
    if found.is_none() {
        assert!(
            !crate::common::nothing_may_be_skipped(),
            ".ci/run must install chromium (tests/setup-and-test.sh)"
        );
        eprintln!("skipped: apt-get install chromium (tests/setup-and-test.sh installs it)");
    }
    found
}

/// The DOM Chromium built from `url`, after loading it (headless, its own profile).
fn dom(browser: &str, profile: &std::path::Path, url: &str) -> String {
    let out = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--dump-dom", url])
        .stderr(Stdio::null())
        .output()
        .expect("chromium");
    assert!(out.status.success(), "chromium failed on {url}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `anarchon serve --listen 127.0.0.1:0` on `s`: the process and its base URL (from its line).
pub(crate) fn serve(s: &Server) -> (Child, String) {
    let mut child = s
        .anarchon_process()
        .args(["serve", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let at = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    (child, format!("http://{at}"))
}

/// A request without a body to the server at `base`: its status and whole answer.
fn http(base: &str, method: &str, path: &str) -> (u16, String) {
    let port = base
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap();
    crate::common::http::request(port, method, path)
}

/// The jobs' rows of the page, in order: (job, health), from their data attributes.
fn rows(dom: &str) -> Vec<(String, String)> {
    dom.split("<tr data-job=\"")
        .skip(1)
        .map(|row| {
            let job = row.split('"').next().unwrap().to_string();
            let health = row
                .split("data-health=\"")
                .nth(1)
                .and_then(|r| r.split('"').next())
                .unwrap()
                .to_string();
            (unescape(&job), health)
        })
        .collect()
}

fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&")
}

#[test]
fn the_status_page_shows_what_list_shows_worst_first_in_a_browser() {
    let Some(browser) = chromium() else {
        return;
    };
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    // A fleet: two replicas of a crontab with a healthy job and a failing one, and a job of a
    // `run` host whose name needs escaping.
    let file = dir.path().join("crontab");
    std::fs::write(
        &file,
        "# anarchon: --job sync\n*/2 * * * * * true\n# anarchon: --job export\n*/2 * * * * * sh -c 'echo secret-stderr >&2; exit 3'\n",
    )
    .unwrap();
    let replicas: Vec<Replica> = ["a", "b"]
        .iter()
        .map(|name| Replica::start(&s.url, &file, dir.path(), name, &[]))
        .collect();
    s.cli(&["run", "--job", "r<b>&x", "--slot", "now", "--", "true"])
        .expect(0);
    wait_for("both jobs to have results", Duration::from_secs(20), || {
        !s.results("sync").is_empty() && !s.results("export").is_empty()
    });
    drop(replicas);
    // A run holding a permit of a `--limit`, which the page shows as `list` does.
    let pidfile = dir.path().join("load.pid");
    let mut load = crate::common::spawn_run(
        &s,
        &[
            "--job",
            "load",
            "--slot",
            "now",
            "--limit",
            "warehouse=2",
            "--shell",
            "--",
        ]
        .into_iter()
        .chain([format!("echo $$ > {}; exec sleep 60", pidfile.display()).as_str()])
        .collect::<Vec<_>>(),
    );
    crate::common::wait_for_line(&pidfile);
    let (mut server, base) = serve(&s);
    let profile = dir.path().join("chromium");

    let page = dom(browser, &profile, &format!("{base}/"));
    let list = s.cli(&["list", "--sort", "health", "--json"]).json();
    let listed: Vec<(String, String)> = list["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            (
                j["job"].as_str().unwrap().to_string(),
                j["health"]["state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let shown = rows(&page);
    assert_eq!(shown, listed, "the page, against list --sort health --json");
    assert_eq!(shown[0], ("export".to_string(), "failing".to_string()));
    assert!(page.contains("r&lt;b&gt;&amp;x"), "escaped as text: {page}");
    assert!(!page.contains("<b>"), "no markup from the store: {page}");
    assert!(!page.contains("secret-stderr"), "no run's output: {page}");
    assert!(!page.contains("<script"), "no script: {page}");
    assert!(!page.contains("<form"), "nothing that acts: {page}");
    // Relative links: the page works under any path a proxy serves it at.
    assert!(page.contains("href=\"job/export\""), "{page}");
    assert!(!page.contains("href=\"/"), "{page}");

    let listed_limit = String::from_utf8_lossy(&s.cli(&["list"]).expect(0).stdout).into_owned();
    let listed_limit = listed_limit
        .lines()
        .find_map(|l| l.strip_prefix("limit "))
        .unwrap_or_else(|| panic!("no limit in list: {listed_limit}"));
    assert!(
        listed_limit.starts_with("warehouse: 1 held (load@"),
        "{listed_limit}"
    );
    assert!(
        page.contains(&format!(
            "<li data-limit=\"warehouse\">{}</li>",
            listed_limit
        )),
        "the limit as list shows it ({listed_limit}) in {page}"
    );
    let _ = crate::common::signal_group("-KILL", load.id());
    let _ = load.wait();

    let job = dom(browser, &profile, &format!("{base}/job/export"));
    assert!(job.contains("exit 3"), "{job}");
    assert!(job.contains("failing"), "{job}");
    assert!(!job.contains("secret-stderr"), "{job}");
    // Its timeline, as `timeline --svg` draws it, an image of its own.
    let svg = job
        .split("src=\"data:image/svg+xml;base64,")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("no timeline image: {job}"));
    assert!(svg.len() > 1_000, "{svg}");
    // A paused job's page says who paused it, why and until when, and how it ends.
    s.cli(&["pause", "sync", "--reason", "db migration", "--by", "ops"])
        .expect(0);
    let paused = dom(browser, &profile, &format!("{base}/job/sync"));
    for said in [
        "Paused",
        "by ops until resumed: db migration",
        "anarchon resume sync",
    ] {
        assert!(paused.contains(said), "{said:?} in {paused}");
    }
    assert!(!job.contains("Paused"), "{job}");
    let odd = dom(browser, &profile, &format!("{base}/job/r%3Cb%3E%26x"));
    assert!(odd.contains("r&lt;b&gt;&amp;x"), "{odd}");
    let none = dom(browser, &profile, &format!("{base}/job/nosuch"));
    assert!(none.contains("No such job"), "{none}");

    // Read-only, and says so to anything that tries to write.
    let (status, _) = http(&base, "POST", "/");
    assert_eq!(status, 405);
    let (status, head) = http(&base, "GET", "/");
    assert_eq!(status, 200);
    assert!(
        head.to_ascii_lowercase()
            .contains("content-security-policy: default-src 'none'"),
        "{head}"
    );
    let (status, metrics) = http(&base, "GET", "/metrics");
    assert_eq!(status, 200);
    assert!(metrics.contains("anarchon_up 1"), "{metrics}");
    let _ = server.kill();
    let _ = server.wait();
}

/// `cron --listen` serves the same pages beside its own endpoints, and a job's name is a path's
/// segment: `+` and `&` are its own characters (a form's decoding would show another job).
#[test]
fn cron_listen_serves_the_pages_and_a_name_is_a_path_segment() {
    let Some(browser) = chromium() else {
        return;
    };
    let s = Server::start();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("crontab");
    std::fs::write(&file, "# anarchon: --job a+b\n*/2 * * * * * true\n").unwrap();
    // A job whose name a form's decoding of `a+b` would give.
    s.cli(&["run", "--job", "a b", "--slot", "now", "--", "false"])
        .expect(1);
    let replica = Replica::start(&s.url, &file, dir.path(), "r", &["--listen", "127.0.0.1:0"]);
    wait_for("a run of a+b", Duration::from_secs(20), || {
        !s.results("a+b").is_empty()
    });
    let base = format!("http://127.0.0.1:{}", replica.listening_port());
    let profile = dir.path().join("chromium");
    let page = dom(browser, &profile, &format!("{base}/"));
    let shown: Vec<String> = rows(&page).into_iter().map(|(job, _)| job).collect();
    assert!(
        shown.contains(&"a+b".to_string()) && shown.contains(&"a b".to_string()),
        "{page}"
    );
    // The page's own link, and the name typed as is.
    assert!(page.contains("href=\"job/a%2Bb\""), "{page}");
    for path in ["/job/a%2Bb", "/job/a+b"] {
        let job = dom(browser, &profile, &format!("{base}{path}"));
        assert!(job.contains("<bdi>a+b</bdi>"), "{path}: {job}");
        assert!(
            !job.contains("failed"),
            "{path} showed the job \"a b\": {job}"
        );
    }
    // "a b" links to its own page, not to a+b's (a form's `+` for its space would).
    assert!(page.contains("href=\"job/a%20b\""), "{page}");
    let spaced = dom(browser, &profile, &format!("{base}/job/a%20b"));
    assert!(
        spaced.contains("<bdi>a b</bdi>") && spaced.contains("failed"),
        "{spaced}"
    );
    // Names a path cannot carry (a browser resolves `.` and `..` away) are linked as a query.
    for name in [".", ".."] {
        s.cli(&["run", "--job", name, "--slot", "now", "--", "true"])
            .expect(0);
    }
    let page = dom(browser, &profile, &format!("{base}/"));
    for (name, href) in [(".", "job?name=."), ("..", "job?name=..")] {
        assert!(page.contains(&format!("href=\"{href}\"")), "{page}");
        let job = dom(browser, &profile, &format!("{base}/{href}"));
        assert!(job.contains(&format!("<bdi>{name}</bdi>")), "{href}: {job}");
        assert!(job.contains("href=\"./\""), "{href}: {job}");
    }
    let (status, _) = http(&base, "GET", "/healthz");
    assert_eq!(status, 200);
}

/// The commands the server has run so far (INFO commandstats), less the INFO calls asking.
fn commands_run(s: &Server) -> u64 {
    let info: String = s.cmd(&["INFO", "commandstats"]);
    info.lines()
        .filter(|l| l.starts_with("cmdstat_") && !l.starts_with("cmdstat_info:"))
        .filter_map(|l| {
            l.split("calls=")
                .nth(1)?
                .split(',')
                .next()?
                .parse::<u64>()
                .ok()
        })
        .sum()
}

/// Many viewers at once (a wall screen, a team refreshing in an incident) cost the store one read
/// of a page, not one each: requests that arrive while a page is read wait for that read and are
/// served it, as are those within a second after. Counted inside the server (INFO
/// commandstats), against one read of the same page.
#[test]
fn many_viewers_at_once_cost_the_store_one_read() {
    let s = Server::start();
    for job in ["one", "two", "three"] {
        s.cli(&["run", "--job", job, "--slot", "now", "--", "true"])
            .expect(0);
    }
    let (mut server, base) = serve(&s);
    // The connection opened, the first reads of the store done.
    assert_eq!(http(&base, "GET", "/job/nosuch").0, 404);
    // One read of the jobs page (`?n=` makes another page of the cache, the same read).
    let before = commands_run(&s);
    assert_eq!(http(&base, "GET", "/?n=0").0, 200);
    let one_read = commands_run(&s) - before;
    assert!(one_read > 0);
    let before = commands_run(&s);
    let go = std::sync::Arc::new(std::sync::Barrier::new(10));
    let viewers: Vec<_> = (0..10)
        .map(|_| {
            let (go, base) = (go.clone(), base.clone());
            std::thread::spawn(move || {
                go.wait();
                http(&base, "GET", "/?n=1")
            })
        })
        .collect();
    for viewer in viewers {
        let (status, page) = viewer.join().unwrap();
        assert_eq!(status, 200, "{page}");
        assert!(page.contains("three"), "{page}");
    }
    assert_eq!(
        commands_run(&s) - before,
        one_read,
        "ten viewers at once: one read of {one_read} commands"
    );
    server.kill().unwrap();
    server.wait().unwrap();
}
