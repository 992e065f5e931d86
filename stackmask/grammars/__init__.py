"""Grammars shipped with stackmask."""

from __future__ import annotations

from importlib import resources

BUNDLED = ("json",)


def load(name: str) -> str:
    """Lark text of a bundled grammar (``json``)."""
    if name not in BUNDLED:
        raise KeyError(f"no bundled grammar {name!r}; bundled: {', '.join(BUNDLED)}")
    return resources.files(__package__).joinpath(f"{name}.lark").read_text(encoding="utf-8")
