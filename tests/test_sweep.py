"""Design-space sweeps (``gpusim sweep``): the grid, unlaunchable points, the cache, determinism across local
workers and a Dask cluster, the report, and bad input. Small shapes (hgemm_ws at 512^3 predicts in ~0.05 s)."""

from __future__ import annotations

import pytest

from gpusim import cli, sweep
from gpusim.ir import KernelError

SHAPE = (512, 512, 512)
H100 = "gpusim/configs/h100_sxm.toml"  # the bundled configs (configs/ links there)
H200 = "gpusim/configs/h200.toml"


@pytest.fixture
def cache(tmp_path):
    return sweep.Cache(tmp_path / "cache")


@pytest.fixture(autouse=True)
def _private_cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUSIM_CACHE_DIR", str(tmp_path / "cli-cache"))


def table_bytes(p, outcome, path) -> bytes:
    cols, rows = sweep.rows(p, outcome)
    sweep.write_parquet(cols, rows, path, p.varied, p.dims)
    return path.read_bytes()


# ---- the grid ---------------------------------------------------------------------------------------------------

def test_values_and_ranges_expand_in_order_without_duplicates():
    assert sweep.parse_values("stages", "1..4,8") == ["1", "2", "3", "4", "8"]
    assert sweep.parse_values("stages", "3,1..3") == ["3", "1", "2"]
    assert sweep.parse_values("swizzle", "64B, 128B") == ["64B", "128B"]
    assert sweep.parse_vary(["stages=2..3", "bn=128,256"]) == {"stages": ["2", "3"], "bn": ["128", "256"]}


def test_every_combination_in_grid_order_the_last_knob_fastest():
    p = sweep.plan(["hgemm_ws"], [SHAPE, (1024, 1024, 1024)], sweep.parse_vary(["stages=2..4", "bn=128,256"]),
                   configs=[H100, H200])
    assert len(p.points) == 2 * 2 * 3 * 2
    assert [dict(x.knobs) for x in p.points[:3]] == [{"stages": "2", "bn": "128"}, {"stages": "2", "bn": "256"},
                                                     {"stages": "3", "bn": "128"}]
    assert [(x.config, x.shape) for x in p.points[::6]] == [(0, SHAPE), (0, (1024,) * 3), (1, SHAPE), (1, (1024,) * 3)]
    assert p.varied == ["stages", "bn"] and p.knob_columns == ["stages", "bn", "swizzle"]
    assert p.config_files == [H100, H200]


def test_unlaunchable_points_are_rows_with_their_one_line_reason(cache):
    p = sweep.plan(["hgemm_ws"], [SHAPE], sweep.parse_vary(["stages=4..6", "bn=128,256"]))
    cols, rows = sweep.rows(p, sweep.run(p, workers=1, cache=cache))
    assert len(rows) == 6
    failed = {(r["stages"], r["bn"]): r[sweep.ERROR] for r in rows if r[sweep.ERROR]}
    assert set(failed) == {(5, 256), (6, 256)}
    assert all("shared memory" in why and "\n" not in why for why in failed.values())
    assert all(r[sweep.TIME] is None for r in rows if r[sweep.ERROR])
    assert all(r[sweep.TIME] > 0 for r in rows if not r[sweep.ERROR])
    # divisibility: K=520 is a multiple of BK=8, not of 16
    p = sweep.plan(["sgemm_2d_blocktiling"], [(256, 256, 520)], sweep.parse_vary(["BK=8,16"]))
    _, rows = sweep.rows(p, sweep.run(p, workers=1, cache=cache))
    assert rows[0][sweep.ERROR] is None and "not a multiple of BK=16" in rows[1][sweep.ERROR]


