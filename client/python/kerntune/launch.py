"""Launching a kerntune kernel from Python with ctypes over the CUDA driver API.

How to launch a variant (entry name, grid, block, cluster, dynamic shared memory, parameters in
order, buffer sizes) comes from the daemon's launch description (`/v1/best`'s "launch",
`/v1/variants/{id}/launch`), which it evaluates from the family manifest's formulas for the shape
with the same code its measurement worker launches with. `LaunchSpec` reads it; `LoadedKernel`
loads the cubin once and launches it over device pointers the caller owns (torch tensors in
`kerntune.torch`), on the caller's stream. Everything but `Driver` and `LoadedKernel.load` runs
without a GPU, so the argument packing is unit-tested on CI.
"""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

# Bytes per element of the dtype names manifests use ("in" is the job's dtype); e4m3 and e5m2 are
# the fp8 formats (one byte each).
DTYPE_BYTES = {"bf16": 2, "fp16": 2, "f16": 2, "f32": 4, "fp32": 4, "u32": 4, "i32": 4, "i64": 8, "u64": 8, "u8": 1,
               "e4m3": 1, "e5m2": 1}
SCALAR_CTYPES = {"i32": ctypes.c_int32, "u32": ctypes.c_uint32, "i64": ctypes.c_int64, "u64": ctypes.c_uint64,
                 "f32": ctypes.c_float, "f64": ctypes.c_double}


# ---- the launch description ------------------------------------------------------------------

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
class Buffer:
    name: str
    role: str  # "input", "output" or "scratch" (zeroed before the first launch)
    dtype: str
    elements: int

    @property
    def nbytes(self) -> int:
        return max(1, self.elements) * DTYPE_BYTES.get(self.dtype, 4)


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
    buffer_roles: Dict[str, str] = field(default_factory=dict)

    def buffer_list(self) -> List[Buffer]:
        """Every buffer the parameters name, with its role, dtype and size; a launch object
        without "buffers" sizes each buffer by its parameter."""
        buffers = dict(self.buffers)
        for param in self.params:
            if param.kind == "buffer" and param.name not in buffers:
                buffers[param.name] = (param.dtype or "f32", param.elements or 1)
        return [Buffer(name, self.buffer_roles.get(name, "input"), dtype, elements)
                for name, (dtype, elements) in buffers.items()]


def launch_spec_from_launch(launch: Mapping[str, Any]) -> LaunchSpec:
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
                      buffers={name: (b.get("dtype", "f32"), int(b.get("elements", 1))) for name, b in buffers.items()},
                      buffer_roles={name: b.get("role", "input") for name, b in buffers.items()})


def launch_spec_from_best(best: Any) -> LaunchSpec:
    """From a kerntune.Best (/v1/best's "launch" object: the daemon evaluates the manifest's
    formulas)."""
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

# cuda.h's CUtensorMapDataType, CUtensorMapSwizzle and CUtensorMapL2promotion values. The copy
# engine only moves bytes, so fp8 buffers are mapped as CU_TENSOR_MAP_DATA_TYPE_UINT8 (0), as the
# kerntune worker maps them (zero fill is the fp8 zero too).
TENSOR_MAP_DTYPES = {"u8": 0, "e4m3": 0, "e5m2": 0, "u32": 2, "i32": 3, "fp16": 6, "f16": 6, "f32": 7, "fp32": 7,
                     "bf16": 9}
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

class CudaError(RuntimeError):
    def __init__(self, what: str, code: int, text: str):
        super().__init__(f"{what}: CUDA error {code} ({text})")
        self.code = code


class Driver:
    """libcuda.so.1, every call's result checked."""

    def __init__(self) -> None:
        self.lib = ctypes.CDLL("libcuda.so.1")

    def check(self, result: int, what: str) -> None:
        if result != 0:
            text = ctypes.c_char_p()
            self.lib.cuGetErrorString(result, ctypes.byref(text))
            raise CudaError(what, result, (text.value or b"?").decode())

    def call(self, name: str, *args: Any) -> None:
        self.check(getattr(self.lib, name)(*args), name)

    def version(self) -> int:
        """cuDriverGetVersion: 13000 for CUDA 13.0, as the daemon records `driver_version`."""
        version = ctypes.c_int()
        self.call("cuDriverGetVersion", ctypes.byref(version))
        return version.value


_driver: Optional[Driver] = None


def driver() -> Driver:
    """The process's one Driver (libcuda loaded once)."""
    global _driver
    if _driver is None:
        _driver = Driver()
    return _driver


