#!/usr/bin/env python3
"""Downloads the best kernel kerntune found for a problem and launches it on this machine's GPU
with kerntune.launch (ctypes over the CUDA driver API: cuModuleLoadData, cuModuleGetFunction,
cuLaunchKernelEx), then times a few launches with CUDA events.

    python3 launch_best.py gemm --shape M=4096,N=4096,K=4096 --dtype bf16 [--device H100]

How to launch (entry name, grid, block, cluster, dynamic shared memory, parameter order, types
and scalar values, buffer sizes) comes from /v1/best's "launch" object: the daemon evaluates the
family manifest's formulas for the shape with the same code its measurement worker launches with.

The buffers are allocated at the sizes the launch object's `buffers` give and zero-filled: this shows
how to launch, it does not check results (kerntune validated the variant against its reference;
kerntune.torch launches over real tensors and checks the first result of each shape).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import sys
from typing import Any, Dict, Optional, Sequence

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))  # run from the source tree without installing

import kerntune  # noqa: E402
from kerntune.launch import LaunchSpec, LoadedKernel, launch_spec_from_best  # noqa: E402

def run(spec: LaunchSpec, cubin: bytes, ordinal: int, repeats: int) -> float:
    kernel = LoadedKernel(spec, cubin, ordinal)
    cuda = kernel.cuda
    allocations: Dict[str, Any] = {}
    with kernel._current():
        for buffer in spec.buffer_list():
            pointer = ctypes.c_uint64()
            cuda.call("cuMemAlloc_v2", ctypes.byref(pointer), ctypes.c_size_t(buffer.nbytes))
            cuda.call("cuMemsetD8_v2", pointer, ctypes.c_ubyte(0), ctypes.c_size_t(buffer.nbytes))
            allocations[buffer.name] = pointer
        addresses = {name: pointer.value for name, pointer in allocations.items()}
        start, stop = ctypes.c_void_p(), ctypes.c_void_p()
        cuda.call("cuEventCreate", ctypes.byref(start), 0)
        cuda.call("cuEventCreate", ctypes.byref(stop), 0)
        kernel.launch(addresses, 0)  # warm-up
        cuda.call("cuEventRecord", start, None)
        for _ in range(repeats):
            kernel.launch(addresses, 0)
        cuda.call("cuEventRecord", stop, None)
        cuda.call("cuEventSynchronize", stop)
        elapsed = ctypes.c_float()
        # cuEventElapsedTime_v2 came with CUDA 12.8; older drivers have only the first version.
        elapsed_time = "cuEventElapsedTime_v2" if hasattr(cuda.lib, "cuEventElapsedTime_v2") else "cuEventElapsedTime"
        cuda.call(elapsed_time, ctypes.byref(elapsed), start, stop)
        for pointer in allocations.values():
            cuda.call("cuMemFree_v2", pointer)
    kernel.close()
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
