"""Which kerntune problem a torch call is: family, shape, dtype and layout, or why it is none.

The families take row-major operands only (docs/families.md): gemm is C[M,N] = A[M,K] B[N,K]^T
(a Linear layer's x and weight), attention_fwd takes Q, K, V and O as [B,H,S,D], dual_gemm_silu
is C = silu(A B1^T) * (A B2^T). A call whose tensors are laid out otherwise is recorded as
unsupported, with the reason, and runs as torch's own op. The functions here look only at sizes,
strides and dtypes, so they run on CPU tensors as on CUDA ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

DTYPES = {"torch.bfloat16": "bf16", "torch.float16": "fp16"}

# The layouts the families take, as recorded; anything else is unsupported.
GEMM_LAYOUT = "A[M,K] B[N,K] row-major (C = A B^T)"
GEMM_BIAS_LAYOUT = GEMM_LAYOUT + " + bias[N]"
ATTENTION_LAYOUT = "Q,K,V,O [B,H,S,D] row-major"
DUAL_LAYOUT = "A[M,K] B1[N,K] B2[N,K] row-major (C = silu(A B1^T) * (A B2^T))"


@dataclass(frozen=True)
class Problem:
    """One recorded or routed problem. `key` identifies it for recording and routing: the same
    key, the same kernel."""

    family: str
    shape: Tuple[Tuple[str, int], ...]  # (dim, extent), in the family's dim order
    dtype: str
    layout: str
    op: str
    supported: bool = True
    reason: Optional[str] = None
    bias: bool = False  # gemm: a bias row added after the product (addmm, linear with bias)

    @property
    def shape_dict(self) -> Dict[str, int]:
        return dict(self.shape)

    @property
    def key(self) -> Tuple[Any, ...]:
        return (self.family, self.shape, self.dtype, self.layout, self.op, self.supported, self.reason)

    def describe(self) -> str:
        dims = ",".join(f"{k}={v}" for k, v in self.shape)
        return f"{self.op} as {self.family} {dims} {self.dtype}"


@dataclass
class Call:
    """A call mapped onto a problem, with the tensors that become the family's buffers."""

    problem: Problem
    inputs: Dict[str, Any] = field(default_factory=dict)  # buffer name -> tensor
    bias: Any = None
    out_shape: Tuple[int, ...] = ()  # the shape torch's op returns


def dtype_name(tensor: Any) -> Optional[str]:
    return DTYPES.get(str(tensor.dtype))


def row_major(tensor: Any) -> bool:
    return bool(tensor.is_contiguous())


def _unsupported(op: str, family: str, shape: Dict[str, int], dtype: Optional[str], layout: str,
                 reason: str) -> Call:
    return Call(Problem(family, tuple(shape.items()), dtype or "unknown", layout, op, False, reason))


def _tensor(value: Any) -> bool:
    return hasattr(value, "dtype") and hasattr(value, "is_contiguous")


def _common_dtype(op: str, family: str, shape: Dict[str, int], layout: str, *tensors: Any) -> Optional[Call]:
    """The refusal when the tensors' dtypes are not one of the family's, else None."""
    names = {str(t.dtype) for t in tensors}
    if len(names) != 1:
        return _unsupported(op, family, shape, None, layout, f"mixed dtypes {sorted(names)}")
    if dtype_name(tensors[0]) is None:
        return _unsupported(op, family, shape, str(tensors[0].dtype).replace("torch.", ""), layout,
                            f"dtype {tensors[0].dtype}: the {family} family takes bf16 or fp16")
    devices = {str(t.device) for t in tensors}
    if len(devices) != 1:
        return _unsupported(op, family, shape, dtype_name(tensors[0]), layout, f"tensors on {sorted(devices)}")
    return None


