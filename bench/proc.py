"""What one run costs anarchon's own processes (issue #49), each against a baseline measured in
the same run, for the binaries given (the current build, and optionally another to compare).

Part 1, the wrapper: `sh -c 'anarchon run --job J --slot S -- true'` against the floor
`sh -c 'flock -n FILE true'`, started in turn (A B A B ...), PAIRS pairs. Per command: wall ms,
CPU ms (user + system, the wrapper, its guard and its command, from wait4's rusage) and minor
page faults; the ratio to flock is taken pair by pair and its median printed.

Part 2, the daemon: JOBS jobs `* * * * * * true` (every second) in one crontab, one daemon, for
SECS seconds after a warm-up. CPU of the daemon process itself (utime + stime of
/proc/PID/stat, its children's not included) divided by the runs recorded in the window (ZCARD
of each job's :results), and how much of it is system time; beside it the CPU of its guard
spawner (the process that forks each run's guard, when the build has one).

Usage: proc.py PORT BIN [BIN ...]. Settings: PAIRS (30), JOBS (100), SECS (20), SKIP_DAEMON=1."""
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from resp import Redis  # noqa: E402

PORT, BINS = int(sys.argv[1]), sys.argv[2:]
PAIRS = int(os.environ.get("PAIRS", "30"))
JOBS = int(os.environ.get("JOBS", "100"))
SECS = int(os.environ.get("SECS", "20"))
URL = f"redis://127.0.0.1:{PORT}"
WORK = tempfile.mkdtemp()
r = Redis(PORT)


def timed(argv):
    """(wall ms, CPU ms, minor faults) of one command, its waited-for descendants included."""
    start = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         env=dict(os.environ, ANARCHON_REDIS_URL=URL))
    _, _, ru = os.wait4(p.pid, 0)
    wall = (time.perf_counter() - start) * 1000
    p.returncode = 0
    return wall, (ru.ru_utime + ru.ru_stime) * 1000, ru.ru_minflt


def wrapper():
    lock = os.path.join(WORK, "lock")
    floor = ["sh", "-c", f"flock -n {lock} true"]
    rows = {b: [] for b in BINS}
    floors = []
    for i in range(PAIRS + 2):
        for k, b in enumerate(BINS):
            # A slot of its own for each run: a slot that already ran is not run again.
            cmd = f"{b} run --job bench-proc --slot {1000 * (k + 1) + i} --overlap allow -- true"
            f, a = timed(floor), timed(["sh", "-c", cmd])
            if i >= 2:  # the first two pairs warm the caches and register the job
                rows[b].append((a, f))
                floors.append(f)
    med = statistics.median
    print(f"wrapper, {PAIRS} pairs (median): wall ms, CPU ms, minor faults; ratio to flock pair by pair")
    print(f"  {'sh -c flock -n FILE true':44} {med(f[0] for f in floors):6.2f} {med(f[1] for f in floors):6.2f} "
          f"{med(f[2] for f in floors):6.0f}")
    for b, pairs in rows.items():
        ratio = med(a[0] / f[0] for a, f in pairs)
        print(f"  {'sh -c anarchon run -- true (' + label(b) + ')':44} {med(a[0] for a, _ in pairs):6.2f} "
              f"{med(a[1] for a, _ in pairs):6.2f} {med(a[2] for a, _ in pairs):6.0f}   {ratio:.2f}x flock")


def proc_cpu(pid):
    """(user, system) seconds and minor page faults of the process itself."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick, int(fields[7])


def daemon(b):
    r.cmd("FLUSHALL")
    crontab = os.path.join(WORK, "every-second")
    jobs = [f"p{i}" for i in range(JOBS)]
    with open(crontab, "w") as f:
        for j in jobs:
            f.write(f"# anarchon: --job {j}\n* * * * * * true\n")
    err = open(os.path.join(WORK, "daemon.err"), "w")
    p = subprocess.Popen([b, "--redis", URL, "cron", crontab], stdout=subprocess.DEVNULL, stderr=err)
    time.sleep(5)  # warm: connection open, scripts loaded, registry written
    spawner = spawner_of(p.pid)
    n0, (u0, s0, f0) = recorded(jobs), proc_cpu(p.pid)
    sp0 = sum(proc_cpu(spawner)[:2]) if spawner else 0
    time.sleep(SECS)
    n1, (u1, s1, f1) = recorded(jobs), proc_cpu(p.pid)
    sp1 = sum(proc_cpu(spawner)[:2]) if spawner else 0
    rss = rss_mib(p.pid)
    p.terminate()
    p.wait(timeout=60)
    runs = max(1, n1 - n0)
    cpu = (u1 - u0 + s1 - s0) * 1000 / runs
    system = (s1 - s0) / max(1e-9, u1 - u0 + s1 - s0) * 100
    print(f"  {label(b):44} {runs:6} runs  {cpu:5.2f} ms CPU per run  ({system:.0f}% system), "
          f"{(f1 - f0) / runs:.0f} minor faults per run, RSS {rss:.0f} MiB" +
          (f"; its guard spawner {(sp1 - sp0) * 1000 / runs:.2f} ms per run" if spawner else
           "; no guard spawner (guards forked by the daemon)"))


def spawner_of(pid):
    """The daemon's guard spawner (its child named anarchon-spawn), if it has one."""
    for d in os.listdir("/proc"):
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
        except (OSError, ValueError):
            continue
        name = stat[stat.find("(") + 1:stat.rfind(")")]
        if name == "anarchon-spawn" and int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            return int(d)
    return None


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0


def recorded(jobs):
    return sum(r.cmd("ZCARD", f"{{cron:{j}}}:results") or 0 for j in jobs)


def label(b):
    return os.path.relpath(b, os.getcwd()) if b.startswith(os.getcwd()) else b


print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; "
      f"{sum(1 for d in os.listdir('/proc') if d.isdigit())} processes in /proc")
wrapper()
if not os.environ.get("SKIP_DAEMON"):
    print(f"daemon, {JOBS} jobs every second, {SECS} s after a 5 s warm-up: CPU of the daemon itself per run")
    for b in BINS:
        daemon(b)
