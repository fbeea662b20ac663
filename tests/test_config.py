"""Config smoke tests (every shipped config loads and runs) and the strict loader's negative cases.

Every malformed config is the shipped H100 file with one line edited, so it is valid in every other way
and the only error the loader can report is the one the test introduced.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from gpusim.config import SECTIONS, ConfigError, load_config

CONFIG_DIR = Path(__file__).resolve().parent.parent / "gpusim" / "configs"
H100_CONFIG = CONFIG_DIR / "h100_sxm.toml"
CONFIGS = sorted(CONFIG_DIR.glob("*.toml"))
H100_TEXT = H100_CONFIG.read_text()


def test_configs_are_found():
    names = {p.name for p in CONFIGS}
    assert {"h100_sxm.toml", "h200.toml"} <= names


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_every_config_loads_and_runs(path):
    from gpusim.api import predict

    cfg = load_config(path)
    assert cfg.path == str(path)
    # every number carries a non-empty source
    assert cfg.sources and all(s.strip() for s in cfg.sources.values())
    m, _ = predict("sgemm_naive", (256, 256, 256), None, cfg)
    assert m["gpu__time_duration.sum"] > cfg.chip.kernel_overhead_ns
    # C (256 x 256 floats) is still dirty in L2 when the kernel ends: no DRAM write yet (as measured at 512^3)
    assert m["dram__bytes_write.sum"] == 0


def test_default_config_is_the_h100():
    assert load_config().path == load_config(H100_CONFIG).path
    assert load_config().gpu_model == "H100"


def test_h200_differs_from_h100_only_in_hbm_and_l2_size(h100, h200):
    for section in SECTIONS:
        if section in ("hbm", "l2", "chip"):
            continue
        assert getattr(h100, section) == getattr(h200, section), section
    # the same SM; the clock each holds under tensor load is measured on each (power, not the die)
    chip_diff = {f.name for f in dataclasses.fields(h100.chip)
                 if getattr(h100.chip, f.name) != getattr(h200.chip, f.name)}
    assert chip_diff <= {"sm_clock_mma_sync_saturated_hz", "sm_clock_wgmma_saturated_hz"}
    l2_diff = {f.name for f in dataclasses.fields(h100.l2) if getattr(h100.l2, f.name) != getattr(h200.l2, f.name)}
    # the L2 write path is the H100's scaled by the two GPUs' measured copy rates (configs/h200.toml)
    assert l2_diff == {"size_bytes", "write_cycles_per_line", "write_cycles_per_sector", "write_peak_bytes_per_second"}
    assert h200.l2.size_bytes > h100.l2.size_bytes
    assert h200.hbm.peak_bandwidth_bytes_per_second > h100.hbm.peak_bandwidth_bytes_per_second
    assert h200.hbm.achievable_bandwidth_bytes_per_second > h100.hbm.achievable_bandwidth_bytes_per_second


def test_h200_predicts_a_memory_bound_kernel_faster(h100, h200):
    from gpusim.api import predict

    # With K = 8 each CTA of sgemm_1d_blocktiling runs a single K tile: the kernel streams C in and out
    # (2 x 256 MB at 8192 x 8192) with almost no reuse, so the memory side sets its time: HBM, and the L2 write
    # path that both the fills of C and the stores to it take (the H200's scaled by its measured copy rate).
    shape = (8192, 8192, 8)
    m100, _ = predict("sgemm_1d_blocktiling", shape, None, h100)
    m200, _ = predict("sgemm_1d_blocktiling", shape, None, h200)
    assert m100["gpusim__verdict"].startswith(("HBM-bound", "L2-write-bound")), m100["gpusim__verdict"]
    t100, t200 = m100["gpu__time_duration.sum"], m200["gpu__time_duration.sum"]
    assert t200 < t100
    # ...but no faster than the extra bandwidth (HBM or the L2 write path) allows for the bytes each moves (the
    # H200's larger L2 keeps more of C dirty at the end, so it writes back fewer bytes)
    bw_ratio = max(h200.hbm.achievable_bandwidth_bytes_per_second / h100.hbm.achievable_bandwidth_bytes_per_second,
                   h100.l2.write_cycles_per_sector / h200.l2.write_cycles_per_sector)
    moved = [m["dram__bytes_read.sum"] + m["dram__bytes_write.sum"] for m in (m100, m200)]
    assert t100 / t200 <= bw_ratio * moved[0] / moved[1]
    # same die: the same instructions are issued and the same bytes must come from DRAM at least once
    assert m200["smsp__inst_executed.sum"] == m100["smsp__inst_executed.sum"]
    # C (256 MB) is written back except what is still dirty in each L2 at the end: the H200's larger L2 keeps more
    c = 8192 * 8192 * 4
    assert c - h100.l2.size_bytes <= m100["dram__bytes_write.sum"] <= c
    assert c - h200.l2.size_bytes <= m200["dram__bytes_write.sum"] <= m100["dram__bytes_write.sum"]


# ----------------------------------------------------------------------------------------------------------
# malformed configs


def _edit(pattern: str, repl: str, count: int = 1) -> str:
    text, n = re.subn(pattern, repl, H100_TEXT, count=count, flags=re.MULTILINE)
    assert n == count, f"pattern {pattern!r} did not match the shipped config"
    return text


def _load_text(tmp_path: Path, text: str) -> tuple[str, str]:
    path = tmp_path / "bad_config.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_config(path)
    return str(path), str(e.value)


BAD = {
    # name: (edited text, words the message must contain besides the path)
    "unknown section": (H100_TEXT + '\n[turbo]\nboost_pct = { value = 5, source = "marketing" }\n', ["turbo"]),
    "unknown key": (_edit(r"^(subpartitions = .*)$", r'\1\nwarp_schedulers = { value = 4, source = "x" }'),
                    ["warp_schedulers", "[sm]"]),
    "missing key": (_edit(r"^max_ctas_per_sm = .*\n", ""), ["max_ctas_per_sm", "missing"]),
    "missing section": (_edit(r"^\[scheduler\]\n(.+\n)*", ""), ["scheduler"]),
    "out of range": (_edit(r"^sm_count = \{ value = 132,", "sm_count = { value = 0,"),
                     ["sm_count", "[1, 1024]", "out of range"]),
    "out of range float": (_edit(r"^sm_clock_hz = \{ value = 1.98e9,", "sm_clock_hz = { value = 9e9,"),
                           ["sm_clock_hz", "out of range"]),
    "string for int": (_edit(r"^sm_count = \{ value = 132,", 'sm_count = { value = "132",'),
                       ["sm_count", "integer"]),
    "bool for int": (_edit(r"^subpartitions = \{ value = 4,", "subpartitions = { value = true,"),
                     ["subpartitions", "integer"]),
    "float for int": (_edit(r"^banks = \{ value = 32,", "banks = { value = 32.5,"), ["banks", "integer"]),
    "string for float": (_edit(r"^kernel_overhead_ns = \{ value = 2080.0,", 'kernel_overhead_ns = { value = "2us",'),
                         ["kernel_overhead_ns", "number"]),
    "bad choice": (_edit(r'^policy = \{ value = "fcfs",', 'policy = { value = "lottery",'), ["policy", "fcfs"]),
    "bad list": (_edit(r"^carveouts_bytes = \{ value = \[[^\]]*\],", "carveouts_bytes = { value = [],"),
                 ["carveouts_bytes", "list"]),
    "without source": (_edit(r"^(warp_size_threads = \{ value = 32), source = [^}]*\}", r"\1 }"),
                       ["warp_size_threads", "source"]),
    "bare number": (_edit(r"^(max_warps_per_sm = )\{[^}]*\}", r"\g<1>64"), ["max_warps_per_sm"]),
    "empty source": (_edit(r'^(line_bytes = \{ value = 128, source = )"[^"]*"', r'\1""'), ["line_bytes", "source"]),
    "blank source": (_edit(r'^(sector_bytes = \{ value = 32, source = )"[^"]*"', r'\1"   "'),
                     ["sector_bytes", "source"]),
    "missing name": (_edit(r"^name = .*\n", ""), ["name"]),
    "loaded latency lengths differ": (_edit(r"^loaded_added_cycles = \{ value = \[0, 18, 172\]",
                                            "loaded_added_cycles = { value = [0, 18]"),
                                      ["[l2]", "loaded_utilization_pct", "same length"]),
    "loaded latency not increasing": (_edit(r"^loaded_utilization_pct = \{ value = \[36, 64, 91\]",
                                            "loaded_utilization_pct = { value = [36, 91, 64]"),
                                      ["[hbm]", "strictly increasing"]),
    "icache table lengths differ": (_edit(r"^fetch_cycles_per_instruction = \{ value = \[1\.016, ",
                                          "fetch_cycles_per_instruction = { value = ["),
                                    ["[icache]", "loop_bytes", "same length"]),
    "icache sizes not increasing": (_edit(r"^loop_bytes = \{ value = \[28672, 32768,",
                                          "loop_bytes = { value = [32768, 28672,"),
                                    ["[icache]", "loop_bytes", "strictly increasing"]),
    "icache rate not a number": (_edit(r"^fetch_cycles_per_instruction = \{ value = \[1\.016,",
                                       'fetch_cycles_per_instruction = { value = ["fast",'),
                                 ["[icache]", "fetch_cycles_per_instruction", "number"]),
}


@pytest.mark.parametrize("case", BAD, ids=list(BAD))
def test_malformed_config_names_file_and_key(tmp_path, case):
    text, words = BAD[case]
    path, msg = _load_text(tmp_path, text)
    assert path in msg
    for w in words:
        assert w in msg, f"{case}: {w!r} not in {msg!r}"


def test_invalid_toml_names_file_and_line(tmp_path):
    # drop the closing brace of sm_count (line 10 of the shipped file)
    text = _edit(r"^(sm_count = \{ value = 132, source = \"[^\"]*\") \}", r"\1")
    line = text.splitlines().index(next(ln for ln in text.splitlines() if ln.startswith("sm_count"))) + 1
    path, msg = _load_text(tmp_path, text)
    assert path in msg
    assert "TOML" in msg
    assert f"line {line}" in msg


def test_missing_file_names_the_file(tmp_path):
    path = tmp_path / "nope" / "h100.toml"
    with pytest.raises(ConfigError) as e:
        load_config(path)
    assert str(path) in str(e.value)
    assert "no such" in str(e.value)


def test_out_of_range_bounds_are_inclusive(tmp_path):
    # sm_count allows [1, 1024]: both ends load
    for v in (1, 1024):
        p = tmp_path / f"sm{v}.toml"
        p.write_text(_edit(r"^sm_count = \{ value = 132,", f"sm_count = {{ value = {v},"))
        assert load_config(p).chip.sm_count == v
    p = tmp_path / "sm1025.toml"
    p.write_text(_edit(r"^sm_count = \{ value = 132,", "sm_count = { value = 1025,"))
    with pytest.raises(ConfigError, match=r"\[1, 1024\]"):
        load_config(p)


# ----------------------------------------------------------------------------------------------------------
# generations: optional features, inheritance, pipes declared in the config, the A100 and the H100 PCIe

H200_CONFIG = CONFIG_DIR / "h200.toml"
A100_CONFIG = CONFIG_DIR / "a100_sxm4.toml"


def _full_copy(child: Path, parent_text: str) -> str:
    """The config ``child`` written out whole, without the loader's inheritance: the parent's text with each key
    the child sets put in its place (by section), and the child's name, model and device names."""
    import tomllib

    text, own = parent_text, tomllib.loads(child.read_text())
    for key in ("name", "gpu_model", "device_names"):
        text = re.sub(rf"^{key} = .*$", lambda _m, k=key: f"{k} = {json.dumps(own[k])}", text, count=1, flags=re.M)
    for section, table in own.items():
        if not isinstance(table, dict):
            continue
        for key, entry in table.items():
            start = text.index(f"\n[{section}]\n")
            m = re.compile(rf"^{key} = .*$", re.M).search(text, start)
            text = text[:m.start()] + f"{key} = {{ value = {json.dumps(entry['value'])}, source = " \
                f"{json.dumps(entry['source'])} }}" + text[m.end():]
    return text


