"""The chip-level model: shared resources are shared, nothing is busier than its peak, and the answer does not
depend on how many SMs are simulated in detail."""

from __future__ import annotations

import numpy as np
import pytest

from gpusim.api import predict
from gpusim.chip import representative_works, simulate
from gpusim.config import load_config
from gpusim.registry import build_kernel
from gpusim.metrics import report
from gpusim.resources import BIN_CYCLES, RateServer

TIME = "gpu__time_duration.sum"


def test_rate_server_serves_a_late_request_for_an_earlier_time_first():
    # a request booked for t=1000 must not delay one that arrives later in call order but at t=0
    s = RateServer(1.0)
    s.serve(1000, 100)
    start, end = s.serve(0, 50)
    assert start == 0 and end == 50


def test_rate_server_never_exceeds_its_rate():
    s = RateServer(2.0)
    ends = [s.serve(0, 64)[1] for _ in range(10)]  # 640 units at 2 per cycle: the last ends at 320
    assert max(ends) == pytest.approx(320, abs=BIN_CYCLES)
    assert s.busy == pytest.approx(320)


def test_reservation_takes_only_what_is_free():
    s = RateServer(1.0)
    assert s.reserve(0, 1000, 1000) == pytest.approx(1000)
    # the unit is now full over [0, 1000): a second reservation of the same work runs after it
    assert s.reserve(0, 1000, 1000) == pytest.approx(2000)
    assert s.busy == pytest.approx(2000)


def _random_requests(seed: int):
    """A mix of what the engine asks of a server: requests early and late (in call order and in time), probes that
    book nothing, background reservations, prunes as time goes on, and looks at the recent load."""
    rng = np.random.default_rng(seed)
    now = 0.0
    for _ in range(400):
        kind = rng.integers(0, 10)
        now += float(rng.exponential(400.0))  # 160,000 cycles in all: prunes free pages
        if kind < 6:
            yield "book", now + float(rng.uniform(-50, 300)), float(rng.exponential(30.0)), bool(rng.integers(0, 4))
        elif kind == 6:
            yield "reserve", now, float(rng.uniform(10, 4000)), float(rng.uniform(100, 5000))
        elif kind == 7:
            yield "load", now, int(rng.integers(1, 9)), None
        elif kind == 8:
            yield "prune", now - 3000.0, None, None
        else:  # far ahead of everything booked: the array grows
            yield "book", now + float(rng.uniform(2e5, 2e6)), float(rng.exponential(30.0)), True


@pytest.mark.parametrize("seed", range(6))
def test_the_compiled_server_answers_as_the_python_reference(seed):
    # the numba-compiled walk over a server's pages and the plain Python walk over dicts it replaced
    # (tests/reference_rate_server.py) are one algorithm: every answer equal, bit for bit, on the same requests
    from reference_rate_server import RateServer as Reference

    fast, ref = RateServer(1.5, "compiled"), Reference(1.5, "reference")
    for what, t, x, y in _random_requests(seed):
        if what == "book":
            assert fast.book(None, t, x, y) == ref.book(None, t, x, y)
        elif what == "reserve":
            assert fast.reserve(t, x, y) == ref.reserve(t, x, y)
        elif what == "load":
            assert fast.load(t, x) == ref.load(t, x)
        else:
            fast.prune(t)
            ref.prune(t)
        assert (fast.busy, fast.last_end) == (ref.busy, ref.last_end)


def test_a_request_far_past_the_others_costs_a_page_not_the_gap():
    # a fast-forwarded stretch can put one request 10^11 cycles after the others: the server holds two pages, not
    # the 3 x 10^9 bins between them, and answers as before
    from gpusim import resources

    s = RateServer(1.0)
    s.serve(0, 100)
    assert s.serve(1e11, 64) == (1e11, 1e11 + 64)
    assert s.serve(0, 50) == (100.0, 150.0) and s.busy == pytest.approx(214)
    assert s._a[resources._POOL_PAGES] - s._a[resources._NFREE] == 2 and s._a.nbytes < 1 << 20


