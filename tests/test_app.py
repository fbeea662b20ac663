"""The Streamlit app: its pure logic (gpusim/app) and every page driven through Streamlit's AppTest.

AppTest runs ``app.py`` in-process: a test sets widgets, reruns the script and reads what the page shows
(metrics, errors, tables, chart specs). The real-browser test is ``tests/browser/test_browser.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpusim.app import banks, catalog, ladder, pipeline, source, timeline
from gpusim.config import load_config
from gpusim.memory import shared

# the H100's numbers, as the simulator passes them from the config
H100 = load_config()
BANKS = {"banks": H100.shared_memory.banks, "bank_width_bytes": H100.shared_memory.bank_width_bytes}
GEO = banks.Geometry.of(H100)  # the lab draws the chosen GPU's shared memory
WARP = {"lanes": H100.sm.warp_size_threads}
SMEM = BANKS | WARP

REPO = Path(__file__).resolve().parent.parent
H100_CONFIG = REPO / "gpusim" / "configs" / "h100_sxm.toml"
APP = REPO / "app.py"
PAGES = "gpusim/app/pages"
TIMEOUT_S = 300  # first runs simulate sweeps (8 stage counts, a whole ladder); a 2-core CI machine is slow


from conftest import needs_cuda  # noqa: E402  (the "Your kernel" page compiles CUDA)


# ---- pure logic ---------------------------------------------------------------------------------------

def test_ldmatrix_column_of_128_byte_rows_conflicts_eightfold_and_128b_swizzle_removes_it():
    tile = banks.Tile(64, 64, "bf16", GEO)
    plain = banks.analyse(tile, banks.Layout(), "ldmatrix.x4")
    assert (plain.wavefronts, plain.ideal, plain.conflicts) == (32, 4, 28)
    swz = banks.analyse(tile, banks.Layout("xor", mode="128B"), "ldmatrix.x4")
    assert (swz.wavefronts, swz.conflicts) == (4, 0)
    # the picture: with the swizzle each wavefront serves one matrix of 8 lanes over all 32 banks
    assert {c.wavefront for c in swz.cells} == {0, 1, 2, 3}
    assert all(len({c.bank for c in swz.cells if c.wavefront == w}) == 32 for w in range(4))


def test_padding_a_fp32_tile_by_one_word_makes_column_reads_conflict_free():
    tile = banks.Tile(32, 32, "fp32", GEO)
    assert banks.analyse(tile, banks.Layout(), "column-wise", 4).conflicts == 31
    assert banks.analyse(tile, banks.Layout("pad", pad_elems=1), "column-wise", 4).conflicts == 0


def test_cute_swizzle_333_on_bf16_is_the_128b_mode():
    tile = banks.Tile(64, 64, "bf16", GEO)
    cute = banks.analyse(tile, banks.Layout("cute", bms=(3, 3, 3)), "ldmatrix.x4")
    xor = banks.analyse(tile, banks.Layout("xor", mode="128B"), "ldmatrix.x4")
    assert np.array_equal(cute.addresses, xor.addresses)
    assert banks.kernel_swizzle_mode(banks.Layout("cute", bms=(3, 3, 3)), 2) == "128B"
    assert banks.kernel_swizzle_mode(banks.Layout("cute", bms=(3, 4, 3)), 1) == "128B"
    assert banks.kernel_swizzle_mode(banks.Layout("cute", bms=(2, 3, 3)), 2) == "64B"
    assert banks.kernel_swizzle_mode(banks.Layout("pad", pad_elems=8), 2) is None


@pytest.mark.parametrize(("tile", "layout", "access", "width", "says"), [
    (banks.Tile(64, 32, "bf16", GEO), banks.Layout("xor", mode="128B"), "ldmatrix.x4", 16, "row is only 64 B"),
    (banks.Tile(64, 64, "bf16", GEO), banks.Layout("cute", bms=(3, 4, 3)), "row-wise", 4, "wider than the tile row"),
    (banks.Tile(64, 64, "bf16", GEO), banks.Layout("cute", bms=(3, 3, 1)), "row-wise", 4, "S >= B"),
    (banks.Tile(32, 32, "fp32", GEO), banks.Layout("pad", pad_elems=1), "ldmatrix.x4", 16, "not 16-byte aligned"),
    (banks.Tile(64, 64, "bf16", GEO), banks.Layout("pad", pad_elems=8), "wgmma operand", 16, "canonical"),
    (banks.Tile(8, 64, "bf16", GEO), banks.Layout(), "ldmatrix.x4", 16, "16-row"),
    (banks.Tile(64, 64, "fp32", GEO), banks.Layout("cute", bms=(2, 0, 2)), "row-wise", 16, "contiguous"),
    (banks.Tile(512, 512, "fp32", GEO), banks.Layout(), "row-wise", 4, "227 KB"),
])
def test_impossible_combinations_raise_one_clear_line(tile, layout, access, width, says):
    with pytest.raises(ValueError, match=says):
        banks.analyse(tile, layout, access, width)


@settings(max_examples=150, deadline=None)
@given(rows=st.sampled_from([8, 16, 32, 64, 128]), cols=st.sampled_from([16, 32, 64, 128, 256]),
       dtype=st.sampled_from(list(banks.DTYPES)), access=st.sampled_from(banks.ACCESSES),
       width=st.sampled_from([4, 8, 16]), layout=st.sampled_from([
           banks.Layout(), banks.Layout("pad", pad_elems=4), banks.Layout("pad", pad_elems=8),
           banks.Layout("xor", mode="32B"), banks.Layout("xor", mode="64B"), banks.Layout("xor", mode="128B"),
           banks.Layout("cute", bms=(3, 3, 3)), banks.Layout("cute", bms=(2, 2, 3))]))
def test_the_bank_picture_agrees_with_the_simulators_wavefront_count(rows, cols, dtype, access, width, layout):
    try:
        a = banks.analyse(banks.Tile(rows, cols, dtype, GEO), layout, access, width)
    except ValueError:
        return
    assert sum(p[2] for p in a.phases) == a.wavefronts
    assert max(c.wavefront for c in a.cells) + 1 == a.wavefronts
    assert int(a.lane_wavefront.max()) + 1 == a.wavefronts
    # no bank delivers two different words in one wavefront
    seen = {}
    for c in a.cells:
        assert seen.setdefault((c.wavefront, c.bank), c.address) == c.address
    if access not in banks.MATRIX_ACCESSES:
        assert a.wavefronts == shared.wavefronts(a.addresses, a.access.width_bytes, **SMEM)


def test_tile_picture_marks_the_words_the_instruction_reads():
    tile = banks.Tile(64, 64, "bf16", GEO)
    a = banks.analyse(tile, banks.Layout(), "ldmatrix.x4")
    cells = banks.tile_banks(tile, banks.Layout(), a.access)
    read = [c for c in cells if c["read"]]
    assert len(read) == 16 * 8  # 16 rows x 32 bytes
    assert {c["bank"] for c in read} == set(range(8))  # unswizzled: 128-byte rows, chunks 0-1 -> banks 0-7


def test_timeline_merges_overlapping_spans_and_names_activities():
    trace = [(0, "ldA", "global_ld", 0, 100), (0, "ldB", "global_ld", 50, 150), (0, "mma", "tensor", 160, 200),
             (0, "wait:full", "stall", 200, 260), (1, "stall:long_scoreboard", "stall", 0, 40),
             (1, "copy", "tma", 10, 90), (1, "ex2", "sfu", 100, 120)]
    bars, shown, end = timeline.bars(trace, warps_per_cta=4)
    by = {(b.row, b.activity): b for b in bars}
    merged = by[("CTA 0 warp 0", "global memory")]
    assert (merged.start, merged.end, merged.count, merged.ops) == (0, 150, 2, "ldA, ldB")
    assert ("CTA 0 warp 0", "barrier / async wait") in by and ("CTA 0 warp 1", "stall") in by
    assert ("CTA 0 warp 1", "TMA") in by and ("CTA 0 warp 1", "softmax (SFU)") in by
    assert shown == end == 260
    cut, shown, end = timeline.bars(trace, warps_per_cta=4, max_bars=3)
    assert len(cut) == 3 and shown < end
    wg, _, _ = timeline.bars(trace, warps_per_cta=4, warpgroups=True)
    assert {b.row for b in wg} == {"CTA 0 WG 0"}
    early = [(0, "ldA", "global_ld", 0, 100), (5, "mma", "tensor", 0, 400)]  # warp 5 is not among the rows drawn
    _, shown, end = timeline.bars(early, warps_per_cta=4, max_rows=1)
    assert shown == end == 100  # the axis ends where the drawn rows end


def test_timeline_shares_add_up_to_100_percent():
    trace = [(0, "ldA", "global_ld", 0, 100), (0, "mma", "tensor", 50, 150), (1, "wait:full", "stall", 0, 40)]
    share = timeline.busy_share(trace, warps_per_cta=4)
    assert sum(share.values()) == pytest.approx(100.0, abs=0.2)
    # the overlap of loads and MMA counts once; warp 1 waits 40 of 150 cycles and does nothing traced after
    assert share == {timeline.OTHER: 36.7, "MMA (tensor cores)": 33.3, "global memory": 16.7,
                     "barrier / async wait": 13.3}


def _busy_share_by_instants(trace):
    """The definition, instant by instant (quadratic): the reference the sweep of ``busy_share`` must match."""
    end_all = max(e[4] for e in trace)
    acts = {timeline.activity(c, n) for _, n, c, t0, t1 in trace if t1 > t0}
    first = (timeline.EXTRAPOLATED, *timeline.PRIORITY)
    order = sorted(acts, key=lambda a: (first.index(a) if a in first else len(first), a))
    warps = sorted({e[0] for e in trace})
    total: dict[str, float] = {}
    for w in warps:
        spans = [(t0, t1, timeline.activity(c, n)) for x, n, c, t0, t1 in trace if x == w and t1 > t0]
        cuts = sorted({0.0, end_all, *(t for s in spans for t in s[:2])})
        for a, b in zip(cuts, cuts[1:], strict=False):
            here = [act for t0, t1, act in spans if t0 <= (a + b) / 2 < t1]
            act = min(here, key=order.index) if here else timeline.OTHER
            total[act] = total.get(act, 0.0) + (b - a)
    simulated = len(warps) * end_all - total.pop(timeline.EXTRAPOLATED, 0.0)
    return {a: round(100.0 * v / simulated, 1) for a, v in total.items()} if simulated > 0 else {}


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.sampled_from([("ldA", "global_ld"), ("mma", "tensor"),
                                                               ("wait:full", "stall"), ("exp", "sfu"),
                                                               ("x", "odd_unit"), ("ffma", "fp32"),
                                                               ("3 iterations extrapolated", "extrapolated")]),
                          st.integers(0, 300), st.integers(0, 120)), min_size=1, max_size=40))
def test_timeline_shares_sweep_matches_the_instant_by_instant_definition(raw):
    trace = [(w, n, c, float(t0), float(t0 + d)) for w, (n, c), t0, d in raw]
    if max(e[4] for e in trace) <= 0:
        return
    got = timeline.busy_share(trace, warps_per_cta=4)
    assert got == _busy_share_by_instants(trace)


def test_timeline_shares_are_of_the_simulated_time_not_the_extrapolated_stretch():
    trace = [(0, "ldA", "global_ld", 0, 100), (0, "40 iterations extrapolated", "extrapolated", 100, 900),
             (0, "mma", "tensor", 900, 1000)]
    assert timeline.busy_share(trace, warps_per_cta=4) == {"global memory": 50.0, "MMA (tensor cores)": 50.0}
    assert timeline.extrapolated_share(trace) == 80.0


def test_stage_sweep_shared_memory_grows_until_the_227_kb_limit(h100):
    points = pipeline.smem_sweep("hgemm_mma_pipelined", (4096, 4096, 4096), {}, h100)
    fits = [p for p in points if p.fits]
    assert [p.smem_bytes for p in fits] == [s * 32 * 1024 for s in range(1, len(fits) + 1)]
    assert pipeline.max_stages(points) == 7
    eight = next(p for p in points if p.stages == 8)
    assert not eight.fits and "227 KB" in eight.error
    assert fits[0].ctas_per_sm > fits[-1].ctas_per_sm >= 1


def test_measurements_load_every_schema1_file_of_the_gpu(tmp_path, h100):
    entry = {"kernel": "hgemm_mma_pipelined", "shape": [64, 64, 64], "correct": True, "time_ns": {"median": 1000.0},
             "ncu": {"dram__bytes_read.sum": 10}, "params": {}}
    gpu = {"name": "NVIDIA H100 80GB HBM3"}
    ref = {"name": "cublas_bf16", "shape": [64, 64, 64], "time_ns": {"median": 500.0}}
    (tmp_path / "a.json").write_text(json.dumps({"schema": 1, "gpu": gpu, "kernels": [entry], "reference": [
        ref, {**ref, "name": "sdpa_flash", "causal": 1}]}))
    (tmp_path / "b.json").write_text(json.dumps({"schema": 1, "gpu": gpu, "kernels": [
        {**entry, "time_ns": {"median": 2000.0}}, {**entry, "params": {"stages": 4}, "time_ns": {"median": 3000.0}},
        {**entry, "kernel": "sgemm_coalesced", "correct": False}]}))
    (tmp_path / "c.json").write_text(json.dumps({"schema": 1, "gpu": {"name": "NVIDIA A100"}, "kernels": [
        {**entry, "kernel": "sgemm_vectorized"}]}))
    (tmp_path / "micro.json").write_text(json.dumps({"schema": 1, "gpu": gpu, "summary": {}}))
    (tmp_path / "broken.json").write_text("{")
    got, refs = ladder.load_measured(h100, tmp_path)
    assert sorted(got) == [("hgemm_mma_pipelined", (64, 64, 64), ()),
                           ("hgemm_mma_pipelined", (64, 64, 64), (("stages", "4"),))]
    shape = (64, 64, 64)
    assert ladder.lookup(got, "hgemm_mma_pipelined", shape).time_ns == 2000.0  # the later file wins
    assert ladder.lookup(got, "hgemm_mma_pipelined", shape, {"stages": 3}).time_ns == 2000.0  # 3 is the default
    assert ladder.lookup(got, "hgemm_mma_pipelined", shape, {"stages": 4}).time_ns == 3000.0
    assert ladder.lookup(got, "hgemm_mma_pipelined", shape, {"stages": 5}) is None
    assert [r.name for r in refs] == ["cublas_bf16"]  # the causal baseline is not the ladder's
    assert ladder.references(refs, "hgemm", shape) == refs and ladder.references(refs, "sgemm", shape) == []
    assert ladder.measured_shapes(got, ["hgemm_mma_pipelined"]) == [shape]


def test_repository_measurements_cover_the_ladders(h100):
    got, refs = ladder.load_measured(h100)
    names = {k for k, _, params in got if not params}
    assert set(catalog.kernels("sgemm")) <= names
    assert {"hgemm_mma", "hgemm_mma_pipelined", "fa2"} <= names
    assert any(r.name.startswith("cublas") for r in refs)


def test_why_coalescing_beats_the_naive_kernel(predicted):
    lo = predicted("sgemm_naive", (1024, 1024, 1024))
    hi = predicted("sgemm_coalesced", (1024, 1024, 1024))
    why = ladder.why_faster("sgemm_naive", lo, "sgemm_coalesced", hi, H100)
    assert why.speedup > 1
    assert "sectors per request" in why.headline
    flipped = ladder.why_faster("sgemm_coalesced", hi, "sgemm_naive", lo, H100)
    assert "slower" in flipped.headline


def test_a_timing_only_rerun_keeps_the_counters_of_the_run_before(h100):
    # fp32knobs-2026-11-24.json re-times the FP32 rungs at their defaults without ncu: the ladder's counters stay
    got, _ = ladder.load_measured(h100)
    m = ladder.lookup(got, "sgemm_1d_blocktiling", (4096, 4096, 4096))
    assert m.ncu.get("dram__bytes_read.sum", 0) > 1e9


def test_why_2d_blocktiling_beats_1d_names_what_moved(predicted, h100):
    # the case: the app said "None of the memory or instruction metrics moved much" over an empty table
    shape = (4096, 4096, 4096)
    got, _ = ladder.load_measured(h100)
    lo, hi = predicted("sgemm_1d_blocktiling", shape), predicted("sgemm_2d_blocktiling", shape)
    a, b = ladder.lookup(got, "sgemm_1d_blocktiling", shape), ladder.lookup(got, "sgemm_2d_blocktiling", shape)
    why = ladder.why_faster("sgemm_1d_blocktiling", lo, "sgemm_2d_blocktiling", hi, h100,
                            ladder.measured_metrics(a), ladder.measured_metrics(b))
    assert "moved much" not in why.headline and "L1/shared pipe" in why.headline
    dram = next(mv for mv in why.moves if mv.label.startswith("DRAM bytes"))
    assert dram.measured_factor < 0.6 and dram.factor < 0.6 and dram.agrees  # 1.29 -> 0.62 GB measured


@needs_cuda
def test_sass_lines_add_up_to_the_kernels_counters(h100):
    # the per-line view of "Your kernel" (ncu's Source page) must add up to the whole-kernel counters it explains
    from gpusim import bottleneck

    ex = source.EXAMPLES["transpose.cu: transpose_shared (no padding)"]
    kernels = source.compile_kernels(REPO / ex.path, ex.defines, ex.compiler)
    run = source.Run(str(REPO / ex.path), "", ex.kernel, ex.grid, ex.block, ex.args)
    m, sim = source.simulate(source.emulate(run, kernels, h100), h100, ex.path)
    program = next(k for k in kernels if k.name == ex.kernel).program
    lines, lost = source.sass_lines(sim, program)
    assert not lost
    conflicts = sum(x.conflicts for x in lines)
    assert conflicts == m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] + m[
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"] > 0
    assert sum(x.sectors for x in lines) == m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] + m[
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"]
    assert sum(x.l1_cycles for x in lines) == bottleneck._shared_wavefronts(m) + bottleneck._global_lines(m)
    # the four column reads of the tile (one IR op, a run of four LDS): 32 wavefronts each, all the conflicts
    lds = [x for x in lines if x.mnemonic == "LDS"]
    assert len(lds) == 4 and len({x.ops[0] for x in lds}) == 1 and all(x.run == 4 for x in lds)
    assert all(x.per_instruction(x.wavefronts) == 32 for x in lds)
    assert sum(x.conflicts for x in lds) == conflicts
    assert all(x.per_instruction(x.sectors) == 4 for x in lines if x.mnemonic in ("LDG", "STG"))


def test_your_kernel_inputs_parse_or_say_why():
    assert source.parse_dims("64, 64", "grid") == (64, 64, 1)
    assert source.parse_args("--arg n=4096\n\n x=f32[16]  \n# a comment") == ("n=4096", "x=f32[16]")
    assert source.parse_defines("PAD=1 -DTILE=32, FAST") == ("PAD=1", "TILE=32", "FAST")
    for text in ("0,1", "a", "1,2,3,4"):
        with pytest.raises(source.InputError, match="positive integers"):
            source.parse_dims(text, "grid")
    with pytest.raises(source.InputError, match="NAME=VALUE"):
        source.parse_defines("1PAD")
    sig = [("const float*", "x"), ("__half*", "y"), ("float", "s"), ("int", "n")]
    assert source.prefill_args(sig, 4096) == ("x=f32[4096]", "y=f16[4096]", "s=1.0", "n=4096")
    with pytest.raises(source.InputError, match=r"expected a CUDA source \(\.cu\)"):
        source.write_source(b"x", "kernel.py")


def test_catalog_turns_bad_input_into_messages():
    assert catalog.parse_shape("4096, 4096,4096", "sgemm_naive") == (4096, 4096, 4096)
    for text, says in (("4096,4096", "needs 3 values"), ("a,b,c", "expected 3 integers"), ("0,1,1", "positive")):
        with pytest.raises(ValueError, match=says):
            catalog.parse_shape(text, "sgemm_naive")
    out = catalog.predict("sgemm_2d_blocktiling", (100, 128, 128), None, str(H100_CONFIG))
    assert not out.ok and "not a multiple" in out.error
    out = catalog.predict("sgemm_naive", (64, 64, 64), {"nope": 1}, str(H100_CONFIG))
    assert not out.ok and "unknown parameter" in out.error
    assert "hgemm_mma_pipelined" in catalog.kernels_with("stages")
    assert "sgemm_naive" not in catalog.kernels_with("swizzle")
    assert set(catalog.families()) >= {"sgemm", "hgemm", "attention"}
    labels = catalog.config_choices()
    assert len(labels) >= 2 and next(iter(labels.values())).endswith("h100_sxm.toml")


# ---- the pages, through AppTest ------------------------------------------------------------------------

@pytest.fixture
def app():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(APP), default_timeout=TIMEOUT_S)
    at.run()
    assert not at.exception
    return at


def goto(at, page: str):
    at.switch_page(f"{PAGES}/{page}.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def metric(at, label: str) -> str:
    found = [m.value for m in at.metric if m.label == label]
    assert found, f"no metric {label!r}; shown: {[m.label for m in at.metric]}"
    return found[0]


def rerun(at):
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def gantt(at):
    """The pipeline lab's timeline chart (the one chart with bars offset by activity inside a row)."""
    return next(c for c in at.get("vega_lite_chart") if "yOffset" in c.proto.spec)


