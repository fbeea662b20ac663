"""Mechanism tests of the units and of the paths a request takes through them (gpusim/request.py): each fails when
its stage is taken out of a path or its cost changed, whatever the golden snapshots say. The numbers are the H100
config's, the expected answers worked by hand from them."""

from __future__ import annotations

import dataclasses

import pytest

from gpusim.config import load_config
from gpusim.engine import ChipMemory, SmUnit
from gpusim.memory.hbm import Hbm
from gpusim.memory.l2 import L2Partitions
from gpusim.request import FILL, HBM, L1TEX, L2, L2_ATOMICS, L2_PORT, L2_WRITE, LSU, PATHS, TMA, Request, misses, walk
from gpusim.resources import BIN_CYCLES, LOAD_WINDOW_BINS
from gpusim.sm.clock import MEMORY_CYCLES, MEMORY_RATE, Clock, at_sm_clock, clock_domain
from gpusim.sm.icache import InstructionFetch
from gpusim.sm.pipes import ExecutionPipes
from gpusim.sm.scheduler import IssueSlots

CFG = load_config()
CLOCK = Clock(CFG.chip.sm_clock_hz)


def chip():
    """A fresh chip-wide memory side and one SM wired to it, as the engine builds them."""
    mem = ChipMemory(CFG, CLOCK)
    return mem, SmUnit(0, CFG, CLOCK, mem)


def load(l2_bytes=128.0, hbm_bytes=128.0, weight=1.0):
    return Request({}, weight, l2_bytes, hbm_bytes, 0.0, l2_bytes, 1.0)


# --- the paths -------------------------------------------------------------------------------------------------
def test_each_path_names_its_stages_in_order():
    assert PATHS["global", "ld"].stages == (LSU, L1TEX, L2_PORT, L2, HBM, FILL)
    assert PATHS["global", "st"].stages == (LSU, L1TEX, L2_PORT, L2_WRITE, L2_ATOMICS, HBM)
    assert PATHS["global", "tma"].stages == (TMA, L2_PORT, L2, HBM, FILL)
    assert PATHS["global", "ld"].levels == (L1TEX, L2, HBM)
    for kind in ("ld", "st", "ldsm", "stsm"):
        assert PATHS["shared", kind].memory_side == ()


def test_a_load_that_misses_waits_for_its_fill_behind_the_stores_on_the_write_path():
    # the fill of what HBM brings takes the write path stores take: with the path held by stores for 10,000 cycles
    # the load's data is in the L2 only after them; on an idle chip it is there as the last byte arrives
    mem, sm = chip()
    idle = load()
    walk(sm.memory_side["global", "ld"], idle, 0.0)
    assert idle.hbm_done == pytest.approx(idle.hbm_arrive + 128 / mem.hbm.server.rate)
    fill = mem.l2_write.server
    assert idle.ledger[fill] == pytest.approx(128 * CFG.l2.fill_cycles_per_byte(CFG.l1.line_bytes))

    mem, sm = chip()
    store = Request({}, 1.0, 128.0, 0.0, 10_000.0)
    walk(sm.memory_side["global", "st"], store, 0.0)
    assert store.l2_done == pytest.approx(10_000.0)
    busy = load()
    walk(sm.memory_side["global", "ld"], busy, 0.0)
    assert busy.hbm_done > 10_000.0 > idle.hbm_done
    # the store's write-backs (none here) and a load's fill are the only HBM-side work of the write path
    assert mem.hbm.respond(busy, 0.0) >= busy.hbm_done + CFG.hbm.load_latency_cycles


def test_a_store_takes_the_write_path_not_the_read_bandwidth():
    mem, sm = chip()
    st = Request({}, 4.0, 128.0, 64.0, 3.0)
    walk(sm.memory_side["global", "st"], st, 100.0)
    assert st.ledger[mem.l2_write.server] == pytest.approx(12.0)  # 3 cycles for each of the 4 real CTAs
    assert mem.l2.partition not in st.ledger
    assert st.ledger[mem.hbm.server] == pytest.approx(256.0)  # the write-backs, per real CTA
    assert mem.l2_write.server in st.ledger and sm.port.server in st.ledger


