"""kerntune.torch on the CPU (Debian's python3-torch): what the recorder writes for each op and
layout, the shapes file tune-all and export read, the router leaving every CPU call to torch
with the same result, the first-call check rejecting a wrong result, and a bundle refused shape
by shape for another GPU model, another driver, a changed cubin or a baseline answer. The
kernels' launches are tested on a GPU (tests/gpu/torch_routing_test.py)."""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:  # pragma: no cover - the test command installs python3-torch
    torch = None

if torch is not None:
    import kerntune.torch as kt
    from kerntune.torch import checks, problems, recorder, sources

from daemon import Daemon  # noqa: E402

BF16 = torch.bfloat16 if torch is not None else None


def read_lines(path: str):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


@unittest.skipIf(torch is None, "torch is not installed (scripts/install-deps.sh installs python3-torch)")
class Record(unittest.TestCase):
    def setUp(self) -> None:
        self.folder = tempfile.TemporaryDirectory(prefix="kerntune-record-")
        self.path = os.path.join(self.folder.name, "shapes.jsonl")
        torch.manual_seed(0)

    def tearDown(self) -> None:
        self.folder.cleanup()

    def test_each_op_is_recorded_as_its_family_problem_with_calls_and_shares(self) -> None:
        x = torch.randn(2, 5, 64, dtype=BF16)
        linear = nn.Linear(64, 32, bias=False).to(BF16)
        w1, w2 = torch.randn(48, 64, dtype=BF16), torch.randn(48, 64, dtype=BF16)
        with kt.record(self.path):
            for _ in range(3):
                linear(x)                                    # linear: M = 2*5 rows
            x @ linear.weight.t()                            # matmul of a row-major weight's view
            kt.gated_mlp(x, w1, w2)                          # one dual_gemm_silu, not two linears
            torch.mm(x[0], torch.randn(64, 16, dtype=BF16))  # B [K,N] row-major: not the family's
            torch.bmm(x, torch.randn(2, 64, 8, dtype=BF16))  # batched: no family
            F.linear(x.float(), linear.weight.float())       # fp32: no family dtype
        lines = read_lines(self.path)
        by_op = {(line["op"], line["supported"], line["dtype"]): line for line in lines}
        linear_line = by_op[("linear", True, "bf16")]
        self.assertEqual((linear_line["family"], linear_line["shape"], linear_line["calls"]),
                         ("gemm", {"M": 10, "N": 32, "K": 64}, 3))
        self.assertEqual(by_op[("matmul", True, "bf16")]["shape"], {"M": 10, "N": 32, "K": 64})
        dual = by_op[("gated_mlp", True, "bf16")]
        self.assertEqual((dual["family"], dual["shape"], dual["calls"]),
                         ("dual_gemm_silu", {"G": 1, "M": 10, "N": 48, "K": 64}, 1))
        # gated_mlp's two projections are inside its one problem, not linears of their own
        self.assertNotIn(48, [line["shape"].get("N") for line in lines if line["op"] == "linear"])
        mm = by_op[("mm", False, "bf16")]
        self.assertIn("[K,N] row-major", mm["reason"])
        self.assertIn("no batch dim", by_op[("bmm", False, "bf16")]["reason"])
        self.assertIn("float32", by_op[("linear", False, "float32")]["reason"])
        for line in lines:
            self.assertEqual(line["format"], "kerntune-shapes/1")
            self.assertEqual(line["device"], "cpu")
            self.assertGreater(line["time_us"], 0)
            self.assertAlmostEqual(line["share"], line["time_us"] / line["recorded_us"], places=4)
        self.assertLessEqual(sum(line["share"] for line in lines), 1.0 + 1e-6)
        self.assertEqual([line["time_us"] for line in lines], sorted((line["time_us"] for line in lines), reverse=True))

    def test_addmm_and_a_biased_linear_are_a_gemm_with_a_bias_row(self) -> None:
        x, w, b = torch.randn(7, 32, dtype=BF16), torch.randn(16, 32, dtype=BF16), torch.randn(16, dtype=BF16)
        with kt.record(self.path):
            F.linear(x, w, b)
            torch.addmm(b, x, w.t())
            torch.addmm(b, x, w.t(), beta=0.5)
        lines = read_lines(self.path)
        supported = [line for line in lines if line["supported"]]
        self.assertEqual(sorted(line["op"] for line in supported), ["addmm", "linear"])
        for line in supported:
            self.assertEqual(line["shape"], {"M": 7, "N": 16, "K": 32})
            self.assertIn("bias", line["layout"])
        self.assertIn("beta=0.5", [line for line in lines if not line["supported"]][0]["reason"])

    def test_attention_maps_on_shape_layout_and_mask(self) -> None:
        q = torch.randn(2, 4, 33, 64, dtype=BF16)
        call = problems.attention_call("sdpa", q, q.clone(), q.clone(), is_causal=True)
        self.assertTrue(call.problem.supported)
        self.assertEqual(call.problem.shape_dict, {"B": 2, "H": 4, "S": 33, "D": 64, "CAUSAL": 1})
        strided = torch.randn(2, 33, 4, 64, dtype=BF16).transpose(1, 2)  # [B,S,H,D] viewed as [B,H,S,D]
        self.assertIn("not row-major", problems.attention_call("sdpa", strided, q, q).problem.reason)
        self.assertIn("mask", problems.attention_call("sdpa", q, q, q, attn_mask=torch.ones(33, 33)).problem.reason)
        cached = torch.randn(2, 4, 1, 64, dtype=BF16)  # decode: one query, 33 keys
        self.assertIn("self-attention", problems.attention_call("sdpa", cached, q, q).problem.reason)
        self.assertIn("head dim", problems.attention_call("sdpa", *(torch.randn(1, 1, 8, 96, dtype=BF16),) * 3).problem.reason)
        if hasattr(F, "scaled_dot_product_attention"):  # torch >= 2.0
            with kt.record(self.path):
                F.scaled_dot_product_attention(q, q, q, is_causal=True)
            line = read_lines(self.path)[0]
            self.assertEqual((line["family"], line["shape"]["CAUSAL"]), ("attention_fwd", 1))

    def test_append_sums_two_recordings_and_a_crash_leaves_the_file_whole(self) -> None:
        x, w = torch.randn(4, 16, dtype=BF16), torch.randn(8, 16, dtype=BF16)
        with kt.record(self.path):
            F.linear(x, w)
        with kt.record(self.path, append=True):
            F.linear(x, w)
            F.linear(x, w)
        lines = read_lines(self.path)
        self.assertEqual(len(lines), 1)
        self.assertEqual(lines[0]["calls"], 3)
        with self.assertRaises(RuntimeError):
            with kt.record(self.path):
                F.linear(x, w)
                raise RuntimeError("the model broke")
        self.assertEqual(read_lines(self.path)[0]["calls"], 1)  # written on the way out, whole
        self.assertEqual([n for n in os.listdir(self.folder.name) if n.endswith(".tmp")], [])

    def test_the_shapes_file_reader_names_a_bad_line(self) -> None:
        with open(self.path, "w") as f:
            f.write('{"family": "gemm", "shape": {"M": 1, "N": 2, "K": 3}, "dtype": "bf16"}\n{oops\n')
        with self.assertRaisesRegex(ValueError, r"shapes.jsonl:2: not JSON"):
            recorder.read(self.path)