def chart_data(chart, column: str | None = None):
    """The data an Altair chart was given (Streamlit sends each dataset as an Arrow stream): the first dataset,
    or the first with ``column``."""
    import pyarrow as pa

    for d in chart.proto.datasets:
        df = pa.ipc.open_stream(d.data.data).read_all().to_pandas()
        if column is None or column in df:
            return df
    raise AssertionError(f"no dataset with {column!r}")


def chart_with(at, field: str):
    return next(c for c in at.get("vega_lite_chart") if f'"{field}"' in c.proto.spec)


def errors(at) -> str:
    return " | ".join(e.value for e in at.error)


def test_swizzle_lab_128b_swizzle_removes_ldmatrix_conflicts(app):
    at = app  # the swizzle lab is the default page: 64 x 64 bf16, ldmatrix.x4, no swizzle
    assert at.selectbox(key="sw_access").value == "ldmatrix.x4"
    assert metric(at, "bank conflicts") == "28"
    assert metric(at, "wavefronts") == "32"
    unswizzled = float(metric(at, "predicted kernel time").split()[0])
    at.selectbox(key="sw_layout").set_value("XOR 128B")
    rerun(at)
    assert metric(at, "bank conflicts") == "0"
    assert metric(at, "wavefronts") == "4"
    assert float(metric(at, "predicted kernel time").split()[0]) < unswizzled  # hgemm_mma with a 128B layout
    bars = chart_data(chart_with(at, "swizzle"), "source")
    assert set(bars["source"]) == {"predicted", "measured"}  # hgemm_mma's twin was run with every layout
    assert set(bars["swizzle"]) == {"none", "32B", "64B", "128B"}
    at.selectbox(key="sw_layout").set_value("CuTe Swizzle<B,M,S>")
    rerun(at)  # defaults B=3, M=3, S=3: the 128B mode on 2-byte elements
    assert metric(at, "bank conflicts") == "0"


