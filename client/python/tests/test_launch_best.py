"""examples/launch.py without a GPU: the daemon's launch object read as sent, the
kernelParams array and the CUlaunchConfig it hands to cuLaunchKernelEx."""

from __future__ import annotations

import ctypes
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

import kerntune  # noqa: E402
import launch_best  # noqa: E402
from kerntune import launch as kt_launch  # noqa: E402

# What GET /v1/variants/{id}/launch (and /v1/best's "launch") says for gemm M=96,N=80,K=40 with
# 64x64 tiles; tests/integration/variant_launch_test.cpp checks the daemon says exactly this.
LAUNCH = {
    "variant_id": 7, "kernel": "kt_gemm_mma", "arch": "sm_90a", "grid": [2, 2, 1], "block": [128, 1, 1],
    "cluster": [1, 1, 1], "dynamic_smem_bytes": 16384,
    "params": [{"type": "pointer", "buffer": "C"}, {"type": "pointer", "buffer": "A"},
               {"type": "pointer", "buffer": "B"}, {"type": "i32", "expression": "M", "value": 96},
               {"type": "i32", "expression": "N", "value": 80}, {"type": "i32", "expression": "K", "value": 40}],
    "buffers": [{"name": "A", "role": "input", "dtype": "bf16", "elements": 3840},
                {"name": "B", "role": "input", "dtype": "bf16", "elements": 3200},
                {"name": "C", "role": "output", "dtype": "bf16", "elements": 7680}],
    "shape": {"M": 96, "N": 80, "K": 40}, "dtype": "bf16"}