def gemm_call(op: str, a: Any, weight: Any, bias: Any = None) -> Call:
    """x[..., K] times weight[N, K]^T (+ bias[N]): linear's form, which the gemm family takes."""
    layout = GEMM_BIAS_LAYOUT if bias is not None else GEMM_LAYOUT
    if a.dim() < 1 or weight.dim() != 2:
        return _unsupported(op, "gemm", {}, dtype_name(a), layout, f"operands of {a.dim()} and {weight.dim()} dims")
    k = int(a.shape[-1])
    m = math.prod(int(d) for d in a.shape[:-1]) if a.dim() > 1 else 1
    n = int(weight.shape[0])
    shape = {"M": m, "N": n, "K": k}
    if int(weight.shape[1]) != k:
        return _unsupported(op, "gemm", shape, dtype_name(a), layout, "inner extents differ")
    refused = _common_dtype(op, "gemm", shape, layout, a, weight, *([bias] if bias is not None else []))
    if refused:
        return refused
    dtype = dtype_name(a)
    if not row_major(a):
        return _unsupported(op, "gemm", shape, dtype, "A strided " + str(tuple(a.stride())),
                            "A is not row-major [M,K] (a transposed or sliced view)")
    if not row_major(weight):
        return _unsupported(op, "gemm", shape, dtype, "B strided " + str(tuple(weight.stride())),
                            "B is not row-major [N,K]: the gemm family takes B as a Linear weight is stored")
    if bias is not None and (bias.dim() != 1 or int(bias.shape[0]) != n or not row_major(bias)):
        return _unsupported(op, "gemm", shape, dtype, layout, f"bias of shape {tuple(bias.shape)}: only a row of N")
    if min(m, n, k) < 1:
        return _unsupported(op, "gemm", shape, dtype, layout, "an empty extent")
    out_shape = tuple(int(d) for d in a.shape[:-1]) + (n,)
    return Call(Problem("gemm", tuple(shape.items()), dtype, layout, op, bias=bias is not None),
                {"A": a, "B": weight}, bias, out_shape)


def mm_call(op: str, a: Any, b: Any, bias: Any = None) -> Call:
    """a[..., M, K] @ b[K, N]: the gemm family's B is b's transpose, so b must be a transposed
    view of a row-major [N, K] tensor (what `x @ w.t()` passes)."""
    if b.dim() != 2 or a.dim() < 1:
        shape = {}
        if a.dim() >= 2 and b.dim() >= 2:
            shape = {"M": int(a.shape[-2]), "N": int(b.shape[-1]), "K": int(a.shape[-1])}
        dtype = dtype_name(a)
        return _unsupported(op, "gemm", shape, dtype, f"{a.dim()}-d @ {b.dim()}-d",
                            "batched or 1-d matmul: the gemm family has no batch dim")
    weight = b.t()
    if not row_major(weight) and row_major(b):
        shape = {"M": math.prod(int(d) for d in a.shape[:-1]) if a.dim() > 1 else 1,
                 "N": int(b.shape[1]), "K": int(b.shape[0])}
        return _unsupported(op, "gemm", shape, dtype_name(a), "A[M,K] B[K,N] row-major",
                            "B is [K,N] row-major; the gemm family takes B as [N,K] rows "
                            "(store the weight as nn.Linear does, or pass w.t() of a row-major w)")
    return gemm_call(op, a, weight, bias)


def attention_call(op: str, q: Any, k: Any, v: Any, attn_mask: Any = None, dropout_p: float = 0.0,
                   is_causal: bool = False, scale: Optional[float] = None, enable_gqa: bool = False) -> Call:
    layout = ATTENTION_LAYOUT
    shape: Dict[str, int] = {}
    if q.dim() == 4:
        shape = {"B": int(q.shape[0]), "H": int(q.shape[1]), "S": int(q.shape[2]), "D": int(q.shape[3]),
                 "CAUSAL": 1 if is_causal else 0}
    dtype = dtype_name(q)
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        return _unsupported(op, "attention_fwd", shape, dtype, layout, "Q, K, V are not 4-d [B,H,S,D]")
    if tuple(k.shape) != tuple(q.shape) or tuple(v.shape) != tuple(q.shape):
        return _unsupported(op, "attention_fwd", shape, dtype, layout,
                            f"K {tuple(k.shape)} or V {tuple(v.shape)} differs from Q {tuple(q.shape)} "
                            "(cross or cached attention, grouped heads): the family is self-attention")
    refused = _common_dtype(op, "attention_fwd", shape, layout, q, k, v)
    if refused:
        return refused
    if attn_mask is not None:
        return _unsupported(op, "attention_fwd", shape, dtype, layout, "an attention mask (only is_causal)")
    if dropout_p:
        return _unsupported(op, "attention_fwd", shape, dtype, layout, "dropout")
    if scale is not None and abs(scale - 1 / math.sqrt(shape["D"])) > 1e-6 * scale:
        return _unsupported(op, "attention_fwd", shape, dtype, layout, f"scale {scale}: the family uses 1/sqrt(D)")
    if shape["D"] not in (64, 128):
        return _unsupported(op, "attention_fwd", shape, dtype, layout, f"head dim {shape['D']}: 64 or 128")
    for name, t in (("Q", q), ("K", k), ("V", v)):
        if not row_major(t):
            return _unsupported(op, "attention_fwd", shape, dtype, "strided " + str(tuple(t.stride())),
                                f"{name} is not row-major [B,H,S,D] (a transposed view: .contiguous() it)")
    return Call(Problem("attention_fwd", tuple(shape.items()), dtype, layout, op), {"Q": q, "K": k, "V": v},
                out_shape=tuple(int(d) for d in q.shape))


