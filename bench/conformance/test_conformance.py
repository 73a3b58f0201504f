"""CPU tests of the conformance sweep (run by ctest as Conformance.Generator): the case generator
covers what the sweep promises of every family, keeps to the manifests and is reproducible per seed;
the error bound accepts a split-K GEMM with 16-bit partial sums and rejects planted faults on
host-computed data; the report and the --dry-run listing work. No GPU, no torch, no daemon."""

from __future__ import annotations

import functools
import json
import math
import os
import random
import struct
import subprocess
import sys
import unittest
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)

import cases  # noqa: E402
import manifest_expr  # noqa: E402
import report  # noqa: E402
import tolerance  # noqa: E402

SEEDS = (1, 20260101, 987654321)

# What every family's shapes must include (tags are read off the shapes' values: cases.shape_tags).
REQUIRED_TAGS = {
    "gemm": {"tiny", "m_one", "prime", "odd", "unaligned", "large_k", "aligned"},
    # K a multiple of 16 (M and N can be prime or odd); both scaling modes.
    "gemm_fp8": {"tiny", "m_one", "prime", "odd", "unaligned", "large_k", "aligned", "block_scaled", "tensor_scaled"},
    "dual_gemm_silu": {"tiny", "m_one", "prime", "odd", "unaligned", "large_k", "aligned", "g_one", "g_many"},
    "attention_fwd": {"tiny", "s_one", "prime", "odd", "ragged_s", "long_s", "many_heads", "causal", "noncausal",
                      "D=64", "D=128"},
    # Every extent a multiple of 16: no primes or odd sizes exist; unaligned means not a multiple of 64.
    "wmma_gemm": {"tiny", "m_min", "unaligned", "large_k", "aligned"},
}


@functools.lru_cache(maxsize=None)
def family_cases(seed: int, count: int = 32):
    families = cases.load_families(REPO)
    return families, {f.name: cases.generate_family_cases(f, seed, count, cases.Caps()) for f in families}


