"""Exceptions of the kerntune client: every failure is a KerntuneError."""

from __future__ import annotations

from typing import Any, Optional


class KerntuneError(Exception):
    """Base class of the client's errors."""


# The daemon's hints name the HTTP API's parameters; a Python user passes them as arguments.
PYTHON_HINTS = (
    ("nearest=1", "nearest=True"),
    ("tune_on_miss=1", "tune_on_miss=True"),
    ("retune_stale=1", "retune_stale=True"),
    ('use "mode":"compile" with "arch"', 'use mode="compile" with arch="sm_90a" (or another arch)'),
)


def in_python_terms(message: str) -> str:
    for api, python in PYTHON_HINTS:
        message = message.replace(api, python)
    return message


class ApiError(KerntuneError):
    """The daemon refused the request: `status` (HTTP), `code` and `message` from its error
    body ({"error": {"code", "message"}}, its hints put as this client's arguments), and the
    whole body as sent."""

    def __init__(self, status: int, code: str, message: str, body: Any = None):
        message = in_python_terms(message)
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.body = body


class DaemonUnreachable(KerntuneError):
    """No answer from the daemon (connection refused, DNS, timeout)."""

    def __init__(self, url: str, reason: str):
        super().__init__(f"cannot reach kerntuned at {url}: {reason}")
        self.url = url
        self.reason = reason


class JobFailed(KerntuneError):
    """wait(..., raise_on_failure=True): the job ended failed or cancelled."""

    def __init__(self, job: Any):
        reason = f": {job.reason}" if getattr(job, "reason", None) else ""
        super().__init__(f"job {job.id} ended {job.status}{reason}")
        self.job = job


class NotTunedYet(KerntuneError):
    """best(..., tune_on_miss=True) on a shape with nothing to answer yet: `job` is tuning it
    (just submitted, or already queued or running: `new_job` says which)."""

    def __init__(self, job: Any, new_job: bool):
        super().__init__(f"nothing tuned yet; job {job.id} is tuning it ({job.status})")
        self.job = job
        self.new_job = new_job


class FamilyNotRegistered(KerntuneError):
    """register_family(): the daemon took the upload but the variant it compiled first or the
    family's reference kernel did not compile (or the registration failed otherwise):
    `registration` is the daemon's answer, with NVRTC's log in registration["compile"]["log"]
    (the variant) or registration["compile"]["reference"]["log"]; `log` is the failed one's."""

    def __init__(self, registration: Any):
        super().__init__(f"family {registration.get('family')} not registered: {registration.get('message')}")
        self.registration = registration
        compile_result = registration.get("compile") or {}
        reference = compile_result.get("reference") or {}
        failed = reference if reference.get("ok") is False else compile_result
        self.log = failed.get("log", "")


class TokenError(KerntuneError):
    """KERNTUNE_TOKEN / KERNTUNE_TOKEN_FILE is set but unusable."""


def error_from_response(status: int, payload: bytes) -> ApiError:
    """An ApiError from a non-2xx answer; a body that is not the standard one is kept as text."""
    import json

    text = payload.decode("utf-8", "replace")
    body: Optional[Any] = None
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        error = body["error"]
        return ApiError(status, str(error.get("code", "unknown")), str(error.get("message", "")), body)
    return ApiError(status, "http_error", text.strip()[:500] or f"HTTP {status}", body if body is not None else text)
