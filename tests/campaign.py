"""The second reliability campaign (issue 30) as a seeded generator: bad input of every kind the first campaign
(``tests/test_fuzz.py``) did not make, run through ``gpusim.cli.main`` and sorted by outcome.

Families (each case is bad by construction unless it is a legal what-if, which must run):

- ``sweep``: ``--vary`` ranges far above ``--max-points``, ``--shapes`` files that are binary, UTF-16, a FIFO, a
  device, a folder or too long, shapes written other ways, a cache folder that is a file or holds entries of the
  wrong shape (a what-if: the sweep runs), bad output paths;
- ``kernel``: a user kernel file with one thing wrong (the launch, a loop, an operation, a dependency, an address
  expression that raises, exits or returns NaN, misaligned or fractional addresses, a ``when``/``seq``/``trips_of``
  that fails, the module or the builder failing), or a legal variant (a what-if);
- ``config``: hardware that cannot be built (3 or 33 banks, 5-byte banks, a 33-byte fetch, an L2 of an odd number
  of bytes, tensor clocks above the SM clock, sizes in part units), or a legal what-if (16 or 64 banks, a larger L2);
- ``launch``: built-in kernels at shapes whose grid CUDA refuses (gridDim.y or .z above 65,535);
- ``output``: outputs that cannot be written (a full disk, simulated with ``RLIMIT_FSIZE``; a folder; a missing
  folder; ``/dev/full``; an empty path), figure formats;
- ``measurement``: files that pass the schema but not physics (min above the median, a 250% hit rate, a median below
  an empty kernel's time, a negative counter);
- ``cli``: options given an empty string, knob values that are their kernel's default;
- ``sass``: a binary, empty, FIFO, folder or device ``.cu`` (needs nvcc; ``#include "/dev/zero"`` in the long mode).

Outcome classes: ``clean error`` (exit 2, one line ``gpusim: error: ...``, nothing on stdout, no partial file) and
``ran`` (a what-if: exit 0) are right; ``traceback``, ``hang``, ``memory``, ``signal``, ``accepted nonsense``,
``silent exit 0``, ``error after output``, ``multi-line error``, ``partial file``, ``false rejection`` and ``other``
are defects.

Run locally (the long mode)::

    python tests/campaign.py --per-family 200 --seed 30          # counts by outcome class, the defects listed

``tests/test_campaign.py`` runs a few seeded cases of every family in CI. The runner executes the cases in one
process whose address space is capped (``--memory-gib``), each under an alarm (``--case-seconds``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import re
import resource
import shutil
import signal
import sys
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
H100 = REPO / "configs" / "h100_sxm.toml"
MEMBOUND = REPO / "validate" / "measurements" / "h100" / "membound-2026-11-24.json"
GOOD = ("clean error", "ran")
FAMILIES = ("sweep", "kernel", "config", "launch", "output", "measurement", "cli", "sass")


@dataclass
class Case:
    """One input: the command line (``{d}`` is the case's folder), the files it needs there, what must happen."""

    family: str
    what: str  # a short description, for the report
    argv: list[str]
    expect: str = "error"  # "error": a one-line error; "ok": a legal what-if that must run
    files: dict[str, bytes | str] = field(default_factory=dict)  # name -> content, or "fifo" / "dir" / "file-dir"
    env: dict[str, str] = field(default_factory=dict)
    fsize: int = 0  # RLIMIT_FSIZE during the case (a disk that fills up), 0: none
    absent: tuple[str, ...] = ()  # outputs that must not exist after an error (relative to the case folder)
    words: tuple[str, ...] = ()  # words the error line must contain


# ---------------------------------------------------------------------------------------------------------------
# sweep


def sweep_case(rng: random.Random) -> Case:
    base = ["sweep", "sgemm_coalesced", "--workers", "1", "--no-cache"]
    one = ["--shape", "64,64,64", "--vary", "regs_per_thread=32"]
    kind = rng.choice(["range", "shapes file", "shape text", "vary text", "max points", "output", "cache",
                       "cache entries"])
    if kind == "range":
        lo = rng.choice([1, 0, -10 ** rng.randrange(3, 13)])
        hi = rng.choice([10 ** rng.randrange(5, 13), 2 ** rng.randrange(20, 70)])
        return Case("sweep", f"--vary regs_per_thread={lo}..{hi}", [*base, "--shape", "64,64,64", "--vary",
                                                                      f"regs_per_thread={lo}..{hi}"],
                    words=("--max-points",))
    if kind == "shapes file":
        what = rng.choice(["utf16", "latin1", "binary", "fifo", "dir", "devzero", "empty", "comments", "too many",
                           "bad line", "x line", "huge dim"])
        content: bytes | str = {
            "utf16": "64,64,64\n".encode("utf-16"), "latin1": b"64,64,64 # caf\xe9\n",
            "binary": bytes(rng.randrange(256) for _ in range(64)) + b"\xff", "fifo": "fifo", "dir": "dir",
            "empty": b"", "comments": b"# nothing\n\n   \n", "too many": b"64,64,64\n" * 20_001,
            "bad line": b"64,64,64\n64,64,sixty-four\n", "x line": b"64x64x64\n",
            "huge dim": f"64,64,{2 ** rng.randrange(63, 200)}\n".encode(), "devzero": b""}[what]
        path = "/dev/zero" if what == "devzero" else "{d}/shapes.txt"
        files = {} if what == "devzero" else {"shapes.txt": content}
        return Case("sweep", f"--shapes ({what})", [*base, "--shapes", path, "--vary", "regs_per_thread=32"],
                    files=files)
    if kind == "shape text":
        text = rng.choice(["512x512x512", "64,,64", "64, 64, 64, ", "6\u0664,64,64", "64;64;64", "1e3,64,64",
                           f"{2 ** rng.randrange(63, 300)},64,64", "0x40,64,64", "64,64,64.0", "", " ", ",", "+",
                           "1_024,64,64"])
        return Case("sweep", f"--shape {text!r}", [*base, "--shape", text, "--vary", "regs_per_thread=32"])
    if kind == "vary text":
        text = rng.choice(["regs_per_thread=1..", "regs_per_thread=..5", "regs_per_thread=a..b",
                           "regs_per_thread=5..1", "regs_per_thread=", "regs_per_thread=32,,40", "=32",
                           "regs_per_thread", "regs_per_thread=1...5", "regs_per_thread=1..2..3",
                           f"regs_per_thread=1..{'9' * 50}"])
        return Case("sweep", f"--vary {text!r}", [*base, "--shape", "64,64,64", "--vary", text])
    if kind == "max points":
        n = rng.choice(["0", "-1", "-100"])
        return Case("sweep", f"--max-points {n}", [*base, *one, f"--max-points={n}"])
    if kind == "output":
        flag, suffix = rng.choice([("-o", ".parquet"), ("--figure", ".png")])
        target = rng.choice(["", "{d}", "{d}/no/such/dir/t" + suffix, "{d}/t.csv", "{d}/file/t" + suffix])
        files = {"file": b"x"} if "/file/" in target else {}
        return Case("sweep", f"{flag} {target!r}", [*base, *one, flag, target], files=files,
                    absent=("t" + suffix,))
    if kind == "cache":  # a cache folder that cannot be written: the sweep runs without it and says so
        where = rng.choice(["{d}/file", "{d}/file/sub"])
        return Case("sweep", f"GPUSIM_CACHE_DIR={where} (a file)", ["sweep", "sgemm_coalesced", "--workers", "1",
                                                                    *one], expect="ok", files={"file": b"x"},
                    env={"GPUSIM_CACHE_DIR": where})
    # cache entries of the wrong shape: recomputed, the sweep runs
    entry = rng.choice(['[]', '{"metrics": 3}', '{"error": 5}', '{"metrics": {"a": [1]}}', "null", '"x"',
                        '{"metrics": {}, "error": "x"}', "{", "\xff"])
    return Case("sweep", f"cache entries {entry!r}", ["sweep", "sgemm_coalesced", "--workers", "1", *one],
                expect="ok", env={"GPUSIM_CACHE_DIR": "{d}/cache", "CAMPAIGN_POISON_CACHE": entry})


# ---------------------------------------------------------------------------------------------------------------
# user kernel files

KERNEL = '''import os
import sys

import numpy as np

from gpusim.authoring import (Arrive, Barrier, Commit, Compute, Kernel, Launch, Loop, MbarWait, Mem, Tensor,
                              WaitGroup, register)
{module}

@register({name!r}, shape_names={shape_names})
def build(shape):
    (n,) = shape
    {builder}

    def addr(c):
        return {addr}

    body = ({body},)
    return Kernel({name!r}, shape, Launch({grid}, {block}, {regs}, {smem}), tensors={tensors},
                  prologue={prologue}, loop=Loop({trips}, body), epilogue={epilogue}, flops={flops},
                  cluster={cluster}, mbarriers={mbarriers}, trips_of={trips_of})
'''
N = 65536
SLOTS = {"module": "", "shape_names": "('N',)", "builder": "pass", "addr": "(c.bx * 256 + c.tid) * 4",
         "body": 'Mem("ld", "global", "ld", 4, addr, "x"), Compute("add", "fp32", 1, after=("ld",)), '
                 'Mem("st", "global", "st", 4, addr, "y", after=("add",))',
         "grid": "(n // 256, 1, 1)", "block": "(256, 1, 1)", "regs": "16", "smem": "0",
         "tensors": '(Tensor("x", 4 * n), Tensor("y", 4 * n))', "prologue": "()", "trips": "1", "epilogue": "()",
         "flops": "n", "cluster": "1", "mbarriers": "{}", "trips_of": "None"}
LD, ST = 'Mem("ld", "global", "ld", 4, addr, "x")', 'Mem("st", "global", "st", 4, addr, "y", after=("add",))'


def _body(op: str) -> str:
    """The default body with its compute bundle replaced by ``op`` (named 'add' where it matters)."""
    return f"{LD}, {op}, {ST}"


BAD_KERNEL = {
    "grid": ["(0, 1, 1)", "(-1, 1, 1)", "(n // 256, 65536, 1)", "(n // 256, 1, 65536)", "(2 ** 31, 1, 1)",
             "(1.5, 1, 1)", "(n // 256, 1)", "None", "(n // 256, 1, 0)", "(n // 256, 100000, 1)"],
    "block": ["(0, 1, 1)", "(2048, 1, 1)", "(1, 1, 65)", "(32, 33, 1)", "(256.0, 1, 1)", "(-256, 1, 1)",
              "(1025, 1, 1)", "(4, 4, 128)"],
    "regs": ["0", "-1", "1.5", "None", "256", "10 ** 6"],
    "smem": ["-1", "-4096", "1.5", "None", "10 ** 12", "300000"],
    "trips": ["0", "-512", "1.5", "None", "2 ** 40", "'3'"],
    "addr": ["(c.bx * 256 + c.tid) * 4 + 1", "(c.bx * 256 + c.tid) * 4 + 2", "np.full(c.tid.shape, np.nan)",
             "(c.bx * 256 + c.tid) * 4.0 + 0.5", "np.full(c.tid.shape, np.inf)", "1 / 0", "sys.exit(0)",
             "sys.exit(3)", "exit()", "None", "'x'", "np.zeros((2, 3))", "np.array([object()])",
             "c.tid * 2 ** 70", "c.tid > 0", "(c.tid * 4).astype(complex)", "[[1, 2], [3]]",
             "(c.bx * 256 + c.tid) * 4 + n * 4", "c.undefined_field", "(c.bx * 256 + c.tid) * 4 - 2 ** 70"],
    "body": ["None", "'ld'", "3", 'Tensor("t", 4)', f"[{LD}]",
             *(f'Mem("ld", "global", "ld", {w}, addr, "x")' for w in ("3", "0", "32", "-4", "4.0", "5", "None")),
             *(f'Mem("ld", "global", "ld", 4, addr, "x", repeat={r})' for r in ("0", "-1", "10 ** 7", "1.5",
                                                                                 "None")),
             'Mem("ld", "local", "ld", 4, addr, "x")', 'Mem("ld", "global", "xx", 4, addr, "x")',
             'Mem("ld", "global", "ld", 4, addr, "z")', 'Mem("ld", "global", "ld", 4, addr, "")',
             'Mem("ld", "global", "ld", 4, addr, "x", after=("nope",))',
             'Mem("ld", "global", "ld", 4, addr, "x", after="add")', 'Mem("ld", "global", "ld", 4, None, "x")',
             *(f'Mem("ld", "global", "ld", 4, addr, "x", warps={w})' for w in ("(99,)", "()", "(-1,)", "(0, 0)",
                                                                                 "(0.5,)", "[0]", "8")),
             _body('Compute("add", "fp32", 1), Barrier(warps=(99,))'), _body('Compute("add", "fp32", 1), '
                                                                             'Barrier(warps=())'),
             *(_body(f'Compute("add", "fp32", {c})') for c in ("0", "-1", "10 ** 8", "1.5", "None")),
             _body('Compute("add", "fp32", 1, ilp=0)'), _body('Compute("add", "gpu", 1)'),
             _body('Compute("add", "fp32", 1, units=0)'), _body('Compute("add", ["fp32"], 1)'),
             _body('Compute("add", "fp32", 1, when=lambda w, j: 1 / 0)'),
             _body('Compute("add", "fp32", 1, when=lambda w, j: "yes")'),
             _body('Compute("add", "fp32", 1, when=lambda w, j: sys.exit(0))'),
             _body('Compute("add", "fp32", 1, when=3)'),
             _body('Compute("add", "fp32", 1), Loop(0, (Compute("c", "fp32", 1),), var="j")'),
             _body('Compute("add", "fp32", 1), Loop(5, (Compute("c", "fp32", 1),), var="k")'),
             _body('Compute("add", "fp32", 1), Loop(2, (Loop(2, (Compute("c", "fp32", 1),), var="j"),), var="j")'),
             _body('Compute("add", "fp32", 1), Loop(10 ** 6, (Compute("c", "fp32", 1),), var="j")'),
             _body('Compute("add", "fp32", 1), Loop(2, (Compute("c", "fp32", 1),), var="it")'),
             _body('Compute("add", "fp32", 1), Mem("ld", "global", "st", 4, addr, "y")'),
             _body('Compute("add", "fp32", 1), Commit("nope")'),
             _body('Compute("add", "fp32", 1), WaitGroup("cp.async", -1)'),
             _body('Compute("add", "fp32", 1), WaitGroup("cp.async", 1.5)'),
             _body('Compute("add", "fp32", 1), Arrive("undeclared", lambda it, j: it)'),
             _body('Compute("add", "fp32", 1), Arrive("b", 7)')],
    "seq": ["lambda it, j: 1 / 0", "lambda it, j: 0.5", "lambda it, j: 'x'", "lambda it, j: sys.exit(0)"],
    "prologue": ['(Compute("pre", "fp32", 1, after=("add",)),)', '(Compute("pre", "fp32", 1, after=("pre",)),)',
                 "(None,)", "3"],
    "epilogue": ['(Compute("post", "fp32", 1, after=("later",)), Compute("later", "fp32", 1))'],
    "cluster": ["0", "-1", "3", "17", "100", "1.5", "None"],
    "flops": ["-1", "10 ** 30", "1.5", "None", "'many'"],
    "tensors": ['(Tensor("x", 0), Tensor("y", 4 * n))', '(Tensor("x", -4), Tensor("y", 4 * n))',
                '(Tensor("x", 4 * n), Tensor("x", 4 * n), Tensor("y", 4 * n))',
                '(Tensor("", 4 * n), Tensor("y", 4 * n))',
                '(Tensor("x", 1.5), Tensor("y", 4 * n))', '(Tensor("x", 4 * n), Tensor("y", 10 ** 12))',
                '(Tensor("y", 4 * n),)', "None", "(None,)"],
    "mbarriers": ["{'b': 0}", "{'b': -1}", "{'b': 1.5}", "{3: 1}", "[]"],
    "trips_of": ["lambda i: 0", "lambda i: -1", "lambda i: 'x'", "lambda i: 1 / 0", "lambda i: 1.5", "3",
                 "lambda i: sys.exit(0)"],
    "builder": ["return None", "raise RuntimeError('boom')", "sys.exit(0)", "sys.exit(2)", "1 / 0", "return Kernel",
                "return 42", "exit(0)"],
    "module": ["import nonexistent_module_xyz", "x = (", "sys.exit(0)", "raise ValueError('at import')",
               "register('1bad')(lambda s: None)", "register('dup_{name}')(lambda s: None)\n"
               "register('dup_{name}')(lambda s: None)"],
    "shape_names": ["('N', 'M')", "'N'", "(1,)"],
}
# legal variants: a what-if the simulator must run
OK_KERNEL = {
    "block": ["(128, 2, 1)"],
    "body": [_body('Compute("add", "fp32", 1, after=("st",))'),  # loop-carried: the previous iteration's store
             _body('Compute("add", "fp32", 1, warps=(0, 1))'),
             _body('Compute("add", "fp32", 1), Loop(4, (Compute("c", "fp32", 2),), var="j")'),
             _body('Compute("add", "fp32", 1), Barrier()'),
             _body('Compute("add", "fp32", 1, when=lambda w, j: w % 2 == 0)'),
             'Mem("ld", "global", "ld", 4, lambda c: np.where(c.tid < 128, (c.bx * 256 + c.tid) * 4, -1), "x"), '
             'Compute("add", "fp32", 1, after=("ld",)), ' + ST],
    "flops": ["0"],
    "cluster": ["2"],
    "trips": ["3"],
}


def kernel_case(rng: random.Random, i: int) -> Case:
    slots = dict(SLOTS)
    name = f"camp{i}"
    expect = "error"
    if rng.random() < 0.1:
        slot = rng.choice(list(OK_KERNEL))
        slots[slot] = rng.choice(OK_KERNEL[slot])
        expect = "ok"
    else:
        slot = rng.choice(list(BAD_KERNEL))
        value = rng.choice(BAD_KERNEL[slot])
        if slot == "seq":  # an mbarrier arrival whose phase function misbehaves
            slots["mbarriers"] = "{'b': 8}"
            slots["body"] = _body(f'Compute("add", "fp32", 1), Arrive("b", {value})')
        else:
            slots[slot] = value.replace("{name}", name)
    text = KERNEL.format(name=name, **slots)
    what = f"{slot}: {slots[slot] if slot in slots else value}"[:90]
    cmd = rng.choice(["run", "run", "trace"])
    argv = [cmd, name, "--shape", str(N), "--kernels", "{d}/k.py"]
    if cmd == "trace":
        argv += ["-o", "{d}/t.json"]
    return Case("kernel", what, argv, expect=expect, files={"k.py": text}, absent=("t.json",))


# ---------------------------------------------------------------------------------------------------------------
# configs

def _set(text: str, section: str, key: str, value: str) -> str:
    start = text.index(f"\n[{section}]\n")
    m = re.compile(rf"^{key} = \{{ value = (?:\[[^\]]*\]|[^,]*)(, source)", re.M).search(text, start)
    assert m, (section, key)
    return text[:m.start()] + f"{key} = {{ value = {value}{m.group(1)}" + text[m.end():]


BAD_CONFIG = [("shared_memory", "banks", ["3", "33", "48", "5", "7", "24", "63"]),
              ("shared_memory", "bank_width_bytes", ["5", "6", "7"]),
              ("l1", "sector_bytes", ["33", "48", "24"]),
              ("l1", "line_bytes", ["96", "160", "129", "192"]),
              ("l2", "size_bytes", ["1048577", "52428801", "52428900", "33554433"]),
              ("hbm", "fetch_granularity_bytes", ["33", "48", "96", "200"]),
              ("hbm", "near_block_bytes", ["96", "320", "100"]),
              ("hbm", "capacity_bytes", ["80000000001", "80000000032", "1073741825"]),
              ("chip", "sm_clock_mma_sync_saturated_hz", ["2.5e9", "5e9", "1.99e9"]),
              ("chip", "sm_clock_wgmma_saturated_hz", ["1.8e9", "4.9e9"]),
              ("sm", "smem_per_block_max_bytes", ["232449", "232400"]),
              ("sm", "smem_reserved_per_block_bytes", ["1000", "1"]),
              ("sm", "unified_l1_smem_bytes", ["262145", "262200"]),
              ("shared_memory", "carveouts_bytes", ["[0, 8192, 16385, 32768, 65536, 102400, 135168, 167936, "
                                                    "200704, 233472]"]),
              ("icache", "instruction_bytes", ["12", "24"]),
              ("icache", "loop_bytes", ["[28673, 32768, 36864, 39936, 40960, 131072, 135168, 139264, 143360, 147456, "
                                        "262144]"]),
              ("sm", "register_allocation_unit_registers", ["200", "255", "3"])]
OK_CONFIG = [("shared_memory", "banks", ["16", "64"]), ("shared_memory", "bank_width_bytes", ["8"]),
             ("l2", "size_bytes", ["104857600", "26214400"]), ("chip", "sm_clock_hz", ["2.2e9"]),
             ("hbm", "capacity_bytes", ["141000000000"])]


def config_case(rng: random.Random) -> Case:
    text = H100.read_text()
    ok = rng.random() < 0.1
    section, key, values = rng.choice(OK_CONFIG if ok else BAD_CONFIG)
    value = rng.choice(values)
    text = _set(text, section, key, value)
    return Case("config", f"[{section}] {key} = {value}", ["run", "sgemm_naive", "--shape", "64,64,64", "--config",
                                                            "{d}/c.toml"], expect="ok" if ok else "error",
                files={"c.toml": text})


# ---------------------------------------------------------------------------------------------------------------
# launches CUDA refuses (built-in kernels)

def launch_case(rng: random.Random) -> Case:
    kind = rng.choice(["sgemm", "hgemm", "fa2", "fa3", "naive"])
    if kind == "sgemm":  # gridDim.y = M / BM (BM <= 128 for these rungs)
        name = rng.choice(["sgemm_2d_blocktiling", "sgemm_1d_blocktiling", "sgemm_vectorized"])
        m = 128 * rng.randrange(65536, 300_000)
        argv = ["run", name, "--shape", f"{m},256,256"]
    elif kind == "hgemm":
        m = 128 * rng.randrange(65536, 300_000)
        argv = ["run", "hgemm_mma", "--shape", f"{m},256,256"]
    elif kind == "fa2":  # gridDim.y = heads
        argv = ["run", "fa2", "--shape", f"1,{rng.randrange(65536, 200_000)},128,64"]
    elif kind == "fa3":  # gridDim.z = batch
        argv = ["run", "fa3", "--shape", f"{rng.randrange(65536, 200_000)},1,128,128"]
    else:  # gridDim.y = N / 32
        argv = ["run", rng.choice(["sgemm_naive", "sgemm_coalesced"]), "--shape",
                f"32,{32 * rng.randrange(65536, 1_000_000)},32"]
    return Case("launch", " ".join(argv[1:]), argv, words=("limit",))


# ---------------------------------------------------------------------------------------------------------------
# outputs

def output_case(rng: random.Random) -> Case:
    kind = rng.choice(["trace full", "trace path", "report full", "figure format", "figure ok", "skeleton",
                       "sweep full", "skeleton full"])
    small = ["--measurements", "{d}/m.json"]
    files = {"m.json": _measurement(lambda e: None)}
    if kind == "trace full":  # a disk that fills up while the trace is written: no half file left
        return Case("output", "trace -o on a full disk", ["trace", "sgemm_naive", "--shape", "64,64,64", "-o",
                                                           "{d}/t.json"], fsize=2000, absent=("t.json",))
    if kind == "sweep full":  # the table or the figure of a sweep on a disk that fills up
        flag, name = rng.choice([("-o", "t.parquet"), ("--figure", "f.png")])
        return Case("output", f"sweep {flag} on a full disk", ["sweep", "sgemm_coalesced", "--shape", "64,64,64",
                                                                "--vary", "regs_per_thread=32,40", "--workers", "1",
                                                                "--no-cache", flag, "{d}/" + name], fsize=600,
                    absent=(name,))
    if kind == "skeleton full":
        return Case("output", "sass --skeleton on a full disk", ["sass", str(REPO / "examples" / "transpose.cu"),
                                                                  "--kernel", "transpose_naive", "--skeleton",
                                                                  "{d}/s.py"], fsize=300, absent=("s.py",))
    if kind == "trace path":
        target = rng.choice(["", "{d}", "{d}/no/dir/t.json", "/dev/full", "{d}/file/t.json"])
        return Case("output", f"trace -o {target!r}", ["trace", "sgemm_naive", "--shape", "64,64,64", "-o", target],
                    files={"file": b"x"})
    if kind == "report full":
        flag, name = rng.choice([("--report", "r.md"), ("--figure", "f.png")])
        return Case("output", f"validate {flag} on a full disk", ["validate", *small, flag, "{d}/" + name],
                    files=files, fsize=300, absent=(name,))
    if kind == "figure format":
        name = rng.choice(["f.jpg", "f", "f.xyz", "f.eps", "f.raw", "f."])
        return Case("output", f"validate --figure {name}", ["validate", *small, "--figure", "{d}/" + name],
                    files=files, absent=(name,))
    if kind == "figure ok":
        name = rng.choice(["f.svg", "f.pdf", "f.png"])
        return Case("output", f"validate --figure {name}", ["validate", *small, "--figure", "{d}/" + name],
                    expect="ok", files=files)
    target = rng.choice(["", "{d}/s.txt", "{d}", "{d}/no/dir/s.py"])
    return Case("output", f"sass --skeleton {target!r}", ["sass", str(REPO / "examples" / "transpose.cu"),
                                                          "--skeleton", target])


# ---------------------------------------------------------------------------------------------------------------
# measurement files that pass the schema but not physics

def _measurement(edit) -> str:
    data = json.loads(MEMBOUND.read_text())
    entry = next(e for e in data["kernels"] if e["kernel"] == "mem_scale" and e.get("correct"))
    out = {"schema": 1, "gpu": data["gpu"], "kernels": [json.loads(json.dumps(entry))]}
    edit(out["kernels"])
    return json.dumps(out)


def measurement_case(rng: random.Random) -> Case:
    def median(v):
        return lambda ks: ks[0]["time_ns"].update(median=v, min=v, max=v)

    edits = {
        "min above the median": lambda ks: ks[0]["time_ns"].update(min=ks[0]["time_ns"]["median"] * 2),
        "max below the median": lambda ks: ks[0]["time_ns"].update(max=ks[0]["time_ns"]["median"] / 2),
        "median 1e-300 ns": median(1e-300), "median 1 ns": median(1.0), "median 2000 ns": median(2000.0),
        "hit rate 250%": lambda ks: ks[0].setdefault("ncu", {}).update({"lts__t_sector_hit_rate.pct": 250.0}),
        "occupancy 101%": lambda ks: ks[0].setdefault("ncu", {}).update(
            {"sm__warps_active.avg.pct_of_peak_sustained_active": 101.0}),
        "negative DRAM bytes": lambda ks: ks[0].setdefault("ncu", {}).update({"dram__bytes_read.sum": -1.0}),
        "negative hit rate": lambda ks: ks[0].setdefault("ncu", {}).update({"lts__t_sector_hit_rate.pct": -5.0}),
    }
    ok = {"the same row twice": lambda ks: ks.append(dict(ks[0]))}
    if rng.random() < 0.1:
        what, edit, expect = *rng.choice(list(ok.items())), "ok"
    else:
        what, edit, expect = *rng.choice(list(edits.items())), "error"
    return Case("measurement", what, ["validate", "--measurements", "{d}/m.json"], expect=expect,
                files={"m.json": _measurement(edit)})


# ---------------------------------------------------------------------------------------------------------------
# options given nothing, knobs at their defaults

def cli_case(rng: random.Random) -> Case:
    small = ["--measurements", "{d}/m.json"]
    files = {"m.json": _measurement(lambda e: None)}
    kind = rng.choice(["scheduler", "report", "figure", "output", "config", "kernels", "shapes", "default knob",
                       "shape x"])
    if kind == "scheduler":
        addr = rng.choice(["", " ", "garbage", "::::", "tcp://", "tcp://host:port", "inproc://x", "ucx://1.2.3.4:5"])
        return Case("cli", f"--scheduler {addr!r}", ["sweep", "sgemm_coalesced", "--shape", "64,64,64", "--vary",
                                                     "regs_per_thread=32", "--workers", "1", "--no-cache",
                                                     "--scheduler", addr])
    if kind in ("report", "figure"):
        return Case("cli", f"validate --{kind} ''", ["validate", *small, f"--{kind}", rng.choice(["", " "])],
                    files=files)
    if kind == "output":
        return Case("cli", "sweep -o ''", ["sweep", "sgemm_coalesced", "--shape", "64,64,64", "--vary",
                                           "regs_per_thread=32", "--workers", "1", "--no-cache", "-o", ""])
    if kind == "config":
        return Case("cli", "--config ''", ["run", "sgemm_naive", "--shape", "64,64,64", "--config", ""])
    if kind == "kernels":
        return Case("cli", "--kernels ''", ["run", "sgemm_naive", "--shape", "64,64,64", "--kernels", ""])
    if kind == "shapes":
        return Case("cli", "--shapes ''", ["sweep", "sgemm_coalesced", "--shapes", "", "--workers", "1"])
    if kind == "shape x":
        cmd = rng.choice(["run", "trace", "sweep"])
        tail = {"run": [], "trace": ["-o", "{d}/t.json"], "sweep": ["--workers", "1", "--no-cache"]}[cmd]
        return Case("cli", f"{cmd} --shape 64x64x64", [cmd, "sgemm_coalesced", "--shape", "64x64x64", *tail])
    knob = rng.choice([("fa2", "1,1,128,64", "br=0"), ("fa2", "1,1,128,64", "bc=0")])
    return Case("cli", f"{knob[0]} --set {knob[2]} (its default)", ["run", knob[0], "--shape", knob[1], "--set",
                                                                    knob[2]], expect="ok")


# ---------------------------------------------------------------------------------------------------------------
# gpusim sass

def sass_case(rng: random.Random, long: bool) -> Case:
    kinds = ["binary", "empty", "fifo", "dir", "device", "no kernel"] + (["include zero"] if long else [])
    kind = rng.choice(kinds)
    content: bytes | str = {"binary": bytes(rng.randrange(256) for _ in range(256)) + b"\xff\xfe",
                            "empty": b"", "fifo": "fifo", "dir": "dir", "device": b"",
                            "no kernel": b"__device__ int f(int x) { return x + 1; }\n",
                            "include zero": b'#include "/dev/zero"\n'}[kind]
    target = "/dev/zero" if kind == "device" else "{d}/k.cu"
    return Case("sass", f"sass ({kind})", ["sass", target], files={} if kind == "device" else {"k.cu": content})


# ---------------------------------------------------------------------------------------------------------------
# the runner

class Hang(BaseException):
    """A case ran past its time (BaseException: gpusim's handlers must not swallow it)."""


def _alarm(signum, frame):
    raise Hang()


def generate(seed: int, per_family: int, long: bool = False, families=FAMILIES) -> list[Case]:
    rng = random.Random(seed)
    cases = []
    has_nvcc = shutil.which("nvcc") is not None or Path("/usr/local/cuda-13.0/bin/nvcc").exists()
    for family in families:
        for _ in range(per_family):
            if family == "sweep":
                cases.append(sweep_case(rng))
            elif family == "kernel":
                cases.append(kernel_case(rng, len(cases)))
            elif family == "config":
                cases.append(config_case(rng))
            elif family == "launch":
                cases.append(launch_case(rng))
            elif family == "output":
                cases.append(output_case(rng))
            elif family == "measurement":
                cases.append(measurement_case(rng))
            elif family == "cli":
                cases.append(cli_case(rng))
            elif family == "sass" and has_nvcc:
                cases.append(sass_case(rng, long))
    return cases


def _materialize(case: Case, d: Path) -> list[str]:
    d.mkdir(parents=True, exist_ok=True)
    for name, content in case.files.items():
        p = d / name
        if content == "fifo":
            os.mkfifo(p)
        elif content == "dir":
            p.mkdir()
        else:
            p.write_bytes(content.encode() if isinstance(content, str) else content)
    poison = case.env.get("CAMPAIGN_POISON_CACHE")
    if poison is not None:  # every entry the sweep will look for holds ``poison``
        _poison_cache(case, d, poison)
    return [a.replace("{d}", str(d)) for a in case.argv]


def _poison_cache(case: Case, d: Path, text: str) -> None:
    from gpusim import sweep
    from gpusim.cli import _sets

    argv = [a.replace("{d}", str(d)) for a in case.argv]
    a = __import__("gpusim.cli", fromlist=["build_parser"]).build_parser().parse_args(argv)
    plan = sweep.plan([a.kernel], [sweep.parse_shape(s) for s in a.shape], sweep.parse_vary(a.vary), _sets(a.set))
    cache = sweep.Cache(d / "cache")
    for p in plan.points:
        key = cache.key(plan, p)
        path = d / "cache" / key[:2] / f"{key}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8", "surrogateescape"))


