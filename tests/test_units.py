"""The engine's units one at a time, each with a hand-worked case: a request in, a completion time out."""

from __future__ import annotations

import pytest
import simpy

from gpusim.memory.hbm import Hbm
from gpusim.memory.l2 import L2Partitions, L2WritePath
from gpusim.memory.l2_port import L2Port
from gpusim.memory.lsu import L1TexPipe, LsuQueue
from gpusim.memory.tma import TmaEngine, TmaSpec
from gpusim.sm.barriers import AsyncGroups, CtaBarriers, Mbarriers
from gpusim.sm.pipes import ExecutionPipes
from gpusim.sm.scheduler import IssueSlots


def test_issue_slots_are_per_subpartition():
    slots = IssueSlots(0, 4, 1.0)
    ledger: dict = {}
    assert slots.issue(ledger, 0, 0.0, 4) == (0.0, 4.0)
    assert slots.issue(ledger, 0, 0.0, 4) == (4.0, 8.0)  # the same scheduler: after the first warp
    assert slots.issue(ledger, 1, 0.0, 4) == (0.0, 4.0)  # another sub-partition's: at once
    assert sorted(ledger.values()) == [4, 8]


def test_a_pipe_works_at_its_rate():
    pipes = ExecutionPipes(0, 4, {"fp32": 0.5, "sfu": 0.125}, {"fp32": 4, "sfu": 20})
    assert pipes.dispatch({}, "fp32", 2, 10.0, 4) == (10.0, 18.0)
    assert pipes.dispatch({}, "sfu", 2, 10.0, 1) == (10.0, 18.0)
    assert [name for name, _, _ in pipes.reported()] == ["pipe fp32"] * 4 + ["pipe sfu"] * 4


def test_lsu_queue_holds_a_number_of_requests_whatever_their_size():
    """A queue 3 deep: three requests waiting for the pipe (entering it at 10, 20, 30) fill it; a fourth ready at
    0 waits until the first of them enters the pipe at 10; a request ready at 25 finds one waiting and goes."""
    pipe = L1TexPipe(0, 1.0, 0)
    q = LsuQueue("LG", "lg_throttle", 3, pipe)
    for at in (10.0, 20.0, 30.0):
        assert q.admit(0.0, 0.0) == 0.0
        q.enter(at)
    assert q.admit(0.0, 0.0) == 10.0
    assert q.admit(25.0, 0.0) == 25.0
    q.enter(40.0)
    assert q.admit(5.0, 5.0) == 20.0  # four waiting at 5: room once the second has entered


def test_l1tex_is_entered_after_the_issue_to_pipe_cycles():
    assert L1TexPipe(0, 1.0, 12).access({}, 0.0, 4) == (12.0, 16.0)
    assert L1TexPipe(0, 1.0, 12).write({}, 0.0, 4) == (0.0, 4.0)  # an async copy's write: no issue in front of it


def test_l2_partitions_share_the_bandwidth_evenly():
    l2 = L2Partitions(8.0, 4, 200)  # 2 B per cycle each
    ledger: dict = {}
    assert l2.read(ledger, 0.0, 64) == 8.0  # 16 B per partition
    assert list(ledger.values()) == [16.0]  # what each partition was asked
    assert sum(share for _, _, share in l2.reported()) == 1.0  # four partitions, each a quarter of the L2


def test_a_fill_waits_for_the_write_path():
    wp = L2WritePath(0.5)
    ledger: dict = {}
    assert wp.fill(ledger, 100.0, 40) == 100.0  # 20 cycles ending as the last byte arrives
    busy = L2WritePath(0.5)
    assert busy.write(ledger, 0.0, 96) == 96.0  # stores hold the path over [0, 96)
    assert busy.fill(ledger, 50.0, 20) == 106.0  # 10 cycles wanted from 40: only after the stores
    assert L2WritePath(0.0).fill({}, 50.0, 20) == 50.0  # no fill cost configured


def test_port_and_hbm_move_bytes_at_their_rates():
    assert L2Port(0, 64.0).transfer({}, 0.0, 256) == 4.0
    hbm = Hbm(32.0, 600)
    assert hbm.transfer({}, 10.0, 64) == 12.0
    assert hbm.latency_cycles == 600


def test_tma_engine_starts_one_copy_per_interval():
    tma = TmaEngine(0, TmaSpec(issue_cycles=10, copy_interval_cycles=100, l2_latency_cycles=500,
                               hbm_latency_cycles=900, bytes_per_cycle=64, store_bytes_per_cycle=32,
                               store_latency_cycles=68))
    assert tma.start({}, 0.0) == 0.0
    assert tma.start({}, 0.0) == pytest.approx(100.0)
    assert tma.latency_cycles(6400, from_hbm=False) == 600.0


def test_bar_sync_releases_every_member_after_the_last_arrives():
    env = simpy.Environment()
    bars = CtaBarriers(env, 20)
    released = []

    def warp(delay):
        yield env.timeout(delay)
        ev, _ = bars.arrive((0, "__syncthreads"), 3)
        yield ev
        released.append(env.now)

    for d in (0, 5, 30):
        env.process(warp(d))
    env.run()
    assert released == [50, 50, 50]
    ev, count = bars.arrive((0, "__syncthreads"), 3)  # its next use starts afresh
    assert count == 1 and not ev.triggered


def test_mbarrier_phase_completes_at_its_latest_arrival():
    env = simpy.Environment()
    mb = Mbarriers(env, {"full": 2})
    mb.arrive(0, "full", 0, 10.5)
    assert not mb.completion(0, "full", 0).triggered
    mb.arrive(0, "full", 0, 3.0)
    env.run()
    assert env.now == 11 and mb.completion(0, "full", 0).processed
    assert mb.describe(0, "full", 0) == "mbarrier 'full' phase 0 (2 of 2 arrivals)"


