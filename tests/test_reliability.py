"""Every bad input of issue 12 ("what 2,500 bad inputs found") as a case: one line ``gpusim: error: ...``, exit
status 2, no traceback, nothing written; and the committed measurement files still pass the schema."""

from __future__ import annotations

import json
import math
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from gpusim import validation as v
from gpusim.cli import main
from gpusim.config import load_config

REPO = Path(__file__).resolve().parent.parent
H100_TEXT = (REPO / "configs" / "h100_sxm.toml").read_text()
LADDER = REPO / "validate" / "measurements" / "h100" / "2026-11-22.json"
SMALL = "64,64,64"


def one_error(capsys, argv: list[str]) -> str:
    """Run the CLI in-process; the single stderr line it must print (exit 2, nothing on stdout)."""
    rc = main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    assert rc == 2, (rc, out[-300:], err)
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("gpusim: error: ")
    return err


# ----------------------------------------------------------------------------------------------------------
# measurement files


def measurement() -> dict:
    """A small valid schema-1 file: the ladder's header and its first kernel."""
    data = json.loads(LADDER.read_text())
    return {"schema": 1, "gpu": data["gpu"], "kernels": [data["kernels"][0]]}


def _entry(**kw):
    def edit(d):
        e = d["kernels"][0]
        for k, val in kw.items():
            if val is KeyError:
                del e[k]
            else:
                e[k] = val
        return d
    return edit


def _top(**kw):
    return lambda d: {**d, **kw}


def _median(val):
    def edit(d):
        d["kernels"][0]["time_ns"]["median"] = val
        return d
    return edit


def _gpu(name):
    def edit(d):
        d["gpu"]["name"] = name
        return d
    return edit


# case: (edit of the valid file, or raw bytes; words the error line must contain)
MEASUREMENTS = {
    "top-level list": (lambda d: [d], ["$", "an object", "a list"]),
    "top-level string": (lambda d: "kernels", ["$", "an object", "'kernels'"]),
    "top-level null": (lambda d: None, ["$", "null"]),
    "top-level number": (lambda d: 3, ["$", "3"]),
    "no kernels key": (lambda d: {"schema": 1, "gpu": d["gpu"]}, ["$.kernels", "missing"]),
    "schema 2": (_top(schema=2), ["$.schema", "2"]),
    "schema true": (_top(schema=True), ["$.schema", "True"]),
    "gpu a string": (_top(gpu="NVIDIA H100 80GB HBM3"), ["$.gpu", "an object"]),
    "gpu without name": (_top(gpu={}), ["$.gpu.name"]),
    "gpu name a number": (_gpu(100), ["$.gpu.name", "100"]),
    "kernels an object": (_top(kernels={}), ["$.kernels", "a list", "an object"]),
    "kernels a string": (_top(kernels="all"), ["$.kernels", "a list"]),
    "entry a number": (_top(kernels=[3]), ["$.kernels[0]", "an object"]),
    "entry null": (_top(kernels=[None]), ["$.kernels[0]", "null"]),
    "missing kernel": (_entry(kernel=KeyError), ["$.kernels[0]", "missing 'kernel'"]),
    "missing shape": (_entry(shape=KeyError), ["$.kernels[0]", "missing 'shape'"]),
    "missing time_ns": (_entry(time_ns=KeyError), ["$.kernels[0]", "missing 'time_ns'"]),
    "kernel a number": (_entry(kernel=7), ["$.kernels[0].kernel", "7"]),
    "shape a string": (_entry(shape="4096,4096,4096"), ["$.kernels[0].shape"]),
    "shape of strings": (_entry(shape=[4096, "4096", 4096]), ["$.kernels[0].shape[1]", "'4096'"]),
    "shape negative": (_entry(shape=[4096, -1, 4096]), ["$.kernels[0].shape[1]", "-1"]),
    "shape of floats": (_entry(shape=[4096.0, 4096, 4096]), ["$.kernels[0].shape[0]"]),
    "time_ns a number": (_entry(time_ns=1000), ["$.kernels[0].time_ns", "an object"]),
    "time_ns without median": (_entry(time_ns={"min": 3.0}), ["$.kernels[0].time_ns", "'median'"]),
    "median a string": (_median("fast"), ["$.kernels[0].time_ns.median", "'fast'"]),
    "median 0": (_median(0), ["$.kernels[0].time_ns.median", "positive"]),
    "median negative": (_median(-5.0), ["$.kernels[0].time_ns.median", "-5.0"]),
    "median NaN": (_median(math.nan), ["$.kernels[0].time_ns.median", "nan"]),
    "median infinite": (_median(math.inf), ["$.kernels[0].time_ns.median", "inf"]),
    "median true": (_median(True), ["$.kernels[0].time_ns.median"]),
    "correct 'no'": (_entry(correct="no"), ["$.kernels[0].correct", "'no'", "true or false"]),
    "correct 1": (_entry(correct=1), ["$.kernels[0].correct"]),
    "params a list": (_entry(params=[1]), ["$.kernels[0].params"]),
    "param a list": (_entry(params={"stages": [1]}), ["$.kernels[0].params['stages']"]),
    "registers a string": (_entry(registers_per_thread="32"), ["$.kernels[0].registers_per_thread", "'32'"]),
    "ncu a list": (_entry(ncu=[]), ["$.kernels[0].ncu"]),
    "ncu metric a string": (_entry(ncu={"dram__bytes_read.sum": "many"}),
                            ["$.kernels[0].ncu['dram__bytes_read.sum']", "'many'"]),
    "H100 PCIe": (_gpu("NVIDIA H100 PCIe"), ["$.gpu.name", "'NVIDIA H100 PCIe'", "--config"]),
    "H100 NVL": (_gpu("NVIDIA H100 NVL"), ["$.gpu.name", "'NVIDIA H100 NVL'"]),
    "not an H100": (_gpu("not an H100 (A100)"), ["$.gpu.name", "A100"]),
    "the right name in lower case": (_gpu("nvidia h100 80gb hbm3"), ["$.gpu.name"]),
    "a newline in the GPU name": (_gpu("NVIDIA H100 80GB HBM3\nsecond line"), ["$.gpu.name", "\\n"]),
    "not UTF-8": (b'{"schema": 1, "gpu": {"name": "\xff\xfe"}}', ["UTF-8"]),
    "not JSON": (b'{"schema": 1,', ["not valid JSON"]),
    "empty file": (b"", ["not valid JSON"]),
    "nested 100000 deep": (b"[" * 100_000 + b"]" * 100_000, ["nested too deeply"]),
    "a 5000-digit number": (b'{"schema": 1' + b"0" * 5000 + b"}", ["not valid JSON"]),
}


