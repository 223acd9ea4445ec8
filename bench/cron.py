"""`anarchon cron` under load, measured inside Redis and on the daemons' processes (bench/cron.sh
runs it; issue #38's figures), each against a baseline measured in the same run.

Part 1, server time per run on the daemons' warm connection, per store format: JOBS jobs every
second in a crontab, run by one daemon, then by three replicas (the two others losing every
claim and standing by), for SECS seconds after a warm-up. Runs = results recorded in the window
(ZCARD of each job's :results); per run: the scripts' usec (INFO commandstats: FCALL, EVALSHA,
EVAL, their inner commands included) and the server's main-thread CPU (INFO cpu, everything:
the format checks, registry reads, the losers' looks). Baseline: two warm empty script calls
(EVALSHA of `return 0`, pipelined from one connection) and a warm SET NX PX + DEL pair.

Part 2, a herd: HERD jobs every minute (`* * * * *`) in one crontab, three replicas, over one
minute boundary: how late each run starts after its slot (the command logs the time it started;
p50, p99), each daemon's RSS after the herd and CPU while idle (between minutes), and the
server's PING latency (a client pinging every 5 ms) in the ten seconds after the minute against
ten idle seconds before it.

Usage: cron.py PORT BIN. Settings: JOBS (40), SECS (20), HERD (1000), SKIP_HERD=1, SKIP_STEADY=1."""
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
from resp import Redis  # noqa: E402

PORT, BIN = int(sys.argv[1]), sys.argv[2]
JOBS = int(os.environ.get("JOBS", "40"))
SECS = int(os.environ.get("SECS", "20"))
HERD = int(os.environ.get("HERD", "1000"))
r = Redis(PORT)
URL = f"redis://127.0.0.1:{PORT}"
WORK = tempfile.mkdtemp()


def stats():
    """(scripts' usec, script calls, main-thread CPU usec) so far."""
    calls, usec = 0, 0
    for line in r.cmd("INFO", "commandstats").splitlines():
        if line.startswith("cmdstat_"):
            name, rest = line[len("cmdstat_"):].split(":", 1)
            if name in ("fcall", "evalsha", "eval", "fcall_ro", "evalsha_ro", "eval_ro"):
                fields = dict(kv.split("=") for kv in rest.split(","))
                calls += int(fields["calls"])
                usec += int(fields["usec"])
    cpu = dict(line.split(":", 1) for line in r.cmd("INFO", "cpu").split() if ":" in line)
    main = float(cpu.get("used_cpu_user_main_thread", cpu["used_cpu_user"])) + \
        float(cpu.get("used_cpu_sys_main_thread", cpu["used_cpu_sys"]))
    return usec, calls, main * 1e6


def start_daemons(crontab, n, tag):
    procs = []
    for i in range(n):
        err = open(os.path.join(WORK, f"{tag}{i}.err"), "w")
        procs.append(subprocess.Popen(
            [BIN, "--redis", URL, "cron", crontab], stdout=subprocess.DEVNULL, stderr=err))
    return procs


def stop(procs):
    for p in procs:
        p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=40)
        except subprocess.TimeoutExpired:
            p.kill()


def results_recorded(jobs, fmt):
    return sum(r.cmd("ZCARD", f"{{cron:{j}}}:results") or 0 for j in jobs)


def baseline():
    """Two warm empty script calls, and a warm SET NX PX + DEL pair: (script usec, CPU usec)."""
    sha = r.cmd("SCRIPT", "LOAD", "return 0")
    u0, c0, m0 = stats()
    n = 4000
    for _ in range(n // 100):
        r.pipeline([("EVALSHA", sha, 0)] * 100)
    u1, c1, m1 = stats()
    empty = ((u1 - u0) / n * 2, (m1 - m0) / n * 2)
    _, _, m0 = stats()
    for i in range(n // 100):
        r.pipeline([c for k in range(50) for c in
                    (("SET", f"b{k}", "v", "NX", "PX", 30000), ("DEL", f"b{k}"))])
    _, _, m1 = stats()
    return empty, (m1 - m0) / (n / 2)


def steady(fmt, replicas):
    r.cmd("FLUSHALL")
    if fmt == 2:
        r.cmd("SET", "cron:format", 2)
    crontab = os.path.join(WORK, f"steady{fmt}")
    jobs = [f"j{i}" for i in range(JOBS)]
    with open(crontab, "w") as f:
        for j in jobs:
            f.write(f"# anarchon: --job {j}\n* * * * * * true\n")
    procs = start_daemons(crontab, replicas, f"s{fmt}r{replicas}-")
    time.sleep(5)  # warm: connections open, scripts loaded, registries written
    n0, (u0, c0, m0) = results_recorded(jobs, fmt), stats()
    time.sleep(SECS)
    n1, (u1, c1, m1) = results_recorded(jobs, fmt), stats()
    stop(procs)
    runs = max(1, n1 - n0)
    return runs, (u1 - u0) / runs, (c1 - c0) / runs, (m1 - m0) / runs


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))]


