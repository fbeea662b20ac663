"""Every fast-forward (a CTA's outer loop, a persistent CTA's tiles, the grid's CTAs) leaves the report as the run
without it would: small kernels of each kind predicted both ways (``GPUSIM_FAST_FORWARD=0`` simulates every
iteration, tile and CTA), every numeric metric compared (:mod:`gpusim.fast_forward_check`).
``benchmarks/bench_fast_forward.py`` runs the same check over the validated rows."""

from __future__ import annotations

from collections import deque
from types import SimpleNamespace

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


def _resident(serial: int, sm, began: list[float], trips: int = 256) -> SimpleNamespace:
    """A CTA resident on ``sm`` whose loop began its iterations at ``began``."""
    ls = SimpleNamespace(skip_after=None, started=len(began) - 1, began=began, window_end=None, group_period=None,
                         own_period=None)
    cta = SimpleNamespace(serial=serial, sm=sm, current=ls, work=SimpleNamespace(trips=trips))
    sm.resident[serial] = cta
    return cta


def test_ctas_resident_together_skip_their_loops_together_at_one_period():
    # once one CTA skips, each other CTA on its SM that has run its warm-up and two more iterations beside the others'
    # detailed iterations skips at its next iteration (left alone, it would measure its next windows beside the
    # first one's background reservation: fa2 8,16,2048,128 3.1% short of its run without fast-forward), and they
    # all skip at the median period of those that ran two full windows: without fast-forward they lock into one
    # period, where their windows differ by chance and the wave ends with the slowest (sgemm_2d_blocktiling
    # 4096^3 5.5% longer than its run without fast-forward, BM=64 10.5%; 0.9% shorter and 7.2% longer with it).
    # One with fewer iterations does not join, nor one whose windows ran beside a skipped stretch.
    sm = SimpleNamespace(resident={}, skipped_until={5: 9000.0})  # another CTA's skipped stretch ended at 9000
    now = 30_000.0
    decider = _resident(0, sm, [1000.0 * i for i in range(20)])  # 1000 cycles an iteration
    ready = _resident(1, sm, [3000.0 + 1100.0 * i for i in range(20)])  # its two windows from 10000 on, 1100
    slow = _resident(2, sm, [500.0 + 1500.0 * i for i in range(20)])  # a window that took in a stall: 1500
    young = _resident(3, sm, [18_000.0 + 1000.0 * i for i in range(11)])  # warm-up and six more iterations
    newborn = _resident(4, sm, [25_000.0 + 1000.0 * i for i in range(5)])
    beside = _resident(6, sm, [1000.0 * i for i in range(20)])  # its windows from 7000 on
    model = SimpleNamespace(env=SimpleNamespace(now=now), _clean=engine.ChipModel._clean,
                            _steady=engine.ChipModel._steady)
    engine.ChipModel._join(model, decider, [(t,) for t in decider.current.began])  # its deciding warp's marks
    for cta in (ready, slow, young):
        assert cta.current.skip_after == cta.current.started + 1 and cta.current.window_end == now
    assert decider.current.skip_after is None  # the decider sets its own
    assert newborn.current.skip_after is None and beside.current.skip_after is None
    for cta in (decider, ready, slow, young):  # the median of 1000, 1100 and 1500, not their mean (1200)
        assert cta.current.group_period == pytest.approx(1100.0)
    assert young.current.own_period is None and slow.current.own_period == pytest.approx(1500.0)
    assert newborn.current.group_period is None


def test_a_loop_skips_beside_skipped_ctas_when_no_clean_window_can_come(h100):
    # eight CTAs an SM: one of them is nearly always in a skipped stretch, so a window of the others' detailed
    # iterations alone may never come. Waiting for one ran to the forced skip at 64 iterations, its window beside
    # the same reservations (sgemm_1d_blocktiling BM=32,BN=32,TM=4 4096^3: 79 of 81 CTAs, 3.1 -> 5.3-6.5 s)
    kernel = build_kernel("sgemm_1d_blocktiling", (1024, 1024, 2048),
                          {"BM": "32", "BN": "32", "TM": "4", "regs_per_thread": 34}, h100)
    res = simulate(kernel, h100).result
    assert res.loop_steady
    assert res.simulated_iterations < engine.MAX_LOOP_ITERATIONS


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