def test_swizzle_lab_column_reads_and_padding(app):
    at = app
    at.number_input(key="sw_rows").set_value(32)
    at.number_input(key="sw_cols").set_value(32)
    at.selectbox(key="sw_dtype").set_value("fp32")
    at.selectbox(key="sw_access").set_value("column-wise")
    rerun(at)
    assert metric(at, "bank conflicts") == "31"
    at.selectbox(key="sw_layout").set_value("padding")
    rerun(at)
    at.number_input(key="sw_pad").set_value(1)
    rerun(at)
    assert metric(at, "bank conflicts") == "0"
    assert any('"wavefront"' in c.proto.spec for c in at.get("vega_lite_chart"))  # the bank heatmap


def test_swizzle_lab_impossible_layout_is_a_message_not_a_trace(app):
    at = app
    at.number_input(key="sw_cols").set_value(32)  # bf16: 64-byte rows
    at.selectbox(key="sw_layout").set_value("XOR 128B")
    rerun(at)
    assert "impossible" in errors(at) and "spans 128 B but a row is only 64 B" in errors(at)
    assert not [m for m in at.metric if m.label == "bank conflicts"]


def test_pipeline_lab_stages_change_the_time_and_too_many_do_not_fit(app):
    at = goto(app, "pipeline_lab")
    at.selectbox(key="pl_kernel").set_value("hgemm_mma_pipelined")
    rerun(at)
    slider = at.slider(key="pl_hgemm_mma_pipelined_stages")
    slider.set_value(1)
    rerun(at)
    one = metric(at, "predicted time")
    at.slider(key="pl_hgemm_mma_pipelined_stages").set_value(3)
    rerun(at)
    three = metric(at, "predicted time")
    assert one != three
    assert metric(at, "shared memory per CTA") == "96.0 KB"
    bars = chart_data(gantt(at))
    assert {"MMA (tensor cores)", "global memory", "shared memory"} <= set(bars["activity"])
    assert (bars["end"] > bars["start"]).all()
    at.slider(key="pl_hgemm_mma_pipelined_stages").set_value(8)
    rerun(at)
    assert "8 stages do not fit" in errors(at) and "227 KB" in errors(at)
    assert metric(at, "predicted time") == "does not fit"
    assert not at.radio  # no timeline for a launch that cannot happen
    # the twin was measured at 2, 3 and 4 stages: those sit beside the prediction
    assert set(chart_data(chart_with(at, "measured (ms)"), "measured (ms)")["stages"]) >= {2, 3, 4}
    at.slider(key="pl_hgemm_mma_pipelined_stages").set_value(2)
    rerun(at)
    assert not at.error
    assert set(chart_data(gantt(at))["row"]) == {"CTA 0 WG 0", "CTA 0 WG 1", "CTA 1 WG 0", "CTA 1 WG 1"}
    at.radio(key="pl_rows").set_value("per warp")
    rerun(at)
    rows = chart_data(gantt(at))["row"]
    assert {"CTA 0 warp 0", "CTA 0 warp 7"} <= set(rows)  # 8 warps per CTA