def proc_cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0


def herd():
    r.cmd("FLUSHALL")
    log = os.path.join(WORK, "herd.log")
    crontab = os.path.join(WORK, "herd")
    with open(crontab, "w") as f:
        for i in range(HERD):
            f.write(f"# anarchon: --job h{i}\n* * * * * echo \"$ANARCHON_SLOT $(date +%s%3N)\" >> {log}\n")
    procs = start_daemons(crontab, 3, "herd")
    now = time.time()
    # Start pinging; the next minute boundary at least 25 s away.
    boundary = (int(now) // 60 + 1) * 60
    if boundary - now < 25:
        boundary += 60
    pings, stop_pinging = [], threading.Event()

    def pinger():
        p = Redis(PORT)
        while not stop_pinging.is_set():
            t = time.time()
            p.cmd("PING")
            pings.append((t, (time.time() - t) * 1e6))
            time.sleep(0.005)

    thread = threading.Thread(target=pinger)
    thread.start()
    # Idle CPU: 10 s well before the boundary.
    time.sleep(max(0, boundary - 15 - time.time()))
    cpu0 = [proc_cpu(p.pid) for p in procs]
    time.sleep(10)
    cpu1 = [proc_cpu(p.pid) for p in procs]
    idle_cpu = [(b - a) / 10 * 100 for a, b in zip(cpu0, cpu1)]
    time.sleep(max(0, boundary + 30 - time.time()))
    rss = [proc_rss_mib(p.pid) for p in procs]
    stop_pinging.set()
    thread.join()
    stop(procs)
    # The runs of the minute's slot (a replica's start also takes the slot before it, when it
    # is less than --max-late old: those are not the herd's).
    late = []
    with open(log) as f:
        for line in f:
            slot, at = line.split()
            if int(slot) == boundary * 1000:
                late.append(int(at) - int(slot))
    idle = [us for t, us in pings if boundary - 12 <= t < boundary - 2]
    busy = [us for t, us in pings if boundary <= t < boundary + 10]
    return {
        "runs": len(late), "late_p50": pct(late, 0.5), "late_p99": pct(late, 0.99),
        "late_max": max(late), "idle_cpu": idle_cpu, "rss": rss,
        "ping_idle_p99": pct(idle, 0.99), "ping_herd_p99": pct(busy, 0.99),
        "ping_idle_p50": pct(idle, 0.5), "ping_herd_p50": pct(busy, 0.5),
    }


def main():
    (empty_us, empty_cpu), pair_cpu = baseline()
    print(f"baseline: two warm empty script calls {empty_us:.2f} us script time, "
          f"{empty_cpu:.2f} us server CPU; a warm SET NX PX + DEL pair {pair_cpu:.2f} us CPU")
    for fmt in (1, 2) if os.environ.get("SKIP_STEADY") != "1" else ():
        for replicas in (1, 3):
            runs, script_us, calls, cpu_us = steady(fmt, replicas)
            print(f"format {fmt}, {replicas} replica(s), {JOBS} jobs every second, {runs} runs: "
                  f"scripts {script_us:.1f} us/run ({calls:.1f} calls, "
                  f"{script_us / empty_us:.1f}x two empty calls), server CPU {cpu_us:.1f} us/run "
                  f"({cpu_us / empty_cpu:.1f}x two empty calls)")
    if os.environ.get("SKIP_HERD") != "1":
        h = herd()
        print(f"herd: {HERD} jobs every minute, 3 replicas, {h['runs']} runs: start after the slot "
              f"p50 {h['late_p50']} ms, p99 {h['late_p99']} ms, max {h['late_max']} ms")
        print("  daemons idle CPU " + ", ".join(f"{c:.2f}%" for c in h["idle_cpu"]) +
              "; RSS after the herd " + ", ".join(f"{m:.1f} MiB" for m in h["rss"]))
        print(f"  server PING p50/p99: idle {h['ping_idle_p50']:.0f}/{h['ping_idle_p99']:.0f} us, "
              f"the 10 s after the minute {h['ping_herd_p50']:.0f}/{h['ping_herd_p99']:.0f} us "
              f"({h['ping_herd_p99'] / h['ping_idle_p99']:.1f}x)")
    shutil.rmtree(WORK, ignore_errors=True)


main()
