#!/usr/bin/env python3
"""Downloads the best kernel kerntune found for a problem and launches it on this machine's GPU
with ctypes over the CUDA driver API (cuModuleLoadData, cuModuleGetFunction, cuLaunchKernelEx),
then times a few launches with CUDA events.

    python3 launch_best.py gemm --shape M=4096,N=4096,K=4096 --dtype bf16 [--device H100]

How to launch (entry name, grid, block, cluster, dynamic shared memory, parameter order, types
and scalar values, buffer sizes) comes from /v1/best's "launch" object: the daemon evaluates the
family manifest's formulas for the shape with the same code its measurement worker launches with.

The buffers are allocated at the sizes the launch object's `buffers` give and zero-filled: this shows
how to launch, it does not check results (kerntune validated the variant against its reference).
Everything but main() runs without a GPU, so the argument packing is unit-tested on CI.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

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
    """One kernel parameter: a device buffer (a CUdeviceptr), a TMA tensor map over a buffer (a
    128-byte CUtensorMap passed by value) or a scalar of `kind`."""

    name: str  # the buffer's name for "buffer" and "tensor_map", else the scalar's expression
    kind: str  # "buffer", "tensor_map" or a key of SCALAR_CTYPES
    value: Optional[float] = None  # scalar: its value for the shape, as the daemon evaluated it
    dtype: Optional[str] = None  # buffer, tensor map: element type
    elements: Optional[int] = None  # buffer: element count for the shape
    dims: Optional[List[int]] = None  # tensor map: extents, innermost first
    box: Optional[List[int]] = None  # tensor map: the box one copy moves, innermost first
    swizzle_bytes: int = 0  # tensor map: 0, 32, 64 or 128


@dataclass
class LaunchSpec:
    entry: str
    grid: Tuple[int, int, int]
    block: Tuple[int, int, int]
    cluster: Optional[Tuple[int, int, int]]
    dynamic_smem_bytes: int
    params: List[Param] = field(default_factory=list)
    arch: Optional[str] = None
    variant_id: Optional[int] = None
    # name -> (dtype, elements): each buffer is allocated once, however many parameters use it
    buffers: Dict[str, Tuple[str, int]] = field(default_factory=dict)


def launch_spec_from_launch(launch: Dict[str, Any]) -> LaunchSpec:
    """From the daemon's launch description (/v1/best's "launch", /v1/variants/{id}/launch)."""
    buffers = {b["name"]: b for b in launch.get("buffers", [])}
    params: List[Param] = []
    for i, p in enumerate(launch["params"]):
        kind = p["type"]
        if kind == "pointer":
            buffer = buffers.get(p["buffer"], {})
            params.append(Param(p["buffer"], "buffer", dtype=buffer.get("dtype"), elements=buffer.get("elements")))
        elif kind == "tensor_map":
            buffer = buffers.get(p["buffer"], {})
            if len(p["dims"]) != len(p["box"]) or not 1 <= len(p["dims"]) <= 5:
                raise ValueError(f"parameter {i}: a tensor map needs 1 to 5 dims and one box entry per dim")
            params.append(Param(p["buffer"], "tensor_map", dtype=buffer.get("dtype"), dims=list(p["dims"]),
                                box=list(p["box"]), swizzle_bytes=int(p.get("swizzle_bytes", 0))))
        else:
            params.append(Param(p.get("expression", f"arg{i}"), kind, value=p["value"]))
    return LaunchSpec(entry=launch["kernel"], grid=tuple(launch["grid"]),  # type: ignore[arg-type]
                      block=tuple(launch["block"]), cluster=tuple(launch["cluster"]),  # type: ignore[arg-type]
                      dynamic_smem_bytes=int(launch["dynamic_smem_bytes"]), params=params,
                      arch=launch.get("arch"), variant_id=launch.get("variant_id"),
                      buffers={name: (b.get("dtype", "f32"), int(b.get("elements", 1))) for name, b in buffers.items()})


def launch_spec_from_best(best: "kerntune.Best") -> LaunchSpec:
    """From /v1/best's "launch" object (the daemon evaluates the manifest's formulas)."""
    if not best.launch:
        raise ValueError("/v1/best sent no launch object (a daemon older than GET /v1/variants/{id}/launch, "
                         "or the variant's family is no longer loaded)")
    return launch_spec_from_launch(best.launch)


# ---- argument packing -------------------------------------------------------------------------

def pack_kernel_params(params: Sequence[Param], values: Sequence[Any]) -> Tuple[Any, List[Any]]:
    """cuLaunchKernelEx's kernelParams: an array of pointers, one per parameter, each pointing at
    the parameter's value (a 64-bit CUdeviceptr for a buffer, an encoded TensorMap for a tensor
    map, the scalar's C type otherwise). Returns the array and the ctypes objects it points into,
    which must outlive the launch."""
    if len(params) != len(values):
        raise ValueError(f"{len(params)} parameters, {len(values)} values")
    keep: List[Any] = []
    pointers = (ctypes.c_void_p * len(params))()
    for i, (param, value) in enumerate(zip(params, values)):
        if param.kind == "tensor_map":
            if not isinstance(value, TensorMap):
                raise ValueError(f"parameter {param.name}: a tensor map's value is an encoded TensorMap")
            keep.append(value)
            pointers[i] = value.address
            continue
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


# ---- TMA tensor maps ------------------------------------------------------------------------------

# cuda.h's CUtensorMapDataType, CUtensorMapSwizzle and CUtensorMapL2promotion values.
TENSOR_MAP_DTYPES = {"u8": 0, "u32": 2, "i32": 3, "fp16": 6, "f16": 6, "f32": 7, "fp32": 7, "bf16": 9}
TENSOR_MAP_SWIZZLES = {0: 0, 32: 1, 64: 2, 128: 3}
CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2
TENSOR_MAP_BYTES = 128  # CU_TENSOR_MAP_NUM_QWORDS * 8, aligned to 128 bytes


class TensorMap:
    """A CUtensorMap's 128 bytes at a 128-byte aligned address (ctypes cannot align a field)."""

    def __init__(self) -> None:
        self._raw = ctypes.create_string_buffer(2 * TENSOR_MAP_BYTES)
        self.address = ctypes.addressof(self._raw) + (-ctypes.addressof(self._raw)) % TENSOR_MAP_BYTES