def test_pipeline_lab_bad_shape_is_a_message(app):
    at = goto(app, "pipeline_lab")
    at.selectbox(key="pl_kernel").set_value("hgemm_mma_pipelined")
    rerun(at)
    at.text_input(key="pl_hgemm_mma_pipelined_shape").set_value("4000,4096,4096")
    rerun(at)
    assert "cannot run this input" in errors(at) and "multiple" in errors(at)


def test_ladder_shows_every_rung_and_explains_a_click(app):
    at = goto(app, "ladder")
    assert at.selectbox(key="ld_family").value == "sgemm"
    table = at.dataframe[-1].value
    assert list(table["kernel"]) == catalog.kernels("sgemm")
    assert table["measured time (ms)"].notna().all()  # every FP32 rung was measured at 4096^3
    at.selectbox(key="ld_rung").set_value("sgemm_coalesced")
    rerun(at)
    text = " ".join(m.value for m in at.markdown)
    assert "sgemm_coalesced is" in text and "faster than sgemm_naive" in text
    assert "sectors per request" in text
    at.selectbox(key="ld_family").set_value("hgemm")
    rerun(at)
    table = at.dataframe[-1].value
    assert list(table["kernel"]) == catalog.kernels("hgemm")
    at.selectbox(key="ld_rung").set_value("hgemm_mma_swizzled")
    rerun(at)
    text = " ".join(m.value for m in at.markdown)
    assert "hgemm_mma_swizzled is" in text and "than hgemm_mma" in text


