"""DRAM traffic never exceeds what the footprint allows: a stencil's halo is its neighbours' data, which the L2 still
holds when they read it (chip._new_share)."""

from __future__ import annotations

from pathlib import Path

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