def test_inheritance_equals_the_full_copy(tmp_path, h100, h200):
    # h200.toml is the H100's config with its differences: loaded, it is the same GPU as the whole file written out
    full = tmp_path / "h200_full.toml"
    full.write_text(_full_copy(H200_CONFIG, H100_TEXT))
    whole = load_config(full)
    for section in SECTIONS:
        assert getattr(h200, section) == getattr(whole, section), section
    assert (h200.name, h200.gpu_model, h200.device_names) == (whole.name, whole.gpu_model, whole.device_names)
    assert h200.inherits == (str(H100_CONFIG),) and whole.inherits == ()
    # what it sets keeps its own source; what it inherits says where from
    assert h200.sources["hbm.capacity_bytes"] == whole.sources["hbm.capacity_bytes"]
    assert h200.sources["sm.subpartitions"] == "inherited from h100_sxm.toml: " + h100.sources["sm.subpartitions"]
    assert h200 != h100


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.mark.parametrize("case", ["cycle", "self", "missing", "not a string"])
def test_malformed_inheritance_is_one_line(tmp_path, case):
    child = '\ninherits = "{}"\nname = "x"\n'
    if case == "cycle":
        _write(tmp_path, "a.toml", 'inherits = "b"\n')
        p = _write(tmp_path, "b.toml", 'inherits = "a"\n')
        words = ["cycle", "b.toml -> a.toml -> b.toml"]
    elif case == "self":
        p = _write(tmp_path, "a.toml", child.format("a"))
        words = ["cycle"]
    elif case == "missing":
        p = _write(tmp_path, "a.toml", child.format("h100_sxm_nope"))
        words = ["h100_sxm_nope", "no config"]
    else:
        p = _write(tmp_path, "a.toml", "inherits = 3\n")
        words = ["'inherits' must name a config"]
    with pytest.raises(ConfigError) as e:
        load_config(p)
    msg = str(e.value)
    assert "\n" not in msg and str(p.parent) in msg  # the file whose 'inherits' is wrong (the cycle's last link)
    for w in words:
        assert w in msg, (case, msg)