@pytest.mark.parametrize("case", MEASUREMENTS, ids=list(MEASUREMENTS))
def test_bad_measurement_file_is_one_line_naming_file_and_field(case, tmp_path, capsys):
    edit, words = MEASUREMENTS[case]
    path = tmp_path / "bad\nname.json"  # a newline in the path must stay on the one line
    path.write_bytes(edit if isinstance(edit, bytes) else json.dumps(edit(measurement())).encode())
    line = one_error(capsys, ["validate", "--measurements", str(path), "--report", str(tmp_path / "r.md")])
    assert repr(str(path)) in line
    for w in words:
        assert w in line, f"{w!r} not in {line!r}"
    assert not (tmp_path / "r.md").exists()


def test_the_small_valid_file_is_accepted(tmp_path, h100):
    path = tmp_path / "ok.json"
    path.write_text(json.dumps(measurement()))
    assert v.load_measurements(path, h100)["kernels"][0]["kernel"] == "sgemm_naive"


def test_every_committed_kernel_file_passes_the_schema(h100):
    files = sorted((REPO / "validate" / "measurements").glob("*/*.json"))
    kernel_files = [f for f in files if isinstance(json.loads(f.read_text()), dict)
                    and "kernels" in json.loads(f.read_text())]
    assert len(kernel_files) >= 5  # ladder, tensor-core (mma, hopper-gemm), fa3, membound
    from gpusim.config import load_config

    h200 = load_config(REPO / "configs" / "h200.toml")
    for f in kernel_files:
        v.check_schema(json.loads(f.read_text()), repr(str(f)))
        assert v.load_measurements(f, h200 if f.parent.name == "h200" else h100)["kernels"]


