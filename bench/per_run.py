"""Server commands per run of `anarchon cron`, and what losers standing by cost (issue #49).

Usage: python3 bench/per_run.py BIN [BIN...]   (each binary measured in turn, against its own
throwaway redis-server; bench/per_run.sh builds this tree's release binary and passes it).

1. Per run: JOBS jobs `*/2 * * * * * true` in 1 replica (the warm connection's own commands),
   then in 3 (with the losers' looks). After a warm-up, `CONFIG RESETSTAT`
   and MONITOR for SECS seconds; the runs are the attempts recorded in the window (`:results`
   ZCOUNT by slot). Printed per run: INFO commandstats calls (which count the commands scripts
   call too), the commands clients sent (MONITOR lines not from `lua`) by name, and the client
   round trips (commands of one connection within 1 ms of each other: a pipeline).
2. Losers: one job `sleep 20` every 30 s in 3 replicas; once a run is in progress, MONITOR for
   LOSER_SECS seconds: the commands and round trips per second of each replica that stands by
   (the connections that write the job's `:standby:` key), per run in progress. LOSER_FROM=0
   LOSER_SECS=29: from the slot to just before the next, the whole run and its lease: what the
   losers cost per run (the wake-ups of a hand-over let them look seldom: issue #49).
Env: JOBS (20), SECS (30), LOSER_SECS (12), LOSER_FROM (3), FORMAT (1 or 2: `anarchon migrate` first),
PARTS (per_run,losers), SHOW=1 (the replicas' logs of part 2).
"""

import collections
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

JOBS = int(os.environ.get("JOBS", "20"))
SECS = float(os.environ.get("SECS", "30"))
LOSER_SECS = float(os.environ.get("LOSER_SECS", "12"))
# When the losers' window opens, in seconds after the slot (0 with LOSER_SECS=29: the whole run).
LOSER_FROM = int(os.environ.get("LOSER_FROM", "3"))
FORMAT = os.environ.get("FORMAT", "1")
LINE = re.compile(r'^(\d+\.\d+) \[\d+ ([^\]]+)\] "([A-Za-z]+)"(.*)$')


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Server:
    def __init__(self):
        self.dir = tempfile.mkdtemp()
        self.port = free_port()
        self.proc = subprocess.Popen(
            [os.environ.get("ANARCHON_TEST_SERVER", "redis-server"), "--port", str(self.port),
             "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", self.dir],
            stdout=subprocess.DEVNULL)
        for _ in range(50):
            if self.cli("PING").strip() == "PONG":
                break
            time.sleep(0.1)
        self.url = f"redis://127.0.0.1:{self.port}"

    def cli(self, *args):
        return subprocess.run(["redis-cli", "-p", str(self.port), *args],
                              capture_output=True, text=True).stdout

    def monitor(self, secs):
        out = open(os.path.join(self.dir, "monitor"), "w")
        mon = subprocess.Popen(["redis-cli", "-p", str(self.port), "monitor"], stdout=out)
        time.sleep(secs)
        mon.terminate()
        mon.wait()
        out.close()
        lines = []
        for line in open(os.path.join(self.dir, "monitor"), errors="replace"):
            m = LINE.match(line)
            if m:
                lines.append((float(m[1]), m[2], m[3].upper(), m[4]))
        return lines

    def stop(self):
        self.proc.terminate()
        self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def replicas(bin_, server, crontab, n=3):
    env = dict(os.environ, ANARCHON_REDIS_URL=server.url)
    procs = []
    for i in range(n):
        log = open(os.path.join(server.dir, f"r{i}.log"), "w")
        procs.append(subprocess.Popen([bin_, "cron", crontab], env=env, stdout=log,
                                      stderr=subprocess.STDOUT))
    return procs


def stop_all(procs):
    for p in procs:
        p.terminate()
    for p in procs:
        p.wait()


def client_lines(lines):
    # Background traffic of a replica, not of a run: its presence, its request stream, PING.
    skip = ("PING", "XREAD", "MONITOR", "CLIENT", "HELLO", "FUNCTION", "SCRIPT", "CONFIG", "INFO")
    return [l for l in lines if l[1] != "lua" and l[2] not in skip and "replicas" not in l[3]]


def round_trips(lines):
    trips, last = 0, {}
    for at, who, _, _ in lines:
        if who not in last or at - last[who] > 0.001:
            trips += 1
        last[who] = at
    return trips


def reads(server):
    for line in server.cli("info", "stats").splitlines():
        if line.startswith("total_reads_processed:"):
            return int(line.split(":")[1])
    return 0


def commandstats(server):
    calls = {}
    for line in server.cli("info", "commandstats").splitlines():
        m = re.match(r"cmdstat_([^:]+):calls=(\d+)", line)
        if m:
            calls[m[1]] = int(m[2])
    return calls


