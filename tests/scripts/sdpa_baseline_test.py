#!/usr/bin/env python3
"""CPU tests of bench/sdpa_baseline.py: argument parsing, the launches file's validation, the
statistics and the JSON it writes, and what it does without torch or a GPU (no torch here)."""
import copy
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "bench", "sdpa_baseline.py")
spec = importlib.util.spec_from_file_location("sdpa_baseline", SCRIPT)
sdpa = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sdpa)


def candidate():
    return {"variant_id": 7, "config": {"template": "mma_flash2", "BLOCK_M": 64},
            "template": "mma_flash2", "kernel": "kt_attention_mma", "cubin": "/x/variant-7.cubin",
            "buffers": [{"name": n, "role": r, "dtype": d, "elements": e} for n, r, d, e in
                        [("Q", "input", "bf16", 8192), ("K", "input", "bf16", 8192),
                         ("V", "input", "bf16", 8192), ("O", "output", "bf16", 8192),
                         ("LSE", "output", "f32", 128)]],
            "args": [{"kind": "buffer", "buffer": "O"}, {"kind": "buffer", "buffer": "LSE"},
                     {"kind": "tensor_map", "buffer": "Q", "dims": [64, 128, 1],
                      "box": [64, 64, 1], "swizzle": 128},
                     {"kind": "buffer", "buffer": "K"}, {"kind": "buffer", "buffer": "V"},
                     {"kind": "i32", "value": 128}, {"kind": "f32", "value": 0.125}],
            "launch": {"grid": [2, 1, 1], "block": [128, 1, 1], "cluster": [1, 1, 1],
                       "dynamic_smem": 40960}}


def launches():
    return {"format": sdpa.FORMAT, "device": "NVIDIA H100",
            "shapes": [{"key": "1x1x128x64", "dtype": "bf16", "B": 1, "H": 1, "S": 128, "D": 64,
                        "causal": False, "flops": 4194304.0,
                        "tolerance": {"atol": 0.015625, "rtol": 0.0078125, "rel_l2": 0.0078125},
                        "candidates": [candidate()]}]}


class ParseArgs(unittest.TestCase):
    def test_defaults_and_values(self):
        args = sdpa.parse_args(["--launches", "a.json", "--out", "b.json", "--rounds", "40",
                                "--deadline-s", "90"])
        self.assertEqual((args.launches, args.out, args.rounds, args.deadline_s),
                         ("a.json", "b.json", 40, 90.0))
        self.assertEqual(args.graph_below_us, 10.0)
        self.assertFalse(args.check_only)

    def test_rejects_bad_values(self):
        for argv in (["--out", "b"], ["--launches", "a"], ["--launches", "a", "--out", "b",
                                                           "--rounds", "2"]):
            with self.assertRaises(SystemExit):
                sdpa.parse_args(argv)
        self.assertTrue(sdpa.parse_args(["--launches", "a", "--check-only"]).check_only)


class ValidateLaunches(unittest.TestCase):
    def test_accepts_a_good_file(self):
        self.assertIs(sdpa.validate_launches(launches())["format"], sdpa.FORMAT)

    def test_names_what_is_wrong(self):
        cases = [
            (lambda d: d.update(format="other"), "format"),
            (lambda d: d["shapes"][0].update(S=0), "shapes[0].S"),
            (lambda d: d["shapes"][0].update(causal=1), "causal"),
            (lambda d: d["shapes"][0].update(dtype="fp32"), "dtype"),
            (lambda d: d["shapes"][0]["tolerance"].pop("rtol"), "tolerance"),
            (lambda d: d["shapes"][0]["candidates"][0]["launch"].update(grid=[1, 1]), "grid"),
            (lambda d: d["shapes"][0]["candidates"][0]["args"][0].update(buffer="X"),
             "unknown buffer"),
            (lambda d: d["shapes"][0]["candidates"][0]["args"][2].update(swizzle=16), "swizzle"),
            (lambda d: d["shapes"][0]["candidates"][0]["args"][5].pop("value"), "value"),
            (lambda d: d["shapes"][0]["candidates"][0]["buffers"].pop(3), "no buffer O"),
        ]
        for mutate, expected in cases:
            doc = copy.deepcopy(launches())
            mutate(doc)
            with self.assertRaises(ValueError) as caught:
                sdpa.validate_launches(doc)
            self.assertIn(expected, str(caught.exception))


