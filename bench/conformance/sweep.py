#!/usr/bin/env python3
"""kerntune's conformance sweep of the user paths: generated shapes of every
family through every search and both clients, each answer downloaded, launched as a user would
and checked. See bench/conformance/README.md; run it through bench/conformance/run.sh.

    run.sh [--part 1/2] [--seed N] [--out DIR] [--deadline-seconds 540] [--dry-run] ...
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import select
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "client", "python"))

import cases as case_gen  # noqa: E402
import report  # noqa: E402
from cases import Case, Caps, FamilySpec  # noqa: E402

FINAL = ("done", "failed", "cancelled")
BAD_VARIANT_STATUSES = ("crashed", "hang")  # a failure for a valid shape
# Statuses a variant may end in without anything to look at.
QUIET_VARIANT_STATUSES = ("measured", "pruned", "compiled", "unsupported_arch", "pending", "cancelled")
REPORT_RESERVE_S = 15.0  # kept back from the deadline for the checks of the last batch and the files


class Interrupted(Exception):
    """SIGTERM/SIGINT (a GPU call's time limit): stop, keep what was written, write the report."""


def check(result: str, why: str = "") -> Dict[str, str]:
    return {"result": result, "why": why}


# ---- the checker process --------------------------------------------------------------------------

class Verifier:
    """verify.py --serve, started on first use and again after a kernel killed it."""

    def __init__(self, log_path: str):
        self.log_path = log_path
        self.process: Optional[subprocess.Popen] = None
        self.hello: Optional[Dict[str, Any]] = None
        self.unavailable: Optional[str] = None
        self.log = open(log_path, "a", encoding="utf-8")

    def spawn(self) -> None:
        """Starts the process; importing PyTorch and making a context take seconds, so the sweep
        spawns it early and reads its greeting at the first check."""
        if self.process is None and not self.unavailable:
            self.process = subprocess.Popen([sys.executable, os.path.join(HERE, "verify.py"), "--serve"],
                                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True)
            self.hello = None

    def _start(self) -> None:
        self.spawn()
        line = self._read_line(180.0)
        reply = json.loads(line) if line else {"hello": None, "why": "no answer within 180 s"}
        if not reply.get("hello"):
            self.unavailable = reply.get("why") or "the checker did not start"
            self.stop()
            return
        self.hello = reply["hello"]

    def _read_line(self, timeout: float) -> Optional[str]:
        assert self.process is not None and self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], timeout)
        if not ready:
            return None
        line = self.process.stdout.readline()
        return line or None

    def check(self, request: Dict[str, Any], timeout: float) -> Dict[str, Any]:
        if self.unavailable:
            return {"ok": False, "unavailable": True, "why": f"no checker: {self.unavailable}"}
        if self.process is not None and self.process.poll() is not None:
            self.process = None  # died after its last reply: a fresh one
        if self.process is None or self.hello is None:
            self._start()
            if self.unavailable:
                return {"ok": False, "unavailable": True, "why": f"no checker: {self.unavailable}"}
        assert self.process is not None and self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
        except OSError as error:
            self.stop()
            return {"ok": False, "why": f"the checker died before the launch: {error}"}
        line = self._read_line(timeout)
        if line is None:
            self.stop()  # a kernel that never returns: the process goes, the next case gets a new one
            return {"ok": False, "why": f"the kernel did not finish within {timeout:.0f} s (launched by the checker)"}
        reply = json.loads(line)
        if reply.get("fatal"):
            self.stop()
        return reply

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.process = None


# ---- one case's job -------------------------------------------------------------------------------

@dataclass
class Run:
    case: Case
    search_sent: Optional[str]
    job_id: Optional[int] = None
    submit_error: Optional[str] = None
    process: Optional[subprocess.Popen] = None  # the CLI's `kerntune submit --wait`
    stderr_path: Optional[str] = None
    stdout_path: Optional[str] = None
    submitted: float = field(default_factory=time.monotonic)
    running_since: Optional[float] = None
    job_status: Optional[str] = None
    cancelled_for: Optional[str] = None  # "deadline" or "timeout"
    cli_exit: Optional[int] = None
    ended_at: Optional[float] = None  # when the job was first seen finished

    @property
    def finished(self) -> bool:
        if self.submit_error:
            return True
        if self.process is not None:
            return self.process.poll() is not None
        return self.job_status in FINAL