def encode_tensor_map(cuda: Driver, param: Param, address: int) -> TensorMap:
    args = tensor_map_args(param)
    tensor_map = TensorMap()
    cuda.call("cuTensorMapEncodeTiled", ctypes.c_void_p(tensor_map.address), args.dtype, ctypes.c_uint32(args.rank),
              ctypes.c_void_p(address), (ctypes.c_uint64 * 5)(*args.dims), (ctypes.c_uint64 * 4)(*args.strides),
              (ctypes.c_uint32 * 5)(*args.box), (ctypes.c_uint32 * 5)(1, 1, 1, 1, 1), 0, args.swizzle,
              CU_TENSOR_MAP_L2_PROMOTION_L2_128B, 0)
    return tensor_map


@dataclass
class PackedLaunch:
    """Everything one launch over one set of buffer addresses needs, kept alive together."""

    kernel_params: Any
    keep: List[Any]


class LoadedKernel:
    """A variant's cubin loaded into a device's primary context (the one PyTorch and the CUDA
    runtime use), launched over caller-owned device buffers on the caller's stream. The packed
    parameters (tensor maps encoded, scalars converted) are cached per set of buffer addresses, so
    a repeated launch over the same tensors encodes nothing and allocates nothing."""

    PACKED_CACHE = 64  # sets of buffer addresses remembered per kernel

    def __init__(self, spec: LaunchSpec, cubin: bytes, ordinal: int):
        self.spec = spec
        self.ordinal = ordinal
        self.cuda = driver()
        self.cuda.call("cuInit", 0)
        self._device = ctypes.c_int()
        self.cuda.call("cuDeviceGet", ctypes.byref(self._device), ordinal)
        self._context = ctypes.c_void_p()
        self.cuda.call("cuDevicePrimaryCtxRetain", ctypes.byref(self._context), self._device)
        self._module = ctypes.c_void_p()
        self._function = ctypes.c_void_p()
        with self._current():
            self.cuda.call("cuModuleLoadData", ctypes.byref(self._module), ctypes.c_char_p(cubin))
            self.cuda.call("cuModuleGetFunction", ctypes.byref(self._function), self._module, spec.entry.encode())
            if spec.dynamic_smem_bytes > 48 * 1024:
                self.cuda.call("cuFuncSetAttribute", self._function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                               spec.dynamic_smem_bytes)
        self._config, self._attrs = launch_config(spec)
        self._packed: "OrderedDict[Tuple[int, ...], PackedLaunch]" = OrderedDict()
        self._buffer_names = [p.name for p in spec.params if p.kind in ("buffer", "tensor_map")]

    class _Current:
        def __init__(self, kernel: "LoadedKernel"):
            self.kernel = kernel
            self.pushed = False

        def __enter__(self) -> None:
            current = ctypes.c_void_p()
            self.kernel.cuda.call("cuCtxGetCurrent", ctypes.byref(current))
            if current.value != self.kernel._context.value:
                self.kernel.cuda.call("cuCtxPushCurrent_v2", self.kernel._context)
                self.pushed = True

        def __exit__(self, *exc: Any) -> None:
            if self.pushed:
                popped = ctypes.c_void_p()
                self.kernel.cuda.call("cuCtxPopCurrent_v2", ctypes.byref(popped))

    def _current(self) -> "LoadedKernel._Current":
        return LoadedKernel._Current(self)

    def pack(self, addresses: Mapping[str, int]) -> PackedLaunch:
        """The kernel parameters over these buffer addresses (cached)."""
        key = tuple(addresses[name] for name in self._buffer_names)
        packed = self._packed.get(key)
        if packed is not None:
            self._packed.move_to_end(key)
            return packed
        values: List[Any] = []
        for param in self.spec.params:
            if param.kind == "buffer":
                values.append(addresses[param.name])
            elif param.kind == "tensor_map":
                values.append(encode_tensor_map(self.cuda, param, addresses[param.name]))
            else:
                values.append(param.value)
        kernel_params, keep = pack_kernel_params(self.spec.params, values)
        packed = PackedLaunch(kernel_params, keep)
        self._packed[key] = packed
        if len(self._packed) > self.PACKED_CACHE:
            self._packed.popitem(last=False)
        return packed

    def launch(self, addresses: Mapping[str, int], stream: int) -> None:
        """One launch on `stream` (a CUstream handle; 0 is the legacy default stream) over the
        buffers at `addresses` (name -> device address)."""
        packed = self.pack(addresses)
        self._config.hStream = stream or None
        with self._current():
            self.cuda.call("cuLaunchKernelEx", ctypes.byref(self._config), self._function, packed.kernel_params, None)

    def close(self) -> None:
        if self._module.value:
            with self._current():
                self.cuda.call("cuModuleUnload", self._module)
            self._module = ctypes.c_void_p()
            self.cuda.call("cuDevicePrimaryCtxRelease_v2", self._device)