def test_the_l2_is_done_no_sooner_than_the_port():
    mem, sm = chip()
    big = load(l2_bytes=64 * CFG.l2.sm_port_bytes_per_cycle * 100, hbm_bytes=0.0)
    walk(sm.memory_side["global", "ld"], big, 0.0)
    assert big.port_done == pytest.approx(6400.0)
    assert big.l2_done >= big.port_done
    assert mem.l2.respond(big, 0.0) == pytest.approx(big.l2_done + CFG.l2.hit_latency_cycles)


def test_the_chip_wide_stages_see_a_request_once_per_real_cta():
    mem, sm = chip()
    req = load(l2_bytes=256.0, hbm_bytes=256.0, weight=8.0)
    walk(sm.memory_side["global", "ld"], req, 0.0)
    assert req.ledger[sm.port.server] == pytest.approx(256.0)  # the SM's own port: once
    assert req.ledger[mem.l2.partition] == pytest.approx(8 * 256.0 / CFG.l2.partitions)
    assert req.ledger[mem.hbm.server] == pytest.approx(8 * 256.0)


def test_a_request_with_nothing_for_the_l2_books_nothing():
    _, sm = chip()
    req = load(l2_bytes=0.0)
    assert walk(sm.memory_side["global", "ld"], req, 5.0) == 5.0
    assert req.ledger == {} and req.l2_done == req.hbm_done == 5.0


# --- HBM and the L2 under load ---------------------------------------------------------------------------------
def _loaded(unit_server, t: float, share: float) -> None:
    """Book ``share`` of ``unit_server``'s capacity over the window a loaded latency looks back at before ``t``."""
    window = LOAD_WINDOW_BINS * BIN_CYCLES
    unit_server.serve(t - window, share * unit_server.rate * window)


def test_an_hbm_miss_takes_longer_under_load():
    # measured (validate/micro/run_loaded_latency.py): at the config's highest measured utilization the miss
    # latency grows by its last added_cycles
    hbm = Hbm.from_spec(CFG.hbm, CLOCK)
    t = 4 * LOAD_WINDOW_BINS * BIN_CYCLES
    req = load()
    req.hbm_arrive, req.hbm_done = t, t + 10.0
    assert hbm.respond(req, 0.0) == pytest.approx(t + 10.0 + CFG.hbm.load_latency_cycles)
    _loaded(hbm.server, t, 1.0)
    assert hbm.respond(req, 0.0) == pytest.approx(t + 10.0 + CFG.hbm.load_latency_cycles +
                                                  CFG.hbm.loaded_added_cycles[-1])
    assert hbm.respond(req, 1e9) == 1e9  # never sooner than what the load waited for already


def test_an_l2_hit_takes_longer_under_load():
    l2 = L2Partitions.from_spec(CFG.l2, CLOCK)
    t = 4 * LOAD_WINDOW_BINS * BIN_CYCLES
    req = load()
    req.l2_arrive, req.l2_done = t, t + 3.0
    assert l2.respond(req, 0.0) == pytest.approx(t + 3.0 + CFG.l2.hit_latency_cycles)
    _loaded(l2.partition, t, 1.0)
    assert l2.respond(req, 0.0) == pytest.approx(t + 3.0 + CFG.l2.hit_latency_cycles + CFG.l2.loaded_added_cycles[-1])


def test_a_tma_copy_from_hbm_arrives_after_its_latency_and_its_bytes():
    _, sm = chip()
    tma = sm.tma
    req = Request({}, 1.0, 4096.0, 4096.0, 0.0, 4096.0, 1.0)
    start = tma.serve(req, 0.0)
    walk(sm.memory_side["global", "tma"], req, start)
    latency = CFG.tma.hbm_latency_cycles + 4096 / CFG.tma.bytes_per_cycle
    assert tma.respond(req, start, True, 0.0) == pytest.approx(max(start + latency, req.hbm_done))
    assert tma.respond(req, start, True, 50.0) == pytest.approx(max(start + latency + 50.0, req.hbm_done))
    assert tma.serve(req, 0.0) == pytest.approx(CFG.tma.copy_interval_cycles)  # the engine's next copy waits


