"""No hidden constants: the hardware numbers the model uses come from the config, so editing one key of the
shipped H100 file changes what the simulator predicts (issue 11, item 5).

Each case is the H100 config with one key edited; the kernels are small, so each count is worked by hand.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from gpusim.api import predict
from gpusim.chip import simulate
from gpusim.config import HardwareConfig, load_config
from gpusim.ir import Kernel, KernelError, Launch, Loop, Mem, Tensor
from gpusim.registry import build_kernel
from gpusim.metrics import report

H100_TEXT = (Path(__file__).resolve().parent.parent / "configs" / "h100_sxm.toml").read_text()
CTAS = 8
TRIPS = 4
LD_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
LD_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
GLD_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
GLD_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"


def edited(tmp_path: Path, **keys) -> HardwareConfig:
    """The shipped H100 config with ``key = value`` for each keyword, in every table that has the key."""
    text = H100_TEXT
    for key, value in keys.items():
        text, n = re.subn(rf"^{key} = \{{ value = [^,]+,", f"{key} = {{ value = {value},", text, flags=re.MULTILINE)
        assert n >= 1, f"{key} is not a key of the shipped config"
    path = tmp_path / "edited.toml"
    path.write_text(text)
    return load_config(path)


def shared_stride_reader() -> Kernel:
    """One warp per CTA; each loop trip one 4-byte ld.shared where lane l reads byte 8 * l (every other word)."""
    body = (Mem("lds", "shared", "ld", 4, lambda c: 8 * c.lane + 0 * c.r),)
    return Kernel("stride2_lds", "test", (1,), {}, Launch((CTAS, 1, 1), (32, 1, 1), 32, 256), (),
                  Loop(TRIPS, body), (), (), 0, "")


def coalesced_reader() -> Kernel:
    """One warp per CTA; each loop trip one 4-byte ld.global of 32 consecutive floats (128 bytes)."""
    body = (Mem("ldg", "global", "ld", 4, lambda c: (c.bx * TRIPS + c.it) * 128 + 4 * c.lane, "x"),)
    return Kernel("coalesced_ldg", "test", (1,), {}, Launch((CTAS, 1, 1), (32, 1, 1), 32, 0), (),
                  Loop(TRIPS, body), (), (Tensor("x", CTAS * TRIPS * 128),), 0, "")


def test_bank_count_changes_the_conflicts(tmp_path):
    instructions = CTAS * TRIPS
    # 32 banks of 4 B: words 2l fall in banks 2l % 32, lanes l and l + 16 share one: 2 wavefronts, 1 conflict
    h100 = report(simulate(shared_stride_reader(), load_config()))
    assert h100[LD_WAVEFRONTS] == 2 * instructions
    assert h100[LD_CONFLICTS] == 1 * instructions
    # 16 banks: 8 banks of 4 words each -> 4 wavefronts; a wavefront moves 64 B, so 2 are ideal: 2 conflicts
    banks16 = report(simulate(shared_stride_reader(), edited(tmp_path, banks=16)))
    assert banks16[LD_WAVEFRONTS] == 4 * instructions
    assert banks16[LD_CONFLICTS] == 2 * instructions


def test_bank_width_changes_the_conflicts(tmp_path):
    # 8-byte banks: lane l's word is l, all in different banks: one wavefront, no conflict
    m = report(simulate(shared_stride_reader(), edited(tmp_path, bank_width_bytes=8)))
    assert m[LD_WAVEFRONTS] == CTAS * TRIPS
    assert m[LD_CONFLICTS] == 0


def test_sector_size_changes_sectors_per_request(tmp_path):
    h100 = report(simulate(coalesced_reader(), load_config()))
    assert h100[GLD_REQUESTS] == CTAS * TRIPS
    assert h100[GLD_SECTORS] / h100[GLD_REQUESTS] == 4  # 128 B in 32-B sectors
    cfg = edited(tmp_path, sector_bytes=64)  # the L1's and the L2's sector (they must agree)
    assert cfg.l1.sector_bytes == cfg.l2.sector_bytes == 64
    wide = report(simulate(coalesced_reader(), cfg))
    assert wide[GLD_SECTORS] / wide[GLD_REQUESTS] == 2


def test_line_size_changes_lines_per_request(tmp_path):
    lines = {}
    for line_bytes in (128, 32):
        sim = simulate(coalesced_reader(), edited(tmp_path, line_bytes=line_bytes))
        lines[line_bytes] = int(sim.pats["ldg"].lines.max())
    assert lines == {128: 1, 32: 4}  # the L1TEX tag stage resolves one line per cycle: 4 cycles instead of 1


def test_sector_and_line_sizes_are_checked_together(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(re.sub(r"^line_bytes = \{ value = 128,", "line_bytes = { value = 96,", H100_TEXT,
                           flags=re.MULTILINE))
    with pytest.raises(ValueError, match="line_bytes: 96 is not a power of two"):
        load_config(path)


def test_sm_count_sets_the_persistent_grid(tmp_path):
    from gpusim.chip import representative_works

    shape = (2048, 2048, 128)  # 16 x 8 = 128 tiles of 128 x 256
    assert build_kernel("hgemm_persistent", shape, None, load_config()).persistent_ctas == 132
    half = edited(tmp_path, sm_count=66)
    k = build_kernel("hgemm_persistent", shape, None, half)
    assert k.persistent_ctas == 66
    # the simulation runs that grid: persistent CTA p takes tiles p, p + 66, ...: 1 or 2 of the 128 each
    # (with 132 CTAs, one at most)
    for cfg, most in ((load_config(), 1), (half, 2)):
        _, sim = predict("hgemm_persistent", shape, None, cfg)
        works, _ = representative_works(sim.kernel, sim.occ.ctas_per_sm, cfg.chip.sm_count, sim.representatives)
        assert max(len(w.tiles) for w in works) == most


def test_shared_memory_limit_comes_from_the_config(tmp_path):
    shape = (1024, 1024, 256)
    smem = build_kernel("hgemm_ws", shape).launch.smem_bytes  # 3 stages of (128 + 256) x 128 B + 1 KB
    assert smem == 148480
    small = edited(tmp_path, smem_per_block_max_bytes=131072)
    with pytest.raises(KernelError, match="more than the 131072 B"):
        build_kernel("hgemm_ws", shape, None, small)
    assert build_kernel("hgemm_ws", shape, {"stages": "2"}, small).launch.smem_bytes <= 131072


def test_issue_quantum_comes_from_the_config(tmp_path):
    kernel = ("sgemm_warptiling", (512, 512, 512))
    base, _ = predict(*kernel, None, load_config())
    other, _ = predict(*kernel, None, edited(tmp_path, issue_quantum_instructions=1))
    assert other["gpu__time_duration.sum"] != base["gpu__time_duration.sum"]
    assert other["smsp__inst_executed.sum"] == base["smsp__inst_executed.sum"]  # same work, issued differently


def test_issue_to_l1tex_latency_comes_from_the_config(tmp_path):
    base = report(simulate(coalesced_reader(), load_config()))
    slow = report(simulate(coalesced_reader(), edited(tmp_path, issue_to_pipe_cycles=50)))
    assert slow["gpu__time_duration.sum"] > base["gpu__time_duration.sum"]


def test_addresses_are_whole_warps_of_the_configured_size():
    # the warp size reaches the address evaluation: one row of lane addresses per warp
    from gpusim.patterns import AccessGeometry, eval_addresses

    k = coalesced_reader()
    geo = AccessGeometry.of(load_config())
    a = eval_addresses(k, k.loop.body[0], (0, 0, 0), 0, 0, geo.lanes)
    assert a.shape == (1, 1, geo.lanes) == (1, 1, 32)
    assert np.array_equal(a[0, 0], 4 * np.arange(32))
