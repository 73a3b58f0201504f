#!/usr/bin/env python3
"""Fills a migrated kerntune store with finished tune jobs for the load benchmark (bench/load.sh).

Writes rows the way the store does (jobs, variants, measurements, pruned groups, the Pareto front,
jobs.best_variant_id; job_counts follow from the schema's triggers) in one transaction, so 10,000
jobs take seconds instead of the hours real tuning would. The daemon must not be running.

  load_seed.py DB [--jobs 10000] [--variants 16] [--large-every 100] [--large-variants 1000]

Every job tunes bf16 GEMM on an H100 for one of 100 shapes (M = 256 * (1 + i % 10), N = 256 *
(1 + i // 10 % 10), K = 4096); every --large-every-th job has --large-variants variants so a page
of the variant list is a full one.
"""
import argparse
import json
import sqlite3
import sys
import time

DEVICE_UUID = "GPU-load-bench-h100"
DEVICE_NAME = "NVIDIA H100 80GB HBM3"
NOW = "2026-01-01T00:00:00.000Z"


def shape_of(i):
    return {"K": 4096, "M": 256 * (1 + i % 10), "N": 256 * (1 + i // 10 % 10)}


def key_of(values):
    return ",".join(f"{k}={v}" for k, v in sorted(values.items()))


def seed(db_path, jobs, variants, large_every, large_variants):
    db = sqlite3.connect(db_path, isolation_level=None)
    if db.execute("SELECT name FROM sqlite_master WHERE name='pruned_configs'").fetchone() is None:
        sys.exit(f"load_seed: {db_path} is not a migrated kerntune store (start kerntuned once)")
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=OFF")
    db.execute("BEGIN")
    next_job = (db.execute("SELECT COALESCE(MAX(id), 0) FROM jobs").fetchone()[0]) + 1
    next_variant = (db.execute("SELECT COALESCE(MAX(id), 0) FROM variants").fetchone()[0]) + 1
    fronts = {}  # shape key -> [(median_us, variant_id, max_rel, footprint)]
    job_rows, variant_rows, measurement_rows, pruned_rows, best = [], [], [], [], []
    for i in range(jobs):
        job_id = next_job + i
        shape = shape_of(i)
        shape_key = key_of(shape)
        job_rows.append((job_id, "gemm", json.dumps(shape, separators=(",", ":")), shape_key,
                         "bf16", "tune", "sm_90a", DEVICE_UUID, DEVICE_NAME, 64, "done", 40.0,
                         NOW, NOW, NOW))
        count = large_variants if large_every and i % large_every == 0 else variants
        fastest = None
        for v in range(count):
            variant_id = next_variant
            next_variant += 1
            config = {"BM": 64 * (1 + v % 4), "BN": 64 * (1 + v // 4 % 4), "BK": 32,
                      "STAGES": 2 + v // 16}
            registers = 64 + v % 128
            failed = v % 4 == 3
            variant_rows.append((variant_id, job_id, "gemm_mma",
                                 json.dumps(config, separators=(",", ":")), key_of(config),
                                 "compile_error" if failed else "measured",
                                 "compile" if failed else "",
                                 "ptxas: too many resources" if failed else "",
                                 "" if failed else f"k{job_id}-{v}",
                                 -1 if failed else registers, 0, 32768, 256, 12.5))
            if failed:
                continue
            median = 20.0 + ((job_id * 7 + v * 13) % 97) / 10.0
            max_rel = 0.001 * (1 + v % 5)
            measurement_rows.append((variant_id, median, median * 0.98, median * 0.99,
                                     median * 1.02, median, 0.002, 50, 1, max_rel * 8, max_rel,
                                     max_rel / 2, 500.0, 100.0, 40.0 / median))
            if fastest is None or median < fastest[0]:
                fastest = (median, variant_id)
            fronts.setdefault(shape_key, []).append(
                (median, variant_id, max_rel, 32768 + 4 * registers * 256))
        best.append((fastest[1] if fastest else None, job_id))
        pruned_rows.append((job_id, "gemm_mma", "constraint failed: BM * BN <= 32768", 40000,
                            json.dumps([{"BM": 256, "BN": 256, "BK": 32, "STAGES": 2}])))
        pruned_rows.append((job_id, "gemm_mma", "constraint failed: STAGES * (BM + BN) * BK * 2"
                            " <= smem", 27000, "[]"))
    db.executemany(
        "INSERT INTO jobs (id, family, shape_json, shape_key, dtype, mode, arch, device_uuid,"
        " device_name, budget, status, reference_us, created_at, started_at, finished_at)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", job_rows)
    db.executemany(
        "INSERT INTO variants (id, job_id, template_name, config_json, config_key, status,"
        " failed_gate, reason, kernel_key, registers, spill_bytes, smem_bytes, threads,"
        " compile_ms) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", variant_rows)
    db.executemany(
        "INSERT INTO measurements (variant_id, median_us, min_us, p10_us, p90_us, mean_us,"
        " rel_noise, trials, converged, max_abs, max_rel, rel_l2, tflops, gbps, speedup)"
        " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", measurement_rows)
    db.executemany("INSERT INTO pruned_configs (job_id, template_name, reason, count,"
                   " examples_json) VALUES (?,?,?,?,?)", pruned_rows)
    db.executemany("UPDATE jobs SET best_variant_id = ? WHERE id = ?", best)
    # The front of each problem: points no other point beats on time, error and footprint.
    pareto_rows = []
    for shape_key, points in fronts.items():
        points.sort()
        kept = []
        for p in points:
            if not any(q[0] <= p[0] and q[2] <= p[2] and q[3] <= p[3] for q in kept):
                kept.append(p)
        pareto_rows += [(DEVICE_NAME, "gemm", "bf16", shape_key, vid, med, err, fp)
                        for med, vid, err, fp in kept]
    db.executemany("INSERT INTO pareto (device_name, family, dtype, shape_key, variant_id,"
                   " median_us, max_error, footprint) VALUES (?,?,?,?,?,?,?,?)", pareto_rows)
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return len(job_rows), len(variant_rows), len(pareto_rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("db")
    parser.add_argument("--jobs", type=int, default=10000)
    parser.add_argument("--variants", type=int, default=16)
    parser.add_argument("--large-every", type=int, default=100)
    parser.add_argument("--large-variants", type=int, default=1000)
    args = parser.parse_args()
    start = time.monotonic()
    jobs, variants, front = seed(args.db, args.jobs, args.variants, args.large_every,
                                 args.large_variants)
    print(f"load_seed: {jobs} jobs, {variants} variants, {front} front points in "
          f"{time.monotonic() - start:.1f} s")


if __name__ == "__main__":
    main()
