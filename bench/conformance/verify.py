"""The GPU side of the conformance sweep: launches a downloaded kernel the way a user does
(kerntune.launch, as the Python client and kerntune.torch use it: the cubin loaded with cuModuleLoadData, the answer's
launch object for grid, block, cluster, dynamic shared memory and the parameters in order, TMA
tensor maps encoded over the buffers, cuLaunchKernelEx) on fresh random inputs, and compares the
output with a PyTorch reference in fp32 within tolerance.element_bound.

It runs as its own process (`python3 verify.py --serve`, one JSON request per stdin line, one
JSON reply per stdout line), started by sweep.py: a kernel that faults leaves the CUDA context
unusable and one that hangs never returns, and either way the sweep kills this process, records
the case and starts a fresh one. PyTorch is imported here only, so the rest of the sweep runs on
machines without it.

Buffers: inputs uniform in [-1, 1), or in the buffer's "range" where the launch object gives one
(gemm_fp8's scales: [0.25, 2)), a seed per case; fp8 inputs (e4m3, e5m2) are those values' fp8
bytes, mantissa truncated, as the daemon's worker writes them (worker/support_kernels.cpp), and
are decoded exactly through a table of the 256 byte values. Outputs are poisoned with NaN and
fenced by guard bytes on both sides, scratch zeroed (a split-K workspace and its semaphores must
start at 0).
"""

from __future__ import annotations

import ctypes
import json
import math
import os
import sys
import time
import traceback
from typing import Any, Dict, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "client", "python"))

from kerntune import launch as kt_launch  # noqa: E402  (the user's launch path: spec, packing, tensor maps)
import tolerance  # noqa: E402

GUARD_ELEMENTS = 1024  # on each side of an output; keeps the output's start 2 KiB+ aligned
GUARD_BYTE = 0xA5

torch: Any = None  # imported by start()


class FatalCudaError(RuntimeError):
    """A CUDA error after which the context cannot be trusted: the process must end."""


def import_torch() -> Any:
    """PyTorch, imported on first use only: the sweep and its tests run without it."""
    global torch
    if torch is None:
        import torch as _torch  # noqa: WPS433
        torch = _torch
        torch.backends.cuda.matmul.allow_tf32 = False  # the reference is fp32, not TF32
        torch.backends.cudnn.allow_tf32 = False
    return torch


def start() -> Dict[str, Any]:
    import_torch()
    torch.zeros(1, device="cuda")  # creates the primary context the driver calls below share
    version = ctypes.c_int()
    driver = kt_launch.Driver()
    driver.call("cuDriverGetVersion", ctypes.byref(version))
    return {"torch": torch.__version__, "device": torch.cuda.get_device_name(0),
            "capability": "sm_%d%d" % torch.cuda.get_device_capability(0), "driver_api": version.value}


def torch_dtype(name: str) -> Any:
    """The torch dtype a buffer is held in; fp8 buffers are held as their bytes (uint8)."""
    return {"bf16": torch.bfloat16, "fp16": torch.float16, "f16": torch.float16, "f32": torch.float32,
            "fp32": torch.float32, "u32": torch.int32, "i32": torch.int32, "u8": torch.uint8,
            "i64": torch.int64, "u64": torch.int64, "e4m3": torch.uint8, "e5m2": torch.uint8}[name]


# ---- fp8 -----------------------------------------------------------------------------------------

FP8_EXPONENT_BITS = {"e4m3": 4, "e5m2": 5}


def fp8_value(byte: int, dtype: str) -> float:
    """The value of one fp8 byte, exactly: sign, exponent (bias 7 for e4m3, 15 for e5m2), mantissa,
    subnormals at exponent 0. e4m3 has no infinities (S.1111.111 is its NaN); e5m2 is IEEE-like
    (exponent 31: infinity, or NaN with a mantissa)."""
    exponent_bits = FP8_EXPONENT_BITS[dtype]
    mantissa_bits = 7 - exponent_bits
    bias = (1 << (exponent_bits - 1)) - 1
    sign = -1.0 if byte & 0x80 else 1.0
    exponent = (byte >> mantissa_bits) & ((1 << exponent_bits) - 1)
    mantissa = byte & ((1 << mantissa_bits) - 1)
    if dtype == "e4m3" and exponent == 15 and mantissa == 7:
        return float("nan")
    if dtype == "e5m2" and exponent == 31:
        return float("nan") if mantissa else sign * float("inf")
    if exponent == 0:
        return sign * math.ldexp(mantissa, 1 - bias - mantissa_bits)
    return sign * math.ldexp(mantissa + (1 << mantissa_bits), exponent - bias - mantissa_bits)