class Sweep:
    def __init__(self, args: argparse.Namespace, cases: List[Case], families: Dict[str, FamilySpec],
                 header: Dict[str, Any], deadline: float):
        self.args = args
        self.cases = cases
        self.families = families
        self.header = header
        self.deadline = deadline
        self.out = args.out
        self.work = os.path.join(args.work_dir, "cases")
        os.makedirs(self.work, exist_ok=True)
        self.records: List[Dict[str, Any]] = []
        self.results_path = os.path.join(self.out, "results.jsonl")
        open(self.results_path, "w").close()
        self.daemon: Any = None
        self.verifier = Verifier(os.path.join(self.out, "checker.log"))
        self.per_case_s = 8.0 if not args.compile_only else 30.0  # first guess, then measured
        self.active: List[Run] = []

    # ---- files --------------------------------------------------------------------------------

    def write_record(self, record: Dict[str, Any]) -> None:
        self.records.append(record)
        with open(self.results_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record, sort_keys=False) + "\n")

    def write_report(self) -> None:
        self.header["elapsed_seconds"] = round(time.monotonic() - self.header["_t0"], 1)
        header = {k: v for k, v in self.header.items() if not k.startswith("_")}
        header["summary"] = report.summarize(self.records)
        with open(os.path.join(self.out, "run.json"), "w", encoding="utf-8") as f:
            json.dump(header, f, indent=2)
        with open(os.path.join(self.out, "results.md"), "w", encoding="utf-8") as f:
            f.write(report.render(header, self.records))

    def finding(self, result: str, what: str, why: str) -> None:
        self.header.setdefault("findings", []).append({"result": result, "what": what, "why": why})

    # ---- setup --------------------------------------------------------------------------------

    def start_daemon(self) -> None:
        from daemon import Daemon
        self.daemon = Daemon(self.args.bin, os.path.join(self.args.work_dir, "daemon"),
                             os.path.join(self.out, "daemon.log"), use_token=not self.args.no_token)
        status, health = self.daemon.http("GET", "/healthz")
        self.header["daemon"] = {"url": self.daemon.url, "healthz": health, "token": not self.args.no_token}
        status, devices = self.daemon.http("GET", "/v1/devices")
        self.header["daemon"]["devices"] = devices

    def register_families(self) -> None:
        """Registers the example families (kernel_templates/examples/...) the way --register-with
        says, then checks that GET /v1/families lists every family's dims in its manifest's order
        (the CLI's positional shapes depend on it)."""
        import kerntune
        for family in self.families.values():
            if not family.registered:
                continue
            folder = os.path.join(REPO, family.folder)
            how = self.args.register_with
            began = time.monotonic()
            try:
                if how == "cli":
                    code, out, err = self.daemon.cli("family", "add", folder, timeout=300)
                    ok, why = code == 0, (out + err).strip()[-600:]
                elif how == "python":
                    registration = self.daemon.client.register_family(folder, timeout=300)
                    ok, why = registration.get("status") == "registered", json.dumps(
                        {k: registration.get(k) for k in ("status", "family", "compile")})[:600]
                else:  # raw HTTP: what the Python client does, spelled out
                    manifest_text = open(os.path.join(folder, "manifest.json"), encoding="utf-8").read()
                    sources = {n: open(os.path.join(folder, n), encoding="utf-8").read() for n in sorted(os.listdir(folder))
                               if os.path.splitext(n)[1] in (".cuh", ".cu", ".h")}
                    body = '{"manifest": ' + manifest_text + ', "sources": ' + json.dumps(sources) + "}"
                    status, registration = self._post_raw("/v1/families", body)
                    while status < 300 and registration.get("status") == "compiling":
                        time.sleep(0.5)
                        status, registration = self.daemon.http("GET", "/v1/families/registrations/" + registration["id"])
                    ok, why = registration.get("status") == "registered", json.dumps(registration)[:600]
            except (kerntune.KerntuneError, OSError, subprocess.TimeoutExpired) as error:
                ok, why = False, f"{type(error).__name__}: {error}"
            took = time.monotonic() - began
            self.finding("pass" if ok else "fail", f"register {family.name} with the {how} client ({took:.1f} s)", why)
        status, listing = self.daemon.http("GET", "/v1/families")
        served = {f["name"]: f for f in (listing or {}).get("families", [])}
        for family in self.families.values():
            entry = served.get(family.name)
            if entry is None:
                self.finding("fail", f"{family.name} listed by GET /v1/families", "missing")
                continue
            dims = entry.get("dims")
            names = [d.get("name") for d in dims] if isinstance(dims, list) else list(dims or {})
            ok = names == family.dim_names
            self.finding("pass" if ok else "fail", f"{family.name} dims in manifest order in GET /v1/families",
                         f"served {names}, manifest {family.dim_names}")

    def _post_raw(self, path: str, body_text: str) -> Tuple[int, Any]:
        import urllib.error
        import urllib.request
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.daemon.token:
            headers["Authorization"] = "Bearer " + self.daemon.token
        request = urllib.request.Request(self.daemon.url + path, data=body_text.encode(), method="POST",
                                         headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"{}")

    # ---- submitting and waiting ------------------------------------------------------------------

    def search_for(self, case: Case) -> Optional[str]:
        """The search the request carries: a compile-only job takes no learning search (the daemon
        refuses one, by design), so those go without, as "default" cases always do."""
        if case.search == "default" or (self.args.compile_only and case.search in ("local", "model", "predicted")):
            return None
        return case.search

    def submit(self, case: Case) -> Run:
        run = Run(case, self.search_for(case))
        if case.client == "cli":
            args = ["submit", case.family, "--shape", case.shape_arg(), "--dtype", case.dtype,
                    "--budget", str(case.budget)]
            if run.search_sent:
                args += ["--search", run.search_sent]
            if self.args.compile_only:
                args += ["--mode", "compile", "--arch", self.args.arch]
            args.append("--wait")
            run.stdout_path = os.path.join(self.work, f"{case.family}-{case.index:02d}.out")
            run.stderr_path = os.path.join(self.work, f"{case.family}-{case.index:02d}.err")
            with open(run.stdout_path, "w") as out, open(run.stderr_path, "w") as err:
                run.process = subprocess.Popen(self.daemon.cli_command(*args), stdout=out, stderr=err)
            return run
        body: Dict[str, Any] = {"family": case.family, "shape": dict(case.shape), "dtype": case.dtype,
                                "budget": case.budget, "mode": "compile" if self.args.compile_only else "tune"}
        if run.search_sent:
            body["search"] = run.search_sent
        if self.args.compile_only:
            body["arch"] = self.args.arch
        from daemon import client_submit_has_search
        import kerntune
        try:
            if client_submit_has_search() or not run.search_sent:
                kwargs = {k: body[k] for k in ("mode", "budget", "search", "arch") if k in body}
                job = self.daemon.client.submit(case.family, case.shape, case.dtype, **kwargs)
                run.job_id, run.job_status = job.id, job.status
            else:  # kerntune.Client.submit has no `search`: the job body goes over urllib
                status, reply = self.daemon.http("POST", "/v1/jobs", body)
                if status != 202:
                    raise kerntune.ApiError(status, (reply or {}).get("error", {}).get("code", "?"),
                                            (reply or {}).get("error", {}).get("message", str(reply)), reply)
                run.job_id, run.job_status = reply["id"], reply["status"]
        except kerntune.KerntuneError as error:
            run.submit_error = f"submit refused: {error}"
        return run

    def poll(self, run: Run) -> None:
        from daemon import job_id_from_cli_stderr
        if run.process is not None and run.job_id is None and run.stderr_path:
            with open(run.stderr_path, encoding="utf-8", errors="replace") as f:
                run.job_id = job_id_from_cli_stderr(f.read())
        if run.job_id is not None and run.job_status not in FINAL:
            status, job = self.daemon.http("GET", f"/v1/jobs/{run.job_id}")
            if status == 200:
                run.job_status = job.get("status")
                if run.job_status == "running" and run.running_since is None:
                    run.running_since = time.monotonic()
                if run.job_status in FINAL and run.ended_at is None:
                    run.ended_at = time.monotonic()
        # A CLI still waiting 30 s after its job ended is stuck; its exit code will say so.
        if run.process is not None and run.ended_at and time.monotonic() - run.ended_at > 30 \
                and run.process.poll() is None:
            run.process.kill()
            run.process.wait()

    def cancel(self, run: Run, why: str) -> None:
        if run.cancelled_for is None:
            run.cancelled_for = why
        if run.job_id is not None and run.job_status not in FINAL:
            self.daemon.http("DELETE", f"/v1/jobs/{run.job_id}")

    def wait(self, runs: List[Run], until: float) -> None:
        while True:
            now = time.monotonic()
            for run in runs:
                if run.finished and run.job_status in FINAL:
                    continue
                self.poll(run)
                if run.running_since and now - run.running_since > self.args.job_timeout:
                    self.cancel(run, "timeout")
            if all(r.finished for r in runs):
                return
            if now > until:
                for run in runs:
                    if not run.finished:
                        self.cancel(run, "deadline")
                end = time.monotonic() + 10
                while time.monotonic() < end and not all(r.finished for r in runs):
                    for run in runs:
                        self.poll(run)
                    time.sleep(0.3)
                for run in runs:
                    if run.process is not None and run.process.poll() is None:
                        run.process.kill()
                        run.process.wait()
                return
            time.sleep(0.5)

    # ---- checking a finished case ------------------------------------------------------------------

    def base_record(self, case: Case) -> Dict[str, Any]:
        record = case.to_json()
        record.update({"status": "not_run", "job_id": None, "checks": {}, "answer": None, "seed": self.header["seed"]})
        return record

    def finish(self, run: Run) -> Dict[str, Any]:
        case = run.case
        record = self.base_record(case)
        record["search_sent"] = run.search_sent
        checks: Dict[str, Dict[str, str]] = record["checks"]
        if run.process is not None:
            run.cli_exit = run.process.returncode
            record["cli_exit"] = run.cli_exit
            if run.job_id is None and run.stderr_path:
                from daemon import job_id_from_cli_stderr
                run.job_id = job_id_from_cli_stderr(open(run.stderr_path, errors="replace").read())
        record["job_id"] = run.job_id
        if run.submit_error or run.job_id is None:
            why = run.submit_error or ("the CLI printed no job id: " + self._cli_output(run))
            record["status"] = "submit_failed"
            checks["job_done"] = check("fail", why)
            return record
        status, job = self.daemon.http("GET", f"/v1/jobs/{run.job_id}")
        if status != 200:
            record["status"] = "unknown"
            checks["job_done"] = check("fail", f"GET /v1/jobs/{run.job_id}: {status} {job}")
            return record
        record["status"] = job["status"]
        record["reason"] = job.get("reason")
        record["job_wall_s"] = (job.get("stats") or {}).get("wall_seconds")
        record["progress"] = (job.get("progress") or {}).get("by_status")
        # No variant of ours reached the compiler: the space is empty for this (valid) shape, and a
        # tune job answers with the baseline alone. Not a failure; counted in the summary.
        record["space_empty"] = not any(n for st, n in (record["progress"] or {}).items()
                                        if st not in ("pruned", "unsupported_arch"))
        record["search_recorded"] = (job.get("search") or {}).get("name") if isinstance(job.get("search"), dict) else job.get("search")
        record["baseline_failed"] = job.get("baseline_failed")
        if run.cancelled_for == "deadline" and job["status"] == "cancelled":
            record["status"] = "cut"
            checks["job_done"] = check("skip", "cancelled at the run's deadline")
            return record
        if job["status"] == "done":
            checks["job_done"] = check("pass")
        else:
            why = f"{job['status']}: {job.get('reason')}"
            if run.cancelled_for == "timeout":
                why = f"still running after {self.args.job_timeout:.0f} s, cancelled ({why})"
            checks["job_done"] = check("fail", why)
        if run.process is not None:
            agrees = (run.cli_exit == 0) == (job["status"] == "done")
            checks["cli_exit"] = check("pass" if agrees else "fail",
                                       f"exit {run.cli_exit} for a job {job['status']}" +
                                       ("" if agrees else ": " + self._cli_output(run)))
        asked = {k.upper(): v for k, v in case.shape.items()}
        recorded = {k.upper(): v for k, v in (job.get("shape") or {}).items()}
        checks["shape_as_asked"] = check("pass" if asked == recorded else "fail",
                                         f"asked {case.shape_arg() if case.client == 'cli' else case.shape}, "
                                         f"job has {job.get('shape')}")
        self.check_variants(record, run.job_id)
        if self.args.compile_only:
            self.check_compiled(record)
        elif job["status"] == "done":
            self.check_answer(record, run, job)
        return record

    def _cli_output(self, run: Run) -> str:
        text = ""
        for path in (run.stdout_path, run.stderr_path):
            if path and os.path.exists(path):
                text += open(path, errors="replace").read()
        return " ".join(text.split())[-400:]

    def check_variants(self, record: Dict[str, Any], job_id: int) -> None:
        variants: List[Dict[str, Any]] = []
        cursor = None
        while True:
            query = "?exclude_pruned=1&limit=1000" + (f"&cursor={cursor}" if cursor else "")
            status, page = self.daemon.http("GET", f"/v1/jobs/{job_id}/variants{query}")
            if status != 200:
                record["checks"]["no_crash_hang"] = check("fail", f"cannot list the variants: {status} {page}")
                return
            variants += page.get("variants", [])
            cursor = page.get("next")
            if not cursor:
                break
        by_status: Dict[str, int] = {}
        for v in variants:
            by_status[v["status"]] = by_status.get(v["status"], 0) + 1
        keep = ("id", "status", "failed_gate", "reason", "template", "config")
        findings = [{k: v.get(k) for k in keep} for v in variants if v["status"] not in QUIET_VARIANT_STATUSES]
        record["variants"] = {"by_status": by_status, "findings": findings,
                              "compiled_ids": [v["id"] for v in variants if v.get("has_kernel")][:3]}
        bad = [f for f in findings if f["status"] in BAD_VARIANT_STATUSES]
        record["checks"]["no_crash_hang"] = check(
            "fail" if bad else "pass",
            "; ".join(f"variant {f['id']} {f['status']} at {f['failed_gate']}: {(f['reason'] or '')[:160]}" for f in bad[:4]))

    def check_compiled(self, record: Dict[str, Any]) -> None:
        """Compile-only: something compiled, and its cubin and launch for the shape download."""
        variants = record.get("variants") or {}
        compiled = (variants.get("by_status") or {}).get("compiled", 0)
        checks = record["checks"]
        if not compiled and record.get("space_empty"):
            checks["compiled"] = check("skip", f"every variant was pruned for this shape ({record.get('progress')})")
        else:
            checks["compiled"] = check("pass" if compiled else "fail",
                                       f"{compiled} variants compiled ({record.get('progress')})")
        ids = variants.get("compiled_ids") or []
        if not ids:
            checks["kernel_download"] = check("skip", "nothing compiled")
            return
        try:
            kernel = self.daemon.client.kernel(ids[0])
            status, launch = self.daemon.http("GET", f"/v1/variants/{ids[0]}/launch")
            shape_ok = status == 200 and {k.upper(): v for k, v in launch.get("shape", {}).items()} == \
                {k.upper(): v for k, v in record["shape"].items()}
            ok = len(kernel.cubin) > 0 and shape_ok
            checks["kernel_download"] = check("pass" if ok else "fail",
                                              f"variant {ids[0]}: {len(kernel.cubin)} bytes for {kernel.arch}, "
                                              f"launch {status} shape {launch.get('shape') if status == 200 else launch}")
        except Exception as error:  # noqa: BLE001 (recorded)
            checks["kernel_download"] = check("fail", f"{type(error).__name__}: {error}")

    def fetch_best(self, record: Dict[str, Any], run: Run) -> Tuple[Optional[Dict[str, Any]], str]:
        case = run.case
        if case.client == "cli":
            code, out, err = self.daemon.cli("best", case.family, "--shape", case.shape_arg(), "--dtype", case.dtype,
                                             json_output=True)
            if code != 0:
                return None, f"kerntune best exit {code}: {' '.join((out + err).split())[-300:]}"
            try:
                return json.loads(out), ""
            except ValueError:
                return None, f"kerntune --json best printed no JSON: {out[:200]}"
        import kerntune
        try:
            return self.daemon.client.best(case.family, case.shape, case.dtype).raw, ""
        except kerntune.KerntuneError as error:
            return None, f"GET /v1/best (Python client): {error}"

    def download(self, run: Run, variant_id: int) -> Tuple[Optional[str], str]:
        path = os.path.join(self.work, f"variant-{variant_id}.cubin")
        if run.case.client == "cli":
            code, out, err = self.daemon.cli("kernel", str(variant_id), "-o", path)
            if code != 0:
                return None, f"kerntune kernel exit {code}: {' '.join((out + err).split())[-300:]}"
        else:
            import kerntune
            try:
                self.daemon.client.kernel(variant_id, path)
            except kerntune.KerntuneError as error:
                return None, f"GET /v1/variants/{variant_id}/kernel: {error}"
        return path, ""

    def check_answer(self, record: Dict[str, Any], run: Run, job: Dict[str, Any]) -> None:
        checks = record["checks"]
        best, why = self.fetch_best(record, run)
        if best is None:
            checks["best_answers"] = check("fail", why)
            return
        source = "baseline" if best.get("variant_id") is None else "ours"
        own = best.get("best_own") if source == "baseline" else best
        final = best.get("final") or {}
        answer = {
            "source": source, "job_id": best.get("job_id"), "variant_id": best.get("variant_id"),
            "template": best.get("template"), "config": best.get("config"), "median_us": best.get("median_us"),
            "baseline": best.get("baseline"), "baseline_in_process": best.get("baseline_in_process"),
            "baseline_median_us": best.get("baseline_median_us"), "speedup": best.get("speedup"),
            "speedup_low": best.get("speedup_low"), "speedup_high": best.get("speedup_high"),
            "verdict": best.get("verdict"), "own_variant_id": (own or {}).get("id") or (own or {}).get("variant_id"),
            "own_median_us": (own or {}).get("median_us"),
        }
        record["answer"] = answer
        same_job = best.get("job_id") == run.job_id
        checks["best_answers"] = check("pass" if same_job else "fail",
                                       f"{source} answer" + ("" if same_job else
                                                             f" from job {best.get('job_id')}, not this job {run.job_id}"))
        self.check_speed(record, best, job)
        launch = best.get("launch")
        if not launch:
            if source == "baseline" and not own:
                checks["launch_params"] = check("skip", "the baseline answers and no variant of ours was measured")
            else:
                checks["launch_params"] = check("fail", "/v1/best sent no launch object for our variant")
            return
        missing = [k for k in ("kernel", "grid", "block", "dynamic_smem_bytes", "params", "buffers") if k not in launch]
        launch_shape = {k.upper(): v for k, v in (launch.get("shape") or {}).items()}
        asked = {k.upper(): v for k, v in run.case.shape.items()}
        if missing or launch_shape != asked:
            checks["launch_params"] = check("fail", f"missing {missing}" if missing else
                                            f"launch evaluated for {launch.get('shape')}, asked {run.case.shape}")
            return
        checks["launch_params"] = check("pass", f"{launch['kernel']} grid {launch['grid']} block {launch['block']} "
                                                f"smem {launch['dynamic_smem_bytes']}")
        variant_id = launch.get("variant_id") or answer["own_variant_id"]
        path, why = self.download(run, int(variant_id))
        if path is None:
            checks["kernel_correct"] = check("fail", why)
            return
        family = self.families[run.case.family]
        request = {"id": run.case.id, "family": run.case.family, "dtype": run.case.dtype, "shape": run.case.shape,
                   "launch": launch, "cubin_path": path, "tolerance": family.tolerance.get(run.case.dtype, {}),
                   "seed": (int(self.header["seed"]) * 7919 + run.case.index * 104729 + len(run.case.family)) % (2 ** 62),
                   "repeats": self.args.verify_repeats}
        left = self.deadline - time.monotonic() - 5.0
        if left < 5.0:
            checks["kernel_correct"] = check("skip", "no time left before the deadline to launch it")
            return
        reply = self.verifier.check(request, min(self.args.check_timeout, left))
        whose = "our answer" if source == "ours" else f"our best variant {variant_id} (the baseline answers)"
        record["correctness"] = reply.get("stats")
        record["user_launch_us"] = reply.get("user_us")
        if reply.get("unavailable"):
            checks["kernel_correct"] = check("fail", reply["why"])
        else:
            checks["kernel_correct"] = check("pass" if reply.get("ok") else "fail",
                                             f"{whose}: " + (reply.get("why") or "within the bound"))

    def check_speed(self, record: Dict[str, Any], best: Dict[str, Any], job: Dict[str, Any]) -> None:
        """The answer is never slower than the baseline: it is the baseline, or its time is at most
        the top of the baseline's interval from the job's final comparison (median x (1 + its
        relative noise)), or, without a final comparison, below the baseline's first-pass median.
        Also records whether it reaches the stricter bottom of that interval."""
        checks, answer = record["checks"], record["answer"]
        if best.get("baseline_in_process") is False:
            checks["not_slower"] = check("skip", f"the baseline ({best.get('baseline')}) is not timed in the job")
            return
        if answer["source"] == "baseline":
            checks["not_slower"] = check("pass", "the answer is the baseline")
            answer["at_least_baseline_low"] = True
            return
        ours, base = best.get("median_us"), best.get("baseline_median_us")
        basis = (best.get("verdict") or {}).get("basis")
        noise = 0.0
        if base is None and basis == "first_pass":  # not in a final comparison: the first pass decided
            base = first_pass_baseline_us(job)
        elif base is not None:
            final = ((job.get("comparison") or {}).get("final") or {})
            noise = ((final.get("baseline_timing") or {}).get("rel_noise")) or 0.0
        if ours is None or base is None:
            no_baseline = basis == "no_baseline"
            checks["not_slower"] = check("skip" if no_baseline else "fail",
                                         f"no times to compare (ours {ours}, baseline {base}, basis {basis})")
            return
        high, low = base * (1 + noise), base * (1 - noise)
        answer["baseline_interval_us"] = [round(low, 3), round(high, 3)]
        answer["basis"] = basis
        answer["at_least_baseline_low"] = ours <= low or (best.get("speedup_low") or 0) > 1.0
        slower = ours > high and (best.get("speedup_high") is None or best["speedup_high"] < 1.0)
        checks["not_slower"] = check("fail" if slower else "pass",
                                     f"ours {ours:.2f} us, baseline {base:.2f} us [{low:.2f}, {high:.2f}] ({basis})")

    # ---- the run ------------------------------------------------------------------------------------

    def run(self) -> None:
        pending = list(self.cases)
        try:
            if not self.args.compile_only:
                self.verifier.spawn()
            self.start_daemon()
            self.register_families()
            self.write_report()
            while pending:
                left = self.deadline - time.monotonic() - REPORT_RESERVE_S
                if left < min(self.per_case_s, 20.0):
                    self.header["stopped"] = f"{len(pending)} cases left at the deadline"
                    break
                size = max(1, min(self.args.concurrency, int(left / self.per_case_s)))
                batch, pending = pending[:size], pending[size:]
                began = time.monotonic()
                runs = self.active = [self.submit(case) for case in batch]
                self.wait(runs, self.deadline - REPORT_RESERVE_S)
                for run in runs:
                    self.write_record(self.finish(run))
                took = (time.monotonic() - began) / len(batch)
                self.per_case_s = 0.5 * self.per_case_s + 0.5 * took
                self.write_report()
                print(f"[{time.monotonic() - self.header['_t0']:.0f} s] {len(self.records)} cases, "
                      f"{len(pending)} left, {took:.1f} s per case", flush=True)
        except Interrupted:
            self.header["stopped"] = "interrupted (SIGTERM/SIGINT)"
        except Exception as error:
            self.header["stopped"] = f"{type(error).__name__}: {error}"[:2000]
            raise
        finally:
            for run in self.active:  # interrupted mid-batch: no CLI outlives the sweep
                if run.process is not None and run.process.poll() is None:
                    run.process.kill()
                    run.process.wait()
            done_ids = {r["id"] for r in self.records}
            for case in self.cases:
                if case.id not in done_ids:
                    self.write_record(self.base_record(case))
            if self.verifier.hello:
                self.header["torch"] = self.verifier.hello
                self.header["environment"].setdefault("device", self.verifier.hello.get("device"))
            self.verifier.stop()
            if self.daemon is not None:
                self.daemon.stop()
                trim_log(os.path.join(self.out, "daemon.log"))
            self.write_report()


