"""The Python client against a real kerntuned on loopback: compile-mode jobs (real NVRTC, no
GPU) and a store seeded with measured variants (for best, pareto and tuned)."""

from __future__ import annotations

import csv
import io
import json
import os
import socket
import stat
import sys
import tempfile
import time
import unittest
from unittest import mock

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import kerntune  # noqa: E402
from daemon import Daemon  # noqa: E402

SMALL = {"M": 256, "N": 256, "K": 256}
SEEDED = {"M": 4096, "N": 4096, "K": 4096}


class ClientAgainstDaemon(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.daemon = Daemon()
        cls.client = kerntune.Client(cls.daemon.url, timeout=20)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.daemon.stop()

    def test_submit_names_the_search_as_the_cli_does(self) -> None:
        job = self.client.submit("gemm", SMALL, "bf16", mode="compile", arch="sm_90a", budget=2,
                                 search="random")
        self.assertEqual(job.raw["search"]["name"], "random")
        with self.assertRaises(kerntune.ApiError) as refused:
            # A learning search needs measurements: the daemon refuses it for a compile job.
            self.client.submit("gemm", SMALL, "bf16", mode="compile", arch="sm_90a", budget=2,
                               search="local")
        self.assertEqual(refused.exception.status, 422)
        self.assertIn("local", str(refused.exception))
        self.client.wait(job.id, interval=0.2, timeout=240, stream=io.StringIO())

    def test_plan_counts_a_job_before_it_runs_and_queues_nothing(self) -> None:
        before = len(self.client.history(limit=1000))
        preview = self.client.plan("gemm", SMALL, "bf16", mode="compile", arch="sm_90a", budget=3)
        self.assertTrue(preview["dry_run"])
        self.assertEqual(preview["feasible"], sum(t["feasible"] for t in preview["templates"]))
        self.assertEqual(preview["to_run"], min(3, preview["feasible"]))
        self.assertGreater(preview["pruned"], 0)
        self.assertEqual(len(self.client.history(limit=1000)), before)

    def test_the_variants_of_a_seeded_job_as_csv_with_a_column_per_parameter(self) -> None:
        job_id = self.daemon.seed["main_job"]
        folder = tempfile.mkdtemp(prefix="kerntune-csv-")
        path = os.path.join(folder, "variants.csv")
        text = self.client.variants_csv(job_id, path)
        with open(path) as f:
            self.assertEqual(f.read(), text)
        rows = list(csv.DictReader(io.StringIO(text)))
        gated = self.client.variants(job_id, exclude_pruned=True)
        self.assertEqual(len(rows), len(gated))  # every variant that reached a gate, pruned ones not
        parameters = sorted({name for v in gated for name in v.config})
        header = text.splitlines()[0].split(",")
        self.assertEqual(header[:4], ["id", "job_id", "template", "status"])
        self.assertEqual(header[-len(parameters):], parameters)
        by_id = {int(r["id"]): r for r in rows}
        for v in gated:
            row = by_id[v.id]
            self.assertEqual(row["status"], v.status)
            for name, value in v.config.items():
                self.assertEqual(row[name], str(value))
            if v.median_us is not None:
                self.assertAlmostEqual(float(row["median_us"]), v.median_us)
        with self.assertRaises(kerntune.ApiError) as unknown:
            self.client.variants_csv(999999)
        self.assertEqual(unknown.exception.status, 404)

    def test_submit_wait_show_and_download_a_compile_job(self) -> None:
        job = self.client.submit("gemm", SMALL, "bf16", mode="compile", arch="sm_90a", budget=2)
        self.assertIsInstance(job, kerntune.Job)
        self.assertIn(job.status, ("queued", "running"))
        out = io.StringIO()
        done = self.client.wait(job.id, interval=0.2, timeout=240, stream=out)
        self.assertEqual(done.status, "done", done.reason)
        self.assertTrue(done.finished)
        self.assertIn(f"job {job.id} done", out.getvalue())
        self.assertRegex(out.getvalue(), r"\[#+\] \d+/\d+")  # the bar ends full
        compiled = done.progress.by_status.get("compiled", 0)
        self.assertGreaterEqual(compiled, 1)

        shown, variants = self.client.show(job.id)
        self.assertEqual(shown.id, job.id)
        self.assertTrue(all(isinstance(v, kerntune.Variant) for v in variants))
        self.assertNotIn("pruned", {v.status for v in variants})
        with_kernel = [v for v in variants if v.status == "compiled"]
        self.assertEqual(len(with_kernel), compiled)
        self.assertTrue(with_kernel[0].has_kernel)
        self.assertGreater(with_kernel[0].registers, 0)

        detailed = self.client.variant(with_kernel[0].id, log=True)
        self.assertIsNotNone(detailed.compile_log)
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "k.cubin")
            kernel = self.client.kernel(with_kernel[0].id, path)
            self.assertEqual(kernel.cubin[:4], b"\x7fELF")
            self.assertEqual(kernel.arch, "sm_90a")
            self.assertTrue(kernel.name)
            with open(path, "rb") as f:
                self.assertEqual(f.read(), kernel.cubin)

        # How to launch it, evaluated by the daemon for the job's shape, for the cubin's entry point.
        launch = self.client.launch(with_kernel[0].id)
        self.assertEqual(launch["kernel"], kernel.name)
        self.assertEqual(launch["arch"], "sm_90a")
        self.assertEqual(len(launch["grid"]), 3)
        self.assertTrue(all(d >= 1 for d in launch["grid"] + launch["block"]))
        self.assertTrue(launch["params"])
        self.assertLessEqual({p["type"] for p in launch["params"]}, {"pointer", "i32", "i64", "f32", "tensor_map"})

        self.assertIn(job.id, [j.id for j in self.client.history(family="gemm", limit=1000)])
        self.assertIn(job.id, [j.id for j in self.client.history(status="done", limit=1000)])

    def test_events_follow_a_compile_job_from_status_to_end(self) -> None:
        job = self.client.submit("gemm", SMALL, "bf16", mode="compile", arch="sm_90a", budget=3)
        events = list(self.client.events(job.id))  # returns once the daemon closed the stream
        names = [e.name for e in events]
        self.assertEqual(names[0], "status", names)
        self.assertEqual(names[-1], "end", names)
        self.assertNotIn("end", names[:-1])
        self.assertIn("progress", names)
        self.assertTrue(all(isinstance(e, kerntune.JobEvent) for e in events))
        finished = [e.data["finished"] for e in events if e.name == "progress"]
        self.assertEqual(finished, sorted(finished))
        end = events[-1].data
        self.assertEqual(end["id"], job.id)
        self.assertEqual(end["status"], "done")
        self.assertEqual(end["progress"]["finished"], end["progress"]["total"])
        self.assertEqual(finished[-1], end["progress"]["finished"])
        # A finished job: its final state at once, then the end.
        again = [e.name for e in self.client.events(job.id)]
        self.assertEqual((again[0], again[-1]), ("status", "end"))
        with self.assertRaises(kerntune.ApiError) as caught:
            list(self.client.events(999999))
        self.assertEqual((caught.exception.status, caught.exception.code), (404, "unknown_job"))

    def test_history_pages_are_followed_up_to_the_limit(self) -> None:
        everything = self.client.history(limit=1000)
        self.assertGreaterEqual(len(everything), 4)  # the seeded jobs
        self.assertEqual(len(self.client.history(limit=2)), 2)
        failed = self.client.history(status="failed")
        self.assertTrue(failed and all(j.status == "failed" for j in failed))
        self.assertEqual(failed[0].reason, "worker could not start: no GPU")

    def test_best_and_pareto_of_the_seeded_problem(self) -> None:
        best = self.client.best("gemm", SEEDED, "bf16", device="NVIDIA H100 80GB HBM3")
        self.assertIsInstance(best, kerntune.Best)
        self.assertEqual(best.job_id, self.daemon.seed["main_job"])
        front = self.client.pareto("gemm", SEEDED, "bf16", device="NVIDIA H100 80GB HBM3")
        self.assertGreaterEqual(len(front.front), 1)
        self.assertEqual(front.front[0].id, best.variant_id)  # fastest first
        self.assertAlmostEqual(front.front[0].median_us, best.median_us)
        self.assertTrue(all(v.status == "measured" and v.error is not None for v in front.front))
        measured = self.client.variants(best.job_id, status=["measured"])
        self.assertEqual(len(measured), self.daemon.seed["main_job_outcomes"]["measured"])
        self.assertEqual(min(v.median_us for v in measured), best.median_us)

    def test_best_of_an_untuned_shape_can_come_from_the_nearest_tuned_one(self) -> None:
        asked = {"M": 2048, "N": 4096, "K": 4096}  # 2048^3 and 4096^3 are tuned: 4096^3 is nearer
        with self.assertRaises(kerntune.ApiError) as caught:
            self.client.best("gemm", asked, "bf16", device="NVIDIA H100 80GB HBM3")
        self.assertEqual(caught.exception.code, "not_tuned")
        near = self.client.best("gemm", asked, "bf16", device="NVIDIA H100 80GB HBM3", nearest=True)
        self.assertFalse(near.exact)
        self.assertEqual(near.nearest["shape_key"], "K=4096,M=4096,N=4096")
        self.assertAlmostEqual(near.nearest["distance"], 0.6931471805599453)
        self.assertEqual(near.job_id, self.daemon.seed["main_job"])
        # The seeded job was tuned with other gemm sources than the daemon serves: flagged.
        self.assertTrue(near.stale)
        self.assertEqual([k["key"] for k in near.stale_keys], [self.daemon.seed["main_job_stale_key"]])
        self.assertIsNone(near.tuning_job)
        exact = self.client.best("gemm", SEEDED, "bf16", device="NVIDIA H100 80GB HBM3", nearest=True)
        self.assertTrue(exact.exact)
        self.assertIsNone(exact.nearest)
        # No GPU here: asking for a job is refused like POST /v1/jobs.
        with self.assertRaises(kerntune.ApiError) as caught:
            self.client.best("gemm", asked, "bf16", device="NVIDIA H100 80GB HBM3", nearest=True,
                             tune_on_miss=True)
        self.assertEqual((caught.exception.status, caught.exception.code), (503, "no_device"))

    def test_best_of_an_untuned_shape_can_be_the_predictors_config(self) -> None:
        asked = {"M": 333, "N": 4096, "K": 4096}
        with self.assertRaises(kerntune.ApiError) as caught:
            self.client.best("gemm", asked, "bf16")
        self.assertEqual(caught.exception.code, "not_tuned")
        # The daemon fits its shape predictors on the seeded jobs in the background after it
        # starts: a moment at most.
        deadline = time.monotonic() + 30
        while True:
            try:
                predicted = self.client.best("gemm", asked, "bf16", predict=True)
                break
            except kerntune.ApiError as e:
                if e.code != "not_tuned" or time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        self.assertIsInstance(predicted, kerntune.Prediction)
        self.assertEqual(predicted.shape, asked)
        self.assertTrue(predicted.template)
        self.assertGreater(predicted.expected_us, 0)
        low, high = predicted.expected_interval_us
        self.assertLessEqual(low, predicted.expected_us)
        self.assertGreaterEqual(high, predicted.expected_us)
        self.assertGreater(predicted.model["variants"], 0)
        # Its compile check was queued by the first answer (a compile-mode job of the shape); the
        # job is stored by the daemon after the answer, so its id comes with a later answer.
        self.assertEqual(predicted.check["kind"], "compile-only")
        self.assertIn(predicted.check["status"], ("queued", "running", "compiled"))
        deadline = time.monotonic() + 30
        while predicted.check["job_id"] is None and time.monotonic() < deadline:
            time.sleep(0.2)
            predicted = self.client.best("gemm", asked, "bf16", predict=True)
        self.assertIsInstance(predicted.check["job_id"], int)
        self.assertEqual(self.client.job(predicted.check["job_id"]).mode, "compile")
        # A tuned shape's own answer wins over a prediction.
        exact = self.client.best("gemm", SEEDED, "bf16", device="NVIDIA H100 80GB HBM3", predict=True)
        self.assertIsInstance(exact, kerntune.Best)
        # No model of the dtype: still a 404, saying why.
        with self.assertRaises(kerntune.ApiError) as caught:
            self.client.best("gemm", asked, "fp16", predict=True)
        self.assertEqual(caught.exception.code, "not_tuned")
        self.assertIn("no shape predictor", str(caught.exception))

    def test_tuned_lists_each_problem_with_its_best(self) -> None:
        problems = self.client.tuned(family="gemm")
        keys = {(p["device"], p["shape_key"]) for p in problems}
        self.assertIn(("NVIDIA H100 80GB HBM3", "K=4096,M=4096,N=4096"), keys)
        self.assertIn(("NVIDIA H100 80GB HBM3", "K=2048,M=2048,N=2048"), keys)
        self.assertIn(("NVIDIA B200", "K=4096,M=4096,N=4096"), keys)
        only_b200 = self.client.tuned(device="NVIDIA B200")
        self.assertEqual(len(only_b200), 1)

    def test_refusals_carry_the_servers_error_body(self) -> None:
        with self.assertRaises(kerntune.ApiError) as caught:
            self.client.submit("gem", SMALL, "bf16", mode="compile", arch="sm_90a")
        self.assertEqual(caught.exception.status, 422)
        self.assertEqual(caught.exception.code, "unknown_family")
        self.assertIn("gemm", caught.exception.message)  # the known families are listed
        self.assertEqual(caught.exception.body["error"]["code"], "unknown_family")
        with self.assertRaises(kerntune.ApiError) as caught:
            self.client.best("gemm", {"M": 3, "N": 5, "K": 7}, "bf16")
        self.assertEqual((caught.exception.status, caught.exception.code), (404, "not_tuned"))
        with self.assertRaises(kerntune.ApiError) as caught:
            self.client.job(999999)
        self.assertEqual(caught.exception.code, "unknown_job")
        with self.assertRaises(kerntune.ApiError) as caught:
            self.client.cancel(self.daemon.seed["main_job"])
        self.assertEqual((caught.exception.status, caught.exception.code), (409, "job_finished"))

    def test_registering_a_family_needs_the_daemons_option(self) -> None:
        with self.assertRaises(kerntune.ApiError) as caught:
            self.client.register_family(manifest={"name": "mine"}, sources={})
        self.assertEqual((caught.exception.status, caught.exception.code), (403, "user_families_disabled"))

    def test_waiting_past_the_timeout_raises(self) -> None:
        # Many variants, so the job is still running when cancelled.
        job = self.client.submit("gemm", SMALL, "bf16", mode="compile", arch="sm_90a", budget=50)
        with self.assertRaises(TimeoutError):
            self.client.wait(job.id, timeout=0, progress=False)
        cancelled = self.client.cancel(job.id)
        self.assertIn(cancelled.status, ("queued", "running", "cancelled"))
        with self.assertRaises(kerntune.JobFailed):
            self.client.wait(job.id, interval=0.2, timeout=120, progress=False, raise_on_failure=True)