def dual_gemm_call(op: str, x: Any, w1: Any, w2: Any) -> Call:
    """silu(x @ w1^T) * (x @ w2^T), one group: the dual_gemm_silu family with G = 1."""
    layout = DUAL_LAYOUT
    if x.dim() < 1 or w1.dim() != 2 or w2.dim() != 2:
        return _unsupported(op, "dual_gemm_silu", {}, dtype_name(x), layout, "weights are not 2-d")
    k = int(x.shape[-1])
    m = math.prod(int(d) for d in x.shape[:-1]) if x.dim() > 1 else 1
    n = int(w1.shape[0])
    shape = {"G": 1, "M": m, "N": n, "K": k}
    if tuple(w2.shape) != tuple(w1.shape) or int(w1.shape[1]) != k:
        return _unsupported(op, "dual_gemm_silu", shape, dtype_name(x), layout,
                            f"w1 {tuple(w1.shape)} and w2 {tuple(w2.shape)} are not both [N,{k}]")
    refused = _common_dtype(op, "dual_gemm_silu", shape, layout, x, w1, w2)
    if refused:
        return refused
    for name, t in (("x", x), ("w1", w1), ("w2", w2)):
        if not row_major(t):
            return _unsupported(op, "dual_gemm_silu", shape, dtype_name(x), "strided " + str(tuple(t.stride())),
                                f"{name} is not row-major")
    return Call(Problem("dual_gemm_silu", tuple(shape.items()), dtype_name(x) or "", layout, op),
                {"A": x, "B1": w1, "B2": w2}, out_shape=tuple(int(d) for d in x.shape[:-1]) + (n,))


def call_of(func: Any, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Optional[Call]:
    """The problem a torch function call is, or None for a call kerntune does not look at
    (everything but the matrix products and scaled_dot_product_attention)."""
    name = getattr(func, "__name__", "")
    try:
        if name == "linear":
            x, weight = args[0], args[1] if len(args) > 1 else kwargs["weight"]
            bias = args[2] if len(args) > 2 else kwargs.get("bias")
            if _tensor(x) and _tensor(weight):
                return gemm_call("linear", x, weight, bias)
        elif name in ("mm", "matmul", "__matmul__"):
            a, b = args[0], args[1] if len(args) > 1 else kwargs.get("other", kwargs.get("mat2"))
            if _tensor(a) and _tensor(b) and not kwargs.get("out"):
                return mm_call("matmul" if name != "mm" else "mm", a, b)
        elif name == "addmm":
            bias, a, b = args[0], args[1], args[2]
            beta, alpha = kwargs.get("beta", 1), kwargs.get("alpha", 1)
            if _tensor(a) and _tensor(b) and _tensor(bias) and not kwargs.get("out"):
                if beta != 1 or alpha != 1:
                    return _unsupported("addmm", "gemm", {}, dtype_name(a), GEMM_BIAS_LAYOUT,
                                        f"addmm with beta={beta}, alpha={alpha}")
                return mm_call("addmm", a, b, bias)
        elif name == "bmm":
            a, b = args[0], args[1]
            if _tensor(a) and _tensor(b):
                shape = {"M": int(a.shape[-2]), "N": int(b.shape[-1]), "K": int(a.shape[-1])}
                return _unsupported("bmm", "gemm", shape, dtype_name(a), f"batch {int(a.shape[0])}",
                                    "bmm: the gemm family has no batch dim")
        elif name == "scaled_dot_product_attention":
            names = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale", "enable_gqa")
            bound = dict(zip(names, args))
            bound.update({k: v for k, v in kwargs.items() if k in names})
            if all(_tensor(bound.get(n)) for n in names[:3]):
                return attention_call("scaled_dot_product_attention", bound.pop("query"), bound.pop("key"),
                                      bound.pop("value"), **bound)
    except (IndexError, KeyError, TypeError):
        return None  # a call torch itself will refuse; not ours to explain
    return None
