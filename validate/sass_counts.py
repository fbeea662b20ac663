"""How often each SASS instruction of a twin executes, from ncu's source counters on the H100 (issue "the SM side":
instruction streams from SASS).

    python3 validate/sass_counts.py --out $OUT/sasscounts-2026-11-25.json

The static SASS says what a loop holds, not what runs: branches around blocks, retry loops and predicated paths
make the count per trip differ. ncu's SourceCounters section counts, per SASS instruction, the warp-level
instructions executed (the per-instruction parts of ``smsp__inst_executed.sum``). For each target (a twin at one
shape, launched by its measurement script's own ncu child) this writes the instructions with their addresses,
text and executed counts, and their sum (to check against ``smsp__inst_executed.sum``), so that the IR's
instruction counts can be taken from what executes.

    python3 validate/sass_counts.py --stalls --out $OUT/stallsamples-2026-11-25.json

``--stalls`` profiles another set of twins (``stall_targets``: those whose stall reasons the model gets wrong) with
ncu's PC sampling as well, and keeps per instruction the samples of each stall reason: where in the code each warp
waits, and why (the ncu source view's columns).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "micro"))

import common  # noqa: E402


def _sm80_targets():
    """A target maker for the mma.sync and fa2 twins: run_tc_sm80's ncu child runs one case, after its warm-ups."""
    sys.path.insert(0, str(HERE))
    import run_tc_sm80

    cases = run_tc_sm80.build_cases(False)

    def sm80(kernel: str, shape: list[int], params: dict) -> dict:
        idx = next(i for i, c in enumerate(cases) if c["kernel"] == kernel and c["shape"] == shape
                   and c["params"] == params)
        return {"name": f"{kernel} {','.join(map(str, shape))} {params or ''}".strip(), "kernel": kernel,
                "argv": [str(HERE / "run_tc_sm80.py"), "--ncu-case", str(idx)], "skip": run_tc_sm80.NCU_WARMUP}

    return sm80


def _irregular(kernel: str, shape: tuple, params: dict) -> dict:
    """run_irregular's ncu child launching one case (validate/run_irregular.py CASES), once."""
    sys.path.insert(0, str(HERE))
    import run_irregular

    idx = run_irregular.CASES.index((kernel, shape, params))
    name = f"{kernel} {','.join(map(str, shape))} {' '.join(f'{k}={v}' for k, v in params.items())}".strip()
    return {"name": name, "kernel": kernel, "skip": 0,
            "argv": [str(HERE / "run_irregular.py"), "--ncu-child", "twins", "--cases", str(idx)]}


IRREGULAR_COUNTS = [("histogram", (8388608,), {"bins": "uniform"}), ("histogram", (67108864,), {"bins": "uniform"}),
                    ("histogram_aggregated", (8388608,), {"bins": "uniform"}),
                    ("histogram_aggregated", (67108864,), {"bins": "one"})]
IRREGULAR_STALLS = [("histogram", (8388608,), {"bins": "uniform"}), ("block_scan", (4194304,), {}),
                    ("block_scan_padded", (4194304,), {}), ("stencil5", (8192,), {})]


