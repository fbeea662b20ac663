"""DRAM traffic never exceeds what the footprint allows: a stencil's halo is its neighbours' data, which the L2 still
holds when they read it (chip._new_share)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import needs_cuda

TWINS = Path(__file__).resolve().parent.parent / "validate" / "kernels"


@needs_cuda
def test_a_stencils_halo_is_read_from_dram_once():
    """stencil5 at 4096^2 (64 MiB of input, more than the L2): each CTA's tile reaches a row and a line past its own
    into its neighbours' tiles. Counted as its own data, the input was read 1.5 times (101.6 MB); ncu measures the
    input once at 8192^2 (268 MB of 268)."""
    from gpusim.api import predict_source

    n = 4096
    m, _ = predict_source(TWINS / "stencil5.cu", "stencil5", grid=(n // 32, n // 32, 1), block=(32, 8, 1),
                          args=[f"in=f32[{n * n}]:uniform(0,1)", f"out=f32[{n * n}]", f"n={n}"])
    footprint = 4 * n * n
    assert 0.9 * footprint <= m["dram__bytes_read.sum"] <= 1.02 * footprint


def test_loads_of_the_same_data_in_a_chunk_add_no_distance():
    """An unrolled loop's loads of one panel (the front-end's sgemm_coalesced: 16 loads of A a chunk, one data): the
    L2 model's reuse distance counts distinct bytes, as an LRU's stack distance does, so the same panel loaded 16
    times a chunk is fetched as often as when loaded once (474 MB from HBM before, 78 MB: the hand IR's)."""
    from gpusim.config import load_config
    from gpusim.memory.l2 import L2Footprint, l2_model

    spec = load_config(None).l2
    grid, per_wave, chunks = (96, 48, 1), 264, 16

    def panel(name):  # sgemm_coalesced 3072x1536x2048: a CTA's 32 rows of A, 16 KB a chunk, shared along y
        return L2Footprint(name, "A", "ld", (True, False, False), (0, 64, (True, False, False)), 16384.0, 256.0)

    b = L2Footprint("b", "B", "ld", (False, True, False), (786432, 64, (False, True, False)), 16384.0, 512.0)
    once = l2_model([panel("a0"), b], grid, per_wave, chunks, spec, 12)
    many = l2_model([panel(f"a{i}") for i in range(16)] + [b], grid, per_wave, chunks, spec, 12)
    assert sum(many.dram_read_bytes.values()) == sum(once.dram_read_bytes.values())
    assert once.dram_read_bytes["a0"] < 2.5 * 4 * 3072 * 2048  # the 25 MB panel set, fetched about twice


@needs_cuda
def test_the_engine_moves_through_hbm_the_bytes_the_report_counts():
    """stencil5's five loads share one data group: the first to use a tile is charged its fetch, the others hit it.
    The engine booked each load's HBM bytes at most at its own requests times its fetch ratio, so the first load
    moved its own 182 MB where the group reads 260 MB (8192^2): 457 of the 513 MB the report counts, at 3.18 TB/s,
    past HBM's sustained 3.07. Now the bound is the group's (at 2048^2: 15.0 of 17.8 MB booked before)."""
    from gpusim.chip import simulate
    from gpusim.config import load_config
    from gpusim.frontend import kernel_from_source

    cfg = load_config(None)
    n = 2048
    k = kernel_from_source(TWINS / "stencil5.cu", "stencil5", grid=(n // 32, n // 32, 1), block=(32, 8, 1),
                           args=[f"in=f32[{n * n}]", f"out=f32[{n * n}]", f"n={n}"], compiler="nvrtc", config=cfg)
    sim = simulate(k, cfg)
    booked = sim.result.busy["HBM"] * cfg.hbm.achievable_bandwidth_bytes_per_second / sim.clock_hz
    counted = sum(sim.l2.dram_read_bytes.values()) + sum(sim.l2.dram_write_bytes.values())
    assert booked == pytest.approx(counted, rel=0.02)