def test_explorer_metrics_stalls_verdict_and_trace(app):
    at = goto(app, "explorer")
    at.selectbox(key="ex_kernel").set_value("sgemm_coalesced")
    rerun(at)
    # streams C in and out with one K tile: memory-bound, so the H200's faster HBM shows
    at.text_input(key="ex_sgemm_coalesced_shape").set_value("4096,4096,32")
    rerun(at)
    assert metric(at, "predicted time").endswith(("ms", "µs"))
    assert any(i.value.startswith("**Verdict:**") for i in at.info)
    names = set(at.dataframe[-1].value["ncu metric"])
    assert {"gpu__time_duration.sum", "dram__bytes_read.sum", "launch__registers_per_thread"} <= names
    assert at.get("download_button")
    def time_ns(at):
        table = at.dataframe[-1].value
        return table.loc[table["ncu metric"] == "gpu__time_duration.sum", "value"].iloc[0]

    h100_time = time_ns(at)
    assert any("H100" in c.value for c in at.caption)
    at.sidebar.selectbox(key="config").set_value(next(k for k in catalog.config_choices() if k.startswith("H200")))
    rerun(at)
    assert any("H200" in c.value for c in at.caption)
    assert time_ns(at) != h100_time  # the H200's HBM and L2 differ, and this kernel is bound by them
    assert any("Unvalidated" in w.value for w in at.warning)  # no H200 kernel measurements are committed