_FP8_TABLES: Dict[Tuple[str, str], Any] = {}


def fp8_table(dtype: str, device: Any) -> Any:
    """The 256 values of an fp8 format as a float32 tensor (every fp8 value is exact in fp32)."""
    key = (dtype, str(device))
    if key not in _FP8_TABLES:
        _FP8_TABLES[key] = torch.tensor([fp8_value(b, dtype) for b in range(256)], dtype=torch.float32, device=device)
    return _FP8_TABLES[key]


def fp8_decode(raw: Any, dtype: str) -> Any:
    """fp8 bytes (a uint8 tensor) as float32 values, exactly, through the table (works on every
    torch, with or without its float8 dtypes)."""
    return fp8_table(dtype, raw.device)[raw.long()]


def fp8_encode(values: Any, dtype: str) -> Any:
    """float32 values as fp8 bytes the way the daemon's fill kernel makes them (kt_fp8_bits in
    worker/support_kernels.cpp): mantissa truncated, values below the smallest normal flushed to
    (signed) zero, values beyond the largest finite one clamped to it. Integer arithmetic on the
    float32 bits, so it runs on any device."""
    exponent_bits = FP8_EXPONENT_BITS[dtype]
    mantissa_bits = 7 - exponent_bits
    bias = (1 << (exponent_bits - 1)) - 1
    top, top_mantissa = (15, 6) if exponent_bits == 4 else (30, 3)
    bits = values.float().contiguous().view(torch.int32)
    sign = ((bits >> 31) & 1) << 7
    exponent = ((bits >> 23) & 0xFF) - 127 + bias
    mantissa = (bits >> (23 - mantissa_bits)) & ((1 << mantissa_bits) - 1)
    mantissa = torch.where((exponent == top) & (mantissa > top_mantissa), torch.full_like(mantissa, top_mantissa),
                           mantissa)
    normal = sign | (exponent.clamp(0, top) << mantissa_bits) | mantissa
    clamped = sign | ((top << mantissa_bits) | top_mantissa)
    out = torch.where(exponent < 1, sign, torch.where(exponent > top, clamped, normal))
    return out.to(torch.uint8)


class Buffers:
    """The launch's buffers on the GPU; an output is the middle of a larger allocation."""

    def __init__(self, launch: Dict[str, Any], seed: int, device: str = "cuda"):
        self.views: Dict[str, Any] = {}
        self.whole: Dict[str, Any] = {}
        self.roles: Dict[str, str] = {}
        self.dtypes: Dict[str, str] = {}
        generator = torch.Generator(device=device)
        generator.manual_seed(seed)
        for b in launch.get("buffers", []):
            name, role, dtype, elements = b["name"], b.get("role", "input"), b.get("dtype", "f32"), int(b["elements"])
            self.roles[name] = role
            self.dtypes[name] = dtype
            elements = max(elements, 1)
            kind = torch_dtype(dtype)
            low, high = (float(v) for v in b.get("range") or (-1.0, 1.0))  # the daemon's default range
            if role == "input" and dtype in FP8_EXPONENT_BITS:
                uniform = torch.rand(elements, generator=generator, device=device, dtype=torch.float32)
                view = fp8_encode(uniform * (high - low) + low, dtype)
            elif role == "output":
                whole = torch.empty(elements + 2 * GUARD_ELEMENTS, dtype=kind, device=device)
                whole.view(torch.uint8).fill_(GUARD_BYTE)
                view = whole[GUARD_ELEMENTS:GUARD_ELEMENTS + elements]
                if kind.is_floating_point:
                    view.fill_(float("nan"))  # an element the kernel never writes stays NaN
                self.whole[name] = whole
            elif role == "input" and kind.is_floating_point:
                uniform = torch.rand(elements, generator=generator, device=device, dtype=torch.float32)
                view = (uniform * (high - low) + low).to(kind)
            else:
                view = torch.zeros(elements, dtype=kind, device=device)
            self.views[name] = view

    def pointer(self, name: str) -> int:
        return int(self.views[name].data_ptr())

    def values(self, name: str) -> Any:
        """A buffer's values as float32 (fp8 bytes decoded)."""
        view = self.views[name]
        dtype = self.dtypes.get(name)
        return fp8_decode(view, dtype) if dtype in FP8_EXPONENT_BITS else view.float()

    def guards_intact(self) -> Optional[str]:
        for name, whole in self.whole.items():
            raw = whole.view(torch.uint8)
            edge = GUARD_ELEMENTS * whole.element_size()
            for where, part in (("before", raw[:edge]), ("after", raw[raw.numel() - edge:])):
                changed = int((part != GUARD_BYTE).sum().item())
                if changed:
                    return f"{changed} guard bytes {where} output {name} were overwritten"
        return None