def test_a_config_inherits_by_path_and_its_own_keys_win(tmp_path, h100):
    _write(tmp_path, "base.toml", H100_TEXT)
    (tmp_path / "sub").mkdir()
    p = _write(tmp_path / "sub", "c.toml", 'inherits = "../base.toml"\nname = "C"\n[chip]\nsm_count = '
               '{ value = 66, source = "half" }\n[pipes.fp32]\nlanes_per_sm = { value = 64, source = "half" }\n')
    c = load_config(p)
    assert c.name == "C" and c.gpu_model == h100.gpu_model
    assert c.chip.sm_count == 66 and c.pipes.fp32_lanes_per_sm == 64
    # a sub-table is merged key by key: the fp32 pipe keeps its latency, the other pipes stay as they were
    assert c.pipes.fp32_latency_cycles == h100.pipes.fp32_latency_cycles
    assert c.pipes.names == h100.pipes.names and c.pipes.pipe("wgmma") == h100.pipes.pipe("wgmma")


def test_the_a100_lacks_hoppers_features(h100):
    a100 = load_config(A100_CONFIG)
    assert h100.features == ("tma", "wgmma", "clusters")
    assert a100.features == ()
    assert a100.tma is None and a100.sm.max_cluster_ctas is None and a100.chip.sm_clock_wgmma_saturated_hz is None
    assert a100.chip.tensor_map_param_launch_ns is None
    assert a100.pipes.names == ("fp32", "int32", "sfu", "shfl", "tensor") and a100.pipes.wgmma_flops_per_cycle_per_sm \
        is None
    # the dense tensor peak is mma.sync's on the A100 (312 TFLOPS = 108 SMs x 1.41 GHz x 2048 FLOP/clk/SM)
    from gpusim.peaks import peaks

    assert peaks(a100).tensor_flops_per_second == pytest.approx(312e12, rel=0.01)
    # every number carries a source; those the public sources do not give say they are the H100's, assumed
    assert all(s.strip() for s in a100.sources.values())
    assert "assumed" in a100.sources["l2.reuse_all_miss_footprint_ratio"]