def test_micro_benchmark_files_are_refused_in_one_line(capsys):
    for name in ("memsys-2026-11-23.json", "micro-2026-11-22.json", "hopper-2026-11-22.json"):
        line = one_error(capsys, ["validate", "--measurements", str(LADDER.parent / name)])
        assert "$.kernels" in line and "no kernel measurements" in line


@pytest.mark.parametrize("model", ["H", "NVIDIA", "H100"])
def test_a_config_does_not_accept_a_gpu_it_does_not_name(model, tmp_path, capsys):
    cfg = tmp_path / "h.toml"
    cfg.write_text(H100_TEXT.replace('gpu_model = "H100"', f'gpu_model = "{model}"')
                   .replace('device_names = ["NVIDIA H100 80GB HBM3"]', f'device_names = ["{model}"]'))
    line = one_error(capsys, ["validate", "--config", str(cfg), "--measurements", str(LADDER)])
    assert "measured on 'NVIDIA H100 80GB HBM3'" in line


def test_h200_config_refuses_h100_measurements(capsys):
    line = one_error(capsys, ["validate", "--config", str(REPO / "configs" / "h200.toml"),
                              "--measurements", str(LADDER)])
    assert "'NVIDIA H100 80GB HBM3'" in line and "NVIDIA H200" in line


# ----------------------------------------------------------------------------------------------------------
# configs: cross-field rules (each field alone is in range)


def _cfg(old: str, new: str) -> str:
    assert old in H100_TEXT, old
    return H100_TEXT.replace(old, new, 1)


CONFIGS = {
    "achievable HBM bandwidth above peak": (
        _cfg("achievable_bandwidth_bytes_per_second = { value = 3.07e12", "achievable_bandwidth_bytes_per_second = "
             "{ value = 3.5e12"), ["hbm.achievable_bandwidth_bytes_per_second", "hbm.peak_bandwidth_bytes_per_second"]),
    "L1 slower than L2": (_cfg("hit_latency_cycles = { value = 32,", "hit_latency_cycles = { value = 400,"),
                          ["l1.hit_latency_cycles", "l2.hit_latency_near_cycles"]),
    "L2 slower than HBM": (_cfg("hit_latency_far_cycles = { value = 303,", "hit_latency_far_cycles = { value = 900,"),
                           ["l2.hit_latency_far_cycles", "hbm.load_latency_cycles"]),
    "L2 near slower than far": (_cfg("hit_latency_near_cycles = { value = 272,",
                                     "hit_latency_near_cycles = { value = 310,"), ["l2.hit_latency_near_cycles"]),
    "2048 threads per block, 1024 per SM": (
        _cfg("max_threads_per_block = { value = 1024,", "max_threads_per_block = { value = 2048,")
        .replace("max_threads_per_sm = { value = 2048,", "max_threads_per_sm = { value = 1024,"),
        ["sm.max_threads_per_block", "sm.max_threads_per_sm"]),
    "carve-out larger than the unified L1": (
        _cfg("200704, 233472]", "200704, 233472, 300000]"), ["carveouts_bytes", "unified_l1_smem_bytes"]),
    "shared memory per SM larger than the unified L1": (
        _cfg("unified_l1_smem_bytes = { value = 262144,", "unified_l1_smem_bytes = { value = 131072,"),
        ["unified_l1_smem_bytes"]),
    "block shared memory above the SM's": (
        _cfg("smem_per_block_max_bytes = { value = 232448,", "smem_per_block_max_bytes = { value = 240000,"),
        ["sm.smem_per_block_max_bytes", "sm.smem_per_sm_max_bytes"]),
    "block registers above the SM's": (
        _cfg("max_registers_per_block = { value = 65536,", "max_registers_per_block = { value = 131072,"),
        ["sm.max_registers_per_block"]),
    "L2 larger than HBM": (
        _cfg("size_bytes = { value = 52428800,", "size_bytes = { value = 4294967296,")
        .replace("capacity_bytes = { value = 80000000000,", "capacity_bytes = { value = 2147483648,"),
        ["l2.size_bytes", "hbm.capacity_bytes"]),
    "carve-outs out of order": (_cfg("[0, 8192, 16384,", "[0, 16384, 8192,"), ["carveouts_bytes", "increasing"]),
    "TMA from L2 slower than from HBM": (
        _cfg("l2_latency_cycles = { value = 340,", "l2_latency_cycles = { value = 800,"), ["tma.l2_latency_cycles"]),
    "no device names": (_cfg('device_names = ["NVIDIA H100 80GB HBM3"]', "device_names = []"), ["device_names"]),
    "a device name a number": (_cfg('device_names = ["NVIDIA H100 80GB HBM3"]', "device_names = [100]"),
                               ["device_names"]),
    "nested 50000 deep": ("x = " + "[" * 50_000 + "]" * 50_000 + "\n", ["nested too deeply"]),
    "unknown key with a newline": (H100_TEXT + '\n"bad\\nkey" = 1\n', ["'bad\\nkey'"]),
}