def test_tail_ctas_stand_for_exactly_the_real_tail():
    # 133 CTAs, 1 per SM: one full wave of 132 and a tail of one CTA that has the chip to itself
    k = build_kernel("sgemm_2d_blocktiling", (128 * 7, 128 * 19, 64), {"regs_per_thread": "255"})
    works, sm_weight = representative_works(k, 1, 132, 2)
    assert sum(w.weight for w in works) == pytest.approx(k.launch.num_ctas)
    assert works[-1].weight == pytest.approx(k.launch.num_ctas - 132)


def test_ctas_of_unequal_trips_are_sampled_across_their_trips():
    """Causal attention's CTAs run trips that follow their query block (blockIdx.x): picked evenly by launch index,
    every 66th CTA of a 32-wide grid is an odd query block of one quarter of the range per wave, and fa2 4,16,4096,128
    causal simulated 8.5% fewer instructions than its CTAs run. Picked across the wave's trips, the sample's trips
    are the grid's."""
    k = build_kernel("fa2", (4, 16, 4096, 128), {"causal": "1"})
    n = k.launch.num_ctas
    works, _ = representative_works(k, 2, 132, 2)
    sampled = sum(w.weight * w.trips for w in works) / sum(w.weight for w in works)
    real = sum(k.trips_of(i) for i in range(n)) / n
    assert sampled == pytest.approx(real, rel=0.02), (sampled, real)


@pytest.mark.parametrize("name,shape", [("hgemm_ws", (2048, 2048, 2048)), ("sgemm_vectorized", (2048, 2048, 512))])
def test_answer_converges_with_the_simulated_sms(name, shape):
    cfg = load_config()
    k = build_kernel(name, shape)
    t = {n: report(simulate(k, cfg, representatives=n))[TIME] for n in (1, 2, 4)}
    assert abs(t[2] - t[4]) / t[4] < 0.05, t
    assert abs(t[1] - t[4]) / t[4] < 0.10, t


@pytest.mark.parametrize("name,shape", [("sgemm_naive", (1024, 1024, 1024)), ("hgemm_ws", (4096, 4096, 4096)),
                                        ("fa3", (2, 8, 2048, 128)), ("hgemm_mma_pipelined", (2048, 2048, 2048))])
def test_no_unit_busier_than_its_peak(name, shape):
    m, _ = predict(name, shape)
    over = {k: v for k, v in m["gpusim__utilization_pct"].items() if not 0.0 <= v <= 100.0}
    assert not over, m["gpusim__verdict"]


def test_writes_drain_before_the_kernel_ends():
    # a kernel that ends in stores: its time covers the stores reaching L2, so the predicted L2 write
    # bandwidth (bytes written over the time) stays below the chip's L2 bandwidth
    m, sim = predict("sgemm_coalesced", (2048, 2048, 64))
    written = m["lts__t_sectors_op_write.sum"] * 32
    t = m[TIME] * 1e-9
    assert written / t <= sim.config.l2.bandwidth_bytes_per_cycle * sim.config.chip.sm_clock_hz


def test_shuffles_run_at_the_measured_latency_and_stall_on_short_scoreboard():
    # one warp, a chain of 64 dependent SHFL: 64 x 24 cycles (validate/measurements/h100/memsys-2026-11-23.json),
    # and the warp waits on the shuffle's result as on a shared load
    from gpusim.ir import Compute, Kernel, Launch, Mem, Tensor

    cfg = load_config()
    chain = Compute("shfl", "shfl", 64, ilp=1)
    store = Mem("st", "global", "st", 4, lambda c: c.lane * 4, "out", after=("shfl",))
    k = Kernel("shfl_chain", "test", (1,), {}, Launch((1, 1, 1), (32, 1, 1), 16, 0), (chain, store), None, (),
               (Tensor("out", 128),), 0, "")
    m = report(simulate(k, cfg))
    lat = cfg.pipes.latency_cycles("shfl")
    assert m["gpc__cycles_elapsed.max"] >= 64 * lat
    stalls = {k.split("stalled_")[1].split("_per")[0]: v for k, v in m.items() if "issue_stalled_" in k}
    assert max((v, s) for s, v in stalls.items() if s != "selected")[1] == "short_scoreboard", stalls


