"""Issue 27: what gpusim says about a prediction is true. The verdict names the most utilized unit and no unit is
busier than its peak; peaks come from one place at the clock the model ran; stalls are explained by the model's own
causes; "why is B faster than A" comes from what moved."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from gpusim import bottleneck as bn
from gpusim import stalls
from gpusim.config import load_config
from gpusim.peaks import peaks

CFG = load_config()

# small shapes of every family, each limited by a different unit
CASES = [
    ("sgemm_naive", (256, 256, 256)),
    ("sgemm_2d_blocktiling", (512, 512, 512)),
    ("mem_copy", (4194304,)),
    ("mem_transpose_naive", (1024,)),
    ("mem_transpose_shared", (1024,)),
    ("mem_transpose_padded", (1024,)),
    ("mem_gather", (1048576,)),
    ("hgemm_mma", (512, 512, 512)),
    ("hgemm_ws", (1024, 1024, 1024)),
    ("fa3", (1, 4, 1024, 128)),
]


def _check_verdict(m: dict) -> None:
    """The physics and honesty rules every prediction's verdict obeys."""
    sol = m[bn.SOL]
    assert all(0.0 <= v <= 100.0 for v in sol.values()), sol
    top = max(sol.values())
    assert m[bn.LIMITER] in sol and sol[m[bn.LIMITER]] == top
    v = m["gpusim__verdict"]
    if top >= bn.BOUND_THRESHOLD_PCT:
        assert v.startswith(f"{bn.BOUND_NAMES[m[bn.LIMITER]]}: {m[bn.LIMITER]} at {top:.0f}% of its peak"), v
        # any other unit the verdict names is within CO_LIMIT_PTS of the top, with its own number
        for unit, pct in sol.items():
            if unit != m[bn.LIMITER] and f"; {unit} close behind" in v:
                assert pct >= top - bn.CO_LIMIT_PTS and f"{unit} close behind at {pct:.0f}%" in v
    else:
        assert v.startswith("latency-bound") and f"busiest: {m[bn.LIMITER]} at {top:.0f}%" in v


@pytest.mark.parametrize("name, shape", CASES, ids=[c[0] for c in CASES])
def test_verdict_names_the_most_utilized_unit_and_none_exceeds_its_peak(name, shape, predicted):
    _check_verdict(predicted(name, shape))


@settings(max_examples=200, deadline=None)
@given(hs.dictionaries(hs.sampled_from(bn.UNITS), hs.floats(0, 100, allow_nan=False), min_size=1))
def test_any_sol_table_gets_a_verdict_naming_its_largest_unit(sol):
    m = {bn.TIME: 1e6, bn.CLOCK: 1.98e9, bn.SOL: sol, "gpusim__gflops": 0.0,
         "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio": 1.0}
    a = bn.analyze(m, CFG)
    m[bn.LIMITER], m["gpusim__verdict"] = a.limiter, a.verdict
    _check_verdict(m)


def test_a_verdict_naming_a_smaller_unit_fails_the_check():
    m = {bn.SOL: {"HBM": 90.0, "L2": 40.0}, bn.LIMITER: "L2", "gpusim__verdict": "L2-bound: L2 at 40% of its peak"}
    with pytest.raises(AssertionError):
        _check_verdict(m)
    m = {bn.SOL: {"HBM": 101.0}, bn.LIMITER: "HBM", "gpusim__verdict": "HBM-bound: HBM at 101% of its peak"}
    with pytest.raises(AssertionError):
        _check_verdict(m)


def test_the_copy_names_hbm_and_the_transposes_differ(predicted):
    copy = predicted("mem_copy", (67108864,))  # 256 MiB each way: the stream does not fit the L2
    # the write path carries the fills and the stores, but measured L2 stores run faster than HBM: HBM is the limit
    assert copy[bn.LIMITER] == "HBM" and copy["gpusim__verdict"].startswith("HBM-bound") and copy[bn.SOL]["HBM"] > 90
    naive, padded = predicted("mem_transpose_naive", (1024,)), predicted("mem_transpose_padded", (1024,))
    assert naive["gpusim__verdict"] != padded["gpusim__verdict"]
    assert "1.0 of 4 sectors per line" in naive["gpusim__verdict"]  # the explaining path: scattered stores
    shared = predicted("mem_transpose_shared", (1024,))
    assert shared[bn.LIMITER] == "L1/shared pipe" and "bank conflicts" in shared["gpusim__verdict"]