class ClientRegistersFamilies(unittest.TestCase):
    """register_family() against a daemon started with --allow-user-families: the worked example
    of kernel_templates/README.md (a WMMA kernel with tile-size macros) registered from its
    folder and tuned in a compile-mode job; a compile error, of a variant or of the reference
    kernel, raised with NVRTC's log."""

    EXAMPLE = os.path.join(os.environ.get("KERNTUNE_FAMILIES", ""), "examples", "wmma_gemm")

    @classmethod
    def setUpClass(cls) -> None:
        cls.daemon = Daemon(["--allow-user-families"], seed=False)
        cls.client = kerntune.Client(cls.daemon.url, timeout=20)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.daemon.stop()

    def test_the_worked_example_registers_and_its_macros_are_tuned(self) -> None:
        registration = self.client.register_family(self.EXAMPLE)
        self.assertEqual(registration["status"], "registered", registration)
        self.assertTrue(registration["compile"]["ok"])
        listed = {family["name"]: family for family in self.client.families()}
        self.assertEqual(listed["wmma_gemm"]["origin"], "registered")
        self.assertIsInstance(listed["gemm"], kerntune.Family)  # typed, and indexable as before
        self.assertEqual((listed["wmma_gemm"].origin, listed["gemm"].dim_names), ("registered", ["M", "N", "K"]))
        self.assertEqual(sorted(listed["gemm"].tolerance), ["bf16", "fp16"])
        self.assertEqual(listed["wmma_gemm"]["source_hash"], registration["source_hash"])
        again = self.client.register_family(self.EXAMPLE, wait=False)
        self.assertTrue(again["unchanged"])
        job = self.client.submit("wmma_gemm", {"M": 128, "N": 128, "K": 64}, "fp16", mode="compile",
                                 arch="sm_80", budget=2)
        done = self.client.wait(job.id, progress=False, interval=0.2, timeout=240)
        self.assertEqual(done.status, "done", done.reason)

    def test_a_link_out_of_the_folder_is_not_uploaded(self) -> None:
        import shutil
        import tempfile
        with tempfile.TemporaryDirectory() as folder:
            for name in ("manifest.json", "wmma_gemm.cuh", "wmma_gemm_reference.cuh"):
                shutil.copy(os.path.join(self.EXAMPLE, name), folder)
            os.symlink("/etc/hostname", os.path.join(folder, "leak.h"))
            with self.assertRaises(ValueError) as caught:
                self.client.register_family(folder)
            self.assertIn("symbolic link to /etc/hostname", str(caught.exception))
            # A link to a file inside the folder is the user's own layout: uploaded.
            os.remove(os.path.join(folder, "leak.h"))
            os.symlink(os.path.join(folder, "wmma_gemm.cuh"), os.path.join(folder, "alias.cuh"))
            registration = self.client.register_family(folder, wait=False)
            self.assertIn(registration["status"], ("compiling", "registered"), registration)

    def test_a_compile_error_raises_with_the_nvrtc_log(self) -> None:
        with open(os.path.join(self.EXAMPLE, "manifest.json"), encoding="utf-8") as file:
            manifest = json.load(file)
        manifest["name"] = "broken_wmma"
        with open(os.path.join(self.EXAMPLE, "wmma_gemm.cuh"), encoding="utf-8") as file:
            kernel = file.read() + "\nnot_cuda_at_all;\n"
        with open(os.path.join(self.EXAMPLE, "wmma_gemm_reference.cuh"), encoding="utf-8") as file:
            reference = file.read()
        with self.assertRaises(kerntune.FamilyNotRegistered) as caught:
            self.client.register_family(manifest=manifest, sources={
                "wmma_gemm.cuh": kernel, "wmma_gemm_reference.cuh": reference})
        self.assertIn("not_cuda_at_all", caught.exception.log)
        self.assertNotIn("broken_wmma", [family["name"] for family in self.client.families()])

    def test_a_reference_kernel_that_does_not_compile_raises_with_its_log(self) -> None:
        with open(os.path.join(self.EXAMPLE, "manifest.json"), encoding="utf-8") as file:
            manifest = json.load(file)
        manifest["name"] = "broken_reference"
        with open(os.path.join(self.EXAMPLE, "wmma_gemm.cuh"), encoding="utf-8") as file:
            kernel = file.read()
        with open(os.path.join(self.EXAMPLE, "wmma_gemm_reference.cuh"), encoding="utf-8") as file:
            reference = file.read() + "\nnot_a_reference;\n"
        with self.assertRaises(kerntune.FamilyNotRegistered) as caught:
            self.client.register_family(manifest=manifest, sources={
                "wmma_gemm.cuh": kernel, "wmma_gemm_reference.cuh": reference})
        self.assertIn("reference kernel", str(caught.exception))
        self.assertIn("not_a_reference", caught.exception.log)
        self.assertNotIn("broken_reference", [family["name"] for family in self.client.families()])

    def test_a_bad_name_is_an_api_error(self) -> None:
        with self.assertRaises(kerntune.ApiError) as caught:
            self.client.register_family(manifest={"name": "../etc"}, sources={})
        self.assertEqual((caught.exception.status, caught.exception.code), (400, "invalid_family_name"))


