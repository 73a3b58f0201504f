#!/usr/bin/env python3
"""Downloads the best kernel kerntune found for a problem and launches it on this machine's GPU
with ctypes over the CUDA driver API (cuModuleLoadData, cuModuleGetFunction, cuLaunchKernelEx),
then times a few launches with CUDA events.

    python3 launch_best.py gemm --shape M=4096,N=4096,K=4096 --dtype bf16 [--device H100]

How to launch (entry name, grid, block, cluster, dynamic shared memory, parameter order and
types) comes from /v1/best's "launch" object when the daemon sends one. A daemon that does not
yet send it leaves this script to evaluate the family manifest's launch formulas itself
(--families, the source tree's kernel_templates/ by default), with the shape, the variant's
config and elem_bytes; a formula that needs a device limit is then refused with its name.

The buffers are allocated at the sizes the manifest's `buffers` give and zero-filled: this shows
how to launch, it does not check results (kerntune validated the variant against its reference).
Everything but main() runs without a GPU, so the argument packing is unit-tested on CI.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import math
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))  # run from the source tree without installing

import kerntune  # noqa: E402

# Bytes per element of the dtype names manifests use ("in" is the job's dtype).
DTYPE_BYTES = {"bf16": 2, "fp16": 2, "f16": 2, "f32": 4, "fp32": 4, "u32": 4, "i32": 4, "i64": 8, "u64": 8, "u8": 1}
SCALAR_CTYPES = {"i32": ctypes.c_int32, "u32": ctypes.c_uint32, "i64": ctypes.c_int64, "u64": ctypes.c_uint64,
                 "f32": ctypes.c_float, "f64": ctypes.c_double}


# ---- launch parameters ------------------------------------------------------------------------

@dataclass
class Param:
    """One kernel parameter: a device buffer (a CUdeviceptr) or a scalar of `kind`."""

    name: str
    kind: str  # "buffer" or a key of SCALAR_CTYPES
    value_expr: Optional[str] = None  # scalar: the formula of its value
    dtype: Optional[str] = None  # buffer: element type
    elements_expr: Optional[str] = None  # buffer: the formula of its element count


@dataclass
class LaunchSpec:
    entry: str
    grid: Tuple[int, int, int]
    block: Tuple[int, int, int]
    cluster: Optional[Tuple[int, int, int]]
    dynamic_smem_bytes: int
    params: List[Param] = field(default_factory=list)
    arch: Optional[str] = None
    source: str = "daemon"  # "daemon": /v1/best's launch object; "manifest": evaluated here


_TOKEN = re.compile(r"\s*(?:(\d+\.\d*|\d+)|([A-Za-z_]\w*)|(<=|>=|==|!=|&&|\|\||[-+*/%()?:<>!,]))")
_FUNCTIONS: Dict[str, Callable[..., float]] = {
    "cdiv": lambda a, b: math.ceil(a / b), "min": min, "max": max, "abs": abs,
    "floor": math.floor, "ceil": math.ceil, "pow2": lambda a: 1.0 if int(a) > 0 and int(a) & (int(a) - 1) == 0 else 0.0,
}


def evaluate(expression: str, names: Dict[str, float]) -> float:
    """Evaluates a manifest formula (muparser syntax: + - * / %, comparisons, && || !, ?:,
    cdiv/min/max/abs/floor/ceil/pow2) with `names` bound. KeyError names an unbound name."""
    tokens: List[str] = []
    pos = 0
    text = expression.strip()
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if not match or match.end() == pos:
            raise ValueError(f"cannot read {expression!r} at {text[pos:]!r}")
        tokens.append(match.group(match.lastindex))
        pos = match.end()
    index = 0

    def peek() -> Optional[str]:
        return tokens[index] if index < len(tokens) else None

    def take(expected: Optional[str] = None) -> str:
        nonlocal index
        token = peek()
        if token is None or (expected is not None and token != expected):
            raise ValueError(f"{expression!r}: expected {expected or 'more'}, found {token}")
        index += 1
        return token

    def ternary() -> float:
        condition = binary(0)
        if peek() == "?":
            take("?")
            yes = ternary()
            take(":")
            no = ternary()
            return yes if condition else no
        return condition

    levels = [("||",), ("&&",), ("==", "!="), ("<", ">", "<=", ">="), ("+", "-"), ("*", "/", "%")]
    apply = {"||": lambda a, b: float(bool(a) or bool(b)), "&&": lambda a, b: float(bool(a) and bool(b)),
             "==": lambda a, b: float(a == b), "!=": lambda a, b: float(a != b), "<": lambda a, b: float(a < b),
             ">": lambda a, b: float(a > b), "<=": lambda a, b: float(a <= b), ">=": lambda a, b: float(a >= b),
             "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b,
             "%": lambda a, b: math.fmod(a, b)}

    def binary(level: int) -> float:
        if level == len(levels):
            return unary()
        value = binary(level + 1)
        while peek() in levels[level]:
            op = take()
            value = apply[op](value, binary(level + 1))
        return value

    def unary() -> float:
        if peek() == "-":
            take()
            return -unary()
        if peek() == "+":
            take()
            return unary()
        if peek() == "!":
            take()
            return float(not unary())
        return primary()

    def primary() -> float:
        token = take()
        if token == "(":
            value = ternary()
            take(")")
            return value
        if token[0].isdigit():
            return float(token)
        if peek() == "(" and token in _FUNCTIONS:
            take("(")
            args = [ternary()]
            while peek() == ",":
                take(",")
                args.append(ternary())
            take(")")
            return float(_FUNCTIONS[token](*args))
        if token not in names:
            raise KeyError(token)
        return float(names[token])

    value = ternary()
    if peek() is not None:
        raise ValueError(f"{expression!r}: unexpected {peek()!r}")
    return value


def _dim3(values: Optional[Sequence[Any]], names: Dict[str, float]) -> Optional[Tuple[int, int, int]]:
    if values is None:
        return None
    out = [int(round(evaluate(v, names))) if isinstance(v, str) else int(v) for v in values]
    out += [1] * (3 - len(out))
    return (out[0], out[1], out[2])


def formula_names(shape: Dict[str, int], config: Dict[str, int], dtype: str) -> Dict[str, float]:
    names: Dict[str, float] = {k: float(v) for k, v in shape.items()}
    names.update({k: float(v) for k, v in config.items()})
    names["elem_bytes"] = float(DTYPE_BYTES[dtype])
    return names


def launch_spec_from_manifest(manifest: Dict[str, Any], template: str, shape: Dict[str, int],
                              config: Dict[str, int], dtype: str) -> LaunchSpec:
    """The launch of `template` for this shape and config, evaluated from the family manifest."""
    tmpl = next((t for t in manifest["templates"] if t["name"] == template), None)
    if tmpl is None:
        raise ValueError(f"template {template!r} is not in family {manifest.get('name')!r}")
    names = formula_names(shape, config, dtype)
    launch = tmpl["launch"]
    try:
        grid = _dim3(launch["grid"], names)
        block = _dim3(launch["block"], names)
        cluster = _dim3(launch.get("cluster"), names)
        smem = int(round(evaluate(str(launch.get("dynamic_smem", "0")), names)))
    except KeyError as missing:
        raise ValueError(f"the launch formula needs {missing.args[0]!r}, which only the daemon knows "
                         "(a device limit?): use a daemon whose /v1/best sends \"launch\"") from None
    buffers = {b["name"]: b for b in manifest.get("buffers", [])}
    params: List[Param] = []
    for arg in manifest.get("args", []):
        if "buffer" in arg:
            buffer = buffers[arg["buffer"]]
            element = dtype if buffer.get("dtype") == "in" else buffer.get("dtype", dtype)
            params.append(Param(arg["buffer"], "buffer", dtype=element, elements_expr=buffer["elements"]))
        else:
            (kind, expr), = arg.items()
            params.append(Param(expr, kind, value_expr=expr))
    assert grid is not None and block is not None
    return LaunchSpec(tmpl["kernel"], grid, block, cluster, smem, params, source="manifest")


def launch_spec_from_best(best: "kerntune.Best", manifest: Optional[Dict[str, Any]]) -> LaunchSpec:
    """From /v1/best's "launch" object when present, else from the manifest's formulas."""
    launch = best.launch
    if launch:
        params = []
        for i, p in enumerate(launch.get("params") or launch.get("args") or []):
            kind = p.get("kind") or p.get("type") or "buffer"
            kind = "buffer" if kind in ("buffer", "pointer", "ptr") else kind
            params.append(Param(p.get("name", f"arg{i}"), kind, value_expr=p.get("value_expr") or p.get("name"),
                                dtype=p.get("dtype"), elements_expr=p.get("elements")))
        return LaunchSpec(
            entry=launch.get("entry") or launch.get("kernel") or launch.get("entry_name"),
            grid=tuple(launch["grid"]), block=tuple(launch["block"]),  # type: ignore[arg-type]
            cluster=tuple(launch["cluster"]) if launch.get("cluster") else None,  # type: ignore[arg-type]
            dynamic_smem_bytes=int(launch.get("dynamic_smem_bytes", launch.get("dynamic_smem", 0))),
            params=params, arch=launch.get("arch") or best.arch, source="daemon")
    if manifest is None:
        raise ValueError("/v1/best sent no launch object and no family manifest was given")
    spec = launch_spec_from_manifest(manifest, best.template, best.shape, best.config, best.dtype)
    spec.arch = best.arch
    return spec


# ---- argument packing -------------------------------------------------------------------------

def pack_kernel_params(params: Sequence[Param], values: Sequence[Any]) -> Tuple[Any, List[Any]]:
    """cuLaunchKernelEx's kernelParams: an array of pointers, one per parameter, each pointing at
    the parameter's value (a 64-bit CUdeviceptr for a buffer, the scalar's C type otherwise).
    Returns the array and the ctypes objects it points into, which must outlive the launch."""
    if len(params) != len(values):
        raise ValueError(f"{len(params)} parameters, {len(values)} values")
    keep: List[Any] = []
    pointers = (ctypes.c_void_p * len(params))()
    for i, (param, value) in enumerate(zip(params, values)):
        ctype = ctypes.c_uint64 if param.kind == "buffer" else SCALAR_CTYPES.get(param.kind)
        if ctype is None:
            raise ValueError(f"parameter {param.name}: unknown type {param.kind!r}")
        holder = ctype(value)
        keep.append(holder)
        pointers[i] = ctypes.cast(ctypes.pointer(holder), ctypes.c_void_p)
    return pointers, keep


CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8


class CUlaunchAttributeValue(ctypes.Union):
    _fields_ = [("pad", ctypes.c_char * 64), ("clusterDim", ctypes.c_uint * 3)]


class CUlaunchAttribute(ctypes.Structure):
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", CUlaunchAttributeValue)]


class CUlaunchConfig(ctypes.Structure):
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint), ("gridDimZ", ctypes.c_uint),
                ("blockDimX", ctypes.c_uint), ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(CUlaunchAttribute)), ("numAttrs", ctypes.c_uint)]


def launch_config(spec: LaunchSpec, stream: Optional[int] = None) -> Tuple[CUlaunchConfig, Any]:
    """The CUlaunchConfig for spec, with a cluster-dimension attribute when it has clusters;
    returns it and the attribute array it points to (keep both alive)."""
    config = CUlaunchConfig()
    config.gridDimX, config.gridDimY, config.gridDimZ = spec.grid
    config.blockDimX, config.blockDimY, config.blockDimZ = spec.block
    config.sharedMemBytes = spec.dynamic_smem_bytes
    config.hStream = stream
    attrs = (CUlaunchAttribute * 1)()
    if spec.cluster and spec.cluster != (1, 1, 1):
        attrs[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        attrs[0].value.clusterDim[0], attrs[0].value.clusterDim[1], attrs[0].value.clusterDim[2] = spec.cluster
        config.attrs = attrs
        config.numAttrs = 1
    else:
        config.numAttrs = 0
    return config, attrs


# ---- the CUDA driver, through ctypes ------------------------------------------------------------

class Driver:
    def __init__(self) -> None:
        self.lib = ctypes.CDLL("libcuda.so.1")

    def check(self, result: int, what: str) -> None:
        if result != 0:
            text = ctypes.c_char_p()
            self.lib.cuGetErrorString(result, ctypes.byref(text))
            raise RuntimeError(f"{what}: CUDA error {result} ({(text.value or b'?').decode()})")

    def call(self, name: str, *args: Any) -> None:
        self.check(getattr(self.lib, name)(*args), name)


def run(spec: LaunchSpec, cubin: bytes, names: Dict[str, float], ordinal: int, repeats: int) -> float:
    cuda = Driver()
    cuda.call("cuInit", 0)
    device, context = ctypes.c_int(), ctypes.c_void_p()
    cuda.call("cuDeviceGet", ctypes.byref(device), ordinal)
    cuda.call("cuDevicePrimaryCtxRetain", ctypes.byref(context), device)
    cuda.call("cuCtxSetCurrent", context)
    module, function = ctypes.c_void_p(), ctypes.c_void_p()
    cuda.call("cuModuleLoadData", ctypes.byref(module), ctypes.c_char_p(cubin))
    cuda.call("cuModuleGetFunction", ctypes.byref(function), module, spec.entry.encode())
    if spec.dynamic_smem_bytes > 48 * 1024:
        cuda.call("cuFuncSetAttribute", function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, spec.dynamic_smem_bytes)
    values, allocations = [], []
    for param in spec.params:
        if param.kind == "buffer":
            elements = int(evaluate(param.elements_expr or "1", names))
            size = max(1, elements) * DTYPE_BYTES.get(param.dtype or "f32", 4)
            pointer = ctypes.c_uint64()
            cuda.call("cuMemAlloc_v2", ctypes.byref(pointer), ctypes.c_size_t(size))
            cuda.call("cuMemsetD8_v2", pointer, ctypes.c_ubyte(0), ctypes.c_size_t(size))
            allocations.append(pointer)
            values.append(pointer.value)
        else:
            values.append(evaluate(param.value_expr or param.name, names))
    kernel_params, keep = pack_kernel_params(spec.params, values)
    config, attrs = launch_config(spec)
    start, stop = ctypes.c_void_p(), ctypes.c_void_p()
    cuda.call("cuEventCreate", ctypes.byref(start), 0)
    cuda.call("cuEventCreate", ctypes.byref(stop), 0)
    cuda.call("cuLaunchKernelEx", ctypes.byref(config), function, kernel_params, None)  # warm-up
    cuda.call("cuEventRecord", start, None)
    for _ in range(repeats):
        cuda.call("cuLaunchKernelEx", ctypes.byref(config), function, kernel_params, None)
    cuda.call("cuEventRecord", stop, None)
    cuda.call("cuEventSynchronize", stop)
    elapsed = ctypes.c_float()
    # cuEventElapsedTime_v2 came with CUDA 12.8; older drivers have only the first version.
    elapsed_time = "cuEventElapsedTime_v2" if hasattr(cuda.lib, "cuEventElapsedTime_v2") else "cuEventElapsedTime"
    cuda.call(elapsed_time, ctypes.byref(elapsed), start, stop)
    for pointer in allocations:
        cuda.call("cuMemFree_v2", pointer)
    cuda.call("cuModuleUnload", module)
    cuda.call("cuDevicePrimaryCtxRelease_v2", device)
    del keep, attrs
    return elapsed.value * 1000.0 / repeats


def parse_shape(text: str) -> Dict[str, int]:
    """"M=4096,N=4096,K=4096" (or "4096x4096x4096" for M, N, K)."""
    if "=" not in text:
        dims = [int(v) for v in text.lower().split("x")]
        return dict(zip(["M", "N", "K"], dims))
    return {k.strip().upper(): int(v) for k, v in (item.split("=") for item in text.split(","))}


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("family")
    parser.add_argument("--shape", required=True)
    parser.add_argument("--dtype", required=True)
    parser.add_argument("--device", help="GPU model for /v1/best (default: any)")
    parser.add_argument("--server", help="kerntuned URL (default $KERNTUNE_SERVER)")
    parser.add_argument("--families", default=os.path.join(HERE, "..", "..", "..", "kernel_templates"),
                        help="folder of family manifests, used when /v1/best sends no launch object")
    parser.add_argument("--ordinal", type=int, default=0, help="CUDA device ordinal to launch on")
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args(argv)

    client = kerntune.Client(args.server)
    shape = parse_shape(args.shape)
    best = client.best(args.family, shape, args.dtype, args.device)
    manifest = None
    manifest_path = os.path.join(args.families, args.family, "manifest.json")
    if not best.launch and os.path.exists(manifest_path):
        with open(manifest_path, encoding="utf-8") as f:
            manifest = json.load(f)
    spec = launch_spec_from_best(best, manifest)
    kernel = client.kernel(best.variant_id)
    print(f"variant {best.variant_id} ({best.template} {best.config}), kerntune measured {best.median_us:.1f} us")
    print(f"launch ({spec.source}): {spec.entry} grid {spec.grid} block {spec.block} cluster {spec.cluster} "
          f"smem {spec.dynamic_smem_bytes} B, cubin for {kernel.arch}, {len(kernel.cubin)} bytes")
    names = formula_names(best.shape, best.config, best.dtype)
    per_launch_us = run(spec, kernel.cubin, names, args.ordinal, args.repeats)
    print(f"launched {args.repeats} times here: {per_launch_us:.1f} us per launch (zero-filled inputs, "
          "no L2 flush between launches)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
