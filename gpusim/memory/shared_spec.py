"""Shared-memory unit spec: 32 banks of 4 bytes, one wavefront per cycle (the wavefront rules are in
:mod:`gpusim.memory.shared`)."""

from __future__ import annotations

from dataclasses import dataclass

from gpusim.specfield import spec_field


@dataclass(frozen=True)
class SharedMemorySpec:
    """Shared-memory parameters (``[shared_memory]`` in the hardware config)."""

    banks: int = spec_field(1, 64, "banks")
    bank_width_bytes: int = spec_field(4, 8, "bytes per bank per cycle")
    wavefronts_per_cycle: int = spec_field(1, 4, "wavefronts the shared-memory pipe serves per cycle")
    load_latency_cycles: int = spec_field(1, 500, "ld.shared latency")
    carveouts_bytes: tuple[int, ...] = spec_field(0, 1 << 22, "shared-memory carve-outs the driver may pick")