@pytest.mark.parametrize("case", CONFIGS, ids=list(CONFIGS))
def test_inconsistent_config_is_one_line(case, tmp_path, capsys):
    text, words = CONFIGS[case]
    path = tmp_path / "bad.toml"
    path.write_text(text)
    line = one_error(capsys, ["run", "sgemm_naive", "--shape", SMALL, "--config", str(path)])
    assert repr(str(path)) in line
    for w in words:
        assert w in line, f"{w!r} not in {line!r}"


@pytest.mark.parametrize("path", sorted((REPO / "configs").glob("*.toml")), ids=lambda p: p.name)
def test_shipped_configs_are_consistent(path):
    assert load_config(path).device_names


# ----------------------------------------------------------------------------------------------------------
# reads: folders, devices, FIFOs


@pytest.mark.parametrize("flag", ["--config", "--measurements", "--kernels"])
@pytest.mark.parametrize("what", ["folder", "/dev/zero", "/dev/null", "empty path"])
def test_non_regular_files_are_refused(flag, what, tmp_path, capsys):
    path = {"folder": str(tmp_path), "/dev/zero": "/dev/zero", "/dev/null": "/dev/null", "empty path": ""}[what]
    if flag == "--kernels" and what == "folder":
        (tmp_path / "k.py").mkdir()  # a folder named like a kernel file
    argv = (["validate", "--measurements", path] if flag == "--measurements" else
            ["run", "sgemm_naive", "--shape", SMALL, flag, path])
    line = one_error(capsys, argv)
    assert repr(path) in line or repr(str(tmp_path / "k.py")) in line


