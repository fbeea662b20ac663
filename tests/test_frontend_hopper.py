"""Hopper through the CUDA front-end (gpusim/frontend/hopper.py): tensor maps, TMA loads, mbarriers, wgmma."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpusim import ir, registry
from gpusim.chip import simulate
from gpusim.config import load_config
from gpusim.metrics import report
from gpusim.patterns import eval_addresses
from gpusim.frontend import kernel_from_source
from gpusim.frontend.args import ArgError, parse_tmap
from gpusim.frontend.hopper import swizzled
from gpusim.frontend.memory import EmulationError
from gpusim.ir import instructions_per_warp
from conftest import needs_cuda

REPO = Path(__file__).resolve().parents[1]
TWIN = REPO / "validate" / "kernels" / "hgemm_tma_wgmma.cu"
COMMON = REPO / "validate" / "kernels" / "hopper_common.cuh"


def test_tmap_argument_is_checked():
    t = parse_tmap("tmap(A,bf16,[4096,512],[64,128],swizzle=128)", "tmA", "--arg")
    assert (t.tensor, t.dims, t.box, t.swizzle, t.elem_bytes) == ("A", (4096, 512), (64, 128), 128, 2)
    for bad in ("tmap(A,bf16,[64,8],[64,300],swizzle=128)",  # a box dimension over 256
                "tmap(A,bf16,[64,8],[128,8],swizzle=128)",  # 256-byte rows over the 128-byte swizzle span
                "tmap(A,bf16,[64,8],[64,8],swizzle=48)", "tmap(A,bf16,[64],[64,8])", "tmap(A,q7,[64],[64])"):
        with pytest.raises(ArgError):
            parse_tmap(bad, "tmA", "--arg")


def test_swizzle_128b_is_the_twins_layout():
    """hopper_common.cuh: byte (r, c) of a 128-byte-row tile at r*128 + 2c, then the 16-byte chunk index XOR r % 8."""
    r, q = np.meshgrid(np.arange(16), np.arange(8), indexing="ij")
    got = swizzled(r * 128 + q * 16, 128)
    assert np.array_equal(got, r * 128 + ((q ^ (r % 8)) * 16))
    assert np.array_equal(swizzled(r * 128 + q * 16, 0), r * 128 + q * 16)


def _twin(size: int, stages: int = 1, defines: tuple = ()):
    M = N = K = size
    box = "[64,128],swizzle=128"
    return kernel_from_source(TWIN, "hgemm_tma_wgmma", grid=(N // 128, M // 128, 1), block=(128, 1, 1),
                              args=[f"tmap(A,bf16,[{K},{M}],{box})", f"tmap(B,bf16,[{K},{N}],{box})",
                                    f"bf16[{M * N}]", str(M), str(N), str(K)],
                              smem_dynamic=stages * 32768 + 1024 + 128, defines=(f"STAGES={stages}", *defines))


def _per_warp(k: ir.Kernel, w: int) -> int:
    return (instructions_per_warp(k.prologue, w) + k.loop.trips * instructions_per_warp(k.loop.body, w)
            + instructions_per_warp(k.epilogue, w))


@needs_cuda
def test_hgemm_tma_wgmma_from_source_matches_the_sass_paths():
    """Every warp executes the compiled code's instructions (the hand IR's counts, taken from the SASS by address
    range), the TMA boxes land on the tiles, and the mbarrier's phase completes with thread 0's arrive and the two
    copies."""
    k = _twin(512)
    hand = registry.build_kernel("hgemm_tma_wgmma", (512, 512, 512))
    for w in range(4):
        assert _per_warp(k, w) == _per_warp(hand, w)
    body = k.loop.body
    tma = [o for o in body if isinstance(o, ir.Mem) and o.kind == "tma"]
    assert [o.tensor for o in tma] == ["A", "B"] and all(o.warps == (0,) for o in tma)
    assert k.mbarriers == {tma[0].arrive: 3}
    assert any(isinstance(o, ir.MbarWait) for o in body) and any(isinstance(o, ir.Arrive) for o in body)
    assert sum(o.count // o.units for o in body if isinstance(o, ir.Compute) and o.pipe == "wgmma") == 8
    wait = next(o for o in body if isinstance(o, ir.MbarWait))
    assert [wait.seq(it, 0) for it in range(4)] == [0, 1, 2, 3]
    # the A box of CTA (bx=2, by=3) at k-tile 5: rows 384.., columns 320.., 128 rows of 128 B
    a = np.asarray(tma[0].addr(ir.AddrCtx(np.arange(32).reshape(-1, 1, 1), np.arange(4).reshape(1, -1, 1),
                                          np.arange(32).reshape(1, 1, -1), np.zeros((1, 4, 32), int), (128, 1, 1),
                                          2, 3, 0, 5, 0)))
    chunks = a[:, 0, :].reshape(-1)
    rows, cols = np.divmod(chunks // 2, 512)
    assert chunks[0] == (384 * 512 + 320) * 2 and len(np.unique(chunks)) == 1024
    assert rows.min() == 384 and rows.max() == 511 and cols.min() == 320 and cols.max() == 376  # chunk starts
    assert (a[:, 1:, :] < 0).all()  # only the issuing warp


@needs_cuda
def test_tensor_maps_in_global_memory():
    """-DTMAP_GLOBAL: the maps are passed as pointers (a tensor of 128 bytes each); thread 0 alone still issues the
    two boxes of a k-tile (its test, a VOTEU.ALL of tid != 0, is control, not data)."""
    k = _twin(256, defines=("TMAP_GLOBAL",))
    tma = [o for o in k.loop.body if isinstance(o, ir.Mem) and o.kind == "tma"]
    assert [(o.tensor, o.warps) for o in tma] == [("A", (0,)), ("B", (0,))]
    assert k.mbarriers == {tma[0].arrive: 3}
    assert {"arg0", "arg1"} <= {t.name for t in k.tensors}  # the maps' own 128 bytes


WAITER = """
#include "{common}"
extern "C" __global__ void wait_first(int* out, int n) {{
  __shared__ alignas(8) unsigned long long bar;
  const unsigned b = smem_u32(&bar);
  if (threadIdx.x == 0) mbar_init(b, {count});
  __syncthreads();
  if (threadIdx.x >= 32) {{
    mbar_wait(b, 0);
    out[threadIdx.x] = n;
  }} else {{
    mbar_arrive(b);
  }}
}}
"""


@needs_cuda
def test_try_wait_loop_is_a_wait_on_the_barrier(tmp_path):
    """Warp 1 reaches its try_wait before warp 0 arrives: it waits there (not spinning on the clock) and passes at
    its first try once the 32 per-thread arrivals are in; the IR counts one arrival per arriving warp."""
    src = tmp_path / "wait_first.cu"
    src.write_text(WAITER.format(common=COMMON, count=32))
    k = kernel_from_source(src, "wait_first", grid=1, block=64, args=["i32[64]", "7"])
    ops = k.all_ops()
    waits = [o for o in ops if isinstance(o, ir.MbarWait)]
    arrives = [o for o in ops if isinstance(o, ir.Arrive)]
    assert len(waits) == 1 and waits[0].warps == (1,) and waits[0].seq(0, 0) == 0
    assert len(arrives) == 1 and arrives[0].warps == (0,)
    assert k.mbarriers == {waits[0].bar: 1}


@needs_cuda
def test_a_phase_that_never_completes_is_one_line(tmp_path):
    src = tmp_path / "wait_first.cu"
    src.write_text(WAITER.format(common=COMMON, count=33))  # 32 threads arrive on a barrier of 33
    with pytest.raises(EmulationError, match="never completes the phase"):
        kernel_from_source(src, "wait_first", grid=1, block=64, args=["i32[64]", "7"])


def _hgemm_ws(M: int, N: int, K: int, BN: int = 256, stages: int = 3) -> ir.Kernel:
    """validate/kernels/hgemm_ws.cu from its source, launched as validate/run_tc_sm90.py launches it."""
    return kernel_from_source(REPO / "validate" / "kernels" / "hgemm_ws.cu", "hgemm_ws", grid=(N // BN, M // 128, 1),
                              block=(384, 1, 1),
                              args=[f"tmap(A,bf16,[{K},{M}],[64,128],swizzle=128)",
                                    f"tmap(B,bf16,[{K},{N}],[64,{BN}],swizzle=128)", f"bf16[{M * N}]", str(M),
                                    str(N), str(K)],
                              smem_dynamic=stages * (128 + BN) * 128 + 1024 + 128,
                              defines=(f"STAGES={stages}", f"BN={BN}"))


def _hgemm_ws_cluster(M: int, N: int, K: int, BN: int = 256, stages: int = 3, multicast: bool = True) -> ir.Kernel:
    """validate/kernels/hgemm_ws_cluster.cu from its source (2x1 clusters along M), as run_tc_sm90.py launches it."""
    rows = BN // 2 if multicast else BN
    return kernel_from_source(REPO / "validate" / "kernels" / "hgemm_ws_cluster.cu", "hgemm_ws_cluster",
                              grid=(M // 128, N // BN, 1), block=(384, 1, 1),
                              args=[f"tmap(A,bf16,[{K},{M}],[64,128],swizzle=128)",
                                    f"tmap(B,bf16,[{K},{N}],[64,{rows}],swizzle=128)", f"bf16[{M * N}]", str(M),
                                    str(N), str(K)],
                              smem_dynamic=stages * (128 + BN) * 128 + 1024 + 128,
                              defines=(f"STAGES={stages}", f"BN={BN}") + (() if multicast else ("MULTICAST=0",)),
                              compiler="nvrtc")


@needs_cuda
def test_a_clusters_ctas_are_emulated_together_multicasting_and_arriving_on_each_other():
    """hgemm_ws_cluster (__cluster_dims__(2,1,1)): each CTA loads its half of the B tile and multicasts it into both
    CTAs' shared memory, completing bytes on both CTAs' full barriers; each consumer warpgroup arrives on its own
    CTA's empty barrier and on its partner's (mapa). Emulated one CTA at a time, no phase would complete. The
    cluster's dims come from the cubin (EIATTR_CTA_PER_CLUSTER); the IR books each CTA's own half (the partner's,
    symmetric, lands with it) and takes a partner's arrival as one on its own barrier: full completes with the
    producer's arrive and its two copies, empty with four arrivals. A CTA's B rows follow its rank, not its
    blockIdx.x: interior CTAs take a reference of their own rank, strides a cluster apart (a stride between CTAs 1
    and 2 gave every interior CTA rank 1's half)."""
    M, N, K = 1024, 256, 256
    k = _hgemm_ws_cluster(M, N, K)
    assert k.cluster == 2 and sorted(k.mbarriers.values()) == [3, 4]
    b = next(o for o in k.all_ops() if isinstance(o, ir.Mem) and o.kind == "tma" and o.tensor == "B")
    first = {x: eval_addresses(k, b, (x, 0, 0), 0, 0, 32) for x in range(M // 128)}
    rows = {x: int(a[a >= 0].min()) // (K * 2) for x, a in first.items()}  # the box's first row of B
    assert rows == {x: 128 * (x % 2) for x in range(M // 128)}
    sim = report(simulate(k, load_config()))
    assert sim["gpu__time_duration.sum"] > 0


@needs_cuda
def test_a_kernel_without_cluster_dims_takes_the_launchs_cluster(tmp_path):
    """A kernel launched in clusters by cudaLaunchKernelEx (no __cluster_dims__ in its cubin) takes the launch's
    cluster (--cluster, ``cluster=``: the driver's constants %is_explicit_cluster, %cluster_nctaid, ... that its SASS
    reads) and predicts as the same kernel with __cluster_dims__ does; without it, its first arrival on a partner is
    one line that says so; a cluster other than the kernel's own is refused. Its __syncwarp's divergence check
    (BRA.DIV) finds the warp converged."""
    from gpusim.frontend import FrontendError

    src = (REPO / "validate" / "kernels" / "hgemm_ws_cluster.cu").read_text()
    plain = tmp_path / "hgemm_ws_cluster.cu"
    plain.write_text(src.replace("__cluster_dims__(2, 1, 1) ", "").replace('#include "hopper_common.cuh"',
                                                                            f'#include "{COMMON}"'))
    M, N, K = 512, 256, 128
    kw = {"grid": (M // 128, N // 256, 1), "block": (384, 1, 1),
          "args": [f"tmap(A,bf16,[{K},{M}],[64,128],swizzle=128)", f"tmap(B,bf16,[{K},{N}],[64,128],swizzle=128)",
                   f"bf16[{M * N}]", str(M), str(N), str(K)],
          "smem_dynamic": 3 * (128 + 256) * 128 + 1024 + 128, "defines": ("STAGES=3", "BN=256"), "compiler": "nvrtc"}
    with pytest.raises(EmulationError, match="the launch has no cluster: give the launch's cluster with --cluster"):
        kernel_from_source(plain, "hgemm_ws_cluster", **kw)
    launched = kernel_from_source(plain, "hgemm_ws_cluster", cluster="2", **kw)
    declared = kernel_from_source(REPO / "validate" / "kernels" / "hgemm_ws_cluster.cu", "hgemm_ws_cluster", **kw)
    cfg = load_config()
    assert launched.cluster == declared.cluster == 2
    t = "gpu__time_duration.sum"
    # the same kernel but for the few instructions its SASS spends finding out at run time whether it is in a cluster
    assert report(simulate(launched, cfg))[t] == pytest.approx(report(simulate(declared, cfg))[t], rel=0.01)
    with pytest.raises(FrontendError, match=r"--cluster 4,1,1: hgemm_ws_cluster declares __cluster_dims__\(2, 1, 1\)"):
        kernel_from_source(REPO / "validate" / "kernels" / "hgemm_ws_cluster.cu", "hgemm_ws_cluster", cluster="4",
                           **kw)


DSMEM_HISTOGRAM = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void __cluster_dims__(2, 1, 1)
cluster_hist(int* bins, int nbins, int bins_per_block, const int* __restrict__ input, int n) {
  extern __shared__ int smem[];
  cg::cluster_group cluster = cg::this_cluster();
  for (int i = threadIdx.x; i < bins_per_block; i += blockDim.x) smem[i] = 0;
  cluster.sync();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    int bin = min(max(input[i], 0), nbins - 1);
    int* dst = cluster.map_shared_rank(smem, bin / bins_per_block);
    atomicAdd(dst + bin % bins_per_block, 1);
  }
  cluster.sync();
  for (int i = threadIdx.x; i < bins_per_block; i += blockDim.x)
    atomicAdd(&bins[cluster.block_rank() * bins_per_block + i], smem[i]);
}
"""


@needs_cuda
def test_distributed_shared_memory_is_refused_in_one_line(tmp_path):
    """The CUDA guide's cluster histogram: each thread adds to the bin in whichever CTA of the cluster owns it, through
    cluster.map_shared_rank's generic pointer (a generic ATOM into the partner's shared window). Not emulated: one
    line naming distributed shared memory (it was taken for a global address outside every tensor)."""
    src = tmp_path / "cluster_hist.cu"
    src.write_text(DSMEM_HISTOGRAM)
    with pytest.raises(EmulationError, match="another CTA's shared memory of the cluster"):
        kernel_from_source(src, "cluster_hist", grid=8, block=128, smem_dynamic=512,
                           args=["i32[256]:zeros", "256", "128", "i32[4096]:randint(0,256)", "4096"])


def test_a_cluster_not_along_x_is_refused_in_one_line():
    """The IR's clusters run along x (Kernel.cluster): a kernel whose __cluster_dims__ spans y is refused, naming it;
    a grid that does not hold whole clusters is refused too."""
    from types import SimpleNamespace

    from gpusim.frontend import FrontendError, _cluster

    with pytest.raises(FrontendError, match="1x2x1 CTAs: gpusim takes clusters along x only"):
        _cluster(SimpleNamespace(name="k", cluster=(1, 2, 1)), (4, 4, 1))
    with pytest.raises(FrontendError, match="not a multiple of the kernel's cluster of 2"):
        _cluster(SimpleNamespace(name="k", cluster=(2, 1, 1)), (3, 4, 1))
    assert _cluster(SimpleNamespace(name="k", cluster=(2, 1, 1)), (4, 4, 1)) == (2, 1, 1)


@needs_cuda
def test_warp_specialized_roles_are_lowered_apart_and_joined():
    """hgemm_ws: a producer thread (TMA into a ring of 3 stages) and two consumer warpgroups (wgmma), each running a
    loop of its own, synchronised by full and empty mbarriers: each role lowered on its own, joined into one
    program; a full phase completes with the producer's arrive and its two copies, an empty one with the two consumer
    warpgroups' arrivals."""
    K = 256
    k = _hgemm_ws(128, 256, K)
    assert sorted(k.mbarriers.values()) == [2, 3]
    ops = k.all_ops()
    tma = [o for o in ops if isinstance(o, ir.Mem) and o.kind == "tma"]
    assert len(tma) == 2 * K // 64 and all(o.warps == (0,) for o in tma)  # the producer's, every k-tile
    mma = [o for o in ops if isinstance(o, ir.Compute) and o.pipe == "wgmma"]
    assert mma and all(o.warps == tuple(range(4, 12)) for o in mma)
    assert "warp-specialized" in k.notes


@needs_cuda
def test_a_producer_whose_first_iterations_skip_the_wait_keeps_its_loop():
    """hgemm_ws at K = 1024 (16 k-tiles, 3 stages): the producer's first 3 iterations fill free slots without waiting
    on the empty barrier. Its loop is kept, the left-out wait's phase following the other iterations (it - 3: before
    the first phase there, so it returns at once), and joined with the consumers' loop of the same trips; the
    elect-one loop around each TMA copy is not taken for the producer's loop."""
    K = 1024
    k = _hgemm_ws(128, 256, K)
    assert k.loop.trips == K // 64
    body = k.loop.body
    tma = [o for o in body if isinstance(o, ir.Mem) and o.kind == "tma"]
    assert len(tma) == 2 and all(o.warps == (0,) for o in tma)
    assert not [o for o in k.prologue + k.epilogue if isinstance(o, ir.Mem) and o.kind == "tma"]
    wait = [o for o in body if isinstance(o, ir.MbarWait) and o.warps == (0,)]
    assert len(wait) == 1 and [wait[0].seq(it, 0) for it in (0, 2, 3, 15)] == [-3, -1, 0, 12]
    from gpusim.frontend.trace import AFFINE

    assert all(AFFINE in slots for slots in tma[0].addr.per_cta)  # 16 iterations' boxes kept as a model
    a10, a11 = (eval_addresses(k, tma[0], (0, 0, 0), it, 0, 32) for it in (10, 11))
    assert np.array_equal(np.sort(a11[a11 >= 0]) - np.sort(a10[a10 >= 0]), np.full((a10 >= 0).sum(), 128))


@needs_cuda
def test_a_producer_loading_the_consumers_last_turn_keeps_their_trips():
    """fa3 at 3,072 keys (24 KV blocks): the consumers' loop runs 23 turns and the last comes after it; the producer
    loads 24 blocks. It keeps 23 in the loop and writes the 24th after it (written out whole, its waits on phases
    the consumers' fast-forwarded iterations settle were never reached: the engine deadlocked)."""

    B, H, N, d, br, bc, stages = 1, 1, 3072, 128, 128, 128, 2
    smem = 1024 + br * d * 2 + 2 * stages * bc * d * 2 + 8 * (1 + 4 * stages)
    maps = [f"tmap({t},bf16,[{d},{N},{B * H}],[64,{r},1],swizzle=128)" for t, r in (("Q", br), ("K", bc), ("V", bc))]
    cfg = load_config()
    k = kernel_from_source(REPO / "validate" / "kernels" / "fa3.cu", "fa3", grid=(N // br, H, B), block=(384, 1, 1),
                           args=[*maps, f"bf16[{B * H * N * d}]", str(N), "0.1275"], smem_dynamic=smem,
                           defines=(f"HEAD_DIM={d}", f"STAGES={stages}"), config=cfg)
    assert k.loop.trips == N // bc - 1
    producer = [o for o in k.loop.body if isinstance(o, ir.Mem) and o.kind == "tma"]
    assert len(producer) == 4 and all(o.warps == (0,) for o in producer)  # K and V, two 64-column panels each
    assert len([o for o in k.epilogue if isinstance(o, ir.Mem) and o.kind == "tma"]) == 4
    assert simulate(k, cfg).result.cycles > 0


@needs_cuda
def test_a_roles_loop_inside_a_loop_over_tiles_is_refused_in_one_line():
    """hgemm_persistent with one CTA for its two tiles (256 x 256, K = 1024: 16 k-tiles each): every role runs its
    k-loop inside a loop over the tiles. Lowered as one loop, the k-loop's 32 turns over both tiles came out as a
    kernel that ran (wrong: one tile's work per CTA, its trips counted across tiles); it is refused, naming both
    loops."""
    M, N, K, BN = 256, 256, 1024, 256
    with pytest.raises(EmulationError, match=r"runs inside the loop at instructions \d+-\d+, of which a warp runs 2 "
                                             r"turns .*two nested loops in a role are not supported yet"):
        kernel_from_source(REPO / "validate" / "kernels" / "hgemm_persistent.cu", "hgemm_persistent", grid=(1, 1, 1),
                           block=(384, 1, 1),
                           args=[f"tmap(A,bf16,[{K},{M}],[64,128],swizzle=128)",
                                 f"tmap(B,bf16,[{K},{N}],[64,{BN}],swizzle=128)", f"bf16[{M * N}]", str(M), str(N),
                                 str(K), "i32[1]"],
                           smem_dynamic=3 * (128 + BN) * 128 + 1024 + 128, defines=("STAGES=3", f"BN={BN}"))


@needs_cuda
def test_fa3s_turns_are_named_barriers_of_their_own_and_a_handover_only_arrives():
    """FA3's ping-pong: each consumer warpgroup syncs on its own turn's barrier, named by a register (BAR.SYNC R2,
    0x100: 1 for one warpgroup, 2 for the other), and hands the turn over with BAR.ARV. Each is an IR barrier of its
    id among the warps that name it, the handover arriving only (once every register-named barrier was barrier 0 and
    every arrival a sync: the front-end's FA3 ran 28% slower than the H100, the hand IR 1% faster)."""
    B, H, N, d, br, bc, stages = 1, 1, 1024, 128, 128, 128, 2
    smem = 1024 + br * d * 2 + 2 * stages * bc * d * 2 + 8 * (1 + 4 * stages)
    maps = [f"tmap({t},bf16,[{d},{N},{B * H}],[64,{r},1],swizzle=128)" for t, r in (("Q", br), ("K", bc), ("V", bc))]
    k = kernel_from_source(REPO / "validate" / "kernels" / "fa3.cu", "fa3", grid=(N // br, H, B), block=(384, 1, 1),
                           args=[*maps, f"bf16[{B * H * N * d}]", str(N), "0.1275"], smem_dynamic=smem,
                           defines=(f"HEAD_DIM={d}", f"STAGES={stages}"))
    wg1, wg2 = tuple(range(4, 8)), tuple(range(8, 12))
    named = {(o.name, o.warps, o.arrive, o.members) for o in k.loop.body if isinstance(o, ir.Barrier)}
    assert named == {("bar1", wg1, False, 8), ("bar2", wg2, False, 8), ("bar2", wg1, True, 8),
                     ("bar1", wg2, True, 8)}


def _fa3(B: int, H: int, N: int, d: int, bc: int, causal: int, cfg=None, stages: int = 2) -> ir.Kernel:
    """validate/kernels/fa3.cu for a launch, as validate/launches.py describes it."""
    br = 128
    smem = 1024 + br * d * 2 + 2 * stages * bc * d * 2 + 8 * (1 + 4 * stages)
    maps = [f"tmap({t},bf16,[{d},{N},{B * H}],[64,{r},1],swizzle=128)" for t, r in (("Q", br), ("K", bc), ("V", bc))]
    return kernel_from_source(REPO / "validate" / "kernels" / "fa3.cu", "fa3", grid=(N // br, H, B), block=(384, 1, 1),
                              args=[*maps, f"bf16[{B * H * N * d}]", str(N), "0.1275"], smem_dynamic=smem,
                              defines=(f"HEAD_DIM={d}", f"STAGES={stages}", f"BC={bc}", f"CAUSAL={causal}"),
                              config=cfg)


@needs_cuda
def test_causal_fa3s_ctas_run_their_own_trips_in_every_role():
    """Causal FA3: query block q runs q + 1 key blocks, so its consumers' loop runs q turns (the first query block
    none: its warps go from the first turn to the last, past the loop, while the others are still in it) and its
    producer loads q + 1 blocks. Each warp's steps are placed by where the warp is; the producer's first block goes
    before the loop (its phases count from the start, the same in every CTA), its second iteration's left-out wait
    padded; both roles' loops run each CTA's trips, the producer's boxes of every CTA modelled per lane (compacted);
    the consumers' last turn waits for the phase of the block the producer's loop loaded last, which follows the
    CTA's trips (the epilogue's iteration). Once refused: its iterations took different paths per CTA."""
    from gpusim.frontend.trace import AFFINE

    cfg = load_config()
    k = _fa3(1, 1, 1024, 128, 128, 1, cfg)
    assert [k.trips_of(i) for i in range(8)] == list(range(8))
    tma = [o for o in k.loop.body if isinstance(o, ir.Mem) and o.kind == "tma"]
    assert [o.tensor for o in tma] == ["K", "K", "V", "V"] and all(o.warps == (0,) for o in tma)
    assert [o.tensor for o in k.prologue if isinstance(o, ir.Mem) and o.kind == "tma"] == ["Q", "Q", "K", "K", "V",
                                                                                           "V"]
    last = tma[0].addr.per_cta[tma[0].addr.index[(7, 0, 0)]]
    assert AFFINE in last and last[AFFINE][2] == 6  # 7 iterations: slot 0 and a model of 1..6
    (wait,) = [o for o in k.epilogue if isinstance(o, ir.MbarWait)]
    assert [wait.seq(t, 0) for t in (0, 3, 7)] == [0, 3, 7]  # the CTA's trips: the V block its producer loaded last
    assert simulate(k, cfg).result.cycles > 0


@needs_cuda
def test_causal_fa3s_warpgroups_mask_their_own_number_of_blocks():
    """Key blocks of 64 against the consumer warpgroups' 64 query rows each: in every CTA the first warpgroup masks
    two blocks, the second one. The loop keeps every turn on the common path and the compute each warp's masked
    turns add follows it: one block's mask (a select per score, 32 per thread) more for the first warpgroup.
    Without tails per warp the loop was refused."""
    k = _fa3(1, 1, 1024, 64, 64, 1)

    def fp32(w):
        return sum(o.count for o in k.epilogue if isinstance(o, ir.Compute) and o.pipe == "fp32"
                   and (o.warps is None or w in o.warps))
    assert [k.trips_of(i) for i in range(8)] == [2 * i + 1 for i in range(8)]
    assert fp32(4) - fp32(8) == 64 // 2


@needs_cuda
def test_causal_fa3s_warpgroups_as_roles_of_their_own():
    """Key blocks of 176: the base CTA's consumer warpgroups mask different turns, so they are two roles, each with
    only its own warps' barrier ids: each syncs on its turn's barrier and hands over with an arrival, and the other
    warpgroup's guarded handover (``if (w == 1) bar.arrive 1``, off in every warp of this one) is issued, not an
    arrival (it was: a barrier of the wrong warps, and the engine deadlocked). The trips are not affine in the query
    block; between the emulated ones they follow blockIdx.x alone (block 10 of any head runs 7, interpolated along
    x; in launch order, between the emulated CTAs around it, 8)."""
    k = _fa3(1, 4, 2048, 64, 176, 1)
    wg1, wg2 = tuple(range(4, 8)), tuple(range(8, 12))
    assert "4 roles" in k.notes
    named = {(o.name, o.warps, o.arrive, o.members) for o in k.loop.body if isinstance(o, ir.Barrier)}
    assert named == {("bar1", wg1, False, 8), ("bar2", wg2, False, 8), ("bar2", wg1, True, 8),
                     ("bar1", wg2, True, 8)}
    handover = [(o.name, o.warps) for o in k.prologue if isinstance(o, ir.Barrier) and o.arrive]
    assert sorted(handover) == [("bar1", wg2), ("bar1", wg2), ("bar2", wg1)]
    assert k.trips_of(10 + 16 * 3) == 7


def _from_text(tmp_path, text: str, name: str, grid: int, block: int, cfg, args: list[str]) -> ir.Kernel:
    """A kernel written out to ``name``.cu under ``tmp_path`` and taken from its source."""
    src = tmp_path / f"{name}.cu"
    src.write_text(text)
    return kernel_from_source(src, name, grid=grid, block=block, config=cfg, args=args)


TMA_STORE = r"""
#include <cuda.h>
extern "C" __global__ void tile_out(const __grid_constant__ CUtensorMap tm, const float* in) {
  __shared__ alignas(128) float tile[32 * 32];
  for (int i = threadIdx.x; i < 1024; i += blockDim.x) tile[i] = in[blockIdx.x * 1024 + i];
  asm volatile("fence.proxy.async.shared::cta;");
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(tile));
    int x = 0, y = blockIdx.x * 32;
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
                 :: "l"(&tm), "r"(s), "r"(x), "r"(y) : "memory");
    asm volatile("cp.async.bulk.commit_group;");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  }
}
"""


@needs_cuda
def test_a_tma_store_writes_its_box_through_the_copy_engine_and_its_group_is_waited_for(tmp_path):
    """UTMASTG: thread 0 stores each CTA's 32 x 32 floats with one instruction; the box's 16-byte chunks are its
    rows of the tensor, its bytes reach the L2's write path without the LSU (no global store sectors there), and
    UTMACMDFLUSH / DEPBAR.LE SB0 are the commit and the wait of its bulk group."""
    cfg, ctas = load_config(), 64
    k = _from_text(tmp_path, TMA_STORE, "tile_out", ctas, 256, cfg,
                   [f"tm=tmap(out,f32,[32,{32 * ctas}],[32,32])", f"in=f32[{1024 * ctas}]:normal"])
    ops = list(k.epilogue)
    st = [o for o in ops if isinstance(o, ir.Mem) and o.kind == "tma_st"]
    assert [(o.tensor, o.warps, o.group) for o in st] == [("out", (0,), "cp.async")]
    i = ops.index(st[0])
    assert isinstance(ops[i + 1], ir.Commit) and isinstance(ops[i + 2], ir.WaitGroup)
    assert ops[i + 2].pending == 0
    a = eval_addresses(k, st[0], (3, 0, 0), 0, 0, 32)
    chunks = np.sort(a[a >= 0])
    assert np.array_equal(chunks, 3 * 4096 + np.arange(256) * 16)  # CTA 3's rows 96..127, whole, by warp 0 alone
    m = report(simulate(k, cfg))
    assert m["gpusim__tma_store_bytes"] == ctas * 4096
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] == 0
    assert m["lts__t_sectors_op_write.sum"] == round(ctas * 4096 / 32 * cfg.l2.store_lookups_per_sector)
    assert m["smsp__inst_executed.sum"] > 0


BULK = r"""
extern "C" __global__ void bulk(const float* in, float* out) {
  __shared__ alignas(128) float tile[1024];
  __shared__ alignas(8) unsigned long long bar;
  unsigned b = static_cast<unsigned>(__cvta_generic_to_shared(&bar));
  unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(tile));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
    asm volatile("fence.mbarrier_init.release.cluster;");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(4096));
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 :: "r"(s), "l"(in + blockIdx.x * 1024), "r"(4096), "r"(b) : "memory");
  }
  asm volatile("{ .reg .pred p; W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0; @!p bra W; }" :: "r"(b));
  tile[threadIdx.x] *= 2.0f;
  asm volatile("fence.proxy.async.shared::cta;");
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                 :: "l"(out + blockIdx.x * 1024), "r"(s), "r"(4096) : "memory");
    asm volatile("cp.async.bulk.commit_group;");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  }
}
"""


@needs_cuda
def test_bulk_copies_load_on_an_mbarrier_and_store_in_a_bulk_group(tmp_path):
    """UBLKCP (cp.async.bulk, no tensor map): thread 0 copies each CTA's 4 KiB into shared memory, completing the
    mbarrier its warps wait on, and stores it back: a `tma` operation arriving on that mbarrier and a `tma_st` one,
    each its 256 contiguous 16-byte chunks of the CTA's slice."""
    cfg, ctas = load_config(), 64
    k = _from_text(tmp_path, BULK, "bulk", ctas, 1024, cfg,
                   [f"in=f32[{1024 * ctas}]:normal", f"out=f32[{1024 * ctas}]"])
    mem = [o for o in k.all_ops() if isinstance(o, ir.Mem) and o.kind in ir.TMA_KINDS]
    assert [(o.kind, o.tensor, o.warps) for o in mem] == [("tma", "in", (0,)), ("tma_st", "out", (0,))]
    assert mem[0].arrive in k.mbarriers and not mem[1].arrive and mem[1].group == "cp.async"
    for o in mem:
        a = eval_addresses(k, o, (5, 0, 0), 0, 0, 32)
        assert np.array_equal(np.sort(a[a >= 0]), 5 * 4096 + np.arange(256) * 16)
    m = report(simulate(k, cfg))
    assert m["gpusim__tma_load_bytes"] == m["gpusim__tma_store_bytes"] == ctas * 4096
    assert m["gpusim__tma_copies"] == ctas


def test_a_full_loops_offsets_that_step_alike_are_kept_as_a_model():
    """compact_full: a loop emulated in full keeps every iteration's offsets of every warp (a producer's boxes: 357
    MB at hgemm_ws 4096^3); where they step alike from iteration 1 on, iterations 1 and 2 and the model are kept, and
    the model answers for the others. Offsets that do not step alike are kept whole."""
    from gpusim.frontend.trace import AFFINE, compact_full

    off = np.full((2, 3, 32), -1, dtype=np.int64)
    off[:, 0, :] = np.arange(64).reshape(2, 32) * 16  # warp 0 alone issues it
    step = np.where(off >= 0, 4096, 0)
    slots = {0: off.copy(), **{k: np.where(off >= 0, off + (k - 1) * step, -1) for k in range(1, 65)}}
    kept = compact_full(slots)
    assert set(kept) == {0, 1, 2, AFFINE} and kept[AFFINE][2] == 64
    a, st, _ = kept[AFFINE]
    for k in (3, 40, 64):
        assert np.array_equal(np.where(a >= 0, a + (k - 1) * st, a), slots[k])
    slots[33] = slots[33] + 16  # one iteration off the stride
    assert compact_full(slots) is slots