def test_merged_waves_of_unequal_ctas_keep_the_time(monkeypatch):
    """Causal attention's CTAs differ in trips, so the grid fast-forward cannot skip them; past MERGED_WAVES
    waves consecutive CTAs of a slot merge into one with their summed trips. At 512K tokens (15 waves, loops of
    hundreds of trips) that must agree with simulating every wave (within 2%: merged waves are sampled by one
    representative SM instead of two, which test_answer_converges_with_the_simulated_sms bounds)."""
    from gpusim import chip
    from gpusim.api import predict

    shape, knobs = (1, 1, 1 << 19, 128), {"causal": "1"}
    merged = predict("fa2", shape, knobs)[0]["gpu__time_duration.sum"]
    monkeypatch.setattr(chip, "MERGED_WAVES", 10**6)
    every = predict("fa2", shape, knobs)[0]["gpu__time_duration.sum"]
    assert merged == pytest.approx(every, rel=0.02)


def test_merged_waves_of_many_heads_stay_few_and_hold_the_grids_trips():
    """With several heads every merge group holds the start of a head (query blocks of a few trips): a slot's CTAs
    merge when their mean trips dwarf the prologue (once their least had to: H=16 at 1M tokens simulated all 496
    waves, 64 s), and the merged slots are those whose stacks hold the group's mean trips (two slots picked by
    position once held 12% more trips than the grid's CTAs): the simulated CTAs stay few and their trips, weighted,
    are the grid's."""
    from gpusim import chip
    from gpusim.config import load_config
    from gpusim.registry import build_kernel
    from gpusim.sm.occupancy import occupancy

    cfg = load_config()
    for shape in ((1, 16, 1 << 20, 128), (1, 16, 1 << 15, 128)):
        k = build_kernel("fa2", shape, {"causal": "1"}, cfg)
        launch = k.launch
        occ = occupancy(cfg.sm, launch.threads_per_block, launch.regs_per_thread, launch.smem_bytes,
                        cfg.shared_memory.carveouts_bytes)
        real = sum(k.trips_of(i) for i in range(launch.num_ctas))
        for reps in (1, 2):
            works, _ = chip.representative_works(k, occ.ctas_per_sm, cfg.chip.sm_count, reps)
            if shape[2] == 1 << 20:  # 496 full waves: past the first groups, every group merges
                assert len(works) <= 2 * (chip.MERGED_WAVES + 1) * reps * occ.ctas_per_sm, (reps, len(works))
            sampled = sum(w.trips * w.weight for w in works)
            assert sampled == pytest.approx(real, rel=0.01), (shape, reps)


def test_causal_attention_never_beats_the_tensor_peak_at_any_length():
    """Causal CTAs lengthen along the queue (one head: CTA i visits i + 1 KV blocks), so the grid fast-forward
    must not charge the rest of the queue the early CTAs' durations (it once predicted 78 PFLOP/s at 16M)."""
    from gpusim.api import predict
    from gpusim.config import load_config

    cfg = load_config()
    peak_tflops = cfg.pipes.wgmma_flops_per_cycle_per_sm * cfg.chip.sm_count * cfg.chip.sm_clock_hz / 1e12
    for n in (1 << 20, 1 << 24):
        m = predict("fa3", (1, 1, n, 128), {"causal": "1"})[0]
        assert 0 < m["gpusim__tflops"] <= peak_tflops


def test_persistent_ctas_without_a_tile_only_set_up_and_exit():
    """hgemm_persistent at 512^3 has 8 tiles for its 132 persistent CTAs: the other 124 run only the twin's set-up
    and exit (counted from its SASS, not simulated), so beyond those it issues about what hgemm_ws issues for the
    same 8 tiles (once 7.5x as much: every CTA ran a tile), and takes no longer for them."""
    from gpusim.api import predict
    from gpusim.config import load_config
    from gpusim.registry import build_kernel

    inst, time = "smsp__inst_executed.sum", "gpu__time_duration.sum"
    pers = predict("hgemm_persistent", (512, 512, 512))[0]
    ws = predict("hgemm_ws", (512, 512, 512))[0]
    k = build_kernel("hgemm_persistent", (512, 512, 512), {}, load_config())
    idle = (k.persistent_ctas - k.launch.num_ctas) * k.idle_cta_instructions
    assert k.launch.num_ctas == 8 and 0 < k.idle_cta_instructions < k.cta_instructions
    assert 0.8 * ws[inst] < pers[inst] - idle < 1.5 * ws[inst]
    assert pers[time] < 1.5 * ws[time]


