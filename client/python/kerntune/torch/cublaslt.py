"""The gemm family's baseline as its job measured it: cublasLt with a 32 MiB workspace and the
algorithm the job chose (the `algorithm_index`-th of the heuristic's top 8, which the job timed
fastest), called through ctypes on torch's stream. Where cublasLt won a shape, this is the
answer the daemon gives, and often faster than torch's own matmul, which takes the heuristic's
first algorithm.

The call mirrors the measurement worker's (worker/cublaslt_matmul.cpp): column-major C^T[N, M] =
op(B)[N, K] A^T, i.e. row-major C[M, N] = A[M, K] B[N, K]^T, fp32 compute. The heuristic is asked
again here; the algorithm at the job's rank is used only if its configuration (id, tile, stages,
split-K, reduction, swizzling, cluster shape) is the one the job recorded, so a different
cuBLAS or GPU cannot silently put another algorithm in its place.
"""

from __future__ import annotations

import ctypes
from typing import Any, Dict, Optional

WORKSPACE_BYTES = 32 << 20
HEURISTIC_ALGORITHMS = 8

# cublasLt.h / cublas_api.h / library_types.h
CUBLAS_COMPUTE_32F = 68
CUDA_R_32F, CUDA_R_16F, CUDA_R_16BF = 0, 2, 14
CUBLAS_OP_N, CUBLAS_OP_T = 0, 1
CUBLASLT_MATMUL_DESC_TRANSA, CUBLASLT_MATMUL_DESC_TRANSB = 3, 4
CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1
CONFIG_ATTRIBUTES = {"id": 0, "tile": 1, "split_k": 2, "reduction": 3, "cta_swizzling": 4, "stages": 6,
                     "cluster_shape": 8}
DATA_TYPES = {"bf16": CUDA_R_16BF, "fp16": CUDA_R_16F}


class Algo(ctypes.Structure):
    _fields_ = [("data", ctypes.c_uint64 * 8)]


class HeuristicResult(ctypes.Structure):
    _fields_ = [("algo", Algo), ("workspaceSize", ctypes.c_size_t), ("state", ctypes.c_int),
                ("wavesCount", ctypes.c_float), ("reserved", ctypes.c_int * 4)]


_library: Optional[ctypes.CDLL] = None


def library() -> ctypes.CDLL:
    """libcublasLt as the process has it (torch loads it; by soname that is the same copy)."""
    global _library
    if _library is None:
        errors = []
        for name in ("libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"):
            try:
                _library = ctypes.CDLL(name)
                break
            except OSError as error:
                errors.append(str(error))
        else:
            raise OSError("no cublasLt library: " + "; ".join(errors))
    return _library


def check(status: int, what: str) -> None:
    if status != 0:
        raise RuntimeError(f"{what}: cuBLAS status {status}")