@dataclass
class TensorMapArgs:
    """cuTensorMapEncodeTiled's arguments for a dense row-major view of a buffer, innermost
    dimension first: the same view the kerntune worker encodes when it measures the variant
    (out-of-bounds boxes read as zero, which ragged shapes rely on)."""

    dtype: int
    rank: int
    dims: List[int]
    strides: List[int]  # bytes, for dims 1..rank-1
    box: List[int]
    swizzle: int


def tensor_map_args(param: Param) -> TensorMapArgs:
    dtype = TENSOR_MAP_DTYPES.get(param.dtype or "")
    if dtype is None:
        raise ValueError(f"tensor map over {param.name}: no tensor map element type for dtype {param.dtype!r}")
    if param.swizzle_bytes not in TENSOR_MAP_SWIZZLES:
        raise ValueError(f"tensor map over {param.name}: swizzle {param.swizzle_bytes} is not 0, 32, 64 or 128 bytes")
    dims, box = list(param.dims or []), list(param.box or [])
    if any(d <= 0 for d in dims):
        raise ValueError(f"tensor map over {param.name}: a non-positive extent in {dims}")
    strides, stride = [], DTYPE_BYTES[param.dtype or "f32"]
    for extent in dims[:-1]:
        stride *= extent
        strides.append(stride)
    return TensorMapArgs(dtype, len(dims), dims, strides, box, TENSOR_MAP_SWIZZLES[param.swizzle_bytes])


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


def encode_tensor_map(cuda: Driver, param: Param, address: int) -> TensorMap:
    args = tensor_map_args(param)
    tensor_map = TensorMap()
    cuda.call("cuTensorMapEncodeTiled", ctypes.c_void_p(tensor_map.address), args.dtype, ctypes.c_uint32(args.rank),
              ctypes.c_void_p(address), (ctypes.c_uint64 * 5)(*args.dims), (ctypes.c_uint64 * 4)(*args.strides),
              (ctypes.c_uint32 * 5)(*args.box), (ctypes.c_uint32 * 5)(1, 1, 1, 1, 1), 0, args.swizzle,
              CU_TENSOR_MAP_L2_PROMOTION_L2_128B, 0)
    return tensor_map


def run(spec: LaunchSpec, cubin: bytes, ordinal: int, repeats: int) -> float:
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
    allocations: Dict[str, Any] = {}
    buffers = dict(spec.buffers)
    for param in spec.params:  # a launch object without "buffers" sizes each buffer by its parameter
        if param.kind == "buffer" and param.name not in buffers:
            buffers[param.name] = (param.dtype or "f32", param.elements or 1)
    for name, (dtype, elements) in buffers.items():
        size = max(1, elements) * DTYPE_BYTES.get(dtype, 4)
        pointer = ctypes.c_uint64()
        cuda.call("cuMemAlloc_v2", ctypes.byref(pointer), ctypes.c_size_t(size))
        cuda.call("cuMemsetD8_v2", pointer, ctypes.c_ubyte(0), ctypes.c_size_t(size))
        allocations[name] = pointer
    values: List[Any] = []
    for param in spec.params:
        if param.kind == "buffer":
            values.append(allocations[param.name].value)
        elif param.kind == "tensor_map":
            values.append(encode_tensor_map(cuda, param, allocations[param.name].value))
        else:
            values.append(param.value)
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
    for pointer in allocations.values():
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
    parser.add_argument("--ordinal", type=int, default=0, help="CUDA device ordinal to launch on")
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args(argv)

    client = kerntune.Client(args.server)
    shape = parse_shape(args.shape)
    best = client.best(args.family, shape, args.dtype, args.device)
    spec = launch_spec_from_best(best)
    # Our best variant: the top-level one, or best_own when the baseline library call wins.
    variant_id = spec.variant_id if spec.variant_id is not None else best.variant_id
    kernel = client.kernel(variant_id)
    if best.variant_id is None:
        print(f"the baseline wins for this problem; launching kerntune's best variant {variant_id}")
    else:
        print(f"variant {variant_id} ({best.template} {best.config}), kerntune measured {best.median_us:.1f} us")
    print(f"launch: {spec.entry} grid {spec.grid} block {spec.block} cluster {spec.cluster} "
          f"smem {spec.dynamic_smem_bytes} B, cubin for {kernel.arch}, {len(kernel.cubin)} bytes")
    per_launch_us = run(spec, kernel.cubin, args.ordinal, args.repeats)
    print(f"launched {args.repeats} times here: {per_launch_us:.1f} us per launch (zero-filled inputs, "
          "no L2 flush between launches)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
