"""The command line as a user meets it: one-line errors with exit status 2, ncu-named JSON, list, trace."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpusim.cli import main

REPO = Path(__file__).resolve().parent.parent
SMALL = "256,256,256"

REQUIRED_KEYS = [
    "gpu__time_duration.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "lts__t_sector_hit_rate.pct",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "launch__registers_per_thread",
] + [f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio"
     for r in ("long_scoreboard", "short_scoreboard", "barrier", "mio_throttle", "lg_throttle",
               "math_pipe_throttle", "wait", "not_selected")]


def _bad_config(tmp_path: Path) -> str:
    text = (REPO / "configs" / "h100_sxm.toml").read_text()
    text = text.replace("sm_count = { value = 132,", "sm_count = { value = -3,", 1)
    path = tmp_path / "broken.toml"
    path.write_text(text)
    return str(path)


# (argv, words the one error line must contain); "{tmp}" is replaced by a malformed config's path
ERRORS = {
    "unknown kernel": (["run", "sgemm_turbo", "--shape", SMALL], ["sgemm_turbo", "unknown kernel"]),
    "unknown --set key": (["run", "sgemm_naive", "--shape", SMALL, "--set", "TILE=64"], ["TILE", "unknown parameter"]),
    "non-integer --set value": (["run", "sgemm_1d_blocktiling", "--shape", SMALL, "--set", "BK=eight"],
                                ["BK", "eight", "integer"]),
    "non-integer regs": (["run", "sgemm_naive", "--shape", SMALL, "--set", "regs_per_thread=lots"],
                         ["regs_per_thread", "lots", "integer"]),
    "--set without =": (["run", "sgemm_naive", "--shape", SMALL, "--set", "BK"], ["--set", "KEY=VALUE"]),
    "bad shape text": (["run", "sgemm_naive", "--shape", "256,x,256"], ["--shape", "256,x,256"]),
    "shape with two dims": (["run", "sgemm_naive", "--shape", "256,256"], ["shape needs 3", "got 2"]),
    "shape with four dims": (["run", "sgemm_naive", "--shape", "256,256,256,256"], ["shape needs 3", "got 4"]),
    "zero shape": (["run", "sgemm_naive", "--shape", "0,256,256"], ["M=0", "positive"]),
    "negative shape": (["run", "sgemm_naive", "--shape=256,-256,256"], ["N=-256", "positive"]),
    "non-divisible shape": (["run", "sgemm_smem_blocking", "--shape", "100,100,100"], ["M=100", "multiple of", "32"]),
    "launch cannot fit": (["run", "sgemm_coalesced", "--shape", SMALL, "--set", "regs_per_thread=255"],
                          ["255", "1024", "registers"]),
    "too much shared memory": (["run", "sgemm_smem_blocking", "--shape", SMALL, "--set", "smem_bytes=245760"],
                               ["245760", "shared memory"]),
    "missing config": (["run", "sgemm_naive", "--shape", SMALL, "--config", "/nonexistent/gpu.toml"],
                       ["/nonexistent/gpu.toml", "no such"]),
    "malformed config": (["run", "sgemm_naive", "--shape", SMALL, "--config", "{tmp}"],
                         ["{tmp}", "sm_count", "out of range"]),
    "trace of unknown kernel": (["trace", "sgemm_turbo", "--shape", SMALL, "-o", "x.json"], ["sgemm_turbo"]),
    "missing --shape": (["run", "sgemm_naive"], ["--shape"]),
    "unknown command": (["frobnicate"], ["frobnicate"]),
}


# gpusim/cli.py main(): argparse's errors are re-worded by .replace("gpusim: error: gpusim", "gpusim"), which
# drops the "error:" prefix: "gpusim run: the following arguments are required: --shape".


@pytest.mark.parametrize("case", ERRORS,
                         ids=list(ERRORS))
def test_user_error_is_one_line_exit_2(case, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tmp = _bad_config(tmp_path)
    argv, words = ERRORS[case]
    argv = [a.replace("{tmp}", tmp) for a in argv]
    rc = main(argv)
    out, err = capsys.readouterr()
    assert rc == 2
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("gpusim: error: ")
    for w in words:
        assert w.replace("{tmp}", tmp) in lines[0], f"{w!r} not in {lines[0]!r}"
    assert not (tmp_path / "x.json").exists()


@pytest.mark.parametrize("argv", [
    ["run", "sgemm_turbo", "--shape", SMALL],
    ["run", "sgemm_coalesced", "--shape", SMALL, "--set", "regs_per_thread=255"],
], ids=["unknown kernel", "launch cannot fit"])
def test_error_through_the_real_process(argv):
    proc = subprocess.run([sys.executable, "-m", "gpusim.cli", *argv], check=False, capture_output=True, text=True,
                          cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert proc.stderr.endswith("\n") and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("gpusim: error: ")


def _run_json(capsys, *argv) -> dict:
    rc = main(["run", *argv, "--json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return json.loads(out)


def test_run_json_has_the_ncu_metrics(capsys):
    m = _run_json(capsys, "sgemm_naive", "--shape", SMALL)
    missing = [k for k in REQUIRED_KEYS if k not in m]
    assert not missing
    for k in REQUIRED_KEYS:
        assert isinstance(m[k], (int, float)) and not isinstance(m[k], bool), k
        assert m[k] >= 0, k
    assert m["gpu__time_duration.sum"] > 0
    assert m["launch__registers_per_thread"] == 32  # the default of sgemm_naive: its twin's NVRTC count
    assert m["gpusim__kernel"] == "sgemm_naive"
    assert m["gpusim__shape"] == [256, 256, 256]


def test_set_regs_per_thread_is_reported(capsys):
    # sgemm_1d_blocktiling has 512-thread blocks: 96 regs x 512 = 49152 registers still fit one CTA
    m = _run_json(capsys, "sgemm_1d_blocktiling", "--shape", SMALL, "--set", "regs_per_thread=96")
    assert m["launch__registers_per_thread"] == 96
    default = _run_json(capsys, "sgemm_1d_blocktiling", "--shape", SMALL)
    assert default["launch__registers_per_thread"] == 44  # the twin's ptxas count


def test_run_text_output(capsys):
    assert main(["run", "sgemm_naive", "--shape", SMALL]) == 0
    out, _ = capsys.readouterr()
    assert out.startswith("sgemm_naive 256,256,256 on NVIDIA H100")
    for section in ("GPU Speed Of Light Throughput", "Memory Workload Analysis", "Compute Workload Analysis",
                    "Launch Statistics", "Occupancy", "Warp State Statistics"):
        assert f"Section: {section}" in out
    assert "Limiter: " in out and "Verdict: " in out
    assert "gpu__time_duration" not in out or " ns)" in out  # a duration always carries its unit
    assert "GFLOP/s" in out or "TFLOP/s" in out


def test_list_shows_every_registered_kernel(capsys):
    import kernels_ir  # noqa: F401
    from gpusim.ir import REGISTRY

    assert main(["list"]) == 0
    out, _ = capsys.readouterr()
    rows = out.split("\n\n")[0].splitlines()[2:]  # below the header and its rule, above the footer
    listed = {line.split()[0] for line in rows if line and not line[0].isspace()}
    assert listed == set(REGISTRY)
    assert "BM=64" in out  # tunable parameters with their defaults
    assert "stages=3 (1|2|3|4|5|6|7|8)" in out  # ... and their allowed values
    assert "order=grouped (row|grouped|hilbert)" in out


def test_trace_writes_chrome_trace_json(tmp_path, capsys):
    path = tmp_path / "f.json"
    assert main(["trace", "sgemm_smem_blocking", "--shape", SMALL, "-o", str(path)]) == 0
    out, _ = capsys.readouterr()
    assert str(path) in out
    data = json.loads(path.read_text())
    events = data["traceEvents"]
    slices = [e for e in events if e["ph"] == "X"]
    assert slices
    for e in slices:
        assert {"name", "ts", "dur", "pid", "tid"} <= set(e)
        assert e["dur"] >= 0 and e["ts"] >= 0
    # sgemm_smem_blocking has 1024-thread CTAs: at least the 32 warps of one CTA have their own track
    assert len({e["tid"] for e in slices}) >= 32


def test_trace_to_unwritable_path_is_one_line(tmp_path, capsys):
    rc = main(["trace", "sgemm_naive", "--shape", SMALL, "-o", str(tmp_path / "no" / "such" / "dir" / "f.json")])
    _, err = capsys.readouterr()
    assert rc == 2
    assert len(err.splitlines()) == 1 and err.startswith("gpusim: error: ")


def test_h200_config_works(capsys, monkeypatch):
    monkeypatch.chdir(REPO)  # the path as the README writes it, relative to the repository
    assert main(["run", "sgemm_naive", "--shape", SMALL, "--config", "configs/h200.toml"]) == 0
    out, _ = capsys.readouterr()
    assert "H200" in out.splitlines()[0]
    m = _run_json(capsys, "sgemm_naive", "--shape", SMALL, "--config", "configs/h200.toml")
    assert m["gpu__time_duration.sum"] > 0


# ---- issue 27: what the command line says ------------------------------------------------------------------------

def test_gpusim_alone_prints_help(capsys):
    assert main([]) == 0
    out, _ = capsys.readouterr()
    assert out.startswith("usage: gpusim") and "run" in out and "roofline" in out


@pytest.mark.parametrize("argv, hint", [
    (["run", "sgemm_naive", "--shpe", SMALL], "--shpe: did you mean --shape?"),
    (["run", "sgemm_naive", "--shape", SMALL, "--jsn"], "--jsn: did you mean --json?"),
    (["rnu", "sgemm_naive"], "did you mean 'run'?"),
    (["run", "sgemm_naiv", "--shape", SMALL], "did you mean sgemm_naive"),
    (["run", "sgemm_naive", "--shape", SMALL, "--metrics", "dram_bytes_read"], "did you mean dram__bytes_read.sum"),
    (["run", "sgemm_naive", "--shape", SMALL, "--config", "h20"], "did you mean 'h200'?"),
])
def test_misspellings_get_did_you_mean(argv, hint, capsys):
    assert main(argv) == 2
    _, err = capsys.readouterr()
    assert len(err.splitlines()) == 1 and hint in err, err


def test_unknown_kernel_does_not_dump_every_name(capsys):
    assert main(["run", "sgemm_turbo", "--shape", SMALL]) == 2
    _, err = capsys.readouterr()
    assert "hgemm_persistent" not in err and "gpusim list" in err


def test_metrics_filter_and_csv(capsys):
    assert main(["run", "sgemm_naive", "--shape", SMALL, "--metrics", "dram__*,gpusim__sol_pct.HBM"]) == 0
    out, _ = capsys.readouterr()
    names = [line.split()[0] for line in out.splitlines()]
    assert names == ["dram__bytes_read.sum", "dram__bytes_write.sum", "gpusim__sol_pct.HBM"]
    assert all(line.split()[1] in ("byte", "%") for line in out.splitlines())  # every value with its unit
    assert main(["run", "sgemm_naive", "--shape", SMALL, "--csv", "--metrics", "regex:^gpu__time"]) == 0
    out, _ = capsys.readouterr()
    assert len(out.splitlines()) == 2
    assert out.startswith('"Kernel Name","Shape","Section Name","Metric Name","Metric Unit","Metric Value"\n')
    assert '"GPU Speed Of Light Throughput","gpu__time_duration.sum","ns"' in out


def test_bundled_config_by_name_outside_the_repository(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "gpusim.cli", "run", "sgemm_naive", "--shape", SMALL, "--config",
                           "configs/h200.toml", "--metrics", "gpu__time_duration.sum"], check=False,
                          capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)},
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "unvalidated" in proc.stderr and "H200" in proc.stderr  # no H200 kernel measurements are committed
    by_name = subprocess.run([sys.executable, "-m", "gpusim.cli", "run", "sgemm_naive", "--shape", SMALL, "--config",
                              "h200", "--metrics", "gpu__time_duration.sum"], check=False, capture_output=True,
                             text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert by_name.returncode == 0 and by_name.stdout == proc.stdout


def test_h100_prediction_of_a_measured_family_is_not_flagged(capsys):
    m = _run_json(capsys, "sgemm_naive", "--shape", SMALL)
    assert m["gpusim__validated"] is True
    m = _run_json(capsys, "sgemm_naive", "--shape", SMALL, "--config", "h200")
    assert m["gpusim__validated"] is False


def test_membound_ladder_runs_each_kind_at_the_same_elements(capsys):
    assert main(["ladder", "--family", "membound", "--shape", "1048576", "--workers", "1"]) == 0
    out, _ = capsys.readouterr()
    table = out.split("\nverdicts")[0]
    rows = {line.split()[0]: line.split() for line in table.splitlines() if line.startswith("mem_")}
    assert rows["mem_copy"][1] == "1048576" and rows["mem_transpose_naive"][1] == "1024x1024"
    assert "DRAM TB/s" in out and "GFLOP/s" not in out
    assert main(["ladder", "--family", "membound", "--shape", "1000", "--workers", "1"]) == 2
    _, err = capsys.readouterr()
    assert "not a square" in err


def test_roofline_figure(tmp_path, capsys):
    out_png = tmp_path / "r.png"
    assert main(["roofline", "sgemm_naive,sgemm_coalesced", "--shape", SMALL, "-o", str(out_png),
                 "--workers", "1"]) == 0
    out, _ = capsys.readouterr()
    assert out_png.stat().st_size > 10_000
    assert "FP32 FFMA" in out and "L1/shared" in out and "L2" in out
    assert main(["roofline", "sgemm_naive", "--shape", SMALL, "-o", str(tmp_path / "r.txt")]) == 2
