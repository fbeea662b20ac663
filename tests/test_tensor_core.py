"""The tensor-core ladder and FlashAttention: the knobs move the predictions the way the mechanism says."""

from __future__ import annotations

import dataclasses

import pytest

from gpusim.api import predict
from gpusim.chip import simulate
from gpusim.config import load_config
from gpusim.engine import DeadlockError
from gpusim.ir import KernelError
from gpusim.registry import build_kernel
from kernels_ir.hgemm import tile_sequence

CFG = load_config()
T = "gpu__time_duration.sum"
LDSM_CONFLICTS = "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum"
SMALL = (512, 512, 1024)


def run(name, shape=SMALL, **knobs):
    return predict(name, shape, {k: str(v) for k, v in knobs.items()} or None, CFG)[0]


def test_swizzle_removes_ldmatrix_conflicts_and_time():
    plain, swz = run("hgemm_mma", swizzle="none"), run("hgemm_mma", swizzle="128B")
    assert plain[LDSM_CONFLICTS] > 0 and swz[LDSM_CONFLICTS] == 0
    # unswizzled 128-B rows: the 8 rows of each 8x8 matrix sit in the same 4 banks: 8 wavefronts instead of 1
    assert plain["sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum"] == \
        8 * swz["sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum"]
    assert swz[T] < 0.6 * plain[T]


def test_partial_swizzles_order_conflicts():
    c = [run("hgemm_mma", swizzle=s)[LDSM_CONFLICTS] for s in ("none", "32B", "64B", "128B")]
    assert c[0] > c[1] > c[2] > c[3] == 0


def test_stages_hide_latency_until_shared_memory_runs_out():
    times = [run("hgemm_mma_pipelined", stages=s)[T] for s in (1, 2, 3)]
    assert times[0] > times[1] > times[2]
    with pytest.raises(KernelError, match=r"stages=8 .* asks for 262144 B"):
        build_kernel("hgemm_mma_pipelined", SMALL, {"stages": "8"})


def test_warp_specialized_stages_and_the_227_kb_limit():
    t2, t4 = run("hgemm_ws", stages=2)[T], run("hgemm_ws", stages=4)[T]
    assert t4 < t2
    with pytest.raises(KernelError, match=r"stages=5 .*bn=256.* asks for 246784 B"):
        build_kernel("hgemm_ws", SMALL, {"stages": "5"})
    assert build_kernel("hgemm_ws", SMALL, {"stages": "5", "bn": "128"}).launch.smem_bytes <= 232448


def test_hopper_rungs_climb_toward_the_tensor_roof():
    shape = (4096, 4096, 4096)
    names = ["hgemm_mma_pipelined", "hgemm_tma_wgmma", "hgemm_ws", "hgemm_ws_cluster"]
    util = [run(n, shape)["gpusim__utilization_pct"]["tensor peak"] for n in names]
    assert util == sorted(util) and util[0] < util[-1]


def test_cluster_multicast_halves_the_b_traffic_each_cta_requests():
    shape = (4096, 4096, 4096)
    ws, cl = run("hgemm_ws", shape), run("hgemm_ws_cluster", shape)
    a_and_b, a_and_half_b = 128 + 256, 128 + 128
    assert cl["lts__t_sectors_op_read.sum"] / ws["lts__t_sectors_op_read.sum"] == pytest.approx(
        a_and_half_b / a_and_b, rel=0.05)


@pytest.mark.parametrize("order", ["row", "grouped", "hilbert"])
@pytest.mark.parametrize("mt,nt", [(32, 16), (5, 3), (8, 8)])
def test_tile_orders_visit_every_tile_once(order, mt, nt):
    assert sorted(tile_sequence(order, mt, nt)) == list(range(mt * nt))


def test_grouped_order_reads_less_dram_than_row_order():
    shape = (8192, 8192, 4096)
    row, grouped = run("hgemm_persistent", shape, order="row"), run("hgemm_persistent", shape, order="grouped")
    assert grouped["dram__bytes_read.sum"] < row["dram__bytes_read.sum"]


def test_fa3_beats_fa2_and_causal_halves_work_not_time():
    shape = (4, 16, 2048, 128)  # several waves of CTAs: the short causal CTAs fill in behind the long ones
    fa2, fa3 = run("fa2", shape), run("fa3", shape)
    assert fa3[T] < 0.8 * fa2[T]
    for name in ("fa2", "fa3"):
        full, causal = run(name, shape), run(name, shape, causal=1)
        assert 0.5 * full[T] < causal[T] < 0.8 * full[T]
        assert causal["gpusim__tflops"] < full["gpusim__tflops"]


