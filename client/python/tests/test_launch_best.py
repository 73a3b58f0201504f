"""examples/launch_best.py without a GPU: formula evaluation, the launch computed from the gemm
manifest, the kernelParams array and the CUlaunchConfig it hands to cuLaunchKernelEx."""

from __future__ import annotations

import ctypes
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

import kerntune  # noqa: E402
import launch_best  # noqa: E402

FAMILIES = os.environ.get("KERNTUNE_FAMILIES", os.path.join(HERE, "..", "..", "..", "kernel_templates"))
CONFIG = {"BM": 128, "BN": 256, "BK": 32, "WARPS_M": 2, "WARPS_N": 4, "STAGES": 4, "K_ORDER": 0,
          "SPLIT_K": 1, "CLUSTER_M": 2, "CLUSTER_N": 1}


def gemm_manifest() -> dict:
    with open(os.path.join(FAMILIES, "gemm", "manifest.json"), encoding="utf-8") as f:
        return json.load(f)


class Formulas(unittest.TestCase):
    def test_muparser_syntax_is_evaluated(self) -> None:
        e = launch_best.evaluate
        self.assertEqual(e("cdiv(cdiv(N,BN),CLUSTER_N)*CLUSTER_N", {"N": 1000, "BN": 128, "CLUSTER_N": 2}), 8)
        self.assertEqual(e("SPLIT_K > 1 ? M*N*SPLIT_K : 1", {"M": 4, "N": 5, "SPLIT_K": 2}), 40)
        self.assertEqual(e("SPLIT_K > 1 ? M*N*SPLIT_K : 1", {"M": 4, "N": 5, "SPLIT_K": 1}), 1)
        self.assertEqual(e("max(2*3, 4) + (A == 1 ? 10 : 0) - -1", {"A": 1}), 17)
        self.assertEqual(e("7 % 4 + !0 && 1", {}), 1)
        self.assertEqual(e("1 + 2 * 3", {}), 7)
        with self.assertRaises(KeyError):
            e("smem_per_block_optin / 2", {})
        with self.assertRaises(ValueError):
            e("1 +", {})


class LaunchFromManifest(unittest.TestCase):
    def test_cluster_template_launch_for_a_shape(self) -> None:
        shape = {"M": 4096, "N": 4096, "K": 4096}
        spec = launch_best.launch_spec_from_manifest(gemm_manifest(), "mma_multistage_cluster", shape, CONFIG, "bf16")
        self.assertEqual(spec.entry, "kt_gemm_mma")
        self.assertEqual(spec.grid, (16, 32, 1))  # cdiv(4096,256) x cdiv(4096,128), rounded to clusters
        self.assertEqual(spec.block, (256, 1, 1))  # WARPS_M*WARPS_N*32
        self.assertEqual(spec.cluster, (1, 2, 1))
        self.assertEqual(spec.dynamic_smem_bytes, 4 * (128 + 256) * 32 * 2)
        self.assertEqual([p.name for p in spec.params], ["C", "A", "B", "M", "N", "K", "workspace", "semaphores"])
        self.assertEqual([p.kind for p in spec.params][:4], ["buffer", "buffer", "buffer", "i32"])
        self.assertEqual(spec.params[0].dtype, "bf16")  # "in": the job's dtype
        self.assertEqual(spec.params[6].dtype, "f32")
        self.assertEqual(spec.source, "manifest")

    def test_unknown_template_is_refused(self) -> None:
        with self.assertRaises(ValueError):
            launch_best.launch_spec_from_manifest(gemm_manifest(), "nope", {"M": 1, "N": 1, "K": 1}, {}, "bf16")


