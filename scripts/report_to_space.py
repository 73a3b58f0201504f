#!/usr/bin/env python3
"""Turns the per-job variant tables of a committed end-to-end report (`kerntune show JOB` output,
as bench/tune_e2e.sh wrote it) into recorded spaces (format kerntune-space/1) for kt-replay.

Used once for the 2026-11-22 H100 report, whose two jobs measured every surviving variant; newer
spaces come from `kerntune export JOB -o FILE`. The report holds no thread count: it is derived
from the template's warp axes (WARPS_M * WARPS_N * 32, the mma_multistage_cluster launch formula
of that day) and marked so in the provenance.

usage: report_to_space.py REPORT OUT_DIR --source PATH_IN_REPO
"""
import argparse
import json
import os
import re
import sys


def parse_jobs(lines):
    jobs, job, header = [], None, None
    for line in lines:
        m = re.match(r"^== job (\d+)$", line)
        if m:
            job = {"id": int(m.group(1)), "variants": []}
            jobs.append(job)
            header = None
            continue
        if job is None:
            continue
        m = re.match(r"^\s+problem:\s+(\S+) (\S+) (.*)$", line)
        if m:
            job["family"], job["dtype"] = m.group(1), m.group(2)
            job["shape"] = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m.group(3))}
            continue
        m = re.match(r"^\s+target:\s+(.*) \((sm_\w+)\)$", line)
        if m:
            job["device"] = {"name": m.group(1), "arch": m.group(2)}
            continue
        m = re.match(r"^\s+budget:\s+(.*)$", line)
        if m:
            job["budget"] = m.group(1)
            continue
        if line.startswith("variant  template"):
            header = True
            continue
        if header and re.match(r"^\d+\s", line):
            job["variants"].append(parse_variant(line))
    return jobs


def parse_variant(line):
    tokens = line.split()
    template = tokens[1]
    config, i = {}, 2
    while "=" in tokens[i]:
        k, v = tokens[i].split("=")
        config[k] = int(v)
        i += 1
    status = tokens[i]
    rest = tokens[i + 2:]  # after gate/reason (one token, "-" when none)
    median = None
    if rest and rest[0] != "-" and len(rest) > 1 and rest[1] == "us":
        median = float(rest[0])
        rest = rest[2:]
    else:
        rest = rest[1:]
    rest = rest[1:]  # error column
    regs, spill, smem = (int(x) if x != "-" else -1 for x in rest[:3])
    threads = config.get("WARPS_M", 1) * config.get("WARPS_N", 1) * 32
    return {"template": template, "config": config, "status": status,
            "median_us": median if status == "measured" else None,
            "registers": regs, "spill_bytes": spill, "smem_bytes": smem, "threads": threads}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("report")
    parser.add_argument("out_dir")
    parser.add_argument("--source", required=True, help="the report's path in the repository")
    args = parser.parse_args()
    with open(args.report) as f:
        lines = f.read().splitlines()
    os.makedirs(args.out_dir, exist_ok=True)
    for job in parse_jobs(lines):
        if job.get("budget") != "all variants":
            continue  # only whole-space jobs make a space
        shape = "x".join(str(job["shape"][d]) for d in ("M", "N", "K"))
        name = f"{job['family']}-{job['dtype']}-{shape}-h100-2026-11-22.json"
        space = {
            "format": "kerntune-space/1", "family": job["family"], "shape": job["shape"],
            "dtype": job["dtype"], "device": job["device"],
            "provenance": {
                "source": args.source, "job": job["id"], "recorded": "2026-11-22",
                "how": "bench/tune_e2e.sh on one H100, budget 0 (every surviving variant);"
                       " converted by scripts/report_to_space.py",
                "threads": "derived: WARPS_M * WARPS_N * 32"},
            "variants": job["variants"]}
        with open(os.path.join(args.out_dir, name), "w") as f:
            json.dump(space, f, indent=0, sort_keys=True)
            f.write("\n")
        print(f"{name}: {len(job['variants'])} variants", file=sys.stderr)


if __name__ == "__main__":
    main()
