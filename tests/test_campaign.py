"""Issue 30's reliability campaign in CI: a few seeded cases of every family of ``tests/campaign.py`` (bad sweeps, user
kernel files, implausible configs, launches CUDA refuses, outputs that cannot be written, implausible measurements,
empty options, bad CUDA sources), each a one-line error with exit status 2 or, for a legal what-if, a run; and the
process-level behaviour a generator in one process cannot reach (workers that outlive their parent, an interrupted
sweep's table).

The long mode runs locally: ``python tests/campaign.py --per-family 200 --seed 30 --long`` (or set
``GPUSIM_CAMPAIGN_PER_FAMILY`` for this test).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import campaign

from gpusim import cli, sweep

REPO = Path(__file__).resolve().parent.parent
SEED = 30
PER_FAMILY = int(os.environ.get("GPUSIM_CAMPAIGN_PER_FAMILY", "5"))


def test_campaign_cases_are_one_line_errors_or_runs(tmp_path):
    """Every generated case ends as it must: bad input a clean one-line error, a what-if a run; no traceback, hang,
    memory exhaustion, signal, silent exit, accepted nonsense, partial file or error after output."""
    out = tmp_path / "results.json"
    proc = subprocess.run([sys.executable, str(REPO / "tests" / "campaign.py"), "--seed", str(SEED), "--per-family",
                           str(PER_FAMILY), "--json", str(out), "--case-seconds", "60", "--memory-gib", "4",
                           "--tmp", str(tmp_path)], capture_output=True, text=True, timeout=900)
    assert out.exists(), proc.stderr[-2000:]
    results = json.loads(out.read_text())
    bad = [r for r in results if r["outcome"] not in campaign.GOOD]
    assert not bad, proc.stdout[-6000:]
    outcomes = {r["outcome"] for r in results}
    assert outcomes == {"clean error", "ran"}, outcomes  # both kinds of case were made
    assert {r["family"] for r in results} >= set(campaign.FAMILIES) - {"sass"}


def test_the_generator_classifies_defects(tmp_path):
    """The runner tells a defect from a clean error: an input it expects refused but that runs is accepted nonsense,
    and a valid what-if that is refused is a false rejection."""
    good = ["run", "sgemm_naive", "--shape", "64,64,64"]
    bad = ["run", "sgemm_naive", "--shape", "0,64,64"]
    assert campaign.run_case(campaign.Case("cli", "valid", good), tmp_path / "a", 60)["outcome"] == \
        "accepted nonsense"
    assert campaign.run_case(campaign.Case("cli", "bad", bad, expect="ok"), tmp_path / "b", 60)["outcome"] == \
        "false rejection"
    assert campaign.run_case(campaign.Case("cli", "bad", bad), tmp_path / "c", 60)["outcome"] == "clean error"


def _children(pid: int) -> set[int]:
    out = set()
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.add(int(d.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_workers_die_with_their_parent():
    """SIGKILL of the process that runs a pool leaves no worker behind (they would hold their memory for minutes)."""
    if not Path("/proc/self/stat").exists():
        import pytest

        pytest.skip("needs /proc")
    code = ("import time\nfrom gpusim.api import run_processes\n"
            "run_processes(time.sleep, [120, 120], lambda i, r: None, 2)\n")
    parent = subprocess.Popen([sys.executable, "-c", code])
    try:
        workers: set[int] = set()
        deadline = time.monotonic() + 120  # a hang detector, not a speed test
        while len(workers) < 2 and time.monotonic() < deadline and parent.poll() is None:
            time.sleep(0.2)
            workers = _children(parent.pid)
        assert len(workers) >= 2, "the pool never started"
        time.sleep(1.0)  # the workers have run their initializer (the watch on their parent)
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    deadline = time.monotonic() + 60
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [w for w in workers if _alive(w)]
    for w in left:
        os.kill(w, signal.SIGKILL)
    assert not left, f"workers {left} outlived their parent"


def test_an_interrupted_sweep_never_replaces_a_complete_table(tmp_path, monkeypatch, capsys):
    """Ctrl-C keeps a complete table already at -o and writes the partial one beside it; the completed rerun replaces
    the table and removes the partial one."""
    monkeypatch.setenv("GPUSIM_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "t.parquet"

    def argv(values: str) -> list[str]:
        return ["sweep", "sgemm_coalesced", "--shape", "64,64,64", "--vary", f"regs_per_thread={values}",
                "--workers", "1", "-o", str(out)]

    assert cli.main(argv("32,40,48")) == 0
    complete = out.read_bytes()
    real = sweep.evaluate
    calls = []

    def interrupted(task):
        if calls:
            raise KeyboardInterrupt
        calls.append(task)
        return real(task)

    monkeypatch.setattr(sweep, "evaluate", interrupted)
    assert cli.main(argv("56,64,72")) == 130
    assert "t.partial.parquet" in capsys.readouterr().err
    assert out.read_bytes() == complete
    assert len(sweep.read_parquet(tmp_path / "t.partial.parquet")[1]) == 1
    monkeypatch.setattr(sweep, "evaluate", real)
    assert cli.main(argv("56,64,72")) == 0
    assert not (tmp_path / "t.partial.parquet").exists()
    assert [r["regs_per_thread"] for r in sweep.read_parquet(out)[1]] == [56, 64, 72]


def test_a_figure_that_cannot_be_written_is_closed(tmp_path):
    """A figure whose file cannot be written (a full disk, a missing folder) is closed all the same: open ones pile up
    in a long-lived process (the app, the campaign's runner) and leak memory."""
    import matplotlib.pyplot as plt
    import pytest

    rows = [{"config": "c", "config_file": "c.toml", "kernel": "k", "shape": "1", "x": x, sweep.TIME: 1e6 * x,
             sweep.ERROR: None} for x in (1, 2)]
    before = set(plt.get_fignums())
    with pytest.raises(OSError):
        sweep.figure(rows, ["x"], tmp_path / "no" / "such" / "f.png")
    assert set(plt.get_fignums()) == before
