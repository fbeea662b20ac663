"""Behaviour users rely on, each expected value derived from the mechanism (the kernel's thread mapping and
the hardware rules), not copied from the simulator's current output.

Shapes are M,N,K with row-major A (MxK), B (KxN) and C (MxN) of 4-byte floats. One warp-wide load is one
request; a request touches one 32-byte sector per distinct 32-byte block its 32 lanes address.
"""

from __future__ import annotations

import pytest

M = N = K = 1024
SHAPE = (M, N, K)
F32 = 4

SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
TIME = "gpu__time_duration.sum"
OCC = "sm__warps_active.avg.pct_of_peak_sustained_active"


def sgemm_kernels() -> list[str]:
    import kernels_ir  # noqa: F401
    from gpusim.ir import REGISTRY

    return [n for n, d in REGISTRY.items() if d.family == "sgemm"]


def test_naive_global_load_requests_are_exact(predicted):
    # One thread per C element; every thread loads A[row, k] and B[k, col] for each k (2*M*N*K loads) and
    # C[row, col] once in the epilogue (M*N loads); 32 threads per warp request.
    m = predicted("sgemm_naive", SHAPE)
    assert m[REQUESTS] == 2 * M * N * K // 32 + M * N // 32


def test_naive_loads_are_uncoalesced_for_a_and_broadcast_for_b(predicted):
    # threadIdx.x walks M: the 32 lanes read A at a row stride of K*4 bytes -> 32 sectors per request;
    # they share one column of B -> 1 sector. The epilogue's C load is strided like A (32 sectors).
    m = predicted("sgemm_naive", SHAPE)
    warps_k = M * N * K // 32
    assert m[SECTORS] == 32 * warps_k + 1 * warps_k + 32 * (M * N // 32)
    assert m[SECTORS] / m[REQUESTS] == pytest.approx((32 + 1) / 2, rel=0.01)


def test_coalesced_loads_broadcast_a_and_read_b_in_four_sectors(predicted):
    # Consecutive threads take consecutive columns: a warp shares one element of A (1 sector) and reads 32
    # consecutive floats = 128 bytes of B (4 sectors); the epilogue's C load is also 4 sectors.
    m = predicted("sgemm_coalesced", SHAPE)
    warps_k = M * N * K // 32
    assert m[REQUESTS] == 2 * warps_k + M * N // 32
    assert m[SECTORS] == 1 * warps_k + 4 * warps_k + 4 * (M * N // 32)
    assert m[SECTORS] / m[REQUESTS] == pytest.approx((1 + 4) / 2, rel=0.01)


def test_smem_blocking_has_no_bank_conflicts(predicted):
    # Bs[k][tx] is 32 consecutive words (32 banks): one wavefront per LDS.32, 32 per warp and K tile. As[ty][k]
    # is the same for the whole warp, and the compiled twin reads its 32 words as 8 LDS.128 broadcasts: a
    # 128-bit access whose lanes come in uniform pairs is served in two half-warp phases, 2 wavefronts each
    # (LDS.128 broadcast measured at 2 on the H100). Per warp and K tile: 8 * 2 + 32 = 48, none a conflict.
    m = predicted("sgemm_smem_blocking", SHAPE)
    assert m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == 0
    assert m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"] == 0
    warps = M * N // 32
    assert m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] == warps * (K // 32) * (8 * 2 + 32)


def test_ladder_order_at_1024(predicted):
    # Each rung removes a bottleneck of the previous one: coalescing cuts sectors per request from ~16.5 to
    # ~2.5, shared-memory blocking reuses each loaded element 32 times, 1D blocktiling computes 8 results
    # per thread and cuts shared loads per FMA.
    t = {k: predicted(k, SHAPE)[TIME] for k in
         ("sgemm_naive", "sgemm_coalesced", "sgemm_smem_blocking", "sgemm_1d_blocktiling")}
    assert t["sgemm_1d_blocktiling"] < t["sgemm_smem_blocking"] < t["sgemm_coalesced"] < t["sgemm_naive"], t


def test_more_registers_lower_occupancy(predicted):
    # sgemm_1d_blocktiling: 512 threads = 16 warps. 40 regs -> 1280 per warp -> 20480 per CTA -> 3 CTAs
    # (48 of 64 warps); 96 regs -> 3072 per warp -> 49152 per CTA -> 1 CTA (16 of 64 warps).
    base = predicted("sgemm_1d_blocktiling", SHAPE, regs_per_thread=40)
    more = predicted("sgemm_1d_blocktiling", SHAPE, regs_per_thread=96)
    assert base["launch__occupancy_limit_registers"] == 3
    assert more["launch__occupancy_limit_registers"] == 1
    assert more[OCC] < base[OCC]
    assert more[OCC] <= 100.0 * 16 / 64 + 1e-9
    assert base[OCC] <= 100.0 * 48 / 64 + 1e-9


# gpusim/chip.py _footprints(): per_chunk = max(trips // chunks, 1) drops the last trips % 16 loop iterations
# from the L2 footprint, so DRAM reads miss part of A and B when the K-tile count is not a multiple of 16
# (sgemm_memcpy_async runs K/BK - 1 = 63 loop trips at K=1024: 48/63 of its loop loads reach DRAM).


@pytest.mark.parametrize("kernel", sgemm_kernels())
def test_dram_traffic_is_at_least_compulsory(predicted, kernel):
    # Every kernel reads all of A and B and (beta*C) all of C at least once from DRAM. C (4 MB) is still
    # dirty in the 50 MB L2 when the kernel ends, so nothing is written back to DRAM yet: the H100 measures
    # dram__bytes_write.sum = 0 for every ladder kernel at 512^3 (validate/measurements/h100).
    m = predicted(kernel, SHAPE)
    a = b = c = M * K * F32
    assert m["dram__bytes_read.sum"] >= a + b
    assert m["dram__bytes_read.sum"] >= a + b + c
    assert m["dram__bytes_write.sum"] == 0


def test_c_larger_than_l2_is_written_back():
    # At 4096^3, C is 64 MiB > 50 MB of L2: at least C - L2 must reach DRAM, and never more than C.
    from gpusim.api import predict

    m, sim = predict("sgemm_vectorized", (4096, 4096, 4096))
    c = 4096 * 4096 * F32
    assert c - sim.config.l2.size_bytes <= m["dram__bytes_write.sum"] <= c
def test_dram_reads_cover_every_k_tile(predicted):
    # 544 = 17 tiles of 32: the 17th tile's columns of A and rows of B must be read from DRAM too.
    k = 17 * 32
    m = predicted("sgemm_smem_blocking", (M, N, k))
    assert m["dram__bytes_read.sum"] >= (M * k + k * N + M * N) * F32
    assert m["dram__bytes_read.sum"] > predicted("sgemm_smem_blocking", (M, N, 16 * 32))["dram__bytes_read.sum"]


@pytest.mark.parametrize("kernel", ["fa2", "fa3"])
def test_causal_attention_reads_every_kv_block_from_dram(predicted, kernel):
    # Causal: query block i reads KV blocks 0..i, so the last query block of every (batch, head) reads all of K
    # and V. Q, K and V (3 x 4*16*4096*128 bf16 = 201 MB) are four times the 50 MB L2: each byte comes from DRAM at
    # least once, however few CTAs want the late KV blocks. (The H100 measures 201.4 MB,
    # validate/measurements/h100/fa3-2026-11-22.json.)
    shape = (4, 16, 4096, 128)
    qkv = 3 * 4 * 16 * 4096 * 128 * 2
    causal = predicted(kernel, shape, causal="1")["dram__bytes_read.sum"]
    assert qkv <= causal <= predicted(kernel, shape)["dram__bytes_read.sum"] * 1.001


def test_l2_hit_rate_of_a_copy_counts_store_lookups_as_hits(predicted, h100):
    # A copy larger than the L2 reads every sector once from DRAM (each miss looked up miss_lookups_per_sector
    # times) and stores as many sectors, each looked up store_lookups_per_sector times and hitting (stores
    # allocate): hit rate = S / (M + S) with M, S those lookup counts per sector. Measured 50.2-51.8%
    # (validate/measurements/h100/l2writes-2026-11-24.json, membound-2026-11-24.json).
    m = predicted("mem_copy", (1 << 26,))
    miss, store = h100.l2.miss_lookups_per_sector, h100.l2.store_lookups_per_sector
    assert m["lts__t_sector_hit_rate.pct"] == pytest.approx(100 * store / (miss + store), abs=0.5)


def test_a_tma_box_row_is_a_line_request_of_the_l2():
    # A TMA box moves row by row; each row is one line request of the L2 (validate/measurements/h100/
    # tmabox-2026-11-24.json: narrow rows run at the L2's line-request rate). 128-B rows (the 128B swizzle) cost their
    # bytes; the 64B swizzle moves the same bytes in rows half as wide, each a line operation and two sectors.
    from gpusim import chip
    from gpusim.api import predict

    costs = {}
    for swizzle in ("128B", "64B"):
        _, sim = predict("hgemm_tma_wgmma", (1024, 1024, 1024), {"swizzle": swizzle})
        l2 = sim.config.l2
        timings = chip._timings(sim.config, sim.pats, sim.l1, sim.l2)
        tma = [n for n, p in sim.pats.items() if p.op.kind == "tma"]
        cost = sum(float(timings[n].l2_read_cost.sum()) for n in tma)
        moved = sum(float(timings[n].l2_bytes.sum()) for n in tma)
        costs[swizzle] = cost / moved
    op, sector = l2.read_line_op_bytes, (128 - l2.read_line_op_bytes) / 4
    assert costs["128B"] == pytest.approx(1.0)
    assert costs["64B"] == pytest.approx((op + 2 * sector) / 64)


@pytest.mark.parametrize("kernel, pays", [("hgemm_ws", True), ("fa3", True), ("hgemm_mma", False), ("fa2", False)])
def test_a_kernel_taking_tensor_maps_by_value_pays_their_launch_cost(kernel, pays):
    # The TMA twins pass their tensor maps as __grid_constant__ parameters; the same kernel launches
    # tensor_map_param_launch_ns later than with the map in global memory (validate/micro/run_tma_start.py). Kernels
    # without TMA (mma.sync, cp.async) pay only the empty kernel's overhead.
    from gpusim.api import predict

    shape = (512, 512, 512) if kernel.startswith("hgemm") else (1, 2, 512, 64)
    m, sim = predict(kernel, shape)
    chip = sim.config.chip
    body_ns = sim.total_cycles / m["sm__cycles_elapsed.avg.per_second"] * 1e9
    extra = chip.tensor_map_param_launch_ns if pays else 0.0
    assert m["gpu__time_duration.sum"] == pytest.approx(body_ns + chip.kernel_overhead_ns + extra, abs=0.1)


def test_doubling_k_doubles_the_time(predicted):
    # Twice the K tiles per CTA, same grid: the main loop runs twice as long; launch overhead and the
    # epilogue do not double, caches may help a little, so allow 1.6x-2.4x.
    t1 = predicted("sgemm_1d_blocktiling", (M, N, K))[TIME]
    t2 = predicted("sgemm_1d_blocktiling", (M, N, 2 * K))[TIME]
    assert 1.6 <= t2 / t1 <= 2.4, t2 / t1


@pytest.mark.parametrize("kernel", sgemm_kernels())
def test_no_resource_is_busier_than_its_peak(predicted, kernel):
    # A utilization is busy time over elapsed time (or achieved over peak rate): it cannot exceed 100%.
    m = predicted(kernel, SHAPE)
    over = {k: v for k, v in m["gpusim__utilization_pct"].items() if not 0.0 <= v <= 100.0}
    assert not over, f"{kernel}: {over}; verdict: {m['gpusim__verdict']}"


def test_predicated_instructions_are_issued_by_every_warp_even_with_no_lane_on():
    """A guarded instruction (SASS ``@P LDS``) costs every executing warp an issue slot whatever its
    predicate; behind a uniform branch a warp with no active lane skips it. Only lanes that are on touch the
    shared memory in either case: one 4-byte load by warp 0's 32 lanes is one wavefront."""
    import numpy as np

    from gpusim.chip import simulate
    from gpusim.config import load_config
    from gpusim.ir import Kernel, Launch, Mem, Tensor
    from gpusim.metrics import report

    def kernel(predicated: bool) -> Kernel:
        only_warp0 = Mem("lds", "shared", "ld", 4, lambda c: np.where(c.tid < 32, c.tid * 4, -1),
                         predicated=predicated)
        return Kernel("guarded", "user", (1,), {}, Launch((132, 1, 1), (256, 1, 1), 16, 1024), (only_warp0,),
                      None, (), (Tensor("t", 4),), 0, "")

    inst = "smsp__inst_executed.sum"
    wf = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
    cfg = load_config()
    guarded, branch = report(simulate(kernel(True), cfg)), report(simulate(kernel(False), cfg))
    assert guarded[inst] == 132 * 8 and branch[inst] == 132 * 1  # 8 warps issue it; only warp 0 does
    assert guarded[wf] == branch[wf] == 132 * 1


def test_a_predicated_off_load_still_makes_its_reader_wait():
    """Measured (validate/micro/run_predld.py): a shared load with every lane off delays the instruction that reads
    it as long as one with lanes on. One warp, a chain of 16 (guarded load, dependent add): the chain's time is the
    loads' latency whether the guard lets lanes through or not, charged to short_scoreboard."""
    import numpy as np

    from gpusim.chip import simulate
    from gpusim.config import load_config
    from gpusim.ir import Compute, Kernel, Launch, Loop, Mem, Tensor
    from gpusim.metrics import report

    def kernel(on: bool) -> Kernel:
        ld = Mem("lds", "shared", "ld", 4, lambda c: np.where(np.full_like(c.tid, on, dtype=bool), c.tid * 4, -1),
                 predicated=True, after=("add",))
        body = (ld, Compute("add", "fp32", 1, after=("lds",)))
        return Kernel("pred_chain", "user", (1,), {}, Launch((1, 1, 1), (32, 1, 1), 16, 1024), (),
                      Loop(16, body), (), (Tensor("t", 4),), 0, "")

    cfg = load_config()
    on, off = report(simulate(kernel(True), cfg)), report(simulate(kernel(False), cfg))
    cycles = "gpc__cycles_elapsed.max"
    assert off[cycles] >= 16 * cfg.shared_memory.load_latency_cycles
    assert off[cycles] == pytest.approx(on[cycles], rel=0.15)
    short = "smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio"
    assert off[short] > 0.5 * on[short] > 0


@pytest.mark.parametrize("stride, bytes_per_float", [(1, 4), (8, 32), (32, 64)])
def test_hbm_fetches_the_aligned_64_byte_block_of_every_missed_sector(predicted, stride, bytes_per_float):
    """y[i] = x[i * stride] over N floats: stride 1 reads every byte of x once (4 B per float), stride 8 one
    whole 32-B sector per float, stride 32 one sector per 128-B line, whose 64-B block HBM delivers whole."""
    n = 1 << 22
    m = predicted("mem_strided", (n,), stride=str(stride))
    assert m["dram__bytes_read.sum"] == n * bytes_per_float


def test_a_gather_whose_tensors_fit_in_l2_reads_each_byte_once(predicted):
    """y[i] = x[idx[i]] with a scattered permutation: x, idx and y (4 MiB each) fit in the 50 MB L2 together,
    so x and idx come from HBM once each however the CTAs share x's sectors."""
    n = 1 << 20
    assert predicted("mem_gather", (n,))["dram__bytes_read.sum"] == 2 * n * F32


def test_warp_selection_per_inner_iteration():
    """``Compute(when=...)``: in inner iteration j only warps w <= j run the bundle (a branch some warps take in
    some iterations): 4 warps x 4 iterations give 1 + 2 + 3 + 4 = 10 bundles of 8 FFMAs per CTA."""
    from gpusim.chip import simulate
    from gpusim.config import load_config
    from gpusim.ir import Compute, Kernel, Launch, Loop, Tensor
    from gpusim.metrics import compute_totals, report

    body = (Loop(4, (Compute("ffma", "fp32", 8, 8, when=lambda w, j: w <= j),), var="j"),)
    k = Kernel("selected", "user", (1,), {}, Launch((132, 1, 1), (128, 1, 1), 16, 0), body, None, (),
               (Tensor("t", 4),), 0, "")
    sim = simulate(k, load_config())
    assert compute_totals(sim)["fp32"][0] == 132 * 10 * 8
    assert report(sim)["smsp__inst_executed.sum"] == 132 * 10 * 8


def _brute_sectors(n: int, tile: int = 32, rows: int = 8) -> tuple[int, int]:
    """Sectors of the guarded transpose's loads and stores counted lane by lane over every warp of every CTA:
    one sector per distinct 32-byte block a warp's active lanes address in one instruction."""
    import numpy as np

    blocks = -(-n // tile)
    tx = np.arange(tile)
    ld = st = 0
    for by in range(blocks):
        for bx in range(blocks):
            for ty in range(rows):
                for k in range(0, tile, rows):
                    x, y = bx * tile + tx, by * tile + ty + k
                    on = (x < n) & (y < n)
                    ld += len(np.unique(((y * n + x) * 4 // 32)[on]))
                    st += len(np.unique(((x * n + y) * 4 // 32)[on]))
    return ld, st


@pytest.mark.parametrize("n", [33, 100])
def test_partial_last_blocks_have_their_own_access_counts(n):
    """A grid that rounds up (the guide's guarded transpose): the last block of each dimension is a partial tile
    whose lanes outside the matrix are off. Sectors over the launch equal a lane-by-lane count; every warp still
    issues its predicated loads (4 per warp, 8 warps per CTA)."""
    from gpusim import loader
    from gpusim.api import predict
    from tests.conftest import REPO

    loader.load([str(REPO / "examples")])
    m = predict("example_transpose_guarded", (n,))[0]
    ld, st = _brute_sectors(n)
    assert m[SECTORS] == ld
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] == st
    assert m[REQUESTS] == (-(-n // 32)) ** 2 * 8 * 4


def test_a_ragged_last_loop_iteration_has_its_own_counts():
    """A K loop over n = 10 * 128 + 32 floats in 128-float steps: 11 iterations, the last with one warp of four
    on. The loads' sectors (4 per warp-load) and requests count the ragged step exactly, and the engine runs that
    last step after fast-forwarding a long loop (here 2000 iterations)."""
    import numpy as np

    from gpusim.chip import simulate
    from gpusim.config import load_config
    from gpusim.ir import Kernel, Launch, Loop, Mem, Tensor
    from gpusim.metrics import report

    def kernel(steps: int) -> Kernel:
        n = steps * 128 + 32

        def addr(c):
            i = c.it * 128 + c.tid
            return np.where(i < n, i * 4, -1)
        body = (Mem("ld", "global", "ld", 4, addr, "x"),)
        return Kernel("ragged", "user", (n,), {}, Launch((132, 1, 1), (128, 1, 1), 16, 0), (), Loop(steps + 1, body),
                      (), (Tensor("x", 4 * n),), 0, "")

    cfg = load_config()
    for steps in (10, 2000):
        sim = simulate(kernel(steps), cfg)
        m = report(sim)
        assert sim.pats["ld"].last
        assert m[REQUESTS] == 132 * (steps * 4 + 1)
        assert m[SECTORS] == 132 * (steps * 16 + 4)
    assert sim.result.fast_forward


def test_only_the_first_and_last_block_of_a_dimension_may_differ_or_every_other_one_alternate():
    """A pattern that changes inside the grid is refused with its name (here every third block is empty: block 0
    differs from block 1, a first block may, behind a border guard, and block 1 from block 3, where no period of two
    explains it); one whose interior blocks alternate every other one (every even block empty) is two classes of
    blocks, counted apart."""
    import numpy as np

    from gpusim.chip import simulate
    from gpusim.config import load_config
    from gpusim.ir import Kernel, KernelError, Launch, Loop, Mem, Tensor

    def kernel(keep):
        ld = Mem("ld", "global", "ld", 4, lambda c: np.where(keep(c.bx), (c.bx * 128 + c.tid) * 4, -1), "x")
        return Kernel("odd", "user", (1,), {}, Launch((8, 1, 1), (128, 1, 1), 16, 0), (), Loop(1, (ld,)), (),
                      (Tensor("x", 4 * 1024),), 0, "")

    with pytest.raises(KernelError, match=r"'ld' differs between blocks \(1, 0, 0\) and \(3, 0, 0\)"):
        simulate(kernel(lambda bx: bx % 3 != 0), load_config())
    sim = simulate(kernel(lambda bx: bx % 2 == 1), load_config())
    interior = [c for c in sim.classes if c.edges == (0, 0, 0)]
    assert sorted(c.phase for c in interior) == [(0, 0, 0), (1, 0, 0)]
    assert sum(c.count for c in sim.classes) == 8
    from gpusim.metrics import report

    assert report(sim)["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 4 * 128 * 4 // 32  # the odd blocks'


def test_fa3_with_a_ragged_last_kv_block_reads_only_the_rows_that_exist():
    """bc=176 does not divide N=1024: 6 KV blocks, the last of 16 rows. The TMA reads K and V for N rows per
    CTA and nothing past them (out-of-bounds rows are zero-filled), and the mbarrier ring still completes."""
    from gpusim.api import predict

    B, H, N, d = 1, 2, 1024, 64
    m = predict("fa3", (B, H, N, d), {"bc": 176})[0]
    ctas = N // 128 * H * B
    assert m["gpusim__tma_load_bytes"] == ctas * 2 * N * d * 2 + ctas * 128 * d * 2  # K, V rows and each CTA's Q


def test_a_bundle_takes_at_least_its_control_code_stalls_to_issue():
    """A bundle of independent integer instructions issues one a cycle; given the stall cycles its SASS control codes
    sum to (``stall_cycles``, what ``gpusim sass`` prints per loop), one warp alone takes that long, and ncu's ``wait``
    holds the cycles beyond one per instruction: 64 instructions with 256 stall cycles, 16 times over, take at least
    16 x 256 cycles, and wait is 3 per issued instruction. Negative stalls, or stalls on a bundle the warp hands to
    an asynchronous queue, are refused."""
    from gpusim.chip import simulate
    from gpusim.config import load_config
    from gpusim.ir import Compute, Kernel, KernelError, Launch, Loop, Tensor, _check_async
    from gpusim.metrics import report

    def kernel(stalls: int, group: str = "") -> Kernel:
        body = (Compute("ctl", "int32", 64, ilp=8, stall_cycles=stalls, group=group),)
        return Kernel("stalls", "user", (1,), {}, Launch((1, 1, 1), (32, 1, 1), 16, 0), (), Loop(16, body), (),
                      (Tensor("t", 4),), 0, "")

    cfg = load_config()
    free, stalled = report(simulate(kernel(0), cfg)), report(simulate(kernel(256), cfg))
    cycles = "gpc__cycles_elapsed.max"
    wait = "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio"
    assert stalled[cycles] >= 16 * 256 > 2 * free[cycles]
    assert stalled[wait] == pytest.approx(3.0, abs=0.05) and free[wait] < 0.5
    for bad in (kernel(-1), kernel(8, group="wgmma")):
        with pytest.raises(KernelError, match="stall_cycles"):
            _check_async(bad)


def _one_warp_loop(body, trips: int, code_instructions: int = 0, name: str = "fetch", threads: int = 32,
                   smem: int = 0):
    """One CTA (one warp unless ``threads`` says more) running ``body`` ``trips`` times, its loop's SASS
    ``code_instructions`` long (0: as many as the body issues)."""
    from gpusim.ir import Kernel, Launch, Loop, Tensor

    return Kernel(name, "user", (1,), {}, Launch((1, 1, 1), (threads, 1, 1), 16, smem), (), Loop(trips, body), (),
                  (Tensor("t", 1 << 20),), 0, "", loop_sass_instructions=code_instructions)


def test_a_hot_loop_the_first_instruction_cache_cannot_hold_arrives_at_the_measured_rate():
    """validate/micro/run_icache.py: one warp looping over 64 KiB of FFMAs or IMADs runs at the rate the fetch
    delivers them (2.43 cycles each), not at the pipe's rate plus a miss cost. So a bundle of independent FFMAs
    (one a cycle when its code fits) and a bundle of two dependent chains (2 cycles an instruction: the 4-cycle
    latency over 2 chains) both take the fetch's interval per instruction once the loop is 64 KiB, the excess
    charged to no_instruction; at 16 KiB both keep their own pace."""
    from gpusim.chip import simulate
    from gpusim.config import load_config
    from gpusim.ir import Compute
    from gpusim.metrics import report

    cfg = load_config()
    trips, n = 64, 512
    fi = cfg.icache.fetch_interval(4096 * cfg.icache.instruction_bytes)
    assert fi > 2.2 and cfg.icache.fetch_interval(1024 * cfg.icache.instruction_bytes) == 0.0

    def per_instruction(ilp: int, code: int) -> tuple[float, float]:
        m = report(simulate(_one_warp_loop((Compute("f", "fp32", n, ilp=ilp),), trips, code), cfg))
        return (m["gpc__cycles_elapsed.max"] / (trips * n),
                m["smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio"])

    latency = cfg.pipes.fp32_latency_cycles
    for ilp, own in ((8, 1.0), (2, latency / 2)):
        small, small_wait = per_instruction(ilp, 1024)
        big, big_wait = per_instruction(ilp, 4096)
        assert small == pytest.approx(own, rel=0.1) and small_wait == 0
        assert big == pytest.approx(fi, rel=0.05), f"ilp {ilp}: {big} cycles per instruction, fetch {fi}"
        assert big_wait == pytest.approx(fi - own, abs=0.15)


def test_the_fetch_runs_ahead_while_a_warp_waits_for_a_load():
    """validate/micro/run_icache.py --stall-every: while a warp waits for a load the fetch goes on, up to
    ``fetch_ahead_instructions``. A loop of one dependent global load and 32 FFMAs after it (fewer than that) runs
    as fast in 64 KiB of code as in 16 KiB; the same FFMAs with no load, and so no wait, pay the fetch's rate."""
    from gpusim.chip import simulate
    from gpusim.config import load_config
    from gpusim.ir import Compute, Mem
    from gpusim.metrics import report

    cfg = load_config()
    assert cfg.icache.fetch_ahead_instructions >= 33
    ld = Mem("ld", "global", "ld", 4, lambda c: c.it * 4096 + c.lane * 4, "t")

    def cycles(with_load: bool, code: int) -> float:
        body = ((ld,) if with_load else ()) + (Compute("f", "fp32", 32, ilp=8, after=("ld",) if with_load else ()),)
        return report(simulate(_one_warp_loop(body, 64, code), cfg))["gpc__cycles_elapsed.max"]

    assert cycles(True, 4096) == pytest.approx(cycles(True, 1024), rel=0.03)
    assert cycles(False, 4096) > 1.8 * cycles(False, 1024)


def test_reused_operand_registers_hold_the_next_copies_until_the_lsu_has_read_them():
    """At 255 registers ptxas reuses the registers holding a copy's address (sgemm_memcpy_async's LDGSTS, ncu's PC
    samples: validate/measurements/h100/stallsamples-2026-11-25.json): the instruction that overwrites them waits
    on long_scoreboard until the L1TEX pipe has taken the copies before. 16 loads reusing their operands every 4
    wait three times, every 1 fifteen times, and never without reuse, and the work after them starts that much later;
    a negative count is refused."""
    import dataclasses

    from gpusim.chip import simulate
    from gpusim.config import load_config
    from gpusim.ir import Compute, KernelError, Mem, _check_async
    from gpusim.metrics import report

    cfg = load_config()
    ld = Mem("ld", "global", "ld", 4, lambda c: c.it * 65536 + c.r * 4096 + c.lane * 16, "t", repeat=16)
    long_sb = "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"

    def run(reuse: int) -> dict:  # the loads, then work that does not need them: the warp waits only to issue
        body = (dataclasses.replace(ld, operand_reuse=reuse), Compute("work", "fp32", 1024, ilp=8))
        return report(simulate(_one_warp_loop(body, 8, 1040), cfg))

    free, fours, ones = run(0), run(4), run(1)
    assert free[long_sb] == 0 < fours[long_sb] < ones[long_sb]
    assert free["gpc__cycles_elapsed.max"] < fours["gpc__cycles_elapsed.max"] < ones["gpc__cycles_elapsed.max"]
    with pytest.raises(KernelError, match="operand_reuse"):
        _check_async(_one_warp_loop((dataclasses.replace(ld, operand_reuse=-1),), 8, 16))


def test_warps_of_small_ctas_spread_over_the_sub_partitions():
    """validate/micro/run_subpartition.py: the SM deals its warp slots to the four sub-partitions in turn, CTA after
    CTA (%warpid % 4 is even over CTAs of 1, 2, 4 and 8 warps), so 16 warps per SM in CTAs of two run their FFMA as
    fast as in CTAs of four, not at half the rate on two sub-partitions."""
    from gpusim.chip import simulate
    from gpusim.config import load_config
    from gpusim.ir import Compute, Kernel, Launch, Loop, Tensor
    from gpusim.metrics import report

    cfg = load_config()

    def cycles(warps_per_cta: int) -> float:
        ctas = cfg.chip.sm_count * 16 // warps_per_cta  # 16 warps per SM, one wave
        k = Kernel("spread", "user", (1,), {}, Launch((ctas, 1, 1), (32 * warps_per_cta, 1, 1), 32, 0), (),
                   Loop(32, (Compute("f", "fp32", 256, ilp=8),)), (), (Tensor("t", 4),), 0, "")
        return report(simulate(k, cfg))["gpc__cycles_elapsed.max"]

    four = cycles(4)
    assert cycles(2) == pytest.approx(four, rel=0.05)
    assert cycles(1) == pytest.approx(four, rel=0.1)  # 16 CTAs an SM to launch: their start-up shows


def test_a_memory_instruction_takes_at_least_its_control_code_stalls_to_issue():
    """The FP32 rungs' loads and stores carry their SASS's mean control-code stall (SASS_FP32_STALLS, 2.0-3.1
    cycles): one warp issuing 16 shared loads with 64 stall cycles, 32 times over, takes at least 32 x 64 cycles and
    ncu's wait holds the 3 per instruction beyond the first; stalls on an asynchronous copy's store are refused."""
    import dataclasses

    from gpusim.chip import simulate
    from gpusim.config import load_config
    from gpusim.ir import KernelError, Mem, _check_async
    from gpusim.metrics import report

    cfg = load_config()
    ld = Mem("lds", "shared", "ld", 4, lambda c: c.lane * 4 + c.r * 128, repeat=16)

    def kernel(stalls: int):
        return _one_warp_loop((dataclasses.replace(ld, stall_cycles=stalls),), 32, name="memstall", smem=4096)

    free, held = report(simulate(kernel(0), cfg)), report(simulate(kernel(64), cfg))
    cycles = "gpc__cycles_elapsed.max"
    wait = "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio"
    assert held[cycles] >= 32 * 64 > 2 * free[cycles]
    assert held[wait] == pytest.approx(3.0, abs=0.1) and free[wait] < 0.5
    bad = dataclasses.replace(kernel(0), loop=dataclasses.replace(
        kernel(0).loop, body=(Mem("st", "shared", "st", 4, lambda c: c.lane * 4, async_copy=True, stall_cycles=4),)))
    with pytest.raises(KernelError, match="stall_cycles"):
        _check_async(bad)


def test_three_register_sources_hold_the_dispatch_half_a_cycle_longer():
    """validate/micro/run_regread.py: FFMAs with three register sources issue at 1.5 cycles each per sub-partition,
    whatever the warps; with two, one. A bundle that reads 3 registers an instruction (``register_reads``) takes 1.5
    cycles an instruction with one warp and with four, the half cycle charged to dispatch_stall (the other warps of
    a sub-partition wait as not_selected); reading 2 costs nothing; a negative count is refused."""
    import dataclasses

    from gpusim.chip import simulate
    from gpusim.config import load_config
    from gpusim.ir import Compute, KernelError, _check_async
    from gpusim.metrics import report

    cfg = load_config()
    assert cfg.scheduler.register_reads_per_cycle == 2
    ffma = Compute("f", "fp32", 1024, ilp=8)

    def run(reads: float, warps_per_smsp: int) -> dict:
        body = (dataclasses.replace(ffma, register_reads=reads),)
        return report(simulate(_one_warp_loop(body, 16, name="reads", threads=128 * warps_per_smsp), cfg))

    per = lambda m, w: m["gpc__cycles_elapsed.max"] / (16 * 1024 * w)
    for w in (1, 4):
        two, three = run(2.0, w), run(3.0, w)
        assert per(two, w) == pytest.approx(1.0, rel=0.08)
        assert per(three, w) == pytest.approx(1.5, rel=0.08)
        assert two["smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio"] == 0
        assert three["smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio"] == \
            pytest.approx(0.5, abs=0.02)
    with pytest.raises(KernelError, match="register_reads"):
        _check_async(_one_warp_loop((dataclasses.replace(ffma, register_reads=-1),), 1, name="reads"))


def test_warps_sharing_the_fp32_pipe_wait_as_not_selected():
    """The FP32 pipe takes a warp instruction every cycle, as fast as the scheduler issues, so two warps of a
    sub-partition running FFMA take turns at the issue slot: each waits one cycle per instruction as not_selected
    (ncu: math_pipe_throttle 0.00-0.04 per issue on the FP32 rungs), and none as math_pipe_throttle."""
    from gpusim.chip import simulate
    from gpusim.config import load_config
    from gpusim.ir import Compute
    from gpusim.metrics import report

    k = _one_warp_loop((Compute("f", "fp32", 1024, ilp=8),), 16, name="pair", threads=256)
    m = report(simulate(k, load_config()))
    ratio = "smsp__average_warps_issue_stalled_{}_per_issue_active.ratio"
    assert m[ratio.format("math_pipe_throttle")] == 0
    assert m[ratio.format("not_selected")] == pytest.approx(1.0, abs=0.1)


def test_a_grid_smaller_than_the_chip_reports_the_warps_of_the_sms_that_have_work(predicted):
    # sgemm_2d_blocktiling at 512^3: (512/128)^2 = 16 CTAs of 256 threads (8 warps) on 132 SMs, one CTA per SM
    # (breadth first). ncu averages the resident warps over the SMs' active cycles: 8 of 64 while each SM runs,
    # however many SMs sit idle (measured 12.46%). The CTA's warps retire together, so the average stays near 8.
    occ = predicted("sgemm_2d_blocktiling", (512, 512, 512))[OCC]
    assert 100.0 * 7 / 64 < occ <= 100.0 * 8 / 64 + 1e-9


def test_partial_sums_of_neighbouring_ctas_are_stored_in_full(predicted):
    # mem_reduce_sequential over 64M floats: 262,144 CTAs each store one 4-byte partial sum, eight CTAs to a sector
    # (1 MiB in all), while 256 MiB stream through the L2 after most of them: nearly all of it leaves the L2 for
    # HBM. Keyed by CTA coordinates, neighbours looked like one tile (CTA 0 and CTA 1 write the same sector), and the
    # model stored 32 bytes per wave (7 KB written back; ncu measures 3.3 MB).
    written = predicted("mem_reduce_sequential", (1 << 26,))["dram__bytes_write.sum"]
    assert written >= 0.8 * (1 << 26) // 256 * 4


def test_a_block_fetched_alone_in_its_dram_row_is_charged_the_measured_cost(h100):
    # [hbm] isolated_block_cost_ratio: random 64-B blocks move at 1.87 TB/s where random 128-B lines and streams move
    # 2.62-2.71 (validate/measurements/h100/hbmspan-2026-11-26.json). A block counts as alone when no other fetched
    # block shares its aligned near_block_bytes region (mem_strided stride 32, blocks 128 B apart, streams at 2.75).
    import dataclasses

    import numpy as np

    from gpusim.api import predict

    hbm = dataclasses.replace(h100.hbm, fetch_granularity_bytes=64, near_block_bytes=256)
    sectors = np.arange(64)  # a stream of 2 KiB: every block has neighbours
    assert hbm.isolated_share(sectors, 32) == 0.0
    assert hbm.isolated_share(np.arange(0, 256, 4), 32) == 0.0  # one block of every 128-B line
    assert hbm.isolated_share(np.arange(0, 512, 8), 32) == 1.0  # blocks 256 B apart (hbmgap-2026-11-26.json)
    assert hbm.isolated_share(np.arange(0, 4096, 64), 32) == 1.0  # one block every 2 KiB
    flat = dataclasses.replace(h100, hbm=dataclasses.replace(h100.hbm, isolated_block_cost_ratio=1.0))
    # mem_gather 16M: its x reads are scattered blocks and the kernel is HBM-bound, so its time grows with the cost
    charged = predict("mem_gather", (1 << 24,), None, h100)[0][TIME]
    uncharged = predict("mem_gather", (1 << 24,), None, flat)[0][TIME]
    assert charged > 1.2 * uncharged
    # a stream is not charged: mem_copy's time does not move
    assert predict("mem_copy", (1 << 22,), None, h100)[0][TIME] == predict("mem_copy", (1 << 22,), None, flat)[0][TIME]


def test_a_sass_run_waits_for_its_results_only_where_they_are_read():
    """A bundle that stands for a run of SASS instructions (``waits_for_results=False``, as the front-end builds them)
    lets the warp go on once its last instruction issues; a later bundle waits for its results only through
    ``after``. 16 independent one-instruction MUFU bundles take about 16 issues, not 16 latencies; made a chain
    (each after the one before) or hand-IR bundles (waiting for their results), they take 16 latencies."""
    from gpusim.ir import Compute

    def kernel(waits: bool, chained: bool):
        body = tuple(Compute(f"m{i}", "sfu", 1, after=(f"m{i - 1}",) if chained and i else (),
                             waits_for_results=waits) for i in range(16))
        return _one_warp_loop(body, 64, name="results")

    from gpusim.chip import simulate
    from gpusim.config import load_config
    from gpusim.metrics import report

    cfg = load_config()
    cycles = "gpc__cycles_elapsed.max"
    free, chain, hand = (report(simulate(kernel(w, c), cfg))[cycles] for w, c in ((False, False), (False, True),
                                                                                   (True, False)))
    latency = cfg.pipes.sfu_latency_cycles
    assert chain >= 64 * 16 * latency * 0.9 and hand >= 64 * 16 * latency * 0.9
    assert free < chain / 3


def test_a_hit_on_a_line_still_on_its_way_is_counted_a_hit_and_waits_for_the_fill():
    """Every warp of a CTA reads the same new line (sgemm_coalesced's B loads; validate/micro/l1_mix.cu MODE 3): the
    first request misses, the other 31 hit in ncu's count (96.85% of sectors, validate/measurements/h100/
    l1mix-ncu-2026-12-07.txt) but their data is the first one's, still on its way: they wait for it (long_scoreboard
    13.7 per issue where one miss in 32 to a private line gives 7.6). A line first brought in an earlier iteration
    is a plain hit: warps 1-31 reading one line all along while warp 0 misses a new one each iteration wait less."""
    import numpy as np

    from gpusim import chip
    from gpusim.chip import simulate
    from gpusim.config import load_config
    from gpusim.ir import Compute, Kernel, Launch, Loop, Mem, Tensor
    from gpusim.memory.l1 import l1_hit_model
    from gpusim.metrics import report

    line = [np.array([7, 8, 9, 10])]
    st = l1_hit_model([(0, "b", line * 3), (1, "b", line)], 1 << 16, 32, 0)["b"]
    assert (st.requests, st.requests_all_hit, st.requests_pending) == (4, 3, 2)

    n_ctas, trips = 264, 64

    def shared_new_line(c):  # every warp of the CTA: the CTA's line of this iteration, 4 B a lane
        return ((c.bx * trips + c.it) * 32 + c.lane + 0 * c.warp) * 4

    def old_lines(c):  # warp 0 a new line each iteration, the others one line all along
        fresh = (c.bx * trips + c.it) * 32 + c.lane + 0 * c.warp
        return np.where(c.warp == 0, fresh, n_ctas * trips * 32 + c.bx * 32 + c.lane) * 4

    def kernel(addr):
        ld = Mem("b", "global", "ld", 4, addr, tensor="B")
        return Kernel("lines", "user", (1,), {}, Launch((n_ctas, 1, 1), (1024, 1, 1), 16, 0), (),
                      Loop(trips, (ld, Compute("use", "fp32", 1, after=("b",)))), (),
                      (Tensor("B", (n_ctas * trips + n_ctas) * 128),), 0, "")

    cfg = load_config()
    sim = simulate(kernel(shared_new_line), cfg)
    stats = sim.l1["b"]
    assert stats.requests_all_hit == pytest.approx(stats.requests * 31 / 32, rel=0.02)
    assert stats.requests_pending == stats.requests_all_hit  # every hit is on the line the first warp missed
    timing = chip._timings(sim.config, sim.pats, sim.l1, sim.l2)["b"]
    assert timing.l1_pending_fraction == pytest.approx(31 / 32, rel=0.02)
    other = simulate(kernel(old_lines), cfg)
    assert other.l1["b"].requests_all_hit == pytest.approx(stats.requests_all_hit, rel=0.02)
    assert other.l1["b"].requests_pending == 0
    long = "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"
    assert report(sim)[long] > 1.5 * report(other)[long]
