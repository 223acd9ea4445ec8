"""The server's cost of `run --live-output`, measured inside Redis (INFO commandstats, INFO cpu):
each run is `anarchon run --slot S -- sh -c 'seq LINES'`, its own process as in a fleet, with and
without the flag, interleaved; the flag's cost per line of output is the difference over LINES.
BEFORE_BIN (another version's binary) adds its runs without the flag to every round: the cost of a
run without the flag, before and after, in one run.

Usage: live_output.py PORT. ROUNDS (5), RUNS (20 per column and round), LINES (1000)."""
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
from resp import Redis  # noqa: E402

PORT = int(sys.argv[1])
BIN = os.environ.get("BIN", "target/release/anarchon")
ROUNDS = int(os.environ.get("ROUNDS", "5"))
RUNS = int(os.environ.get("RUNS", "20"))
LINES = int(os.environ.get("LINES", "1000"))
r = Redis(PORT)
ENV = dict(os.environ, ANARCHON_REDIS_URL=f"redis://127.0.0.1:{PORT}")


def stats():
    """Every command's usec and calls so far, and the main thread's CPU seconds."""
    usec, calls = 0.0, 0
    for line in r.cmd("INFO", "commandstats").splitlines():
        if not line.startswith("cmdstat_"):
            continue
        fields = dict(kv.split("=") for kv in line.split(":", 1)[1].split(","))
        usec += float(fields["usec"])
        calls += int(fields["calls"])
    cpu = dict(line.split(":", 1) for line in r.cmd("INFO", "cpu").split() if ":" in line)
    main = float(cpu.get("used_cpu_user_main_thread", cpu["used_cpu_user"])) + \
        float(cpu.get("used_cpu_sys_main_thread", cpu["used_cpu_sys"]))
    return usec, calls, main


COLUMNS = {"off": (BIN, []), "on": (BIN, ["--live-output", "--live-output-lines", str(LINES)])}
if os.environ.get("BEFORE_BIN"):
    COLUMNS["before"] = (os.environ["BEFORE_BIN"], [])
slot = 60_000


def column_round(name):
    """RUNS runs of one column: the server's usec, calls and CPU µs per run."""
    global slot
    binary, flags = COLUMNS[name]
    before = stats()
    for _ in range(RUNS):
        slot += 60_000
        subprocess.run([binary, "run", "--job", f"bench-{name}", "--slot", str(slot), *flags,
                        "--", "sh", "-c", f"seq {LINES}"],
                       env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    after = stats()
    return ((after[0] - before[0]) / RUNS, (after[1] - before[1]) / RUNS,
            (after[2] - before[2]) * 1e6 / RUNS)


rounds = {name: [] for name in COLUMNS}
for _ in range(ROUNDS):
    for name in COLUMNS:
        rounds[name].append(column_round(name))


def median(name, i):
    return statistics.median(x[i] for x in rounds[name])


print(f"per run (median of {ROUNDS} rounds of {RUNS} runs; the command prints {LINES} lines):")
print(f"{'':24} {'server usec':>12} {'commands':>9} {'main CPU µs':>12}")
for name in COLUMNS:
    label = {"off": "this build, no flag", "on": "this build, --live-output",
             "before": "BEFORE_BIN, no flag"}[name]
    print(f"{label:24} {median(name, 0):12.1f} {median(name, 1):9.1f} {median(name, 2):12.1f}")
if "before" in COLUMNS:
    print(f"no flag, this build / before: server usec {median('off', 0) / median('before', 0):.2f}x, "
          f"commands {median('off', 1) / median('before', 1):.2f}x")
per_line_usec = (median("on", 0) - median("off", 0)) / LINES
per_line_cpu = (median("on", 2) - median("off", 2)) / LINES
per_line_calls = (median("on", 1) - median("off", 1)) / LINES
print(f"--live-output per line of output: {per_line_usec:.2f} server usec in commands, "
      f"{per_line_cpu:.2f} µs of the main thread's CPU, {per_line_calls:.3f} commands")