def test_a_grid_of_one_cta_per_sm_runs_one_cta_per_sm_however_many_fit():
    """The CTA scheduler fills SMs breadth first: 132 CTAs on 132 SMs run one per SM whether 8 could fit (16 KiB
    of shared memory each) or only one (120 KiB): the same time. (Stacking the representative SMs' CTAs, as gpusim
    once did, ran the first case two to an SM and 1.7 times slower.)"""
    from gpusim.chip import simulate
    from gpusim.config import load_config
    from gpusim.ir import Barrier, Compute, Kernel, Launch, Loop, Mem, Tensor

    def kernel(smem: int) -> Kernel:
        body = (Mem("lds", "shared", "ld", 4, lambda c: (c.tid * 32) % 4096 * 4),
                Compute("fadd", "fp32", 1, after=("lds",)),
                Mem("sts", "shared", "st", 4, lambda c: c.tid * 4, after=("fadd",)), Barrier())
        return Kernel("step", "user", (1,), {}, Launch((132, 1, 1), (256, 1, 1), 16, smem), (), Loop(200, body), (),
                      (Tensor("t", 4),), 0, "")

    cfg = load_config()
    small, big = simulate(kernel(16 << 10), cfg), simulate(kernel(120 << 10), cfg)
    assert small.occ.ctas_per_sm == 8 and big.occ.ctas_per_sm == 1
    assert abs(small.total_cycles / big.total_cycles - 1) < 0.01


def _writeback_micro() -> dict[tuple[str, int], float]:
    """validate/micro/run_l2_writeback.py's DRAM bytes written, per (kernel, MiB)."""
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "validate/measurements/h100/l2writeback-2026-11-25.json"
    rows = json.loads(path.read_text())["results"]["l2_writeback"]["rows"]
    return {(r["kernel"], r["buffer_mib"]): r["dram__bytes_write.sum"] for r in rows}


