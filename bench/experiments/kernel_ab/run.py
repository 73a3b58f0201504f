#!/usr/bin/env python3
"""Times each case's config from the current sources against the same config from the sources of
before (template <name>_before, see make_families.py): one job per case and round, pinned to the
two configs, so the job validates both and its final comparison times them interleaved, beside the
family's baseline. Writes every job's JSON and a summary (new / before per case: the median over
rounds and the range) to OUT.

  run.py --bin build/bin --families FAMILIES --cases cases.txt --rounds 3 --out OUT
"""
import argparse, json, os, statistics, subprocess, sys, time, urllib.request

parser = argparse.ArgumentParser()
parser.add_argument("--bin", required=True)
parser.add_argument("--families", required=True)
parser.add_argument("--cases", required=True)
parser.add_argument("--rounds", type=int, default=3)
parser.add_argument("--out", required=True)
parser.add_argument("--port", type=int, default=18631)
args = parser.parse_args()
os.makedirs(os.path.join(args.out, "jobs"), exist_ok=True)
url = f"http://127.0.0.1:{args.port}"


def call(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def parse_cases(path):
    cases = []
    for line in open(path):
        if not line.strip() or line.startswith("#"):
            continue
        family, shape, dtype, template, config = [c.strip() for c in line.split("|")]
        values = {k: int(v) for k, v in (kv.split("=") for kv in config.split())}
        cases.append({"family": family, "shape": {k.upper(): int(v) for k, v in
                                                  (kv.split("=") for kv in shape.split(","))},
                      "dtype": dtype, "template": template, "config": values,
                      "name": f"{family} {shape} {dtype} {template}"})
    return cases


log = open(os.path.join(args.out, "kerntuned.log"), "w")
daemon = subprocess.Popen([os.path.join(args.bin, "kerntuned"), "--listen", f"127.0.0.1:{args.port}",
                           "--db", os.path.join(args.out, "ab.sqlite"), "--families", args.families,
                           "--worker", os.path.join(args.bin, "kerntune-worker")],
                          stdout=log, stderr=subprocess.STDOUT)
try:
    for _ in range(300):
        try:
            call("GET", "/healthz")
            break
        except Exception:
            time.sleep(0.2)
    cases = parse_cases(args.cases)
    ratios = {c["name"]: [] for c in cases}
    rows = []

    def pinned(case):
        return [dict(case["config"], template=case["template"]),
                dict(case["config"], template=case["template"] + "_before")]

    # Compile every case's pair at once first (compile-only jobs run side by side on every core
    # and fill the kernel cache), so the timed jobs do not wait on NVRTC one pair at a time.
    arch = call("GET", "/v1/devices")["devices"][0]["arch"]
    compiles = [call("POST", "/v1/jobs", {"family": c["family"], "shape": c["shape"],
                                         "dtype": c["dtype"], "mode": "compile", "arch": arch,
                                         "configs": pinned(c)}) for c in cases]
    for job in compiles:
        while job["status"] in ("queued", "running"):
            time.sleep(0.5)
            job = call("GET", f"/v1/jobs/{job['id']}")
        print(f"compiled job {job['id']}: {job['status']}", flush=True)

    def write_summary():
        print("\n".join(write_summary()))
finally:
    daemon.terminate()
    daemon.wait(timeout=30)
