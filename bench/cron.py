"""`anarchon cron` under load, measured inside Redis and on the daemons' processes (bench/cron.sh
runs it; issue #38's figures), each against a baseline measured in the same run.

Part 1, server time per run on the daemons' warm connection, per store format: JOBS jobs every
second in a crontab, run by one daemon, then by three replicas (the two others losing every
claim and standing by), for SECS seconds after a warm-up. Runs = results recorded in the window
(ZCARD of each job's :results); per run: the scripts' usec (INFO commandstats: FCALL, EVALSHA,
EVAL, their inner commands included) and the server's main-thread CPU (INFO cpu, everything:
the format checks, registry reads, the losers' looks). Baseline: two warm empty script calls
(EVALSHA of `return 0`, pipelined from one connection) and a warm SET NX PX + DEL pair.

Part 2, a herd (issue #49's figures): HERD jobs every minute (`* * * * *`) in one crontab,
REPLICAS replicas (3) with --listen, over one minute boundary, on a new store: how late each run
started after its slot (the command logs the time it started and the replica that ran it: p50,
p99, max), the share of the herd each replica ran, the server's PING latency (a client pinging
every 5 ms) in the ten seconds after the minute against ten idle seconds before it, each
daemon's RSS idle, after the herd and at its peak (VmHWM), its CPU idle and over the herd, and the
daemons' own lateness histograms (`anarchon_cron_run_start_lateness_seconds`) when they have
one. Beside it, the machine's floor: the same HERD commands started by one small process
(posix_spawn, no anarchon, no Redis) at a whole second. With BASE_BIN (a release build of an
older commit), the herd is measured with it first, in the same run.

Usage: cron.py PORT BIN. Settings: JOBS (40), SECS (20), HERD (1000), HERD_PERIOD (60: every
minute; 20 or 30 for a quicker look, `*/N` seconds), REPLICAS (3), BASE_BIN, PROFILE=FILE (perf
record of the replicas over the herd), SKIP_HERD=1, SKIP_STEADY=1."""
import collections
import os
import shutil
import signal
import socket
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
HERD_PERIOD = int(os.environ.get("HERD_PERIOD", "60"))
REPLICAS = int(os.environ.get("REPLICAS", "3"))
BASE_BIN = os.environ.get("BASE_BIN")
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
    return values[min(len(values) - 1, int(len(values) * p))] if values else 0


def proc_cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_mib(pid, field="VmRSS"):
    """A /proc/PID/status size (VmRSS now, VmHWM its peak), MiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0


def free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def http_get(port, path):
    import urllib.request
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as reply:
            return reply.read().decode()
    except OSError:
        return ""


def next_boundary(period, ahead):
    """The next multiple of `period` seconds at least `ahead` seconds from now."""
    boundary = (int(time.time()) // period + 1) * period
    while boundary - time.time() < ahead:
        boundary += period
    return boundary


def herd_line(log):
    """The herd's command: it logs its slot, the replica that ran it and when it started (ms)."""
    return f'echo "$ANARCHON_SLOT $ANARCHON_RUNNER $(date +%s%3N)" >> {log}'


def pinging():
    """A client pinging the server every 5 ms: (pings as (time, usec), stop)."""
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

    def stop_it():
        stop_pinging.set()
        thread.join()
    return pings, stop_it


def floor():
    """The machine's own floor for a herd: the herd's HERD commands (`sh -c`, as the daemon
    starts them) started from one small process at a whole second (posix_spawn, no anarchon, no
    Redis): how late the last of them starts is what this box takes to start HERD shells. The
    server's PING p99 over the 10 s after that second is the machine's floor for the herd's: the
    box busy starting commands, Redis doing nothing else."""
    log = os.path.join(WORK, "floor.log")
    line = herd_line(log)
    at = int(time.time()) + 12
    pings, stop_it = pinging()
    time.sleep(at - time.time())
    env = dict(os.environ, ANARCHON_SLOT=str(at * 1000), ANARCHON_RUNNER="floor")
    pids = [os.posix_spawn("/bin/sh", ["sh", "-c", line], env) for _ in range(HERD)]
    for pid in pids:
        os.waitpid(pid, 0)
    time.sleep(max(0, at + 10 - time.time()))
    stop_it()
    late = []
    with open(log) as f:
        for row in f:
            slot, _, ms = row.split()
            late.append(int(ms) - int(slot))
    idle = [us for t, us in pings if at - 10 <= t < at]
    busy = [us for t, us in pings if at <= t < at + 10]
    return late, pct(idle, 0.99), pct(busy, 0.99)