def test_a_loop_window_with_a_one_off_stall_is_not_steady():
    # two windows of six iterations can agree by chance when a one-off stall straddles them (sgemm_vectorized
    # 4096^3: 3,776-cycle iterations, then 6,362 and 5,363 in one window and 7,228 in the next: 4,472 and 4,407 cycles)
    d = [3776] * 8 + [6362, 5363, 7228, 3927, 3810, 3838, 3834, 3806]
    ends = [0.0]
    for x in d:
        ends.append(ends[-1] + x)
    marks = [(t,) for t in ends]
    assert engine.ChipModel._steady(marks)  # the two windows' periods agree within the tolerance
    assert not engine.ChipModel._steady(marks, spike=engine.STEADY_SPIKE)
    calm = [(3776.0 * i,) for i in range(20)]
    assert engine.ChipModel._steady(calm, spike=engine.STEADY_SPIKE)


def test_a_skip_beside_a_skipped_stretch_ends_where_that_stretch_ends():
    # a window measured beside another CTA's background reservation holds only as long as the reservation: the last
    # wave's second CTA of sgemm_bank_padded's front-end build (4096^3) measured 10,784 cycles an iteration beside its
    # neighbour's, where the two share the SM at about 5,800 each, and extrapolated that over 496 iterations, far past
    # the reservation's end: 22.8% over the run without fast-forward, 2.2% with the skip cut where it ends
    model = SimpleNamespace(env=SimpleNamespace(now=10_000.0))
    marks = [(1000.0 * i,) for i in range(11)]  # 1000 cycles an iteration, the tenth ends now

    def end(skipped_until, trips=512):
        cta = SimpleNamespace(serial=0, sm=SimpleNamespace(skipped_until=skipped_until))
        return engine.ChipModel._skip_end(model, cta, marks, 10, 11, trips)

    assert end({1: 60_000.0}) == 60  # the other's stretch ends 50 iterations from now
    assert end({1: 60_000.0, 2: 40_000.0}) == 60  # the latest of them
    assert end({}) is None and end({0: 90_000.0}) is None  # none beside it (its own stretch does not count)
    assert end({1: 5_000.0}) is None  # one that ended already
    assert end({1: 60_000.0}, trips=40) is None  # the loop ends first: to the end
    assert end({1: 14_000.0}) == 0  # four iterations: not worth a skip, on in detail


def test_a_cta_does_not_skip_alone_while_its_sm_is_filling():
    # a CTA that skipped alone runs its reservation at its own pace and the one that comes gets what is left of the
    # SM, where the two share it as equals (sgemm_bank_linearized 4096^3's last wave: 2,656 cycles an iteration
    # alone, 4,599 for the newcomer beside the reservation, 3,840 each when both run in detail). A partial wave's CTAs
    # go to the SMs in turn: one for another SM does not come to this one
    mine, other = SimpleNamespace(resident={0: None}, partial_works=1), SimpleNamespace(partial_works=0)
    full, part = SimpleNamespace(weight=2.0), SimpleNamespace(weight=1.0)
    model = SimpleNamespace(queue=deque([full]), ctas_per_sm=2, wave_weight=2.0, sms=[mine, other])
    assert engine.ChipModel._filling(model, mine)
    mine.resident[1] = None
    assert not engine.ChipModel._filling(model, mine)  # full
    mine.resident.pop(1)
    model.queue.clear()
    assert not engine.ChipModel._filling(model, mine)  # nothing left to come
    model.queue.append(part)
    assert not engine.ChipModel._filling(model, mine)  # the tail's next CTA goes to the other SM
    model.queue.append(part)
    assert engine.ChipModel._filling(model, mine)  # and the one after it here


def test_the_loop_skips_of_a_wave_that_fills_in_turn_land_on_the_full_run(h100):
    # sgemm_vectorized 4096^3 (two CTAs an SM): its last wave's CTAs arrive one after another. 4.9% over the run
    # without fast-forward when the first skipped alone and the second extrapolated its period beside the first's
    # reservation; 0.4% with the skip cut at the reservation's end, or with the first waiting for the second
    kernel = build_kernel("sgemm_vectorized", (4096, 4096, 4096), None, h100)
    with fast_forward(False):
        ref = simulate(kernel, h100).result.cycles
    with fast_forward("loop"):
        ff = simulate(kernel, h100).result
    assert ff.fast_forward
    assert ff.cycles == pytest.approx(ref, rel=0.01)