@pytest.mark.parametrize("text, words", [
    # [tma] gone but its launch cost kept: half a feature
    (re.sub(r"^\[tma\]\n(.+\n)*", "", H100_TEXT, flags=re.M), ["tensor_map_param_launch_ns", "[tma]", "tma feature"]),
    # a wgmma clock without the wgmma pipe
    (re.sub(r"^\[pipes\.wgmma\].*\n(.+\n)*", "", H100_TEXT, flags=re.M), ["[pipes.wgmma]", "wgmma feature"]),
    # a pipe must be one width or the other
    (re.sub(r"^(\[pipes\.fp32\]\n)", r'\1flops_per_cycle_per_sm = { value = 256, source = "x" }\n', H100_TEXT,
            flags=re.M), ["[pipes.fp32]", "exactly one of lanes_per_sm and flops_per_cycle_per_sm"]),
    (re.sub(r"^(\[pipes\.sfu\]\n)lanes_per_sm = .*\n", r"\1", H100_TEXT, flags=re.M),
     ["[pipes.sfu]", "exactly one of"]),
    (re.sub(r"^(\[pipes\.sfu\]\n)", r'\1lanes = { value = 16, source = "x" }\n', H100_TEXT, flags=re.M),
     ["[pipes.sfu]", "unknown key 'lanes'"]),
    (re.sub(r"^\[pipes\.\w+\].*\n(.+\n)*", "", H100_TEXT, flags=re.M), ["[pipes]", "no sub-table"]),
])
def test_generation_parts_are_checked(tmp_path, text, words):
    path, msg = _load_text(tmp_path, text)
    assert path in msg
    for w in words:
        assert w in msg, msg