# ---- references: (ref in fp32, summed magnitudes, reduction length, output buffer) -------------

def reference(family: str, shape: Dict[str, int], buffers: Buffers) -> Tuple[Any, Any, int, str]:
    f = buffers.values
    if family == "gemm":  # C[M,N] = A[M,K] B[N,K]^T
        M, N, K = shape["M"], shape["N"], shape["K"]
        A, B = f("A").view(M, K), f("B").view(N, K)
        return A @ B.T, A.abs() @ B.abs().T, K, "C"
    if family == "gemm_fp8":  # C[M,N] = (A[M,K] sa) (B[N,K] sb)^T, bf16 out
        return gemm_fp8_reference(shape, buffers) + ("C",)
    if family == "wmma_gemm":  # C[M,N] = A[M,K] B[K,N], fp32 out
        M, N, K = shape["M"], shape["N"], shape["K"]
        A, B = f("A").view(M, K), f("B").view(K, N)
        return A @ B, A.abs() @ B.abs(), K, "C"
    if family == "dual_gemm_silu":  # C_g = silu(A_g B1_g^T) * (A_g B2_g^T)
        G, M, N, K = shape["G"], shape["M"], shape["N"], shape["K"]
        A = f("A").view(G, M, K)
        B1, B2 = f("B1").view(G, N, K).transpose(1, 2), f("B2").view(G, N, K).transpose(1, 2)
        gate, up = torch.bmm(A, B1), torch.bmm(A, B2)
        silu_gate = torch.nn.functional.silu(gate)
        abs_a = A.abs()
        mag = tolerance.dual_gemm_magnitude(gate, up, torch.bmm(abs_a, B1.abs()), torch.bmm(abs_a, B2.abs()), silu_gate)
        return silu_gate * up, mag, K, "C"
    if family == "attention_fwd":  # O = softmax(Q K^T / sqrt(D) [causal]) V, [B,H,S,D]
        return attention_reference(shape, buffers) + ("O",)
    raise KeyError(f"no reference for family {family}")


