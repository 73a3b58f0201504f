"""Typed views of the daemon's JSON (docs/api.md). Each keeps the JSON it was made from in
`raw`, so a field this client does not name yet is still at hand."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, TextIO, Union

FINAL_JOB_STATES = ("done", "failed", "cancelled")


@dataclass
class JobEvent:
    """One event of a job's stream (Client.events): name is "status", "progress", "best" or
    "end"; data its JSON (docs/api.md): status {job_id, status, reason, cancel_requested},
    progress {job_id, total, finished, measured, by_status}, best a variant, end the job."""
    name: str
    data: Dict[str, Any]


@dataclass
class Timing:
    median_us: float
    min_us: Optional[float] = None
    p10_us: Optional[float] = None
    p90_us: Optional[float] = None
    trials: Optional[int] = None
    method: Optional[str] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Optional[Dict[str, Any]]) -> Optional["Timing"]:
        if not data or data.get("median_us") is None:
            return None
        return cls(data["median_us"], data.get("min_us"), data.get("p10_us"), data.get("p90_us"),
                   data.get("trials"), data.get("method"), data)


@dataclass
class NumericError:
    max_abs: float
    max_rel: float
    rel_l2: float
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Optional[Dict[str, Any]]) -> Optional["NumericError"]:
        if not data:
            return None
        return cls(data.get("max_abs"), data.get("max_rel"), data.get("rel_l2"), data)


@dataclass
class Variant:
    id: int
    job_id: int
    template: str
    config: Dict[str, int]
    status: str
    failed_gate: Optional[str] = None
    reason: Optional[str] = None
    has_kernel: bool = False
    median_us: Optional[float] = None
    timing: Optional[Timing] = None
    error: Optional[NumericError] = None
    registers: Optional[int] = None
    smem_bytes: Optional[int] = None
    threads: Optional[int] = None
    tflops: Optional[float] = None
    speedup: Optional[float] = None
    compile_log: Optional[str] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Variant":
        return cls(
            id=data["id"], job_id=data["job_id"], template=data.get("template", ""),
            config=dict(data.get("config") or {}), status=data["status"],
            failed_gate=data.get("failed_gate"), reason=data.get("reason"),
            has_kernel=bool(data.get("has_kernel")), median_us=data.get("median_us"),
            timing=Timing.from_json(data.get("timing")), error=NumericError.from_json(data.get("error")),
            registers=data.get("registers"), smem_bytes=data.get("smem_bytes"), threads=data.get("threads"),
            tflops=data.get("tflops"), speedup=data.get("speedup"), compile_log=data.get("compile_log"),
            raw=data)


@dataclass
class Progress:
    total: int
    finished: int
    by_status: Dict[str, int]

    @classmethod
    def from_json(cls, data: Optional[Dict[str, Any]]) -> "Progress":
        data = data or {}
        return cls(int(data.get("total", 0)), int(data.get("finished", 0)), dict(data.get("by_status") or {}))

    @property
    def fraction(self) -> float:
        return self.finished / self.total if self.total else 0.0


@dataclass
class Job:
    id: int
    family: str
    shape: Dict[str, int]
    dtype: str
    mode: str
    arch: Optional[str]
    status: str
    reason: Optional[str]
    progress: Progress
    best: Optional[Variant] = None
    device_name: Optional[str] = None
    reference_us: Optional[float] = None
    created_at: Optional[str] = None
    finished_at: Optional[str] = None
    # Why the family's baseline could not stand as one, when it could not (the job then went on
    # against the reference alone); None otherwise.
    baseline_failed: Optional[str] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Job":
        best = data.get("best")
        return cls(
            id=data["id"], family=data["family"], shape=dict(data.get("shape") or {}), dtype=data["dtype"],
            mode=data.get("mode", "tune"), arch=data.get("arch"), status=data["status"],
            reason=data.get("reason"), progress=Progress.from_json(data.get("progress")),
            best=Variant.from_json(best) if best else None, device_name=data.get("device_name"),
            reference_us=data.get("reference_us"), created_at=data.get("created_at"),
            finished_at=data.get("finished_at"), baseline_failed=data.get("baseline_failed"),
            raw=data)

    @property
    def finished(self) -> bool:
        return self.status in FINAL_JOB_STATES


@dataclass
class Best:
    """GET /v1/best: the best variant of a problem, and how to launch it when the daemon says."""

    family: str
    dtype: str
    shape: Dict[str, int]
    device: Optional[str]
    arch: Optional[str]
    job_id: int
    variant_id: int
    template: str
    config: Dict[str, int]
    median_us: float
    tflops: Optional[float] = None
    speedup: Optional[float] = None
    faster_than_baseline: Optional[bool] = None
    # Why the family's baseline could not stand as one (every candidate computed a wrong result,
    # or it could not run): the job then compared against the reference alone. None otherwise.
    baseline_failed: Optional[str] = None
    launch: Optional[Dict[str, Any]] = None  # grid/block/cluster/smem/params when the daemon sends them
    # False when the answer is the nearest tuned shape's (best(..., nearest=True) on a miss);
    # `nearest` then says which shape and its distance (sum over dims of |log(asked/tuned)|).
    exact: bool = True
    nearest: Optional[Dict[str, Any]] = None
    # True when the driver, NVRTC or the family's sources changed since it was tuned;
    # stale_keys: [{"key", "stored", "current"}].
    stale: bool = False
    stale_keys: List[Dict[str, str]] = field(default_factory=list)
    # The job tuning the problem, when tune_on_miss or retune_stale started (or found) one.
    tuning_job: Optional["Job"] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Best":
        return cls(
            family=data["family"], dtype=data["dtype"], shape=dict(data.get("shape") or {}),
            device=data.get("device"), arch=data.get("arch"), job_id=data["job_id"],
            variant_id=data["variant_id"], template=data.get("template", ""),
            config=dict(data.get("config") or {}), median_us=data["median_us"], tflops=data.get("tflops"),
            speedup=data.get("speedup"), faster_than_baseline=data.get("faster_than_baseline"),
            baseline_failed=data.get("baseline_failed"), launch=data.get("launch"), exact=data.get("exact", True) is not False,
            nearest=data.get("nearest"), stale=data.get("stale") is True,
            stale_keys=list(data.get("stale_keys") or []), raw=data)


@dataclass
class Prediction:
    """GET /v1/best?predict=1 on a shape nobody tuned: the config the daemon's shape predictor
    ranks first for it. Never measured for this shape: expected_us is the model's estimate, with
    the model's 5-95% error on shapes it was not fitted on; validated_elsewhere says whether the config
    passed the reference check on another shape."""

    family: str
    dtype: str
    shape: Dict[str, int]
    device: Optional[str]
    arch: Optional[str]
    template: str
    config: Dict[str, int]
    expected_us: float
    expected_interval_us: List[float]
    validated_elsewhere: bool
    model: Dict[str, Any]
    launch: Optional[Dict[str, Any]] = None
    # The config's check for the shape. kind "gpu" (a daemon with a GPU of the model: checked
    # against the reference and timed there, on this shape) or "compile-only". status "queued",
    # "running", "compiled" (compile-only: registers, spill_bytes, smem_bytes), "checked" (gpu:
    # measured_us, max_rel_error, device_model too), "failed" (reason) or "not_checked"; job_id its
    # job (mode "check" or "compile").
    check: Dict[str, Any] = field(default_factory=dict)
    tuning_job: Optional["Job"] = None  # with tune_on_miss: the job tuning the shape
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Prediction":
        return cls(
            family=data["family"], dtype=data["dtype"], shape=dict(data.get("shape") or {}),
            device=data.get("device"), arch=data.get("arch"), template=data["template"],
            config=dict(data.get("config") or {}), expected_us=data["expected_us"],
            expected_interval_us=list(data.get("expected_interval_us") or []),
            validated_elsewhere=data.get("validated_elsewhere") is True, model=dict(data.get("model") or {}),
            launch=data.get("launch"), check=dict(data.get("check") or {}), raw=data)


def answer_from_json(data: Dict[str, Any]) -> Union[Best, Prediction]:
    """A /v1/best answer: a measured Best, or a Prediction ("source": "predicted")."""
    return Prediction.from_json(data) if data.get("source") == "predicted" else Best.from_json(data)


@dataclass
class ParetoFront:
    family: str
    dtype: str
    shape: Dict[str, int]
    device: Optional[str]
    front: List[Variant]
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "ParetoFront":
        return cls(data["family"], data["dtype"], dict(data.get("shape") or {}), data.get("device"),
                   [Variant.from_json(v) for v in data.get("front", [])], data)


@dataclass
class Kernel:
    """A compiled variant: the cubin and what the download's headers say about it."""

    variant_id: int
    name: str
    arch: str
    cubin: bytes = field(repr=False)


