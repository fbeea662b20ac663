"""Measure the fresh kernels (validate/fresh/cases.py) on the H100: time and ncu's counters.

    python3 validate/run_fresh.py --out $OUT/fresh-2026-11-28.json [--only a,b] [--skip-ncu]
    python3 validate/run_fresh.py --batch atomics --out $OUT/fresh-atomics-2026-11-28.json

Each case's tensors are built from its ``--arg`` texts as run_irregular.py builds the twins' (contents by formula or
``randint`` as gpusim's front-end draws them; floats from CuPy's generator, no address depends on them), the kernel
compiled by NVRTC (CuPy's RawModule, -std=c++17; CuPy adds -ftz=true). Per case: 30 launches between CUDA events, each
after the L2 was flushed (a 256 MiB buffer written, another read), median; an output that accumulates (``:zeros``) is
zeroed before each. Then one launch per case in a child process of this script under ncu (--clock-control none): the
ladder's metrics, every stall reason and the atomics' counters. A case that raises goes to ``failed``. Compare with the
committed predictions: `python validate/fresh/check.py FILE`. The file keeps its cases under ``cases`` (schema fresh-1),
not ``kernels``: they are not rows of `gpusim validate`. ``--batch`` picks the cases (cases.BATCHES; the first batch
when not named); a batch other than the first also checks each kernel's result on the device after its first launch
(``correct``, ``check``: counts exact, compaction's count and the multiset of kept values, float sums within a bound of
their rounding) and gives each case its share of an HBM-bound time (``hbm_share``: ncu's DRAM bytes at the
device-to-device copy rate, over the median time).
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
from cases import BATCHES, FIRST, kernel_of  # noqa: E402

SCALAR_DTYPES = {"f32": "float32", "f64": "float64", "i32": "int32", "u32": "uint32", "i64": "int64"}
LOCAL_METRICS = [  # local memory (ncu counts it apart from global): localarr's array lives there
    "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum",
    "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum",
    "l1tex__t_sector_pipe_lsu_mem_local_op_ld_hit_rate.pct", "l1tex__t_sector_pipe_lsu_mem_local_op_st_hit_rate.pct",
    "l1tex__t_sector_pipe_lsu_mem_global_op_ld_hit_rate.pct", "l1tex__data_pipe_lsu_wavefronts_mem_lg.sum",
]
GLOBAL_ATOM_METRICS = [  # the ATOM (value returned) side beside run_irregular's RED metrics
    "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum",
    "smsp__inst_executed_op_global_atom.sum", "lts__t_requests_op_atom.sum", "lts__t_sectors_op_atom.sum",
    "lts__t_requests_op_red.sum", "lts__t_sectors_op_red.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
    "smsp__inst_executed_op_global_red.sum",
]
# the device-to-device copy rate measured on an H200 in this workplace (.library/device/KINDS.md, bytes read and
# written) and on the H100 (3.0 TB/s, the same page): the HBM-bound floor of a case is its DRAM bytes at this rate
COPY_BYTES_PER_S = {"NVIDIA H200": 4.3e12, "NVIDIA H100 80GB HBM3": 3.0e12}
HBM_SENSITIVE = 0.3  # a case whose HBM floor is at least this share of its time moves with the HBM's speed


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


def check(cp: Any, c: Case) -> dict[str, Any]:
    """The result of the launch just made against a reference computed on the device (float64 or exact):
    {"correct": bool, "check": what was compared}. Kernels of the first batch are not checked (empty)."""
    a, k = c.arrays, kernel_of(c.case)
    cp.cuda.runtime.deviceSynchronize()
    if k == "compact":
        t = float(dict(text.split("=", 1) for text in c.case["args"])["t"])
        keep = a["x"][a["x"] > cp.float32(t)]
        n = int(a["count"][0])
        same = n == keep.size and bool(cp.array_equal(cp.sort(a["out"][:n]), cp.sort(keep)))
        return {"correct": same, "check": f"count {n} (expected {keep.size}) and the sorted kept values"}
    if k in ("hist_global", "hist_wide"):
        want = cp.bincount(a["in"].astype(cp.int64), minlength=a["hist"].size)
        same = bool(cp.array_equal(a["hist"].astype(cp.int64), want))
        return {"correct": same, "check": f"all {a['hist'].size} bins exact (total {int(a['hist'].sum())})"}
    if k == "dot_atomic":
        prod = a["x"].astype(cp.float64) * a["y"].astype(cp.float64)
        got, want, scale = float(a["out"][0]), float(prod.sum()), float(cp.abs(prod).sum())
    elif k == "block_sum_mod":
        blocks = a["x"].astype(cp.float64).reshape(-1, 256)
        want_v = blocks.sum(1).reshape(-1, 64).sum(0)
        scale_v = cp.abs(blocks).sum(1).reshape(-1, 64).sum(0)
        err = float((cp.abs(a["out"].astype(cp.float64) - want_v) / scale_v).max())
        return {"correct": err <= 1e-6, "check": f"64 slots within 1e-6 of sum|x| (worst {err:.2e})"}
    elif k == "last_block":
        grid = c.case["grid"][0]
        retired = int(a["retired"][0])
        got, want = float(a["out"][0]), float(a["x"].astype(cp.float64).sum())
        scale = float(cp.abs(a["x"].astype(cp.float64)).sum())
        err = abs(got - want) / scale
        return {"correct": err <= 1e-6 and retired == grid,
                "check": f"out within 1e-6 of sum|x| ({err:.2e}), retirement counter {retired} (expected {grid})"}
    else:
        return {}
    err = abs(got - want) / scale
    return {"correct": err <= 1e-5, "check": f"{got:.6g} against {want:.6g}: {err:.2e} of sum|x*y| (bound 1e-5)"}


def build(cp: Any, names: list[str]) -> dict[str, Any]:
    out = {}
    for name in dict.fromkeys(names):
        mod = cp.RawModule(code=(REPO / "validate" / "fresh" / f"{name}.cu").read_text(), options=("-std=c++17",))
        out[name] = mod.get_function(name)
    return out


def measure(cp: Any, np: Any, kern: Any, case: dict, flush: tuple[Any, Any], checked: bool = False) -> dict[str, Any]:
    c = Case(cp, np, kern, case)
    e = {"name": case["name"], "source": f"validate/fresh/{kernel_of(case)}.cu", "grid": list(case["grid"]),
         "block": list(case["block"]), "args": list(case["args"]),
         "registers_per_thread": int(kern.attributes["num_regs"])}
    if kernel_of(case) != case["name"]:
        e["kernel"] = kernel_of(case)
    if case.get("refused"):
        e["refused"] = case["refused"]
    c.launch()
    cp.cuda.runtime.deviceSynchronize()
    if checked:
        e.update(check(cp, c))
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


def ncu_child(indices: list[int], batch: str = FIRST) -> None:
    import cupy as cp
    import numpy as np

    cases = BATCHES[batch]
    kerns = build(cp, sorted({kernel_of(cases[i]) for i in indices}))
    for i in indices:
        c = Case(cp, np, kerns[kernel_of(cases[i])], cases[i])
        cp.cuda.runtime.deviceSynchronize()
        c.launch()
        cp.cuda.runtime.deviceSynchronize()
        del c
        cp.get_default_memory_pool().free_all_blocks()


def hbm_shares(data: dict[str, Any]) -> None:
    """Each case's HBM-bound floor (ncu's DRAM bytes read and written at the copy rate of the GPU measured) as a
    share of its median time, and the cases whose share reaches HBM_SENSITIVE named in ``how``."""
    rate = COPY_BYTES_PER_S.get(data["gpu"]["name"])
    if rate is None:
        return
    sensitive = []
    for e in data["cases"]:
        nc = e.get("ncu", {})
        if "dram__bytes_read.sum" not in nc:
            continue
        floor = (nc["dram__bytes_read.sum"] + nc.get("dram__bytes_write.sum", 0)) / rate * 1e9
        e["hbm_floor_ns"] = round(floor, 1)
        e["hbm_share"] = round(floor / e["time_ns"]["median"], 3)
        if e["hbm_share"] >= HBM_SENSITIVE:
            sensitive.append(f"{e['name']} ({100 * e['hbm_share']:.0f}%)")
    data["how"] += (f"\nHBM-sensitive rows (DRAM bytes at {rate / 1e12:.1f} TB/s are >= {100 * HBM_SENSITIVE:.0f}% of "
                    f"the median time, so an H100 (3.35 TB/s datasheet, 3.0 measured) would take longer): "
                    + (", ".join(sensitive) or "none") + "; the others are bound by their atomics or issue.\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    ap.add_argument("--only")
    ap.add_argument("--skip-ncu", action="store_true")
    ap.add_argument("--batch", default=FIRST, choices=list(BATCHES), help=f"the cases (default {FIRST})")
    ap.add_argument("--ncu-child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.ncu_child:
        ncu_child([int(i) for i in a.ncu_child.split(",")], a.batch)
        return 0
    cases = BATCHES[a.batch]
    checked = a.batch != FIRST
    import cupy as cp
    import numpy as np

    out = Path(a.out)
    t0 = time.time()
    data = common.cupy_header(cp, "fresh-1")
    data["how"] = __doc__
    if checked:
        data["batch"] = a.batch
    data["cases"], data["failed"] = [], []
    todo = [i for i, c in enumerate(cases) if not a.only or c["name"] in a.only.split(",")]
    kerns = build(cp, [kernel_of(cases[i]) for i in todo])
    flush = (cp.empty(irr.FLUSH_BYTES // 4, dtype=cp.float32), cp.ones(irr.FLUSH_BYTES // 4, dtype=cp.float32))
    measured = []
    for i in todo:
        c = cases[i]
        try:
            e = measure(cp, np, kerns[kernel_of(c)], c, flush, checked)
            data["cases"].append(e)
            measured.append(i)
            common.log(f"{c['name']}: {e['time_ns']['median'] / 1e3:.1f} us, {e['registers_per_thread']} registers"
                       + (f", correct {e.get('correct')}: {e.get('check')}" if checked else ""))
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
        if checked:
            present += [m for m in GLOBAL_ATOM_METRICS if m in avail and m not in present]
            missing += [m for m in GLOBAL_ATOM_METRICS if m not in avail and m not in missing]
        work = Path(tempfile.mkdtemp(prefix="gpusim_fresh_ncu_"))
        child = [*common.python_cmd(), str(Path(__file__).resolve()), "--ncu-child", ",".join(map(str, measured))]
        if a.batch != FIRST:
            child += ["--batch", a.batch]
        names = [kernel_of(cases[i]) for i in measured]
        rows, _, _, dropped, nlog = common.run_ncu(ncu, present, "^(" + "|".join(sorted(set(names))) + ")$", child,
                                                   work / "fresh", timeout=400)
        for e, row in zip(data["cases"], common.assign_rows(rows, names), strict=True):
            e["ncu"] = irr.finite_values(row, present)
        data["ncu"] = {"version": common.ncu_version(ncu), "missing": missing + dropped}
        out.with_name(out.stem + "-ncu-log.txt").write_text(nlog[-100000:])
    if checked:
        hbm_shares(data)
    data["wall_s"] = round(time.time() - t0, 1)
    common.write_json(out, data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
