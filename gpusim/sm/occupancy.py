"""Occupancy: how many CTAs of a launch fit on one SM, and which resource limits them.

Rules from the CUDA occupancy calculator as documented in the Programming Guide: registers are allocated
per warp in units of ``register_allocation_unit_registers``; shared memory per CTA includes a reserved
system allocation; the driver picks the smallest shared-memory carve-out that holds the resident CTAs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gpusim.specfield import spec_field


@dataclass(frozen=True)
class SmSpec:
    """Per-SM resource limits (values from ``[sm]`` in the hardware config)."""

    subpartitions: int = spec_field(1, 8, "SM sub-partitions (SMSPs), one warp scheduler each")
    warp_size_threads: int = spec_field(32, 32, "threads per warp")
    max_warps_per_sm: int = spec_field(1, 128, "resident warps per SM")
    max_threads_per_sm: int = spec_field(32, 4096, "resident threads per SM")
    max_ctas_per_sm: int = spec_field(1, 64, "resident thread blocks per SM")
    max_threads_per_block: int = spec_field(32, 2048, "threads per block")
    registers_per_sm: int = spec_field(1024, 1 << 20, "32-bit registers per SM")
    max_registers_per_thread: int = spec_field(16, 1024, "32-bit registers per thread")
    max_registers_per_block: int = spec_field(1024, 1 << 20, "32-bit registers per block")
    register_allocation_unit_registers: int = spec_field(1, 1024, "registers allocated per warp in units of")
    smem_per_sm_max_bytes: int = spec_field(0, 1 << 22, "largest shared-memory carve-out per SM")
    smem_per_block_max_bytes: int = spec_field(0, 1 << 22, "largest shared memory one block may use")
    smem_reserved_per_block_bytes: int = spec_field(0, 65536, "system shared memory reserved per block")
    unified_l1_smem_bytes: int = spec_field(1024, 1 << 22, "unified L1 + shared-memory capacity per SM")
    # launch limits of the architecture (a launch beyond them is refused by CUDA, so it is not predicted)
    max_grid_dim_x: int = spec_field(1, (1 << 31) - 1, "largest gridDim.x")
    max_grid_dim_yz: int = spec_field(1, (1 << 31) - 1, "largest gridDim.y and gridDim.z")
    max_block_dim_xy: int = spec_field(1, 4096, "largest blockDim.x and blockDim.y")
    max_block_dim_z: int = spec_field(1, 4096, "largest blockDim.z")
    max_cluster_ctas: int | None = spec_field(1, 64, "most thread blocks in a cluster", feature="clusters")


@dataclass(frozen=True)
class Occupancy:
    """Resident CTAs per SM and what limits them."""

    ctas_per_sm: int
    warps_per_cta: int
    limiter: str  # "warps", "threads", "blocks", "registers" or "shared memory"
    limits: dict[str, int]
    smem_carveout_bytes: int

    @property
    def warps_per_sm(self) -> int:
        return self.ctas_per_sm * self.warps_per_cta


class LaunchError(ValueError):
    """A launch that cannot run on this SM (names the resource and the numbers)."""


def occupancy(spec: SmSpec, threads_per_block: int, regs_per_thread: int, smem_per_block_bytes: int,
              carveouts_bytes: tuple[int, ...]) -> Occupancy:
    """CTAs of one launch resident per SM; raises :class:`LaunchError` if not even one fits."""
    if threads_per_block < 1 or threads_per_block > spec.max_threads_per_block:
        raise LaunchError(f"block of {threads_per_block} threads: allowed 1..{spec.max_threads_per_block}")
    if regs_per_thread < 1 or regs_per_thread > spec.max_registers_per_thread:
        raise LaunchError(f"regs_per_thread={regs_per_thread}: allowed 1..{spec.max_registers_per_thread}")
    if smem_per_block_bytes > spec.smem_per_block_max_bytes:
        raise LaunchError(
            f"shared memory per block {smem_per_block_bytes} B ({smem_per_block_bytes / 1024:.1f} KB) exceeds "
            f"the {spec.smem_per_block_max_bytes} B ({spec.smem_per_block_max_bytes // 1024} KB) per-block limit")
    warps = math.ceil(threads_per_block / spec.warp_size_threads)
    unit = spec.register_allocation_unit_registers
    regs_per_warp = math.ceil(regs_per_thread * spec.warp_size_threads / unit) * unit
    if regs_per_warp * warps > spec.max_registers_per_block:
        raise LaunchError(
            f"{regs_per_thread} registers x {threads_per_block} threads = {regs_per_warp * warps} registers per "
            f"block exceeds the {spec.max_registers_per_block} limit")
    smem_alloc = smem_per_block_bytes + spec.smem_reserved_per_block_bytes if smem_per_block_bytes else 0
    limits = {
        "warps": spec.max_warps_per_sm // warps,
        "threads": spec.max_threads_per_sm // (warps * spec.warp_size_threads),
        "blocks": spec.max_ctas_per_sm,
        "registers": spec.registers_per_sm // (regs_per_warp * warps),
        "shared memory": spec.smem_per_sm_max_bytes // smem_alloc if smem_alloc else spec.max_ctas_per_sm,
    }
    ctas = min(limits.values())
    if ctas < 1:
        worst = min(limits, key=limits.__getitem__)
        what = _describe(worst, threads_per_block, regs_per_thread, smem_per_block_bytes)
        raise LaunchError(f"not even one CTA fits on an SM: {worst} limit ({what})")
    limiter = min(limits, key=lambda k: (limits[k], list(limits).index(k)))
    need = ctas * smem_alloc
    carve = min((c for c in sorted(carveouts_bytes) if c >= need), default=max(carveouts_bytes))
    return Occupancy(ctas_per_sm=ctas, warps_per_cta=warps, limiter=limiter, limits=limits,
                     smem_carveout_bytes=carve)


def _describe(resource: str, threads: int, regs: int, smem: int) -> str:
    return {"registers": f"{regs} registers/thread x {threads} threads",
            "shared memory": f"{smem} B of shared memory per block"}.get(resource, f"{threads} threads")