class Generator(unittest.TestCase):
    def test_every_family_gets_30_distinct_shapes_with_the_required_categories(self) -> None:
        for seed in SEEDS:
            families, by_family = family_cases(seed)
            self.assertEqual(sorted(by_family), sorted(REQUIRED_TAGS))
            for family in families:
                generated = by_family[family.name]
                with self.subTest(seed=seed, family=family.name):
                    shapes = {tuple(c.shape.values()) for c in generated}
                    self.assertGreaterEqual(len(shapes), 30)
                    tags = Counter(t for c in generated for t in c.tags)
                    self.assertEqual(REQUIRED_TAGS[family.name] - set(tags), set(), f"tags seen: {dict(tags)}")

    def test_every_dtype_search_and_client_path_is_used(self) -> None:
        for seed in SEEDS:
            families, by_family = family_cases(seed)
            for family in families:
                generated = by_family[family.name]
                with self.subTest(seed=seed, family=family.name):
                    self.assertEqual({c.dtype for c in generated}, set(family.dtypes))
                    self.assertEqual({c.search for c in generated}, set(family.searches))
                    self.assertEqual({c.client for c in generated}, {"cli", "http"})
                    self.assertEqual({c.shape_syntax for c in generated if c.client == "cli"}, {"named", "positional"})
                    for c in generated:
                        if c.search == "exhaustive":  # a whole space, and only a small one
                            self.assertIn(family.name, cases.SMALL_SPACE_FAMILIES)
                            self.assertEqual(c.budget, 0)
                        else:
                            self.assertTrue(8 <= c.budget <= 32, c)
            searches = {c.search for generated in by_family.values() for c in generated}
            self.assertEqual(searches, {"exhaustive", "local", "model", "random", "predicted", "default"})

    def test_shapes_keep_to_the_manifests_ranges_constraints_and_the_caps(self) -> None:
        caps = cases.Caps()
        for seed in SEEDS:
            families, by_family = family_cases(seed)
            for family in families:
                for c in by_family[family.name]:
                    with self.subTest(seed=seed, case=c.id, shape=c.shape):
                        self.assertEqual(list(c.shape), family.dim_names)  # the manifest's order
                        self.assertEqual(cases.failed_constraints(family, c.shape), [])
                        for d in family.dims:
                            self.assertTrue(d.lo <= c.shape[d.name] <= d.hi)
                            self.assertEqual(c.shape[d.name] % d.multiple, 0)
                            if d.choices:
                                self.assertIn(c.shape[d.name], d.choices)
                        self.assertLessEqual(c.elements, caps.max_elements)
                        self.assertLessEqual(c.flops, caps.max_flops)

    def test_the_manifests_constraints_are_read(self) -> None:
        families = {f.name: f for f in cases.load_families(REPO)}
        self.assertEqual(families["dual_gemm_silu"].dim("K").multiple, 8)
        self.assertEqual(families["wmma_gemm"].dim("N").multiple, 16)
        self.assertEqual(families["attention_fwd"].dim("D").choices, [64, 128])
        self.assertEqual(families["attention_fwd"].dim("CAUSAL").choices, [0, 1])
        self.assertEqual(families["attention_fwd"].dim_names, ["B", "H", "S", "D", "CAUSAL"])
        self.assertEqual(families["dual_gemm_silu"].dim_names, ["G", "M", "N", "K"])
        self.assertEqual(families["gemm_fp8"].dim_names, ["M", "N", "K", "BLOCK_SCALED"])
        self.assertEqual(families["gemm_fp8"].dim("K").multiple, 16)
        self.assertEqual(families["gemm_fp8"].dim("BLOCK_SCALED").choices, [0, 1])
        self.assertEqual(families["gemm_fp8"].dtypes, ["e4m3", "e5m2"])
        self.assertEqual(cases.failed_constraints(families["gemm_fp8"], {"M": 3, "N": 5, "K": 40, "BLOCK_SCALED": 1}),
                         ["K % 16 == 0"])
        self.assertTrue(families["wmma_gemm"].registered)
        self.assertEqual(cases.failed_constraints(families["gemm"], {"M": 70000, "N": 70000, "K": 1}),
                         ["M*N < 2^31"])
        self.assertEqual(cases.failed_constraints(families["dual_gemm_silu"], {"G": 1, "M": 4, "N": 4, "K": 12}),
                         ["K % 8 == 0"])

    def test_a_seed_reproduces_its_cases_and_another_seed_draws_others(self) -> None:
        families = cases.load_families(REPO)
        first = [c.to_json() for c in cases.generate(families, 42, 32, cases.Caps(), 1, 2)]
        again = [c.to_json() for c in cases.generate(families, 42, 32, cases.Caps(), 1, 2)]
        other = [c.to_json() for c in cases.generate(families, 43, 32, cases.Caps(), 1, 2)]
        self.assertEqual(first, again)
        self.assertNotEqual([c["shape"] for c in first], [c["shape"] for c in other])

    def test_parts_split_the_run_and_each_covers_every_family_and_kind(self) -> None:
        families = cases.load_families(REPO)
        whole = cases.generate(families, 7, 32, cases.Caps())
        parts = [cases.generate(families, 7, 32, cases.Caps(), p, 2) for p in (1, 2)]
        self.assertEqual(sorted(c.id for c in whole), sorted(c.id for part in parts for c in part))
        self.assertEqual(len({c.id for c in parts[0]} & {c.id for c in parts[1]}), 0)
        kinds_per_family = Counter((c.family, c.kind) for c in whole)
        for part in parts:
            self.assertEqual({c.family for c in part}, {f.name for f in families})
            in_part = {(c.family, c.kind) for c in part}
            for key, count in kinds_per_family.items():
                if count >= 2:
                    self.assertIn(key, in_part)
            # Run order: the first len(families) cases are one of each family.
            self.assertEqual({c.family for c in part[:len(families)]}, {f.name for f in families})

    def test_max_shape_elements_caps_the_shapes(self) -> None:
        caps = cases.Caps(max_elements=1 << 20, max_flops=1e9)
        for family in cases.load_families(REPO):
            for c in cases.generate_family_cases(family, 3, 32, caps):
                self.assertLessEqual(c.elements, 1 << 20)
                self.assertLessEqual(c.flops, 1e9)