class LaunchFromDaemon(unittest.TestCase):
    def test_the_daemons_launch_object_is_used_as_sent(self) -> None:
        best = kerntune.Best.from_json({
            "family": "gemm", "dtype": "bf16", "shape": LAUNCH["shape"], "arch": "sm_90a",
            "job_id": 1, "variant_id": 7, "template": "mma_multistage", "config": {}, "median_us": 3.0,
            "launch": LAUNCH})
        spec = kt_launch.launch_spec_from_best(best)
        self.assertEqual(spec.entry, "kt_gemm_mma")
        self.assertEqual((spec.grid, spec.block, spec.cluster), ((2, 2, 1), (128, 1, 1), (1, 1, 1)))
        self.assertEqual(spec.dynamic_smem_bytes, 16384)
        self.assertEqual(spec.variant_id, 7)
        self.assertEqual([(p.name, p.kind) for p in spec.params],
                         [("C", "buffer"), ("A", "buffer"), ("B", "buffer"), ("M", "i32"), ("N", "i32"), ("K", "i32")])
        self.assertEqual((spec.params[1].dtype, spec.params[1].elements), ("bf16", 3840))
        self.assertEqual(spec.params[3].value, 96)

    def test_a_tensor_map_parameter_becomes_cuTensorMapEncodeTiled_arguments(self) -> None:
        # As /v1/best sends it for a wgmma_tma_ws variant: C both as a pointer and as a tensor map.
        launch = dict(LAUNCH, params=[{"type": "pointer", "buffer": "C"},
                                      {"type": "tensor_map", "buffer": "A", "dims": [40, 96], "box": [64, 128],
                                       "swizzle_bytes": 128},
                                      {"type": "tensor_map", "buffer": "C", "dims": [80, 96], "box": [64, 64],
                                       "swizzle_bytes": 64}])
        spec = kt_launch.launch_spec_from_launch(launch)
        self.assertEqual([(p.name, p.kind) for p in spec.params], [("C", "buffer"), ("A", "tensor_map"), ("C", "tensor_map")])
        self.assertEqual(spec.buffers, {"A": ("bf16", 3840), "B": ("bf16", 3200), "C": ("bf16", 7680)})
        args = kt_launch.tensor_map_args(spec.params[1])
        # bf16 is cuda.h's CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 (9); the row pitch is 40 bf16 = 80 bytes.
        self.assertEqual((args.dtype, args.rank, args.dims, args.strides, args.box), (9, 2, [40, 96], [80], [64, 128]))
        self.assertEqual(args.swizzle, 3)  # CU_TENSOR_MAP_SWIZZLE_128B
        self.assertEqual(kt_launch.tensor_map_args(spec.params[2]).swizzle, 2)  # 64B
        bad = dict(launch, params=[{"type": "tensor_map", "buffer": "A", "dims": [40, 96], "box": [64],
                                    "swizzle_bytes": 128}])
        with self.assertRaisesRegex(ValueError, "one box entry per dim"):
            kt_launch.launch_spec_from_launch(bad)
        odd = kt_launch.Param("A", "tensor_map", dtype="bf16", dims=[40, 96], box=[64, 64], swizzle_bytes=16)
        with self.assertRaisesRegex(ValueError, "swizzle 16"):
            kt_launch.tensor_map_args(odd)

    def test_fp8_buffers_are_one_byte_and_their_tensor_maps_uint8(self) -> None:
        # As /v1/best sends it for gemm_fp8 (wgmma_fp8_tma_ws) at M=67, N=45, K=208, e4m3, BM=128,
        # BN=64: A and B are fp8 (K-contiguous rows of 208 bytes), C bf16, the scales f32.
        launch = {
            "variant_id": 9, "kernel": "kt_gemm_fp8_wgmma", "arch": "sm_90a", "grid": [1, 1, 1],
            "block": [256, 1, 1], "cluster": [1, 1, 1], "dynamic_smem_bytes": 149504,
            "params": [{"type": "pointer", "buffer": "C"},
                       {"type": "tensor_map", "buffer": "A", "dims": [208, 67], "box": [128, 128], "swizzle_bytes": 128},
                       {"type": "tensor_map", "buffer": "B", "dims": [208, 45], "box": [128, 64], "swizzle_bytes": 128},
                       {"type": "tensor_map", "buffer": "C", "dims": [8, 1], "box": [8, 1], "swizzle_bytes": 128},
                       {"type": "pointer", "buffer": "SA"}, {"type": "pointer", "buffer": "SB"},
                       {"type": "i32", "expression": "M", "value": 67}, {"type": "i32", "expression": "N", "value": 45},
                       {"type": "i32", "expression": "K", "value": 208},
                       {"type": "pointer", "buffer": "workspace"}, {"type": "pointer", "buffer": "semaphores"}],
            "buffers": [{"name": "A", "role": "input", "dtype": "e4m3", "elements": 67 * 208},
                        {"name": "B", "role": "input", "dtype": "e4m3", "elements": 45 * 208},
                        {"name": "C", "role": "output", "dtype": "bf16", "elements": 67 * 45},
                        {"name": "SA", "role": "input", "dtype": "f32", "elements": 1, "range": [0.25, 2.0]},
                        {"name": "SB", "role": "input", "dtype": "f32", "elements": 1, "range": [0.25, 2.0]},
                        {"name": "workspace", "role": "scratch", "dtype": "f32", "elements": 1},
                        {"name": "semaphores", "role": "scratch", "dtype": "u32", "elements": 1}],
            "shape": {"M": 67, "N": 45, "K": 208, "BLOCK_SCALED": 0}, "dtype": "e4m3"}
        spec = kt_launch.launch_spec_from_launch(launch)
        a, b, c = (kt_launch.tensor_map_args(p) for p in spec.params[1:4])
        # CU_TENSOR_MAP_DATA_TYPE_UINT8 (0); one byte per element, so the row pitch is K bytes.
        self.assertEqual((a.dtype, a.dims, a.strides, a.box, a.swizzle), (0, [208, 67], [208], [128, 128], 3))
        self.assertEqual((b.dtype, b.strides), (0, [208]))
        self.assertEqual((c.dtype, c.strides), (9, [16]))  # C stays bf16
        sizes = {buffer.name: buffer.nbytes for buffer in spec.buffer_list()}
        self.assertEqual(sizes, {"A": 67 * 208, "B": 45 * 208, "C": 2 * 67 * 45, "SA": 4, "SB": 4, "workspace": 4,
                                 "semaphores": 4})
        self.assertEqual(kt_launch.DTYPE_BYTES["e5m2"], 1)
        self.assertEqual(kt_launch.TENSOR_MAP_DTYPES["e5m2"], 0)

    def test_without_launch_it_says_so(self) -> None:
        best = kerntune.Best.from_json({"family": "gemm", "dtype": "bf16", "job_id": 1, "variant_id": 2,
                                        "median_us": 1.0, "template": "t"})
        with self.assertRaisesRegex(ValueError, "no launch object"):
            kt_launch.launch_spec_from_best(best)