def test_explorer_speed_of_light_names_the_limiter(app):
    at = goto(app, "explorer")
    at.selectbox(key="ex_kernel").set_value("mem_transpose_shared")
    rerun(at)
    at.text_input(key="ex_mem_transpose_shared_shape").set_value("1024")
    rerun(at)
    sol = next(d.value for d in at.dataframe if "% of peak" in d.value.columns)
    top = sol.loc[sol["% of peak"].idxmax(), "unit"]
    assert top == "L1/shared pipe" and (sol["% of peak"] <= 100).all()
    assert all(isinstance(x, str) and x for x in sol["peak"])  # every peak with its unit
    verdict = next(i.value for i in at.info if i.value.startswith("**Verdict:**"))
    assert "L1/shared pipe" in verdict and "bank conflicts" in verdict
    stalls = next(d.value for d in at.dataframe if "what the model's warps waited on" in d.value.columns)
    assert stalls["what the model's warps waited on"].str.len().min() > 0  # no blank explanation
    assert not any("Unvalidated" in w.value for w in at.warning)  # the membound family is measured on the H100


def test_explorer_bad_input_is_a_message(app):
    at = goto(app, "explorer")
    at.selectbox(key="ex_kernel").set_value("sgemm_2d_blocktiling")
    rerun(at)
    at.text_input(key="ex_sgemm_2d_blocktiling_shape").set_value("100,128,128")
    rerun(at)
    assert "No prediction" in errors(at) and "not a multiple" in errors(at)
    at.text_input(key="ex_sgemm_2d_blocktiling_shape").set_value("big")
    rerun(at)
    assert "expected 3 integers" in errors(at)
    at.selectbox(key="ex_kernel").set_value("hgemm_ws")
    rerun(at)
    at.selectbox(key="ex_hgemm_ws_stages").set_value(8)
    rerun(at)
    assert "No prediction" in errors(at) and "shared memory" in errors(at)