def gemm_fp8_scales(shape: Dict[str, int], buffers: Buffers) -> Tuple[Any, Any]:
    """sa(m,k) as [M,K] and sb(n,k) as [N,K] (or [1,1] each for per-tensor scales): BLOCK_SCALED 0
    takes SA[0], SB[0]; BLOCK_SCALED 1, with KB = cdiv(K,128), sa(m,k) = SA[(k//128)*M + m] and
    sb(n,k) = SB[(n//128)*KB + k//128] (kernel_templates/gemm_fp8/manifest.json)."""
    M, N, K = shape["M"], shape["N"], shape["K"]
    SA, SB = buffers.values("SA"), buffers.values("SB")
    if not shape.get("BLOCK_SCALED", 0):
        return SA[:1].view(1, 1), SB[:1].view(1, 1)
    KB, NB = -(-K // 128), -(-N // 128)
    sa = SA[:KB * M].view(KB, M).t().repeat_interleave(128, dim=1)[:, :K]
    sb = SB[:NB * KB].view(NB, KB).repeat_interleave(128, dim=0)[:N].repeat_interleave(128, dim=1)[:, :K]
    return sa, sb


def gemm_fp8_reference(shape: Dict[str, int], buffers: Buffers) -> Tuple[Any, Any, int]:
    """The fp8 operands decoded exactly and scaled in fp32 (as the daemon's reference does,
    gemm_fp8_reference.cuh), then summed in float64: C = A_deq B_deq^T and the magnitudes
    |A_deq| |B_deq|^T, returned in fp32; the reduction length is K."""
    M, N, K = shape["M"], shape["N"], shape["K"]
    sa, sb = gemm_fp8_scales(shape, buffers)
    A = buffers.values("A").view(M, K) * sa  # fp32 products of an exact fp8 value and its scale
    B = buffers.values("B").view(N, K) * sb
    A64, B64 = A.double(), B.double()
    ref = (A64 @ B64.t()).float()
    mag = (A64.abs() @ B64.abs().t()).float()
    return ref, mag, K


def attention_reference(shape: Dict[str, int], buffers: Buffers) -> Tuple[Any, Any, int]:
    """torch's scaled_dot_product_attention in fp32 on chunks of heads (its kernels limit the
    batch), and the same weights applied to |V| for the magnitudes. The reduction length is 1, as
    in the manifest: each weight is rounded once, so the bound is u_out times sum_j p_ij |V_jd|."""
    B, H, S, D, causal = shape["B"], shape["H"], shape["S"], shape["D"], bool(shape.get("CAUSAL", 0))
    q, k, v = (buffers.views[n].float().view(B * H, S, D) for n in ("Q", "K", "V"))
    out, mag = torch.empty_like(q), torch.empty_like(q)
    sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)  # torch >= 2.0
    chunk = max(1, min(B * H, 4096))
    scale = 1.0 / math.sqrt(D)
    for lo in range(0, B * H, chunk):
        hi = min(B * H, lo + chunk)
        qs, ks, vs = q[lo:hi].unsqueeze(0), k[lo:hi].unsqueeze(0), v[lo:hi].unsqueeze(0)
        try:
            if sdpa is None:
                raise RuntimeError("no scaled_dot_product_attention in this torch")
            out[lo:hi] = sdpa(qs, ks, vs, is_causal=causal, scale=scale)[0]
            mag[lo:hi] = sdpa(qs, ks, vs.abs(), is_causal=causal, scale=scale)[0]
        except RuntimeError:  # no SDPA kernel takes this shape in fp32: the same sums, spelled out
            out[lo:hi], mag[lo:hi] = plain_attention(q[lo:hi], k[lo:hi], v[lo:hi], causal, scale)
    return out.view(-1), mag.view(-1), 1


