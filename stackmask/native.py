"""Which implementation of the inner loops runs: compiled or pure Python.

``stackmask._native`` (Cython, built by ``pip install -e .`` where a C compiler
is found) holds compiled twins of the hottest runtime loops: the mask walk and
copy, the commit fast path, the batch copy of ``fill_masks`` (without the GIL).
The pure-Python code they mirror stays the reference and the fallback: the
package imports and is exact without the extension, and ``STACKMASK_PURE_PYTHON=1``
forces the Python path. The choice is made when a ``Constraint`` is built (so a
test can build one of each in one process); :func:`describe` says which path a
constraint built now gets, and why.
"""

from __future__ import annotations

import os

ENV = "STACKMASK_PURE_PYTHON"

try:
    from . import _native as _module
    _import_error = None
except ImportError as e:        # not built (no compiler at install) or a stale build
    _module = None
    _import_error = str(e)


def module():
    """The compiled module, or None: not built, or ``STACKMASK_PURE_PYTHON`` is set
    (to anything but ``""`` or ``"0"``)."""
    if os.environ.get(ENV, "") not in ("", "0"):
        return None
    return _module


def describe() -> str:
    """One line: the path a constraint built now uses, and why."""
    if os.environ.get(ENV, "") not in ("", "0"):
        return f"pure Python ({ENV} is set)"
    if _module is None:
        return f"pure Python (the compiled extension is not built: {_import_error})"
    return "compiled (stackmask._native)"