def test_explorer_loads_a_user_kernel_file_and_shows_a_bad_one_as_one_line(app, tmp_path):
    from gpusim import loader
    from gpusim.ir import REGISTRY

    saved, sources = dict(REGISTRY), set(loader._loaded_sources)
    try:
        at = goto(app, "explorer")
        bad = tmp_path / "bad.py"
        bad.write_text("import no_such_module_for_the_app\n")
        at.text_input(key="ex_kernels_path").set_value(str(bad))
        rerun(at)
        assert f"{bad}:1: ModuleNotFoundError" in errors(at)
        at.text_input(key="ex_kernels_path").set_value(str(REPO / "examples"))
        rerun(at)
        assert not errors(at)
        at.selectbox(key="ex_kernel").set_value("example_transpose_padded")
        rerun(at)
        at.text_input(key="ex_example_transpose_padded_shape").set_value("1024")
        rerun(at)
        assert metric(at, "predicted time").endswith(("ms", "µs"))
        assert metric(at, "DRAM throughput").endswith("B/s")  # no FLOPs declared: the page leads with bytes/s
        assert any("Unvalidated" in w.value for w in at.warning)  # a user's kernel has no committed measurements
        at = goto(at, "pipeline_lab")
        at.text_input(key="pl_kernels_path").set_value(str(tmp_path / "missing"))
        rerun(at)
        assert "no such file or folder" in errors(at)
    finally:
        REGISTRY.clear()
        REGISTRY.update(saved)
        loader._loaded_sources.clear()
        loader._loaded_sources.update(sources)


def test_sweep_page_opens_on_stage_counts_that_launch(app):
    at = goto(app, "sweep")
    stages = at.multiselect(key="sp_hgemm_ws_stages")
    assert len(stages.value) > 1  # a sweep that varies a knob
    # stages 5..8 of 48 KB each with bn=256 ask for more shared memory than a CTA may have: not offered at first
    assert stages.value == [1, 2, 3, 4] and "8" in stages.options


def test_sweep_page_heatmap_front_and_a_point_opened_in_the_explorer(app, tmp_path, monkeypatch):
    monkeypatch.setenv("GPUSIM_CACHE_DIR", str(tmp_path))
    at = goto(app, "sweep")
    assert at.selectbox(key="sp_kernel").value == "hgemm_ws"
    at.text_input(key="sp_hgemm_ws_shape").set_value("512,512,512")
    at.multiselect(key="sp_hgemm_ws_stages").set_value([2, 3, 4, 5])
    at.multiselect(key="sp_hgemm_ws_bn").set_value([128, 256])
    rerun(at)
    at.button(key="sp_run").click()
    rerun(at)
    assert metric(at, "points") == "8" and metric(at, "cannot launch") == "1"  # stages=5 x bn=256: 241 KB
    heat = chart_data(next(c for c in at.get("vega_lite_chart") if '"rect"' in c.proto.spec), "stages")
    assert set(zip(heat["stages"], heat["bn"], strict=True)) == {(s, b) for s in "2345" for b in ("128", "256")} - {
        ("5", "256")}  # the heatmap's empty cell: the point that cannot launch
    assert any('"on the front"' in c.proto.spec for c in at.get("vega_lite_chart"))
    table = at.dataframe[-1].value
    assert table["cannot launch"].str.contains("shared memory").sum() == 1
    pick = at.selectbox(key="sp_point").options[-1]  # the slowest point that launches
    at.selectbox(key="sp_point").set_value(pick)
    rerun(at)
    at.button(key="sp_open").click()
    rerun(at)
    assert at.selectbox(key="ex_kernel").value == "hgemm_ws"
    assert at.text_input(key="ex_hgemm_ws_shape").value == "512,512,512"
    stages, bn = (int(pick.split(f"{k}=")[1].split(",")[0].split(" ")[0]) for k in ("stages", "bn"))
    assert (at.selectbox(key="ex_hgemm_ws_stages").value, at.selectbox(key="ex_hgemm_ws_bn").value) == (stages, bn)
    assert metric(at, "predicted time").endswith(("ms", "µs"))


def test_sweep_page_loads_a_table_and_bad_input_is_a_message(app, tmp_path, monkeypatch):
    from gpusim import cli

    monkeypatch.setenv("GPUSIM_CACHE_DIR", str(tmp_path))
    out = tmp_path / "s.parquet"
    assert cli.main(["sweep", "hgemm_persistent", "--shape", "512,512,512", "--vary", "order=row,grouped,hilbert",
                     "--workers", "1", "-o", str(out)]) == 0
    at = goto(app, "sweep")
    at.get("file_uploader")[0].set_value(("s.parquet", out.read_bytes(), "application/octet-stream"))
    rerun(at)
    assert metric(at, "points") == "3" and metric(at, "cannot launch") == "0"
    line = chart_data(chart_with(at, "best predicted time (us)"), "order")  # a line: one knob varies
    assert list(line["order"]) == ["row", "grouped", "hilbert"]
    at.get("file_uploader")[0].set_value(("x.parquet", b"not parquet", "application/octet-stream"))
    rerun(at)
    assert "Cannot read x.parquet" in errors(at)
    at.selectbox(key="sp_kernel").set_value("sgemm_2d_blocktiling")
    rerun(at)
    at.text_input(key="sp_sgemm_2d_blocktiling_BK").set_value("8..")
    rerun(at)
    assert "needs integer ends" in errors(at)
    at.text_input(key="sp_sgemm_2d_blocktiling_BK").set_value("1..300")
    rerun(at)
    at.button(key="sp_run").click()
    rerun(at)
    assert "Cannot sweep" in errors(at) and "--max-points 256" in errors(at)