def test_table_columns_knobs_config_and_ncu_metrics(cache, tmp_path):
    import pyarrow.parquet as pq

    p = sweep.plan(["hgemm_persistent"], [SHAPE], sweep.parse_vary(["order=row,hilbert"]))
    out = tmp_path / "t.parquet"
    table_bytes(p, sweep.run(p, workers=1, cache=cache), out)
    t = pq.read_table(out)
    names = t.column_names
    assert names[:11] == ["config", "config_file", "kernel", "shape", "M", "N", "K", "stages", "bn", "swizzle",
                          "order"]
    assert names[11] == sweep.ERROR and names[12] == sweep.TIME
    assert {"dram__bytes_read.sum", "launch__shared_mem_per_block", sweep.OCCUPANCY} <= set(names)
    assert any(c.startswith("gpusim__utilization_pct.") for c in names)
    rows = t.to_pylist()
    assert [r["order"] for r in rows] == ["row", "hilbert"] and {r["stages"] for r in rows} == {3}
    assert rows[0]["config"].startswith("NVIDIA H100") and rows[0]["config_file"] == H100
    assert str(t.schema.field("stages").type) == "int64" and str(t.schema.field("M").type) == "int64"


# ---- caching, determinism, interruption ------------------------------------------------------------------------

def test_rerun_computes_nothing_and_a_grown_sweep_only_the_new_points(cache):
    p = sweep.plan(["hgemm_ws"], [SHAPE], sweep.parse_vary(["stages=2..3"]))
    first = sweep.run(p, workers=1, cache=cache)
    assert (first.computed, first.cached) == (2, 0)
    again = sweep.run(p, workers=1, cache=cache)
    assert (again.computed, again.cached) == (0, 2) and again.results == first.results
    grown = sweep.plan(["hgemm_ws"], [SHAPE], sweep.parse_vary(["stages=1..4"]))
    more = sweep.run(grown, workers=1, cache=cache)
    assert (more.computed, more.cached) == (2, 2)
    # the default value named explicitly is the same point as the default (stages=3 is hgemm_ws's default)
    plain = sweep.run(sweep.plan(["hgemm_ws"], [SHAPE], {}), workers=1, cache=cache)
    assert (plain.computed, plain.cached) == (0, 1)
    other_gpu = sweep.run(sweep.plan(["hgemm_ws"], [SHAPE], {}, configs=[H200]), workers=1, cache=cache)
    assert other_gpu.computed == 1


def test_one_and_two_workers_write_the_same_bytes(tmp_path):
    p = sweep.plan(["hgemm_ws"], [SHAPE], sweep.parse_vary(["stages=1..5", "bn=128,256"]))
    one = table_bytes(p, sweep.run(p, workers=1), tmp_path / "1.parquet")
    two = table_bytes(p, sweep.run(p, workers=2), tmp_path / "2.parquet")
    assert one == two


def test_a_dask_cluster_writes_the_same_bytes_as_local_workers(tmp_path):
    distributed = pytest.importorskip("distributed")
    p = sweep.plan(["hgemm_ws", "hgemm_persistent"], [SHAPE], sweep.parse_vary(["stages=2..4"]))
    local = table_bytes(p, sweep.run(p, workers=2), tmp_path / "local.parquet")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as lc:
        on_cluster = sweep.run(p, scheduler=lc.scheduler_address)
    assert on_cluster.computed == len(p.points)
    assert table_bytes(p, on_cluster, tmp_path / "cluster.parquet") == local


def test_interrupted_sweep_keeps_what_it_computed(cache, monkeypatch, tmp_path, capsys):
    calls = []
    real = sweep.evaluate

    def flaky(task):
        if len(calls) == 2:
            raise KeyboardInterrupt
        calls.append(task)
        return real(task)

    monkeypatch.setattr(sweep, "evaluate", flaky)
    out = tmp_path / "partial.parquet"
    rc = cli.main(["sweep", "hgemm_ws", "--shape", "512,512,512", "--vary", "stages=1..4", "--workers", "1",
                   "-o", str(out)])
    assert rc == 130
    assert "interrupted: 2 of 4 points done" in capsys.readouterr().err
    _, rows, meta = sweep.read_parquet(out)
    assert meta == {"varied": ["stages"], "dims": ["M", "N", "K"]}
    assert [r["stages"] for r in rows] == [1, 2]
    monkeypatch.setattr(sweep, "evaluate", real)
    assert cli.main(["sweep", "hgemm_ws", "--shape", "512,512,512", "--vary", "stages=1..4", "--workers", "1"]) == 0
    assert "2 points computed, 2 from the cache" in capsys.readouterr().out


# ---- the report -------------------------------------------------------------------------------------------------