@pytest.mark.parametrize("mib", [8, 16, 24, 48])
def test_a_copy_writes_back_what_the_h100_writes_back(mib):
    # the STREAM copy of W MiB writes W MiB; what leaves the L2 during the kernel follows the write-back micro
    # (the model's mem_copy moves float4s, the micro floats: the same lines in the same order)
    measured = _writeback_micro()[("l2w_copy", mib)]
    m, _ = predict("mem_copy", ((mib << 20) // 4,))
    assert m["dram__bytes_write.sum"] == pytest.approx(measured, abs=0.1 * (mib << 20) + (1 << 20))


def test_the_l2_keeps_no_more_dirty_data_than_measured():
    # a stream of stores alone, far larger than the L2: what stays dirty at the end is the measured most, not the
    # whole L2 (a plain LRU would keep 50 MiB of it)
    from gpusim.memory.l2 import L2Footprint, l2_model

    spec = load_config().l2
    st = L2Footprint("st", "y", "st", (True, False, False), ("y",), 1 << 20, (1 << 20) / 32)
    res = l2_model([st], (96, 1, 1), 96, 1, spec, 1000)
    kept = 96 * (1 << 20) - res.dram_write_bytes["st"]
    assert kept == pytest.approx(spec.dirty_max_bytes, rel=1e-6)
    assert abs(kept - (96 << 20) + _writeback_micro()[("l2w_store", 96)]) < 0.05 * (96 << 20)


def test_the_clock_steps_down_with_any_tensor_work():
    # measured (validate/micro/run_clock_duty.py): the same clock from 0.6% to 86% of mma.sync's peak, FP32 alone
    # holds the top clock; a tensor kernel far from saturation runs at the mma.sync clock, not near the top
    cfg = load_config()
    lightly, _ = predict("hgemm_mma", (512, 512, 512))
    fp32, _ = predict("sgemm_vectorized", (512, 512, 512))
    assert lightly["sm__cycles_elapsed.avg.per_second"] == pytest.approx(cfg.chip.sm_clock_mma_sync_saturated_hz)
    assert fp32["sm__cycles_elapsed.avg.per_second"] == pytest.approx(cfg.chip.sm_clock_hz)


def test_the_memory_side_keeps_its_rates_per_second_when_the_sm_clock_falls():
    # measured (validate/micro/run_l2_clock.py, l2clock-2026-11-26.json): ncu's L2 clock stays at 1.71 GHz and an
    # L2 stream at 7.9 TB/s while mma.sync beside it takes the SM clock from 1995 to 1793 MHz; HBM at 3.10 TB/s
    # from 1980 to 1583 MHz. The SM side keeps its cycles.
    from gpusim.sm.clock import at_sm_clock

    cfg = load_config()
    f0 = cfg.chip.sm_clock_hz
    low = at_sm_clock(cfg, 0.9 * f0)
    assert low.l2.bandwidth_bytes_per_cycle * 0.9 * f0 == pytest.approx(cfg.l2.bandwidth_bytes_per_cycle * f0)
    assert low.l2.write_cycles_per_line / (0.9 * f0) == pytest.approx(cfg.l2.write_cycles_per_line / f0)
    assert low.hbm.load_latency_cycles / (0.9 * f0) == pytest.approx(cfg.hbm.load_latency_cycles / f0, rel=2e-3)
    assert low.hbm.achievable_bandwidth_bytes_per_second == cfg.hbm.achievable_bandwidth_bytes_per_second
    assert low.l1 == cfg.l1 and low.pipes == cfg.pipes


@pytest.mark.parametrize("name,shape", [("mem_reduce_interleaved", (1 << 22,)), ("mem_add", (1 << 24,)),
                                        ("sgemm_coalesced", (2048, 2048, 256)),
                                        ("mem_reduce_sequential", (1 << 24,))])
def test_the_grid_fast_forward_lands_where_the_whole_grid_does(monkeypatch, name, shape):
    # skipping the middle of the CTA queue must not change the answer: the steady CTA rate it extrapolates is the
    # one the whole grid runs at (a grid of loop-less CTAs whose durations still grow after two equal rounds, a
    # stream, CTAs with a loop, and 64K short CTAs that the chip's dispatch rate holds back: their slots wait for
    # the next CTA between runs, which the CTAs' own durations do not show; extrapolated from those, 10% fast)
    import gpusim.engine as engine

    fast, sim = predict(name, shape)
    assert sim.result.grid_skipped_ctas > 0  # the grid fast-forward did skip CTAs
    monkeypatch.setattr(engine.ChipModel, "_grid_fast_forward", lambda self: None)
    whole, _ = predict(name, shape)
    assert fast[TIME] == pytest.approx(whole[TIME], rel=0.05)


def test_the_grid_fast_forward_waits_until_the_slots_have_settled(monkeypatch):
    # sgemm_2d_blocktiling with 64x64 tiles (168 registers: 2 CTAs per SM) at 4096^3: its 5 rounds of CTAs lengthen
    # as the two slots of an SM fall out of step, and two rounds that happened to agree had the fast-forward skip
    # 198 CTAs and land 7% short of the whole grid; three rounds in a row must agree now, in whole rounds
    import gpusim.engine as engine

    knobs = {"BM": 64, "BN": 64, "regs_per_thread": 168}
    fast, _ = predict("sgemm_2d_blocktiling", (4096, 4096, 4096), knobs)
    monkeypatch.setattr(engine.ChipModel, "_grid_fast_forward", lambda self: None)
    whole, _ = predict("sgemm_2d_blocktiling", (4096, 4096, 4096), knobs)
    assert fast[TIME] == pytest.approx(whole[TIME], rel=0.02)


def test_a_persistent_ctas_later_tiles_keep_to_the_ring():
    # the mbarrier phases of a persistent CTA's later tiles go on from where its first tile stopped: the producer
    # never has more copies in flight than the ring has stages (it did: tile 2 found its phases completed by tile 1)
    _, sim = predict("hgemm_persistent", (2048, 4096, 512), {"stages": 2}, trace=True)
    spans = sorted((t0, t1) for _, name, cat, t0, t1 in sim.result.trace if name == "tmaB0" and cat == "tma")
    # the traced CTA (SM 0's) runs tiles 0 and 132 of 256, each a loop of 512 / 64 = 8 copies of B
    assert len(spans) == 2 * 8
    for t0, _ in spans:
        in_flight = sum(1 for a, b in spans if a <= t0 < b)
        assert in_flight <= 2, (t0, in_flight)


def _spilling_kernel(local: bool):
    """A kernel that spills: each thread stores 4 words to its local-memory frame before its loop, then reloads two
    and stores the four again in every iteration, beside a streaming load (the frames interleaved by thread, as the
    front-end lays out LDL/STL)."""
    from gpusim.ir import Compute, Kernel, Launch, Loop, Mem, Tensor

    grid, threads, frame_words, trips = 132 * 8 * 4, 256, 4, 64
    grid_threads = grid * threads

    def words(c):  # LDL of words 2 and 3: word w of every thread of the grid, then word w + 1 (4-byte interleave)
        return ((2 + c.r) * grid_threads + c.bx * threads + c.tid) * 4

    def quads(c):  # STL.128 of the four words: 16-byte interleave
        return (c.bx * threads + c.tid) * 16

    spill = (Mem("p_stl", "global", "st", 16, quads, "__local"),)
    body = (Mem("ldg", "global", "ld", 4, lambda c: ((c.bx * trips + c.it) * threads + c.tid) * 4, "x"),
            Mem("ldl", "global", "ld", 4, words, "__local", repeat=2),
            Compute("f", "fp32", 4, after=("ldg", "ldl")),
            Mem("stl", "global", "st", 16, quads, "__local", after=("f",)))
    tensors = (Tensor("x", grid * trips * threads * 4), Tensor("__local", frame_words * 4 * grid_threads, local=local))
    launch = Launch((grid, 1, 1), (threads, 1, 1), 64, 0)
    return Kernel("spills", "user", (1,), {}, launch, spill, Loop(trips, body), (), tensors, 0, "")


def test_register_spills_stay_in_the_l2_frames_the_resident_ctas_reuse():
    """Local memory is a frame per resident thread slot, reused by the CTAs that follow on the slot: a spill is
    reloaded from the L2 where it was stored, and stores into a dirty frame rewrite it. DRAM moves the stream, not
    the spills (without the mechanism: every store written back, the stream's bytes again; the reloads hit the L1,
    so no operation reads more from HBM than it requests either way, memory.l2.cap_at_requests)."""
    stream = 132 * 8 * 4 * 64 * 256 * 4
    cfg = load_config()
    spills = report(simulate(_spilling_kernel(True), cfg))
    assert spills["dram__bytes_read.sum"] < 1.05 * stream
    live_frames = 132 * 8 * 256 * 4 * 4  # resident CTAs' frames
    assert spills["dram__bytes_write.sum"] <= live_frames
    plain = report(simulate(_spilling_kernel(False), cfg))  # the same tensor as ordinary global memory
    assert plain["dram__bytes_write.sum"] > 0.5 * stream


def test_stores_into_a_dirty_resident_tile_rewrite_it_and_are_written_back_once():
    """A frame stored again and again (a spill slot of each thread slot, in every chunk and every wave of CTAs that
    reuse the slot) is dirty data rewritten in the L2: what leaves for DRAM is at most the frames, not every store.
    Fails without the dirty merge of ``_access_tiles`` (each store new dirty data: 64 times the frames)."""
    from gpusim.memory.l2 import L2Footprint, l2_model

    spec = load_config().l2
    slots, waves, chunks, tile = 96, 8, 8, 256 << 10  # 24 MiB of frames
    st = L2Footprint("st", "__local", "st", (True, False, False), ("stack frame",), tile, tile / 32, invariant=True)
    ld = L2Footprint("ld", "x", "ld", (True, False, False), ("x",), 64 << 10, (64 << 10) / 32)  # a stream beside
    res = l2_model([st, ld], (slots * waves, 1, 1), slots, chunks, spec, 1000,
                   keys_of={"st": lambda lin: np.asarray(lin) % slots})
    assert res.dram_write_bytes["st"] <= slots * tile


@pytest.mark.parametrize("per_wavefront", [1.0, 0.0])
def test_a_conflicted_shared_access_takes_two_cycles_a_wavefront_alone_and_shares_the_pipe(per_wavefront):
    """Warps each walking a chain of dependent LDS whose lanes fall on k words of each bank: alone, the H100 takes
    29.1 + 2 (k - 1) cycles a load (validate/measurements/h100/ldsconflict-2026-11-28.json), the pipe serving 1
    wavefront a cycle; without ``conflict_pace_cycles_per_wavefront`` the chain grows 1 cycle a wavefront, half the
    measured slope. Four warps at 8 ways take 43.1 cycles as one does (the gaps of one load's pace go to the others'
    wavefronts), and 32 warps 1.0 wavefront a cycle: the pace is no extra latency on a busy pipe."""
    import dataclasses

    from gpusim.ir import Kernel, Launch, Loop, Mem, Tensor

    cfg = load_config()
    cfg = dataclasses.replace(cfg, shared_memory=dataclasses.replace(
        cfg.shared_memory, conflict_pace_cycles_per_wavefront=per_wavefront))

    def cycles(ways: int, warps: int = 1, kind: str = "ld") -> float:
        addr = lambda c: ((c.lane % ways) * 32 + c.lane // ways) * 4  # noqa: E731
        op = Mem("lds", "shared", "ld", 4, addr, after=("lds",)) if kind == "ld" else \
            Mem("sts", "shared", "st", 4, addr)
        k = Kernel("lds_chain", "test", (1,), {}, Launch((1, 1, 1), (32 * warps, 1, 1), 16, 8192), (),
                   Loop(256, (op,)), (), (Tensor("t", 4),), 0, "")
        return simulate(k, cfg).result.cycles / 256

    slope = (cycles(32) - cycles(1)) / 31
    measured = (91.05 - 29.12) / 31  # ldsconflict-2026-11-28.json, one warp
    if per_wavefront:
        assert slope == pytest.approx(measured, rel=0.1)
        assert cycles(8, warps=4) == pytest.approx(cycles(8), rel=0.05)  # measured 43.10 and 43.10
        assert cycles(8, warps=32) == pytest.approx(32 * 8, rel=0.05)  # measured 255.8
        # a warp's independent stores go through one after another, each at the pace: 62.3 cycles a 32-way STS
        # (validate/measurements/h200/stsconflict-2026-11-28.json); four warps share the pipe, 1.0 wavefront a cycle
        assert cycles(32, kind="st") == pytest.approx(62.29, rel=0.05)
        assert cycles(8, warps=4, kind="st") == pytest.approx(31.64, rel=0.1)
    else:
        assert slope < 0.6 * measured
        assert cycles(32, kind="st") < 0.6 * 62.29


def test_a_warp_that_only_arrives_at_a_named_barrier_goes_on():
    """bar.arrive (Barrier(arrive=True)): warp 0 hands warp 1 its turn and goes on at once; warp 1's bar.sync waits
    for both. As a bar.sync, warp 0 waited for warp 1's long chain (what the front-end once made of FA3's ping-pong)."""
    from gpusim.chip import simulate
    from gpusim.config import load_config
    from gpusim.ir import Barrier, Compute, Kernel, Launch, Tensor
    from gpusim.metrics import report

    def kernel(arrive: bool) -> Kernel:
        ops = (Compute("chain", "fp32", 400, ilp=1, warps=(1,)),
               Barrier("bar1", (0,), members=2, arrive=arrive), Barrier("bar1", (1,), members=2),
               Compute("after", "fp32", 400, ilp=1, warps=(0,)))
        return Kernel("turns", "user", (1,), {}, Launch((1, 1, 1), (64, 1, 1), 16, 0), ops, None, (),
                      (Tensor("t", 4),), 0, "")

    cfg = load_config()
    stall = "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"
    went_on, waited = report(simulate(kernel(True), cfg)), report(simulate(kernel(False), cfg))
    assert 5 * went_on[stall] < waited[stall]  # warp 1 waits only the barrier's release when it arrives last
    assert went_on["gpu__time_duration.sum"] < waited["gpu__time_duration.sum"]
