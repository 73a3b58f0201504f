#!/usr/bin/env python3
"""Times each case's config from the current sources against the same config from the sources of
before (template <name>_before, see make_families.py): one job per case and round, pinned to the
two configs, so the job validates both and its final comparison times them interleaved, beside the
family's baseline. Writes every job's JSON and a summary (new / before per case: the median over
rounds and the range) to OUT.

  run.py --bin build/bin --families FAMILIES --cases cases.txt --rounds 3 --out OUT
"""
import argparse, json, os, shutil, statistics, subprocess, sys, time, urllib.error, urllib.request

parser = argparse.ArgumentParser()
parser.add_argument("--bin", required=True)
parser.add_argument("--families", required=True)
parser.add_argument("--cases", required=True)
parser.add_argument("--rounds", type=int, default=3)
parser.add_argument("--out", required=True)
parser.add_argument("--port", type=int, default=18631)
parser.add_argument("--from-db", help="summarise the tune jobs of this store (a copy) instead of "
                    "running new ones")
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


if args.from_db:
    shutil.copy(args.from_db, os.path.join(args.out, "ab.sqlite"))
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
    arch = None if args.from_db else call("GET", "/v1/devices")["devices"][0]["arch"]
    compiles = [] if args.from_db else [call("POST", "/v1/jobs", {"family": c["family"], "shape": c["shape"],
                                         "dtype": c["dtype"], "mode": "compile", "arch": arch,
                                         "configs": pinned(c)}) for c in cases]
    for job in compiles:
        while job["status"] in ("queued", "running"):
            time.sleep(0.5)
            job = call("GET", f"/v1/jobs/{job['id']}")
        print(f"compiled job {job['id']}: {job['status']}", flush=True)

    def write_summary():
        summary = ["# new vs before: before_us / new_us of the final comparison (interleaved), "
                   "> 1 means the new source is faster", ""]
        summary.append("| case | rounds | median before/new | range |")
        summary.append("| --- | --- | --- | --- |")
        for case in cases:
            r = ratios[case["name"]]
            figure = (f"{statistics.median(r):.3f} | {min(r):.3f}–{max(r):.3f}" if r
                      else "no figure | ")
            summary.append(f"| {case['name']} {case['config']} | {len(r)} | {figure} |")
        all_ratios = [x for r in ratios.values() for x in r]
        if all_ratios:
            summary.append("")
            summary.append(f"all cases: median {statistics.median(all_ratios):.3f}, range "
                           f"{min(all_ratios):.3f}–{max(all_ratios):.3f} over {len(all_ratios)} jobs")
        with open(os.path.join(args.out, "summary.md"), "w") as f:
            f.write("\n".join(summary + ["", "## Jobs", ""] + rows) + "\n")
        return summary

    def stored_jobs():  # (round, case, job) of every tune job of --from-db, in id order
        seen = {}
        job_id = 1
        while True:
            try:
                job = call("GET", f"/v1/jobs/{job_id}")
            except urllib.error.HTTPError:
                return
            job_id += 1
            case = next((c for c in cases if job["mode"] == "tune" and c["family"] == job["family"]
                         and c["shape"] == job["shape"] and c["dtype"] == job["dtype"]), None)
            if case:
                seen[case["name"]] = seen.get(case["name"], -1) + 1
                yield seen[case["name"]], case, job

    def new_jobs():  # one job per case and round, pinned to the pair
        for round_index in range(args.rounds):
            for case in cases:
                job = call("POST", "/v1/jobs", {"family": case["family"], "shape": case["shape"],
                                                "dtype": case["dtype"], "configs": pinned(case)})
                while job["status"] in ("queued", "running"):
                    time.sleep(0.5)
                    job = call("GET", f"/v1/jobs/{job['id']}")
                yield round_index, case, job
            write_summary()

    for round_index, case, job in (stored_jobs() if args.from_db else new_jobs()):
        variants = call("GET", f"/v1/jobs/{job['id']}/variants")["variants"]
        with open(os.path.join(args.out, "jobs", f"job-{job['id']}.json"), "w") as f:
            json.dump({"case": case, "round": round_index, "job": job, "variants": variants},
                      f, indent=1)
        template_of = {v["id"]: v["template"] for v in variants}
        status = {v["template"]: v["status"] for v in variants}
        final = (job.get("comparison") or {}).get("final") or {}
        medians = {template_of.get(vid): t["median_us"]
                   for vid, t in zip(final.get("variant_ids", []), final.get("timings", []))}
        new, before = medians.get(case["template"]), medians.get(case["template"] + "_before")
        ratio = before / new if new and before else None
        if ratio:
            ratios[case["name"]].append(ratio)
            line = (f"round {round_index + 1} job {job['id']} {job['status']}: {case['name']}: "
                    f"new {new:.2f} us ({status.get(case['template'])}), before {before:.2f} us "
                    f"({status.get(case['template'] + '_before')}), before/new {ratio:.4f}")
        else:
            line = (f"round {round_index + 1} job {job['id']} {job['status']}: {case['name']}: "
                    f"no pair of final timings; statuses {status}, reason {job.get('reason')}")
        print(line, flush=True)
        rows.append(line)
    print("\n".join(write_summary()))
finally:
    daemon.terminate()
    daemon.wait(timeout=30)