@dataclass
class Family:
    """GET /v1/families: a kernel family, its dims, dtypes, tolerance, baseline and templates.
    Indexing (family["name"]) reads the JSON it was made from, as the dicts this used to be."""

    name: str
    description: str
    dims: List[Dict[str, Any]]
    dtypes: List[str]
    tolerance: Dict[str, Dict[str, float]]
    baseline: Dict[str, Any]
    templates: List[Dict[str, Any]]
    origin: Optional[str] = None
    source_hash: Optional[str] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Family":
        return cls(name=data["name"], description=data.get("description", ""), dims=list(data.get("dims") or []),
                   dtypes=list(data.get("dtypes") or []), tolerance=dict(data.get("tolerance") or {}),
                   baseline=dict(data.get("baseline") or {}), templates=list(data.get("templates") or []),
                   origin=data.get("origin"), source_hash=data.get("source_hash"), raw=data)

    @property
    def dim_names(self) -> List[str]:
        """In the manifest's order: the order a positional shape follows."""
        return [d["name"] for d in self.dims]

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.raw.get(key, default)


RECORD_FIELDS = ("id", "job_id", "template", "status", "median_us", "tflops", "speedup", "max_abs_error",
                 "rel_l2_error", "registers", "smem_bytes", "threads", "failed_gate", "reason")