class Expressions(unittest.TestCase):
    def test_manifest_arithmetic(self) -> None:
        e = manifest_expr.evaluate
        self.assertEqual(e("M*K < 2^31", {"M": 2 ** 16, "K": 2 ** 15}), 0.0)
        self.assertEqual(e("M*K < 2^31", {"M": 2 ** 16, "K": 2 ** 14}), 1.0)
        self.assertEqual(e("4*B*H*S*S*D*(CAUSAL ? 0.5 : 1)", {"B": 1, "H": 2, "S": 3, "D": 4, "CAUSAL": 1}), 144.0)
        self.assertEqual(e("SPLIT_K > 1 ? M*N*SPLIT_K : 1", {"SPLIT_K": 1, "M": 5, "N": 5}), 1.0)
        self.assertEqual(e("cdiv(N,BN)*cdiv(M,BM)", {"N": 65, "BN": 64, "M": 1, "BM": 16}), 2.0)
        self.assertEqual(e("D == 64 || D == 128", {"D": 96}), 0.0)
        self.assertEqual(e("K % 8 == 0 && -K < 0", {"K": 16}), 1.0)
        self.assertEqual(e("2^3^2", {}), 512.0)  # right-associative, as muparser
        with self.assertRaises(manifest_expr.ExpressionError):
            e("M +", {"M": 1})
        with self.assertRaises(manifest_expr.ExpressionError):
            e("Q", {})


def to_bf16(x: float) -> float:
    """x rounded to the nearest bfloat16 (ties to even), through its float32 bits."""
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("<f", struct.pack("<I", bits))[0]


BF16_GEMM_TOL = {"atol": 0.03125, "rtol": 0.0078125, "rel_l2": 0.0078125}  # without a magnitude: C_OUT, C_ACC


def gemm_tolerances():
    """The sweep's own bound, and the gemm manifest's bf16 tolerance as it is now (with the
    daemon's magnitude constant, when it names one)."""
    manifest = {f.name: f for f in cases.load_families(REPO)}["gemm"].tolerance["bf16"]
    return [("sweep", BF16_GEMM_TOL), ("manifest", manifest)]