def test_the_pipes_are_the_configs(tmp_path, h100):
    # the model runs the pipes the config declares: one without the SFU refuses a kernel that needs it, and an FP32
    # pipe half as wide makes an FP32-bound kernel slower
    from gpusim.api import predict
    from gpusim.ir import KernelError

    no_sfu = load_config(_write(tmp_path, "nosfu.toml", re.sub(r"^\[pipes\.sfu\]\n(.+\n)*", "", H100_TEXT,
                                                                 flags=re.M)))
    assert "sfu" not in no_sfu.pipes.names
    with pytest.raises(KernelError, match="needs the sfu pipe, which the NVIDIA H100 SXM5 80GB config does not"):
        predict("fa2", (1, 2, 256, 64), None, no_sfu)
    half = load_config(_write(tmp_path, "half.toml", re.sub(r"^(\[pipes\.fp32\]\nlanes_per_sm = \{ value = )128,",
                                                            r"\g<1>64,", H100_TEXT, flags=re.M)))
    shape = (512, 512, 512)
    t_full = predict("sgemm_warptiling", shape, None, h100)[0]["gpu__time_duration.sum"]
    t_half = predict("sgemm_warptiling", shape, None, half)[0]["gpu__time_duration.sum"]
    assert t_half > 1.2 * t_full  # 1.27 (the launch overhead and the memory side do not change)


def test_the_a100_runs_the_fp32_and_sm80_tensor_kernels_and_refuses_hoppers(capsys):
    from gpusim.cli import main

    for kernel, shape in (("sgemm_warptiling", "512,512,512"), ("hgemm_mma_swizzled", "512,512,512"),
                          ("fa2", "1,2,256,64")):
        assert main(["run", kernel, "--shape", shape, "--config", "a100_sxm4"]) == 0, kernel
        out = capsys.readouterr().out
        assert "NVIDIA A100 SXM4 80GB" in out and "unvalidated: no kernel measurements of the A100" in out
    for kernel, feature in (("hgemm_tma_wgmma", "needs tma"), ("hgemm_ws_cluster", "needs clusters")):
        assert main(["run", kernel, "--shape", "512,512,512", "--config", "a100_sxm4"]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and feature in err and "A100" in err, err
        # the same kernel runs where the feature is
        assert main(["run", kernel, "--shape", "512,512,512"]) == 0
        capsys.readouterr()


def test_a_wgmma_kernel_on_a_gpu_without_wgmma_names_it(h100):
    from gpusim.ir import Compute
    from gpusim.registry import build_kernel
    from gpusim.kernel_checks import MissingFeatureError, check_kernel

    a100 = load_config(A100_CONFIG)
    base = build_kernel("sgemm_naive", (256, 256, 256), None, h100)
    k = dataclasses.replace(base, prologue=(Compute("mma", "wgmma", 4), *base.prologue))
    check_kernel(k, h100)
    with pytest.raises(MissingFeatureError, match=r"'mma' needs wgmma .*no \[pipes.wgmma\]"):
        check_kernel(k, a100)


def test_gpusim_list_shows_the_configs_and_which_are_unvalidated(capsys):
    from gpusim.cli import main

    assert main(["list"]) == 0
    out = capsys.readouterr().out.split("hardware configs (--config NAME):")[1]
    lines = {ln.split()[0]: ln for ln in out.strip().splitlines()}
    assert set(lines) == {p.stem for p in CONFIGS}
    assert "UNVALIDATED" in lines["a100_sxm4"] and "no tma, wgmma, clusters" in lines["a100_sxm4"]
    assert "UNVALIDATED" in lines["h100_pcie"] and "inherits h100_sxm" in lines["h100_pcie"]
    assert "kernels measured on it" in lines["h100_sxm"] and "UNVALIDATED" not in lines["h100_sxm"]


def test_the_package_carries_its_configs():
    # the bundled configs live inside the package and pyproject ships them, so a non-editable install finds them
    # (.ci/check_install shows it end to end: a fresh venv, pip install ., gpusim ladder from /)
    import tomllib

    import gpusim
    from gpusim.config import DEFAULT_CONFIG

    pkg = Path(gpusim.__file__).parent
    assert CONFIG_DIR.resolve().parent == pkg.resolve() and DEFAULT_CONFIG.parent == pkg / "configs"
    project = tomllib.loads((pkg.parent / "pyproject.toml").read_text())
    shipped = project["tool"]["setuptools"]["package-data"]["gpusim"]
    assert all(any(p.relative_to(pkg).match(g) for g in shipped) for p in CONFIGS)