@unittest.skipIf(torch is None, "torch is not installed")
class RouteOnCpu(unittest.TestCase):
    def test_cpu_calls_run_as_torch_with_torch_results_and_the_report_says_why(self) -> None:
        torch.manual_seed(1)
        x = torch.randn(3, 64, dtype=BF16)
        linear = nn.Linear(64, 32, bias=False).to(BF16)
        w1, w2 = torch.randn(48, 64, dtype=BF16), torch.randn(48, 64, dtype=BF16)
        expected = (linear(x), kt.gated_mlp(x, w1, w2))
        # A daemon that is not there: CPU tensors never ask it.
        with kt.enable(server="http://127.0.0.1:9") as router:
            got = (linear(x), kt.gated_mlp(x, w1, w2))
        self.assertTrue(torch.equal(expected[0], got[0]))
        self.assertTrue(torch.equal(expected[1], got[1]))
        report = {row["family"]: row for row in router.report()}
        self.assertEqual(report["gemm"]["reason"], "CPU tensors")
        self.assertEqual(report["dual_gemm_silu"]["calls_torch"], 1)
        self.assertEqual(router.routes, {})  # nothing was looked up
        # After the block, torch's functions are torch's alone again.
        self.assertIsNone(kt.state.innermost())

    def test_enable_refuses_a_server_and_a_bundle_together(self) -> None:
        with self.assertRaisesRegex(ValueError, "not both"):
            kt.enable(server="http://127.0.0.1:9", bundle="/nonexistent")


