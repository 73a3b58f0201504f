"""The first result of a routed shape, checked as the daemon checks a variant: every element
against an fp32 reference (computed here with torch from the call's own inputs) within the
family's tolerance, |out - ref| <= atol + rtol |ref| + c u(dtype, K) m with u = u_out / sqrt(K)
+ 2^-24 and m the sum of |products| (kernel_templates/README.md), and the relative L2 error of
the whole output within rel_l2."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

import torch
import torch.nn.functional as F

UNIT_ROUNDOFF = {"bf16": 2.0 ** -8, "fp16": 2.0 ** -11}
ACCUMULATION_ROUNDOFF = 2.0 ** -24


@dataclass
class Verdict:
    ok: bool
    max_abs: float
    rel_l2: float
    bad_elements: int
    reason: Optional[str] = None


def _gemm_reference(inputs: Dict[str, Any], bias: Any) -> Tuple[Any, Any, int]:
    a = inputs["A"].reshape(-1, inputs["A"].shape[-1]).float()
    b = inputs["B"].float()
    ref = a @ b.t()
    if bias is not None:
        ref = ref + bias.float()
    return ref, a.abs() @ b.abs().t(), int(a.shape[-1])


def _attention_reference(inputs: Dict[str, Any], causal: bool) -> Tuple[Any, Any, int]:
    q, k, v = (inputs[n].float() for n in ("Q", "K", "V"))
    scores = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if causal:
        s = q.shape[-2]
        mask = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(mask, float("-inf"))
    p = torch.softmax(scores, dim=-1)
    return p @ v, p @ v.abs(), 1


def _dual_reference(inputs: Dict[str, Any]) -> Tuple[Any, Any, int]:
    a = inputs["A"].reshape(-1, inputs["A"].shape[-1]).float()
    b1, b2 = inputs["B1"].float(), inputs["B2"].float()
    gate, up = a @ b1.t(), a @ b2.t()
    m1, m2 = a.abs() @ b1.abs().t(), a.abs() @ b2.abs().t()
    # The family's magnitude: 1.1 |up| m1 + |silu(gate)| m2 (silu's slope is below 1.1).
    return F.silu(gate) * up, 1.1 * up.abs() * m1 + F.silu(gate).abs() * m2, int(a.shape[-1])


def reference(family: str, inputs: Dict[str, Any], shape: Dict[str, int], bias: Any = None) -> Tuple[Any, Any, int]:
    """(fp32 reference, magnitude m, reduction length K) for one of the shipped families."""
    if family == "gemm":
        return _gemm_reference(inputs, bias)
    if family == "attention_fwd":
        return _attention_reference(inputs, bool(shape.get("CAUSAL")))
    if family == "dual_gemm_silu":
        return _dual_reference(inputs)
    raise ValueError(f"no reference for family {family!r} here")


def check(family: str, dtype: str, tolerance: Dict[str, float], inputs: Dict[str, Any], shape: Dict[str, int],
          out: Any, bias: Any = None) -> Verdict:
    """Whether `out` (the kernel's result for `inputs`) is within the family's tolerance."""
    ref, magnitude, reduction = reference(family, inputs, shape, bias)
    got = out.reshape(ref.shape).float()
    if not torch.isfinite(got).all():
        bad = int((~torch.isfinite(got)).sum())
        return Verdict(False, math.inf, math.inf, bad, f"{bad} elements are NaN or infinite")
    u = UNIT_ROUNDOFF[dtype] / math.sqrt(max(1, reduction)) + ACCUMULATION_ROUNDOFF
    bound = (tolerance.get("atol", 0.0) + tolerance.get("rtol", 0.0) * ref.abs()
             + tolerance.get("magnitude", 0.0) * u * magnitude)
    error = (got - ref).abs()
    bad = int((error > bound).sum())
    norm = float(ref.norm())
    rel_l2 = float((got - ref).norm()) / norm if norm > 0 else float((got - ref).norm())
    max_abs = float(error.max()) if error.numel() else 0.0
    if bad:
        return Verdict(False, max_abs, rel_l2, bad, f"{bad} of {error.numel()} elements outside the tolerance "
                       f"(largest error {max_abs:.3g})")
    if rel_l2 > tolerance.get("rel_l2", math.inf):
        return Verdict(False, max_abs, rel_l2, 0, f"relative L2 error {rel_l2:.3g} above {tolerance['rel_l2']}")
    return Verdict(True, max_abs, rel_l2, 0)
