"""The L2's atomic units (gpusim/memory/l2_atomics.py): a line's atomics one request at a time, adjacent lines in one
serializer, every CTA on the same lines queuing behind each other (measured: validate/micro/run_red_lines.py)."""

from __future__ import annotations

import numpy as np
import pytest

from gpusim.config import load_config
from gpusim.memory import l2_atomics
from conftest import needs_cuda

CFG = load_config(None)
LINE = CFG.l1.line_bytes
INT = l2_atomics.AtomicCosts.of(CFG.l2, LINE, float_op=False)
FLOAT = l2_atomics.AtomicCosts.of(CFG.l2, LINE, float_op=True)
SLICE_NS = CFG.l2.atomic_slice_request_ns + 4 * CFG.l2.atomic_slice_sector_ns  # a request of 32 words: 4 sectors


def test_lanes_on_one_word_are_separate_requests():
    line, _ = INT.line(np.array([64] * 32), 4)
    assert line == pytest.approx(32 * CFG.l2.atomic_request_min_ns)  # measured 0.733 ns a request
    assert FLOAT.line(np.array([64] * 32), 4)[0] == pytest.approx(32 * CFG.l2.atomic_float_request_min_ns)
    line, sl = INT.line(np.arange(0, 128, 4), 4)  # one request of 32 words: 2.5 ns on the line
    assert line == pytest.approx(max(CFG.l2.atomic_request_min_ns, 32 * CFG.l2.atomic_word_ns))
    assert sl == pytest.approx(SLICE_NS)
    # 8 words of 4 lanes each: four requests of 8 words, one sector each
    line, sl = INT.line(np.array([4 * (i % 8) for i in range(32)]), 4)
    assert line == pytest.approx(4 * max(CFG.l2.atomic_request_min_ns, 8 * CFG.l2.atomic_word_ns))
    assert sl == pytest.approx(4 * (CFG.l2.atomic_slice_request_ns + CFG.l2.atomic_slice_sector_ns))


