"""The kerntuned the sweep talks to, and the two ways a user talks to it: the `kerntune` CLI and
HTTP (the repository's Python client, urllib where the client lacks a field).

The daemon runs as the device scripts start it (bench/device_suite.sh, bench/service_gpu_run.sh):
on loopback, a fresh SQLite store in a scratch folder, a bearer token (mode 600 file, as a
deployment would have), --allow-user-families so the example family can be registered.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import secrets
import subprocess
import time
import urllib.error
import urllib.request
from typing import Any, Dict, List, Optional, Tuple

import kerntune

LISTENING = re.compile(r"kerntuned listening on (http://[\d.]+:\d+)")
CLI_JOB_LINE = re.compile(r"^job (\d+):", re.MULTILINE)


class Daemon:
    def __init__(self, bin_dir: str, work_dir: str, log_path: str, use_token: bool = True, port: int = 0,
                 extra_args: Optional[List[str]] = None):
        self.bin_dir = bin_dir
        self.log_path = log_path
        self.token_file: Optional[str] = None
        self.token: Optional[str] = None
        os.makedirs(work_dir, exist_ok=True)
        command = [os.path.join(bin_dir, "kerntuned"), "--listen", f"127.0.0.1:{port}",
                   "--db", os.path.join(work_dir, "kerntune.db"), "--allow-user-families"]
        if use_token:
            self.token = secrets.token_hex(16)
            self.token_file = os.path.join(work_dir, "token")
            with open(os.open(self.token_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
                f.write(self.token + "\n")
            command += ["--token-file", self.token_file]
        command += extra_args or []
        self.command = command
        self.log = open(log_path, "w", encoding="utf-8")
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT)
        self.url = self._wait_for_url(60.0)
        self.client = kerntune.Client(self.url, token=self.token, timeout=60.0)

    def _wait_for_url(self, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with open(self.log_path, encoding="utf-8", errors="replace") as f:
                match = LISTENING.search(f.read())
            if match:
                return match.group(1)
            if self.process.poll() is not None:
                break
            time.sleep(0.1)
        self.stop()
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            tail = f.read()[-3000:]
        raise RuntimeError(f"kerntuned did not start ({' '.join(self.command)}):\n{tail}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()

    # ---- the CLI ----------------------------------------------------------------------------

    def cli_command(self, *args: str, json_output: bool = False) -> List[str]:
        command = [os.path.join(self.bin_dir, "kerntune"), "--server", self.url]
        if self.token_file:
            command += ["--token-file", self.token_file]
        if json_output:
            command.append("--json")
        return command + list(args)

    def cli(self, *args: str, json_output: bool = False, timeout: float = 60.0) -> Tuple[int, str, str]:
        done = subprocess.run(self.cli_command(*args, json_output=json_output), capture_output=True, text=True,
                              timeout=timeout)
        return done.returncode, done.stdout, done.stderr

    # ---- raw HTTP, for what the Python client does not cover -------------------------------------

    def http(self, method: str, path: str, body: Any = None, timeout: float = 60.0) -> Tuple[int, Any]:
        """(status, JSON body) of a request; an HTTP error's status and body are returned too."""
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            payload = error.read()
            try:
                return error.code, json.loads(payload or b"null")
            except ValueError:
                return error.code, {"error": {"message": payload.decode(errors="replace")}}


def client_submit_has_search() -> bool:
    """Whether this checkout's kerntune.Client.submit takes `search` (it did not when the sweep
    was written: the HTTP path then posts the job body itself)."""
    return "search" in inspect.signature(kerntune.Client.submit).parameters


def job_id_from_cli_stderr(text: str) -> Optional[int]:
    match = CLI_JOB_LINE.search(text)
    return int(match.group(1)) if match else None
