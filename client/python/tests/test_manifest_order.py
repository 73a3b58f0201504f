"""A manifest keeps its key order whichever client registers it: the worked example (dims M, N, K,
not in alphabetical order) registered from its folder through the kerntune CLI, through raw HTTP
(as curl sends it) and through this client, each to a daemon of its own, and GET /v1/families
listing the dims as the manifest does. The order decides what a positional shape means."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import unittest
import urllib.request
from typing import Any, Dict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import kerntune  # noqa: E402
from daemon import Daemon, required_env  # noqa: E402

EXAMPLE = os.path.join(os.environ.get("KERNTUNE_FAMILIES", ""), "examples", "wmma_gemm")


def manifest_dims() -> list:
    with open(os.path.join(EXAMPLE, "manifest.json"), encoding="utf-8") as file:
        return list(json.load(file)["dims"])  # json keeps the file's order


def kerntune_cli(url: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([required_env("KERNTUNE"), "--server", url, *args], capture_output=True,
                          text=True, timeout=300)


def post_raw(url: str, body: bytes) -> Dict[str, Any]:
    request = urllib.request.Request(url + "/v1/families", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as reply:
        registration = json.loads(reply.read())
    deadline = time.monotonic() + 300
    while registration["status"] == "compiling" and time.monotonic() < deadline:
        time.sleep(0.2)
        with urllib.request.urlopen(url + "/v1/families/registrations/" + registration["id"],
                                    timeout=30) as reply:
            registration = json.loads(reply.read())
    return registration


class ManifestOrderThroughEveryClient(unittest.TestCase):
    def setUp(self) -> None:
        self.assertEqual(manifest_dims(), ["M", "N", "K"])  # what makes this test tell
        self.daemon = Daemon(["--allow-user-families"], seed=False)
        self.client = kerntune.Client(self.daemon.url, timeout=30)

    def tearDown(self) -> None:
        self.daemon.stop()

    def listed_dims(self) -> list:
        listed = {family["name"]: family for family in self.client.families()}
        self.assertEqual(listed["wmma_gemm"]["origin"], "registered")
        return [dim["name"] for dim in listed["wmma_gemm"]["dims"]]

    def test_the_cli(self) -> None:
        added = kerntune_cli(self.daemon.url, "family", "add", EXAMPLE)
        self.assertEqual(added.returncode, 0, added.stderr)
        self.assertEqual(self.listed_dims(), manifest_dims())
        # The README's positional shape means M x N x K.
        submitted = kerntune_cli(self.daemon.url, "--json", "submit", "wmma_gemm", "--shape",
                                 "256x256x64", "--dtype", "fp16", "--mode", "compile", "--arch",
                                 "sm_80", "--budget", "1")
        self.assertEqual(submitted.returncode, 0, submitted.stderr)
        self.assertEqual(json.loads(submitted.stdout)["shape"], {"M": 256, "N": 256, "K": 64})

    def test_raw_http(self) -> None:
        with open(os.path.join(EXAMPLE, "manifest.json"), encoding="utf-8") as file:
            manifest_text = file.read()
        sources = {}
        for name in ("wmma_gemm.cuh", "wmma_gemm_reference.cuh"):
            with open(os.path.join(EXAMPLE, name), encoding="utf-8") as file:
                sources[name] = file.read()
        # The manifest's own bytes in the body, as `jq --slurpfile ... | curl` sends them.
        body = ('{"manifest": ' + manifest_text + ', "sources": ' + json.dumps(sources) + "}").encode()
        registration = post_raw(self.daemon.url, body)
        self.assertEqual(registration["status"], "registered", registration)
        self.assertEqual(self.listed_dims(), manifest_dims())

    def test_the_python_client(self) -> None:
        registration = self.client.register_family(EXAMPLE)
        self.assertEqual(registration["status"], "registered", registration)
        self.assertEqual(self.listed_dims(), manifest_dims())


if __name__ == "__main__":
    unittest.main()
