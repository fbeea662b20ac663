"""The one-call entry point: kernel name + shape + knobs -> ncu-named metrics."""

from __future__ import annotations

from gpusim.chip import Simulation, simulate
from gpusim.config import HardwareConfig, load_config
from gpusim.ir import REGISTRY, KernelError, build_kernel
from gpusim.metrics import report


def predict(name: str, shape: tuple[int, ...], overrides: dict | None = None,
            config: HardwareConfig | str | None = None, trace: bool = False) -> tuple[dict, Simulation]:
    """Simulate one kernel launch; returns (metrics keyed by ncu names, the full simulation)."""
    cfg = config if isinstance(config, HardwareConfig) else load_config(config)
    kernel = build_kernel(name, tuple(shape), overrides, cfg)
    try:
        sim = simulate(kernel, cfg, trace=trace)
    except KernelError as e:  # an address expression of a user's file: say which file
        kd = REGISTRY.get(name)
        if kd is None or kd.origin != kd.file or kd.file in str(e):
            raise
        raise KernelError(f"{e} (in {kd.file})") from None
    return report(sim), sim