class OperationIds(unittest.TestCase):
    """docs/openapi.json's operationIds are the Python client's method names: a client generated
    from the document and this one name each operation alike."""

    NOT_IN_THE_CLIENT = {"metrics", "openapi", "page", "page_ui", "page_file", "page_vendor_file"}

    def test_every_operation_is_named_after_its_client_method(self) -> None:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "docs", "openapi.json")
        with open(path) as f:
            document = json.load(f)
        ids = [op.get("operationId") for ops in document["paths"].values() for op in ops.values()]
        self.assertNotIn(None, ids, "an operation without an operationId")
        self.assertEqual(len(ids), len(set(ids)), "operationIds repeat")
        for name in set(ids) - self.NOT_IN_THE_CLIENT:
            self.assertTrue(callable(getattr(kerntune.Client, name, None)), f"no kerntune.Client.{name}")
        # And every method that makes one request is one operation's.
        for name in ("health", "families", "devices", "register_family", "family_registration", "submit", "job",
                     "cancel", "events", "variants", "variants_csv", "submit_batch", "batch", "batches", "cancel_batch", "variant",
                     "kernel", "launch", "best", "pareto", "history", "tuned"):
            self.assertIn(name, ids)


class ShapesFiles(unittest.TestCase):
    def test_a_shapes_file_folds_into_problems_largest_share_first(self) -> None:
        from kerntune import batches
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "shapes.jsonl")
            with open(path, "w") as f:
                for line in ({"family": "gemm", "shape": {"M": 1, "N": 2, "K": 3}, "dtype": "bf16", "share": 0.1,
                              "calls": 2, "op": "linear"},
                             {"family": "gemm", "shape": {"M": 4, "N": 2, "K": 3}, "dtype": "bf16", "share": 0.3},
                             {"family": "gemm", "shape": {"K": 3, "M": 1, "N": 2}, "dtype": "bf16", "share": 0.25,
                              "calls": 1, "op": "matmul"},
                             {"family": "gemm", "shape": {"M": 5, "N": 16, "K": 64}, "dtype": "bf16",
                              "supported": False, "op": "mm", "reason": "B is [K,N] row-major"}):
                    f.write(json.dumps(line) + "\n")
                f.write("\n")
            problems, unsupported = batches.problems_from_shapes_file(path)
            self.assertEqual([p["shape"]["M"] for p in problems], [1, 4])  # 0.35 before 0.3
            self.assertAlmostEqual(problems[0]["share"], 0.35)
            self.assertEqual(problems[0]["calls"], 3)
            self.assertEqual(unsupported, ["gemm M=5 N=16 K=64 bf16 (mm): B is [K,N] row-major"])
            with open(path, "a") as f:
                f.write('{"family": "gemm", "shape": {"M": -1}, "dtype": "bf16"}\n')
            with self.assertRaisesRegex(ValueError, r"shapes.jsonl:6: dim M is not a non-negative integer"):
                batches.problems_from_shapes_file(path)
            with open(path, "w") as f:
                f.write('{"family": "gemm", "shape": [1], "dtype": "bf16"}\n')
            with self.assertRaisesRegex(ValueError, r"shapes.jsonl:1: 'shape' is not a JSON object"):
                kerntune.Client("http://127.0.0.1:9").submit_batch(path)