@unittest.skipIf(torch is None, "torch is not installed")
class FirstCallCheck(unittest.TestCase):
    TOLERANCE = {"atol": 0.03125, "rtol": 0.0078125, "rel_l2": 0.0078125, "magnitude": 16}

    def test_a_right_result_passes_and_a_planted_error_fails(self) -> None:
        torch.manual_seed(2)
        a, b = torch.randn(64, 256, dtype=BF16), torch.randn(48, 256, dtype=BF16)
        good = (a.float() @ b.float().t()).to(BF16)
        verdict = checks.check("gemm", "bf16", self.TOLERANCE, {"A": a, "B": b}, {"M": 64, "N": 48, "K": 256}, good)
        self.assertTrue(verdict.ok, verdict.reason)
        bad = good.clone()
        bad[5, 7] = -bad[5, 7] + 4
        verdict = checks.check("gemm", "bf16", self.TOLERANCE, {"A": a, "B": b}, {"M": 64, "N": 48, "K": 256}, bad)
        self.assertFalse(verdict.ok)
        self.assertIn("1 of 3072 elements", verdict.reason)
        nan = good.clone()
        nan[0, 0] = math.nan
        self.assertIn("NaN", checks.check("gemm", "bf16", self.TOLERANCE, {"A": a, "B": b}, {}, nan).reason)

    def test_attention_and_dual_gemm_references(self) -> None:
        torch.manual_seed(3)
        q, k, v = (torch.randn(1, 2, 17, 64, dtype=BF16) for _ in range(3))
        good = F.softmax((q.float() @ k.float().transpose(-1, -2)) / 8.0
                         + torch.full((17, 17), -math.inf).triu(1), dim=-1) @ v.float()
        tolerance = {"atol": 0.001953125, "rtol": 0.0078125, "rel_l2": 0.0078125, "magnitude": 4}
        shape = {"B": 1, "H": 2, "S": 17, "D": 64, "CAUSAL": 1}
        self.assertTrue(checks.check("attention_fwd", "bf16", tolerance, {"Q": q, "K": k, "V": v}, shape,
                                     good.to(BF16)).ok)
        shape["CAUSAL"] = 0  # the same output is wrong for the unmasked problem
        self.assertFalse(checks.check("attention_fwd", "bf16", tolerance, {"Q": q, "K": k, "V": v}, shape,
                                      good.to(BF16)).ok)
        x, w1, w2 = torch.randn(9, 64, dtype=BF16), torch.randn(24, 64, dtype=BF16), torch.randn(24, 64, dtype=BF16)
        dual_tolerance = {"atol": 0.5, "rtol": 0.0078125, "rel_l2": 0.0078125, "magnitude": 16}
        inputs = {"A": x, "B1": w1, "B2": w2}
        self.assertTrue(checks.check("dual_gemm_silu", "bf16", dual_tolerance, inputs, {}, kt.gated_mlp(x, w1, w2)).ok)
        swapped = kt.gated_mlp(x, w2, w1)  # silu on the wrong projection: seed 002's bug
        self.assertFalse(checks.check("dual_gemm_silu", "bf16", dual_tolerance, inputs, {}, swapped).ok)


