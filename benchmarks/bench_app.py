"""How fast the app answers: each page's first load and one interaction, driven in-process through Streamlit's
AppTest (what tests/test_app.py uses; the browser adds its drawing on top).

Goals (issue 29): a page's first load < 3 s, an interaction < 0.5 s. A first load starts with the page's caches
empty (this process visits each page once, in order); an interaction is the rerun after one widget change (the
swizzle layout, the pipeline lab's stages, a ladder rung, the explorer's shape). Prints the figures beside the
goals; asserts nothing.

    python benchmarks/bench_app.py
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
PAGES = "gpusim/app/pages"
GOAL_LOAD_S = 3.0
GOAL_INTERACTION_S = 0.5
TIMEOUT_S = 600
# (page, how its first visit is reached, one interaction: (widget kind, key, value))
STEPS = (
    ("swizzle lab", None, ("selectbox", "sw_layout", "XOR 128B")),
    ("pipeline lab", "pipeline_lab", ("slider", "pl_hgemm_mma_pipelined_stages", 2)),
    ("ladder", "ladder", ("selectbox", "ld_rung", "sgemm_coalesced")),
    ("kernel explorer", "explorer", ("selectbox", "ex_kernel", "sgemm_coalesced")),
    ("sweep", "sweep", None),
    ("your kernel", "your_kernel", None),
)


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=TIMEOUT_S)
    print(f"{'page':<16} {'first load s':>12} {'goal':>5}  {'interaction s':>13} {'goal':>5}  status")
    for label, page, action in STEPS:
        if page is None:
            load = timed(at.run)
        else:
            at.switch_page(f"{PAGES}/{page}.py")
            load = timed(at.run)
        if page == "pipeline_lab":  # the stages slider belongs to the kernel chosen first
            at.selectbox(key="pl_kernel").set_value("hgemm_mma_pipelined")
            load += timed(at.run)
        inter = None
        if action and not at.exception:
            kind, key, value = action
            getattr(at, kind)(key=key).set_value(value)
            inter = timed(at.run)
        bad = [e.value for e in at.exception]
        ok = load < GOAL_LOAD_S and (inter is None or inter < GOAL_INTERACTION_S)
        status = f"exception: {bad[0][:80]}" if bad else ("met" if ok else "MISSED")
        shown = f"{inter:>13.2f}" if inter is not None else f"{'-':>13}"
        print(f"{label:<16} {load:>12.2f} {GOAL_LOAD_S:>5g}  {shown} {GOAL_INTERACTION_S:>5g}  {status}")
    print(f"\n(one process on {os.cpu_count()} cores; Streamlit's AppTest, no browser; the pipeline lab's first load "
          "includes choosing hgemm_mma_pipelined)")


if __name__ == "__main__":
    main()