def test_mbarrier_phases_of_skipped_iterations_are_settled():
    mb = Mbarriers(simpy.Environment(), {"full": 1})
    mb.complete_skipped(0, "full", 2, 4)
    assert mb.settled(0, "full", -1) and mb.settled(0, "full", 2) and mb.settled(0, "full", 4)
    # phases before the skip still wait for their own arrivals
    assert not mb.settled(0, "full", 1) and not mb.settled(0, "full", 5) and not mb.settled(1, "full", 3)
    mb.forget(0)
    assert not mb.settled(0, "full", 4)


def test_wait_group_waits_for_all_but_the_newest_groups():
    g = AsyncGroups()
    g.join("cp.async", 10.0)
    g.join("cp.async", 30.0)
    g.join("", 99.0)  # synchronous work joins no group
    g.commit("cp.async", 0.0)  # done at 30
    g.commit("cp.async", 5.0)  # empty: done when committed
    assert g.wait("cp.async", 1) == 30.0
    assert g.wait("cp.async", 0) == 5.0
    assert g.wait("cp.async", 0) == 0.0  # nothing left to wait for


def test_l2_read_cost_by_lines_and_sectors():
    """A full line (4 sectors) costs its 128 bytes of L2 read bandwidth; one sector alone in its line costs a line
    operation and a sector, so that single-sector lines run at the measured 57.2 lines per clock chip-wide
    (validate/measurements/h100/l2sectors-2026-11-24.json) whatever the L2's bandwidth."""
    from gpusim.config import load_config

    l2 = load_config().l2
    assert l2.read_cost_bytes(1, 4, 128) == pytest.approx(128.0)
    assert l2.bandwidth_bytes_per_cycle / l2.read_cost_bytes(1, 1, 128) == pytest.approx(57.2, rel=0.01)
    op = l2.read_line_op_bytes
    assert l2.read_cost_bytes(8, 32, 128) == pytest.approx(8 * op + 32 * (128 - op) / 4, rel=1e-9)


def test_loaded_latency_follows_the_measured_points_of_recent_utilization():
    """A unit's latency grows with how busy its server has just been: none when idle, linear between the measured
    points (the first from an idle unit), held past the last (there the server's own queue delays requests)."""
    from gpusim.resources import BIN_CYCLES, LOAD_WINDOW_BINS, LoadedLatency, RateServer

    loaded = LoadedLatency((36, 64, 91), (14, 82, 306))
    server = RateServer(10.0, "HBM")
    t = 4 * LOAD_WINDOW_BINS * BIN_CYCLES
    assert loaded.cycles(server, t) == 0.0
    window = LOAD_WINDOW_BINS * BIN_CYCLES
    server.serve(t - window, 0.5 * 10.0 * window)  # half the capacity of the window before t
    assert server.load(t, LOAD_WINDOW_BINS) == pytest.approx(0.5)
    assert loaded.cycles(server, t) == pytest.approx(14 + (82 - 14) * (0.5 - 0.36) / (0.64 - 0.36))
    server.serve(t - window, 0.5 * 10.0 * window)  # now full
    assert loaded.cycles(server, t) == pytest.approx(306)
    assert loaded.cycles(server, t + 10 * window) == 0.0  # long idle since


def test_ctas_wanting_a_missing_tile_in_one_wave_all_wait_for_its_fill():
    """Two CTAs of one wave read the same 4 KiB tile: HBM sends it once (one request of two misses, ncu's count), but
    both CTAs wait for the fill. A second wave finds it in the L2."""
    from gpusim.config import load_config
    from gpusim.memory.l2 import L2Footprint, l2_model

    spec = load_config().l2
    tile = 4096
    op = L2Footprint("ldB", "B", "ld", (False, False, False), (0, 128, (False, False, False)), tile, tile / 32)
    one = l2_model([op], (2, 1, 1), 2, 1, spec, 8)
    assert one.dram_read_bytes["ldB"] == tile
    assert one.hit_fraction("ldB", 32) == pytest.approx(0.5)
    assert one.latency_miss_fraction("ldB", 32) == pytest.approx(1.0)
    two = l2_model([op], (4, 1, 1), 2, 1, spec, 8)  # two waves of two: the second hits
    assert two.dram_read_bytes["ldB"] == tile
    assert two.latency_miss_fraction("ldB", 32) == pytest.approx(0.5)


def test_tma_stores_read_their_boxes_one_after_another_at_the_measured_rate():
    """validate/micro/run_tma_store.py on the H100: one SM storing 2 / 8 / 32 KiB boxes one at a time waits 132 / 324 /
    1092 cycles for each box's read (wait_group.read), and with eight in flight 65.8 / 257.8 / 1025.8 cycles a store.
    The H100 config's TMA unit gives both within 2%: its stores queue on the SM's store rate, then the latency."""
    import json
    from pathlib import Path

    from gpusim.config import load_config

    rows = json.loads((Path(__file__).resolve().parent.parent / "validate/measurements/h100/tmastore-2026-12-07.json")
                      .read_text())["results"]["rows"]
    spec = load_config().tma
    for r in (r for r in rows if r["grid"] == 1 and r["tensor"] == "l2"):
        tma = TmaEngine(0, spec)
        nbytes, n = r["box_bytes"], 64
        if r["pending"] == 0:  # each store issued once the last was read
            t = 0.0
            for _ in range(n):
                t = tma.store({}, t, nbytes)
            per = t / n
        else:  # back to back: the store rate
            per = max(tma.store({}, 0.0, nbytes) for _ in range(n)) / n
        assert per == pytest.approx(r["read_cycles_per_store"], rel=0.02), r
