"""Big but real shapes: simulator cost must follow the distinct access patterns, not the problem size.

Goals (issue 12, reliability; issue 29: any attention shape, H=16 at 1M tokens causal included): each case below
in under 2 s of wall time and 500 MB of peak memory. Every case
runs ``gpusim run`` in its own process (so the peak resident memory, ``ru_maxrss`` of the child, is that case's
alone, Python and its imports included). Prints the figures beside the goals; asserts nothing.

    python benchmarks/bench_big.py [--repeat 1] [--timeout 300]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from user_env import user_env

REPO = Path(__file__).resolve().parent.parent
GOAL_SECONDS = 2.0
GOAL_MB = 500.0

# (label, gpusim run arguments)
CASES = (
    ("sgemm_2d_blocktiling K=2^20", ["sgemm_2d_blocktiling", "--shape", "128,128,1048576"]),
    ("sgemm_2d_blocktiling K=2^24", ["sgemm_2d_blocktiling", "--shape", "128,128,16777216"]),
    ("fa2 causal, 1M tokens", ["fa2", "--shape", "1,1,1048576,128", "--set", "causal=1"]),
    ("fa3 causal, 1M tokens", ["fa3", "--shape", "1,1,1048576,128", "--set", "causal=1"]),
    ("fa2 causal, H=16, 1M tokens", ["fa2", "--shape", "1,16,1048576,128", "--set", "causal=1"]),
    ("fa3 causal, H=16, 1M tokens", ["fa3", "--shape", "1,16,1048576,128", "--set", "causal=1"]),
)


def run_case(args: list[str], timeout: float) -> tuple[float, float, int, str]:
    """(wall seconds, peak resident MB of the child, exit status, last stderr line) of one ``gpusim run``."""
    code = (
        "import resource, subprocess, sys, time\n"
        "t0 = time.perf_counter()\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "dt = time.perf_counter() - t0\n"
        "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
        "print(dt, rss, p.returncode, (p.stderr.strip().splitlines() or [''])[-1][:200], sep='\\t')\n"
    )
    env = user_env()
    # a fresh parent per case: RUSAGE_CHILDREN is the peak over all children that parent waited for
    out = subprocess.run([sys.executable, "-c", code, sys.executable, "-m", "gpusim.cli", "run", *args],
                         capture_output=True, text=True, cwd=REPO, env=env, timeout=timeout, check=True).stdout
    dt, rss, rc, err = out.rstrip("\n").split("\t")
    kb = int(rss) / (1 if sys.platform != "darwin" else 1024)  # ru_maxrss: KiB on Linux, bytes on macOS
    return float(dt), kb / 1024, int(rc), err


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1, help="runs per case; the best wall time is shown")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds before a case counts as hung")
    a = ap.parse_args()
    print(f"{'case':<30} {'wall s':>8} {'goal':>6} {'peak MB':>8} {'goal':>6}  status")
    for label, args in CASES:
        runs = []
        for _ in range(a.repeat):
            try:
                runs.append(run_case(args, a.timeout))
            except subprocess.TimeoutExpired:
                runs.append((a.timeout, float("nan"), -1, f"no answer within {a.timeout:g} s"))
        dt = min(r[0] for r in runs)
        mb = max(r[1] for r in runs)
        rc, err = runs[-1][2], runs[-1][3]
        met = "met" if dt < GOAL_SECONDS and mb < GOAL_MB else "MISSED"
        status = met if rc == 0 else f"exit {rc}: {err}"
        print(f"{label:<30} {dt:>8.2f} {GOAL_SECONDS:>6g} {mb:>8.0f} {GOAL_MB:>6g}  {status}")
    print(f"\n(each case: one 'gpusim run' process on {os.cpu_count()} cores, Python startup and imports included; "
          f"ru_maxrss of that process)")


if __name__ == "__main__":
    main()