# ---- environment ------------------------------------------------------------------------------------

def trim_log(path: str, limit: int = 12 << 20) -> None:
    """Keeps a log within what a GPU call brings back (16 MiB a file): its first MiB and its end."""
    if not os.path.exists(path) or os.path.getsize(path) <= limit:
        return
    with open(path, "rb") as f:
        head = f.read(1 << 20)
        f.seek(-(limit - (2 << 20)), os.SEEK_END)
        tail = f.read()
    with open(path, "wb") as f:
        f.write(head + b"\n[... trimmed by the conformance sweep ...]\n" + tail)


def first_pass_baseline_us(job: Dict[str, Any]) -> Optional[float]:
    """The baseline's first-pass median of a job: its first GPU's entry, else reference_us."""
    for entry in (job.get("baselines") or {}).values():
        if isinstance(entry, dict) and isinstance(entry.get("median_us"), (int, float)):
            return float(entry["median_us"])
    return job.get("reference_us")


def environment(args: argparse.Namespace) -> Dict[str, Any]:
    env: Dict[str, Any] = {"host": platform.node(), "python": platform.python_version()}
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,compute_cap", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout.strip().splitlines()
        if out:
            name, driver, cap = [x.strip() for x in out[0].split(",")][:3]
            env.update({"device": name, "driver": driver, "arch": "sm_" + cap.replace(".", ""), "gpus": len(out)})
    except (OSError, subprocess.TimeoutExpired, ValueError):
        pass
    if args.compile_only:
        env.setdefault("device", f"none (compile-only for {args.arch})")
        env.setdefault("arch", args.arch)
    return env