def per_run(bin_, n):
    server = Server()
    env = dict(os.environ, ANARCHON_REDIS_URL=server.url)
    if FORMAT == "2":
        subprocess.run([bin_, "migrate", "--yes"], env=env, capture_output=True)
    crontab = os.path.join(server.dir, "crontab")
    with open(crontab, "w") as f:
        for j in range(JOBS):
            f.write(f"# anarchon: --job j{j}\n*/2 * * * * * true\n")
    procs = replicas(bin_, server, crontab, n)
    time.sleep(6)  # warm: every job's first slot taken
    server.cli("config", "resetstat")
    t0 = int(server.cli("time").split()[0]) * 1000
    lines = server.monitor(SECS)
    stats = commandstats(server)
    trips = reads(server)
    t1 = int(server.cli("time").split()[0]) * 1000
    stop_all(procs)
    # Slots in [t0 + 1 s, t1 - 3 s), and the commands sent in the same span: a slot's commands
    # follow its fire time by milliseconds, and a run ends well within 3 s.
    runs = sum(int(server.cli("zcount", f"{{cron:j{j}}}:results", str(t0 + 1000),
                              f"({t1 - 3000}") or 0) for j in range(JOBS))
    runs_all = sum(int(server.cli("zcount", f"{{cron:j{j}}}:results", str(t0), str(t1)) or 0)
                   for j in range(JOBS))
    sent = client_lines([l for l in lines if t0 + 1000 <= l[0] * 1000 < t1 - 3000])
    server.stop()
    by_name = collections.Counter(l[2] for l in sent)
    print(f"  runs in window: {runs}")
    print(f"  client commands per run ({n} replica(s) together): {len(sent) / runs:.2f}; "
          f"socket reads per run (INFO total_reads_processed: a herd's pipelined requests are "
          f"read in batches; presence and PINGs included): {trips / runs_all:.2f}")
    print("    " + ", ".join(f"{k} {v / runs:.2f}" for k, v in by_name.most_common()))
    total = sum(v for k, v in stats.items() if k not in ("ping", "monitor", "config", "info"))
    print(f"  INFO commandstats calls per run (window {SECS:.0f} s, scripts' own commands "
          f"included; replicas' presence too): {total * 1.0 / max(runs_all, 1):.2f}")
    print("    " + ", ".join(f"{k} {v / max(runs_all, 1):.2f}" for k, v in
                             sorted(stats.items(), key=lambda kv: -kv[1])[:14]))


def losers(bin_):
    server = Server()
    env = dict(os.environ, ANARCHON_REDIS_URL=server.url)
    if FORMAT == "2":
        subprocess.run([bin_, "migrate", "--yes"], env=env, capture_output=True)
    crontab = os.path.join(server.dir, "crontab")
    with open(crontab, "w") as f:
        f.write("# anarchon: --job long\n*/30 * * * * * sleep 20\n")
    # All three replicas up well before the next slot; measured from 3 s after it.
    while int(server.cli("time").split()[0]) % 30 not in range(2, 20):
        time.sleep(0.5)
    procs = replicas(bin_, server, crontab)
    slot = (int(server.cli("time").split()[0]) // 30 + 1) * 30
    while int(server.cli("time").split()[0]) < slot + LOSER_FROM:
        time.sleep(0.05)
    lines = client_lines(server.monitor(LOSER_SECS))
    stop_all(procs)
    if os.environ.get("SHOW"):
        for i in range(3):
            print(open(os.path.join(server.dir, f"r{i}.log")).read()[-1500:])
    server.stop()
    standing = {l[1] for l in lines if l[2] == "SET" and ":standby:" in l[3]}
    holders = {l[1] for l in lines if l[2] == "FCALL" and "heartbeat" in l[3]}
    print(f"  connections: {len({l[1] for l in lines})}, holding {len(holders)}, "
          f"standing by {len(standing)}")
    mine = [l for l in lines if l[1] in standing]
    by_name = collections.Counter(l[2] for l in mine)
    n = max(len(standing), 1)
    print(f"  losers standing by: {len(standing)}; per loser per second: "
          f"{len(mine) / n / LOSER_SECS:.2f} commands, {round_trips(mine) / n / LOSER_SECS:.2f} "
          f"round trips")
    print("    " + ", ".join(f"{k} {v / n / LOSER_SECS:.2f}" for k, v in by_name.most_common()))
    if LOSER_FROM == 0 and LOSER_SECS >= 28:
        # The window holds the whole run (20 s) and its lease's end (30 s): the losers' cost of one run.
        print(f"  per loser for the whole run: {len(mine) / n:.1f} commands, "
              f"{round_trips(mine) / n:.1f} round trips")


PARTS = os.environ.get("PARTS", "per_run,losers").split(",")
for bin_ in sys.argv[1:]:
    for n in (1, 3):
        if "per_run" in PARTS:
            print(f"{bin_} (format {FORMAT}, {JOBS} jobs every 2 s, {n} replica(s), {SECS:.0f} s):")
            per_run(bin_, n)
    if "losers" in PARTS:
        print(f"{bin_} (format {FORMAT}): losers of one `sleep 20` run, {LOSER_SECS:.0f} s")
        losers(bin_)