@unittest.skipIf(torch is None, "torch is not installed")
class BundleRefusals(unittest.TestCase):
    def setUp(self) -> None:
        self.folder = tempfile.TemporaryDirectory(prefix="kerntune-bundle-")
        os.makedirs(os.path.join(self.folder.name, "kernels"))
        self.cubin = b"\x7fELF not really a cubin"
        with open(os.path.join(self.folder.name, "kernels", "variant-7.cubin"), "wb") as f:
            f.write(self.cubin)
        answer = {"family": "gemm", "dtype": "bf16", "job_id": 3, "variant_id": 7, "baseline_wins": False,
                  "launch": {"kernel": "k", "params": [], "grid": [1, 1, 1], "block": [32, 1, 1],
                             "cluster": [1, 1, 1], "dynamic_smem_bytes": 0},
                  "keys": {"driver_version": 13000}, "stale": False}
        entry = {"family": "gemm", "shape": {"M": 8, "N": 16, "K": 32}, "dtype": "bf16", "device": "NVIDIA H200",
                 "answer": answer, "kernel": "kernels/variant-7.cubin",
                 "kernel_sha256": hashlib.sha256(self.cubin).hexdigest(), "tolerance": {"atol": 1}}
        baseline = json.loads(json.dumps(entry))
        baseline["shape"] = {"M": 1, "N": 16, "K": 32}
        baseline["answer"].update(baseline_wins=True, variant_id=None, baseline="cublaslt_gemm",
                                  template="cublaslt_gemm", config={"algorithm_index": 2, "tile": 27})
        baseline["kernel"] = None
        self.write([entry, baseline])
        x, w = torch.empty(8, 32, dtype=BF16), torch.empty(16, 32, dtype=BF16)
        self.problem = problems.gemm_call("linear", x, w).problem
        self.decode = problems.gemm_call("linear", torch.empty(1, 32, dtype=BF16), w).problem

    def write(self, entries) -> None:
        with open(os.path.join(self.folder.name, "bundle.json"), "w") as f:
            json.dump({"format": sources.BUNDLE_FORMAT, "entries": entries}, f)

    def tearDown(self) -> None:
        self.folder.cleanup()

    def test_refusals_name_their_reason(self) -> None:
        bundle = sources.BundleSource(self.folder.name)
        ok = bundle.answer(self.problem, "NVIDIA H200", 13000)
        self.assertTrue(ok.ours, ok.reason)
        self.assertEqual((ok.cubin, ok.variant_id), (self.cubin, 7))
        other_gpu = bundle.answer(self.problem, "NVIDIA H100 80GB HBM3", 13000)
        self.assertFalse(other_gpu.ours)
        self.assertIn("tuned on NVIDIA H200, this GPU is NVIDIA H100", other_gpu.reason)
        self.assertIn("driver 13000, this one is 12080", bundle.answer(self.problem, "NVIDIA H200", 12080).reason)
        self.assertIn("cublaslt_gemm won", bundle.answer(self.decode, "NVIDIA H200", 13000).reason)
        untuned = problems.gemm_call("linear", torch.empty(3, 32, dtype=BF16), torch.empty(16, 32, dtype=BF16))
        self.assertIn("not in bundle", bundle.answer(untuned.problem, "NVIDIA H200", 13000).reason)
        with open(os.path.join(self.folder.name, "kernels", "variant-7.cubin"), "ab") as f:
            f.write(b"changed")
        self.assertIn("SHA-256", bundle.answer(self.problem, "NVIDIA H200", 13000).reason)

    def test_where_the_baseline_won_the_answer_carries_the_jobs_library_call(self) -> None:
        answer = sources.BundleSource(self.folder.name).answer(self.decode, "NVIDIA H200", 13000)
        self.assertFalse(answer.ours)
        self.assertEqual(answer.baseline, {"kind": "cublaslt_gemm", "config": {"algorithm_index": 2, "tile": 27}})
        self.assertEqual(answer.tolerance, {"atol": 1})
        self.assertIsNone(sources.baseline_of({"baseline_wins": False, "variant_id": 7, "template": "t"}))

    def test_a_folder_that_is_no_bundle_is_refused_at_once(self) -> None:
        with open(os.path.join(self.folder.name, "bundle.json"), "w") as f:
            json.dump({"format": "something/9"}, f)
        with self.assertRaisesRegex(ValueError, "format 'something/9'"):
            kt.enable(bundle=self.folder.name)
        with self.assertRaisesRegex(ValueError, "cannot read the bundle"):
            kt.enable(bundle=os.path.join(self.folder.name, "missing"))


