"""The one-call entry point: kernel name + shape + knobs -> ncu-named metrics."""

from __future__ import annotations

from gpusim.chip import Simulation, simulate
from gpusim.config import HardwareConfig, load_config
from gpusim.ir import build_kernel
from gpusim.metrics import report


def predict(name: str, shape: tuple[int, ...], overrides: dict | None = None,
            config: HardwareConfig | str | None = None, trace: bool = False) -> tuple[dict, Simulation]:
    """Simulate one kernel launch; returns (metrics keyed by ncu names, the full simulation)."""
    cfg = config if isinstance(config, HardwareConfig) else load_config(config)
    kernel = build_kernel(name, tuple(shape), overrides)
    sim = simulate(kernel, cfg, trace=trace)
    return report(sim), sim
