"""A real kerntuned on 127.0.0.1 (port 0) for the client's tests: the binary from $KERNTUNED,
the families from $KERNTUNE_FAMILIES, a store seeded by $KT_SEED_STORE (measured variants, so
best and pareto have answers) in a fresh temp folder. ctest sets the three variables."""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import threading
from typing import List, Optional

LISTENING = re.compile(r"kerntuned listening on (http://127\.0\.0\.1:\d+)")


def landlock_available() -> bool:
    """Whether this kernel can confine compiles (landlock_create_ruleset's ABI query, syscall 444
    on x86-64 and arm64)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.syscall(444, None, ctypes.c_size_t(0), ctypes.c_uint32(1)) > 0


def required_env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"${name} is not set (ctest sets it; see client/python/README.md)")
    return value


class Daemon:
    def __init__(self, extra_args: Optional[List[str]] = None, seed: bool = True, compile_threads: int = 2):
        self.folder = tempfile.TemporaryDirectory(prefix="kerntune-pytest-")
        db = os.path.join(self.folder.name, "kerntune.db")
        self.seed = None
        if seed:
            out = subprocess.run([required_env("KT_SEED_STORE"), db], check=True, capture_output=True, text=True)
            self.seed = json.loads(out.stdout)
        command = [required_env("KERNTUNED"), "--listen", "127.0.0.1:0", "--db", db,
                   "--families", required_env("KERNTUNE_FAMILIES"), "--compile-threads", str(compile_threads)] + (extra_args or [])
        # A daemon that takes uploads refuses to start where compiles cannot be confined.
        if "--allow-user-families" in command and not landlock_available():
            command.append("--unconfined-compiles")
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.log: List[str] = []
        found = threading.Event()
        self.url = ""

        def read() -> None:
            assert self.process.stdout is not None
            for line in self.process.stdout:
                self.log.append(line)
                match = LISTENING.search(line)
                if match and not found.is_set():
                    self.url = match.group(1)
                    found.set()
            found.set()

        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()
        if not found.wait(60) or not self.url:
            self.stop()
            raise RuntimeError("kerntuned did not start:\n" + "".join(self.log))

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.reader.join(10)
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.folder.cleanup()