def test_cli_prints_top_points_fronts_and_writes_table_and_heatmap(tmp_path, capsys):
    out, fig = tmp_path / "s.parquet", tmp_path / "s.png"
    rc = cli.main(["sweep", "hgemm_ws", "--shape", "512,512,512", "--vary", "stages=1..5", "--vary", "bn=128,256",
                   "-o", str(out), "--figure", str(fig), "--workers", "2"])
    text = capsys.readouterr().out
    assert rc == 0
    assert "10 points: 9 predicted, 1 cannot launch" in text and "top 9 on NVIDIA H100" in text
    assert "Pareto front, time vs shared memory per CTA" in text and "time vs occupancy" in text
    assert fig.read_bytes()[:4] == b"\x89PNG" and len(sweep.read_parquet(out)[1]) == 10


def test_pareto_front_keeps_only_undominated_points():
    rows = [{sweep.TIME: t, sweep.SMEM: s, sweep.ERROR: None} for t, s in ((10, 50), (12, 40), (11, 60), (20, 10),
                                                                            (25, 10))]
    assert [(r[sweep.TIME], r[sweep.SMEM]) for r in sweep.pareto(rows, sweep.SMEM)] == [(10, 50), (12, 40), (20, 10)]
    occ = [{sweep.TIME: t, sweep.OCCUPANCY: o, sweep.ERROR: None} for t, o in ((10, 20), (12, 50), (13, 40))]
    assert [r[sweep.TIME] for r in sweep.pareto(occ, sweep.OCCUPANCY, maximize=True)] == [10, 12]


def test_pareto_front_drops_trades_within_the_model_error():
    rows = [{sweep.TIME: t, sweep.SMEM: s, sweep.ERROR: None} for t, s in ((10, 50), (10.5, 40), (20, 10))]
    assert len(sweep.pareto(rows, sweep.SMEM)) == 3
    # 10 against 10.5 is a 5% gain: under a 10% error it buys nothing, so the point using more memory goes
    assert [r[sweep.TIME] for r in sweep.pareto(rows, sweep.SMEM, min_gain_pct=10)] == [10.5, 20]
    assert 0 < sweep.model_error_pct() < 25  # the validation's guarded time error


def test_the_same_sweep_on_two_gpus_side_by_side(capsys):
    rc = cli.main(["sweep", "hgemm_ws", "--shape", "512,512,512", "--vary", "stages=2,3", "--config", H100, H200,
                   "--workers", "1"])
    text = capsys.readouterr().out
    assert rc == 0
    assert "across GPUs" in text and "top 2 on NVIDIA H200" in text
    configs, side = sweep.across_gpus(
        [{"config": c, "kernel": "k", "shape": "1", "s": s, sweep.TIME: t, sweep.ERROR: None}
         for c, s, t in (("A", 1, 10.0), ("B", 1, 5.0), ("A", 2, 8.0), ("B", 2, None))], ["s"])
    assert configs == ["A", "B"]
    assert side[0]["speedup"]["B"] == 2.0 and side[1]["speedup"]["B"] is None


# ---- bad input --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("args", "says"), [
    (["--vary", "stagez=1,2"], "unknown parameter 'stagez'"),
    (["--vary", "stages=0,3"], "stages=0 must be positive"),
    (["--vary", "bn=100"], "bn=100 is not one of 128, 256"),
    (["--vary", "swizzle=none"], "is not one of"),
    (["--vary", "stages="], "an empty value"),
    (["--vary", "stages=5..2"], "is empty"),
    (["--vary", "stages"], "expected KEY=V1,V2"),
    (["--vary", "stages=1..8", "--vary", "stages=2"], "given twice"),
    (["--vary", "stages=1..8", "--vary", "bn=128,256", "--max-points", "10"], "more than --max-points 10"),
    (["--vary", "stages=1..8", "--set", "stages=2"], "both varied"),
    (["--config", "nope.toml"], "no such config file"),
    (["-o", "out.csv"], "expected a .parquet file"),
])
def test_bad_input_is_one_line_and_exit_2(args, says, capsys):
    rc = cli.main(["sweep", "hgemm_ws", "--shape", "512,512,512", *args])
    err = capsys.readouterr().err
    assert rc == 2 and says in err and err.count("\n") == 1 and "Traceback" not in err