def test_adjacent_lines_share_a_slice():
    # warp w of a CTA adds its 32 words to line w: the histogram's 256 bins, 8 adjacent lines in one slice
    a = (np.arange(8)[:, None] * LINE + np.arange(32)[None, :] * 4)[None]
    line, line_ns, sl, slice_ns = l2_atomics.hottest(a, 4, INT)
    assert line.tolist() == list(range(8))
    assert sl.tolist() == [w * LINE // CFG.l2.atomic_slice_bytes for w in range(8)]
    assert line_ns == pytest.approx(np.full(8, 32 * CFG.l2.atomic_word_ns))
    assert slice_ns == pytest.approx(np.full(8, SLICE_NS))
    # one instruction over all 8 lines, 4 words on each: its slice takes the 8 requests, its busiest line one
    b = np.array([[[(lane % 8) * LINE + 4 * (lane // 8) for lane in range(32)]]])
    line, line_ns, sl, slice_ns = l2_atomics.hottest(b, 4, INT)
    assert line_ns[0] == pytest.approx(CFG.l2.atomic_request_min_ns)
    assert slice_ns[0] == pytest.approx(8 * (CFG.l2.atomic_slice_request_ns + CFG.l2.atomic_slice_sector_ns))
    off = np.full((1, 2, 32), -1, dtype=np.int64)
    line, line_ns, sl, slice_ns = l2_atomics.hottest(off, 4, INT)
    assert line.tolist() == [-1, -1] and line_ns.tolist() == [0.0, 0.0] and sl.tolist() == [-1, -1]


def test_sharing_is_the_chance_another_cta_loads_the_same_line():
    counter = [[frozenset({7})] * 4] * 16  # 16 CTAs of 4 warps, every warp on one line: a global counter
    assert l2_atomics.sharing(counter, None) == pytest.approx(1.0)
    apart = [[frozenset({100 * i + w}) for w in range(4)] for i in range(16)]  # each CTA its own lines
    assert l2_atomics.sharing(apart, None) == pytest.approx(0.0)
    # warp w of every CTA on line w (a histogram's final loop): shared, although the CTA's warps differ
    bins = [[frozenset({w}) for w in range(4)] for _ in range(16)]
    assert l2_atomics.sharing(bins, None) == pytest.approx(1.0)
    # addresses from data: CTAs that copy an emulated one's addresses tell nothing; those that differ decide
    copies = [[frozenset({i // 2 * 100})] for i in range(8)]
    same = [[i // 2 == j // 2 for j in range(8)] for i in range(8)]
    assert l2_atomics.sharing(copies, same) == pytest.approx(0.0)
    assert l2_atomics.sharing(counter[:8], [[True] * 8] * 8) == pytest.approx(1.0)  # every CTA alike: all share


COMPACT = """
extern "C" __global__ void compact(const float* x, float* out, unsigned int* count, float t, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = x[i]; if (v > t) out[atomicAdd(count, 1u)] = v; }
}
"""


@needs_cuda
def test_a_global_counter_serializes_at_the_l2(tmp_path):
    """Stream compaction: nvcc aggregates atomicAdd(count, 1) to one ATOMG a warp, every warp of the grid on one word.
    The kernel takes at least its warps' requests one at a time: without the atomic units it ran in a third of that."""
    from gpusim import bottleneck
    from gpusim.api import predict_source

    src = tmp_path / "compact.cu"
    src.write_text(COMPACT)
    n = 1 << 18
    m, _ = predict_source(src, "compact", grid=(n // 256, 1, 1), block=(256, 1, 1),
                          args=[f"x=f32[{n}]:uniform(0,1)", f"out=f32[{n}]", "count=u32[1]:zeros", "t=0.5", f"n={n}"])
    warps = n // 32
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum"] == warps
    floor_ns = warps * CFG.l2.atomic_request_min_ns
    assert m["gpu__time_duration.sum"] >= floor_ns
    a = bottleneck.analyze(m, CFG)
    assert a.limiter == "L2 atomics" and a.bound
    assert 60 <= a.pct("L2 atomics") <= 100
    st = bottleneck.stalls(m)  # the warps wait for the counter's old value: a global load's stall, not a fixed latency
    assert max(st, key=st.get) == "long_scoreboard"


FENCED = """
extern "C" __global__ void fenced(unsigned* x, int rounds) {
  for (int r = 0; r < rounds; ++r) {
    x[threadIdx.x] = r;
    __threadfence();
  }
}
"""


@needs_cuda
def test_a_fence_waits_for_the_warps_stores(tmp_path):
    """__threadfence after a store: the warp waits for the L2's acknowledgement each iteration (measured 400 cycles an
    iteration, validate/micro/run_fence.py); without the fence's wait the loop of stores ran at 17."""
    from gpusim.api import predict_source

    src = tmp_path / "fenced.cu"
    src.write_text(FENCED)
    rounds = 64
    m, sim = predict_source(src, "fenced", grid=(1, 1, 1), block=(32, 1, 1), args=["x=u32[32]", f"rounds={rounds}"])
    cycles = sim.total_cycles
    assert cycles >= rounds * CFG.l2.fence_after_store_cycles
    assert cycles <= rounds * (CFG.l2.fence_after_store_cycles + 100)  # a store and the loop's few instructions
    assert m["smsp__average_warps_issue_stalled_membar_per_issue_active.ratio"] > 0
    assert "membar" not in str(predict_source(src, "fenced", grid=(1, 1, 1), block=(32, 1, 1),
                                              args=["x=u32[32]", "rounds=0"])[0])  # no fence executed: no reason


ORDERED = """
extern "C" __global__ void ticket(unsigned* count, float* out) {
  __shared__ bool last;
  if (threadIdx.x == 0) last = atomicInc(count, gridDim.x) == gridDim.x - 1;
  __syncthreads();
  if (last) out[threadIdx.x] = 1.0f;
}
"""


@needs_cuda
def test_a_branch_on_an_atomics_ticket_is_said(tmp_path):
    """Which CTA comes last depends on the order the CTAs reach the atomic: the emulation cannot know, and says so."""
    from gpusim.api import predict_source

    src = tmp_path / "ticket.cu"
    src.write_text(ORDERED)
    _, sim = predict_source(src, "ticket", grid=(64, 1, 1), block=(32, 1, 1),
                            args=["count=u32[1]:zeros", "out=f32[32]"])
    assert "a value a global atomic returned" in sim.kernel.notes