@needs_cuda
def test_your_kernel_predicts_an_example_down_to_its_sass_lines(app):
    at = goto(app, "your_kernel")  # opens on examples/transpose.cu's transpose_shared, no padding
    assert at.selectbox(key="yk_example").value == "transpose.cu: transpose_shared (no padding)"
    conflicted = metric(at, "predicted time")
    verdict = next(i.value for i in at.info if i.value.startswith("**Verdict:**"))
    assert "L1/shared" in verdict and "bank conflicts" in verdict
    assert any("Unvalidated prediction" in w.value and "gpusim validate --frontend" in w.value for w in at.warning)
    lines = next(d.value for d in at.dataframe if "IR op" in d.value.columns)
    lds = lines[lines["SASS"].str.startswith("LDS")]
    assert len(lds) == 4 and (lds["wavefronts/instruction"] == 32).all()  # a column of the tile: one bank
    ncu = next(d.value for d in at.dataframe if "ncu metric" in d.value.columns)
    ld_conflicts = ncu.loc[ncu["ncu metric"] == "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "value"]
    assert ld_conflicts.iloc[0] == f"{lds['bank conflicts'].sum():,.0f} conflict"  # the table's words, its sum
    bars = chart_data(chart_with(at, "cycles"), "work")  # each line's L1/shared cycles, conflicts apart
    assert bars.loc[bars["work"] == "shared: bank conflicts", "cycles"].sum() == lds["bank conflicts"].sum()
    assert at.get("download_button")
    at.selectbox(key="yk_example").set_value("transpose.cu: transpose_shared -D PAD=1")
    rerun(at)
    lines = next(d.value for d in at.dataframe if "IR op" in d.value.columns)
    assert (lines.loc[lines["SASS"].str.startswith("LDS"), "bank conflicts"] == 0).all()
    assert float(metric(at, "predicted time").split()[0]) < float(conflicted.split()[0])  # both in µs
    at.selectbox(key="yk_example").set_value("twin: mem_transpose_padded (2048 x 2048)")
    rerun(at)
    assert metric(at, "measured on the H100").endswith("µs")  # a twin at its measured launch
    assert any("validation twin" in w.value for w in at.warning)
    at.sidebar.selectbox(key="config").set_value(next(k for k in catalog.config_choices() if k.startswith("H200")))
    rerun(at)
    assert not [m for m in at.metric if m.label.startswith("measured on")]  # this twin has no H200 measurement
    assert any("Unvalidated prediction" in w.value for w in at.warning)


@needs_cuda
def test_your_kernel_bad_input_is_one_line(app):
    at = goto(app, "your_kernel")
    args = at.text_area(key="yk_transpose_cu_transpose_shared_no_padding_transpose_shared_args")
    args.set_value("in=f32[2048*2048]\nout=f32[2048*2048]")
    rerun(at)
    assert errors(at) == "**No prediction:** transpose_shared: missing argument: n (int)"
    at.selectbox(key="yk_example").set_value(next(o for o in at.selectbox(key="yk_example").options
                                                  if o.startswith("your own")))
    rerun(at)
    at.text_area(key="yk_paste").set_value("__global__ void k(float* x) { x[threadIdx.x] = 1.0f }")
    rerun(at)
    assert "Cannot compile" in errors(at) and "kernel.cu(1): error: expected a \";\"" in errors(at)
    at.text_area(key="yk_paste").set_value(
        "__global__ void count(int* out, int n) { if (threadIdx.x == 0) printf(\"%d\\n\", n); out[threadIdx.x] = n; }")
    rerun(at)
    assert at.text_area(key="yk_own_count_args").value == "out=i32[262144]\nn=262144"  # from the signature
    assert "calls printf (vprintf" in errors(at)
    at.text_input(key="yk_own_count_block").set_value("2048")
    rerun(at)
    assert "2048 threads per block, CUDA allows 1024" in errors(at)
    at.get("file_uploader")[0].set_value(("transpose.cu", (REPO / "examples" / "transpose.cu").read_bytes(),
                                          "text/plain"))  # an upload wins over the pasted text
    rerun(at)
    assert at.selectbox(key="yk_own_kernel").options == ["transpose_guarded", "transpose_shared", "transpose_naive"]
    assert "out-of-bounds" in errors(at)  # tensors of one element per thread, n = every thread: the guess is wrong
    at.text_area(key="yk_own_transpose_guarded_args").set_value("in=f32[64*64]\nout=f32[64*64]\nn=60")
    at.text_input(key="yk_own_transpose_guarded_grid").set_value("2,2")
    at.text_input(key="yk_own_transpose_guarded_block").set_value("32,8")
    rerun(at)
    assert not errors(at) and metric(at, "predicted time").endswith("µs")
    assert all("\n" not in e.value for e in at.error) and not at.exception


def test_the_bank_lab_draws_the_chosen_gpus_shared_memory():
    """The swizzle lab's geometry comes from the config the sidebar chose (app/banks.py loads none of its own): a
    warp's row of 32 words takes one wavefront in the H100's 32 banks and two in 16, and the tile limit is the
    config's."""
    import dataclasses

    sixteen = dataclasses.replace(GEO, banks=16)
    row = banks.Layout()
    assert banks.analyse(banks.Tile(8, 32, "fp32", GEO), row, "row-wise", 4).wavefronts == 1
    assert banks.analyse(banks.Tile(8, 32, "fp32", sixteen), row, "row-wise", 4).wavefronts == 2
    small = dataclasses.replace(GEO, max_tile_bytes=1024)
    with pytest.raises(ValueError, match="1,024 B"):
        banks.analyse(banks.Tile(64, 64, "fp32", small), row, "row-wise", 4)
    assert banks.Geometry.of(load_config(REPO / "gpusim" / "configs" / "h200.toml")) == GEO  # same SM