@contextlib.contextmanager
def _environment(case: Case, d: Path):
    old = {k: os.environ.get(k) for k in (*case.env, "GPUSIM_CACHE_DIR")}
    os.environ["GPUSIM_CACHE_DIR"] = str(d / "cache")
    for k, v in case.env.items():
        if not k.startswith("CAMPAIGN_"):
            os.environ[k] = v.replace("{d}", str(d))
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)
    xfsz = signal.getsignal(signal.SIGXFSZ)
    if case.fsize:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, as a full disk
        resource.setrlimit(resource.RLIMIT_FSIZE, (case.fsize, limit[1]))
    try:
        yield
    finally:
        if case.fsize:
            resource.setrlimit(resource.RLIMIT_FSIZE, limit)
            signal.signal(signal.SIGXFSZ, xfsz)
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_case(case: Case, d: Path, seconds: int) -> dict:
    """Run one case in this process; its outcome class and what it printed."""
    from gpusim.cli import main

    argv = _materialize(case, d)
    out, err = io.StringIO(), io.StringIO()
    rc, escaped = None, None
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    try:
        with _environment(case, d), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(argv)
    except Hang:
        escaped = "hang"
    except MemoryError:
        escaped = "memory"
    except SystemExit as e:
        escaped = f"SystemExit({e.code!r})"
    except BaseException as e:  # noqa: BLE001 (whatever escapes main is a defect, recorded)
        escaped = "".join(traceback.format_exception_only(type(e), e)).strip()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    stdout, stderr = out.getvalue(), err.getvalue()
    outcome = classify(case, rc, escaped, stdout, stderr, d)
    return {"family": case.family, "what": case.what, "argv": argv, "expect": case.expect, "outcome": outcome,
            "rc": rc, "escaped": escaped, "stderr": stderr[-400:], "stdout": stdout[-200:]}


