"""Every fast-forward (a CTA's outer loop, a persistent CTA's tiles, the grid's CTAs) leaves the report as the run
without it would: small kernels of each kind predicted both ways (``GPUSIM_FAST_FORWARD=0`` simulates every
iteration, tile and CTA), every numeric metric compared (:mod:`gpusim.fast_forward_check`).
``benchmarks/bench_fast_forward.py`` runs the same check over the validated rows."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest

from gpusim import engine
from gpusim.chip import simulate
from gpusim.engine import CtaWork
from gpusim.fast_forward_check import GOAL_PCT, both_ways, differences, fast_forward, flat, is_stall
from gpusim.registry import build_kernel

# (kernel, shape, the fast-forward it exercises)
CASES = [
    ("hgemm_ws", (2048, 2048, 4096), "loop"),
    ("hgemm_persistent", (8192, 8192, 1024), "tile"),
    ("mem_copy", (1 << 24,), "grid"),
]


@pytest.mark.parametrize("name,shape,kinds", CASES)
def test_a_fast_forward_leaves_every_metric_but_the_stall_breakdown_as_the_full_run(name, shape, kinds):
    # time, the clock, every unit's utilization and share of its peak, bytes and counts within 0.5%; the stall
    # breakdown (a reason's warps per issue, a cause's share) is extrapolated from a window and moves more
    # (benchmarks/bench_fast_forward.py prints it)
    ref, ff, used = both_ways(name, shape, kinds=kinds)
    assert used
    d = differences(ref, ff)
    worst, key = max((x, k) for k, x in d.items() if not is_stall(k))
    assert worst <= GOAL_PCT, (key, flat(ref).get(key), flat(ff).get(key))


def test_skipped_tiles_book_the_work_of_the_iterations_they_skipped(h100):
    # a persistent CTA's tiles fast-forwarded after its loop was: each unit's busy cycles (the work done, whatever
    # the time it took) are the full run's. Issue 29: the skipped tiles booked only the simulated iterations'
    # work, and the tensor pipe showed 33% busy where it was 73%, so the clock model kept a higher clock
    kernel = build_kernel("hgemm_persistent", (4096, 8192, 2048), None, h100)
    with fast_forward(False):
        ref = simulate(kernel, h100).result
    with fast_forward("loop,tile"):
        ff = simulate(kernel, h100).result
    assert ff.fast_forward and ff.simulated_iterations < kernel.loop.trips
    for unit, busy in ref.busy.items():
        assert ff.busy[unit] == pytest.approx(busy, rel=GOAL_PCT / 100, abs=1.0), unit


def test_the_switch_names_what_it_allows(monkeypatch):
    monkeypatch.setenv(engine.FAST_FORWARD_ENV, "loop,grid")
    assert engine.fast_forwards() == {"loop", "grid"}
    with fast_forward(False):
        assert engine.fast_forwards() == frozenset()
    monkeypatch.setenv(engine.FAST_FORWARD_ENV, "tiles")
    with pytest.raises(ValueError, match="tiles"):
        engine.fast_forwards()


def test_ctas_resident_together_skip_their_loops_together(h100):
    # eight CTAs on an SM: once one has a steady window, the others skip at their next iteration, each from its own
    # window measured beside the others' detailed iterations. Each deciding alone, the later ones measured their
    # windows beside the first's background reservation, an even load they meet otherwise than its bursts (fa2
    # 8,16,2048,128 3.1% short of its full run, sgemm_2d_blocktiling BM=64 2048^3 12.8%); their skips began up to
    # four iterations apart
    kernel = build_kernel("sgemm_2d_blocktiling", (2048, 2048, 512), {"BM": "64", "BN": "64"}, h100)
    with fast_forward("loop"):
        res = simulate(kernel, h100, trace=True).result
    wpc = -(-kernel.launch.threads_per_block // h100.sm.warp_size_threads)
    first: dict[int, float] = {}  # SM 0's first CTA in each slot: when its warps' skipped stretch began
    for row, _, cat, t0, _ in res.trace:
        if cat == engine.EXTRAPOLATED:
            first[row // wpc] = min(first.get(row // wpc, t0), t0)
    assert len(first) == 8
    assert max(first.values()) - min(first.values()) <= res.period


@pytest.mark.parametrize("kinds,overrides", [(True, {"BN": "64", "regs_per_thread": 130}),
                                             (False, {"BM": "64", "regs_per_thread": 162})])
def test_a_partial_wave_is_dealt_to_the_sms_in_turn(h100, monkeypatch, kinds, overrides):
    # 512 CTAs on 396 slots (the registers measured): a full wave and a tail of 116 CTAs, two representative CTAs
    # of 58. Each representative SM stands for 66 real SMs, over which the CTA scheduler spreads the tail: one
    # each. Taken by whichever slot freed first, both went to the SM whose first-wave CTAs happened to end first,
    # and the kernel ran 8-16% longer or shorter as a fast-forward moved those ends by 1%
    # (sgemm_2d_blocktiling BM=64,BN=64 2048^3)
    placed = []
    run_cta = engine.ChipModel._run_cta

    def record(self, work, sm, slot):
        placed.append((self, sm.index, work.weight))
        yield from run_cta(self, work, sm, slot)

    monkeypatch.setattr(engine.ChipModel, "_run_cta", record)
    kernel = build_kernel("sgemm_2d_blocktiling", (2048, 2048, 512), overrides, h100)
    with fast_forward(kinds):
        simulate(kernel, h100)
    last = [(i, w) for model, i, w in placed if model is placed[-1][0]]
    wave = max(w for _, w in last)
    tail = sorted(i for i, w in last if w < wave)
    assert tail == [0, 1]


def test_the_grid_skip_spreads_its_ctas_over_the_sms_whichever_ran_its_window(h100, monkeypatch):
    # the grid fast-forward extrapolates from the last CTAs to complete, one round of slots; they may have run three
    # on one SM and one on the other, but the skipped CTAs go to every slot alike: an SM unit's share of their work
    # is the same on every SM. Reckoned with the window's mix, sgemm_smem_blocking 4096^3's busiest L1TEX pipe got
    # 1.5 times its CTAs and the kernel ran 22% long
    models = []
    run = engine.ChipModel.run

    def keep(self):
        models.append(self)
        return run(self)

    monkeypatch.setattr(engine.ChipModel, "run", keep)
    simulate(build_kernel("sgemm_smem_blocking", (256, 256, 64), None, h100), h100)
    m = models[-1]
    assert len(m.sms) == 2 and "grid" in m.may_skip
    slots = len(m.sms) * m.ctas_per_sm
    window = engine.GRID_WINDOW_ROUNDS * slots
    unit = [m._index[sm.l1tex.reported()[0][1]] for sm in m.sms]  # each SM's L1TEX pipe

    def skipped_time(on: list[int]) -> float:
        """The skipped stretch after a window whose CTAs ran on SMs ``on``, each keeping its L1TEX pipe busy for
        ten times the slots' period."""
        m.queue = deque(CtaWork(i, 1.0, m.trips) for i in range(4 * slots))
        m.done_periods = [1000.0] * 4 * window
        m.done_shape = [(m.trips, 0)] * 4 * window
        m.done_weight = [1.0] * 4 * window
        m.done_stats = [(np.zeros(len(engine.STALLS)), 0.0)] * 4 * window
        m.done_causes = [{}] * 4 * window
        m.done_work = []
        for sm in on * 4:
            v = np.zeros(len(m._servers))
            v[unit[sm]] = 10_000.0 * m._rates[unit[sm]]
            m.done_work.append(v)
        m.skip_time = 0.0
        m._grid_fast_forward()
        return m.skip_time

    even = [0, 1] * (window // 2)
    uneven = [0] * (window - 1) + [1]
    assert skipped_time(even) > 0
    assert skipped_time(uneven) == pytest.approx(skipped_time(even))
