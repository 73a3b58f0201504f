#!/usr/bin/env python3
"""The load benchmark's side probes (bench/load.sh).

  load_probe.py probe URL PID SECONDS OUT.json
      GET URL/healthz every 20 ms on one kept-alive connection (what a monitor sees while wrk
      loads the daemon) and the daemon's VmRSS every 100 ms; writes latency percentiles (ms) and
      the RSS maximum (MB).
  load_probe.py wrk WRK_OUTPUT
      Prints the figures of one `wrk --latency` output as JSON (requests/s, p50/p90/p99 in ms,
      errors).
  load_probe.py store DB
      Prints the bytes each table and index of the store occupies (SQLite's dbstat), as JSON.
"""
import http.client
import json
import re
import sqlite3
import sys
import time
import urllib.parse


def percentile(sorted_values, p):
    if not sorted_values:
        return None
    index = min(len(sorted_values) - 1, int(round(p / 100.0 * (len(sorted_values) - 1))))
    return sorted_values[index]


def rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        return None
    return None


def probe(url, pid, seconds, out):
    parsed = urllib.parse.urlparse(url)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    latencies, failures, rss_max = [], 0, 0.0
    end = time.monotonic() + seconds
    next_rss = 0.0
    while time.monotonic() < end:
        now = time.monotonic()
        if now >= next_rss:
            rss = rss_mb(pid)
            if rss is not None:
                rss_max = max(rss_max, rss)
            next_rss = now + 0.1
        start = time.monotonic()
        try:
            connection.request("GET", "/healthz")
            response = connection.getresponse()
            response.read()
            if response.status != 200:
                failures += 1
            latencies.append((time.monotonic() - start) * 1000.0)
        except (OSError, http.client.HTTPException):
            failures += 1
            connection.close()
            connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
        time.sleep(max(0.0, 0.02 - (time.monotonic() - start)))
    latencies.sort()
    result = {"healthz_requests": len(latencies), "healthz_failures": failures,
              "healthz_p50_ms": percentile(latencies, 50), "healthz_p99_ms": percentile(latencies, 99),
              "healthz_max_ms": latencies[-1] if latencies else None, "rss_max_mb": rss_max}
    with open(out, "w") as f:
        json.dump(result, f, indent=1)


def to_ms(text):
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text).groups()
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}[unit]


def parse_wrk(path):
    text = open(path).read()
    result = {"requests_per_s": float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))}
    for p in ("50", "90", "99"):
        match = re.search(rf"^\s+{p}%\s+(\S+)", text, re.M)
        result[f"p{p}_ms"] = to_ms(match.group(1)) if match else None
    match = re.search(r"(\d+) requests in", text)
    result["requests"] = int(match.group(1)) if match else None
    errors = re.search(r"Socket errors: (.*)", text)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    result["socket_errors"] = errors.group(1).strip() if errors else ""
    result["non_2xx"] = int(non2xx.group(1)) if non2xx else 0
    return result


def store_bytes(db_path):
    db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    rows = db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name").fetchall()
    return {name: size for name, size in rows}


def main():
    command = sys.argv[1]
    if command == "probe":
        probe(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5])
    elif command == "wrk":
        print(json.dumps(parse_wrk(sys.argv[2])))
    elif command == "store":
        print(json.dumps(store_bytes(sys.argv[2])))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
