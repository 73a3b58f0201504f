"""What "correct" means for the conformance sweep's own check of a downloaded kernel: the family
manifest's per-element tolerance, widened by a term that grows with the magnitude of what was
summed, so that a long reduction rounded the way the libraries round is not called wrong.

    |out - ref| <= atol + rtol*|ref| + C_OUT*u_out*mag/sqrt(k) + C_ACC*u_f32*mag

- `ref` is computed in fp32 from the same (16-bit) inputs; `atol`, `rtol` come from the manifest's
  `tolerance.<dtype>`.
- `mag` is the sum of the magnitudes that went into the element: for a GEMM (|A|·|B|)_ij, one more
  matrix product on the absolute values; for dual GEMM + SiLU the same propagated through
  silu(g)*u (see dual_gemm_magnitude); for attention (P·|V|)_ij, the softmax-weighted magnitudes.
- `k` is the reduction length (K, or S keys for attention). A sum of k terms of random sign is
  about mag/sqrt(k) in size (sqrt(k) terms' worth of the mean |term|), and every time a kernel
  rounds a partial sum to the output type (a split-K reduction in 16 bits, the final store) it
  costs up to u_out times that: C_OUT = 8 covers a handful of such roundings at the 4-5 sigma
  tail reached over millions of elements. For bf16 at K = 16384 with inputs in [-1, 1) the term is
  about 1.0 against |ref| of about 43: a lost k-tile of 64 products (about 2.7) or a NaN still fails.
- fp32 accumulation in another order than the reference's moves an element by about
  0.6*u_f32*mag (rms, recursive summation); C_ACC = 8 covers the tail. It matters only for fp32
  outputs (wmma_gemm at large K), where the manifest's atol alone would reject K beyond ~50000.
- u is the unit roundoff of the output type: 2^-8 bf16, 2^-11 fp16, 2^-24 fp32.

The whole output must also have ||out - ref|| / ||ref|| <= the manifest's rel_l2 (both grow with
sqrt(k), so this one needs no widening), no NaN, no Inf but IEEE overflow (below), and the guard
bytes around it untouched.

A 16-bit output of a long reduction can overflow where the fp32 reference does not: an infinity of
the reference's sign is correct where |ref| plus the element's bound reaches the output type's
overflow threshold (its largest finite value plus half an ulp), as the daemon's validator has it
(worker/validator.cpp).

When the manifest's tolerance names the daemon's magnitude constant ("magnitude": c), the sweep
uses the daemon's own rule instead, so both call the same output correct (tuner/error_bound.hpp):

    |out - ref| <= atol + rtol*|ref| + c*(u_out/sqrt(k) + u_f32)*mag

with k the manifest's reduction (K for the GEMMs; 1 for attention, whose weights are each
rounded once).

element_bound works on floats and on torch tensors alike (only + and * are used), so the unit
test checks the same function the GPU check uses.
"""

from __future__ import annotations

import math
from typing import Any, Dict

C_OUT = 8.0
C_ACC = 8.0
UNIT_ROUNDOFF = {"bf16": 2.0 ** -8, "fp16": 2.0 ** -11, "f16": 2.0 ** -11, "f32": 2.0 ** -24, "fp32": 2.0 ** -24}
U_F32 = UNIT_ROUNDOFF["f32"]
# The largest finite value plus half an ulp: an exact result at or beyond it rounds to infinity.
OVERFLOW_THRESHOLD = {"bf16": 3.3895313892515355e38 + 2.0 ** 119, "fp16": 65504.0 + 16.0,
                      "f16": 65504.0 + 16.0, "f32": 3.4028234663852886e38 + 2.0 ** 103,
                      "fp32": 3.4028234663852886e38 + 2.0 ** 103}


def element_bound(abs_ref: Any, mag: Any, k: int, out_dtype: str, tol: Dict[str, float]) -> Any:
    """The largest |out - ref| an element may have (see the module's docstring). abs_ref and mag
    are |ref| and the summed magnitudes, as floats or as tensors of the output's shape."""
    u_out = UNIT_ROUNDOFF[out_dtype]
    k = max(int(k), 1)
    if tol.get("magnitude"):  # the daemon's rule, with the manifest's constant
        c = float(tol["magnitude"])
        return (abs_ref * tol["rtol"] + tol["atol"]) + mag * (c * (u_out / math.sqrt(k) + U_F32))
    return (abs_ref * tol["rtol"] + tol["atol"]) + mag * (C_OUT * u_out / math.sqrt(k) + C_ACC * U_F32)


def dual_gemm_magnitude(gate: Any, up: Any, gate_mag: Any, up_mag: Any, silu_gate: Any) -> Any:
    """mag of silu(g)*u from those of g = A·B1ᵀ and u = A·B2ᵀ: an error e_g in g moves the output
    by silu'(g)*u*e_g with |silu'| <= 1.1, one e_u in u by silu(g)*e_u. Works on floats and
    tensors (|x| taken with abs())."""
    return abs(up) * gate_mag * 1.1 + abs(silu_gate) * up_mag


def within_rel_l2(error_norm: float, ref_norm: float, tol: Dict[str, float]) -> bool:
    if ref_norm == 0:
        return error_norm == 0
    return error_norm / ref_norm <= tol["rel_l2"]


def element_ok(out: float, ref: float, mag: float, k: int, out_dtype: str, tol: Dict[str, float]) -> bool:
    """One element within element_bound (a NaN never is, an Inf only as the overflow of a result
    beyond the output type's range): the scalar form the unit test plants faults against."""
    bound = element_bound(abs(ref), mag, k, out_dtype, tol)
    if math.isinf(out) and math.isfinite(ref) and (out > 0) == (ref > 0):
        return abs(ref) + bound >= OVERFLOW_THRESHOLD[out_dtype]
    return math.isfinite(out) and abs(out - ref) <= bound