def classify(case: Case, rc, escaped, stdout: str, stderr: str, d: Path) -> str:
    if escaped == "hang":
        return "hang"
    if escaped == "memory" or "MemoryError" in stderr:
        return "memory"
    if escaped is not None and escaped.startswith("SystemExit"):
        return "silent exit 0" if escaped in ("SystemExit(0)", "SystemExit(None)") else "other"
    if escaped is not None or "Traceback" in stderr:
        return "traceback"
    if isinstance(rc, int) and rc < 0:
        return "signal"
    leftovers = [n for n in case.absent if (d / n).exists()]
    temps = [p.name for p in d.iterdir() if ".tmp" in p.name or p.name.startswith(".gpusim-probe")]
    if rc == 2:
        if case.expect == "ok":
            return "false rejection"
        if stdout:
            return "error after output"
        if not stderr.startswith("gpusim: error: ") or stderr.count("\n") != 1 or not stderr.endswith("\n"):
            return "error after output" if stderr.count("gpusim: error:") == 1 else "multi-line error"
        if leftovers or temps:
            return "partial file"
        if not all(w in stderr for w in case.words):
            return "other"
        return "clean error"
    if rc == 0:
        if case.expect == "error":
            return "silent exit 0" if not stdout and not stderr else "accepted nonsense"
        return "ran"
    return "other"