def test_misses_follow_the_miss_fraction_deterministically():
    counts: dict = {}
    assert [misses(counts, "a", 0.25) for _ in range(8)] == [False, False, False, True] * 2
    assert sum(misses(counts, "b", 1.0) for _ in range(5)) == 5 and not any(misses(counts, "c", 0.0) for _ in range(5))


# --- static costs, each unit's own -----------------------------------------------------------------------------
def test_l1tex_pipe_cost_is_the_slower_of_its_tag_and_data_stages():
    # on the H100 a line a cycle and 128 B a cycle: a full line takes one cycle of each, a scattered access one line
    # a cycle. A data stage of half that width takes two cycles for a full line, still one for a lone sector
    sb = CFG.l2.sector_bytes
    l1 = dataclasses.replace(CFG.l1, lines_per_cycle=1, data_bytes_per_cycle=64)
    assert l1.pipe_cycles(1, 4, sb) == 2.0
    assert l1.pipe_cycles(32, 32, sb) == 32.0
    assert l1.pipe_cycles(4, 16, sb) == 8.0
    assert CFG.l1.pipe_cycles(4, 16, sb) == 16 * sb / CFG.l1.data_bytes_per_cycle


def test_l2_write_cost_counts_lines_and_sectors_and_a_fill_is_a_full_line_store():
    l2 = CFG.l2
    assert l2.write_cycles(2, 8) == pytest.approx(2 * l2.write_cycles_per_line + 8 * l2.write_cycles_per_sector)
    line = CFG.l1.line_bytes
    assert l2.fill_cycles_per_byte(line) * line == pytest.approx(l2.write_cycles(1, line // l2.sector_bytes))


def test_shared_memory_cost_and_latency():
    sh = CFG.shared_memory
    assert sh.pipe_cycles(8) == 8 / sh.wavefronts_per_cycle
    assert sh.latency_cycles("ldsm") == sh.ldmatrix_latency_cycles
    assert sh.latency_cycles("ld") == sh.latency_cycles("st") == sh.load_latency_cycles


def test_hbm_block_costs():
    hbm = CFG.hbm
    sb = CFG.l2.sector_bytes
    per = hbm.fetch_granularity_bytes // sb
    import numpy as np

    one_per_block = np.arange(0, 64 * per, per)  # one wanted sector in each fetched block
    assert hbm.fetch_ratio(one_per_block, sb) == pytest.approx(per)
    assert hbm.fetch_ratio(np.arange(64 * per), sb) == 1.0
    far = np.arange(0, 64) * (hbm.near_block_bytes // sb) * 4  # blocks far apart: each opens a row alone
    assert hbm.isolated_share(far, sb) == 1.0
    assert hbm.block_cost(1.0) == hbm.isolated_block_cost_ratio and hbm.block_cost(0.0) == 1.0


def test_compute_bundle_quanta_and_the_stall_of_a_busy_pipe():
    pipes = ExecutionPipes.from_spec(CFG.pipes, CLOCK, 0, CFG.sm, 1.0)
    lat = pipes.latency["fp32"]
    # 10 dependent FFMAs (ilp 1) in quanta of 4: each quantum waits for the chain, the last is 2 long
    assert pipes.quanta("fp32", 10, 1, 0.0, 4, 1.0) == ((4, 4.0 * lat), (4, 4.0 * lat), (2, 2.0 * lat))
    # independent ones issue at the slower of the pipe and the scheduler
    rate = pipes.rate["sfu"]
    assert pipes.quanta("sfu", 8, 8, 0.0, 8, 1.0) == ((8, max(8 / rate, pipes.latency["sfu"])),)
    assert pipes.throttle["sfu"] == "mio_throttle" and pipes.throttle["fp32"] == "not_selected"
    assert pipes.throttle["tensor"] == "math_pipe_throttle"


def test_issue_slot_dispatch_is_held_by_register_reads():
    slots = IssueSlots.from_spec(CFG.scheduler, CLOCK, 0, CFG.sm.subpartitions)
    rpc = CFG.scheduler.register_reads_per_cycle
    assert slots.dispatch_cycles(4, rpc) == 4
    assert slots.dispatch_cycles(4, rpc + 1) == pytest.approx(4 * (rpc + 1) / rpc)


def test_instruction_fetch_runs_ahead_of_a_stalled_warp_only_so_far():
    fetch = InstructionFetch(2.0, 10)
    assert fetch.arrival(0.0, 100.0, 5) == 80.0 + 10.0  # 20 cycles ahead of a warp that stalled long
    assert fetch.arrival(95.0, 100.0, 5) == 105.0  # behind what it delivered before
    fits = InstructionFetch.from_spec(CFG.icache, CLOCK, 16)
    assert fits.cycles_per_instruction == 0.0


# --- the clock model -------------------------------------------------------------------------------------------
def test_only_fields_tagged_with_the_memory_clock_change_with_the_sm_clock():
    low = at_sm_clock(CFG, 0.5 * CFG.chip.sm_clock_hz)
    tagged = set()
    for section in ("l1", "l2", "hbm", "tma", "pipes", "scheduler", "shared_memory", "icache", "sm"):
        spec, new = getattr(CFG, section), getattr(low, section)
        for f in dataclasses.fields(spec):
            a, b = getattr(spec, f.name), getattr(new, f.name)
            domain = clock_domain(type(spec), f.name)
            if domain == MEMORY_RATE:
                assert b == pytest.approx(2 * a)
            elif domain == MEMORY_CYCLES and a and not isinstance(a, tuple):
                assert b == pytest.approx(a / 2, abs=0.5)
            elif not domain:
                assert b == a, f"{section}.{f.name}"
            if domain:
                tagged.add(f"{section}.{f.name}")
    # measured (validate/micro/run_l2_clock.py): the L2 keeps its own clock, HBM its rate per second, and the TMA's
    # trips to them their time
    assert tagged == {"l2.bandwidth_bytes_per_cycle", "l2.write_cycles_per_line", "l2.write_cycles_per_sector",
                      "l2.hit_latency_near_cycles", "l2.hit_latency_far_cycles", "l2.atomic_extra_latency_cycles",
                      "l2.fence_cycles", "l2.fence_after_store_cycles", "l2.loaded_added_cycles",
                      "hbm.load_latency_cycles", "hbm.loaded_added_cycles", "tma.l2_latency_cycles",
                      "tma.hbm_latency_cycles"}
    assert low.chip.sm_clock_hz == 0.5 * CFG.chip.sm_clock_hz


def test_a_config_without_a_tma_unit_builds_an_sm_without_one():
    no_tma = dataclasses.replace(CFG, tma=None)
    mem = ChipMemory(no_tma, CLOCK)
    sm = SmUnit(0, no_tma, CLOCK, mem)
    assert sm.tma is None and "TMA" not in {name for name, _, _ in sm.reported()}
    assert at_sm_clock(no_tma, 0.9 * CFG.chip.sm_clock_hz).tma is None


# --- the paths as the engine walks them ------------------------------------------------------------------------
def _chase(trips: int, stride: int, tensor_bytes: int):
    """One thread loading one word a loop iteration, each load waiting for the one before (a pointer chase), the
    words ``stride`` bytes apart in a tensor of ``tensor_bytes``."""
    import numpy as np

    from gpusim.ir import Kernel, Launch, Loop, Mem, Tensor

    ld = Mem("chase", "global", "ld", 4, lambda c: np.where(c.tid == 0, c.it * stride, -1), tensor="t",
             after=("chase",))
    return Kernel("chase", "user", (1,), {}, Launch((1, 1, 1), (32, 1, 1), 16, 0), (), Loop(trips, (ld,)), (),
                  (Tensor("t", tensor_bytes),), 0, "")


def test_a_chase_through_hbm_waits_the_miss_latency_each_link():
    from gpusim.chip import simulate

    trips = 24
    far = simulate(_chase(trips, 1 << 22, trips << 22), CFG)  # 96 MiB apart in all: every link misses the L2
    assert far.l2.latency_miss_fraction("chase", CFG.l2.sector_bytes) == 1.0
    hbm, l2 = CFG.hbm.load_latency_cycles, CFG.l2.hit_latency_cycles
    assert hbm <= far.result.period <= hbm + 2 * l2  # cycles per link, in the loop's steady window