class LaunchFromDaemon(unittest.TestCase):
    def test_the_daemons_launch_object_wins_over_the_manifest(self) -> None:
        best = kerntune.Best.from_json({
            "family": "gemm", "dtype": "bf16", "shape": {"M": 64, "N": 64, "K": 64}, "arch": "sm_90a",
            "job_id": 1, "variant_id": 2, "template": "mma_multistage", "config": {}, "median_us": 3.0,
            "launch": {"entry": "kt_gemm_mma", "grid": [4, 2, 1], "block": [128, 1, 1], "cluster": [2, 1, 1],
                       "dynamic_smem_bytes": 65536,
                       "params": [{"name": "C", "kind": "buffer"}, {"name": "M", "type": "i32"}]}})
        spec = launch_best.launch_spec_from_best(best, None)
        self.assertEqual((spec.grid, spec.block, spec.cluster), ((4, 2, 1), (128, 1, 1), (2, 1, 1)))
        self.assertEqual(spec.dynamic_smem_bytes, 65536)
        self.assertEqual([(p.name, p.kind) for p in spec.params], [("C", "buffer"), ("M", "i32")])
        self.assertEqual(spec.source, "daemon")

    def test_without_launch_or_manifest_it_says_so(self) -> None:
        best = kerntune.Best.from_json({"family": "gemm", "dtype": "bf16", "job_id": 1, "variant_id": 2,
                                        "median_us": 1.0, "template": "t"})
        with self.assertRaisesRegex(ValueError, "no launch object"):
            launch_best.launch_spec_from_best(best, None)


class Packing(unittest.TestCase):
    def test_each_pointer_points_at_its_value_in_the_parameters_c_type(self) -> None:
        params = [launch_best.Param("C", "buffer"), launch_best.Param("M", "i32"),
                  launch_best.Param("alpha", "f32"), launch_best.Param("n", "i64")]
        array, keep = launch_best.pack_kernel_params(params, [0x7F0000001000, 4096, 0.5, -3])
        self.assertEqual(len(array), 4)
        self.assertEqual(len(keep), 4)
        read = lambda i, t: ctypes.cast(array[i], ctypes.POINTER(t)).contents.value  # noqa: E731
        self.assertEqual(read(0, ctypes.c_uint64), 0x7F0000001000)
        self.assertEqual(read(1, ctypes.c_int32), 4096)
        self.assertEqual(read(2, ctypes.c_float), 0.5)
        self.assertEqual(read(3, ctypes.c_int64), -3)
        self.assertEqual(ctypes.sizeof(keep[1]), 4)  # an i32 is passed as 4 bytes, not 8
        with self.assertRaises(ValueError):
            launch_best.pack_kernel_params(params, [1, 2])
        with self.assertRaises(ValueError):
            launch_best.pack_kernel_params([launch_best.Param("x", "f16")], [1])

    def test_launch_config_matches_the_driver_layout(self) -> None:
        # CUlaunchConfig: 7 uints, then the stream and attrs pointers (8-aligned), then numAttrs.
        self.assertEqual(launch_best.CUlaunchConfig.hStream.offset, 32)
        self.assertEqual(launch_best.CUlaunchConfig.attrs.offset, 40)
        self.assertEqual(ctypes.sizeof(launch_best.CUlaunchConfig), 56)
        # CUlaunchAttribute: a 4-byte id, 4 bytes of padding, a 64-byte value union.
        self.assertEqual(ctypes.sizeof(launch_best.CUlaunchAttribute), 72)
        self.assertEqual(launch_best.CUlaunchAttribute.value.offset, 8)
        spec = launch_best.LaunchSpec("k", (16, 32, 1), (256, 1, 1), (1, 2, 1), 98304)
        config, attrs = launch_best.launch_config(spec)
        self.assertEqual((config.gridDimX, config.gridDimY, config.blockDimX, config.sharedMemBytes), (16, 32, 256, 98304))
        self.assertEqual(config.numAttrs, 1)
        self.assertEqual(config.attrs[0].id, launch_best.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
        self.assertEqual(list(config.attrs[0].value.clusterDim), [1, 2, 1])
        plain, _ = launch_best.launch_config(launch_best.LaunchSpec("k", (1, 1, 1), (32, 1, 1), (1, 1, 1), 0))
        self.assertEqual(plain.numAttrs, 0)

    def test_shape_argument(self) -> None:
        self.assertEqual(launch_best.parse_shape("m=1,n=2,k=3"), {"M": 1, "N": 2, "K": 3})
        self.assertEqual(launch_best.parse_shape("4096x512x64"), {"M": 4096, "N": 512, "K": 64})


if __name__ == "__main__":
    unittest.main()