def run_all(cases: list[Case], tmp: Path, seconds: int) -> list[dict]:
    results = []
    for i, case in enumerate(cases):
        results.append(run_case(case, tmp / f"c{i}", seconds))
    return results


def summary(results: list[dict]) -> str:
    counts = Counter(r["outcome"] for r in results)
    lines = [f"{len(results)} cases: " + ", ".join(f"{n} {k}" for k, n in counts.most_common())]
    for fam in FAMILIES:
        sel = [r for r in results if r["family"] == fam]
        if sel:
            c = Counter(r["outcome"] for r in sel)
            lines.append(f"  {fam:<12} {len(sel):>5}: " + ", ".join(f"{n} {k}" for k, n in c.most_common()))
    bad = [r for r in results if r["outcome"] not in GOOD]
    for r in bad[:50]:
        lines.append(f"DEFECT {r['outcome']}: [{r['family']}] {r['what']}: {' '.join(map(repr, r['argv']))}\n"
                     f"    rc={r['rc']} escaped={r['escaped']!r} stderr={r['stderr'][-300:]!r} "
                     f"stdout={r['stdout'][-100:]!r}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=30)
    p.add_argument("--per-family", type=int, default=200)
    p.add_argument("--families", default=",".join(FAMILIES))
    p.add_argument("--long", action="store_true", help="also the slow cases (nvcc including /dev/zero)")
    p.add_argument("--case-seconds", type=int, default=120)
    p.add_argument("--memory-gib", type=float, default=6.0, help="address-space cap of this process")
    p.add_argument("--tmp", default=None, help="folder for the cases' files (default: a new temporary folder)")
    p.add_argument("--json", default=None, help="write every case's outcome here")
    a = p.parse_args(argv)
    if a.memory_gib:
        cap = int(a.memory_gib * (1 << 30))
        resource.setrlimit(resource.RLIMIT_AS, (cap, resource.getrlimit(resource.RLIMIT_AS)[1]))
    import tempfile

    with tempfile.TemporaryDirectory(dir=a.tmp) as tmp:
        cases = generate(a.seed, a.per_family, a.long, tuple(a.families.split(",")))
        results = run_all(cases, Path(tmp), a.case_seconds)
    print(summary(results))
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1))
    return 0 if all(r["outcome"] in GOOD for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