def plain_attention(q: Any, k: Any, v: Any, causal: bool, scale: float) -> Tuple[Any, Any]:
    """softmax(q kᵀ scale) v and the same weights times |v|, a block of query rows at a time so the
    score matrix stays within about 256 MiB."""
    heads, S, _ = q.shape
    out, mag = torch.empty_like(q), torch.empty_like(q)
    rows = max(1, (1 << 26) // max(1, heads * S))
    for r0 in range(0, S, rows):
        r1 = min(S, r0 + rows)
        scores = torch.matmul(q[:, r0:r1], k.transpose(1, 2)) * scale
        if causal:
            keys = torch.arange(S, device=q.device)
            queries = torch.arange(r0, r1, device=q.device)
            scores.masked_fill_(keys[None, :] > queries[:, None], float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        out[:, r0:r1] = torch.matmul(weights, v)
        mag[:, r0:r1] = torch.matmul(weights, v.abs())
    return out, mag


# ---- the user's launch --------------------------------------------------------------------------

class Launcher:
    """cuModuleLoadData + cuLaunchKernelEx in the primary context PyTorch already made current."""

    def __init__(self) -> None:
        self.cuda = kt_launch.Driver()
        self.cuda.call("cuInit", 0)
        self.device, self.context = ctypes.c_int(), ctypes.c_void_p()
        self.cuda.call("cuDeviceGet", ctypes.byref(self.device), torch.cuda.current_device())
        self.cuda.call("cuDevicePrimaryCtxRetain", ctypes.byref(self.context), self.device)
        self.cuda.call("cuCtxSetCurrent", self.context)

    def launch(self, spec: "kt_launch.LaunchSpec", cubin: bytes, buffers: Buffers, repeats: int) -> Optional[float]:
        """Launches once (checked), then `repeats` more between CUDA events; the per-launch time in
        microseconds, or None when repeats is 0."""
        module, function = ctypes.c_void_p(), ctypes.c_void_p()
        self.cuda.call("cuModuleLoadData", ctypes.byref(module), ctypes.c_char_p(cubin))
        try:
            self.cuda.call("cuModuleGetFunction", ctypes.byref(function), module, spec.entry.encode())
            if spec.dynamic_smem_bytes > 48 * 1024:
                self.cuda.call("cuFuncSetAttribute", function,
                               kt_launch.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, spec.dynamic_smem_bytes)
            values = []
            for param in spec.params:
                if param.kind == "buffer":
                    values.append(buffers.pointer(param.name))
                elif param.kind == "tensor_map":
                    values.append(kt_launch.encode_tensor_map(self.cuda, param, buffers.pointer(param.name)))
                else:
                    values.append(param.value)
            kernel_params, keep = kt_launch.pack_kernel_params(spec.params, values)
            config, attrs = kt_launch.launch_config(spec)
            torch.cuda.synchronize()  # the inputs are written before the kernel reads them
            self.cuda.call("cuLaunchKernelEx", ctypes.byref(config), function, kernel_params, None)
            self.synchronize()
            if repeats <= 0:
                return None
            saved = {name: view.clone() for name, view in buffers.views.items() if buffers.roles.get(name) == "output"}
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(repeats):
                self.cuda.call("cuLaunchKernelEx", ctypes.byref(config), function, kernel_params, None)
            stop.record()
            self.synchronize()
            for name, view in saved.items():  # the check reads the first launch's output
                buffers.views[name].copy_(view)
            del keep, attrs
            return start.elapsed_time(stop) * 1000.0 / repeats
        finally:
            self.cuda.lib.cuModuleUnload(module)

    def synchronize(self) -> None:
        result = self.cuda.lib.cuCtxSynchronize()
        if result != 0:
            text = ctypes.c_char_p()
            self.cuda.lib.cuGetErrorString(result, ctypes.byref(text))
            raise FatalCudaError(f"the kernel failed: CUDA error {result} ({(text.value or b'?').decode()})")


def _first(mask: Any) -> Any:
    hits = mask.nonzero().view(-1)
    return hits[0].item() if hits.numel() else None


def compare(out: Any, ref: Any, mag: Any, k: int, out_dtype: str, tol: Dict[str, float]) -> Dict[str, Any]:
    out = out.float().view(-1)
    ref, mag = ref.reshape(-1), mag.reshape(-1)
    diff = (out - ref).abs()
    bound = tolerance.element_bound(ref.abs(), mag, k, out_dtype, tol)
    finite = torch.isfinite(out)
    # IEEE overflow of a result beyond the output type's range is correct (tolerance.py).
    overflowed = (torch.isinf(out) & torch.isfinite(ref) & ((out > 0) == (ref > 0))
                  & (ref.abs() + bound >= tolerance.OVERFLOW_THRESHOLD[out_dtype]))
    bad = ((~finite) & ~overflowed) | (finite & (diff > bound))
    bad_count = int(bad.sum().item())
    finite_diff = torch.where(finite, diff, torch.zeros_like(diff))
    ratio = finite_diff / bound
    worst = int(torch.argmax(ratio).item()) if ratio.numel() else 0
    error_norm = float(torch.linalg.vector_norm(finite_diff).item())
    ref_norm = float(torch.linalg.vector_norm(ref).item())
    stats = {
        "elements": int(out.numel()),
        "bad_elements": bad_count,
        "non_finite": int(((~finite) & ~overflowed).sum().item()),
        "overflowed": int(overflowed.sum().item()),
        "first_non_finite": ({"index": int(i), "out": float(out[i].item()), "ref": float(ref[i].item()),
                              "bound": float(bound[i].item())}
                             if (i := _first(~finite & ~overflowed)) is not None else None),
        "first_bad_index": int(torch.nonzero(bad)[0].item()) if bad_count else -1,
        "max_abs_error": float(finite_diff.max().item()) if out.numel() else 0.0,
        "max_error_over_bound": float(ratio.max().item()) if out.numel() else 0.0,
        "worst_index": worst,
        "worst": {"out": float(out[worst].item()), "ref": float(ref[worst].item()),
                  "bound": float(bound[worst].item())} if out.numel() else None,
        "rel_l2": error_norm / ref_norm if ref_norm else error_norm,
        "rel_l2_limit": tol["rel_l2"],
        "k": k,
    }
    stats["ok"] = bad_count == 0 and tolerance.within_rel_l2(error_norm, ref_norm, tol)
    return stats


def check(request: Dict[str, Any], launcher: Launcher) -> Dict[str, Any]:
    """One downloaded kernel launched and checked; the reply (see sweep.py's use)."""
    launch = request["launch"]
    spec = kt_launch.launch_spec_from_launch(launch)
    with open(request["cubin_path"], "rb") as f:
        cubin = f.read()
    shape = {k: int(v) for k, v in request["shape"].items()}
    buffers = Buffers(launch, int(request["seed"]))
    began = time.monotonic()
    user_us = launcher.launch(spec, cubin, buffers, int(request.get("repeats", 10)))
    ref, mag, k, out_name = reference(request["family"], shape, buffers)
    out_dtype = next((b.get("dtype") for b in launch.get("buffers", []) if b["name"] == out_name), request["dtype"])
    stats = compare(buffers.views[out_name], ref, mag, k, out_dtype, request["tolerance"])
    guard = buffers.guards_intact()
    why = ""
    if guard:
        why = guard
    elif not stats["ok"]:
        worst = stats["worst"] or {}
        why = (f"{stats['bad_elements']} of {stats['elements']} elements outside the bound "
               f"({stats['non_finite']} non-finite; worst out {worst.get('out')} ref {worst.get('ref')} "
               f"bound {worst.get('bound')}), rel_l2 {stats['rel_l2']:.3g} (limit {stats['rel_l2_limit']})")
        if stats["first_non_finite"]:
            first = stats["first_non_finite"]
            why += f"; first non-finite at {first['index']}: out {first['out']} ref {first['ref']}"
    del buffers, ref, mag
    if torch.cuda.is_available():
        torch.cuda.empty_cache()  # the daemon's workers measure on this GPU next: leave them its memory
    return {"ok": not why, "why": why, "stats": stats, "user_us": user_us,
            "check_seconds": round(time.monotonic() - began, 3)}


def serve() -> int:
    """Requests on stdin, replies on stdout, one JSON object per line; a fatal CUDA error ends the
    process after its reply."""
    out = sys.stdout
    sys.stdout = sys.stderr  # anything else printed goes to the log, not into the replies
    try:
        hello = start()
        launcher = Launcher()
        out.write(json.dumps({"hello": hello}) + "\n")
    except Exception as error:  # noqa: BLE001 (reported to the sweep, which goes on without checks)
        out.write(json.dumps({"hello": None, "why": f"{type(error).__name__}: {error}"}) + "\n")
        out.flush()
        return 1
    out.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        fatal = False
        try:
            reply = check(request, launcher)
        except FatalCudaError as error:
            reply, fatal = {"ok": False, "why": str(error), "fatal": True}, True
        except Exception as error:  # noqa: BLE001 (the case records it; the next one goes on)
            traceback.print_exc()
            reply = {"ok": False, "why": f"check failed: {type(error).__name__}: {error}"}
            if "CUDA" in str(error) or "cuda" in type(error).__name__.lower():
                reply["fatal"] = fatal = True
        reply["id"] = request.get("id")
        out.write(json.dumps(reply) + "\n")
        out.flush()
        if fatal:
            return 3
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        sys.exit(serve())
    print(__doc__)
    sys.exit(2)
