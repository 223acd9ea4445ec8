//! The deploy files of docs/deploy/ as a platform team would review them, read as the cluster
//! reads them (docs/deploy/README.md says why each setting is what it is): the Kubernetes
//! manifest's replicas have resource requests and a memory limit, run non-root on a read-only
//! root with no privilege escalation and no capability, are spread across nodes and covered by a
//! PodDisruptionBudget, and every metric series is scraped once: the replicas for their own
//! `anarchon_cron_*` series only, one exporter for the per-job series they all serve alike. The
//! crontabs shipped (the ConfigMap's, the package's example) read as `anarchon cron` reads them.
//! The systemd unit's checks are in cron.rs (`systemd-analyze verify` and `security`).

use std::path::Path;

use regex::Regex;
use serde::Deserialize;
use serde_json::Value;

fn repo_file(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path))
        .unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Every document of docs/deploy/kubernetes.yaml.
fn manifest() -> Vec<Value> {
    let text = repo_file("docs/deploy/kubernetes.yaml");
    serde_yaml_ng::Deserializer::from_str(&text)
        .map(|doc| Value::deserialize(doc).expect("docs/deploy/kubernetes.yaml is YAML"))
        .filter(|doc| !doc.is_null())
        .collect()
}

fn kind<'a>(docs: &'a [Value], kind: &str) -> Vec<&'a Value> {
    docs.iter().filter(|d| d["kind"] == kind).collect()
}

fn name(doc: &Value) -> &str {
    doc["metadata"]["name"].as_str().unwrap_or("?")
}

/// Whether `selector` (a `matchLabels`) selects pods labelled `labels`.
fn selects(selector: &Value, labels: &Value) -> bool {
    selector["matchLabels"]
        .as_object()
        .is_some_and(|m| !m.is_empty() && m.iter().all(|(k, v)| labels[k] == *v))
}

