#!/usr/bin/env python3
"""Submits one pinned-config tuning job per shape to a running kerntuned (POST /v1/jobs with
"configs"), waits, and prints every variant's median beside cuBLAS timed in the same job.
Configs the GPU's limits refuse are dropped (the 400 names them). Standard library only.
Usage: pinned_jobs.py URL pinned.json DEADLINE_S OUT_JSON"""
import json, re, sys, time, urllib.request, urllib.error

url, pinned_path, deadline, out_path = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
start = time.time()

def call(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        return {"http_error": e.code, "body": e.read().decode()[:2000]}

pinned = json.load(open(pinned_path))
report = {}
shapes = list(pinned.items())
for index, (shape, configs) in enumerate(shapes):
    left = deadline - (time.time() - start)
    if left < 15:
        print(f"[{shape}] skipped: out of time", flush=True)
        continue
    m, n, k = (int(x) for x in shape.split("x"))
    configs = list(configs)
    while True:  # drop configs this GPU's limits refuse (named as configs[i] in the message)
        job = call("POST", "/v1/jobs", {"family": "gemm", "shape": {"M": m, "N": n, "K": k},
                                        "dtype": "bf16", "configs": configs})
        match = re.search(r"configs\[(\d+)\]", job.get("body", "")) if "http_error" in job else None
        if not match or len(configs) <= 1:
            break
        print(f"[{shape}] dropped {configs[int(match.group(1))]}: {job['body'][:300]}", flush=True)
        del configs[int(match.group(1))]
    if "id" not in job:
        print(f"[{shape}] refused: {job}", flush=True)
        report[shape] = {"refused": job}
        continue
    jid = job["id"]
    share = left / (len(shapes) - index)
    t0 = time.time()
    while job.get("status") in ("queued", "running") and time.time() - t0 < share:
        time.sleep(1)
        job = call("GET", f"/v1/jobs/{jid}")
    if job.get("status") in ("queued", "running"):
        call("DELETE", f"/v1/jobs/{jid}")
        time.sleep(2)
        job = call("GET", f"/v1/jobs/{jid}")
    variants = call("GET", f"/v1/jobs/{jid}/variants?exclude_pruned=1").get("variants", [])
    ref = job.get("reference_us")
    print(f"\n[{shape}] job {jid} {job.get('status')} in {time.time() - t0:.0f} s, cuBLAS {ref} us, "
          f"comparison {json.dumps(job.get('comparison'))}", flush=True)
    for v in sorted(variants, key=lambda v: v.get("median_us") or 1e30):
        med = v.get("median_us")
        err = v.get("error") or {}
        print(f"  {v['template']:16s} {v['config_key']:100s} {v['status']:14s} "
              f"{(f'{med:9.2f} us' if med else '        -   ')} "
              f"x{(v.get('speedup') or 0):.3f} tflops {(v.get('tflops') or 0):.0f} "
              f"regs {v.get('registers')} rel_l2 {err.get('rel_l2')} "
              f"{v.get('failed_gate') or ''} {(v.get('reason') or '')[:300]}", flush=True)
    report[shape] = {"job": job, "variants": variants}
json.dump(report, open(out_path, "w"), indent=1)