class Packing(unittest.TestCase):
    def test_each_pointer_points_at_its_value_in_the_parameters_c_type(self) -> None:
        params = [kt_launch.Param("C", "buffer"), kt_launch.Param("M", "i32"),
                  kt_launch.Param("alpha", "f32"), kt_launch.Param("n", "i64")]
        array, keep = kt_launch.pack_kernel_params(params, [0x7F0000001000, 4096, 0.5, -3])
        self.assertEqual(len(array), 4)
        self.assertEqual(len(keep), 4)
        read = lambda i, t: ctypes.cast(array[i], ctypes.POINTER(t)).contents.value  # noqa: E731
        self.assertEqual(read(0, ctypes.c_uint64), 0x7F0000001000)
        self.assertEqual(read(1, ctypes.c_int32), 4096)
        self.assertEqual(read(2, ctypes.c_float), 0.5)
        self.assertEqual(read(3, ctypes.c_int64), -3)
        self.assertEqual(ctypes.sizeof(keep[1]), 4)  # an i32 is passed as 4 bytes, not 8
        with self.assertRaises(ValueError):
            kt_launch.pack_kernel_params(params, [1, 2])
        with self.assertRaises(ValueError):
            kt_launch.pack_kernel_params([kt_launch.Param("x", "f16")], [1])

    def test_a_tensor_map_is_passed_by_value_from_a_128_byte_aligned_address(self) -> None:
        tensor_map = kt_launch.TensorMap()
        self.assertEqual(tensor_map.address % 128, 0)
        params = [kt_launch.Param("A", "tensor_map"), kt_launch.Param("M", "i32")]
        array, keep = kt_launch.pack_kernel_params(params, [tensor_map, 7])
        self.assertEqual(array[0], tensor_map.address)
        self.assertIs(keep[0], tensor_map)
        with self.assertRaisesRegex(ValueError, "encoded TensorMap"):
            kt_launch.pack_kernel_params(params, [0x1000, 7])

    def test_launch_config_matches_the_driver_layout(self) -> None:
        # CUlaunchConfig: 7 uints, then the stream and attrs pointers (8-aligned), then numAttrs.
        self.assertEqual(kt_launch.CUlaunchConfig.hStream.offset, 32)
        self.assertEqual(kt_launch.CUlaunchConfig.attrs.offset, 40)
        self.assertEqual(ctypes.sizeof(kt_launch.CUlaunchConfig), 56)
        # CUlaunchAttribute: a 4-byte id, 4 bytes of padding, a 64-byte value union.
        self.assertEqual(ctypes.sizeof(kt_launch.CUlaunchAttribute), 72)
        self.assertEqual(kt_launch.CUlaunchAttribute.value.offset, 8)
        spec = kt_launch.LaunchSpec("k", (16, 32, 1), (256, 1, 1), (1, 2, 1), 98304)
        config, attrs = kt_launch.launch_config(spec)
        self.assertEqual((config.gridDimX, config.gridDimY, config.blockDimX, config.sharedMemBytes), (16, 32, 256, 98304))
        self.assertEqual(config.numAttrs, 1)
        self.assertEqual(config.attrs[0].id, kt_launch.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
        self.assertEqual(list(config.attrs[0].value.clusterDim), [1, 2, 1])
        plain, _ = kt_launch.launch_config(kt_launch.LaunchSpec("k", (1, 1, 1), (32, 1, 1), (1, 1, 1), 0))
        self.assertEqual(plain.numAttrs, 0)

    def test_shape_argument(self) -> None:
        self.assertEqual(launch_best.parse_shape("m=1,n=2,k=3"), {"M": 1, "N": 2, "K": 3})
        self.assertEqual(launch_best.parse_shape("4096x512x64"), {"M": 4096, "N": 512, "K": 64})


if __name__ == "__main__":
    unittest.main()