class ClientWithoutDaemon(unittest.TestCase):
    def test_a_closed_port_is_daemon_unreachable(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        client = kerntune.Client(f"127.0.0.1:{port}", timeout=5)
        with self.assertRaises(kerntune.DaemonUnreachable) as caught:
            client.health()
        self.assertIn(str(port), str(caught.exception))

    def test_token_comes_from_the_environment_like_the_cli(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "token")
            with open(path, "w") as f:
                f.write("  from-file \nsecond line\n")
            with mock.patch.dict(os.environ, {"KERNTUNE_TOKEN": "", "KERNTUNE_TOKEN_FILE": path}):
                self.assertEqual(kerntune.Client("127.0.0.1:1").token, "from-file")
            with mock.patch.dict(os.environ, {"KERNTUNE_TOKEN": " direct ", "KERNTUNE_TOKEN_FILE": path}):
                self.assertEqual(kerntune.Client("127.0.0.1:1").token, "direct")
            with mock.patch.dict(os.environ, {"KERNTUNE_TOKEN": "a\nb"}):
                with self.assertRaises(kerntune.TokenError):
                    kerntune.Client("127.0.0.1:1")
            with mock.patch.dict(os.environ, {"KERNTUNE_TOKEN": "", "KERNTUNE_TOKEN_FILE": path + ".missing"}):
                with self.assertRaises(kerntune.TokenError):
                    kerntune.Client("127.0.0.1:1")
        with self.assertRaises(ValueError):
            kerntune.Client("https://example.invalid")

    def test_progress_bar_renders_counts_and_best(self) -> None:
        job = kerntune.Job.from_json({
            "id": 7, "family": "gemm", "shape": SMALL, "dtype": "bf16", "status": "running", "reason": None,
            "progress": {"total": 10, "finished": 5, "by_status": {"measured": 4, "compile_error": 1, "pending": 5}},
            "best": {"id": 3, "job_id": 7, "status": "measured", "median_us": 12.34}})
        line = kerntune.progress.render(job)
        self.assertIn("[" + "#" * 15 + "." * 15 + "] 5/10 variants", line)
        self.assertIn("1 compile_error, 4 measured", line)
        self.assertIn("best 12.3 us", line)
        # Pruned configs are finished before anything runs: counted apart, not as progress (a
        # cancelled job with most of its space pruned does not show a full bar).
        job.progress = kerntune.Progress(1000, 995, {"pruned": 990, "measured": 5, "pending": 5})
        line = kerntune.progress.render(job)
        self.assertIn("[" + "#" * 15 + "." * 15 + "] 5/10 variants (5 measured), 990 pruned", line)

    def test_hints_are_put_as_this_clients_arguments(self) -> None:
        error = kerntune.errors.error_from_response(404, json.dumps({"error": {
            "code": "not_tuned", "message": "nothing tuned for gemm; nearest=1 answers with the nearest tuned "
            "shape, tune_on_miss=1 starts a job"}}).encode())
        self.assertIn("nearest=True answers", error.message)
        self.assertIn("tune_on_miss=True starts a job", str(error))

    def test_variants_as_records_and_csv_with_a_column_per_parameter(self) -> None:
        variants = [kerntune.Variant.from_json({"id": 1, "job_id": 2, "template": "t", "status": "measured",
                                                "config": {"BM": 128, "BN": 64}, "median_us": 10.5,
                                                "error": {"max_abs": 0.01, "max_rel": 0.1, "rel_l2": 0.001}}),
                    kerntune.Variant.from_json({"id": 3, "job_id": 2, "template": "u", "status": "wrong_result",
                                                "config": {"BM": 64, "SPLIT_K": 2}, "reason": "planted, \"quoted\""})]
        records = kerntune.to_records(variants)
        self.assertEqual((records[0]["BM"], records[0]["BN"], records[0]["rel_l2_error"]), (128, 64, 0.001))
        self.assertEqual((records[1]["SPLIT_K"], records[1]["median_us"]), (2, None))
        text = kerntune.to_csv(variants)
        rows = list(csv.DictReader(io.StringIO(text)))
        self.assertEqual(list(rows[0].keys())[-3:], ["BM", "BN", "SPLIT_K"])
        self.assertEqual((rows[0]["BM"], rows[0]["BN"], rows[1]["BN"]), ("128", "64", ""))
        self.assertEqual(rows[1]["reason"], 'planted, "quoted"')


class ClientWithToken(unittest.TestCase):
    def test_token_is_sent_and_a_wrong_one_refused(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            token_file = os.path.join(folder, "token")
            with open(token_file, "w") as f:
                f.write("s3cret\n")
            os.chmod(token_file, stat.S_IRUSR | stat.S_IWUSR)
            daemon = Daemon(["--token-file", token_file], seed=False)
            try:
                with mock.patch.dict(os.environ, {"KERNTUNE_TOKEN": "", "KERNTUNE_TOKEN_FILE": token_file}):
                    self.assertEqual(kerntune.Client(daemon.url).history(), [])
                with self.assertRaises(kerntune.ApiError) as caught:
                    kerntune.Client(daemon.url, token="wrong").history()
                self.assertEqual((caught.exception.status, caught.exception.code), (401, "unauthorized"))
            finally:
                daemon.stop()


if __name__ == "__main__":
    unittest.main()
