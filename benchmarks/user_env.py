"""The environment a benchmark gives the ``gpusim`` processes it times: a user's, not the harness's.

A harness (an IDE, a sandbox, a CI image) may set ``PYTHONDONTWRITEBYTECODE``; then every child process compiles
gpusim's modules from source again (about 0.4 s of a 2 s command), which a user's command, with its ``__pycache__``
written once, never pays. The benchmarks time what a user's command costs.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def user_env() -> dict[str, str]:
    """os.environ without PYTHONDONTWRITEBYTECODE, with this checkout first on PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(REPO)
    return env
