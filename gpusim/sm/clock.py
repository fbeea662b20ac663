"""The SM clock (DVFS): which clock a kernel runs at, and what every other unit's numbers become at that clock.

The model counts time in SM cycles. Numbers of the SM's own units (issue, pipes, L1TEX, the L2 port, the TMA
engine's copy interval) are per SM cycle whatever the clock. Units on the memory side keep their own clock (the L2)
or their rate per second (HBM): at another SM clock their cycles and rates per SM cycle change. A spec field says
which with :func:`memory_clocked`; :func:`at_sm_clock` rescales every tagged field of a config, whatever unit it
belongs to, so a new unit on the memory side needs only its tags.

The clock itself (:func:`sm_clock_hz_for`): the H100 holds its clock under FP32 and memory work and lowers it as soon
as the tensor cores work (measured: the same clock from 0.6% to 86% of mma.sync's peak,
validate/micro/run_clock_duty.py), to ``chip.sm_clock_mma_sync_saturated_hz``; past mma.sync's share of the dense
peak (wgmma) it falls linearly to ``chip.sm_clock_wgmma_saturated_hz`` at the dense peak.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

# a field's clock domain (its metadata key) and the two ways a memory-side number changes with the SM clock
CLOCK_KEY = "clock"
MEMORY_CYCLES = "memory cycles"  # a time counted in SM cycles: more SM cycles at a faster SM clock
MEMORY_RATE = "memory rate"  # work per SM cycle: less per SM cycle at a faster SM clock


def memory_clocked(f: Any, kind: str = MEMORY_CYCLES) -> Any:
    """Tag the spec field ``f`` (:func:`gpusim.specfield.spec_field`) as a number of the memory side, stated in SM
    cycles of the configured clock: a time (``MEMORY_CYCLES``) or a rate (``MEMORY_RATE``)."""
    if kind not in (MEMORY_CYCLES, MEMORY_RATE):
        raise ValueError(f"clock domain {kind!r}: allowed {MEMORY_CYCLES!r}, {MEMORY_RATE!r}")
    return dataclasses.field(metadata={**f.metadata, CLOCK_KEY: kind})


def clock_domain(spec_cls: type, name: str) -> str:
    """The clock domain of field ``name`` of ``spec_cls``: ``MEMORY_CYCLES``, ``MEMORY_RATE`` or "" (the SM's)."""
    f = {f.name: f for f in dataclasses.fields(spec_cls)}[name]
    return f.metadata.get(CLOCK_KEY, "")


@dataclass(frozen=True)
class Clock:
    """The SM clock a simulation runs at: converts times and rates per second into SM cycles."""

    hz: float

    def cycles_of_ns(self, ns: float) -> float:
        return ns * 1e-9 * self.hz

    def per_cycle(self, per_second: float) -> float:
        return per_second / self.hz


def _rescaled(value: Any, annotation: str, kind: str, r: float) -> Any:
    """``value`` (a field annotated ``annotation``) at ``r`` SM cycles per configured SM cycle."""
    if isinstance(value, tuple):
        return tuple(_rescaled(v, annotation.removeprefix("tuple[").split(",")[0], kind, r) for v in value)
    if kind == MEMORY_RATE:
        return value / r
    return round(value * r) if annotation.startswith("int") else value * r


def _section_at(spec: Any, r: float) -> Any:
    changes = {f.name: _rescaled(getattr(spec, f.name), str(f.type), f.metadata[CLOCK_KEY], r)
               for f in dataclasses.fields(spec) if f.metadata.get(CLOCK_KEY)}
    return dataclasses.replace(spec, **changes) if changes else spec


def at_sm_clock(cfg: Any, clock_hz: float) -> Any:
    """``cfg`` (a :class:`gpusim.config.HardwareConfig`) with the SMs at ``clock_hz``: the SM side keeps its rates
    and latencies per SM cycle; every field tagged :func:`memory_clocked` (the L2, HBM, the TMA's trips to them)
    keeps its own per second, so it changes per SM cycle. Measured: the L2 keeps its 1.71 GHz clock and an L2
    stream its bytes per second while the SM clock falls from 1995 to 1793 MHz, HBM its rate from 1980 to 1583 MHz
    (validate/micro/run_l2_clock.py, l2clock-2026-11-26.json)."""
    r = clock_hz / cfg.chip.sm_clock_hz  # SM cycles per memory-side cycle of the configured clock
    changes = {}
    for f in dataclasses.fields(cfg):
        spec = getattr(cfg, f.name)
        if dataclasses.is_dataclass(spec) and not isinstance(spec, type):
            new = _section_at(spec, r)
            if new is not spec:
                changes[f.name] = new
    changes["chip"] = dataclasses.replace(cfg.chip, sm_clock_hz=clock_hz)
    return dataclasses.replace(cfg, **changes)


def tensor_activity(busy: dict[str, float], instances: dict[str, int], cycles: float, pipes: Any) -> float:
    """Tensor-core work per cycle as a share of the dense wgmma peak (mma.sync counted at its FLOP rate), from the
    pipes' busy cycles (``busy``, ``instances``: :class:`gpusim.engine.ChipResult`'s) over ``cycles``. ``pipes``:
    the config's :class:`gpusim.sm.pipes.PipesSpec`."""
    def share(unit: str) -> float:
        return busy.get(unit, 0.0) / (instances.get(unit, 1) * max(cycles, 1.0))

    dense = pipes.dense_tensor_flops_per_cycle_per_sm  # wgmma's; mma.sync's on a GPU without wgmma
    if dense is None:  # no tensor pipe at all
        return 0.0
    return share("pipe tensor") * (pipes.mma_sync_flops_per_cycle_per_sm or 0) / dense + share("pipe wgmma")


def sm_clock_hz_for(activity: float, chip: Any, pipes: Any) -> float:
    """The SM clock at tensor ``activity`` (:func:`tensor_activity`): the configured clock without tensor work, the
    mma.sync-saturated clock up to mma.sync's share of the dense peak, then linearly down to the wgmma-saturated
    clock at the dense peak (the module docstring)."""
    a = min(activity, 1.0)
    f0, f_mma, f_wg = chip.sm_clock_hz, chip.sm_clock_mma_sync_saturated_hz, chip.sm_clock_wgmma_saturated_hz
    if a <= 0:
        return f0
    if f_wg is None:  # no wgmma: mma.sync is the dense peak
        return f_mma
    at_mma = pipes.mma_sync_flops_per_cycle_per_sm / pipes.wgmma_flops_per_cycle_per_sm  # activity of mma.sync's point
    if a <= at_mma:
        return f_mma
    return f_mma - (f_mma - f_wg) * (a - at_mma) / (1.0 - at_mma)
