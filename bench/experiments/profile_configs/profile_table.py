#!/usr/bin/env python3
"""One line per profiled kernel from profile_gemm.sh's <shape>-raw.csv files in DIR: time, tensor
pipe active (of its peak while the SM is active), issue slots busy, grid, registers, and the five
largest stall reasons in warps stalled per issued instruction (what the kernel waits on).

    python3 bench/experiments/profile_configs/profile_table.py DIR
"""
import csv, sys, glob, os
d = sys.argv[1]
want = {
 "gpu__time_duration.sum": "time",
 "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active": "tensor pipe active",
 "dram__throughput.avg.pct_of_peak_sustained_elapsed": "DRAM of peak",
 "smsp__issue_active.avg.pct_of_peak_sustained_active": "issue active",
 "launch__grid_size": "grid",
 "launch__registers_per_thread": "regs",
}
stall_prefix = "smsp__average_warps_issue_stalled_"
for path in sorted(glob.glob(os.path.join(d, "*-raw.csv"))):
    shape = os.path.basename(path)[:-8]
    rows = list(csv.reader(open(path)))
    hdr, units, data = rows[0], rows[1], rows[2:]
    idx = {h: i for i, h in enumerate(hdr)}
    name_col = idx.get("Kernel Name")
    for r in data:
        name = r[name_col]
        out = []
        for k, label in want.items():
            if k in idx and r[idx[k]] != "":
                out.append(f"{label} {r[idx[k]]} {units[idx[k]]}".strip())
        stalls = []
        for h, i in idx.items():
            if h.startswith(stall_prefix) and h.endswith("_per_issue_active.ratio") and r[i]:
                try: stalls.append((float(r[i]), h[len(stall_prefix):-len("_per_issue_active.ratio")]))
                except ValueError: pass
        stalls.sort(reverse=True)
        print(f"{shape} | {name[:70]} | " + "; ".join(out) + " | stalls/issue: " +
              ", ".join(f"{s} {v:.2f}" for v, s in stalls[:5]))
