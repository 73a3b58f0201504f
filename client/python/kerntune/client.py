"""kerntune.Client: one method per verb of the `kerntune` CLI, over the daemon's HTTP API
(docs/api.md), with the standard library's urllib only."""

from __future__ import annotations

import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Iterable, Iterator, List, Optional, TextIO, Union

from .errors import (ApiError, DaemonUnreachable, FamilyNotRegistered, JobFailed, NotTunedYet, TokenError,
                     error_from_response)
from . import batches as batch_text
from .models import Batch, Best, Family, Job, JobEvent, Kernel, ParetoFront, Prediction, Variant, answer_from_json
from .progress import ProgressBar

DEFAULT_SERVER = "http://127.0.0.1:8080"
PAGE_LIMIT = 1000  # the API's largest page


def _control_free(token: str, source: str) -> str:
    # A control character (a stray CR or LF above all) would break or inject into the header.
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in token):
        raise TokenError(f"the token from {source} holds a control character")
    return token


def read_token_file(path: str) -> str:
    """The token on the first line of a file, as kerntune's --token-file reads it."""
    try:
        with open(path, encoding="utf-8") as f:
            first = f.readline().strip()
    except OSError as error:
        raise TokenError(f"token file {path} cannot be read: {error.strerror}") from None
    if not first:
        raise TokenError(f"token file {path} holds no token on its first line")
    return _control_free(first, f"token file {path}")


def token_from_environment() -> Optional[str]:
    """$KERNTUNE_TOKEN if set and not empty, else the token of the file $KERNTUNE_TOKEN_FILE names,
    else None: the same rule as the C++ client and the CLI."""
    token = os.environ.get("KERNTUNE_TOKEN", "")
    if token:
        return _control_free(token.strip(), "$KERNTUNE_TOKEN")
    path = os.environ.get("KERNTUNE_TOKEN_FILE", "")
    if path:
        return read_token_file(path)
    return None


def _shape_query(shape: Dict[str, int]) -> Dict[str, str]:
    return {str(k): str(int(v)) for k, v in shape.items()}


