#!/usr/bin/env python3
"""Searched jobs against a whole-space job on the GPU (issue 15's GPU target).

  search_gpu.py URL WHOLE_JOB_ID OUT.json [SEARCHER[:cold|:warm] ...]   (default: local model random)

For a finished whole-space job (every surviving variant measured, e.g. by bench/record_spaces.sh)
it submits, for each searcher, the same problem with a budget of 10% of the variants the whole
space measured, and waits for it. Then one pinned job measures the whole space's winner and every
searched job's winner side by side (the job's interleaved final comparison, so GPU drift between
the jobs does not enter the ratio). Prints a table and writes OUT.json with every job's id, budget,
wall seconds, best first-pass median and the pinned job's interleaved medians.
A searcher named with ":cold" runs with "warm_start": false, with ":warm" with true (the default:
the daemon warm-starts a learning searcher from the nearest tuned shapes of the problem, when it
has any); each row records the job's warm start and, from its convergence (best so far after
every measured variant), how many variants it measured before its best was within 3% of the whole
space's first-pass best ("to_3pct", and that as a fraction of the whole space).
Standard library only (runs on the GPU machine beside the slim binaries). First run on an H100 on
2026-11-27: the searched jobs ran, the interleaved medians did not come back (it looked for them in
the variant view, then at the job view's top level; they are in its "comparison"."final").
"""
import json
import math
import sys
import time
import urllib.error
import urllib.request


def call(url, method="GET", body=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return json.load(reply)
    except urllib.error.HTTPError as e:
        raise SystemExit(f"{method} {url}: {e.code} {e.read().decode(errors='replace')}")


def wait(base, job_id, deadline_s=600):
    start = time.time()
    while True:
        job = call(f"{base}/v1/jobs/{job_id}")
        if job["status"] not in ("queued", "running"):
            return job, time.time() - start
        if time.time() - start > deadline_s:
            call(f"{base}/v1/jobs/{job_id}", method="DELETE")
        time.sleep(2)


def config_of(variant):
    entry = dict(variant["config"])
    entry["template"] = variant["template"]
    return entry


def main():
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    base, whole_id, out_path = sys.argv[1].rstrip("/"), int(sys.argv[2]), sys.argv[3]
    searchers = sys.argv[4:] or ["local", "model", "random"]
    whole = call(f"{base}/v1/jobs/{whole_id}")
    if whole["status"] != "done" or not whole.get("best"):
        raise SystemExit(f"job {whole_id} is {whole['status']} without a best variant")
    measured = whole["progress"]["by_status"].get("measured", 0)
    budget = max(1, math.ceil(0.10 * measured))
    problem = {"family": whole["family"], "shape": whole["shape"], "dtype": whole["dtype"]}
    if whole.get("device_uuid"):
        problem["device"] = whole["device_uuid"]
    report = {"whole": {"id": whole_id, "measured": measured,
                        "best_median_us": whole["best"]["median_us"],
                        "best": config_of(whole["best"])},
              "budget": budget, "searched": []}
    print(f"whole space: job {whole_id}, {measured} measured, best "
          f"{whole['best']['median_us']:.2f} us ({whole['best']['template']})", flush=True)
    optimum = whole["best"]["median_us"]
    for spec in searchers:
        searcher, _, start = spec.partition(":")
        body = dict(problem, budget=budget, search=searcher)
        if start:
            body["warm_start"] = start == "warm"
        job = call(f"{base}/v1/jobs", "POST", body)
        done, wall = wait(base, job["id"])
        best = done.get("best")
        to_3pct = next((n for n, best_us in done.get("convergence") or []
                        if best_us <= 1.03 * optimum), None)
        warm = done.get("warm_start") or {}
        row = {"searcher": spec, "id": job["id"], "status": done["status"],
               "wall_s": round(wall, 1),
               "best_median_us": best["median_us"] if best else None,
               "best": config_of(best) if best else None,
               "warm_start_from": [f["shape_key"] for f in warm.get("from", [])],
               "warm_start_seeds": len(warm.get("seeds", [])),
               "to_3pct": to_3pct,
               "to_3pct_fraction": round(to_3pct / measured, 4) if to_3pct else None,
               "convergence": done.get("convergence")}
        report["searched"].append(row)
        print(f"{spec}: job {job['id']} {done['status']} in {wall:.0f} s, best "
              f"{row['best_median_us']} us, within 3% after {to_3pct} measured, warm start "
              f"from {row['warm_start_from'] or 'none'}", flush=True)
    # One pinned job: the winners side by side, interleaved.
    configs, seen = [], set()
    for entry in [report["whole"]["best"]] + [r["best"] for r in report["searched"] if r["best"]]:
        key = json.dumps(entry, sort_keys=True)
        if key not in seen:
            seen.add(key)
            configs.append(entry)
    report["pinned"] = None
    if len(configs) > 1:
        job = call(f"{base}/v1/jobs", "POST", dict(problem, configs=configs))
        done, wall = wait(base, job["id"])
        variants = call(f"{base}/v1/jobs/{job['id']}/variants?limit=1000")
        rows = variants["variants"] if isinstance(variants, dict) else variants
        report["pinned_variants"] = [{"id": v["id"], "config": config_of(v)} for v in rows]
        # The job's final comparison: variant ids and their interleaved timings, in one order.
        # The job view carries it under "comparison" (with the verdict) as "final".
        comparison = done.get("final") or (done.get("comparison") or {}).get("final") or {}
        median_of = {vid: t.get("median_us") for vid, t in
                     zip(comparison.get("variant_ids", []), comparison.get("timings", []))}
        final = {json.dumps(config_of(v), sort_keys=True): median_of.get(v["id"]) for v in rows}
        report["pinned"] = {"id": job["id"], "status": done["status"],
                            "comparison": done.get("comparison"), "final": done.get("final")}
        whole_us = final.get(json.dumps(report["whole"]["best"], sort_keys=True))
        for row in report["searched"]:
            key = json.dumps(row["best"], sort_keys=True) if row["best"] else None
            row["interleaved_us"] = final.get(key)
            row["vs_whole"] = (row["interleaved_us"] / whole_us
                               if row["interleaved_us"] and whole_us else None)
        report["whole"]["interleaved_us"] = whole_us
    else:
        for row in report["searched"]:
            row["interleaved_us"], row["vs_whole"] = None, 1.0
    print(f"\n| searcher | budget | wall s | best first pass us | measured until within 3% "
          f"| interleaved us | vs whole space |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    print(f"| whole space | {measured} | | {report['whole']['best_median_us']:.2f} | | "
          f"{report['whole'].get('interleaved_us')} | 1 |")
    for row in report["searched"]:
        print(f"| {row['searcher']} | {budget} | {row['wall_s']} | {row['best_median_us']} | "
              f"{row['to_3pct']} ({row['to_3pct_fraction']}) | {row['interleaved_us']} | "
              f"{row['vs_whole']} |")
    with open(out_path, "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
