"""Measure the fresh kernels (validate/fresh/cases.py) on the H100: time and ncu's counters.

    python3 validate/run_fresh.py --out $OUT/fresh-2026-11-28.json [--only a,b] [--skip-ncu]

Each case's tensors are built from its ``--arg`` texts as run_irregular.py builds the twins' (contents by formula or
``randint`` as gpusim's front-end draws them; floats from CuPy's generator, no address depends on them), the kernel
compiled by NVRTC (CuPy's RawModule, -std=c++17; CuPy adds -ftz=true). Per case: 30 launches between CUDA events,
each after the L2 was flushed (a 256 MiB buffer written, another read), median; an output that accumulates
(``:zeros``) is zeroed before each. Then one launch per case in a child process of this script under ncu (--clock-control none): the ladder's
metrics, every stall reason and the atomics' counters. A case that raises goes to ``failed``. Compare with the
committed predictions: `python validate/fresh/check.py FILE`. The file keeps its cases under ``cases`` (schema fresh-1),
not ``kernels``: they are not rows of `gpusim validate`.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "validate" / "micro"))
sys.path.insert(0, str(REPO / "validate"))
sys.path.insert(0, str(REPO / "validate" / "fresh"))

import common  # noqa: E402
import run_irregular as irr  # noqa: E402
from cases import CASES  # noqa: E402

SCALAR_DTYPES = {"f32": "float32", "f64": "float64", "i32": "int32", "u32": "uint32", "i64": "int64"}
LOCAL_METRICS = [  # local memory (ncu counts it apart from global): localarr's array lives there
    "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
    "l1tex__t_sector_pipe_lsu_mem_local_op_ld_hit_rate.pct", "l1tex__t_sector_pipe_lsu_mem_local_op_st_hit_rate.pct",
    "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct", "l1tex__data_pipe_lsu_wavefronts_mem_lg.sum",
]


class Case:
    def __init__(self, cp: Any, np: Any, kern: Any, case: dict) -> None:
        self.cp, self.kern, self.case = cp, kern, case
        scalars = case.get("scalars", {})
        self.arrays: dict[str, Any] = {}
        self.zeroed: list[Any] = []
        argv = []
        tensor = 0
        for text in case["args"]:
            name, value = text.split("=", 1)
            m = irr._TENSOR.match(value)
            if m is None:
                argv.append(getattr(np, SCALAR_DTYPES[scalars.get(name, "i32")])(float(value) if "." in value or
                                                                                  "e" in value else int(value, 0)))
                continue
            (_, (dtype, n, dist, args)), = irr.parse_args_text((f"{name}={value}",))
            arr = irr.contents(cp, dtype, n, dist, args, tensor)
            if dist == "zeros":
                self.zeroed.append(arr)
            self.arrays[name] = arr
            argv.append(arr)
            tensor += 1
        self.argv = tuple(argv)

    def launch(self) -> None:
        for a in self.zeroed:
            a.fill(0)
        self.kern(tuple(self.case["grid"]), tuple(self.case["block"]), self.argv)


def build(cp: Any, names: list[str]) -> dict[str, Any]:
    out = {}
    for name in names:
        mod = cp.RawModule(code=(REPO / "validate" / "fresh" / f"{name}.cu").read_text(), options=("-std=c++17",))
        out[name] = mod.get_function(name)
    return out


def measure(cp: Any, np: Any, kern: Any, case: dict, flush: tuple[Any, Any]) -> dict[str, Any]:
    c = Case(cp, np, kern, case)
    e = {"name": case["name"], "source": f"validate/fresh/{case['name']}.cu", "grid": list(case["grid"]),
         "block": list(case["block"]), "args": list(case["args"]),
         "registers_per_thread": int(kern.attributes["num_regs"])}
    c.launch()
    cp.cuda.runtime.deviceSynchronize()
    scratch, clean = flush
    ts = []
    for _ in range(irr.TIMED):
        scratch.fill(1.0)
        cp.sum(clean)
        for a in c.zeroed:  # outside the timed span
            a.fill(0)
        s, f = cp.cuda.Event(), cp.cuda.Event()
        s.record()
        c.kern(tuple(case["grid"]), tuple(case["block"]), c.argv)
        f.record()
        f.synchronize()
        ts.append(cp.cuda.get_elapsed_time(s, f) * 1e6)
    e["time_ns"] = common.summarize(ts)
    return e


def ncu_child(indices: list[int]) -> None:
    import cupy as cp
    import numpy as np

    kerns = build(cp, sorted({CASES[i]["name"] for i in indices}))
    for i in indices:
        c = Case(cp, np, kerns[CASES[i]["name"]], CASES[i])
        cp.cuda.runtime.deviceSynchronize()
        c.launch()
        cp.cuda.runtime.deviceSynchronize()
        del c
        cp.get_default_memory_pool().free_all_blocks()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    ap.add_argument("--only")
    ap.add_argument("--skip-ncu", action="store_true")
    ap.add_argument("--ncu-child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.ncu_child:
        ncu_child([int(i) for i in a.ncu_child.split(",")])
        return 0
    import cupy as cp
    import numpy as np

    out = Path(a.out)
    t0 = time.time()
    data = common.cupy_header(cp, "fresh-1")
    data["how"] = __doc__
    data["cases"], data["failed"] = [], []
    todo = [i for i, c in enumerate(CASES) if not a.only or c["name"] in a.only.split(",")]
    kerns = build(cp, [CASES[i]["name"] for i in todo])
    flush = (cp.empty(irr.FLUSH_BYTES // 4, dtype=cp.float32), cp.ones(irr.FLUSH_BYTES // 4, dtype=cp.float32))
    measured = []
    for i in todo:
        c = CASES[i]
        try:
            e = measure(cp, np, kerns[c["name"]], c, flush)
            data["cases"].append(e)
            measured.append(i)
            common.log(f"{c['name']}: {e['time_ns']['median'] / 1e3:.1f} us, {e['registers_per_thread']} registers")
        except Exception:
            data["failed"].append({"name": c["name"], "error": traceback.format_exc()[-2000:]})
            common.log(f"{c['name']}: FAILED\n{traceback.format_exc()[-600:]}")
        cp.get_default_memory_pool().free_all_blocks()
        common.write_json(out, data)
    flush = None
    cp.get_default_memory_pool().free_all_blocks()
    ncu = None if a.skip_ncu else common.find_ncu()
    if ncu and measured:
        avail, _ = common.ncu_available_metrics(ncu)
        present, missing = irr.twin_metrics(avail)
        present += [m for m in LOCAL_METRICS if m in avail and m not in present]
        work = Path(tempfile.mkdtemp(prefix="gpusim_fresh_ncu_"))
        child = [*common.python_cmd(), str(Path(__file__).resolve()), "--ncu-child", ",".join(map(str, measured))]
        names = [CASES[i]["name"] for i in measured]
        rows, _, _, dropped, nlog = common.run_ncu(ncu, present, "^(" + "|".join(sorted(set(names))) + ")$", child,
                                                   work / "fresh", timeout=400)
        for e, row in zip(data["cases"], common.assign_rows(rows, names), strict=True):
            e["ncu"] = irr.finite_values(row, present)
        data["ncu"] = {"version": common.ncu_version(ncu), "missing": missing + dropped}
        out.with_name(out.stem + "-ncu-log.txt").write_text(nlog[-100000:])
    data["wall_s"] = round(time.time() - t0, 1)
    common.write_json(out, data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