def targets(work: Path) -> list[dict]:
    """(name, kernel regex, child argv, launches to skip): the twins whose instruction counts are in doubt."""
    sys.path.insert(0, str(HERE))
    import run_tc_sm90

    sm80 = _sm80_targets()
    out = [sm80("fa2", [2, 16, 1024, 128], {}), sm80("fa2", [4, 16, 4096, 128], {"causal": 1}),
           sm80("fa2", [8, 32, 2048, 64], {}), sm80("fa2", [8, 32, 2048, 64], {"causal": 1}),
           sm80("hgemm_mma_pipelined", [512, 512, 512], {}), sm80("hgemm_mma", [512, 512, 512], {})]
    # the Hopper twins: run_tc_sm90's ncu child reads its case from a plan file (launched 3 times, 2 skipped)
    plan = run_tc_sm90.plan_cases([tuple(s) for s in run_tc_sm90.SHAPES], False)
    plan_path = work / "sc_plan.json"
    plan_path.write_text(json.dumps(plan))
    for k, shape in (("hgemm_persistent", [512, 512, 512]), ("hgemm_persistent", [4096, 4096, 4096]),
                     ("hgemm_ws", [4096, 4096, 4096]), ("hgemm_ws_cluster", [512, 512, 512]),
                     ("hgemm_ws_cluster", [4096, 4096, 4096])):
        c = next(c for c in plan if c["kernel"] == k and c["shape"] == shape and not c["params"])
        out.append({"name": f"{k} {','.join(map(str, shape))}", "kernel": k, "skip": 2,
                    "argv": [str(HERE / "run_tc_sm90.py"), "--ncu-child", str(plan_path), "--case", str(c["id"]),
                             "--tmap", "param"]})
    # run_membound's ncu child launches every case once, in order: the first reduction launched is N = 4M
    for k in ("mem_reduce_interleaved", "mem_reduce_sequential"):
        out.append({"name": f"{k} 4194304", "kernel": k, "argv": [str(HERE / "run_membound.py"), "--ncu-child"],
                    "skip": 0})
    # the irregular twins' instruction counts: divergent paths around a convergence barrier, grid-stride trips
    return out + [_irregular(*c) for c in IRREGULAR_COUNTS]


STALL_BASE_COLUMNS = ["Address", "Source", "Instructions Executed", "Warp Stall Sampling (All Samples)"]


def stall_targets(work: Path) -> list[dict]:
    """The twins whose stall reasons the model gets wrong (validate/DEVIATIONS.md), for ``--stalls``: where in the
    code ncu's PC samples find each warp, and why it waited there."""
    sm80 = _sm80_targets()

    def fp32(kernel: str, shape: str) -> dict:
        return {"name": f"{kernel} {shape}", "kernel": kernel, "skip": 0,
                "argv": [str(HERE / "run_h100.py"), "--ncu-child", "ladder", "--kernels", kernel, "--shapes", shape]}

    def membound(kernel: str, n: int) -> dict:
        # run_membound's ncu child launches its cases in order, each once: skip the kernel's earlier sizes
        sys.path.insert(0, str(HERE))
        import run_membound

        sizes = [c[1] for c in run_membound.CASES if c[0] == kernel]
        return {"name": f"{kernel} {n}", "kernel": kernel, "skip": sizes.index(n),
                "argv": [str(HERE / "run_membound.py"), "--ncu-child"]}

    return [fp32("sgemm_memcpy_async", "4096,4096,4096"), fp32("sgemm_memcpy_async", "512,512,512"),
            fp32("sgemm_warptiling", "512,512,512"), fp32("sgemm_2d_blocktiling", "4096,4096,4096"),
            fp32("sgemm_double_buffered", "4096,4096,4096"),
            sm80("fa2", [8, 32, 2048, 64], {}), sm80("hgemm_mma_pipelined", [4096, 4096, 4096], {}),
            membound("mem_transpose_padded", 2048), membound("mem_transpose_shared", 2048),
            membound("mem_scale", 16 << 20), membound("mem_copy", 4 << 20)] + [_irregular(*c) for c in IRREGULAR_STALLS]


def parse_source_csv(text: str) -> list[dict]:
    """Rows of ncu's ``--page source --csv --print-source sass``: every column kept, numbers as numbers."""
    lines = [ln for ln in text.splitlines() if ln.startswith('"') and not ln.startswith('"Kernel Name"')]
    rows = []
    for r in csv.DictReader(io.StringIO("\n".join(lines))):
        rows.append({k: common._to_number(v) if isinstance(v, str) else v for k, v in r.items()})
    return rows


