"""The CUDA front-end: SASS emulated as the hardware runs it, lowered to the IR the engine times.

Each test compiles a small kernel with the CUDA toolkit's nvcc (``GPUSIM_REQUIRE_CUDA=1``, as CI sets it: fail rather
than skip when it is missing)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gpusim.frontend import FrontendError, kernel_from_source
from gpusim.frontend.args import ArgError, bind, param_block, tensor_buffers
from gpusim.frontend.build import BuildError, compile_cuda, pick
from gpusim.frontend.machine import Launch, Machine
from gpusim.frontend.memory import EmulationError, GlobalMemory
from gpusim.ir import KernelError, Mem, instructions_per_warp
from conftest import needs_cuda

REPO = Path(__file__).resolve().parent.parent
TWINS = REPO / "validate" / "kernels"


pytestmark = needs_cuda


def _emulate_all(cu: Path, name: str, grid, block, args: list[str]) -> GlobalMemory:
    """Every CTA of a small launch, emulated with no loop jump: the kernel's whole computation."""
    ck = pick(compile_cuda(cu), name, str(cu))
    bound = bind(ck, args)
    bufs = tensor_buffers(bound)
    gmem = GlobalMemory(bufs)
    launch = Launch(grid, block, ck.static_smem_bytes, ck.stack_bytes, param_block(ck, bound, {b.name: b.base
                                                                                          for b in bufs}),
                    const2=ck.module.const2.get(ck.mangled, b""))
    ctas = [(x, y, 0) for y in range(grid[1]) for x in range(grid[0])]
    m = Machine(ck.program, launch, ctas, gmem, no_jump=frozenset(range(len(ck.program))), data=True)
    m.run()
    return gmem