def git_commit(explicit: Optional[str]) -> str:
    if explicit:
        return explicit
    if os.environ.get("KERNTUNE_COMMIT"):
        return os.environ["KERNTUNE_COMMIT"]
    try:
        done = subprocess.run(["git", "-C", REPO, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        if done.returncode == 0:
            dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                                   capture_output=True, text=True, timeout=10).stdout.strip()
            return done.stdout.strip() + (" (with local changes)" if dirty else "")
    except (OSError, subprocess.TimeoutExpired):
        pass
    path = os.path.join(REPO, ".device", "COMMIT")  # written next to the binaries, if the packer did
    if os.path.exists(path):
        return open(path).read().strip()
    return "unknown (no git here; pass --commit)"


def parse_part(text: str) -> Tuple[int, int]:
    try:
        part, parts = (int(x) for x in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"--part {text!r}: expected I/N, e.g. 1/2") from None
    if not 1 <= part <= parts:
        raise argparse.ArgumentTypeError(f"--part {text!r}: I must be in 1..N")
    return part, parts


def default_bin() -> str:
    for candidate in (os.path.join(REPO, ".device", "bin"), os.path.join(REPO, "build", "bin")):
        if os.path.exists(os.path.join(candidate, "kerntuned")):
            return candidate
    return os.path.join(REPO, ".device", "bin")


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--part", default="1/1", help="run part I of N (each part: a share of every family and kind)")
    p.add_argument("--seed", type=int, help="generator seed (default: the time; recorded, so a run can be repeated)")
    p.add_argument("--shapes-per-family", type=int, default=32, help="shapes per family over all parts (>= 30)")
    p.add_argument("--families", nargs="*", help="only these families (default: all four)")
    p.add_argument("--limit", type=int, help="run only the first N cases of the part")
    p.add_argument("--out", default=os.environ.get("OUT") or "conformance-out", help="output folder ($OUT)")
    p.add_argument("--work-dir", help="scratch folder: store, token, CLI logs, cubins (default: OUT/../ a temp dir)")
    p.add_argument("--bin", default=default_bin(), help="folder with kerntuned, kerntune, kerntune-worker")
    p.add_argument("--deadline-seconds", type=float, default=540.0,
                   help="stop starting cases, cancel running ones and write the report by then (from start)")
    p.add_argument("--concurrency", type=int, default=8, help="jobs submitted together (the daemon queues them)")
    p.add_argument("--job-timeout", type=float, default=120.0, help="cancel a job running longer than this (s)")
    p.add_argument("--check-timeout", type=float, default=60.0, help="a launched kernel that takes longer hangs (s)")
    p.add_argument("--verify-repeats", type=int, default=10, help="timed launches after the checked one")
    p.add_argument("--max-shape-elements", type=int, default=case_gen.DEFAULT_MAX_ELEMENTS)
    p.add_argument("--max-shape-flops", type=float, default=case_gen.DEFAULT_MAX_FLOPS)
    p.add_argument("--max-budget", type=int, help="cap every budget (e.g. 2 for a quick local compile-only run)")
    p.add_argument("--compile-only", action="store_true",
                   help="compile-mode jobs (no GPU): plumbing only, no launch or correctness checks")
    p.add_argument("--arch", default="sm_90a", help="target arch of --compile-only")
    p.add_argument("--register-with", choices=("cli", "python", "http"),
                   help="client registering the example family (default: cli for odd parts, python for even)")
    p.add_argument("--commit", help="git commit to record (default: git rev-parse HEAD, or $KERNTUNE_COMMIT)")
    p.add_argument("--no-token", action="store_true", help="start the daemon without --token-file")
    p.add_argument("--dry-run", "--list", dest="dry_run", action="store_true",
                   help="print the part's cases for the seed and exit (no daemon, no GPU)")
    p.add_argument("--json", action="store_true", help="with --dry-run: one JSON object per case")
    p.add_argument("--render", metavar="DIR", help="rebuild DIR/results.md from DIR/run.json and DIR/results.jsonl")
    args = p.parse_args(argv)
    args.part_index, args.parts = parse_part(args.part)
    return args


def print_cases(cases: List[Case], as_json: bool) -> None:
    if as_json:
        for case in cases:
            print(json.dumps(case.to_json()))
        return
    print(f"{'case':<20} {'kind':<10} {'shape':<28} {'dtype':<5} {'search':<10} {'budget':>6} {'client':<16} tags")
    for c in cases:
        client = c.client + (f"/{c.shape_syntax}" if c.client == "cli" else "")
        shape = ",".join(f"{k}={v}" for k, v in c.shape.items())
        print(f"{c.id:<20} {c.kind:<10} {shape:<28} {c.dtype:<5} {c.search:<10} {c.budget or 'all':>6} {client:<16} "
              f"{' '.join(c.tags)}")


def main(argv: Optional[List[str]] = None) -> int:
    t0 = time.monotonic()
    args = parse_args(argv)
    if args.render:
        header = json.load(open(os.path.join(args.render, "run.json")))
        records = report.read_records(os.path.join(args.render, "results.jsonl"))
        with open(os.path.join(args.render, "results.md"), "w") as f:
            f.write(report.render(header, records))
        return 0
    seed = args.seed if args.seed is not None else int(time.time())
    if args.shapes_per_family < 30:
        print(f"note: {args.shapes_per_family} shapes per family (the sweep's floor is 30)", file=sys.stderr)
    families = case_gen.load_families(REPO, args.families)
    caps = Caps(args.max_shape_elements, args.max_shape_flops)
    cases = case_gen.generate(families, seed, args.shapes_per_family, caps, args.part_index, args.parts)
    if args.max_budget is not None:
        for case in cases:
            case.budget = args.max_budget if case.budget == 0 else min(case.budget, args.max_budget)
    if args.limit is not None:
        cases = cases[:args.limit]
    if args.dry_run:
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `run.sh --dry-run | head` ends quietly
        if not args.json:
            print(f"seed {seed}, part {args.part}: {len(cases)} cases")
        print_cases(cases, args.json)
        return 0
    if args.register_with is None:
        args.register_with = "cli" if args.part_index % 2 == 1 else "python"
    os.makedirs(args.out, exist_ok=True)
    if args.work_dir is None:
        import tempfile
        args.work_dir = tempfile.mkdtemp(prefix="kerntune-conformance-")
    reproduce = (f"bench/conformance/run.sh --part {args.part} --seed {seed} --shapes-per-family "
                 f"{args.shapes_per_family}" + (f" --families {' '.join(args.families)}" if args.families else "")
                 + (f" --limit {args.limit}" if args.limit else "")
                 + (f" --max-budget {args.max_budget}" if args.max_budget is not None else "")
                 + (f" --compile-only --arch {args.arch}" if args.compile_only else "")
                 + f" --register-with {args.register_with}")
    header: Dict[str, Any] = {
        "_t0": t0, "part": args.part, "seed": seed, "reproduce": reproduce,
        "started_at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": git_commit(args.commit), "environment": environment(args),
        "mode": f"compile-only ({args.arch})" if args.compile_only else "tune",
        "shapes_per_family": args.shapes_per_family, "deadline_seconds": args.deadline_seconds,
        "caps": {"max_shape_elements": args.max_shape_elements, "max_shape_flops": args.max_shape_flops},
        "register_with": args.register_with, "cases": len(cases), "findings": [],
    }
    from daemon import client_submit_has_search
    if not client_submit_has_search():
        header["findings"].append({"result": "note", "what": "kerntune.Client.submit has no `search` argument",
                                   "why": "HTTP cases with a search post the job body with urllib"})

    def interrupt(signum: int, frame: Any) -> None:
        raise Interrupted()

    signal.signal(signal.SIGTERM, interrupt)
    signal.signal(signal.SIGINT, interrupt)
    print(f"conformance sweep: seed {seed}, part {args.part}, {len(cases)} cases, out {args.out}", flush=True)
    sweep = Sweep(args, cases, {f.name: f for f in families}, header, t0 + args.deadline_seconds)
    sweep.run()
    summary = report.summarize(sweep.records)
    print(json.dumps({k: v for k, v in summary.items() if k != "by_family"}), flush=True)
    failed = summary["failed_jobs"] + summary["wrong_answers"] + summary["slower_than_baseline"] + \
        summary["crash_or_hang_cases"] + summary["other_failures"]
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
