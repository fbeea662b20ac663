"""The front-end section's goals for the irregular twins (issue 26 item 6): each within 15%, and a histogram's one-bin
input against its uniform one in the measured direction."""

from __future__ import annotations

import pytest

from gpusim.frontend.validate import FrontRow, irregular_lines, summarize
from gpusim.validation import TIME


def _row(kernel: str, bins: str | None, measured: float, predicted: float) -> FrontRow:
    return FrontRow(kernel, (8388608,), {"bins": bins} if bins else {}, {TIME: measured}, frontend={TIME: predicted})


def test_irregular_rows_within_the_goal_and_histogram_directions():
    rows = [_row("histogram", "uniform", 100.0, 90.0), _row("histogram", "one", 110.0, 95.0),  # both slower: same
            _row("histogram_aggregated", "uniform", 100.0, 100.0),
            _row("histogram_aggregated", "one", 90.0, 120.0),  # measured faster, predicted slower: other direction
            _row("block_scan", None, 100.0, 130.0), _row("sgemm_naive", None, 100.0, 50.0),
            FrontRow("histogram", (67108864,), {"bins": "uniform"}, {TIME: 100.0}, frontend={TIME: 100.0}),
            FrontRow("histogram", (67108864,), {"bins": "one"}, {TIME: 100.05}, frontend={TIME: 98.0})]
    s = summarize(rows)
    assert (s["irregular_within"], s["irregular_rows"]) == (5, 7)  # block_scan +30% misses; sgemm_naive not counted
    lines = irregular_lines(s)
    assert lines[0].startswith("Irregular twins") and "5 of 7 rows within 15%" in lines[0]
    noise = next(x for x in lines if x.startswith("- histogram 67108864"))
    assert "no direction" in noise  # 0.05% apart: inside the launches' spread
    hist = next(x for x in lines if x.startswith("- histogram 8388608"))
    agg = next(x for x in lines if x.startswith("- histogram_aggregated"))
    assert "1.100x" in hist and "the measured direction" in hist
    assert "0.900x" in agg and "the other direction" in agg


def test_the_knob_table_compares_each_setting_with_its_defaults_both_ways():
    # issue 29's goal, for the front-end beside the hand IR: a setting's change of the time against the kernel's
    # defaults at the same shape, within 5 points and in the measured direction. Rows the front-end compares with
    # the measurement of its own binaries (fa2) count their change against those measurements
    from gpusim.frontend.validate import knob_changes, knob_lines

    def row(params, meas, fe, hand, same=None):
        return FrontRow("k", (64,), params, {TIME: meas}, {TIME: fe}, {TIME: hand},
                        measured_same_binary={TIME: same} if same else None)

    rows = [row({}, 100.0, 90.0, 120.0), row({"bc": 128}, 140.0, 130.0, 110.0)]
    (k,) = knob_changes(rows)
    assert (k.measured_pct, k.frontend_pct, k.hand_pct) == pytest.approx((40.0, 130 / 0.9 - 100, 110 / 1.2 - 100))
    assert k.right("frontend") and not k.right("hand")  # +44.4 against +40; -8.3: the other direction
    text = "\n".join(knob_lines([k]))
    assert "front-end 1 of 1, hand IR 0 of 1" in text and "(off)" in text
    rows = [row({}, 100.0, 90.0, 120.0, same=95.0), row({"bc": 128}, 140.0, 93.0, 110.0, same=100.0)]
    fe, hand = knob_changes(rows)
    assert fe.label.endswith("*") and fe.measured_pct == pytest.approx(100 / 0.95 - 100) and fe.hand_pct is None
    assert fe.frontend_pct == pytest.approx(93 / 0.9 - 100)
    assert hand.measured_pct == pytest.approx(40.0) and hand.frontend_pct is None
