"""The text progress bar of Client.wait: one redrawn line on a terminal, a line per change
elsewhere (logs, CI), like the CLI's --wait."""

from __future__ import annotations

import time
from typing import Any, Optional, TextIO

WIDTH = 30


# Finished before anything runs (often most of a space): counted apart, as the CLI does.
NOT_RUN = ("pruned", "unsupported_arch")


def render(job: Any) -> str:
    """One line: bar and counts of the variants that go through the gates (compile, check,
    measure), the outcome counts so far, the pruned apart, and the best time."""
    progress = job.progress
    skipped = sum(progress.by_status.get(s, 0) for s in NOT_RUN)
    total, finished = max(0, progress.total - skipped), max(0, progress.finished - skipped)
    filled = int(round(WIDTH * finished / total)) if total else 0
    counts = ", ".join(f"{n} {s}" for s, n in sorted(progress.by_status.items())
                       if n and s not in ("pending",) + NOT_RUN)
    best = f", best {job.best.median_us:.1f} us" if job.best and job.best.median_us is not None else ""
    pruned = f", {skipped} pruned" if skipped else ""
    return (f"job {job.id} {job.status:<9} [{'#' * filled}{'.' * (WIDTH - filled)}] "
            f"{finished}/{total} variants" + (f" ({counts})" if counts else "") + pruned + best)


class ProgressBar:
    def __init__(self, stream: TextIO, min_interval: float = 2.0):
        self.stream = stream
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.min_interval = min_interval
        self.last_line: Optional[str] = None
        self.last_time = 0.0

    def update(self, job: Any) -> None:
        line = render(job)
        if line == self.last_line:
            return
        now = time.monotonic()
        if self.tty:
            self.stream.write("\r\x1b[K" + line)
        elif now - self.last_time >= self.min_interval or self.last_line is None:
            self.stream.write(line + "\n")
        else:
            return
        self.stream.flush()
        self.last_line, self.last_time = line, now

    def finish(self, job: Any) -> None:
        line = render(job)
        if self.tty:
            self.stream.write("\r\x1b[K" + line + "\n")
        elif line != self.last_line:
            self.stream.write(line + "\n")
        self.stream.flush()
        self.last_line = line