@pytest.mark.parametrize("name", ["h100_sxm", "h200"])
def test_the_write_paths_sol_peak_is_at_least_the_models_rate(name):
    # a share of a peak below the rate the model runs the unit at could exceed 100%
    from gpusim.config import CONFIG_DIR

    pk = peaks(load_config(CONFIG_DIR / f"{name}.toml"))
    assert pk.l2_write_model_bytes_per_second <= pk.l2_write_bytes_per_second


def test_peaks_follow_the_clock_the_model_ran(predicted):
    m = predicted("hgemm_ws", (1024, 1024, 1024))
    clock = m[bn.CLOCK]
    assert clock < CFG.chip.sm_clock_hz  # wgmma lowers the clock
    pk = peaks(CFG, clock)
    assert pk.tensor_flops_per_second == pytest.approx(CFG.pipes.wgmma_flops_per_cycle_per_sm
                                                       * CFG.chip.sm_count * clock)
    # the tensor pipe's share is the FLOP/s printed beside it over the peak at that clock
    assert m[bn.SOL]["tensor pipe"] == pytest.approx(100 * m["gpusim__gflops"] * 1e9
                                                     / pk.tensor_flops_per_second, abs=0.2)
    # the memory side keeps its rates per second whatever the SM clock
    assert peaks(CFG, 1.5e9).l2_bytes_per_second == peaks(CFG).l2_bytes_per_second
    assert peaks(CFG, 1.5e9).hbm_bytes_per_second == CFG.hbm.achievable_bandwidth_bytes_per_second


def test_hopper_stalls_are_explained_by_their_mechanism(predicted):
    m = predicted("hgemm_ws", (1024, 1024, 1024))
    causes = dict(stalls.causes(m, "long_scoreboard"))
    assert causes and all(c.startswith("mbarrier") for c in causes)  # a consumer waits on the full / empty barriers
    # each barrier by what completes it in the kernel: TMA copies land on 'full', consumer warps arrive on 'empty'
    assert causes.keys() == {"mbarrier 'full' <- TMA copies", "mbarrier 'empty' <- warps arriving"}
    said = stalls.explain("long_scoreboard", m)
    assert "'full' (an mbarrier try_wait: waiting for the stage's TMA copies to land" in said
    assert "'empty' (an mbarrier try_wait: waiting for other warps to arrive" in said
    assert "wgmma.wait_group" in stalls.explain("barrier", m)
    plain = predicted("sgemm_2d_blocktiling", (512, 512, 512))
    assert "global load" in stalls.explain("long_scoreboard", plain)
    assert "__syncthreads" in stalls.explain("barrier", plain)
    assert all(math.isclose(sum(v.values()), 100.0, abs_tol=0.5) for v in m[stalls.CAUSES].values())


def test_measured_sol_of_the_prediction_itself_is_the_prediction(predicted):
    m = predicted("sgemm_2d_blocktiling", (512, 512, 512))
    assert bn.measured_sol(m, dict(m), CFG) == pytest.approx(m[bn.SOL], abs=0.06)
    slow = {**m, bn.TIME: 2 * m[bn.TIME]}
    assert bn.measured_sol(m, slow, CFG)["HBM"] == pytest.approx(m[bn.SOL]["HBM"] / 2, abs=0.06)
    fewer = {**m, "smsp__inst_executed.sum": m["smsp__inst_executed.sum"] / 2}
    assert bn.measured_sol(m, fewer, CFG)["issue slots"] == pytest.approx(m[bn.SOL]["issue slots"] / 2, abs=0.06)


