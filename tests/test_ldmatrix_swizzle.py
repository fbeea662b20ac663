"""ldmatrix in the IR: wavefronts follow the row addresses exactly, and the 128B swizzle removes the conflicts
of a column of 128-byte rows (measured on the H100: ldmatrix.x4 32 wavefronts unswizzled, 4 swizzled)."""

from __future__ import annotations

import numpy as np
import pytest

from gpusim.chip import simulate
from gpusim.config import load_config
from gpusim.ir import Compute, Kernel, Launch, Loop, Mem
from gpusim.memory.swizzle import swizzle_bytes
from gpusim.metrics import report

ROW_BYTES = 128  # a 64-element bf16 row
ROWS = 64
TRIPS = 64
LDSM = "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum"
CONFLICTS = "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum"


def tile_reader(swizzle: str) -> Kernel:
    """One warp per CTA reads a 32x8 bf16 column block of a 64x64 tile with ldmatrix.x4 (4 matrices of 8 rows,
    lane l gives row l's 16-byte chunk c = r % 8 of the row), then issues one mma.sync per matrix."""

    def rows(c):
        row = c.lane + 0 * c.r  # lanes 0..31 are the 32 row addresses of the 4 matrices
        offset = row * ROW_BYTES + (c.r % 8) * 16
        return np.asarray(swizzle_bytes(offset, swizzle))

    body = (Mem("ldA", "shared", "ldsm", 16, rows, repeat=4, matrices=4),
            Compute("mma", "tensor", 4, 4, after=("ldA",)))
    return Kernel(f"ldsm_{swizzle}", "test", (ROWS,), {}, Launch((132, 1, 1), (32, 1, 1), 32, ROWS * ROW_BYTES),
                  (), Loop(TRIPS, body), (), (), 132 * TRIPS * 4 * 4096, "")


@pytest.fixture(scope="module")
def metrics():
    cfg = load_config()
    return {s: report(simulate(tile_reader(s), cfg)) for s in ("none", "128B")}


def test_unswizzled_column_read_conflicts_eightfold(metrics):
    # every matrix's 8 rows start 128 B apart: all in banks 0..3 -> 8 wavefronts per matrix, 32 per x4
    instructions = 132 * TRIPS * 4
    assert metrics["none"][LDSM] == instructions * 32
    assert metrics["none"][CONFLICTS] == instructions * 28


def test_128b_swizzle_removes_the_conflicts(metrics):
    # chunk ^= row % 8 spreads each matrix's 8 rows over all 32 banks: one wavefront per matrix
    instructions = 132 * TRIPS * 4
    assert metrics["128B"][LDSM] == instructions * 4
    assert metrics["128B"][CONFLICTS] == 0


def test_swizzle_makes_the_kernel_faster(metrics):
    assert metrics["128B"]["gpu__time_duration.sum"] < metrics["none"]["gpu__time_duration.sum"]
