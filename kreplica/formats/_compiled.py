"""Loading a compiled twin: the C module built by ``pip install`` when a compiler is present.

A twin is used only when it imports and speaks the contract (``API_VERSION``) its Python module
was written for; a stale build of another contract, or no build, means the pure-Python reference
runs everything. ``KREPLICA_DECODE=python`` / ``KREPLICA_RENDER=python`` force the reference.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType


def import_compiled(name: str, api_version: int) -> ModuleType | None:
    """Module ``name`` when it imports and declares ``API_VERSION == api_version``, else ``None``."""
    try:
        module = importlib.import_module(name)
    except ImportError:
        return None
    return module if getattr(module, "API_VERSION", None) == api_version else None


def forced_python(env_var: str) -> bool:
    """Whether ``env_var`` asks for the pure-Python reference (``=python``)."""
    return os.environ.get(env_var, "").lower() == "python"
