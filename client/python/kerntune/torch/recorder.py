"""kerntune.torch.record: the problems a model runs, with their call counts and time shares.

A TorchFunctionMode sees every call of torch's functions while it is active, the ones nn.Linear
and F.scaled_dot_product_attention make included; the recorder maps the matrix products and
attention onto kerntune's families (problems.py), times each such call (CUDA events on a GPU,
the wall clock on the CPU) and, on exit, writes one JSON line per distinct problem.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import torch
from torch.overrides import TorchFunctionMode

from ..batches import read_shapes_lines
from . import problems, state

FORMAT = "kerntune-shapes/1"


@dataclass
class Tally:
    problem: problems.Problem
    device: str
    calls: int = 0
    seconds: float = 0.0
    first_seconds: float = 0.0  # CPU: the first call's time, used only when there is no other
    events: List[Tuple[Any, Any]] = field(default_factory=list)


def device_label(tensor: Any) -> str:
    if tensor.is_cuda:
        return torch.cuda.get_device_name(tensor.device)
    return "cpu"


class Recorder(TorchFunctionMode):
    """`with kerntune.torch.record("shapes.jsonl"):` run the model; the file is written on exit
    (also when the block raises). `append=True` adds to a file an earlier recording wrote,
    summing the calls and times of the problems both saw."""

    def __init__(self, path: str, append: bool = False):
        super().__init__()
        self.path = path
        self.append = append
        self.tallies: Dict[Tuple[Any, ...], Tally] = {}
        self._start = 0.0
        self._region_events: Optional[Tuple[Any, Any]] = None
        self.recorded_seconds = 0.0
        self.suspended = 0  # > 0 while a helper runs torch's ops for a problem it recorded itself

    # ---- the mode ----
    def __enter__(self) -> "Recorder":
        self._start = time.perf_counter()
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            start = torch.cuda.Event(enable_timing=True)
            start.record()
            self._region_events = (start, None)
        state.push(self)
        super().__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        super().__exit__(*exc)
        state.pop(self)
        self._finish()

    def __torch_function__(self, func: Any, types: Any, args: Tuple[Any, ...] = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        call = None if self.suspended else problems.call_of(func, args, kwargs)
        if call is None:
            return func(*args, **kwargs)
        return self.timed(call.problem, args, lambda: func(*args, **kwargs))

    # ---- recording ----
    def timed(self, problem: problems.Problem, args: Tuple[Any, ...], run: Any) -> Any:
        """Runs `run` and counts it, with its time, as one call of `problem`."""
        first = next((a for a in args if hasattr(a, "is_cuda")), None)
        on_gpu = first is not None and first.is_cuda
        tally = self.tallies.get(problem.key)
        if tally is None:
            tally = self.tallies[problem.key] = Tally(problem, device_label(first) if first is not None else "cpu")
        tally.calls += 1
        self.suspended += 1
        try:
            return self._timed(tally, on_gpu, run)
        finally:
            self.suspended -= 1

    def _timed(self, tally: Tally, on_gpu: bool, run: Any) -> Any:
        if on_gpu:
            if torch.cuda.is_current_stream_capturing():
                return run()  # a graph being captured runs nothing now: counted, not timed
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            result = run()
            end.record()
            tally.events.append((start, end))
            if self._region_events is None:  # CUDA came up inside the block: time from here
                self._region_events = (start, None)
            return result
        begin = time.perf_counter()
        result = run()
        elapsed = time.perf_counter() - begin
        # As on the GPU: the first call is counted, its one-off set-up time is not.
        if tally.calls == 1:
            tally.first_seconds = elapsed
        else:
            tally.seconds += elapsed
        return result

    def _finish(self) -> None:
        wall = time.perf_counter() - self._start
        gpu_region = 0.0
        if self._region_events is not None:
            end = torch.cuda.Event(enable_timing=True)
            end.record()
            end.synchronize()
            gpu_region = self._region_events[0].elapsed_time(end) / 1e3
        for tally in self.tallies.values():
            if tally.events:
                times = [s.elapsed_time(e) / 1e3 for s, e in tally.events]
                # A problem's first call pays one-off set-up (a library's lazy initialisation, its
                # heuristics, a cold cache): counted, but the time is the later calls' mean.
                typical = times[1:] if len(times) > 1 else times
                tally.seconds += sum(typical) / len(typical) * len(times)
            elif tally.calls:  # on the CPU likewise: the later calls' mean for every call
                later = tally.calls - 1
                tally.seconds = tally.seconds / later * tally.calls if later else tally.first_seconds
            tally.events.clear()
        # The share is of the GPU time between the block's start and end when the ops ran on a
        # GPU, of the wall time on the CPU.
        self.recorded_seconds = gpu_region if gpu_region > 0 else wall
        lines = [self._line(t) for t in self.tallies.values()]
        if self.append and os.path.exists(self.path):
            lines, total = merge(read(self.path), lines, self.recorded_seconds * 1e6)
        else:
            total = self.recorded_seconds * 1e6
        for line in lines:
            line["recorded_us"] = round(total, 3)
            line["share"] = round(line["time_us"] / total, 6) if total > 0 else 0.0
        lines.sort(key=lambda line: -line["time_us"])
        write(self.path, lines)

    def _line(self, tally: Tally) -> Dict[str, Any]:
        p = tally.problem
        line: Dict[str, Any] = {"format": FORMAT, "family": p.family, "shape": p.shape_dict, "dtype": p.dtype,
                                "layout": p.layout, "op": p.op, "supported": p.supported, "calls": tally.calls,
                                "time_us": round(tally.seconds * 1e6, 3), "device": tally.device}
        if p.reason:
            line["reason"] = p.reason
        return line


def line_key(line: Dict[str, Any]) -> Tuple[Any, ...]:
    return (line["family"], json.dumps(line["shape"], sort_keys=True), line["dtype"], line["layout"], line["op"],
            line.get("supported"), line.get("reason"), line.get("device"))


def merge(old: List[Dict[str, Any]], new: List[Dict[str, Any]], new_region_us: float) -> Tuple[List[Dict[str, Any]], float]:
    """Lines of two recordings as one: calls and times of the same problem summed; the recorded
    time is both recordings' together."""
    total = new_region_us + (float(old[0].get("recorded_us", 0.0)) if old else 0.0)
    merged: Dict[Tuple[Any, ...], Dict[str, Any]] = {line_key(line): dict(line) for line in old}
    for line in new:
        key = line_key(line)
        if key in merged:
            merged[key]["calls"] += line["calls"]
            merged[key]["time_us"] = round(merged[key]["time_us"] + line["time_us"], 3)
        else:
            merged[key] = dict(line)
    return list(merged.values()), total


def read(path: str) -> List[Dict[str, Any]]:
    """The lines of a shapes file (kerntune.torch.record's output), each checked for the fields
    tune-all and export read."""
    return [line for _, line in read_shapes_lines(path)]


def write(path: str, lines: List[Dict[str, Any]]) -> None:
    """Written whole to a temporary file, then renamed over the path: a crash leaves the old file
    or the new one, never half of one."""
    folder = os.path.dirname(os.path.abspath(path))
    temporary = os.path.join(folder, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    with open(temporary, "w") as f:
        for line in lines:
            f.write(json.dumps(line, sort_keys=False) + "\n")
    os.replace(temporary, path)
