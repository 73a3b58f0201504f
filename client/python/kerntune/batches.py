"""Batches (POST /v1/batches) on the client's side: the problems of a shapes file as
kerntune.torch.record writes it, and the one progress line of Client.wait_batch (as the CLI's
tune-all draws it)."""

from __future__ import annotations

import json
from typing import Any, Dict, List, Tuple


def read_shapes_lines(path: str) -> List[Tuple[int, Dict[str, Any]]]:
    """The lines of a shapes file with their line numbers, each a JSON object with family, shape
    (an object) and dtype (strings). ValueError naming the file and line of the first that is
    not."""
    lines = []
    with open(path) as f:
        for number, text in enumerate(f, start=1):
            if not text.strip():
                continue
            try:
                line = json.loads(text)
            except json.JSONDecodeError as error:
                raise ValueError(f"{path}:{number}: not JSON ({error.msg})") from None
            if not isinstance(line, dict):
                raise ValueError(f"{path}:{number}: not a JSON object")
            for name, kind in (("family", str), ("shape", dict), ("dtype", str)):
                if name not in line:
                    raise ValueError(f"{path}:{number}: no {name!r}")
                if not isinstance(line[name], kind):
                    raise ValueError(f"{path}:{number}: {name!r} is not a JSON {'string' if kind is str else 'object'}")
            lines.append((number, line))
    return lines


def problems_from_shapes_file(path: str) -> Tuple[List[Dict[str, Any]], List[str]]:
    """The problems of a shapes file, one per family, shape and dtype (the shares and calls of its
    ops added), and the recorded lines no family takes ("gemm M=5 N=16 K=64 bf16 (mm): reason").
    ValueError naming the file and line of the first line that is not a problem."""
    problems: Dict[str, Dict[str, Any]] = {}
    unsupported: List[str] = []
    for number, line in read_shapes_lines(path):
        shape = line["shape"]
        for dim, extent in shape.items():
            if not isinstance(extent, int) or isinstance(extent, bool) or extent < 0:
                raise ValueError(f"{path}:{number}: dim {dim} is not a non-negative integer")
        label = f"{line['family']} " + " ".join(f"{d}={e}" for d, e in shape.items()) + f" {line['dtype']}"
        if line.get("supported") is False:
            unsupported.append(f"{label} ({line.get('op', '?')}): {line.get('reason', 'unsupported')}")
            continue
        key = json.dumps([line["family"], line["dtype"], sorted(shape.items())])
        share = float(line.get("share") or 0.0)
        calls = int(line.get("calls") or 0)
        if key in problems:
            problems[key]["share"] += share
            problems[key]["calls"] += calls
        else:
            problems[key] = {"family": line["family"], "shape": dict(shape), "dtype": line["dtype"],
                             "share": share, "calls": calls}
    out = sorted(problems.values(), key=lambda p: -p["share"])
    for problem in out:
        problem["share"] = min(max(problem["share"], 0.0), 1.0)
    return out, unsupported


def render(batch: Any) -> str:
    """"batch 3 running [######......] 2/5 problems (1 tuned before, 1 refused), job 14 gemm
    M=2048 N=4096 K=4096 bf16 40/64 variants"."""
    counts = batch.counts
    jobs = counts.get("problems", 0) - counts.get("tuned_before", 0) - counts.get("refused", 0)
    ended = counts.get("done", 0) + counts.get("failed", 0) + counts.get("cancelled", 0)
    width = 20
    filled = int(width * ended / jobs) if jobs > 0 else width
    extra = [f"{counts[k]} {k.replace('_', ' ')}" for k in ("tuned_before", "refused") if counts.get(k)]
    line = (f"batch {batch.id} {batch.status:<9} [{'#' * filled}{'.' * (width - filled)}] {ended}/{jobs} problems"
            + (f" ({', '.join(extra)})" if extra else ""))
    for problem in batch.problems:
        job = problem.get("job") or {}
        if job.get("status") != "running":
            continue
        progress = job.get("progress") or {}
        by_status = progress.get("by_status") or {}
        apart = by_status.get("pruned", 0) + by_status.get("unsupported_arch", 0)
        total = progress.get("total", 0) - apart
        shape = " ".join(f"{d}={e}" for d, e in problem["shape"].items())
        line += f", job {job['id']} {problem['family']} {shape} {problem['dtype']}"
        if total > 0:
            line += f" {progress.get('finished', 0) - apart}/{total} variants"
        break
    return line