class Statistics(unittest.TestCase):
    def test_median(self):
        self.assertEqual(sdpa.median([3, 1, 2]), 2)
        self.assertEqual(sdpa.median([4, 1, 2, 3]), 2.5)
        with self.assertRaises(ValueError):
            sdpa.median([])

    def test_bootstrap_interval_holds_the_ratio(self):
        sdpa_us = [100 + (i % 5) for i in range(30)]
        ours_us = [50 + (i % 3) for i in range(30)]
        ratio, low, high = sdpa.bootstrap_ratio(sdpa_us, ours_us, 500, seed=1)
        self.assertAlmostEqual(ratio, 102 / 51)
        self.assertLessEqual(low, ratio)
        self.assertGreaterEqual(high, ratio)
        self.assertGreater(low, 1.9)
        self.assertEqual(sdpa.bootstrap_ratio(sdpa_us, ours_us, 500, seed=1), (ratio, low, high))
        with self.assertRaises(ValueError):
            sdpa.bootstrap_ratio([1, 2], [1], 100, 0)

    def test_graph_launches(self):
        self.assertEqual(sdpa.graph_launches(25.0, 10.0, 50.0, 1000), 0)
        self.assertEqual(sdpa.graph_launches(5.0, 10.0, 50.0, 1000), 10)
        self.assertEqual(sdpa.graph_launches(0.001, 10.0, 50.0, 300), 300)
        self.assertEqual(sdpa.graph_launches(5.0, 0.0, 50.0, 1000), 0)

    def test_pick_baseline_takes_the_fastest_backend_that_ran(self):
        self.assertEqual(sdpa.pick_baseline({"flash": 30.0, "cudnn": 25.0, "default": None}),
                         ("cudnn", 25.0))
        self.assertEqual(sdpa.pick_baseline({"flash": None}), (None, None))


class Output(unittest.TestCase):
    def test_write_output_replaces_the_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "out.json")
            sdpa.write_output(path, {"a": 1})
            sdpa.write_output(path, sdpa.empty_result("why"))
            with open(path) as f:
                doc = json.load(f)
            self.assertEqual(doc["error"], "why")
            self.assertEqual(doc["shapes"], [])
            self.assertEqual(os.listdir(tmp), ["out.json"])

    def run_script(self, *argv):
        return subprocess.run([sys.executable, SCRIPT, *argv], capture_output=True, text=True)

    def test_without_a_gpu_writes_why(self):
        with tempfile.TemporaryDirectory() as tmp:
            launches_path, out = os.path.join(tmp, "l.json"), os.path.join(tmp, "o.json")
            with open(launches_path, "w") as f:
                json.dump(launches(), f)
            check = self.run_script("--launches", launches_path, "--check-only")
            self.assertEqual(check.returncode, 0, check.stderr)
            self.assertIn("1 shape(s), 1 candidate(s)", check.stdout)
            try:
                import torch  # noqa: F401
                has_gpu = torch.cuda.is_available()
            except ImportError:
                has_gpu = False
            if has_gpu:
                self.skipTest("a GPU is present: this checks the no-GPU path")
            run = self.run_script("--launches", launches_path, "--out", out)
            self.assertEqual(run.returncode, 2, run.stderr)
            with open(out) as f:
                self.assertIn("cannot time on a GPU", json.load(f)["error"])

    def test_bad_launches_file(self):
        with tempfile.TemporaryDirectory() as tmp:
            launches_path, out = os.path.join(tmp, "l.json"), os.path.join(tmp, "o.json")
            with open(launches_path, "w") as f:
                f.write("{}")
            run = self.run_script("--launches", launches_path, "--out", out)
            self.assertEqual(run.returncode, 2)
            with open(out) as f:
                self.assertIn("bad launches file", json.load(f)["error"])


if __name__ == "__main__":
    unittest.main()
