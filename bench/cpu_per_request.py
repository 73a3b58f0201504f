#!/usr/bin/env python3
"""Daemon CPU time per request: a measure of the daemon's work that holds on a shared machine,
where wrk's requests/s and latencies move with whatever else runs (issue 11).

  cpu_per_request.py URL PID SECONDS CONNECTIONS NAME|PATH[|WRK_LUA] ...

For each NAME, wrk (1 thread, CONNECTIONS kept-alive connections) loads URL+PATH for SECONDS
(with the Lua script if given); the daemon's user + system CPU (/proc/PID/stat) before and after,
divided by wrk's request count, is its CPU per request. Prints one line per NAME with the
requests, the CPU seconds, microseconds per request, wrk's p99 and the daemon's RSS.
Example (a daemon over a store seeded by bench/load_seed.py):
  cpu_per_request.py http://127.0.0.1:8080 $(pidof kerntuned) 5 8 history|/v1/history
"""
import os
import re
import subprocess
import sys


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return 0.0


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    url, pid, seconds, connections = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    for spec in sys.argv[5:]:
        name, path, *script = spec.split("|")
        command = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency"]
        if script:
            command += ["-s", script[0]]
        before = cpu_seconds(pid)
        out = subprocess.run(command + [url + path], capture_output=True, text=True,
                             check=True).stdout
        used = cpu_seconds(pid) - before
        requests = int(re.search(r"(\d+) requests in", out).group(1))
        p99 = re.search(r"99%\s+(\S+)", out).group(1)
        non_2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
        print(f"{name:10s} requests {requests:8d}  daemon cpu {used:6.2f} s"
              f"  {1e6 * used / max(requests, 1):8.1f} us/request  p99 {p99}"
              f"  rss {rss_mb(pid):.0f} MB" + (f"  non-2xx {non_2xx.group(1)}" if non_2xx else ""))


if __name__ == "__main__":
    main()