def write(path: Path, res: dict) -> None:
    """The JSON, one instruction per line (thousands of them per target)."""
    lines = ["{"] + [f" {json.dumps(k)}: {json.dumps(v)}," for k, v in res.items() if k != "targets"]
    lines.append(' "targets": [')
    for ti, t in enumerate(res["targets"]):
        lines.append("  {")
        lines += [f"   {json.dumps(k)}: {json.dumps(v)}," for k, v in t.items() if k != "instructions"]
        rows = t.get("instructions", [])
        lines.append('   "instructions": [')
        lines += ["    " + json.dumps(r) + ("," if i < len(rows) - 1 else "") for i, r in enumerate(rows)]
        lines += ["   ]", "  }" + ("," if ti < len(res["targets"]) - 1 else "")]
    lines += [" ]", "}"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="", help="comma-separated substrings: run the targets whose name holds one")
    ap.add_argument("--work", default="/tmp/sass_counts", help="where the ncu reports go")
    ap.add_argument("--stalls", action="store_true",
                    help="the stall targets, with ncu's PC samples per instruction and reason (WarpStateStats)")
    a = ap.parse_args()
    ncu = common.find_ncu()
    work = Path(a.work)
    res = {"schema": "sasscounts-1", "ncu": common.ncu_version(ncu),
           "columns": ["address", "source", "warp_instructions_executed", "thread_instructions_executed",
                       "predicated_on_thread_instructions_executed"], "targets": []}
    work.mkdir(parents=True, exist_ok=True)
    if a.stalls:
        res["schema"] = "sasscounts-2"
        res["columns"] = ("per target: Address, Source, Instructions Executed (warp-level), Warp Stall Sampling (All "
                          "Samples), then every stall_<reason> PC-sample count that is not zero somewhere (ncu's "
                          "source page; the (Not Issued) copies dropped)")
    for t in (stall_targets(work) if a.stalls else targets(work)):
        if a.only and not any(o and o in t["name"] for o in a.only.split(",")):
            continue
        rep = work / ("sc_" + t["name"].replace(" ", "_").replace(",", "x"))
        cmd = [ncu, "--clock-control", "none", "--target-processes", "all", "-k", f"regex:^{t['kernel']}$",
               "--launch-skip", str(t["skip"]), "--launch-count", "1", "--section", "SourceCounters",
               *(["--section", "WarpStateStats"] if a.stalls else []),
               "--metrics", "smsp__inst_executed.sum", "-f", "-o", str(rep), *common.python_cmd(), *t["argv"]]
        rc, log = common.sh(cmd, timeout=300)
        common.log(f"{t['name']}: ncu rc={rc}")
        entry = {"name": t["name"], "rc": rc, "log_tail": log[-1500:]}
        rc2, text = common.sh([ncu, "--import", str(rep) + ".ncu-rep", "--page", "source", "--csv",
                               "--print-source", "sass"], timeout=300)
        rows = parse_source_csv(text) if rc2 == 0 else []
        if a.stalls:
            cols = STALL_BASE_COLUMNS + [c for c in (rows[0] if rows else {}) if c.startswith("stall_")
                                         and "Not Issued" not in c and any(r.get(c) for r in rows)]
            entry["columns"] = cols
            entry["instructions"] = [[r.get(c) for c in cols] for r in rows]
        else:
            entry["instructions"] = [[r.get("Address"), r.get("Source"), r.get("Instructions Executed"),
                                      r.get("Thread Instructions Executed"),
                                      r.get("Predicated-On Thread Instructions Executed")] for r in rows]
        rc3, raw = common.sh([ncu, "--import", str(rep) + ".ncu-rep", "--page", "raw", "--csv"], timeout=120)
        r3, _ = common.parse_ncu_raw_csv(raw)
        entry["smsp__inst_executed.sum"] = r3[0].get("smsp__inst_executed.sum") if r3 else None
        executed = [r.get("Instructions Executed") for r in rows]
        entry["sum_executed"] = sum(x for x in executed if isinstance(x, (int, float)))
        common.log(f"  {len(rows)} instructions, executed sum {entry['sum_executed']}, "
                   f"smsp__inst_executed.sum {entry['smsp__inst_executed.sum']}")
        res["targets"].append(entry)
    write(Path(a.out), res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