def _fifo(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    os.mkfifo(path)
    return path


def _limit_memory():
    limit = 3 << 30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def run_cli(argv: list[str], timeout: float = 60, env: dict | None = None) -> subprocess.CompletedProcess:
    """The CLI as a separate process under a 3 GiB address-space cap and a time limit (a hang fails the test)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "OPENBLAS_NUM_THREADS": "1", **(env or {})}
    return subprocess.run([sys.executable, "-m", "gpusim.cli", *argv], capture_output=True, text=True, cwd=REPO,
                          env=env, timeout=timeout, check=False, preexec_fn=_limit_memory)


def assert_one_line(proc: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert proc.stderr.startswith("gpusim: error: ") and proc.stderr.count("\n") == 1, proc.stderr
    return proc.stderr


def test_fifos_do_not_hang(tmp_path):
    cfg, meas, kern = _fifo(tmp_path, "c.toml"), _fifo(tmp_path, "m.json"), _fifo(tmp_path, "k.py")
    for argv in (["run", "sgemm_naive", "--shape", SMALL, "--config", str(cfg)],
                 ["validate", "--measurements", str(meas)],
                 ["run", "sgemm_naive", "--shape", SMALL, "--kernels", str(kern)]):
        assert "FIFO" in assert_one_line(run_cli(argv))


# ----------------------------------------------------------------------------------------------------------
# messages and nonsense


@pytest.mark.parametrize("argv,words", [
    (["run", "sgemm\nnaive", "--shape", SMALL], ["'sgemm\\nnaive'", "unknown kernel"]),
    (["run", "sgemm_naive", "--shape", SMALL, "--set", "a\nb=1"], ["'a\\nb'", "unknown parameter"]),
    (["run", "sgemm_naive", "--shape", SMALL, "--config", "no\nsuch.toml"], ["'no\\nsuch.toml'", "no such"]),
    (["run", "sgemm_naive", "--shape", SMALL, "--kernels", "no\nsuch.py"], ["'no\\nsuch.py'", "no such"]),
    (["run", "sgemm_naive", "--shape", "-1,4,4"], ["M=-1", "positive"]),
    (["run", "sgemm_naive", "--shape", "-1"], ["shape needs 3"]),
    (["trace", "sgemm_naive", "--shape", "-64,64,64", "-o", "t.json"], ["M=-64"]),
    (["run", "sgemm_naive", "--shape", "1000000000000,256,256"], ["HBM", "tensors"]),
    (["run", "sgemm_naive", "--shape", "256,256,1000000000000"], ["HBM"]),
    (["run", "hgemm_mma", "--shape", "2147483648,4096,4096"], ["HBM"]),
    (["run", "mem_copy", "--shape", "100000000000"], ["HBM"]),
    (["run", "fa2", "--shape", "1,1,1099511627776,128"], ["HBM"]),
    (["run", "fa3", "--shape", "1,1,4096,128", "--set", "regs_per_thread=24"], ["setmaxnreg", "24 x 384"]),
    (["run", "hgemm_tma_wgmma", "--shape", "512,512,512", "--set", "smem_bytes=0"], ["smem_bytes=0", "below"]),
    (["run", "fa3", "--shape", "1,1,4096,128", "--set", "smem_bytes=0"], ["smem_bytes=0", "below"]),
    (["run", "sgemm_smem_blocking", "--shape", SMALL, "--set", "smem_bytes=1024"], ["smem_bytes=1024", "below"]),
    (["trace", "sgemm_naive", "--shape", SMALL, "-o", ""], ["-o ''", "cannot write"]),
    (["trace", "sgemm_naive", "--shape", SMALL, "-o", "/dev/full"], ["-o '/dev/full'", "cannot write"]),
    (["trace", "sgemm_naive", "--shape", SMALL, "-o", "no/such/dir/t.json"], ["'no/such/dir/t.json'"]),
], ids=lambda x: " ".join(x) if isinstance(x, list) and x and x[0] in ("run", "trace") else None)
def test_messages_are_one_line(argv, words, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    line = one_error(capsys, argv)
    for w in words:
        assert w in line, f"{w!r} not in {line!r}"
    assert not (tmp_path / "t.json").exists()


def test_bad_figure_format_is_refused_before_anything_is_written(tmp_path, capsys):
    report, fig = tmp_path / "r.md", tmp_path / "out.xyz"
    line = one_error(capsys, ["validate", "--report", str(report), "--figure", str(fig)])
    assert repr(str(fig)) in line and "png" in line
    assert not report.exists() and not fig.exists()


def test_report_to_an_unwritable_path_names_it(capsys, tmp_path):
    meas = tmp_path / "m.json"
    meas.write_text(json.dumps(measurement()))
    line = one_error(capsys, ["validate", "--measurements", str(meas), "--report", "/dev/full"])
    assert "--report '/dev/full'" in line


def test_non_ascii_path_on_an_ascii_terminal(tmp_path):
    out = tmp_path / "tr\u00e4ce" / "t.json"
    out.parent.mkdir()
    proc = run_cli(["trace", "sgemm_naive", "--shape", SMALL, "-o", str(out)], env={"PYTHONIOENCODING": "ascii"})
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert out.exists() and "tr\\xe4ce" in proc.stdout
    assert_one_line(run_cli(["run", "sgemm_\u00fc", "--shape", SMALL], env={"PYTHONIOENCODING": "ascii"}))


def test_a_malformed_tolerance_file_is_one_line_naming_the_file(tmp_path):
    """validate/tolerances.toml edited by hand into invalid TOML: a ValidationError (one line, the file and the
    parser's line and column), never a traceback out of tomllib."""
    from gpusim import validation as v

    bad = tmp_path / "tolerances.toml"
    bad.write_text('[zero_predictions]\n"x" = [\n    "a",\n] "b",\n]\n')
    with pytest.raises(v.ValidationError, match=r"tolerances\.toml.*not valid TOML.*line 4") as e:
        v.load_tolerances(bad)
    assert "\n" not in str(e.value)