/// The Deployment's containers' command lines, joined.
fn commands(deployment: &Value) -> Vec<String> {
    deployment["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            c["command"]
                .as_array()
                .into_iter()
                .flatten()
                .chain(c["args"].as_array().into_iter().flatten())
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// The Deployments that run `anarchon cron`: the replicas.
fn replicas(docs: &[Value]) -> Vec<&Value> {
    let found: Vec<&Value> = kind(docs, "Deployment")
        .into_iter()
        .filter(|d| commands(d).iter().any(|c| c.starts_with("anarchon cron ")))
        .collect();
    assert!(!found.is_empty(), "no Deployment runs `anarchon cron`");
    found
}

/// Every replica names its service (`ANARCHON_SERVICE`, one name per Deployment): a job taken
/// out of the ConfigMap's crontab then stops being expected once no live replica has it, instead
/// of alerting for ever (issue 48, item 1).
#[test]
fn the_manifest_s_replicas_name_their_service() {
    for deployment in replicas(&manifest()) {
        let containers = deployment["spec"]["template"]["spec"]["containers"]
            .as_array()
            .expect("containers");
        for c in containers {
            let env = c["env"].as_array().cloned().unwrap_or_default();
            let service = env
                .iter()
                .find(|e| e["name"] == "ANARCHON_SERVICE")
                .and_then(|e| e["value"].as_str());
            assert_eq!(
                service,
                Some(name(deployment)),
                "{}: ANARCHON_SERVICE names the Deployment",
                name(deployment)
            );
        }
    }
}

#[test]
fn the_manifest_s_containers_have_resources_and_a_restricted_security_context() {
    let docs = manifest();
    let deployments = kind(&docs, "Deployment");
    assert!(!deployments.is_empty());
    for d in deployments {
        let pod = &d["spec"]["template"]["spec"];
        assert_eq!(
            pod["securityContext"]["runAsNonRoot"],
            true,
            "{}: runAsNonRoot",
            name(d)
        );
        assert_eq!(
            pod["securityContext"]["seccompProfile"]["type"],
            "RuntimeDefault",
            "{}: the runtime's seccomp profile",
            name(d)
        );
        assert_eq!(
            pod["automountServiceAccountToken"],
            false,
            "{}: anarchon needs no Kubernetes API token",
            name(d)
        );
        for c in pod["containers"].as_array().unwrap() {
            let what = format!("{} container {}", name(d), c["name"]);
            let resources = &c["resources"];
            for (path, field) in [
                ("requests", "cpu"),
                ("requests", "memory"),
                ("limits", "memory"),
            ] {
                assert!(
                    resources[path][field].is_string(),
                    "{what}: no resources.{path}.{field}"
                );
            }
            let sc = &c["securityContext"];
            assert_eq!(
                sc["allowPrivilegeEscalation"], false,
                "{what}: allowPrivilegeEscalation"
            );
            assert_eq!(
                sc["readOnlyRootFilesystem"], true,
                "{what}: readOnlyRootFilesystem"
            );
            assert!(
                sc["privileged"].is_null() || sc["privileged"] == false,
                "{what}: privileged"
            );
            assert!(
                sc["capabilities"]["drop"]
                    .as_array()
                    .is_some_and(|d| d.iter().any(|c| c == "ALL")),
                "{what}: capabilities not all dropped"
            );
        }
    }
    // The replicas run the jobs on a read-only root: /tmp (--on-failure's stderr tail, and the
    // jobs' own scratch files) is a volume.
    for d in replicas(&docs) {
        let pod = &d["spec"]["template"]["spec"];
        let mounts = pod["containers"][0]["volumeMounts"].as_array().unwrap();
        let tmp = mounts
            .iter()
            .find(|m| m["mountPath"] == "/tmp")
            .unwrap_or_else(|| panic!("{}: no writable /tmp on a read-only root", name(d)));
        let volume = pod["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|v| v["name"] == tmp["name"])
            .expect("the /tmp volume");
        assert!(
            volume["emptyDir"].is_object(),
            "{}: /tmp is an emptyDir",
            name(d)
        );
    }
}

#[test]
fn the_manifest_s_replicas_are_spread_across_nodes_and_covered_by_a_disruption_budget() {
    let docs = manifest();
    for d in replicas(&docs) {
        let count = d["spec"]["replicas"].as_u64().unwrap();
        assert!(count >= 2, "{}: {count} replica(s)", name(d));
        let labels = &d["spec"]["template"]["metadata"]["labels"];
        let pod = &d["spec"]["template"]["spec"];
        // Across nodes: a topology spread on the node's name, or an anti-affinity to itself.
        let spread = pod["topologySpreadConstraints"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|t| {
                t["topologyKey"] == "kubernetes.io/hostname"
                    && t["maxSkew"] == 1
                    && selects(&t["labelSelector"], labels)
            });
        let anti = ["requiredDuringSchedulingIgnoredDuringExecution"]
            .iter()
            .flat_map(|k| {
                pod["affinity"]["podAntiAffinity"][k]
                    .as_array()
                    .into_iter()
                    .flatten()
            })
            .any(|t| {
                t["topologyKey"] == "kubernetes.io/hostname" && selects(&t["labelSelector"], labels)
            });
        assert!(
            spread || anti,
            "{}: nothing keeps its replicas on different nodes",
            name(d)
        );
        // A drain takes one at a time, as the rollout does.
        let budgets: Vec<&Value> = kind(&docs, "PodDisruptionBudget")
            .into_iter()
            .filter(|p| selects(&p["spec"]["selector"], labels))
            .collect();
        assert_eq!(
            budgets.len(),
            1,
            "{}: one PodDisruptionBudget selects its pods",
            name(d)
        );
        let budget = &budgets[0]["spec"];
        assert_eq!(budgets[0]["apiVersion"], "policy/v1");
        let one_at_a_time = budget["maxUnavailable"] == 1
            || budget["minAvailable"]
                .as_u64()
                .is_some_and(|m| m + 1 == count);
        assert!(
            one_at_a_time,
            "{}: the PodDisruptionBudget lets more than one replica go: {budget}",
            name(d)
        );
        assert_eq!(
            d["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"],
            1,
            "{}: the rollout takes one replica at a time",
            name(d)
        );
    }
}

/// Every replica serves the same per-job series (read from the shared store) beside its own
/// `anarchon_cron_*`: scraping each pod stored each job series once per replica, and every alert
/// fired as many times. Each series must be scraped once: the replicas for their own series
/// only, and exactly one target for the per-job series.
#[test]
fn the_manifest_scrapes_every_metric_series_once() {
    let docs = manifest();
    // The names the daemon's own series have (cron --listen), and the store's per-job ones.
    let own: Vec<String> = Regex::new(r#""(anarchon_cron_[a-z_]+)""#)
        .unwrap()
        .captures_iter(&repo_file("src/daemon/health.rs"))
        .map(|c| c[1].to_string())
        .collect();
    assert!(own.len() >= 5, "the daemon's own series: {own:?}");
    let store: Vec<&str> = anarchon::metrics::FAMILIES.iter().map(|f| f.0).collect();

    let monitors: Vec<&Value> = docs
        .iter()
        .filter(|d| d["kind"] == "PodMonitor" || d["kind"] == "ServiceMonitor")
        .collect();
    let deployments = kind(&docs, "Deployment");
    // What a monitor keeps of what it scrapes: None for everything.
    let kept = |m: &Value| -> Option<Regex> {
        let endpoints = m["spec"]["podMetricsEndpoints"]
            .as_array()
            .or(m["spec"]["endpoints"].as_array())
            .expect("a monitor's endpoints");
        assert_eq!(endpoints.len(), 1, "{}: one endpoint", name(m));
        endpoints[0]["metricRelabelings"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|r| {
                r["action"] == "keep"
                    && r["sourceLabels"]
                        .as_array()
                        .is_some_and(|l| l.len() == 1 && l[0] == "__name__")
            })
            .map(|r| Regex::new(&format!("^(?:{})$", r["regex"].as_str().unwrap())).unwrap())
    };
    let scraped_by = |d: &Value| -> Vec<&Value> {
        let labels = &d["spec"]["template"]["metadata"]["labels"];
        monitors
            .iter()
            .copied()
            .filter(|m| m["kind"] == "PodMonitor" && selects(&m["spec"]["selector"], labels))
            .collect()
    };

    let mut job_series_targets = 0;
    for d in &deployments {
        let annotations = &d["spec"]["template"]["metadata"]["annotations"];
        let count = d["spec"]["replicas"].as_u64().unwrap_or(1);
        let is_replica = commands(d).iter().any(|c| c.starts_with("anarchon cron "));
        if is_replica {
            // No per-pod annotation scrape of everything the replicas serve.
            assert!(
                annotations["prometheus.io/scrape"].is_null()
                    || annotations["prometheus.io/scrape"] == "false",
                "{}: its pods are annotated for a scrape of all their series, job series included, once per replica",
                name(d)
            );
        }
        for m in scraped_by(d) {
            match kept(m) {
                Some(keep) => {
                    for series in &store {
                        assert!(
                            !keep.is_match(series),
                            "{} keeps {series} of {}, which every replica serves alike",
                            name(m),
                            name(d)
                        );
                    }
                    if is_replica {
                        for series in &own {
                            assert!(
                                keep.is_match(series),
                                "{} drops the replicas' own {series}",
                                name(m)
                            );
                        }
                    }
                }
                None => {
                    assert!(
                        !is_replica,
                        "{} scrapes every series of {}'s replicas, each job series once per replica",
                        name(m),
                        name(d)
                    );
                    // The per-job series come from one pod, never two at once.
                    assert!(
                        commands(d)
                            .iter()
                            .any(|c| c.starts_with("anarchon metrics --listen")),
                        "{}: scraped whole, but it is no `anarchon metrics --listen`",
                        name(d)
                    );
                    assert_eq!(count, 1, "{}: the job series' one exporter", name(d));
                    // The series' `job` label is anarchon's job (the alerts' `$labels.job`),
                    // not the scrape job's name.
                    assert_eq!(
                        m["spec"]["podMetricsEndpoints"][0]["honorLabels"],
                        true,
                        "{}: the job series' `job` label would become `exported_job`",
                        name(m)
                    );
                    assert_eq!(
                        d["spec"]["strategy"]["type"],
                        "Recreate",
                        "{}: a rollout would run two exporters at once",
                        name(d)
                    );
                    let port = m["spec"]["podMetricsEndpoints"][0]["port"].clone();
                    assert!(
                        d["spec"]["template"]["spec"]["containers"][0]["ports"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .any(|p| p["name"] == port),
                        "{}: scrapes port {port}, which {} does not name",
                        name(m),
                        name(d)
                    );
                    job_series_targets += count;
                }
            }
        }
        // The replicas' own series are scraped (one monitor keeps them).
        if is_replica {
            assert!(
                scraped_by(d).iter().any(|m| kept(m).is_some()),
                "{}: nothing scrapes the replicas' own series",
                name(d)
            );
        }
    }
    assert_eq!(
        job_series_targets, 1,
        "the per-job series are scraped from {job_series_targets} target(s), not one"
    );
}

/// The crontab of the manifest's ConfigMap reads as `anarchon cron` reads it, and so does the
/// package's example crontab once its jobs are uncommented; as shipped it has no job, and the
/// service refuses to start on it rather than run an example.
#[test]
fn the_shipped_crontabs_read() {
    let docs = manifest();
    let dir = tempfile::tempdir().unwrap();
    let check = |text: &str| {
        let path = dir.path().join("crontab");
        std::fs::write(&path, text).unwrap();
        crate::common::anarchon()
            .args(["cron", "--check"])
            .arg(&path)
            .output()
            .unwrap()
    };
    for cm in kind(&docs, "ConfigMap") {
        let crontab = cm["data"]["crontab"].as_str().unwrap();
        let out = check(crontab);
        assert!(
            out.status.success(),
            "{}'s crontab: {}",
            name(cm),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let example = repo_file("docs/deploy/crontab");
    let out = check(&example);
    assert_eq!(out.status.code(), Some(2), "the example as shipped");
    assert!(String::from_utf8_lossy(&out.stderr).contains("has no job line"));
    let uncommented: String = example
        .lines()
        .map(|l| match l.strip_prefix("# ") {
            Some(rest)
                if rest.starts_with("# anarchon:")
                    || rest.starts_with("PATH=")
                    || rest.starts_with("CRON_TZ=")
                    || rest.starts_with(|c: char| c.is_ascii_digit() || c == '*' || c == '@') =>
            {
                rest
            }
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let out = check(&uncommented);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && said.contains("reads: 2 job(s)"),
        "the example with its jobs uncommented: {said}"
    );
}
