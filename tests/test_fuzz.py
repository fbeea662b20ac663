"""Fuzz: a seeded generator of bad command lines, config files and measurement files (issue 12).

Every generated input is bad by construction (a wrong type, a value out of range, a missing or unknown key, a
broken byte stream, a shape no GPU can hold, ...), so gpusim must answer each with exactly one line
``gpusim: error: ...`` on stderr, exit status 2, no traceback, nothing on stdout, and soon. The cases run
in-process through :func:`gpusim.cli.main` (a few hundred in seconds) under an alarm that turns a hang into a
failure; the ones that could hang or exhaust memory (FIFOs, devices, huge files) run as subprocesses with a
timeout and an address-space cap. The seed is fixed: a failure names its case and reproduces.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import random
import re
import signal
import typing
from pathlib import Path

import pytest
from test_reliability import H100_TEXT, SMALL, assert_one_line, measurement, run_cli

from gpusim.cli import main
from gpusim.config import FEATURES, SECTIONS

SEED = 12
CASES_PER_KIND = 200
CASE_SECONDS = 20  # a hang detector, not a speed test: the slowest case takes well under a second

KERNELS = {"sgemm_naive": 3, "sgemm_2d_blocktiling": 3, "hgemm_mma": 3, "fa2": 4, "fa3": 4, "mem_copy": 1}
ODD_TEXT = ["", " ", "\n", "a\nb", "\t", "\u00e9", "\u2603", "\x00", "-", "--", "=", ",", "'", '"', "\\", "../",
            "x" * 300, "\udcff"]


class Hang(BaseException):
    """A case ran past CASE_SECONDS (BaseException: gpusim's handlers must not swallow it)."""


def _alarm(signum, frame):
    raise Hang()


def run_in_process(capsys, argv: list[str]) -> str:
    """One case through ``main``: exit 2, one line on stderr, nothing on stdout, within CASE_SECONDS."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(CASE_SECONDS)
    try:
        rc = main(argv)
    except Hang:
        pytest.fail(f"no answer within {CASE_SECONDS} s: {argv!r}")
    except SystemExit as e:
        pytest.fail(f"SystemExit({e.code}) escaped main: {argv!r}")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    out, err = capsys.readouterr()
    assert "Traceback" not in err, (argv, err)
    assert rc == 2, (argv, rc, err, out[-200:])
    assert out == "", (argv, out[-200:])
    assert err.startswith("gpusim: error: ") and err.count("\n") == 1 and err.endswith("\n"), (argv, err)
    return err


# ----------------------------------------------------------------------------------------------------------
# command lines


def bad_shape(rng: random.Random, dims: int) -> str:
    """A shape no kernel can run: wrong count, a dimension <= 0, not integers, or tensors beyond any HBM."""
    kind = rng.choice(["count", "nonpositive", "text", "huge", "empty dims"])
    if kind == "count":
        n = rng.choice([d for d in range(0, 7) if d != dims])
        return ",".join(str(rng.choice([64, 128, 256])) for _ in range(n)) if n else ""
    if kind == "nonpositive":
        vals = [rng.choice([64, 128, 256]) for _ in range(dims)]
        vals[rng.randrange(dims)] = rng.choice([0, -1, -64, -(2 ** rng.randrange(1, 70))])
        return ",".join(map(str, vals))
    if kind == "text":
        vals = [str(rng.choice([64, 128])) for _ in range(dims)]
        vals[rng.randrange(dims)] = rng.choice(["x", "1e3", "0x40", "64.0", " ", "\u0664\u0664\u00bd", "nan",
                                                "inf", "1_000_", "9" * 5000])
        return ",".join(vals)
    if kind == "huge":  # every dimension contributes to some tensor: one of 1e11 or more overflows 80 GB
        vals = [rng.choice([64, 128, 256]) for _ in range(dims)]
        vals[rng.randrange(dims)] = rng.choice([10 ** rng.randrange(11, 40), 2 ** rng.randrange(37, 128)])
        return ",".join(map(str, vals))
    return ",".join([""] * (dims + rng.randrange(0, 2)))


def bad_argv(rng: random.Random, tmp: Path) -> list[str]:
    kernel = rng.choice(list(KERNELS))
    small = {1: "1048576", 3: SMALL, 4: "1,1,256,128"}[KERNELS[kernel]]
    kind = rng.choice(["shape", "kernel", "set key", "set value", "set launch", "family", "option", "command",
                       "path", "output"])
    cmd = rng.choice(["run", "trace"])
    tail = ["-o", str(tmp / "t.json")] if cmd == "trace" else []
    if kind == "shape":
        return [cmd, kernel, "--shape", bad_shape(rng, KERNELS[kernel]), *tail]
    if kind == "kernel":
        return [cmd, rng.choice(list(KERNELS)) + rng.choice(ODD_TEXT[1:]), "--shape", small, *tail]
    if kind == "set key":
        key = rng.choice(["TILE", "bk", "regs", "stages", "causal", "\u00e9", "smem"]) + rng.choice(
            [t for t in ODD_TEXT if t.strip()])  # blanks around the key are stripped: "stages =1" is fine
        return [cmd, kernel, "--shape", small, "--set", f"{key}=1", *tail]
    if kind == "set value":
        key = {"fa2": "causal", "fa3": rng.choice(["stages", "causal", "swizzle", "bc"]),
               "hgemm_mma": rng.choice(["stages", "swizzle"]), "sgemm_2d_blocktiling": rng.choice(["BM", "TM", "BK"]),
               "sgemm_naive": "regs_per_thread", "mem_copy": "smem_bytes"}[kernel]
        value = rng.choice(["", "x", "-1", "1.5", "2" * 30, "\u0663\u0662", "0x10", "nan", "1e3", "none", "99"])
        if key in ("regs_per_thread", "smem_bytes") and value == "99":
            value = "-99"
        return [cmd, kernel, "--shape", small, "--set", f"{key}={value}", *tail]
    if kind == "set launch":
        setting = rng.choice([f"regs_per_thread={rng.randrange(256, 10 ** 6)}",
                              f"smem_bytes={rng.randrange(240_000, 10 ** 9)}", "regs_per_thread=-1",
                              "smem_bytes=-8", "regs_per_thread", "=", "==1"])
        return [cmd, kernel, "--shape", small, "--set", setting, *tail]
    if kind == "family":
        return ["ladder", "--family", rng.choice(["sgemmm", "attention\n", "", "\u00e9", "HGEMM"]),
                "--shape", small]
    if kind == "option":
        return [cmd, kernel, "--shape", small, rng.choice(["--turbo", "-x", "--shape", "--set", "--json=1"]), *tail]
    if kind == "command":
        return [rng.choice(["", "runn", "RUN", "-h1", "\u00e9", "validate\n", "list x"])]
    if kind == "path":
        flag = rng.choice(["--config", "--kernels"])
        name = rng.choice(["missing", "a\nb", "\u00e9\u00e9", "", "..", "/", "/dev/null", str(tmp)])
        if flag == "--kernels" and name in ("..", "/"):
            name = "/proc/self"  # a folder without kernel files (.. and / may hold a .py file)
        return ["run", kernel, "--shape", small, flag, name if name.startswith("/") or not name
                else str(tmp / name)]
    out = rng.choice(["", "/dev/full", str(tmp / "no" / "dir" / "t.json"), str(tmp)])
    return ["trace", kernel, "--shape", rng.choice([small, bad_shape(rng, KERNELS[kernel])]), "-o", out]


# ----------------------------------------------------------------------------------------------------------
# config files

def _fields() -> list[tuple[str, str, object, dict]]:
    """(section, key, type, metadata) of every key of the shipped H100 config: a section's own fields, and the
    fields of each of its sub-tables (``[pipes.fp32]``, ...) as the shipped file declares them."""
    import tomllib

    from gpusim.config import _required

    shipped = tomllib.loads(H100_TEXT)
    out = []
    for section, cls in SECTIONS.items():
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            item = f.metadata.get("table_of")
            if item is None:
                out.append((section, f.name, _required(hints[f.name]), f.metadata))
                continue
            item_hints = typing.get_type_hints(item)
            out += [(f"{section}.{name}", g.name, _required(item_hints[g.name]), g.metadata)
                    for name, table in shipped[section].items() if isinstance(table, dict) and "value" not in table
                    for g in dataclasses.fields(item) if g.name in table]
    return out


FIELDS = _fields()


def _line_of(text: str, section: str, key: str) -> tuple[int, int]:
    """Start and end offsets of ``key = ...`` in ``[section]`` of the shipped config."""
    start = text.index(f"\n[{section}]\n")
    m = re.compile(rf"^{key} = .*$", re.M).search(text, start)
    return m.start(), m.end()


def _out_of_range(rng: random.Random, hint, meta) -> str:
    if meta["choices"]:
        return json.dumps(rng.choice(["", "lottery", "FCFS", meta["choices"][0] + " "]))
    lo, hi = meta["lo"], meta["hi"]
    if typing.get_origin(hint) is tuple:
        return rng.choice(["[]", "[-1]", f"[{int(hi) + 1}]", '["a"]', "[1.5]", "0"])
    value = rng.choice([lo - rng.choice([1, 1000]), hi + rng.choice([1, hi + 1]), "nan", "inf", "-inf"])
    if hint is int and isinstance(value, (int, float)):
        value = int(value)
    return str(value)


def _wrong_type(rng: random.Random, hint) -> str:
    choices = ['"1"', "true", "[1, 2]", "{ a = 1 }", "1979-05-27"]
    if hint is int:
        choices.append("64.5")
    return rng.choice(choices)


def bad_config(rng: random.Random) -> bytes:
    text = H100_TEXT
    section, key, hint, meta = rng.choice(FIELDS)
    a, b = _line_of(text, section, key)
    kind = rng.choice(["range", "type", "drop key", "unknown key", "no source", "truncate", "bytes", "deep",
                       "header", "cross"])
    if kind == "drop key" and meta["feature"] in FEATURES and len(FEATURES[meta["feature"]][0]) == 1:
        kind = "range"  # dropping a one-key feature (clusters) leaves a valid config: a GPU without it
    if kind == "range":
        return (text[:a] + f'{key} = {{ value = {_out_of_range(rng, hint, meta)}, source = "fuzz" }}'
                + text[b:]).encode()
    if kind == "type":
        value = _wrong_type(rng, hint) if not meta["choices"] else rng.choice(["1", "true", "[]"])
        return (text[:a] + f'{key} = {{ value = {value}, source = "fuzz" }}' + text[b:]).encode()
    if kind == "drop key":
        return (text[:a] + text[b + 1:]).encode()
    if kind == "unknown key":
        name = rng.choice(["turbo", "Sm_count", '"a\\nb"', '"\u00e9"', key + "_"])
        return (text[:b] + f'\n{name} = {{ value = 1, source = "fuzz" }}' + text[b:]).encode()
    if kind == "no source":
        return (text[:a] + f"{key} = {{ value = 1 }}" + text[b:]).encode()
    if kind == "truncate":  # cut inside a key's line: never valid TOML
        return text[:rng.randrange(a + len(key) + 3, b - 1)].encode()
    if kind == "bytes":  # bytes that are not UTF-8 anywhere, or TOML syntax errors at the start of a line
        junk = rng.choice([b"\xff", b"\xc3\x28", b"\x00", b"\xed\xa0\x80", b"[[", b"= =", b"x", b"]"])
        pos = rng.randrange(len(text)) if junk[0] >= 0x80 or junk == b"\x00" else \
            rng.choice([m.start() for m in re.finditer("^", text, re.M)])
        return text[:pos].encode() + junk + text[pos:].encode()
    if kind == "deep":
        depth = rng.choice([1000, 10_000, 60_000])
        return (f"{key} = " + "[" * depth + "]" * depth + "\n").encode()
    if kind == "header":
        header, value = rng.choice([("name", '""'), ("name", "3"), ("gpu_model", "[]"), ("device_names", "[]"),
                                    ("device_names", '"NVIDIA H100 80GB HBM3"'), ("device_names", '[""]'),
                                    ("device_names", "[1]")])
        return re.sub(rf"^{header} = .*$", f"{header} = {value}", text, count=1, flags=re.M).encode()
    small, large = rng.choice([("achievable_bandwidth_bytes_per_second", "9e13"), ("hit_latency_cycles", "499"),
                               ("max_threads_per_block", "2048\n#"), ("smem_per_block_max_bytes", "4000000"),
                               ("hit_latency_far_cycles", "4999"), ("l2_latency_cycles", "4999")])
    a, b = _line_of(text, {"achievable_bandwidth_bytes_per_second": "hbm", "hit_latency_cycles": "l1",
                           "max_threads_per_block": "sm", "smem_per_block_max_bytes": "sm",
                           "hit_latency_far_cycles": "l2", "l2_latency_cycles": "tma"}[small], small)
    if small == "max_threads_per_block":
        text = text.replace("max_threads_per_sm = { value = 2048,", "max_threads_per_sm = { value = 1024,")
        a, b = _line_of(text, "sm", small)
        large = "2048"
    return (text[:a] + f'{small} = {{ value = {large}, source = "fuzz" }}' + text[b:]).encode()


# ----------------------------------------------------------------------------------------------------------
# measurement files

BAD_VALUES = [None, True, 0, -1, 1.5, math.nan, math.inf, -math.inf, "", "x", "\n", [], [1], {}, {"a": 1}, 10 ** 30]
GPU_NAMES = ["NVIDIA H100 PCIe", "NVIDIA H100 NVL", "not an H100 (A100)", "H100", "NVIDIA H100", "NVIDIA H200",
             "NVIDIA H100 80GB HBM3 ", "nvidia h100 80gb hbm3", "NVIDIA H100 80GB HBM3\n", "NVIDIA A100-SXM4-80GB"]


def _bad_for(field: str, rng: random.Random):
    """A value that breaks ``field`` of the schema."""
    ok = {"kernel": lambda x: isinstance(x, str) and x,
          "shape": lambda x: isinstance(x, list) and x and all(type(d) is int and d > 0 for d in x),
          "time_ns": lambda x: isinstance(x, dict) and "median" in x and _positive(x["median"]),
          "median": _positive, "min": _positive, "max": _positive,
          "correct": lambda x: isinstance(x, bool),
          "params": lambda x: x is None or (isinstance(x, dict) and all(isinstance(v, (str, int, float)) for v in
                                                                         x.values())),
          "registers_per_thread": lambda x: x is None or (type(x) is int and x > 0),
          "ncu": lambda x: x is None or (isinstance(x, dict) and all(_positive(abs(v) + 1) for v in x.values()
                                                                     if not isinstance(v, bool)))}[field]
    while True:
        value = rng.choice(BAD_VALUES)
        if not ok(value):
            return value


def _positive(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def bad_measurement(rng: random.Random) -> bytes:
    data = measurement()
    entry = data["kernels"][0]
    kind = rng.choice(["top", "header", "entry field", "missing", "time", "gpu", "list item", "bytes", "deep"])
    if kind == "top":
        data = rng.choice([None, 3, "x", [], [data], True, 1.5])
    elif kind == "header":
        key = rng.choice(["schema", "gpu", "kernels"])
        data[key] = rng.choice([v for v in BAD_VALUES if not (key == "kernels" and v in ([], [1]))
                                and not (key == "schema" and v == 1)] + [2, "1"])
        if key == "kernels" and data[key] == [1]:
            data[key] = {}
    elif kind == "entry field":
        field = rng.choice(["kernel", "shape", "time_ns", "correct", "params", "registers_per_thread", "ncu"])
        entry[field] = _bad_for(field, rng)
    elif kind == "missing":
        del entry[rng.choice(["kernel", "shape", "time_ns"])]
    elif kind == "time":
        field = rng.choice(["median", "min", "max"])
        entry["time_ns"][field] = _bad_for(field, rng)
    elif kind == "gpu":
        data["gpu"]["name"] = rng.choice(GPU_NAMES)
    elif kind == "list item":
        data["kernels"].append(rng.choice([None, 3, "x", [], {"kernel": "sgemm_naive"}]))
    elif kind == "bytes":
        raw = json.dumps(data).encode()
        cut = rng.randrange(1, len(raw) - 1)
        return rng.choice([raw[:cut], raw[:cut] + b"\xff" + raw[cut:], b"\xef\xbb\xbf" + raw[:cut],
                           raw.replace(b'"', b"'", 1)])
    else:
        depth = rng.choice([1000, 100_000])
        return rng.choice([b"[" * depth + b"]" * depth, b'{"a":' * depth + b"1" + b"}" * depth])
    return json.dumps(data).encode()


# ----------------------------------------------------------------------------------------------------------
# the fuzz tests


def test_fuzz_command_lines(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rng = random.Random(SEED)
    for _ in range(CASES_PER_KIND):
        run_in_process(capsys, bad_argv(rng, tmp_path))
    assert not (tmp_path / "t.json").exists()


def test_fuzz_config_files(tmp_path, capsys):
    rng = random.Random(SEED + 1)
    for i in range(CASES_PER_KIND):
        path = tmp_path / f"c{i}.toml"
        path.write_bytes(bad_config(rng))
        line = run_in_process(capsys, ["run", "sgemm_naive", "--shape", SMALL, "--config", str(path)])
        assert repr(str(path)) in line, line


def test_fuzz_measurement_files(tmp_path, capsys):
    rng = random.Random(SEED + 2)
    for i in range(CASES_PER_KIND):
        path = tmp_path / f"m{i}.json"
        path.write_bytes(bad_measurement(rng))
        line = run_in_process(capsys, ["validate", "--measurements", str(path)])
        assert repr(str(path)) in line, line


@pytest.mark.parametrize("what", ["fifo", "/dev/zero", "/dev/urandom", "huge file"])
def test_fuzz_unbounded_inputs_in_a_capped_process(what, tmp_path):
    """Inputs that could hang or exhaust memory: a separate process, 3 GiB of address space, a time limit."""
    if what == "fifo":
        target = tmp_path / "f.json"
        os.mkfifo(target)
    elif what == "huge file":  # sparse: 8 GiB of zeros that take no disk
        target = tmp_path / "huge.toml"
        with open(target, "wb") as f:
            f.truncate(8 << 30)
    else:
        target = Path(what)
    for argv in (["run", "sgemm_naive", "--shape", SMALL, "--config", str(target)],
                 ["validate", "--measurements", str(target)]):
        assert_one_line(run_cli(argv, timeout=60))