def test_a_grid_above_the_default_limit_asks_for_max_points(capsys):
    rc = cli.main(["sweep", "sgemm_2d_blocktiling", "--shape", "512,512,512", "--vary", "BM=1..30",
                   "--vary", "BN=1..30", "--vary", "BK=1..30"])
    err = capsys.readouterr().err
    assert rc == 2 and "27,000 points, more than --max-points 10,000" in err


def test_bad_shapes_and_kernels(tmp_path, capsys):
    shapes = tmp_path / "shapes.txt"
    shapes.write_text("# M,N,K\n512,512,512\n\nbig\n")
    for args, says in ((["hgemm_ws", "--shape", "512,512"], "shape needs 3 values"),
                       (["nope", "--shape", "1,1,1"], "unknown kernel 'nope'"),
                       (["hgemm_ws"], "no shape"),
                       (["hgemm_ws", "--shapes", str(shapes)], ":4: 'big'"),
                       (["hgemm_ws", "--shapes", str(tmp_path / "none.txt")], "no such shapes file")):
        assert cli.main(["sweep", *args]) == 2
        err = capsys.readouterr().err
        assert says in err and err.count("\n") == 1, err
    with pytest.raises(KernelError, match="unknown parameter"):
        sweep.plan(["hgemm_ws"], [SHAPE], {"nope": ["1"]})


def test_an_unreachable_scheduler_is_one_line(capsys):
    pytest.importorskip("distributed")
    rc = cli.main(["sweep", "hgemm_ws", "--shape", "512,512,512", "--scheduler", "tcp://127.0.0.1:9"])
    err = capsys.readouterr().err
    assert rc == 2 and "cannot reach the Dask scheduler" in err and err.count("\n") == 1


def test_without_dask_the_scheduler_asks_for_the_cluster_extra(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_dask(name, *a, **kw):
        if name.split(".")[0] in ("distributed", "dask"):
            raise ImportError(name)
        return real(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", no_dask)
    with pytest.raises(sweep.SweepError, match=r"pip install 'gpusim\[cluster\]'"):
        sweep.connect("tcp://127.0.0.1:9")


# ---- the autotune check of gpusim validate ---------------------------------------------------------------------

def test_autotune_check_compares_the_predicted_best_with_the_measured_best():
    from gpusim import validation as v

    def row(kernel, params, pred, meas, shape=(4096,) * 3):
        return v.Row(kernel, shape, {v.TIME: pred}, {v.TIME: meas}, params=params)

    rows = [row("k", {}, 10.0, 100.0), row("k", {"stages": "2"}, 9.0, 110.0), row("k", {"stages": "4"}, 12.0, 105.0),
            row("a", {}, 5.0, 50.0), row("a", {"causal": "1"}, 3.0, 30.0),
            row("a", {"bc": "64", "causal": "1"}, 3.5, 29.0),
            row("t", {}, 7.0, 70.0), row("t", {"order": "row"}, 7.0, 80.0), row("single", {}, 1.0, 1.0)]
    checks = {(c.kernel, c.problem): c for c in v.autotune(rows)}
    assert set(checks) == {("k", ""), ("a", "causal=1"), ("t", "")}  # causal=1 is a problem, not a setting
    k = checks[("k", "")]
    assert (k.predicted_best, k.measured_best, k.points) == ("stages=2", "defaults", 3)
    assert k.gap_pct == pytest.approx(10.0) and not k.met
    a = checks[("a", "causal=1")]
    assert (a.predicted_best, a.measured_best) == ("defaults", "bc=64")
    assert a.gap_pct == pytest.approx(100 * (30 / 29 - 1))
    t = checks[("t", "")]  # a predicted tie keeps the defaults, and says so
    assert (t.predicted_best, t.ties, t.gap_pct, t.met) == ("defaults", 1, 0.0, True)
    lines = v.autotune_lines(list(checks.values()))
    assert "(goal <= 5%) short" in lines[0] and "tie with 1" in lines[2]
    assert lines[-1].startswith("predicted best within 5% of the measured optimum on 2 of 3 sweeps")
