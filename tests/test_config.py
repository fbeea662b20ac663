"""Config smoke tests (every shipped config loads and runs) and the strict loader's negative cases.

Every malformed config is the shipped H100 file with one line edited, so it is valid in every other way
and the only error the loader can report is the one the test introduced.
"""

from __future__ import annotations

import dataclasses
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
    assert l2_diff == {"size_bytes", "write_cycles_per_line", "write_cycles_per_sector"}
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
    assert m100["gpusim__verdict"].startswith(("memory-bound", "L2-write-bound")), m100["gpusim__verdict"]
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