def test_attention_defaults_follow_fa2():
    assert build_kernel("fa2", (1, 1, 1024, 64)).params | {} == {"br": 128, "bc": 128, "causal": False,
                                                                  "swizzle": "128B"}
    assert build_kernel("fa2", (1, 1, 1024, 128)).params["bc"] == 64


@pytest.mark.parametrize("name,shape,knobs,msg", [
    ("hgemm_mma", SMALL, {"swizzle": "16B"}, "swizzle='16B' is not one of"),
    ("hgemm_ws", SMALL, {"stages": "9"}, "stages=9 is not one of"),
    ("hgemm_persistent", SMALL, {"order": "zigzag"}, "order='zigzag' is not one of"),
    ("hgemm_tma_wgmma", SMALL, {"swizzle": "none"}, "swizzle='none' is not one of"),
    ("hgemm_ws", (512, 384, 1024), {}, "N=384 is not a multiple of BN=256"),
    ("fa2", (1, 1, 1000, 64), {}, "N=1000 is not a multiple of br=128"),
    ("fa3", (1, 1, 1024, 96), {}, "head dimension d=96"),
])
def test_bad_knobs_and_shapes_name_what_is_wrong(name, shape, knobs, msg):
    with pytest.raises(KernelError, match=msg):
        build_kernel(name, shape, knobs)


def test_an_mbarrier_that_never_completes_is_a_deadlock_not_a_hang():
    k = build_kernel("hgemm_ws", SMALL)
    broken = dataclasses.replace(k, mbarriers=k.mbarriers | {"full": k.mbarriers["full"] + 1})
    stuck = r"deadlock, 9 warps wait forever: .*warp 4 of CTA 0 on mbarrier 'full' phase 0 \(2 of 3 arrivals\)"
    with pytest.raises(DeadlockError, match=stuck):
        simulate(broken, CFG)


def test_setmaxnreg_must_fit_the_launch_allocation():
    from gpusim.ir import _check_async

    k = build_kernel("hgemm_ws", SMALL)
    with pytest.raises(KernelError, match="setmaxnreg 40/240/240 per warpgroup needs 66560 registers"):
        _check_async(dataclasses.replace(k, warpgroup_regs=(40, 240, 240)))


def test_an_mbarrier_phase_after_the_loop_follows_the_ctas_trips():
    """Outside the loop an mbarrier operation's ``seq`` is taken at iteration 0 in the prologue and at the CTA's
    trips in the epilogue (the iteration after its last), so that a phase there can continue the loop's count where
    CTAs run different trips (causal FA3's consumers wait, in their last turn, for the block their producer's loop
    loaded last). Here warp 0 arrives once an iteration after its work, and warp 1, idle in the loop, waits after it
    for the last iteration's arrival (phase trips - 1) before its own work: it waits for the loop, CTA by CTA (taken
    at iteration 0, phase -1 is settled and it would not wait at all)."""
    from gpusim.ir import Arrive, Compute, Kernel, Launch, Loop, MbarWait, Tensor

    def kernel(wait: bool) -> Kernel:
        body = (Compute("work", "fp32", 256, warps=(0,)), Arrive("done", lambda it, j: it, (0,)))
        epi = ((MbarWait("done", lambda it, j: it - 1, (1,)),) if wait else ()) + (
            Compute("after", "fp32", 256, warps=(1,)),)
        return Kernel("phase_after_loop", "test", (2,), {}, Launch((2, 1, 1), (64, 1, 1), 32, 0), (),
                      Loop(6, body), epi, (Tensor("x", 4096),), 0, "", mbarriers={"done": 1},
                      trips_of=lambda i: 3 + 3 * i)

    def busy(k):
        return simulate(k, CFG).result.cycles

    loop_alone = busy(dataclasses.replace(kernel(False), loop=Loop(6, (Compute("work", "fp32", 256, warps=(0,)),))))
    beside = busy(kernel(False)) - loop_alone  # warp 1's work beside the loop: hidden
    waited = busy(kernel(True)) - loop_alone  # after the loop's last iteration
    assert beside == 0 and waited > 0.5 * loop_alone / 6  # (simulated: 0 and 1,024 cycles; an iteration 1,113)