class BatchAndBundleThroughTheCli(unittest.TestCase):
    """kerntune tune-all and export --bundle against a real daemon without a GPU, on a store
    seeded as a GPU run leaves it: gemm 2048^3 bf16 tuned on an H100, 4096^3 tuned there too but
    stale (its family has changed since)."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.daemon = Daemon()
        cls.folder = tempfile.TemporaryDirectory(prefix="kerntune-batch-")
        cls.shapes = os.path.join(cls.folder.name, "shapes.jsonl")
        lines = [
            {"family": "gemm", "shape": {"M": 4096, "N": 4096, "K": 4096}, "dtype": "bf16", "op": "linear",
             "supported": True, "calls": 2, "share": 0.2},
            {"family": "gemm", "shape": {"M": 77, "N": 4096, "K": 4096}, "dtype": "bf16", "op": "linear",
             "supported": True, "calls": 5, "share": 0.5},
            {"family": "gemm", "shape": {"M": 4096, "N": 4096, "K": 4096}, "dtype": "bf16", "op": "matmul",
             "supported": True, "calls": 1, "share": 0.1},
            {"family": "gemm", "shape": {"M": 2048, "N": 2048, "K": 2048}, "dtype": "bf16", "op": "linear",
             "supported": True, "calls": 1, "share": 0.05},
            {"family": "gemm", "shape": {"M": 5, "N": 16, "K": 64}, "dtype": "bf16", "op": "mm",
             "supported": False, "reason": "B is [K,N] row-major", "calls": 1, "share": 0.01},
        ]
        with open(cls.shapes, "w") as f:
            for line in lines:
                f.write(json.dumps(line) + "\n")

    @classmethod
    def tearDownClass(cls) -> None:
        cls.daemon.stop()
        cls.folder.cleanup()

    def kerntune(self, *args: str):
        return subprocess.run([os.environ["KERNTUNE"], "--server", self.daemon.url, *args], capture_output=True,
                              text=True, timeout=120)

    def test_tune_all_orders_by_share_skips_the_tuned_and_reports_the_refused(self) -> None:
        # The daemon plans the batch: on this host without a GPU what is tuned is answered and the
        # rest refused, each with its reason.
        stored = len(json.loads(self.kerntune("--json", "batch").stdout)["batches"])
        dry = self.kerntune("tune-all", self.shapes, "--device", "H100", "--dry-run")
        self.assertEqual(dry.returncode, 0, dry.stderr)
        rows = [line for line in dry.stdout.splitlines()[1:] if line.strip()]
        self.assertEqual(len(rows), 3, dry.stdout)  # the two ops of 4096^3 are one problem
        self.assertTrue(rows[0].startswith("gemm M=77 "), rows)  # the largest share first
        self.assertIn("50.0%", rows[0])
        self.assertIn("refused: no GPU on this host", rows[0])
        self.assertNotIn("compile", rows[0])  # POST /v1/jobs's hint is not a batch's
        self.assertIn("30.0%", rows[1])
        self.assertIn("stale (family_hash changed): no GPU on this host", rows[1])
        self.assertTrue(rows[2].startswith("gemm M=2048 "), rows)
        self.assertIn("tuned before (job", rows[2])
        self.assertIn("1 recorded line(s) no family takes", dry.stderr)
        self.assertIn("B is [K,N] row-major", dry.stderr)
        listed = json.loads(self.kerntune("--json", "batch").stdout)
        self.assertEqual(len(listed["batches"]), stored)  # a dry run stores nothing

        run = self.kerntune("--json", "tune-all", self.shapes, "--device", "H100", "--budget-per-shape", "8")
        self.assertEqual(run.returncode, 2, run.stdout + run.stderr)  # not everything got tuned
        summary = json.loads(run.stdout)
        self.assertEqual(summary["status"], "failed")
        states = {json.dumps(p["shape"], sort_keys=True): p for p in summary["problems"]}
        untuned = states[json.dumps({"K": 4096, "M": 77, "N": 4096}, sort_keys=True)]
        self.assertEqual(untuned["state"], "refused")
        self.assertIn("refused", untuned["answer"])
        self.assertEqual(states[json.dumps({"K": 4096, "M": 4096, "N": 4096}, sort_keys=True)]["state"], "refused")
        tuned = states[json.dumps({"K": 2048, "M": 2048, "N": 2048}, sort_keys=True)]
        self.assertEqual(tuned["state"], "tuned")
        self.assertTrue(tuned["answer"].startswith(("ours", "baseline")), tuned["answer"])
        self.assertRegex(run.stderr, r"tune-all: batch \d+, 3 problems on NVIDIA H100 80GB HBM3: 0 submitted, "
                                     r"1 tuned before, 2 refused")
        # The batch is kept: kerntune batch lists it and shows it problem by problem.
        shown = self.kerntune("batch", str(summary["batch"]))
        self.assertEqual(shown.returncode, 2, shown.stderr)  # it ended with problems untuned
        self.assertIn("gemm M=2048 N=2048 K=2048 bf16", shown.stdout)
        self.assertIn("shapes.jsonl", self.kerntune("batch").stdout)  # its label
        cancel = self.kerntune("batch", str(summary["batch"]), "--cancel")
        self.assertEqual(cancel.returncode, 1)
        self.assertIn("no job of its own left to cancel", cancel.stderr)
        unknown = self.kerntune("tune-all", self.shapes, "--device", "A100")
        self.assertEqual(unknown.returncode, 1)
        self.assertIn("no model of its store matches --device A100 (models with results: ", unknown.stderr)

    def test_the_python_client_tunes_a_shapes_file_as_a_batch(self) -> None:
        import io
        import kerntune
        client = kerntune.Client(self.daemon.url)
        plan = client.submit_batch(self.shapes, device="H100", dry_run=True)
        self.assertEqual(plan.status, "planned")
        self.assertIsNone(plan.id)
        self.assertEqual(plan.device_model, "NVIDIA H100 80GB HBM3")  # as the store names it
        self.assertEqual([p["plan"] for p in plan.problems], ["refused", "refused", "tuned"])
        self.assertAlmostEqual(plan.problems[1]["share"], 0.3)  # linear and matmul of 4096^3
        log = io.StringIO()
        batch = client.tune_all(self.shapes, device="H100", budget_per_shape=8, stream=log)
        self.assertEqual(batch.status, "failed")  # ended with problems this host cannot tune
        self.assertEqual(batch.label, "shapes.jsonl")
        self.assertEqual(len(batch.answers), 1)
        self.assertEqual(batch.answers[0]["shape"], {"M": 2048, "N": 2048, "K": 2048})
        self.assertIn(batch.answers[0]["answer"], ("ours", "baseline"))
        self.assertEqual(batch.problems[0]["error"]["code"], "no_device")
        self.assertIn(batch.id, [b.id for b in client.batches()])
        self.assertEqual(client.batch(batch.id).problems, batch.problems)
        with self.assertRaises(kerntune.ApiError) as refused:
            client.cancel_batch(batch.id)
        self.assertEqual((refused.exception.status, refused.exception.code), (409, "batch_finished"))
        with self.assertRaises(kerntune.ApiError) as bad:
            client.submit_batch([{"family": "gemm", "shape": {"M": "x"}, "dtype": "bf16"}])
        self.assertEqual(bad.exception.status, 400)
        self.assertIn("problems[0].shape", bad.exception.message)
        with self.assertRaises(kerntune.ApiError) as none:
            client.submit_batch([{"family": "gemm", "shape": {"M": 8, "N": 8, "K": 8}, "dtype": "bf16"}])
        self.assertEqual((none.exception.status, none.exception.code), (503, "no_device"))

    def test_tune_all_refuses_a_bad_file_with_its_line(self) -> None:
        bad = os.path.join(self.folder.name, "bad.jsonl")
        with open(bad, "w") as f:
            f.write('{"family": "gemm", "shape": {"M": "x"}, "dtype": "bf16"}\n')
        run = self.kerntune("tune-all", bad, "--device", "H100")
        self.assertEqual(run.returncode, 1)
        self.assertIn("bad.jsonl:1: dim M is not a non-negative integer", run.stderr)

    def test_export_bundle_writes_the_index_and_says_what_is_missing(self) -> None:
        folder = os.path.join(self.folder.name, "bundle")
        run = self.kerntune("export", "--bundle", folder, "--shapes", self.shapes)
        self.assertEqual(run.returncode, 0, run.stderr)
        with open(os.path.join(folder, "bundle.json")) as f:
            bundle = json.load(f)
        self.assertEqual(bundle["format"], "kerntune-bundle/1")
        self.assertIn("NVIDIA H100 80GB HBM3", bundle["devices"])
        missing = "\n".join(bundle["missing"])
        self.assertIn("gemm M=77 N=4096 K=4096 bf16 on NVIDIA H100 80GB HBM3", missing)
        # The seeded store's variants have no cubin and their configs no launch (no GPU compiled
        # them): said, not hidden.
        self.assertRegex(missing, "variant [0-9]+ has no (kernel|launch description)")
        self.assertEqual(len(bundle["unsupported"]), 1)
        again = self.kerntune("export", "--bundle", folder, "--shapes", self.shapes)
        self.assertEqual(again.returncode, 0, again.stderr)  # an earlier bundle is replaced
        stray = os.path.join(self.folder.name, "stray")
        os.makedirs(stray)
        with open(os.path.join(stray, "notes.txt"), "w") as f:
            f.write("mine")
        refused = self.kerntune("export", "--bundle", stray, "--shapes", self.shapes)
        self.assertEqual(refused.returncode, 1)
        self.assertIn("holds something other than a bundle", refused.stderr)
        self.assertTrue(os.path.exists(os.path.join(stray, "notes.txt")))
        mixed = self.kerntune("export", "7", "--bundle", folder, "--shapes", self.shapes)
        self.assertEqual(mixed.returncode, 1)
        self.assertIn("no job id", mixed.stderr)


if __name__ == "__main__":
    unittest.main()
