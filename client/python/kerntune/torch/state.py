"""The recorders and routers active in this process, innermost last, so that a helper called by
the model (kerntune.torch.gated_mlp) finds the one it reports to."""

from __future__ import annotations

from typing import Any, List, Optional

_active: List[Any] = []


def push(mode: Any) -> None:
    _active.append(mode)


def pop(mode: Any) -> None:
    if mode in _active:
        _active.remove(mode)


def innermost() -> Optional[Any]:
    return _active[-1] if _active else None