class Client:
    """A connection to kerntuned. `server` defaults to $KERNTUNE_SERVER, else
    http://127.0.0.1:8080; `token` to $KERNTUNE_TOKEN / $KERNTUNE_TOKEN_FILE."""

    def __init__(self, server: Optional[str] = None, token: Optional[str] = None, timeout: float = 30.0):
        server = server or os.environ.get("KERNTUNE_SERVER") or DEFAULT_SERVER
        if "://" not in server:
            server = "http://" + server
        if not server.startswith("http://"):
            raise ValueError(f"bad server URL {server!r}: only http:// is supported")
        self.server = server.rstrip("/")
        self.token = _control_free(token, "the token argument") if token else token_from_environment()
        self.timeout = timeout

    # ---- transport ----------------------------------------------------------------------

    def _request(self, method: str, path: str, query: Optional[Dict[str, Any]] = None,
                 body: Any = None) -> "tuple[bytes, Dict[str, str]]":
        url = self.server + path
        if query:
            url += "?" + urllib.parse.urlencode({k: v for k, v in query.items() if v is not None})
        data = None
        headers = {"Accept": "application/json"}
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.read(), dict(response.headers.items())
        except urllib.error.HTTPError as error:
            raise error_from_response(error.code, error.read()) from None
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise DaemonUnreachable(self.server, str(reason)) from None

    def _json(self, method: str, path: str, query: Optional[Dict[str, Any]] = None, body: Any = None) -> Any:
        payload, _ = self._request(method, path, query, body)
        return json.loads(payload.decode("utf-8"))

    def _all_pages(self, path: str, key: str, query: Dict[str, Any], limit: Optional[int] = None) -> List[Any]:
        items: List[Any] = []
        cursor = None
        while True:
            page_query = dict(query)
            page_query["limit"] = PAGE_LIMIT if limit is None else min(PAGE_LIMIT, limit - len(items))
            if cursor:
                page_query["cursor"] = cursor
            page = self._json("GET", path, page_query)
            items.extend(page[key])
            cursor = page.get("next")
            if not cursor or (limit is not None and len(items) >= limit):
                return items

    # ---- the verbs ----------------------------------------------------------------------

    def health(self) -> Dict[str, Any]:
        return self._json("GET", "/healthz")

    def families(self) -> List[Family]:
        """The loaded families, typed (family["name"] still reads the JSON)."""
        return [Family.from_json(f) for f in self._json("GET", "/v1/families")["families"]]

    def devices(self) -> Dict[str, Any]:
        return self._json("GET", "/v1/devices")

    def register_family(self, folder: Optional[str] = None, *, manifest: Optional[Dict[str, Any]] = None,
                        sources: Optional[Dict[str, str]] = None, wait: bool = True, interval: float = 0.5,
                        timeout: Optional[float] = 600.0) -> Dict[str, Any]:
        """Registers a kernel family with a daemon started with --allow-user-families (POST
        /v1/families): from `folder` (its manifest.json and every .cuh, .cu and .h beside it), or
        from `manifest` and `sources` (file name -> text). The daemon checks it (ApiError 400,
        409, 413 or 422 with every manifest problem) and compiles one variant; with wait=True
        this polls until it is done and returns the registration (status "registered"), or raises
        FamilyNotRegistered carrying NVRTC's log. wait=False returns at once (status "compiling",
        or "registered" with unchanged=True when this version is already registered)."""
        if folder is not None:
            with open(os.path.join(folder, "manifest.json"), encoding="utf-8") as file:
                manifest = json.load(file)
            sources = {}
            for name in sorted(os.listdir(folder)):
                path = os.path.join(folder, name)
                if os.path.isfile(path) and os.path.splitext(name)[1] in (".cuh", ".cu", ".h"):
                    # A link that leads out of the folder would send a file never meant to be shared.
                    real, root = os.path.realpath(path), os.path.realpath(folder)
                    if os.path.islink(path) and os.path.commonpath([real, root]) != root:
                        raise ValueError(f"{path} is a symbolic link to {real}, outside the family's "
                                         "folder: not uploaded (copy the file into the folder instead)")
                    with open(path, encoding="utf-8") as file:
                        sources[name] = file.read()
        if manifest is None or sources is None:
            raise ValueError("register_family needs a folder, or a manifest and its sources")
        registration = self._json("POST", "/v1/families", body={"manifest": manifest, "sources": sources})
        deadline = None if timeout is None else time.monotonic() + timeout
        while wait and registration["status"] == "compiling":
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"family {registration['family']} still compiling after {timeout} s")
            time.sleep(interval)
            registration = self.family_registration(registration["id"])
        if registration["status"] == "failed":
            raise FamilyNotRegistered(registration)
        return registration

    def family_registration(self, registration_id: str) -> Dict[str, Any]:
        """GET /v1/families/registrations/{id}: a registration's state (compiling, registered,
        failed) with the compile's outcome, also after a restart of the daemon."""
        return self._json("GET", "/v1/families/registrations/" + urllib.parse.quote(str(registration_id), safe=""))

    def submit(self, family: str, shape: Dict[str, int], dtype: str, *, mode: str = "tune",
               arch: Optional[str] = None, device: Optional[Union[int, str]] = None,
               budget: Optional[int] = None, pipeline: Optional[str] = None,
               configs: Optional[List[Dict[str, Any]]] = None, search: Optional[str] = None,
               search_seconds: Optional[float] = None,
               search_patience: Optional[int] = None) -> Job:
        """POST /v1/jobs; the job as queued. search: "local", "model", "random", "exhaustive" or "predicted"
        (None: the daemon's default for the budget), with its stop rules search_seconds and
        search_patience, as the CLI's --search, --search-seconds and --search-patience."""
        body: Dict[str, Any] = {"family": family, "shape": dict(shape), "dtype": dtype, "mode": mode}
        for name, value in (("arch", arch), ("device", device), ("budget", budget),
                            ("pipeline", pipeline), ("configs", configs), ("search", search),
                            ("search_seconds", search_seconds),
                            ("search_patience", search_patience)):
            if value is not None:
                body[name] = value
        return Job.from_json(self._json("POST", "/v1/jobs", body=body))

    def plan(self, family: str, shape: Dict[str, int], dtype: str, *, mode: str = "tune",
             arch: Optional[str] = None, device: Optional[Union[int, str]] = None,
             budget: Optional[int] = None, search: Optional[str] = None) -> Dict[str, Any]:
        """POST /v1/jobs?dry_run=1, as `kerntune plan`: what the job would be before it runs
        (feasible configs per template, pruned counts by constraint, what the budget runs, an
        estimated time from the daemon's rates); nothing is queued."""
        body: Dict[str, Any] = {"family": family, "shape": dict(shape), "dtype": dtype, "mode": mode}
        for name, value in (("arch", arch), ("device", device), ("budget", budget), ("search", search)):
            if value is not None:
                body[name] = value
        return self._json("POST", "/v1/jobs", {"dry_run": "1"}, body=body)

    def job(self, job_id: int) -> Job:
        return Job.from_json(self._json("GET", f"/v1/jobs/{int(job_id)}"))

    def cancel(self, job_id: int) -> Job:
        return Job.from_json(self._json("DELETE", f"/v1/jobs/{int(job_id)}"))

    def submit_batch(self, problems: Union[str, List[Dict[str, Any]]], *,
                     device: Optional[Union[int, str]] = None, budget_per_shape: Optional[int] = None,
                     search: Optional[str] = None, retune: bool = False, label: Optional[str] = None,
                     dry_run: bool = False, minutes: Optional[float] = None) -> Batch:
        """POST /v1/batches: problems ([{family, shape, dtype, share, calls}], or the path of a
        shapes file kerntune.torch.record wrote) tuned largest share first; the daemon skips those
        tuned and current on the GPU model, waits on those already being tuned and refuses, each
        with its reason, those a job would be refused. budget_per_shape: variants per problem (the
        daemon's default 64; 0 = the whole space). minutes: the daemon cancels the batch's own jobs
        left unfinished after this long, watched or not. dry_run: the plan, nothing queued."""
        if isinstance(problems, str):
            path = problems
            problems, _ = batch_text.problems_from_shapes_file(path)
            if label is None:
                label = os.path.basename(path)
            if not problems:
                raise ValueError(f"{path} holds no problem a family takes")
        body: Dict[str, Any] = {"problems": list(problems), "retune": retune, "dry_run": dry_run}
        for name, value in (("device", device), ("budget_per_shape", budget_per_shape), ("search", search),
                            ("label", label), ("minutes", minutes)):
            if value is not None:
                body[name] = value
        return Batch.from_json(self._json("POST", "/v1/batches", body=body))

    def batch(self, batch_id: int) -> Batch:
        return Batch.from_json(self._json("GET", f"/v1/batches/{int(batch_id)}"))

    def batches(self, limit: int = 100) -> List[Batch]:
        """The newest batches first, each with its counts (not its problems)."""
        return [Batch.from_json(b) for b in self._all_pages("/v1/batches", "batches", {}, limit)]

    def cancel_batch(self, batch_id: int) -> Batch:
        """Cancels the batch's own unfinished jobs (those it joined belong to their requests)."""
        return Batch.from_json(self._json("DELETE", f"/v1/batches/{int(batch_id)}"))

    def wait_batch(self, batch_id: int, *, progress: bool = True, interval: float = 1.0,
                   timeout: Optional[float] = None, stream: Optional[TextIO] = None) -> Batch:
        """Polls the batch until it ends, one progress line on `stream` (stderr) unless
        progress=False. TimeoutError after `timeout` seconds (the batch goes on in the daemon)."""
        out = stream or sys.stderr
        tty = hasattr(out, "isatty") and out.isatty()
        deadline = None if timeout is None else time.monotonic() + timeout
        last = None
        while True:
            batch = self.batch(batch_id)
            line = batch_text.render(batch)
            if progress and line != last:
                out.write(("\r\x1b[K" + line) if tty else line + "\n")
                out.flush()
                last = line
            if batch.finished:
                if progress and tty:
                    out.write("\n")
                return batch
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"batch {batch_id} still {batch.status} after {timeout} s")
            time.sleep(interval)

    def tune_all(self, problems: Union[str, List[Dict[str, Any]]], *, budget_per_shape: Optional[int] = None,
                 minutes: Optional[float] = None, device: Optional[Union[int, str]] = None,
                 search: Optional[str] = None, retune: bool = False, progress: bool = True,
                 interval: float = 1.0, stream: Optional[TextIO] = None) -> Batch:
        """As `kerntune tune-all`: submit_batch, then wait_batch; after `minutes` what is left is
        cancelled and the batch waited on to its end. The batch as it ended (batch.answers)."""
        batch = self.submit_batch(problems, device=device, budget_per_shape=budget_per_shape, search=search,
                                  retune=retune, minutes=minutes)
        if batch.finished:
            return batch
        try:
            return self.wait_batch(batch.id, progress=progress, interval=interval, stream=stream,
                                   timeout=None if minutes is None else minutes * 60.0)
        except TimeoutError:
            try:
                self.cancel_batch(batch.id)
            except ApiError as error:
                if error.code != "batch_finished":
                    raise
            return self.wait_batch(batch.id, progress=progress, interval=interval, stream=stream)

    def events(self, job_id: int) -> Iterator[JobEvent]:
        """Follows GET /v1/jobs/{id}/events: yields JobEvent("status" | "progress" | "best" |
        "end", data) as the daemon sends them, and returns after "end" (the daemon then closes
        the stream). The first events give the job's current state, later ones what changed.
        ApiError for an unknown job (404) or when the daemon's streams are at their cap (503);
        DaemonUnreachable when the stream breaks."""
        for event in self._event_stream(job_id):
            if event is not None:
                yield event

    def _event_stream(self, job_id: int) -> Iterator[Optional[JobEvent]]:
        """As events(), with None for every heartbeat comment (every 15 s), so a caller with a
        deadline gets control back while a job is quiet."""
        headers = {"Accept": "text/event-stream"}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        request = urllib.request.Request(f"{self.server}/v1/jobs/{int(job_id)}/events", headers=headers)
        # Each read waits at most this long: the daemon's heartbeats keep a live stream under it.
        read_timeout = max(self.timeout, 45.0)
        try:
            with urllib.request.urlopen(request, timeout=read_timeout) as response:
                name, data = "message", []
                for raw in response:
                    line = raw.decode("utf-8").rstrip("\r\n")
                    if not line:
                        if data:
                            event = JobEvent(name, json.loads("\n".join(data)))
                            yield event
                            if event.name == "end":
                                return
                        name, data = "message", []
                    elif line.startswith(":"):
                        yield None
                    else:
                        field_name, _, value = line.partition(":")
                        value = value[1:] if value.startswith(" ") else value
                        if field_name == "event":
                            name = value
                        elif field_name == "data":
                            data.append(value)
        except urllib.error.HTTPError as error:
            raise error_from_response(error.code, error.read()) from None
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise DaemonUnreachable(self.server, str(reason)) from None

    def wait(self, job_id: int, *, progress: bool = True, interval: float = 1.0,
             timeout: Optional[float] = None, stream: Optional[TextIO] = None,
             raise_on_failure: bool = False, live: bool = True) -> Job:
        """Follows the job until it ends; draws a text progress bar on `stream` (stderr) unless
        progress=False. The progress comes from the job's event stream (events()); where that
        cannot be followed (live=False, the daemon's cap on streams, a broken connection) the job
        is polled every `interval` seconds. TimeoutError after `timeout` seconds (on a stream,
        checked at each event or heartbeat: up to 15 s late); JobFailed when the job ends failed
        or cancelled and raise_on_failure is set."""
        bar = ProgressBar(stream or sys.stderr) if progress else None
        deadline = None if timeout is None else time.monotonic() + timeout

        def expired(job: Job) -> bool:
            if deadline is None or time.monotonic() < deadline:
                return False
            if bar:
                bar.finish(job)
            raise TimeoutError(f"job {job_id} still {job.status} after {timeout} s")

        job = self.job(job_id)
        if live and not job.finished and not expired(job):
            state = dict(job.raw)
            try:
                for event in self._event_stream(job_id):
                    if event is not None:
                        if event.name == "end":
                            break
                        if event.name == "status":
                            state["status"] = event.data["status"]
                            state["reason"] = event.data.get("reason")
                        elif event.name in ("progress", "best"):
                            state[event.name] = event.data
                        job = Job.from_json(state)
                        if bar and not job.finished:
                            bar.update(job)
                    expired(job)
            except (ApiError, DaemonUnreachable):
                pass  # polled from here on
        while True:
            job = self.job(job_id)
            if bar:
                bar.update(job)
            if job.finished:
                if bar:
                    bar.finish(job)
                if raise_on_failure and job.status != "done":
                    raise JobFailed(job)
                return job
            expired(job)
            time.sleep(interval)

    def best(self, family: str, shape: Dict[str, int], dtype: str, device: Optional[str] = None, *,
             nearest: bool = False, tune_on_miss: bool = False, retune_stale: bool = False,
             predict: bool = False) -> Union[Best, Prediction]:
        """The best config of a problem (ApiError 404 not_tuned when there is none).

        nearest: on a miss, the nearest tuned shape's answer (Best.exact False, Best.nearest).
        tune_on_miss: on a miss, start a tuning job (or find the one running); the answer then has
        it as Best.tuning_job, and with nothing to answer meanwhile NotTunedYet carries it.
        retune_stale: on a stale answer (Best.stale), start a job re-tuning it (Best.tuning_job).
        predict: on a miss, the shape predictor's config for the shape, never measured for it: a
        Prediction (expected_us with its interval) instead of a Best."""
        query = {"family": family, "dtype": dtype, **_shape_query(shape), "device": device,
                 "nearest": "1" if nearest else None, "tune_on_miss": "1" if tune_on_miss else None,
                 "retune_stale": "1" if retune_stale else None, "predict": "1" if predict else None}
        reply = self._json("GET", "/v1/best", query)
        if "link" in reply and "job" in reply:  # 202: a job is tuning it
            job = Job.from_json(reply["job"])
            if not reply.get("answer"):
                raise NotTunedYet(job, bool(reply.get("new_job")))
            best = answer_from_json(reply["answer"])
            best.tuning_job = job
            return best
        return answer_from_json(reply)

    def pareto(self, family: str, shape: Dict[str, int], dtype: str, device: Optional[str] = None) -> ParetoFront:
        query = {"family": family, "dtype": dtype, **_shape_query(shape), "device": device}
        return ParetoFront.from_json(self._json("GET", "/v1/pareto", query))

    def history(self, family: Optional[str] = None, status: Optional[str] = None, limit: int = 100) -> List[Job]:
        """Jobs, newest first, at most `limit` (pages followed)."""
        jobs = self._all_pages("/v1/history", "jobs", {"family": family, "status": status}, limit)
        return [Job.from_json(j) for j in jobs]

    def variants(self, job_id: int, *, status: Optional[Iterable[str]] = None,
                 exclude_pruned: bool = False, log: bool = False) -> List[Variant]:
        """Every variant of the job (pages followed), in id order."""
        query: Dict[str, Any] = {
            "status": ",".join(status) if status else None,
            "exclude_pruned": "1" if exclude_pruned else None,
            "log": "1" if log else None,
        }
        return [Variant.from_json(v) for v in self._all_pages(f"/v1/jobs/{int(job_id)}/variants", "variants", query)]

    def variants_csv(self, job_id: int, path: Optional[str] = None) -> str:
        """GET /v1/jobs/{id}/variants.csv: every variant that reached a gate as CSV, the figures
        and one column per config parameter; written to `path` when given, and returned."""
        payload, _ = self._request("GET", f"/v1/jobs/{int(job_id)}/variants.csv")
        text = payload.decode("utf-8")
        if path is not None:
            with open(path, "w", newline="") as f:
                f.write(text)
        return text

    def show(self, job_id: int, *, all_variants: bool = False) -> "tuple[Job, List[Variant]]":
        """Like `kerntune show`: the job and the variants that reached the compiler (all with
        all_variants=True)."""
        return self.job(job_id), self.variants(job_id, exclude_pruned=not all_variants)

    def variant(self, variant_id: int, *, log: bool = False) -> Variant:
        return Variant.from_json(self._json("GET", f"/v1/variants/{int(variant_id)}", {"log": "1" if log else None}))

    def kernel(self, variant_id: int, path: Optional[str] = None) -> Kernel:
        """The variant's cubin (GET /v1/variants/{id}/kernel); written to `path` when given."""
        payload, headers = self._request("GET", f"/v1/variants/{int(variant_id)}/kernel")
        lower = {k.lower(): v for k, v in headers.items()}
        kernel = Kernel(int(variant_id), lower.get("x-kernel-name", ""), lower.get("x-kernel-arch", ""), payload)
        if path:
            with open(path, "wb") as f:
                f.write(payload)
        return kernel

    def launch(self, variant_id: int) -> Dict[str, Any]:
        """How to launch the variant's cubin (GET /v1/variants/{id}/launch): kernel, arch, grid,
        block, cluster, dynamic_smem_bytes, params in order, buffers, for its job's shape."""
        return self._json("GET", f"/v1/variants/{int(variant_id)}/launch")

    def tuned(self, family: Optional[str] = None, device: Optional[str] = None, limit: int = 100) -> List[Dict[str, Any]]:
        """Every tuned problem (GET /v1/tuned) with its best variant."""
        return self._json("GET", "/v1/tuned", {"family": family, "device": device, "limit": limit})["problems"]
