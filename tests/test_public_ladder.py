"""The public SGEMM ladder beside ours (gpusim/public_ladder.py, printed by `gpusim ladder --family sgemm`)."""

import json


def _file(tmp_path, rungs):
    """A public-sgemm file: (number, twin, public ms, twin ms) per rung."""
    data = {"gpu": {"name": "NVIDIA H100 80GB HBM3"},
            "public": [{"number": n, "shape": [4096] * 3, "correct": True, "time_ns": {"median": p * 1e6}}
                       for n, _, p, _ in rungs],
            "twins": [{"kernel": k, "shape": [4096] * 3, "correct": True, "time_ns": {"median": t * 1e6}}
                      for _, k, _, t in rungs]}
    path = tmp_path / "public-sgemm-2026-11-28.json"
    path.write_text(json.dumps(data))
    return path


def test_order_check_counts_the_steps_whose_direction_differs_from_the_public_ladder(tmp_path):
    from gpusim import public_ladder

    path = _file(tmp_path, [(1, "a", 10.0, 10.0), (2, "b", 5.0, 5.5), (3, "c", 6.0, 4.0)])
    # public: 1->2 faster, 2->3 slower; twins: faster, faster; gpusim: faster, slower
    out = "\n".join(public_ladder.lines({"a": 9e6, "b": 4e6, "c": 4.5e6}, path))
    assert "our twins 1 of 2 steps, gpusim 2 of 2" in out
    assert " 2 -> 3  public slower | twins faster (differs)" in out


def test_twin_goal_is_fifteen_percent_of_the_public_time(tmp_path):
    from gpusim import public_ladder

    path = _file(tmp_path, [(5, "x", 5.0, 4.2), (6, "y", 5.0, 4.3)])  # 0.84x: missed; 0.86x: met
    rows = {ln.split()[1]: ln.split()[-1] for ln in public_ladder.lines({"x": 1.0, "y": 1.0}, path)[2:4]}
    assert rows == {"x": "missed", "y": "met"}
