"""`gpusim validate` prints the issue-11 goals beside the tolerances, and a metric's rows predicted at zero are
named in validate/tolerances.toml instead of hidden under a 100% tolerance."""

from __future__ import annotations

from gpusim import validation as v

WRITE = "dram__bytes_write.sum"


def _summary(zero_rows: list[str]) -> dict:
    return {"time_mape_pct": 21.0, "time_max_err_pct": 70.0, "time_worst": "k 1", "spearman": {"sgemm 1,1,1": 0.5},
            "per_metric": {WRITE: {"mean": 20.0, "max": 100.0, "n": 4, "unit": "%", "zero_rows": zero_rows,
                                   "max_nonzero": 40.0}},
            "top_stall_match_pct": 40.0, "top2_in_top3_pct": 60.0, "inst_max_err_pct": 94.0,
            "inst_within_10_pct": 50.0, "max_utilization_pct": 90.0}


def test_listed_zero_predictions_pass_and_a_new_one_fails():
    tol = {"metrics_max": {WRITE: 45.0}, "zero_predictions": {WRITE: ["fa2 2,16,1024,128"]}}
    assert v.check(_summary(["fa2 2,16,1024,128"]), tol) == []
    bad = v.check(_summary(["fa2 2,16,1024,128", "mem_copy 4194304"]), tol)
    assert len(bad) == 1 and "mem_copy 4194304" in bad[0] and "zero_predictions" in bad[0]


def test_rows_that_predict_something_are_held_to_the_tolerance():
    tol = {"metrics_max": {WRITE: 30.0}, "zero_predictions": {WRITE: ["fa2 2,16,1024,128"]}}
    bad = v.check(_summary(["fa2 2,16,1024,128"]), tol)
    assert len(bad) == 1 and "40.0" in bad[0]


def test_goal_lines_name_the_issue_goals_the_tolerance_and_the_distance():
    tol = {"time": {"mape_pct": 21.5, "min_spearman": 0.3}, "stalls": {"min_top_match_pct": 20.0},
           "metrics_max": {WRITE: 89.0}}
    lines = "\n".join(v.goal_lines(_summary(["fa2 2,16,1024,128"]), [], tol))
    assert "time MAPE over the suite: 21.0 % (goal <= 8; tolerance 21.5) 13.0 % short" in lines
    assert "top stall reason matches ncu: 40.0 % of rows (goal >= 80; tolerance 20) 40.0 % of rows short" in lines
    assert "measured top two stalls within the predicted top three: 60.0 % of rows (goal >= 90)" in lines
    assert "instructions executed, worst row: 94.0 % (goal <= 10; 50% of rows within 10%) 84.0 % short" in lines
    assert "1 rows predicted at 0" in lines and "tolerance 89" in lines
    assert "rank correlation, worst ladder: 0.500 (goal >= 0.95; tolerance 0.3) 0.450 short" in lines


def test_time_error_is_summarised_per_kernel_family():
    import kernels_ir  # noqa: F401

    def row(kernel, err, params=None):
        r = v.Row(kernel, (64, 64, 64), {v.TIME: 100.0 + err}, {v.TIME: 100.0}, params=params or {})
        r.errors[v.TIME] = err
        return r

    fam = v.summarize([row("sgemm_naive", -10.0), row("sgemm_coalesced", 30.0, {"x": "1"}),
                       row("mem_copy", 5.0)])["families"]
    assert fam["sgemm"] == {"mape": 20.0, "n": 2, "worst": 30.0, "worst_row": "sgemm_coalesced[x=1] 64,64,64"}
    assert fam["membound"]["mape"] == 5.0 and fam["membound"]["n"] == 1