class JobAlgorithm:
    """C[M, N] = A[M, K] B[N, K]^T with the cublasLt algorithm a job chose; call(a, b, c, ws,
    stream) with device addresses."""

    def __init__(self, m: int, n: int, k: int, dtype: str, choice: Dict[str, Any]):
        lt = library()
        self.lt = lt
        self.handle = ctypes.c_void_p()
        check(lt.cublasLtCreate(ctypes.byref(self.handle)), "cublasLtCreate")
        self.desc = ctypes.c_void_p()
        check(lt.cublasLtMatmulDescCreate(ctypes.byref(self.desc), CUBLAS_COMPUTE_32F, CUDA_R_32F),
              "cublasLtMatmulDescCreate")
        for attribute, value in ((CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T), (CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N)):
            op = ctypes.c_int32(value)
            check(lt.cublasLtMatmulDescSetAttribute(self.desc, attribute, ctypes.byref(op),
                                                    ctypes.c_size_t(ctypes.sizeof(op))),
                  "cublasLtMatmulDescSetAttribute")
        data_type = DATA_TYPES[dtype]
        self.layouts = []
        for rows, cols, ld in ((k, n, k), (k, m, k), (n, m, n)):  # B, A, C as the worker lays them out
            layout = ctypes.c_void_p()
            check(lt.cublasLtMatrixLayoutCreate(ctypes.byref(layout), data_type, ctypes.c_uint64(rows),
                                                ctypes.c_uint64(cols), ctypes.c_int64(ld)),
                  "cublasLtMatrixLayoutCreate")
            self.layouts.append(layout)
        preference = ctypes.c_void_p()
        check(lt.cublasLtMatmulPreferenceCreate(ctypes.byref(preference)), "cublasLtMatmulPreferenceCreate")
        workspace = ctypes.c_uint64(WORKSPACE_BYTES)
        check(lt.cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                      ctypes.byref(workspace), ctypes.c_size_t(ctypes.sizeof(workspace))),
              "cublasLtMatmulPreferenceSetAttribute")
        results = (HeuristicResult * HEURISTIC_ALGORITHMS)()
        returned = ctypes.c_int()
        b_layout, a_layout, c_layout = self.layouts
        check(lt.cublasLtMatmulAlgoGetHeuristic(self.handle, self.desc, b_layout, a_layout, c_layout, c_layout,
                                                preference, HEURISTIC_ALGORITHMS, results, ctypes.byref(returned)),
              "cublasLtMatmulAlgoGetHeuristic")
        lt.cublasLtMatmulPreferenceDestroy(preference)
        usable = [results[i] for i in range(returned.value) if results[i].state == 0]
        index = int(choice.get("algorithm_index", -1))
        if not 0 <= index < len(usable):
            self.close()
            raise ValueError(f"cublasLt's heuristic offers {len(usable)} algorithms here, the job chose #{index}")
        self.result = usable[index]
        here = self.config(self.result.algo)
        recorded = {key: choice.get(key) for key in CONFIG_ATTRIBUTES if choice.get(key) is not None}
        differs = {key: (value, here.get(key)) for key, value in recorded.items() if here.get(key) != value}
        if differs:
            self.close()
            raise ValueError(f"cublasLt's algorithm #{index} here is not the job's ({differs}: another cuBLAS or GPU)")
        self.alpha, self.beta = ctypes.c_float(1.0), ctypes.c_float(0.0)

    def config(self, algo: Algo) -> Dict[str, int]:
        values = {}
        for name, attribute in CONFIG_ATTRIBUTES.items():
            size = ctypes.c_size_t()
            if self.lt.cublasLtMatmulAlgoConfigGetAttribute(ctypes.byref(algo), attribute, None, ctypes.c_size_t(0),
                                                            ctypes.byref(size)) != 0 or not 0 < size.value <= 8:
                continue
            value, written = ctypes.c_uint64(0), ctypes.c_size_t()
            if self.lt.cublasLtMatmulAlgoConfigGetAttribute(ctypes.byref(algo), attribute, ctypes.byref(value),
                                                            size, ctypes.byref(written)) == 0:
                values[name] = int(value.value)
        return values

    def __call__(self, a: int, b: int, c: int, workspace: int, stream: int) -> None:
        b_layout, a_layout, c_layout = self.layouts
        check(self.lt.cublasLtMatmul(self.handle, self.desc, ctypes.byref(self.alpha), ctypes.c_void_p(b), b_layout,
                                     ctypes.c_void_p(a), a_layout, ctypes.byref(self.beta), ctypes.c_void_p(c),
                                     c_layout, ctypes.c_void_p(c), c_layout, ctypes.byref(self.result.algo),
                                     ctypes.c_void_p(workspace), ctypes.c_size_t(WORKSPACE_BYTES),
                                     ctypes.c_void_p(stream or None)),
              "cublasLtMatmul")

    def close(self) -> None:
        for layout in getattr(self, "layouts", []):
            self.lt.cublasLtMatrixLayoutDestroy(layout)
        self.layouts = []
        if getattr(self, "desc", None) and self.desc.value:
            self.lt.cublasLtMatmulDescDestroy(self.desc)
            self.desc = ctypes.c_void_p()
        if getattr(self, "handle", None) and self.handle.value:
            self.lt.cublasLtDestroy(self.handle)
            self.handle = ctypes.c_void_p()