def to_records(variants: Iterable[Variant]) -> List[Dict[str, Any]]:
    """One flat dict per variant: its figures and one column per config parameter, for a
    DataFrame (pandas.DataFrame(to_records(variants))) or a spreadsheet."""
    records = []
    for v in variants:
        record: Dict[str, Any] = {
            "id": v.id, "job_id": v.job_id, "template": v.template, "status": v.status,
            "median_us": v.median_us, "tflops": v.tflops, "speedup": v.speedup,
            "max_abs_error": v.error.max_abs if v.error else None,
            "rel_l2_error": v.error.rel_l2 if v.error else None, "registers": v.registers,
            "smem_bytes": v.smem_bytes, "threads": v.threads, "failed_gate": v.failed_gate, "reason": v.reason}
        record.update(v.config)
        records.append(record)
    return records


def to_csv(variants: Iterable[Variant], out: Union[str, TextIO, None] = None) -> str:
    """The variants as CSV (to_records' columns: the figures, then every config parameter any
    variant has, sorted); written to `out` (a path or a file) when given, and returned."""
    records = to_records(variants)
    parameters = sorted({k for r in records for k in r} - set(RECORD_FIELDS))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(RECORD_FIELDS) + parameters, lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    text = buffer.getvalue()
    if isinstance(out, str):
        with open(out, "w", newline="") as f:
            f.write(text)
    elif out is not None:
        out.write(text)
    return text


FINAL_BATCH_STATES = ("done", "failed", "cancelled")


@dataclass
class Batch:
    """POST /v1/batches, GET /v1/batches/{id}: many problems tuned as one request. problems are
    dicts as the daemon sends them (docs/api.md): family, shape, dtype, share, calls, plan
    (submitted, joined, tuned, refused), job_id, note, error, job (its state) and answer (once
    tuned: answer "ours" or "baseline", median_us, speedup with its interval...). status is
    running, done (every problem answered), failed (ended with one unanswered), cancelled, or
    planned for a dry run."""

    id: Optional[int]
    status: str
    device_model: Optional[str]
    counts: Dict[str, int]
    problems: List[Dict[str, Any]] = field(default_factory=list)
    label: Optional[str] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, data: Dict[str, Any]) -> "Batch":
        return cls(id=data.get("id"), status=data["status"], device_model=data.get("device_model"),
                   counts=dict(data.get("counts") or {}), problems=list(data.get("problems") or []),
                   label=data.get("label"), raw=data)

    @property
    def finished(self) -> bool:
        return self.status in FINAL_BATCH_STATES

    @property
    def answers(self) -> List[Dict[str, Any]]:
        """The problems that have an answer, each {family, shape, dtype, answer...}."""
        return [dict(p["answer"], family=p["family"], shape=p["shape"], dtype=p["dtype"])
                for p in self.problems if p.get("answer")]