def test_why_padding_beats_the_naive_transpose(predicted):
    naive, padded = predicted("mem_transpose_naive", (1024,)), predicted("mem_transpose_padded", (1024,))
    why = bn.why_faster("mem_transpose_naive", naive, "mem_transpose_padded", padded, CFG)
    assert why.speedup > 1 and "faster than mem_transpose_naive" in why.headline
    assert why.units[0].unit == "L2 write path" and why.units[0].share_pct > 50
    assert "global-store sectors per request" in why.headline
    back = bn.why_faster("mem_transpose_padded", padded, "mem_transpose_naive", naive, CFG)
    assert "slower" in back.headline


def test_a_metric_that_moved_2x_is_never_nothing(predicted):
    a, b = predicted("sgemm_naive", (256, 256, 256)), predicted("sgemm_2d_blocktiling", (512, 512, 512))
    for x, y in ((a, b), (b, a)):
        why = bn.why_faster("x", x, "y", y, CFG)
        moved = [mv for mv in why.moves if mv.factor >= 2 or mv.factor <= 0.5]
        assert moved and "No counter changed" not in why.headline


def test_why_reads_the_measurement_too(predicted):
    lo, hi = predicted("mem_transpose_naive", (1024,)), predicted("mem_transpose_padded", (1024,))
    meas_lo = {**lo, bn.TIME: lo[bn.TIME] * 1.1}
    meas_hi = {**hi, bn.TIME: hi[bn.TIME] * 0.9}
    why = bn.why_faster("naive", lo, "padded", hi, CFG, meas_lo, meas_hi)
    assert why.measured_speedup == pytest.approx(meas_lo[bn.TIME] / meas_hi[bn.TIME])
    assert "measured" in why.headline and why.units[0].agrees


def test_limiter_match_counts_rows():
    from gpusim.validation import Row

    pred = {bn.TIME: 1000.0, bn.CLOCK: 1.98e9, bn.SOL: {"HBM": 90.0, "L2": 20.0}, "dram__bytes_read.sum": 100,
            "dram__bytes_write.sum": 0, "lts__t_sectors_op_read.sum": 10}
    same = Row("mem_copy", (4,), pred, {bn.TIME: 1000.0, "dram__bytes_read.sum": 100, "dram__bytes_write.sum": 0,
                                        "lts__t_sectors_op_read.sum": 10})
    other = Row("mem_copy", (8,), pred, {bn.TIME: 1000.0, "dram__bytes_read.sum": 10, "dram__bytes_write.sum": 0,
                                         "lts__t_sectors_op_read.sum": 100})
    s = bn.limiter_summary([same, other], CFG)
    assert s.match_pct == 50.0 and [r.measured for r in s.mismatches] == ["L2"]


@pytest.mark.parametrize("name, shape", [("hgemm_ws", (1024, 1024, 1024)), ("fa3", (1, 4, 1024, 128)),
                                         ("sgemm_2d_blocktiling", (512, 512, 512))])
def test_every_reported_metric_has_a_section_unit_and_meaning(name, shape, predicted):
    from gpusim import sections

    m = predicted(name, shape)
    missing = [k for k in m if not sections.info(k).meaning]
    assert not missing, f"metrics without a meaning in gpusim/sections.py CATALOG: {missing}"
    numeric = [k for k, v in m.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
    unitless = [k for k in numeric if not sections.unit_of(k) and not k.endswith(".ratio")]
    assert not unitless, f"numbers without a unit: {unitless}"


def test_stall_causes_are_weighted_by_the_real_ctas_each_warp_stands_for():
    from types import SimpleNamespace as NS

    from gpusim import engine, metrics

    chip = NS(stall_causes={})
    interior, border = NS(causes={}), NS(causes={})  # a warp of each CTA tallies its own cycles
    engine.ChipModel._cause(chip, interior, engine.STALLS.index("long_scoreboard"), "global load 'ld'", 100.0)
    engine.ChipModel._cause(chip, border, engine.STALLS.index("long_scoreboard"), "mbarrier 'full'", 1000.0)
    # as each CTA completes: a representative CTA standing for 100 real ones, and the one border CTA
    engine.ChipModel._add_causes(chip, interior.causes, 100.0)
    engine.ChipModel._add_causes(chip, border.causes, 1.0)
    shares = metrics.stall_causes(chip.stall_causes)["long_scoreboard"]
    assert shares == {"global load 'ld'": 90.9, "mbarrier 'full'": 9.1}
