"""Shared test fixtures and the ``--update-golden`` option."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CONFIG_DIR = REPO / "gpusim" / "configs"  # the bundled configs (configs/ in the repo links here)
H100_CONFIG = CONFIG_DIR / "h100_sxm.toml"
H200_CONFIG = CONFIG_DIR / "h200.toml"
GOLDEN_DIR = Path(__file__).resolve().parent / "golden"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/golden/*.json from the current simulator instead of comparing")


@pytest.fixture
def update_golden(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--update-golden"))


@pytest.fixture(scope="session")
def h100():
    from gpusim.config import load_config

    return load_config(H100_CONFIG)


@pytest.fixture(scope="session")
def h200():
    from gpusim.config import load_config

    return load_config(H200_CONFIG)


@pytest.fixture(scope="session")
def predicted(h100):
    """``predicted(name, shape, **overrides) -> metrics`` on the H100, each distinct run simulated once."""
    from gpusim.api import predict

    cache: dict = {}

    def run(name: str, shape: tuple[int, ...], config=None, **overrides) -> dict:
        key = (name, tuple(shape), config, tuple(sorted(overrides.items())))
        if key not in cache:
            cache[key] = predict(name, shape, overrides or None, config or h100)[0]
        return cache[key]

    return run


def cuda_toolkit() -> bool:
    """Whether nvcc and cuobjdump can be found (the front-end's tests compile CUDA)."""
    from gpusim.sass import SassError, find_tool

    try:
        find_tool("nvcc")
        find_tool("cuobjdump")
        return True
    except SassError:
        return False


# tests that compile CUDA: skipped without the toolkit, unless CI asks for it (GPUSIM_REQUIRE_CUDA=1: fail, not skip)
needs_cuda = pytest.mark.skipif(not cuda_toolkit() and not __import__("os").environ.get("GPUSIM_REQUIRE_CUDA"),
                                reason="the CUDA toolkit (nvcc, cuobjdump) is not installed")
