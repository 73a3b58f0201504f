"""Where a routed shape's answer comes from: a running daemon (`/v1/best`, the variant's cubin,
the family's tolerance) or a bundle folder `kerntune export --bundle` wrote, which needs no
daemon. Either says, per problem and GPU, whether kerntune's kernel is the answer and why not."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from ..client import Client
from ..errors import ApiError, DaemonUnreachable
from .problems import Problem

BUNDLE_FORMAT = "kerntune-bundle/1"


@dataclass
class Answer:
    """ours: kerntune's kernel is the answer; else `reason` says why the op stays torch's."""

    ours: bool
    reason: str
    launch: Optional[Dict[str, Any]] = None
    cubin: Optional[bytes] = None
    tolerance: Optional[Dict[str, float]] = None
    variant_id: Optional[int] = None
    detail: Dict[str, Any] = field(default_factory=dict)
    # Where the baseline won: its kind and the choice its job measured (for cublaslt_gemm, the
    # heuristic rank and configuration of the algorithm), so the router can make that same call.
    baseline: Optional[Dict[str, Any]] = None


def baseline_of(best: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    """The library call a /v1/best answer is, when the baseline won; else None."""
    if best.get("baseline_wins") and best.get("variant_id") is None and best.get("template"):
        return {"kind": best["template"], "config": dict(best.get("config") or {})}
    return None


def verdict_of(best: Dict[str, Any], where: str) -> Optional[str]:
    """Why a /v1/best answer (as the daemon sent it, or as a bundle holds it) does not route to
    our kernel, or None when it does."""
    if best.get("stale"):
        keys = ", ".join(f"{k.get('key')} {k.get('stored')} -> {k.get('current')}" for k in best.get("stale_keys") or [])
        return f"stale {where}: tuned before a change ({keys or 'keys differ'})"
    if best.get("baseline_wins") or best.get("variant_id") is None:
        baseline = best.get("baseline") or "the baseline"
        return f"{baseline} won this shape in job {best.get('job_id')} {where}"
    if not best.get("launch"):
        return f"no launch description for variant {best.get('variant_id')} {where}"
    return None


def summary_of(best: Dict[str, Any]) -> Dict[str, Any]:
    return {k: best.get(k) for k in ("job_id", "variant_id", "template", "config", "median_us", "speedup",
                                     "speedup_low", "speedup_high", "baseline", "baseline_median_us", "device")}


class ServerSource:
    """Answers from a kerntuned: exact answers only (a nearest shape's kernel is another
    problem's), fetched once per problem and GPU model."""

    def __init__(self, server: Optional[str] = None, client: Optional[Client] = None):
        self.client = client or Client(server)
        self._tolerances: Optional[Dict[str, Dict[str, Dict[str, float]]]] = None

    def describe(self) -> str:
        return f"daemon {self.client.server}"

    def tolerance(self, family: str, dtype: str) -> Optional[Dict[str, float]]:
        if self._tolerances is None:
            self._tolerances = {f.name: f.tolerance for f in self.client.families()}
        return self._tolerances.get(family, {}).get(dtype)

    def answer(self, problem: Problem, device_name: str, driver_version: Optional[int]) -> Answer:
        where = f"on {device_name} ({self.describe()})"
        try:
            best = self.client.best(problem.family, problem.shape_dict, problem.dtype, device_name).raw
        except ApiError as error:
            if error.status == 404:
                return Answer(False, f"not tuned {where}")
            return Answer(False, f"the daemon refused /v1/best: {error}")
        except DaemonUnreachable as error:
            return Answer(False, f"{error}")
        refused = verdict_of(best, where)
        if refused:
            return Answer(False, refused, detail=summary_of(best), baseline=baseline_of(best),
                          tolerance=self.tolerance(problem.family, problem.dtype))
        tolerance = self.tolerance(problem.family, problem.dtype)
        if not tolerance:
            return Answer(False, f"the daemon lists no {problem.dtype} tolerance for {problem.family}")
        kernel = self.client.kernel(int(best["variant_id"]))
        return Answer(True, f"variant {best['variant_id']} of job {best['job_id']}", best["launch"], kernel.cubin,
                      tolerance, int(best["variant_id"]), summary_of(best))


def bundle_key(family: str, shape: Dict[str, int], dtype: str) -> Tuple[str, str, str]:
    return (family, ",".join(f"{k}={shape[k]}" for k in sorted(shape)), dtype)


class BundleSource:
    """Answers from a bundle folder: bundle.json and the cubins beside it. An entry tuned on
    another GPU model or under another driver is refused, with the reason."""

    def __init__(self, folder: str):
        self.folder = folder
        path = os.path.join(folder, "bundle.json")
        try:
            with open(path) as f:
                self.index = json.load(f)
        except OSError as error:
            raise ValueError(f"{path}: cannot read the bundle ({error.strerror})") from None
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}: not JSON ({error.msg})") from None
        if self.index.get("format") != BUNDLE_FORMAT:
            raise ValueError(f"{path}: format {self.index.get('format')!r}, this client reads {BUNDLE_FORMAT!r}")
        self.entries: Dict[Tuple[str, str, str], List[Dict[str, Any]]] = {}
        for entry in self.index.get("entries", []):
            self.entries.setdefault(bundle_key(entry["family"], entry["shape"], entry["dtype"]), []).append(entry)

    def describe(self) -> str:
        return f"bundle {self.folder}"

    def answer(self, problem: Problem, device_name: str, driver_version: Optional[int]) -> Answer:
        entries = self.entries.get(bundle_key(problem.family, problem.shape_dict, problem.dtype), [])
        if not entries:
            return Answer(False, f"not in {self.describe()}")
        entry = next((e for e in entries if e.get("device") == device_name), None)
        if entry is None:
            return Answer(False, f"{self.describe()} was tuned on {', '.join(sorted({str(e.get('device')) for e in entries}))}, "
                                 f"this GPU is {device_name}")
        where = f"on {device_name} ({self.describe()})"
        best = entry.get("answer") or {}
        bundled_driver = (best.get("keys") or {}).get("driver_version")
        if bundled_driver is not None and driver_version is not None and int(bundled_driver) != driver_version:
            return Answer(False, f"{self.describe()} was tuned under driver {bundled_driver}, this one is {driver_version}")
        refused = verdict_of(best, where)
        if refused:
            return Answer(False, refused, detail=summary_of(best), baseline=baseline_of(best),
                          tolerance=entry.get("tolerance"))
        path = os.path.join(self.folder, entry["kernel"])
        try:
            with open(path, "rb") as f:
                cubin = f.read()
        except OSError as error:
            return Answer(False, f"{path}: {error.strerror}")
        if entry.get("kernel_sha256") and hashlib.sha256(cubin).hexdigest() != entry["kernel_sha256"]:
            return Answer(False, f"{path} does not match the bundle's SHA-256 (changed after export)")
        return Answer(True, f"variant {best['variant_id']} of job {best['job_id']} ({self.describe()})", best["launch"],
                      cubin, entry.get("tolerance"), int(best["variant_id"]), summary_of(best))