def herd(binary):
    """HERD jobs `* * * * *` (every HERD_PERIOD seconds) in one crontab, REPLICAS replicas of
    `binary`, over one boundary: how late each run started (what the command logged), which
    replica ran it, the server's PING latency, each replica's CPU and RSS."""
    r.cmd("FLUSHALL")
    log = os.path.join(WORK, "herd.log")
    if os.path.exists(log):
        os.remove(log)
    crontab = os.path.join(WORK, "herd")
    period = HERD_PERIOD
    schedule = "* * * * *" if period == 60 else f"*/{period} * * * * *"
    with open(crontab, "w") as f:
        for i in range(HERD):
            f.write(f"# anarchon: --job h{i}\n{schedule} {herd_line(log)}\n")
    ports = [free_port() for _ in range(REPLICAS)]
    procs = []
    for i, port in enumerate(ports):
        err = open(os.path.join(WORK, f"herd{i}.err"), "w")
        procs.append(subprocess.Popen(
            [binary, "--redis", URL, "cron", crontab, "--listen", f"127.0.0.1:{port}"],
            stdout=subprocess.DEVNULL, stderr=err))
    # The next boundary at least 25 s away: the daemons started, then 10 idle seconds.
    boundary = next_boundary(period, 25)
    pings, stop_it = pinging()
    time.sleep(max(0, boundary - 13 - time.time()))
    # Inside Redis over the herd: every command of 1 ms or more (SLOWLOG), the main thread's
    # CPU and the commands run (INFO cpu, commandstats), from 1 s before the boundary.
    r.cmd("CONFIG", "SET", "slowlog-log-slower-than", "1000")
    r.cmd("CONFIG", "SET", "slowlog-max-len", "10000")
    rss_idle = [proc_mib(p.pid) for p in procs]
    cpu0 = [proc_cpu(p.pid) for p in procs]
    time.sleep(10)
    cpu1 = [proc_cpu(p.pid) for p in procs]
    idle_cpu = [(b - a) / 10 * 100 for a, b in zip(cpu0, cpu1)]
    cpu0 = cpu1
    profile = None
    time.sleep(max(0, boundary - 1 - time.time()))
    r.cmd("SLOWLOG", "RESET")
    server0 = server_work()
    if os.environ.get("PROFILE"):
        # perf over the replicas from just before the boundary: where their time goes.
        time.sleep(max(0, boundary - 1 - time.time()))
        profile = subprocess.Popen(
            ["perf", "record", "-F", "999", "-g", "-o", os.environ["PROFILE"], "-p",
             ",".join(str(p.pid) for p in procs), "--", "sleep", "12"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(max(0, boundary + 10 - time.time()))
    server1 = server_work()
    slow = [(entry[2], slow_name(entry[3])) for entry in r.cmd("SLOWLOG", "GET", "10000")]
    time.sleep(max(0, boundary + 20 - time.time()))
    if profile:
        profile.wait()
    herd_cpu = [proc_cpu(p.pid) - a for p, a in zip(procs, cpu0)]
    rss = [proc_mib(p.pid) for p in procs]
    peak = [proc_mib(p.pid, "VmHWM") for p in procs]
    metrics = [http_get(port, "/metrics") for port in ports]
    stop_it()
    runners = {f"{socket.gethostname()}:{p.pid}": i for i, p in enumerate(procs)}
    stop(procs)
    late, share = [], [0] * len(procs)
    with open(log) as f:
        for row in f:
            slot, runner, ms = row.split()
            # A replica's start also takes the slot before it when it is less than --max-late
            # old: those runs are not the herd's.
            if int(slot) == boundary * 1000:
                late.append(int(ms) - int(slot))
                share[runners.get(runner, 0)] += 1
    idle = [us for t, us in pings if boundary - 12 <= t < boundary - 2]
    busy = [us for t, us in pings if boundary <= t < boundary + 10]
    return {
        "late": late, "share": share, "idle_cpu": idle_cpu, "herd_cpu": herd_cpu,
        "rss_idle": rss_idle, "rss": rss, "peak": peak,
        "ping_idle": (pct(idle, 0.5), pct(idle, 0.99)),
        "ping_herd": (pct(busy, 0.5), pct(busy, 0.99)),
        "lateness": [histogram_quantiles(m) for m in metrics],
        "server": {k: server1[k] - server0[k] for k in server1},
        "slow": slow,
    }


def slow_name(args):
    """A SLOWLOG entry's command, with the function or script it ran."""
    name = args[0].decode() if isinstance(args[0], bytes) else str(args[0])
    if name.upper() in ("FCALL", "FCALL_RO") and len(args) > 1:
        arg = args[1].decode() if isinstance(args[1], bytes) else str(args[1])
        return f"{name} {arg}"
    return name


def server_work():
    """The server's main-thread CPU (usec) and its commands' calls and usec so far."""
    cpu = dict(line.split(":", 1) for line in r.cmd("INFO", "cpu").split() if ":" in line)
    main = float(cpu.get("used_cpu_user_main_thread", cpu["used_cpu_user"])) + \
        float(cpu.get("used_cpu_sys_main_thread", cpu["used_cpu_sys"]))
    calls = usec = 0
    for line in r.cmd("INFO", "commandstats").splitlines():
        if line.startswith("cmdstat_"):
            fields = dict(kv.split("=") for kv in line.split(":", 1)[1].split(","))
            calls += int(fields["calls"])
            usec += int(fields["usec"])
    return {"cpu_us": main * 1e6, "calls": calls, "usec": usec}


def histogram_quantiles(text):
    """The daemon's own lateness histogram summed over its jobs (None without one): its count
    and the upper bounds of the buckets holding the p50 and p99."""
    buckets = {}
    for line in text.splitlines():
        if line.startswith("anarchon_cron_run_start_lateness_seconds_bucket{"):
            le = line.split('le="', 1)[1].split('"', 1)[0]
            buckets[le] = buckets.get(le, 0) + float(line.rsplit(" ", 1)[1])
    if not buckets:
        return None
    bounds = sorted(buckets, key=lambda b: float("inf") if b == "+Inf" else float(b))
    count = buckets["+Inf"]
    at = lambda q: next((b for b in bounds if buckets[b] >= q * count), "+Inf")
    return int(count), at(0.5), at(0.99)


def say_herd(name, h, floor):
    floor_late, floor_idle, floor_busy = floor
    late, share = h["late"], h["share"]
    total = max(1, sum(share))
    print(f"herd ({name}): {HERD} jobs every {HERD_PERIOD} s, {REPLICAS} replicas, "
          f"{len(late)} runs: start after the slot p50 {pct(late, 0.5)} ms, "
          f"p99 {pct(late, 0.99)} ms, max {max(late, default=0)} ms "
          f"(floor: p99 {pct(floor_late, 0.99)} ms, max {max(floor_late, default=0)} ms)")
    print("  share per replica " + " / ".join(str(s) for s in share) + " (" +
          " / ".join(f"{s * 100 / total:.0f}%" for s in share) + ")")
    (i50, i99), (b50, b99) = h["ping_idle"], h["ping_herd"]
    print(f"  server PING p50/p99: idle {i50:.0f}/{i99:.0f} us, the 10 s after the boundary "
          f"{b50:.0f}/{b99:.0f} us ({b99 / max(i99, 1):.1f}x); the floor's p99 idle {floor_idle:.0f}, "
          f"while it starts its {HERD} commands {floor_busy:.0f} us ({floor_busy / max(floor_idle, 1):.1f}x): "
          f"the herd's p99 {b99 / max(floor_busy, 1):.1f}x the floor's")
    w, slow = h["server"], h["slow"]
    print(f"  inside Redis, the 10 s from 1 s before the boundary: main thread CPU "
          f"{w['cpu_us'] / 1e6:.2f} s ({w['cpu_us'] / max(1, len(late)):.0f} us per run), "
          f"{w['calls']} commands ({w['calls'] / max(1, len(late)):.1f} per run) taking "
          f"{w['usec'] / 1e6:.2f} s; commands of 1 ms or more (SLOWLOG): {len(slow)}"
          + (f", the longest {max(slow)[0]} us ({max(slow)[1]}); by command: " + ", ".join(
              f"{n} {name}" for name, n in collections.Counter(x[1] for x in slow).most_common(6))
             if slow else ""))
    print("  RSS idle -> after the herd (peak) " + ", ".join(
        f"{a:.1f} -> {b:.1f} ({c:.1f}) MiB" for a, b, c in zip(h["rss_idle"], h["rss"], h["peak"])))
    print("  CPU idle " + ", ".join(f"{c:.2f}%" for c in h["idle_cpu"]) +
          "; CPU over the herd's 20 s " + ", ".join(f"{c:.2f} s" for c in h["herd_cpu"]))
    if any(h["lateness"]):
        print("  the daemons' lateness histograms (runs, p50 and p99 bucket): " + ", ".join(
            f"{q[0]} runs <= {q[1]} s / <= {q[2]} s" if q else "none" for q in h["lateness"]))


def main():
    if os.environ.get("SKIP_STEADY") != "1":
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
        measured_floor = floor()
        for name, binary in [("baseline", BASE_BIN), ("this build", BIN)]:
            if binary:
                say_herd(name, herd(binary), measured_floor)
    shutil.rmtree(WORK, ignore_errors=True)


main()