def _tensor(gmem: GlobalMemory, name: str, dtype, n: int) -> np.ndarray:
    t = next(b for b in gmem.tensors if b.name == name)
    pages = -(-t.size_bytes // 16384)
    return np.concatenate([t.page(p) for p in range(pages)])[:t.size_bytes].view(dtype)[:n]


def test_emulated_gemm_computes_the_product():
    """The emulator runs the compiled SGEMM (FFMA, LDS.128, predicated loads, a software-pipelined loop) to the
    right answer: a wrong integer, float or memory semantic breaks the product."""
    n = 128
    args = [f"M={n}", f"N={n}", f"K={n}", "alpha=1.0", f"A=f32[{n * n}]", f"B=f32[{n * n}]", "beta=0.0",
            f"C=f32[{n * n}]"]
    gmem = _emulate_all(TWINS / "sgemm_vectorized.cu", "sgemm_vectorized", (1, 1, 1), (256, 1, 1), args)
    a, b, c = (_tensor(gmem, t, np.float32, n * n).reshape(n, n) for t in "ABC")
    assert np.abs(c - a @ b).max() < 1e-4


def test_divergent_warps_meet_at_their_barriers(tmp_path):
    """Warps that reach __syncthreads at different places (a load/compute split by thread index) wait for each
    other: without barrier waiting the consumer half reads shared memory before the producer half wrote it."""
    cu = tmp_path / "split.cu"
    cu.write_text("""
extern "C" __global__ void split(const float* in, float* out) {
  __shared__ float buf[128];
  int t = threadIdx.x;
  for (int i = 0; i < 4; i++) {
    if (t < 64) { buf[t] = in[i * 64 + t]; buf[t + 64] = 2.0f * in[i * 64 + t]; __syncthreads(); __syncthreads(); }
    else { __syncthreads(); out[i * 64 + t - 64] = buf[t - 64] + buf[t]; __syncthreads(); }
  }
}""")
    gmem = _emulate_all(cu, "split", (1, 1, 1), (128, 1, 1), ["in=f32[256]", "out=f32[256]"])
    x = _tensor(gmem, "in", np.float32, 256)
    y = _tensor(gmem, "out", np.float32, 256)
    assert np.allclose(y, 3 * x)


def test_fused_add_min_max_computes_the_clamp(tmp_path):
    """nvcc for sm_90 writes min(a + k, n) and max(a + k, n) as VIADDMNMX (PT: min, !PT: max; .U32 unsigned), as
    fa3's causal trip count min(row block + 1, blocks) is."""
    cu = tmp_path / "clamp.cu"
    cu.write_text("""
extern "C" __global__ void clamp(const int* a, int* out, int n, int k) {
  int i = threadIdx.x;
  out[i] = min(a[i] + k, n);
  out[i + 32] = max(a[i] + k, n);
  out[i + 64] = (int)min((unsigned)a[i] + (unsigned)k, (unsigned)n);
}""")
    gmem = _emulate_all(cu, "clamp", (1, 1, 1), (32, 1, 1), ["a=i32[32]:randint(-50,50)", "out=i32[96]", "n=5",
                                                               "k=3"])
    a = _tensor(gmem, "a", np.int32, 32).astype(np.int64)
    out = _tensor(gmem, "out", np.int32, 96)
    assert np.array_equal(out[:32], np.minimum(a + 3, 5))
    assert np.array_equal(out[32:64], np.maximum(a + 3, 5))
    assert np.array_equal(out[64:].view(np.uint32), np.minimum((a + 3) % 2**32, 5))


def test_prediction_counts_the_compiled_instructions():
    """A front-end kernel issues, per warp, the instructions the emulator executed (checked against the static
    count of the SASS for a loop-free kernel: every instruction once, EXIT included)."""
    k = kernel_from_source(TWINS / "mem_copy.cu", "mem_copy", grid=(8,), block=(256,),
                           args=["x=f32[8192]", "y=f32[8192]"])
    ck = pick(compile_cuda(TWINS / "mem_copy.cu"), "mem_copy", "")
    executed = [d for d in ck.program if d.mnemonic not in ("NOP",)]
    reached = executed[:next(i for i, d in enumerate(executed) if d.mnemonic == "EXIT") + 1]
    assert instructions_per_warp(k.prologue) == len(reached)


def test_long_loop_is_jumped_and_summarised():
    """A K loop of 512 trips is emulated for its warm-up and its last iterations only, and becomes the IR's one
    loop with the trip count the compare of its back edge gives."""
    k = kernel_from_source(TWINS / "sgemm_naive.cu", "sgemm_naive", grid=(2, 2), block=(32, 32),
                           args=["M=64", "N=64", "K=2048", "alpha=1.0", "A=f32[131072]", "B=f32[131072]", "beta=0.0",
                                 "C=f32[4096]"])
    assert k.loop is not None and k.loop.trips == 2048 // 4  # nvcc unrolls the K loop by four
    loads = [op for op in k.loop.body if isinstance(op, Mem)]
    assert {op.tensor for op in loads} == {"A", "B"}


def test_addresses_follow_the_loop_and_the_grid():
    """Iteration 100 of CTA (1, 0) reads A at the offsets the kernel computes: row * K + 4 * 100 .. for the rows of
    its block (a wrong stride, period or CTA shift moves them)."""
    K = 1024
    k = kernel_from_source(TWINS / "sgemm_naive.cu", "sgemm_naive", grid=(4, 4), block=(32, 32),
                           args=["M=128", "N=128", f"K={K}", "alpha=1.0", f"A=f32[{128 * K}]", f"B=f32[{128 * K}]",
                                 "beta=0.0", "C=f32[16384]"])
    from gpusim.ir import AddrCtx

    op = next(o for o in k.loop.body if isinstance(o, Mem) and o.tensor == "A")
    warps = 32
    ctx = AddrCtx(r=np.zeros((1, 1, 1), int), warp=np.arange(warps).reshape(1, warps, 1),
                  lane=np.arange(32).reshape(1, 1, 32), tid=np.arange(1024).reshape(1, warps, 32),
                  block=(32, 32, 1), bx=1, by=0, bz=0, it=100, j=0)
    a = np.asarray(op.addr(ctx))
    active = a[a >= 0]
    rows = 32 + np.arange(32)  # sgemm_naive: row = blockIdx.x * 32 + threadIdx.x
    assert set(np.unique(active // (4 * K))) <= set(rows.tolist())
    assert len(np.unique(active % (4 * K))) == 1 and int(active[0] % (4 * K)) // 4 // 4 == 100


def test_bad_inputs_are_one_line(tmp_path):
    bad = tmp_path / "bad.cu"
    bad.write_text("__global__ void k(float* x) { x[0] = undefined_name; }\n")
    with pytest.raises(BuildError, match="failed"):
        compile_cuda(bad)
    ok = tmp_path / "ok.cu"
    ok.write_text('extern "C" __global__ void k(float* x, int n) { int i = blockIdx.x * 256 + threadIdx.x; '
                  "if (i < n) x[i] = 1.0f; }\n")
    with pytest.raises(ArgError, match="missing argument"):
        kernel_from_source(ok, "k", grid=(1,), block=(256,), args=["x=f32[256]"])
    with pytest.raises(ArgError, match="pointer"):
        kernel_from_source(ok, "k", grid=(1,), block=(256,), args=["x=5", "n=256"])
    with pytest.raises(FrontendError, match="1024"):
        kernel_from_source(ok, "k", grid=(1,), block=(2048,), args=["x=f32[256]", "n=256"])
    with pytest.raises(EmulationError, match="out-of-bounds"):
        kernel_from_source(ok, "k", grid=(4,), block=(256,), args=["x=f32[256]", "n=1024"])
    with pytest.raises(BuildError, match="did you mean"):
        kernel_from_source(ok, "kk", grid=(1,), block=(256,), args=["x=f32[256]", "n=256"])
    for e in (BuildError, ArgError, FrontendError, EmulationError):
        assert issubclass(e, KernelError)  # one line, exit 2, on every surface


def test_address_from_data_needs_the_data(tmp_path):
    """A gather whose index tensor has no contents is refused, naming the tensor; with contents it runs."""
    cu = tmp_path / "g.cu"
    cu.write_text('extern "C" __global__ void g(const float* x, const int* idx, float* y) '
                  "{ int i = blockIdx.x * 256 + threadIdx.x; y[i] = x[idx[i]]; }\n")
    with pytest.raises(EmulationError, match="idx"):
        kernel_from_source(cu, "g", grid=(4,), block=(256,), args=["x=f32[1024]", "idx=i32[1024]", "y=f32[1024]"])
    k = kernel_from_source(cu, "g", grid=(4,), block=(256,),
                           args=["x=f32[1024]", "idx=i32[1024]:randint(0,1024)", "y=f32[1024]"])
    assert any(isinstance(op, Mem) and op.tensor == "x" for op in k.prologue)


def test_cli_runs_a_cuda_file():
    r = subprocess.run([sys.executable, "-m", "gpusim.cli", "run", str(TWINS / "mem_copy.cu"), "--grid", "64",
                        "--block", "256", "--arg", "x=f32[65536]", "--arg", "y=f32[65536]", "--json"],
                       capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0, r.stderr
    import json

    m = json.loads(r.stdout)
    assert m["gpusim__kernel"] == "mem_copy"
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] == 65536 * 4 // 32  # every byte stored once
    r = subprocess.run([sys.executable, "-m", "gpusim.cli", "run", str(TWINS / "mem_copy.cu"), "--grid", "64",
                        "--block", "256", "--arg", "x=f32[65536]"], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "missing" in r.stderr


MATCH_SRC = r"""
extern "C" __global__ void groups(const int* v, unsigned* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = __match_any_sync(0xffffffffu, v[i]);
}
"""


def test_match_costs_its_distinct_values(tmp_path):
    """MATCH.ANY takes the shuffle unit ``match_slots_per_distinct_value`` slots per distinct value among a warp's
    lanes (measured, validate/micro/match.cu): lanes holding one value against 32 values differ 32-fold."""
    cu = tmp_path / "match.cu"
    cu.write_text(MATCH_SRC)
    slots = {}
    for dist in ("const(7)", "arange(1)"):
        k = kernel_from_source(cu, grid=1, block=32, args=[f"v=i32[32]:{dist}", "out=u32[32]"])
        ops = [op for op in (*k.prologue, *k.epilogue) if getattr(op, "pipe", "") == "shfl"]
        assert len(ops) == 1 and ops[0].count // ops[0].units == 1  # one instruction, as compiled
        slots[dist] = ops[0].units
    assert slots == {"const(7)": 2, "arange(1)": 64}


PAIRS_SRC = r"""
extern "C" __global__ void pairs(float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[2 * i] = 1.0f;                                         // a 4-byte and a 2-byte store per thread: two
  reinterpret_cast<unsigned short*>(out)[4 * i + 2] = 7;     // store operations writing the same sectors
}
"""


def test_stores_of_the_same_blocks_write_the_tensor_once(tmp_path):
    """Two store instructions that write parts of every sector (chip._shared_data groups them) write the
    tensor once to HBM, not once per instruction: a 256 MB output (larger than the L2) is written back about once."""
    from gpusim.chip import simulate
    from gpusim.config import load_config
    from gpusim.metrics import report

    cu = tmp_path / "pairs.cu"
    cu.write_text(PAIRS_SRC)
    n = 1 << 26  # floats
    k = kernel_from_source(cu, grid=n // 2 // 256, block=256, args=[f"out=f32[{n}]"])
    assert sum(1 for op in (*k.prologue, *k.epilogue) if isinstance(op, Mem) and op.kind == "st") == 2
    written = report(simulate(k, load_config()))["dram__bytes_write.sum"]
    assert 0.8 * 4 * n <= written <= 1.05 * 4 * n


SCRATCH_SRC = r"""
extern "C" __global__ void scratch_perm(const float* x, float* s, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int j = 0; j < 64; j++) s[(size_t)j * n + i] = x[(i * 7 + j) % n];
  float acc = 0.f;
  for (int j = 0; j < 64; j++) acc += s[(size_t)((j * 13 + i) & 63) * n + i];
  y[i] = acc;
}
"""

LOCAL_ARRAY_SRC = (REPO / "validate" / "fresh" / "localarr.cu").read_text()  # a fresh kernel (validate/fresh)


def test_no_operation_reads_more_from_hbm_than_it_requests(tmp_path):
    """Physics, on a kernel no one shaped the model around: each thread writes 64 floats of a 138 MB scratch tensor
    (rows n apart, a row per j) and reads them back in a permuted order, beside a stride-7 gather of a 2 MB input
    (counts that repeat every 8 iterations). Every scratch float is read once and the input fits in the L2, so HBM
    reads are at most the two tensors; the per-CTA tiles charged 260 MB, the bound on what the operations request
    (memory.l2.cap_at_requests, per group of operations sharing data) keeps them at the tensors, and the L2 hit rate
    within 0..100."""
    from gpusim.chip import simulate
    from gpusim.config import load_config
    from gpusim.metrics import report

    cu = tmp_path / "scratch.cu"
    cu.write_text(SCRATCH_SRC)
    n = 2112 * 256
    k = kernel_from_source(cu, grid=2112, block=256, args=[f"x=f32[{n}]", f"s=f32[{64 * n}]", f"y=f32[{n}]",
                                                           f"n={n}"])
    m = report(simulate(k, load_config()))
    assert 0.0 <= m["lts__t_sector_hit_rate.pct"] <= 100.0
    assert m["dram__bytes_read.sum"] <= 1.05 * 65 * 4 * n


def test_a_store_behind_a_branch_on_data_varies_between_ctas(tmp_path):
    """Which lanes reach a store behind a branch on loaded data differs from CTA to CTA (a compare-exchange's swap):
    the store is one whose accesses come from data (Kernel.varying), sampled, not a pattern every CTA must share."""
    from gpusim.chip import simulate
    from gpusim.config import load_config
    from gpusim.metrics import report

    cu = tmp_path / "keep.cu"
    cu.write_text(r"""
extern "C" __global__ void keep(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = x[i]; if (v > 0.f) y[i] = v * v; }
}
""")
    n = 1 << 20
    k = kernel_from_source(cu, grid=n // 256, block=256, args=[f"x=f32[{n}]", f"y=f32[{n}]", f"n={n}"])
    stores = [op.name for op in k.all_ops() if isinstance(op, Mem) and op.kind == "st"]
    assert stores and set(stores) <= k.varying
    m = report(simulate(k, load_config()))
    # about half the lanes store (x uniform in [-1, 1)): a sector of 8 floats is written unless all 8 are <= 0
    sectors = m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"]
    assert 0.9 * n / 8 <= sectors <= n / 8


SCATTER_SRC = r"""
extern "C" __global__ void scatter_add(const int* idx, const float* val, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&out[idx[i]], val[i]);
}
"""


def test_a_scatter_into_a_small_output_writes_it_once_and_says_atomics(tmp_path):
    """A scatter-add's bins come from data: every CTA's tile would be new bytes, and a 256 KB output was written back
    109 MB. Its tensor fits in the L2, so all CTAs together dirty at most the tensor (chip._share_gathered_tensors).
    And the L2 write path, which the atomics fill, names them (bottleneck: 'stores and atomics')."""
    from gpusim.bottleneck import analyze
    from gpusim.chip import simulate
    from gpusim.config import load_config
    from gpusim.metrics import report

    cu = tmp_path / "scatter.cu"
    cu.write_text(SCATTER_SRC)
    n, bins = 1 << 21, 1 << 16
    cfg = load_config()
    k = kernel_from_source(cu, grid=n // 256, block=256,
                           args=[f"idx=i32[{n}]:randint(0,{bins})", f"val=f32[{n}]", f"out=f32[{bins}]:zeros",
                                 f"n={n}"])
    m = report(simulate(k, cfg))
    assert m["dram__bytes_write.sum"] <= 4 * bins * 1.05
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum"] > 0.9 * n
    use = next(u for u in analyze(m, cfg).units if u.unit == "L2 write path")
    assert "atomics" in use.work


def test_a_local_array_is_read_back_from_the_l1_and_the_l2(tmp_path):
    """A thread reads back its own local array moments after storing it: the L1 keeps most of the frames while the
    SM's resident frames are twice its capacity (measured 91.9% on the micro-benchmark, 90.4% on this kernel:
    L1Spec.local_hit_fraction), and the L2 keeps the rest, however much the wave's other CTAs store in lockstep (the
    H100 reads 34 MB from HBM for this kernel at twice the grid: memory.l2's stack-frame residency). Fails without
    either: no L1 hit, or 76 MB read from HBM."""
    from gpusim.chip import simulate
    from gpusim.config import load_config
    from gpusim.metrics import report

    cu = tmp_path / "localarr.cu"
    cu.write_text(LOCAL_ARRAY_SRC)
    n = 1 << 20
    k = kernel_from_source(cu, grid=2112, block=256, args=[f"x=f32[{n}]", f"y=f32[{n}]", f"n={n}"])
    m = report(simulate(k, load_config()))
    assert 85.0 <= m["l1tex__t_sector_pipe_lsu_mem_local_op_ld_hit_rate.pct"] <= 100.0
    assert m["dram__bytes_read.sum"] < 30e6
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] < m["l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum"]
    # ncu counts a local STL.128 as four requests (frames interleave threads word by word): 16 a thread, 4 each
    assert m["l1tex__t_requests_pipe_lsu_mem_local_op_st.sum"] == 2112 * 256 // 32 * 16 * 4


def test_nvrtc_builds_as_cupy_does_with_denormals_flushed(tmp_path):
    """`--compiler nvrtc` is CuPy's RawModule build, which adds -ftz=true: __expf and rsqrtf lose their denormal
    scaling (a compare and two predicated multiplies each). Measured: validate/fresh's sfu_mix ran 24 fewer
    instructions an iteration on the H100 than the build without it; `nvrtc-plain` is NVRTC alone."""
    from gpusim.frontend.build import compile_cuda

    cu = tmp_path / "ex.cu"
    cu.write_text('extern "C" __global__ void ex(const float* x, float* y) {\n'
                  '  int i = threadIdx.x; y[i] = __expf(x[i]) + rsqrtf(x[i]);\n}\n')

    def count(compiler):
        return len(pick(compile_cuda(cu, compiler=compiler), "ex", str(cu)).program)

    assert count("nvrtc") + 6 <= count("nvrtc-plain")


@pytest.mark.parametrize("bins", ["randint(0,256)", "const(7)"])
def test_emulated_histogram_counts_every_value(bins):
    """The histogram twin emulated in full (shared ATOMS adds of one, then global REDs of the block's bins) ends with
    the input's counts: a wrong atomic add (lanes of one bin in a warp counted once, or a block's bins added to the
    wrong words) changes them. One bin puts every lane of every warp on one word."""
    n = 3000
    gmem = _emulate_all(TWINS / "histogram.cu", "histogram", (3, 1, 1), (256, 1, 1),
                        [f"in=i32[{n}]:{bins}", "hist=u32[256]:zeros", f"n={n}"])
    values = _tensor(gmem, "in", np.int32, n)
    assert (_tensor(gmem, "hist", np.uint32, 256) == np.bincount(values, minlength=256)).all()


def test_atomic_adds_in_lane_order_return_what_one_lane_at_a_time_returns():
    """The counter path (every lane's add at once) against the lane-by-lane rule it replaces: each lane reads its
    word after the adds of the lanes before it to the same word; a probe writes nothing, so every lane reads the word
    as it was. Words start near 2^32 so the adds wrap."""
    from gpusim.frontend.machine import _add_in_lane_order, _atomic_apply

    rng = np.random.default_rng(3)
    keys = rng.integers(0, 5, 64) * 4
    src = rng.integers(0, 2**32, 64, dtype=np.uint64).astype(np.uint32).view(np.uint8).reshape(-1, 4)
    start = (2**32 - rng.integers(1, 1000, 5)).astype(np.uint32)
    for probing in (False, True):
        words = {4 * i: start[i:i + 1].view(np.uint8).copy() for i in range(5)}
        expect = np.zeros((64, 4), dtype=np.uint8)
        for k in range(64):
            expect[k] = words[keys[k]]
            if not probing:
                words[keys[k]] = _atomic_apply("ADD", "U32", words[keys[k]], src[k], None, 4)
        olds, firsts, finals = _add_in_lane_order(keys, src, lambda ks: start[keys[ks] // 4].view(np.uint8)
                                                  .reshape(-1, 4), probing)
        assert (olds == expect).all()
        if not probing:
            assert all((finals[i] == words[keys[f]]).all() for i, f in enumerate(firsts))


TRI_SRC = """
extern "C" __global__ void {name}(const float* x, float* y) {{
  float s = 0.f;
  const int trips = blockIdx.x + 4;  // CTA x runs x + 4 iterations, its last two another path
  for (int j = 0; j < trips; ++j) {{
    float v = x[j * blockDim.x + threadIdx.x];
    if (j >= trips - 2) {{
#pragma unroll
      for (int k = 0; k < {k}; ++k) {body};
    }}
    s += v;
  }}
  y[blockIdx.x * blockDim.x + threadIdx.x] = s;
}}"""


def test_a_loop_whose_ctas_run_different_trips_and_a_tail_path_keeps_its_loads_in_the_loop(tmp_path):
    """CTAs that run different numbers of iterations of a loop whose last iterations take another path (causal
    attention: the blocks that cross the diagonal are masked, a CTA's row sets its trips). The loop holds every
    iteration of every CTA (trips per CTA; the addresses of CTAs outside the emulated batch extrapolated by the step
    between iterations), and the compute the two masked iterations add follows it. Without the split the kernel was
    refused (and written out, every CTA would run the emulated CTA's iterations: a small causal FA2 lost its
    imbalance)."""
    from gpusim.ir import AddrCtx, Compute

    cu = tmp_path / "tri.cu"
    cu.write_text(TRI_SRC.format(name="tri", k=24, body="v = __expf(v * 0.5f + (float)k) - v"))
    k = kernel_from_source(cu, "tri", grid=(8, 1, 1), block=(64, 1, 1), args=["x=f32[8192]", "y=f32[512]"])
    assert [k.trips_of(c) for c in range(8)] == [c + 4 for c in range(8)]
    assert not any(isinstance(o, Compute) and o.pipe == "sfu" for o in k.loop.body)
    sfu = sum(o.count for o in k.epilogue if isinstance(o, Compute) and o.pipe == "sfu")
    assert sfu == 2 * 24  # two masked iterations, 24 __expf each (one MUFU.EX2)
    assert not [o for o in k.epilogue if isinstance(o, Mem) and o.tensor == "x"]
    (load,) = [o for o in k.loop.body if isinstance(o, Mem) and o.tensor == "x"]

    def offsets(cta, it):
        ctx = AddrCtx(r=np.zeros((1, 1, 1), int), warp=np.arange(2).reshape(1, 2, 1),
                      lane=np.arange(32).reshape(1, 1, 32), tid=np.arange(64).reshape(1, 2, 32),
                      block=(64, 1, 1), bx=cta, by=0, bz=0, it=it, j=0)
        return np.asarray(load.addr(ctx)).reshape(-1)

    tid = np.arange(64)
    # CTA 5 is not emulated (the batch: 0, 1, 2, 7 and the probes 4 and 6): it runs 9 iterations, the last two masked
    assert [(offsets(5, j) == 4 * (j * 64 + tid)).all() for j in (0, 6, 7, 8)] == [True] * 4


def test_a_loop_whose_last_iterations_load_on_their_own_is_refused_in_one_line(tmp_path):
    """Unequal trips and last iterations that read memory the others do not: the loop's loads would no longer be
    one operation a CTA runs every iteration, so the front-end refuses it and says why (it does not write every CTA
    the emulated CTA's iterations)."""
    from gpusim.frontend.trace import LoweringError

    cu = tmp_path / "tri2.cu"
    cu.write_text(TRI_SRC.format(name="tri2", k=16,
                                 body="v = v * x[4096 + (j + k) * blockDim.x + threadIdx.x] + __expf(v)"))
    with pytest.raises(LoweringError, match="not the common one with compute added") as e:
        kernel_from_source(cu, "tri2", grid=(8, 1, 1), block=(64, 1, 1), args=["x=f32[8192]", "y=f32[512]"])
    assert "\n" not in str(e.value)


def test_atomics_are_counted_under_ncus_names_red_or_atom(tmp_path):
    """ncu counts an atomicAdd whose value is unused (SASS RED) under op_red and one whose value is read (ATOMG) under
    op_atom, requests, sectors and L2 lookups alike, and neither under the stores' op_write (measured: scatter_add in
    fresh-2026-11-28.json, lts__t_sectors_op_red 6.28 M, op_write 915). Without the split both showed as op_atom
    and as L2 writes."""
    from gpusim.chip import simulate
    from gpusim.config import load_config
    from gpusim.metrics import report

    cu = tmp_path / "ticket.cu"
    cu.write_text("""
extern "C" __global__ void ticket(unsigned* ctr, unsigned* out, float* y) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = atomicAdd(&ctr[i % 64], 1u);  // ATOMG: its value is stored
  atomicAdd(&y[i % 256], 1.0f);           // RED: its value is unused
}""")
    n = 1 << 16
    k = kernel_from_source(cu, grid=n // 256, block=256,
                           args=["ctr=u32[64]:zeros", f"out=u32[{n}]", "y=f32[256]:zeros"])
    m = report(simulate(k, load_config()))
    warps = n // 32
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum"] == warps
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"] == warps
    assert m["lts__t_sectors_op_atom.sum"] > 0 and m["lts__t_sectors_op_red.sum"] > 0
    stored = m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"]  # out: the only plain store
    assert m["lts__t_sectors_op_write.sum"] == pytest.approx(1.5 * stored, rel=0.01)


def test_an_atomics_old_value_comes_back_from_the_l2(tmp_path):
    """An atomicAdd whose old value the next one's address needs (a chain of tickets) waits for it: the atomic runs at
    the L2, so each link takes at least the L2's hit latency. Without it the chain ran as fire-and-forget stores, a
    few cycles a link."""
    from gpusim.chip import simulate
    from gpusim.config import load_config

    cu = tmp_path / "chain.cu"
    cu.write_text("""
extern "C" __global__ void chain(unsigned* c, unsigned* out, int n) {
  unsigned v = threadIdx.x;
  for (int k = 0; k < n; ++k) v = atomicAdd(&c[v % 64], 1u);
  out[threadIdx.x] = v;
}""")
    cfg = load_config()

    def cycles(n: int) -> float:
        k = kernel_from_source(cu, grid=1, block=32, args=["c=u32[64]:zeros", "out=u32[32]", f"n={n}"])
        return simulate(k, cfg).result.cycles

    per_link = (cycles(96) - cycles(32)) / 64
    assert per_link >= cfg.l2.hit_latency_near_cycles


def test_a_compute_bundle_goes_on_while_later_loads_are_on_their_way(monkeypatch):
    """sgemm_bank_padded's dotIdx step issues ten shared loads (regM, regN) and then 64 FFMA: the scoreboard holds each
    FFMA until its own operands are back, so the first FFMAs run while the last loads (seven 4-way conflicted LDS) are
    still on their way. The lowering cuts the bundle where an instruction first needs another load; merged, the 64
    FFMA waited for all ten and the row ran 16% over the H100 (short_scoreboard 3.0 stalls an issue against the
    measured 1.4, validate/REPORT.md)."""
    from gpusim.chip import simulate
    from gpusim.config import load_config
    from gpusim.frontend import lower
    from gpusim.ir import Compute
    from gpusim.metrics import report

    cfg = load_config()
    args = ["M=512", "N=512", "K=512", "alpha=1.0", "A=f32[512*512]", "B=f32[512*512]", "beta=0.0", "C=f32[512*512]"]

    def run():
        k = kernel_from_source(TWINS / "sgemm_bank_padded.cu", "sgemm_bank_padded", grid=(4, 4), block=(256,),
                               args=args, compiler="nvrtc", config=cfg)
        ffma = [o for o in k.loop.body if isinstance(o, Compute) and o.pipe == "fp32"]
        return ffma, report(simulate(k, cfg))

    ffma, split = run()
    assert len(ffma) > 8  # more bundles than the eight dotIdx steps: cut
    assert sum(o.count for o in ffma) == 8 * 64  # cut, not lost
    monkeypatch.setattr(lower, "split_at_loads", lambda units: units)
    merged_ffma, merged = run()
    assert len(merged_ffma) < len(ffma)
    stall = "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio"
    assert split[stall] < 0.6 * merged[stall]
    assert split["gpu__time_duration.sum"] < 0.9 * merged["gpu__time_duration.sum"]


def test_bulk_copies_move_the_bytes(tmp_path):
    """UBLKCP both ways, emulated with values: each CTA's 4 KiB lands in shared memory, is doubled there and is stored
    back (test_frontend_hopper.BULK)."""
    from test_frontend_hopper import BULK

    cu = tmp_path / "bulk.cu"
    cu.write_text(BULK)
    gmem = _emulate_all(cu, "bulk", (4, 1, 1), (1024, 1, 1), ["in=f32[4096]:normal", "out=f32[4096]"])
    assert np.allclose(_tensor(gmem, "out", np.float32, 4096), 2 * _tensor(gmem, "in", np.float32, 4096))


@needs_cuda
def test_a_grid_stride_loop_of_data_dependent_atomics_whose_ctas_run_unequal_trips_is_kept_whole():
    """The histogram twin with more elements than one pass of the grid covers and fewer than two: the first CTAs run
    one iteration more than the others, and their atomics' addresses follow the data, not a step per iteration. Such a
    loop keeps every recorded iteration (CTAs outside the batch take their nearest emulated CTA's); the per-lane model
    of uneven trips (a warp-specialized role's loop) cannot fit it and must not be tried on it (the whole front-end
    validation refused the uniform histograms when it was)."""
    grid, block = 16, 256
    n = grid * block * 3 + 700  # CTAs 0..2 run 4 iterations (the third in part), the rest 3
    k = kernel_from_source(TWINS / "histogram.cu", "histogram", grid=(grid, 1, 1), block=(block, 1, 1),
                           args=[f"in=i32[{n}]:randint(0,256)", "hist=u32[256]:zeros", f"n={n}"])
    assert any(isinstance(op, Mem) and op.atomic for op in k.all_ops())


@needs_cuda
def test_a_source_that_needs_sm_90a_is_built_for_sm_90_only_once(tmp_path, monkeypatch):
    """wgmma and setmaxnreg are sm_90a's: a build for sm_90 fails and the source is rebuilt for sm_90a. The cache
    remembers it, so the next run goes straight to sm_90a (each failing build cost a third of a second a run)."""
    from gpusim.frontend import build as fb

    monkeypatch.setenv("GPUSIM_CACHE_DIR", str(tmp_path))
    builds = []
    real = fb._build_entry
    monkeypatch.setattr(fb, "_build_entry", lambda cu, nvcc, arch, *a: (builds.append(arch), real(cu, nvcc, arch, *a)))
    src = Path(__file__).resolve().parents[1] / "validate" / "kernels" / "hgemm_ws.cu"
    first = compile_cuda(src, "sm_90", ("STAGES=3", "BN=256"))
    assert builds == ["sm_90", "sm_90a"] and first[0].arch == "sm_90a"
    again = compile_cuda(src, "sm_90", ("STAGES=3", "BN=256"))
    assert builds == ["sm_90", "sm_90a"] and again[0].arch == "sm_90a"




def test_a_switch_on_data_breaks_out_of_its_cases_and_meets_before_the_store():
    """A switch on loaded data: its cases leave their convergence region (BREAK), the loads of each case run in the
    lanes the data picks (Kernel.varying, up to where the lanes reconverge), and the lanes that went through the
    division's and the square root's slow paths (subroutines placed after the store) meet the others at the BSYNC
    before it, as the hardware's convergence barrier makes them: one store, not one per group of lanes."""
    cu = REPO / "validate" / "fresh" / "switch_ops.cu"  # the fresh batch's kernel (validate/fresh/cases.py)
    n = 1 << 18
    k = kernel_from_source(cu, grid=n // 256, block=256, args=[f"op=i32[{n}]:randint(0,8)", f"a=f32[{n}]:normal",
                                                                 f"b=f32[{n}]:normal", f"c=f32[{n}]", f"n={n}"])
    mems = [op for op in k.all_ops() if isinstance(op, Mem)]
    loads = [op.name for op in mems if op.kind == "ld"]
    stores = [op.name for op in mems if op.kind == "st"]
    assert len(stores) == 1, stores
    assert len(loads) > 8 and set(loads[1:]) <= k.varying  # every load after the switch's own


CONSTANT_SRC = r"""
__constant__ int stride = 8;
__constant__ float scale[2] = {0.5f, 2.0f};
extern "C" __global__ void strided(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = scale[i & 1] * x[i * stride];
}
"""


def test_constant_memory_holds_what_the_module_initialises(tmp_path):
    """``__constant__`` variables (constant bank 3) read as the module initialises them: a stride of 8 floats puts
    each lane's load in a sector of its own (0, the value of an unread bank, would give one sector a warp), and the
    result says the host's cudaMemcpyToSymbol is not known."""
    from gpusim.chip import simulate
    from gpusim.config import load_config
    from gpusim.metrics import report

    cu = tmp_path / "const.cu"
    cu.write_text(CONSTANT_SRC)
    n = 1 << 16
    k = kernel_from_source(cu, grid=n // 256, block=256, args=[f"x=f32[{8 * n}]", f"y=f32[{n}]", f"n={n}"])
    assert "cudaMemcpyToSymbol" in k.notes
    m = report(simulate(k, load_config()))
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == n


DEVICE_VAR_SRC = r"""
__device__ unsigned int hits;
__device__ float table[4] = {1.f, 2.f, 3.f, 4.f};
extern "C" __global__ void count(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  y[i] = x[i] * table[i & 3];
  if (x[i] > 0.f) atomicAdd(&hits, 1u);
}
"""


def test_device_variables_are_tensors_of_their_own_and_printf_is_refused(tmp_path):
    """A ``__device__`` variable (its address in constant bank 4, filled by the loader) is a tensor named as the
    variable: the atomic counter's reductions and the table's loads go to it, not outside every tensor. A kernel
    that calls printf is refused in one line naming it."""
    cu = tmp_path / "dev.cu"
    cu.write_text(DEVICE_VAR_SRC)
    n = 1 << 16
    k = kernel_from_source(cu, grid=n // 256, block=256, args=[f"x=f32[{n}]:normal", f"y=f32[{n}]", f"n={n}"])
    assert {"hits", "table"} <= {t.name for t in k.tensors}
    by_tensor = {op.tensor for op in k.all_ops() if isinstance(op, Mem) and op.space == "global"}
    assert {"hits", "table", "x", "y"} <= by_tensor
    pf = tmp_path / "pf.cu"
    pf.write_text('#include <cstdio>\nextern "C" __global__ void hello(int* x) { if (threadIdx.x == 0) '
                  'printf("block %d\\n", blockIdx.x); x[threadIdx.x] = 1; }\n')
    with pytest.raises(EmulationError, match="printf"):
        kernel_from_source(pf, grid=4, block=32, args=["x=i32[32]"])


def test_dp4a_computes_signed_and_unsigned_byte_dot_products(tmp_path):
    """``__dp4a`` (IDP.4A.S8.S8 and .U8.U8): the accumulator plus the four products of the operands' bytes, signed or
    not as the types say; a wrong sign extension or byte order breaks the sums."""
    cu = tmp_path / "dp4a.cu"
    cu.write_text(r"""
extern "C" __global__ void dp(const int* a, const int* b, int* s, unsigned* u) {
  int i = threadIdx.x;
  s[i] = __dp4a(a[i], b[i], i);
  u[i] = __dp4a((unsigned)a[i], (unsigned)b[i], (unsigned)i);
}
""")
    gmem = _emulate_all(cu, "dp", (1, 1, 1), (64, 1, 1), ["a=i32[64]:randint(-2147483648,2147483647)",
                                                          "b=i32[64]:randint(-2147483648,2147483647)", "s=i32[64]",
                                                          "u=u32[64]"])
    a, b = (_tensor(gmem, t, np.int32, 64) for t in "ab")
    sb = lambda x: x.view(np.int8).reshape(-1, 4).astype(np.int64)  # noqa: E731
    ub = lambda x: x.view(np.uint8).reshape(-1, 4).astype(np.int64)  # noqa: E731
    i = np.arange(64)
    want_s = ((sb(a) * sb(b)).sum(1) + i) & 0xFFFFFFFF
    want_u = ((ub(a) * ub(b)).sum(1) + i) & 0xFFFFFFFF
    assert (_tensor(gmem, "s", np.uint32, 64) == want_s).all()
    assert (_tensor(gmem, "u", np.uint32, 64) == want_u).all()




def test_interior_blocks_that_alternate_are_classes_of_their_own():
    """A tiled convolution whose 16-float tiles start 2 floats before the tile (its halo): every other CTA's rows
    cross a 128-B line, so interior CTAs alternate between two patterns along x (and not along y). Each parity is a
    class of its own, with its CTAs counted, and the CTAs of a class share its lines, where one pattern for all would
    be refused (or wrong for half of them)."""
    from gpusim import patterns
    from gpusim.chip import simulate
    from gpusim.config import load_config

    cu = REPO / "validate" / "fresh" / "conv2d_tiled.cu"  # the fresh batch's kernel (validate/fresh/cases.py)
    n, g = 1024, 64
    k = kernel_from_source(cu, grid=(g, g), block=(16, 16), args=[f"in=f32[{n * n}]", f"out=f32[{n * n}]",
                                                                   f"w={n}", f"h={n}"])
    sim = simulate(k, load_config())
    classes = sim.classes
    interior = [c for c in classes if c.edges == (0, 0, 0)]
    assert len(interior) == 2 and interior[0].phase_dims == (True, False, False)
    assert sum(c.count for c in classes) == g * g
    halo = next(n for n in interior[0].pats if n.startswith("p_ldg"))
    lines = [int(c.pats[halo].lines.sum()) for c in interior]
    assert lines[0] != lines[1]
    for x in (5, 6, 33, 34):  # an interior CTA's class is its parity's
        cls = classes[patterns.class_of(k, classes, g * 7 + x)]
        assert cls is next(c for c in interior if c.cta[0] % 2 == x % 2)


def test_template_and_namespace_kernels_are_named_as_written(tmp_path):
    """A template kernel is named with its arguments (``scale<2>``; the bare name where one instantiation was built,
    a one-line error naming them where several were), and a kernel in a namespace by its own name."""
    cu = tmp_path / "tmpl.cu"
    cu.write_text(r"""
template <int K, typename T> __global__ void scale(const T* x, T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * K;
}
template __global__ void scale<2, float>(const float*, float*, int);
template __global__ void scale<3, float>(const float*, float*, int);
namespace ops { __global__ void shift(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + 1.f;
} }
""")
    args = ["x=f32[4096]", "y=f32[4096]", "n=4096"]
    names = sorted(k.name for k in compile_cuda(cu))
    assert names == ["scale<2, float>", "scale<3, float>", "shift"]
    assert kernel_from_source(cu, "scale<3,float>", grid=16, block=256, args=args).name == "scale<3, float>"
    assert kernel_from_source(cu, "shift", grid=16, block=256, args=args).name == "shift"
    with pytest.raises(BuildError, match="2 instantiations"):
        kernel_from_source(cu, "scale", grid=16, block=256, args=args)


def test_barrier_reductions_give_each_block_its_or_and_and_count(tmp_path):
    """``__syncthreads_or / _and / _count`` (BAR.RED.OR/AND/POPC and B2R.RESULT): each block's threads' predicates
    reduced at the barrier, what the kernel stores per block."""
    cu = tmp_path / "barred.cu"
    cu.write_text(r"""
extern "C" __global__ void anyneg(const float* x, int* flags, int* counts, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? x[i] : 0.f;
  int any = __syncthreads_or(v < 0.f);
  int all = __syncthreads_and(v < 0.5f);
  int cnt = __syncthreads_count(v > 0.f);
  if (threadIdx.x == 0) { flags[blockIdx.x] = any + 2 * all; counts[blockIdx.x] = cnt; }
}
""")
    gmem = _emulate_all(cu, "anyneg", (4, 1, 1), (128, 1, 1), ["x=f32[512]:uniform(-0.01,1)", "flags=i32[4]",
                                                                "counts=i32[4]", "n=512"])
    x = _tensor(gmem, "x", np.float32, 512).reshape(4, 128)
    want_flags = (x < 0).any(1).astype(int) + 2 * (x < 0.5).all(1).astype(int)
    assert (_tensor(gmem, "flags", np.int32, 4) == want_flags).all()
    assert (_tensor(gmem, "counts", np.int32, 4) == (x > 0).sum(1)).all()


def test_half2_compares_set_each_half(tmp_path):
    """``__hgt2`` (HSET2.BF: 1.0 or 0.0 per half) and ``__hbgt2`` (HSET2 to a mask, both halves true): each half
    compared on its own; a compare of the wrong halves or a wrong encoding of true breaks the results."""
    cu = tmp_path / "hcmp.cu"
    cu.write_text(r"""
#include <cuda_fp16.h>
extern "C" __global__ void hcmp(const __half2* a, const __half2* b, __half2* gt, int* both, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { gt[i] = __hgt2(a[i], b[i]); both[i] = __hbgt2(a[i], b[i]) ? 1 : 0; }
}
""")
    gmem = _emulate_all(cu, "hcmp", (1, 1, 1), (256, 1, 1), ["a=f16[512]:normal", "b=f16[512]:normal",
                                                             "gt=f16[512]", "both=i32[256]", "n=256"])
    a, b = (_tensor(gmem, t, np.float16, 512).reshape(256, 2) for t in "ab")
    assert (_tensor(gmem, "gt", np.float16, 512).reshape(256, 2) == (a > b).astype(np.float16)).all()
    assert (_tensor(gmem, "both", np.int32, 256) == (a > b).all(1)).all()


def test_an_instruction_the_decoder_cannot_read_fails_only_its_kernel(tmp_path):
    """A listing whose one kernel has an operand the decoder cannot read: that kernel is refused in one line when it
    is picked; the file's other kernel goes through."""
    from gpusim.frontend.build import load_sass

    good = ["        /*0000*/                   EXIT ;               /* 0x000000000000794d */",
            "                                                        /* 0x000fea0003800000 */"]
    bad = ["        /*0000*/                   IADD3 R1, R2, ??weird??, RZ ;   /* 0x0000000000007210 */",
           "                                                        /* 0x000fea0003800000 */", *good]
    listing = tmp_path / "two.sass"
    listing.write_text("\n".join(["\tcode for sm_90", "\t\tFunction : ok", *good, "\t\tFunction : broken", *bad, ""]))
    kernels = load_sass(listing)
    assert pick(kernels, "ok", str(listing)).program
    with pytest.raises(BuildError, match="broken"):
        pick(kernels, "broken", str(listing))


def test_a_grid_wide_sync_is_refused_in_one_line_naming_it(tmp_path):
    """cooperative_groups::this_grid().sync() reads the cooperative launch's grid-sync workspace (a driver constant):
    refused with a line that names the construct and what to do, not an unnamed driver constant."""
    cu = tmp_path / "gsync.cu"
    cu.write_text(r"""
#include <cooperative_groups.h>
extern "C" __global__ void two_phase(float* x, float* y, int n) {
  cooperative_groups::grid_group g = cooperative_groups::this_grid();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 2.f;
  g.sync();
  if (i < n) y[i] = x[(i + 1) % n];
}
""")
    with pytest.raises(EmulationError, match=r"grid-sync workspace .*this_grid\(\)\.sync\(\).* two launches"):
        kernel_from_source(cu, grid=8, block=256, args=["x=f32[2048]", "y=f32[2048]", "n=2048"])


def test_a_constant_made_by_hfma2_has_its_high_half_first(tmp_path):
    """ptxas materialises integer and float constants with ``HFMA2.MMA R, -RZ, RZ, hi, lo`` (1 is ``0, 5.96e-08``,
    1.0f ``1.875, 0``): the first immediate is the high half. Read the other way, a work queue's increment of 1 was
    65,536 and every CTA but the first found the queue empty."""
    cu = tmp_path / "ones.cu"
    cu.write_text(r"""
extern "C" __global__ void ones(int* out, float* f, unsigned long long* u) {
  int i = threadIdx.x;
  out[i] = 1; f[i] = 1.0f; u[i] = 0x0000000100000001ull;
}
""")
    gmem = _emulate_all(cu, "ones", (1, 1, 1), (32, 1, 1), ["out=i32[32]", "f=f32[32]", "u=u64[32]"])
    assert (_tensor(gmem, "out", np.int32, 32) == 1).all()
    assert (_tensor(gmem, "f", np.float32, 32) == 1.0).all()
    assert (_tensor(gmem, "u", np.uint64, 32) == 0x100000001).all()


def test_half2_immediate_pairs_put_the_high_half_first(tmp_path):
    """``HADD2 R0, R2, -0.5, 1`` adds the pair (high -0.5, low 1.0): the listing's first immediate is the high half,
    for an addition as for HFMA2's constants."""
    from gpusim.frontend.build import load_sass

    listing = tmp_path / "h.sass"
    listing.write_text("\n".join([
        "\tcode for sm_90", "\t\tFunction : h",
        "        /*0000*/                   HADD2 R0, R2, -0.5, 1 ;   /* 0x0000000000007430 */",
        "                                                        /* 0x000fe20000000000 */",
        "        /*0010*/                   EXIT ;               /* 0x000000000000794d */",
        "                                                        /* 0x000fea0003800000 */", ""]))
    ck = pick(load_sass(listing), "h", str(listing))
    m = Machine(ck.program, Launch((1, 1, 1), (32, 1, 1), 0, 0, b""), [(0, 0, 0)], GlobalMemory([]),
                no_jump=frozenset(range(len(ck.program))), data=True)
    m.run()
    assert (m.R[0] == 0xB8003C00).all()


def test_a_work_queue_is_refused_in_one_line_that_says_why(tmp_path):
    """A work queue (each block takes items with atomicAdd on a counter until it runs dry): which blocks take how
    many items depends on the order they reach the counter, which the emulated batch cannot stand for. Refused with
    a line that says so, not predicted with every block doing the batch's share."""
    from gpusim.chip import simulate
    from gpusim.config import load_config

    cu = tmp_path / "queue.cu"
    cu.write_text(r"""
__device__ unsigned int next_item = 0;
extern "C" __global__ void work_queue(const float* x, float* y, int items, int per) {
  __shared__ unsigned int item;
  while (true) {
    if (threadIdx.x == 0) item = atomicAdd(&next_item, 1u);
    __syncthreads();
    unsigned int it = item;
    __syncthreads();
    if (it >= (unsigned)items) break;
    for (int j = threadIdx.x; j < per; j += blockDim.x) y[it * per + j] = x[it * per + j] * 3.f;
  }
}
""")
    k = kernel_from_source(cu, grid=264, block=256, args=["x=f32[4194304]", "y=f32[4194304]", "items=4096",
                                                          "per=1024"])
    with pytest.raises(KernelError, match="branches on a global atomic's result"):
        simulate(k, load_config())


def test_a_switch_compiled_to_a_jump_table_takes_each_lanes_case():
    """validate/micro/branch.cu's br_ways: ptxas compiles the switch on a loop-invariant selector to a jump table in
    constant bank 2 (LDC R8, c[0x2][R7+0xc]; BRX R8 -0x9f0, relative to the next instruction): each lane's three trips
    through its own case, summed by the CTA's atomics, are what numpy computes."""
    cu = REPO / "validate" / "micro" / "branch.cu"
    ck = pick(compile_cuda(cu), "br_ways", str(cu))
    assert any(d.mnemonic == "BRX" for d in ck.program) and ck.module.const2.get(ck.mangled)
    gmem = _emulate_all(cu, "br_ways", (1, 1), (1024, 1, 1),
                        ["ways=3", "iters=3", "warps=1", "cyc=i64[32]", "sink=u32[1]:zeros"])
    cases = [(3, 7, 5), (5, 9, 3), (7, 11, 6), (9, 5, 7), (11, 13, 2), (13, 3, 9), (15, 6, 4), (17, 4, 8)]
    m = 0xFFFFFFFF
    total = 0
    for lane in range(32):
        acc = (lane * 2654435761) & m
        a, b, c = cases[lane % 3]
        k = lane % 3
        for _ in range(3):
            if k == 7:  # the default case: branch.cu's own constants
                acc = (acc * 17 + (acc >> 4)) & m
                acc ^= (acc << 8) & m
                acc = (acc * 19 + (acc >> 5)) & m
                acc ^= acc >> 9
                acc = (acc * 21 + 7) & m
                continue
            acc = (acc * a + (acc >> b)) & m
            acc ^= (acc << c) & m
            acc = (acc * (a + 2) + (acc >> (b + 1))) & m
            acc ^= acc >> (c + 1)
            acc = (acc * (a + 4) + k) & m
        total = (total + acc) & m
    assert int(_tensor(gmem, "sink", np.uint32, 1)[0]) == total


@pytest.mark.parametrize(("row_kib", "per_sm", "least", "most"), [(32, 4, 1.0, 1.05), (64, 8, 1.9, 2.0)])
def test_a_row_read_again_after_its_loop_finds_the_l2_as_far_as_the_resident_rows_allow(h100, row_kib, per_sm,
                                                                                        least, most):
    """validate/micro/l2_rowreuse.cu: each CTA sums its row in a loop, then again in code ptxas unrolls after it. The
    second read is of the loop's chunk tiles, after the loop: it hits where the resident rows (16.5 MiB) fit the L2
    and misses where they are 2.6 times it (the H100: 0% and 100% of the second reads missed,
    validate/measurements/h100/l2rowreuse-2026-12-08.json). Spread over the loop's chunks as tiles of its own, the
    second read missed wherever the rows were (1.88x the row's bytes at 16.5 MiB)."""
    cu = REPO / "validate" / "micro" / "l2_rowreuse.cu"
    rows, row4 = 132 * per_sm * 2, row_kib * 64
    k = kernel_from_source(cu, "row_twice", grid=rows, block=256, smem_dynamic=228 * 1024 // per_sm - 2048,
                           args=[f"x=f32[{rows * row4 * 4}]", f"row4={row4}", f"out=f32[{rows}]"], config=h100)
    from gpusim.chip import simulate
    from gpusim.metrics import report
    reads = report(simulate(k, h100))["dram__bytes_read.sum"] / (rows * row4 * 16)
    assert least <= reads <= most, reads


def test_a_pass_unrolled_before_the_loop_that_reads_the_row_again_is_not_found_by_its_own_visit(h100):
    """validate/fresh/center_rows.cu (a row's mean, then the row less it, in place): ptxas unrolls the first pass
    before the loop that reads the row again. Its reads are the loop's chunk tiles, read before the loop; visited
    again beside the loop's chunks with none of its bytes, it made the loop's read of each tile find it moments old,
    whatever the 2,112 resident rows (35 MB, 1.3 times the L2 with its copies) read between: no second read missed
    (the H100: 53% of them, validate/measurements/h100/fresh-passes-2026-12-08.json)."""
    cu = REPO / "validate" / "fresh" / "center_rows.cu"
    rows, cols4 = 132 * 16 * 2, 1024
    k = kernel_from_source(cu, "center_rows", grid=rows, block=128, compiler="nvrtc",
                           args=[f"x=f32[{rows * cols4 * 4}]", f"cols4={cols4}"], config=h100)
    from gpusim.chip import simulate
    from gpusim.metrics import report
    reads = report(simulate(k, h100))["dram__bytes_read.sum"] / (rows * cols4 * 16)
    assert 1.2 <= reads <= 1.7, reads


def test_stores_between_a_rows_passes_are_placed_where_they_are_written(h100):
    """validate/fresh/layernorm3.cu writes y in its third pass, after the loop that reads the row first: its stores
    take their places among the passes' reads after the loop, so the last rows written are still dirty in the L2 at
    the end, as much as it keeps (``[l2] dirty_max_size_ratio``, 21 MB; the H100 wrote 117 of 134 MB of y at 4,096
    rows, validate/measurements/h100/fresh-passes-2026-12-08.json). Spread over the loop's chunks, the stores came
    before the passes and the L2 wrote every byte of y back (1.00 of it at 2,112 rows)."""
    cu = REPO / "validate" / "fresh" / "layernorm3.cu"
    rows, cols = 132 * 8 * 2, 8192
    k = kernel_from_source(cu, "layernorm3", grid=rows, block=256, compiler="nvrtc", config=h100,
                           args=[f"x=f32[{rows * cols}]", f"w=f32[{cols}]", f"b=f32[{cols}]", f"y=f32[{rows * cols}]",
                                 f"cols={cols}", "eps=f32:1e-5"])
    from gpusim.chip import simulate
    from gpusim.metrics import report
    kept = rows * cols * 4 - report(simulate(k, h100))["dram__bytes_write.sum"]
    assert 0.8 * h100.l2.dirty_max_bytes <= kept <= 1.05 * h100.l2.dirty_max_bytes, kept / 1e6