def dot_problems(K: int, count: int, seed: int):
    """`count` rows and columns of bf16 values in [-1, 1) and their products, as a GEMM tile sees
    them: (products, exact sum, sum of |products|)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        # Multiples of 2^-8 in [-1, 1) have at most 8 significant bits: exact in bf16.
        a = [(rng.getrandbits(9) - 256) / 256 for _ in range(K)]
        b = [(rng.getrandbits(9) - 256) / 256 for _ in range(K)]
        products = [x * y for x, y in zip(a, b)]
        out.append((products, math.fsum(products), math.fsum(abs(p) for p in products)))
    return out


class ErrorBound(unittest.TestCase):
    def test_split_k_with_16_bit_partial_sums_is_accepted_at_k_16384(self) -> None:
        for name, tol in gemm_tolerances():
            with self.subTest(tolerance=name):
                self.split_k_accepted(tol)

    def split_k_accepted(self, tol) -> None:
        K, slices = 16384, 8
        worst = 0.0
        for products, ref, mag in dot_problems(K, 48, seed=1):
            # Each slice summed in fp32, stored as bf16; the slices added in bf16; a bf16 output.
            step = K // slices
            partials = [to_bf16(math.fsum(products[i:i + step])) for i in range(0, K, step)]
            total = 0.0
            for p in partials:
                total = to_bf16(total + p)
            self.assertTrue(tolerance.element_ok(total, ref, mag, K, "bf16", tol), (total, ref, mag))
            worst = max(worst, abs(total - ref) / tolerance.element_bound(abs(ref), mag, K, "bf16", tol))
        self.assertLess(worst, 0.7)  # with room, not by a hair

    def test_planted_faults_are_rejected_at_every_k(self) -> None:
        for name, tol in gemm_tolerances():
            for K in (64, 1024, 16384, 65536):
                with self.subTest(tolerance=name, K=K):
                    self.faults_rejected(K, tol)

    def faults_rejected(self, K, tol) -> None:
        problems = dot_problems(K, 32, seed=K)
        exact = [to_bf16(ref) for _, ref, _ in problems]
        ok = lambda out, i: tolerance.element_ok(out, problems[i][1], problems[i][2], K, "bf16",  # noqa: E731
                                                 tol)
        self.assertTrue(all(ok(exact[i], i) for i in range(32)))  # the right answer passes
        self.assertFalse(ok(float("nan"), 0))
        self.assertFalse(ok(float("inf"), 0))
        # One wrong element: its neighbour's value (a transposed or shifted store).
        wrong = next(i for i in range(31) if abs(exact[i + 1] - exact[i]) > 0.2 * abs(exact[i]) + 1)
        self.assertFalse(ok(exact[wrong + 1], wrong))
        # A wrong tile: a k-tile of 64 products left out of every element of the tile.
        if K > 64:
            dropped = [to_bf16(ref - math.fsum(products[:64])) for products, ref, _ in problems]
            self.assertFalse(all(ok(dropped[i], i) for i in range(32)))
        # Unwritten memory read back as zero: caught wherever the answer is not tiny.
        self.assertFalse(all(ok(0.0, i) for i in range(32)))

    def test_an_fp16_overflow_of_a_result_beyond_its_range_is_correct(self) -> None:
        tol = {"atol": 0.01, "rtol": 0.01, "rel_l2": 0.001}
        K = 259712
        inf = float("inf")
        self.assertTrue(tolerance.element_ok(inf, 70000.0, 1e6, K, "fp16", tol))
        self.assertTrue(tolerance.element_ok(-inf, -66000.0, 1e6, K, "fp16", tol))
        self.assertFalse(tolerance.element_ok(-inf, 70000.0, 1e6, K, "fp16", tol))  # wrong sign
        self.assertFalse(tolerance.element_ok(inf, 30000.0, 1e3, K, "fp16", tol))  # in range
        self.assertFalse(tolerance.element_ok(float("nan"), 70000.0, 1e6, K, "fp16", tol))
        self.assertFalse(tolerance.element_ok(inf, 70000.0, 1e6, K, "bf16", tol))  # bf16 holds it

    def test_compare_takes_the_overflow_and_names_a_real_non_finite(self) -> None:
        import verify
        torch = torch_or_none()
        if torch is None:
            self.skipTest("PyTorch is not installed (the GPU machine has it)")
        tol = {"atol": 0.01, "rtol": 0.01, "rel_l2": 0.001}
        ref = torch.tensor([1.0, -70000.0, 3.0, 4.0])
        mag = ref.abs()
        out = ref.to(torch.float16)
        self.assertEqual(out[1].item(), -float("inf"))
        stats = verify.compare(out, ref, mag, 1, "fp16", tol)
        self.assertTrue(stats["ok"], stats)
        self.assertEqual((stats["overflowed"], stats["non_finite"]), (1, 0))
        out[2] = float("inf")
        stats = verify.compare(out, ref, mag, 1, "fp16", tol)
        self.assertFalse(stats["ok"])
        self.assertEqual(stats["first_non_finite"]["index"], 2)
        self.assertEqual(stats["first_non_finite"]["ref"], 3.0)

    def test_the_bound_grows_like_sqrt_k_with_the_magnitude(self) -> None:
        small = tolerance.element_bound(0.0, 1024 / 4, 1024, "bf16", BF16_GEMM_TOL)
        large = tolerance.element_bound(0.0, 16384 / 4, 16384, "bf16", BF16_GEMM_TOL)
        growth = (large - BF16_GEMM_TOL["atol"]) / (small - BF16_GEMM_TOL["atol"])
        self.assertAlmostEqual(growth, 4.0, delta=0.05)  # sqrt(16384 / 1024)
        # An fp32 output (wmma_gemm) at K = 65536: the fp32 accumulation term carries it past atol.
        wmma = {"atol": 0.001, "rtol": 0.0001, "rel_l2": 0.0001}
        self.assertGreater(tolerance.element_bound(0.0, 65536 / 4, 65536, "f32", wmma), 0.003)

    def test_the_dual_gemm_magnitude_covers_a_negative_gate(self) -> None:
        # silu(g) ~ 0 for g << 0, but an error in g still moves silu(g)*u through silu'(g)*u.
        gate, up = -6.0, 40.0
        silu = gate / (1 + math.exp(-gate))
        mag = tolerance.dual_gemm_magnitude(gate, up, 100.0, 100.0, silu)
        self.assertGreater(mag, 1.1 * up * 100.0 - 1e-9)


def torch_or_none():
    try:
        import verify
        return verify.import_torch()
    except ImportError:
        return None


def launch_for(family: "cases.FamilySpec", shape: dict, dtype: str) -> dict:
    """The buffers part of a launch object as the daemon sends it (inputs and outputs only)."""
    buffers = []
    for b in family.buffers:
        if b["role"] in ("input", "output"):
            buffers.append({"name": b["name"], "role": b["role"], "dtype": dtype if b["dtype"] == "in" else b["dtype"],
                            "elements": int(manifest_expr.evaluate(str(b["elements"]), dict(shape)))})
            if b.get("range"):  # sent only when not the default [-1, 1) (engine/variant_launch.cpp)
                buffers[-1]["range"] = list(b["range"])
    return {"buffers": buffers, "shape": shape}


@unittest.skipUnless(torch_or_none() is not None, "PyTorch is not installed (the GPU machine has it)")
class CheckerOnTheCpu(unittest.TestCase):
    """verify.py's buffers, references and comparison on CPU tensors: a 'kernel' that writes the
    reference rounded to the output type passes; planted faults fail."""

    SHAPES = {"gemm": {"M": 37, "N": 45, "K": 300}, "wmma_gemm": {"M": 32, "N": 48, "K": 64},
              "gemm_fp8": {"M": 67, "N": 150, "K": 208, "BLOCK_SCALED": 1},
              "dual_gemm_silu": {"G": 3, "M": 5, "N": 33, "K": 72},
              "attention_fwd": {"B": 2, "H": 3, "S": 37, "D": 64, "CAUSAL": 1}}

    def run_check(self, name: str, plant=None):
        import verify
        torch = verify.import_torch()
        families = {f.name: f for f in cases.load_families(REPO)}
        family, shape = families[name], self.SHAPES[name]
        dtype = family.dtypes[0]
        launch = launch_for(family, shape, dtype)
        buffers = verify.Buffers(launch, seed=5, device="cpu")
        ref, mag, k, out_name = verify.reference(name, shape, buffers)
        out = buffers.views[out_name]
        self.assertTrue(torch.isnan(out.float()).all())  # poisoned until written
        out.copy_(ref.reshape(-1).to(out.dtype))
        if plant:
            plant(buffers, out_name, ref)
        stats = verify.compare(out, ref, mag, k, next(b["dtype"] for b in launch["buffers"] if b["name"] == out_name),
                               family.tolerance[dtype])
        return stats, buffers

    def test_the_reference_rounded_to_the_output_type_passes(self) -> None:
        for name in self.SHAPES:
            with self.subTest(family=name):
                stats, buffers = self.run_check(name)
                self.assertTrue(stats["ok"], stats)
                self.assertIsNone(buffers.guards_intact())

    def test_planted_faults_fail(self) -> None:
        def nan(buffers, out_name, ref):
            buffers.views[out_name][3] = float("nan")

        def shifted(buffers, out_name, ref):
            view = buffers.views[out_name]
            view[:-1] = view[1:].clone()

        def past_the_end(buffers, out_name, ref):
            whole = buffers.whole[out_name]
            whole[whole.numel() - 5] = 0

        for name in self.SHAPES:
            with self.subTest(family=name, fault="nan"):
                self.assertFalse(self.run_check(name, nan)[0]["ok"])
            with self.subTest(family=name, fault="shifted"):
                self.assertFalse(self.run_check(name, shifted)[0]["ok"])
            with self.subTest(family=name, fault="write past the end"):
                stats, buffers = self.run_check(name, past_the_end)
                self.assertIn("guard bytes after", buffers.guards_intact() or "")

    def test_causal_attention_row_0_is_its_first_value_row(self) -> None:
        import verify
        torch = verify.import_torch()
        shape = {"B": 1, "H": 1, "S": 9, "D": 64, "CAUSAL": 1}
        family = {f.name: f for f in cases.load_families(REPO)}["attention_fwd"]
        buffers = verify.Buffers(launch_for(family, shape, "bf16"), seed=1, device="cpu")
        out, mag, k, _ = verify.reference("attention_fwd", shape, buffers)
        first_v = buffers.views["V"].float()[:64]
        self.assertTrue(torch.allclose(out[:64], first_v, atol=1e-6))
        self.assertTrue(torch.allclose(mag[:64], first_v.abs(), atol=1e-6))
        self.assertEqual(k, 1)  # the manifest's reduction for attention: each weight is rounded once


@unittest.skipUnless(torch_or_none() is not None, "PyTorch is not installed (the GPU machine has it)")
class Fp8Checker(unittest.TestCase):
    """gemm_fp8 in verify.py: the fp8 decode, the fill as the daemon's worker makes it, the scales'
    layouts and the reference, on CPU tensors."""

    def setUp(self) -> None:
        import verify
        self.verify = verify
        self.torch = verify.import_torch()
        self.family = {f.name: f for f in cases.load_families(REPO)}["gemm_fp8"]

    def test_the_decode_table_has_the_formats_values(self) -> None:
        v = self.verify.fp8_value
        self.assertEqual([v(b, "e4m3") for b in (0x38, 0x7E, 0x08, 0x01, 0x80, 0xB8)],
                         [1.0, 448.0, 2.0 ** -6, 2.0 ** -9, -0.0, -1.0])
        self.assertTrue(math.isnan(v(0x7F, "e4m3")) and math.isnan(v(0xFF, "e4m3")))
        self.assertEqual(v(0x78, "e4m3"), 256.0)  # e4m3 has no infinities: exponent 15 is a number
        self.assertEqual([v(b, "e5m2") for b in (0x3C, 0x7B, 0x04, 0x01, 0xBC)],
                         [1.0, 57344.0, 2.0 ** -14, 2.0 ** -16, -1.0])
        self.assertEqual(v(0x7C, "e5m2"), float("inf"))
        self.assertTrue(math.isnan(v(0x7D, "e5m2")))
        torch = self.torch
        raw = torch.arange(256, dtype=torch.int32).to(torch.uint8)
        for dtype, name in (("e4m3", "float8_e4m3fn"), ("e5m2", "float8_e5m2")):
            with self.subTest(dtype=dtype):
                table = self.verify.fp8_decode(raw, dtype)
                if hasattr(torch, name):  # torch's own decode agrees, where this torch has it
                    theirs = raw.view(getattr(torch, name)).float()
                    same = (table == theirs) | (torch.isnan(table) & torch.isnan(theirs))
                    self.assertTrue(bool(same.all()))

    def test_the_fill_truncates_as_the_daemons_worker_does(self) -> None:
        torch, verify = self.torch, self.verify
        values = torch.tensor([0.3, -0.3, 1000.0, 1e-9, -1e-9, 0.0, 0.999], dtype=torch.float32)
        e4m3 = verify.fp8_encode(values, "e4m3")
        self.assertEqual(e4m3.tolist(), [0x29, 0xA9, 0x7E, 0x00, 0x80, 0x00, 0x37])  # 0.28125, 448, 0.9375
        e5m2 = verify.fp8_encode(torch.tensor([0.3, 1e6, 1.75], dtype=torch.float32), "e5m2")
        self.assertEqual(e5m2.tolist(), [0x34, 0x7B, 0x3F])  # 0.25, 57344, 1.75
        for dtype in ("e4m3", "e5m2"):  # every normal value encodes back to its own byte
            raw = torch.arange(256, dtype=torch.int32).to(torch.uint8)
            decoded = verify.fp8_decode(raw, dtype)
            normal = torch.isfinite(decoded) & (decoded.abs() >= (2.0 ** -6 if dtype == "e4m3" else 2.0 ** -14))
            self.assertTrue(bool((verify.fp8_encode(decoded[normal], dtype) == raw[normal]).all()), dtype)
        for dtype in ("e4m3", "e5m2"):
            shape = {"M": 40, "N": 30, "K": 256, "BLOCK_SCALED": 1}
            buffers = verify.Buffers(launch_for(self.family, shape, dtype), seed=3, device="cpu")
            self.assertEqual((buffers.views["A"].dtype, buffers.views["B"].dtype), (torch.uint8, torch.uint8))
            a, b = buffers.values("A"), buffers.values("B")
            for x in (a, b):
                self.assertTrue(bool(torch.isfinite(x).all()))
                self.assertTrue(bool(((x >= -1) & (x < 1)).all()))
                self.assertGreater(int((x != 0).sum()), x.numel() * 0.9)
            self.assertEqual(buffers.views["SA"].numel(), 2 * 40)
            self.assertEqual(buffers.views["SB"].numel(), 1 * 2)
            for name in ("SA", "SB"):  # the manifest's range for the scales
                scales = buffers.views[name]
                self.assertTrue(bool(((scales >= 0.25) & (scales < 2.0)).all()), scales)

    def test_the_reference_follows_the_manifests_scale_layouts(self) -> None:
        verify = self.verify
        for block_scaled in (0, 1):
            shape = {"M": 3, "N": 131, "K": 272, "BLOCK_SCALED": block_scaled}
            buffers = verify.Buffers(launch_for(self.family, shape, "e5m2"), seed=11, device="cpu")
            ref, mag, k, _ = verify.reference("gemm_fp8", shape, buffers)
            self.assertEqual(k, 272)
            A, B = buffers.values("A").tolist(), buffers.values("B").tolist()
            SA, SB = buffers.views["SA"].tolist(), buffers.views["SB"].tolist()
            M, N, K, KB = 3, 131, 272, 3
            for m, n in ((0, 0), (2, 130), (1, 127), (1, 128)):
                with self.subTest(block_scaled=block_scaled, m=m, n=n):
                    terms = []
                    for kk in range(K):
                        sa = SA[(kk // 128) * M + m] if block_scaled else SA[0]
                        sb = SB[(n // 128) * KB + kk // 128] if block_scaled else SB[0]
                        terms.append(A[m * K + kk] * sa * B[n * K + kk] * sb)
                    self.assertAlmostEqual(ref.view(M, N)[m, n].item(), math.fsum(terms),
                                           delta=1e-5 * math.fsum(abs(t) for t in terms) + 1e-6)
                    self.assertAlmostEqual(mag.view(M, N)[m, n].item(), math.fsum(abs(t) for t in terms),
                                           delta=1e-5 * math.fsum(abs(t) for t in terms) + 1e-6)

    def test_both_dtypes_and_modes_pass_and_a_wrong_scale_layout_fails(self) -> None:
        torch, verify = self.torch, self.verify
        for dtype in ("e4m3", "e5m2"):
            for block_scaled in (0, 1):
                shape = {"M": 67, "N": 150, "K": 208, "BLOCK_SCALED": block_scaled}
                tol = self.family.tolerance[dtype]
                with self.subTest(dtype=dtype, block_scaled=block_scaled):
                    buffers = verify.Buffers(launch_for(self.family, shape, dtype), seed=2, device="cpu")
                    # (Per-tensor scales whose product is within ~1% of 1 would let a kernel that
                    # ignores them through; this seed's is about 3.2.)
                    self.assertGreater(abs(buffers.views["SA"][0].item() * buffers.views["SB"][0].item() - 1), 0.1)
                    ref, mag, k, out_name = verify.reference("gemm_fp8", shape, buffers)
                    out = buffers.views[out_name]
                    self.assertEqual(out.dtype, torch.bfloat16)
                    out.copy_(ref.reshape(-1).to(out.dtype))
                    self.assertTrue(verify.compare(out, ref, mag, k, "bf16", tol)["ok"])
                    # Scales left out (a kernel that never applies them): wrong.
                    A = buffers.values("A").view(67, 208)
                    B = buffers.values("B").view(150, 208)
                    unscaled = (A.double() @ B.double().t()).float().reshape(-1)
                    self.assertFalse(verify.compare(unscaled.to(torch.bfloat16), ref, mag, k, "bf16", tol)["ok"])
                    if not block_scaled:
                        continue
                    # SA read as [M][KB] and SB as [KB][NB] (the layouts transposed): wrong.
                    good_sa, good_sb = buffers.views["SA"].clone(), buffers.views["SB"].clone()
                    buffers.views["SA"] = good_sa.view(67, 2).t().contiguous().view(-1)
                    wrong_a, _, _ = verify.gemm_fp8_reference(shape, buffers)
                    buffers.views["SA"], buffers.views["SB"] = good_sa, good_sb.view(2, 2).t().contiguous().view(-1)
                    wrong_b, _, _ = verify.gemm_fp8_reference(shape, buffers)
                    for wrong in (wrong_a, wrong_b):
                        self.assertFalse(verify.compare(wrong.reshape(-1).to(torch.bfloat16), ref, mag, k, "bf16",
                                                        tol)["ok"])


class CheckerLaunchPath(unittest.TestCase):
    def test_every_launcher_name_the_checker_uses_exists(self) -> None:
        """verify.py launches through the Python client's launcher (kerntune.launch); a name it
        uses that the launcher no longer has would fail every case on the GPU, and only there."""
        import ast
        import verify
        with open(os.path.join(HERE, "verify.py")) as f:
            tree = ast.parse(f.read())
        used = {node.attr for node in ast.walk(tree)
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "kt_launch"}
        self.assertIn("encode_tensor_map", used)
        self.assertEqual(sorted(name for name in used if not hasattr(verify.kt_launch, name)), [])


class Reporting(unittest.TestCase):
    def test_summary_counts_each_kind_of_failure(self) -> None:
        def record(index: int, checks: dict, status: str = "done", source: str = "ours") -> dict:
            return {"id": f"gemm#{index:02d}", "family": "gemm", "kind": "tiny", "shape": {"M": 1, "N": 2, "K": 3},
                    "dtype": "bf16", "search": "local", "budget": 8, "client": "http", "shape_syntax": "json",
                    "status": status, "job_id": index, "answer": {"source": source},
                    "checks": {k: {"result": v, "why": "because"} for k, v in checks.items()}}
        records = [record(1, {"job_done": "pass", "kernel_correct": "pass", "not_slower": "pass"}),
                   record(2, {"job_done": "fail"}, status="failed"),
                   record(3, {"job_done": "pass", "kernel_correct": "fail"}),
                   record(4, {"job_done": "pass", "not_slower": "fail", "no_crash_hang": "fail"}),
                   record(5, {}, status="not_run")]
        summary = report.summarize(records)
        self.assertEqual((summary["cases_planned"], summary["cases_run"], summary["cases_passed"]), (5, 4, 1))
        self.assertEqual((summary["failed_jobs"], summary["wrong_answers"], summary["slower_than_baseline"],
                          summary["crash_or_hang_cases"]), (1, 1, 1, 1))
        text = report.render({"part": "1/2", "seed": 9, "environment": {"device": "X"}}, records)
        self.assertIn("| gemm#03 |", text)
        self.assertIn("kernel_correct: because", text)

    def test_dry_run_lists_the_seeds_cases_without_a_daemon(self) -> None:
        out = subprocess.run([sys.executable, os.path.join(HERE, "sweep.py"), "--dry-run", "--json", "--seed", "11",
                              "--part", "2/2"], capture_output=True, text=True, check=True).stdout
        listed = [json.loads(line) for line in out.splitlines()]
        expected = cases.generate(cases.load_families(REPO), 11, 32, cases.Caps(), 2, 2)
        self.assertEqual([c["id"] for c in listed], [c.id for c in expected])
        self.assertGreaterEqual(len(listed), 60)


if __name__ == "__main__":
    unittest.main()
