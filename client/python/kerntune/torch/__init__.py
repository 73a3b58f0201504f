"""kerntune in a PyTorch program: record the problems a model runs, tune them, run with them.

    import kerntune.torch as kt
    with kt.record("shapes.jsonl"):          # 1. every matmul/linear/SDPA call, its share of the time
        model(x)
    # 2. kerntune tune-all shapes.jsonl --budget-per-shape 64   (or kerntune export --bundle DIR)
    with torch.no_grad(), kt.enable(server="http://127.0.0.1:8080"):   # 3. or enable(bundle="DIR")
        model(x)                             # tuned shapes run kerntune's kernels, the rest torch's

The gated MLP silu(x W1^T) * (x W2^T) is one problem (dual_gemm_silu) when written with
`gated_mlp(x, w1, w2)`; anywhere else that helper is the plain torch expression. Torch is imported
only by this subpackage: `import kerntune` alone needs the standard library only.
"""

from __future__ import annotations

from typing import Any, Optional

import torch  # noqa: F401  (without torch this package fails here, saying so)
import torch.nn.functional as F

from . import problems, state
from .recorder import Recorder
from .router import Router
from .sources import BundleSource, ServerSource

__all__ = ["record", "enable", "disable", "gated_mlp", "Recorder", "Router", "ServerSource", "BundleSource"]


def record(path: str, append: bool = False) -> Recorder:
    """A context manager that records the problems run inside it into `path` (JSON lines)."""
    return Recorder(path, append=append)


_enabled: Optional[Router] = None


def enable(server: Optional[str] = None, bundle: Optional[str] = None, *, check_speed: bool = True,
           verbose: bool = False) -> "_RouterHandle":
    """Routes tuned problems to kerntune's kernels: answers from the daemon at `server` (default
    $KERNTUNE_SERVER or http://127.0.0.1:8080) or from the bundle folder `bundle`. Use it as a
    context manager (`with enable(...):`), or call it alone and `disable()` later. check_speed:
    time each routed problem's first call against torch's op on this GPU and keep torch's where
    it is as fast."""
    global _enabled
    if server is not None and bundle is not None:
        raise ValueError("enable takes a server or a bundle, not both")
    source = BundleSource(bundle) if bundle is not None else ServerSource(server)
    router = Router(source, check_speed=check_speed, verbose=verbose)
    router.__enter__()
    if _enabled is not None:
        _enabled.close()
    _enabled = router
    return _RouterHandle(router)


class _RouterHandle:
    """What enable returns: the router (attributes pass through), already active; `with` on it
    leaves it at the block's end, `disable()` or `close()` otherwise."""

    def __init__(self, router: Router):
        self.__dict__["router"] = router

    def __getattr__(self, name: str) -> Any:
        return getattr(self.router, name)

    def __enter__(self) -> Router:
        return self.router

    def __exit__(self, *exc: Any) -> None:
        disable()


def disable() -> None:
    """Ends what enable started: torch's own ops from here on."""
    global _enabled
    if _enabled is not None:
        _enabled.close()
        _enabled = None


def _gated_mlp_torch(x: Any, w1: Any, w2: Any) -> Any:
    return F.silu(F.linear(x, w1)) * F.linear(x, w2)


def gated_mlp(x: Any, w1: Any, w2: Any) -> Any:
    """silu(x @ w1^T) * (x @ w2^T), a gated MLP's gate and up projections: recorded as one
    dual_gemm_silu problem and routed to its kernel when tuned; the torch expression otherwise."""
    mode = state.innermost()
    if mode is None:
        return _gated_mlp_torch(x, w1, w2)
    call = problems.dual_gemm_call("gated_mlp", x, w1, w2)
    if isinstance(mode, Recorder):
        return mode.timed(call.problem, (x, w1, w2), lambda: _gated_mlp_torch(x, w1, w2))
    return mode.run(call, lambda: _gated_mlp_torch(x, w1, w2))
