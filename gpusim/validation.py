"""Differential validation: predictions against measurements from a real GPU.

Reads a measurement file written by ``validate/run_h100.py`` (schema 1), predicts every correct
(kernel, shape) it holds with the selected config, and reports per kernel and metric the prediction,
the measurement and the error, plus totals: time MAPE, worst time error, Spearman rank correlation of each
ladder, per-metric errors and how often the top stall reason matches ncu's. Tolerances live in
``validate/tolerances.toml``; ``check`` lists every one that is exceeded.
"""

from __future__ import annotations

import functools
import json
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from gpusim.config import HardwareConfig
from gpusim.inputs import quote, read_text
from gpusim.ncu import TIME

REPO = Path(__file__).resolve().parent.parent
MEASUREMENTS = REPO / "validate" / "measurements"
TOLERANCES = REPO / "validate" / "tolerances.toml"
MISSES = REPO / "validate" / "misses.toml"  # why rows miss a goal: each entry points into DEVIATIONS
DEVIATIONS = REPO / "validate" / "DEVIATIONS.md"
INSTRUCTIONS = "smsp__inst_executed.sum"
STALL_PREFIX = "smsp__average_warps_issue_stalled_"

# metric -> how its error is measured: "rel" (relative, %), "pts" (absolute percentage points), or the name of
# a reference metric: the difference as a percentage of the measured reference (bank conflicts are compared
# as a share of the measured wavefronts, since conflict-free kernels measure near-zero counts)
COMPARED = {
    TIME: "rel",
    "dram__bytes_read.sum": "rel",
    "dram__bytes_write.sum": "rel",
    "lts__t_sector_hit_rate.pct": "pts",
    "l1tex__t_sector_hit_rate.pct": "pts",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "rel",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": "rel",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": "rel",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": "rel",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": "rel",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "pts",
    "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum": "rel",
    "sm__sass_l1tex_data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum":
        "sm__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
    "sm__inst_executed_pipe_tensor_op_hmma.sum": "rel",
    "smsp__inst_executed.sum": "rel",  # the SM side's instruction streams (the tensor kernels lack most of theirs)
    "sm__cycles_elapsed.avg.per_second": "rel",  # the SM clock the kernel ran at
}


class ValidationError(ValueError):
    """Unusable measurements (missing file, wrong GPU, bad schema); one line."""


GLD_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"


@dataclass
class Row:
    kernel: str
    shape: tuple[int, ...]
    predicted: dict
    measured: dict  # ncu metrics + TIME from CUDA events
    errors: dict = field(default_factory=dict)  # metric -> error (% or points)
    top_stall: tuple[str, str] = ("", "")  # (predicted, measured)
    stalls_ranked: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())  # (predicted, measured), largest first
    params: dict = field(default_factory=dict)  # knobs the measured twin was built with

    @property
    def where(self) -> str:
        """The row as reports name it: its label and shape, e.g. ``hgemm_ws[stages=4] 4096,4096,4096``."""
        return f"{self.label} {','.join(map(str, self.shape))}"

    @property
    def label(self) -> str:
        """The kernel with its non-default knobs, e.g. ``hgemm_ws[stages=4]``."""
        return self.kernel + (f"[{','.join(f'{k}={v}' for k, v in self.params.items())}]" if self.params else "")


def latest_measurements(gpu_model: str) -> Path:
    folder = MEASUREMENTS / gpu_model.lower()
    files = sorted(folder.glob("[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9].json"))  # one file per run date
    if not files:
        raise ValidationError(f"no measurements in {quote(folder)}")
    return files[-1]


def measured_kernels(cfg: HardwareConfig, folder: Path | None = None) -> set[str]:
    """The kernels with at least one correct measurement on the config's GPU committed in ``validate/measurements``
    (every schema-1 file with kernels whose GPU the config names)."""
    return set(_measured_kernels(str(folder or MEASUREMENTS / cfg.gpu_model.lower()), tuple(cfg.device_names)))


@functools.lru_cache(maxsize=8)
def _measured_kernels(folder: str, device_names: tuple[str, ...]) -> frozenset[str]:
    out = set()
    for f in sorted(Path(folder).glob("*.json")) if Path(folder).is_dir() else []:
        try:
            text = f.read_text()
            if '"kernels"' not in text:  # a micro-benchmark's file (most of the folder's bytes): no need to parse it
                continue
            data = json.loads(text)
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict) or not isinstance(data.get("kernels"), list):
            continue
        if not isinstance(data.get("gpu"), dict) or data["gpu"].get("name") not in device_names:
            continue
        out |= {e["kernel"] for e in data["kernels"] if isinstance(e, dict) and e.get("correct")
                and isinstance(e.get("kernel"), str)}
    return frozenset(out)


def unvalidated_note(cfg: HardwareConfig, kernel: str) -> str:
    """"" when the kernel's family has committed measurements on the config's GPU; else the sentence that says the
    prediction is unvalidated, and why."""
    from gpusim.ir import REGISTRY

    measured = measured_kernels(cfg)
    if not measured:
        return (f"unvalidated: no kernel measurements of the {cfg.gpu_model} are committed "
                f"(validate/measurements/{cfg.gpu_model.lower()}/); the model is validated on the H100 only")
    kd = REGISTRY.get(kernel)
    family = kd.family if kd else ""
    if not any(REGISTRY[k].family == family for k in measured if k in REGISTRY):
        return (f"unvalidated: no committed measurements of the '{family}' family on the {cfg.gpu_model} "
                f"(validate/measurements/{cfg.gpu_model.lower()}/)")
    return ""


def companion_files(path: Path) -> list[Path]:
    """The newest ``<family>-<date>.json`` of every family beside ``path`` that holds kernels: the tensor-core,
    attention and memory-bound twins are measured by their own device scripts, on their own dates."""
    import re

    path = Path(path)
    newest: dict[str, Path] = {}
    for f in sorted(path.parent.glob("*-[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9].json")):
        m = re.fullmatch(r"(.+)-(\d{4}-\d{2}-\d{2})\.json", f.name)
        if not m or m.group(1)[:1].isdigit():
            continue
        try:
            data = _parse(f)
        except ValidationError:
            continue
        if not isinstance(data, dict) or not isinstance(data.get("kernels"), list):
            continue  # a micro-benchmark file (hopper, memsys, ...): numbers for the config, not kernels
        newest[m.group(1)] = f  # sorted by name: the last one of a family is its newest date
    return [newest[k] for k in sorted(newest)]


def load_all(paths: list[Path], cfg: HardwareConfig) -> dict:
    """Several measurement files as one: the first file's header, every file's kernels."""
    first = load_measurements(paths[0], cfg)
    merged = dict(first, kernels=list(first["kernels"]))
    for p in paths[1:]:
        merged["kernels"] += load_measurements(p, cfg)["kernels"]
    return merged


def _parse(path: Path):
    """The JSON value of a measurement file (any type); unreadable or invalid JSON raises ValidationError."""
    text = read_text(path, "measurement file", ValidationError)
    try:
        return json.loads(text)
    except ValueError as e:  # JSONDecodeError, or an integer of more than 4300 digits
        raise ValidationError(f"{quote(path)}: not valid JSON: {e}") from None
    except RecursionError:
        raise ValidationError(f"{quote(path)}: not valid JSON: nested too deeply") from None


def load_measurements(path: Path, cfg: HardwareConfig) -> dict:
    """A schema-1 measurement file measured on the config's GPU, every field :func:`check_schema` reads
    checked; else ValidationError naming the file and the JSON path of the bad field (one line)."""
    data = _parse(path)
    check_schema(data, quote(path))
    name = data["gpu"]["name"]
    if name not in cfg.device_names:
        raise ValidationError(f"{quote(path)}: $.gpu.name: measured on {name!r}, but the config {quote(cfg.path)} "
                              f"describes the {cfg.name} ({' or '.join(map(repr, cfg.device_names))}); choose the "
                              "matching --config")
    floor = cfg.chip.kernel_overhead_ns
    for i, e in enumerate(data["kernels"]):
        if e["time_ns"]["median"] < floor:
            raise ValidationError(f"{quote(path)}: $.kernels[{i}].time_ns.median: {e['time_ns']['median']:g} ns is "
                                  f"less than an empty kernel takes on the {cfg.name} (chip.kernel_overhead_ns = "
                                  f"{floor:g} ns): not a kernel's time")
    return data


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _type(v) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null",
            int: "an integer", float: "a number"}.get(type(v), type(v).__name__)


def _bad(where: str, jpath: str, want: str, got) -> ValidationError:
    shown = repr(got) if isinstance(got, (str, int, float, bool)) and len(repr(got)) <= 40 else _type(got)
    return ValidationError(f"{where}: {jpath}: must be {want}, got {shown}")


def check_schema(data, where: str) -> None:
    """The schema-1 measurement file, as far as gpusim reads it:

    - top level: an object with ``schema`` = 1, ``gpu`` (an object with a non-empty string ``name``) and
      ``kernels`` (a list);
    - each entry: an object with ``kernel`` (a non-empty string), ``shape`` (a non-empty list of positive integers)
      and ``time_ns`` (an object whose ``median``, and ``min``/``max`` when present, are positive finite numbers);
      optionally ``correct`` (a boolean), ``params`` (an object of strings, numbers and booleans),
      ``registers_per_thread`` (a positive integer), ``ncu`` (an object of metric names to finite numbers).

    Anything else raises ValidationError naming ``where`` and the JSON path of the first bad field."""
    if not isinstance(data, dict):
        raise _bad(where, "$", "an object (a schema-1 measurement file)", data)
    if "kernels" not in data:
        raise ValidationError(f"{where}: $.kernels: missing: the file holds no kernel measurements (a micro-benchmark "
                              "file's numbers go into the config, with their source)")
    if data.get("schema") != 1 or isinstance(data.get("schema"), bool):
        raise _bad(where, "$.schema", "1 (a schema-1 measurement file with gpu and kernels)", data.get("schema"))
    gpu = data.get("gpu")
    if not isinstance(gpu, dict):
        raise _bad(where, "$.gpu", "an object naming the GPU", gpu)
    if not isinstance(gpu.get("name"), str) or not gpu["name"].strip():
        raise _bad(where, "$.gpu.name", "the GPU's name (a non-empty string)", gpu.get("name"))
    kernels = data.get("kernels")
    if not isinstance(kernels, list):
        raise _bad(where, "$.kernels", "a list of measured kernels", kernels)
    for i, e in enumerate(kernels):
        at = f"$.kernels[{i}]"
        if not isinstance(e, dict):
            raise _bad(where, at, "an object", e)
        for key in ("kernel", "shape", "time_ns"):
            if key not in e:
                raise ValidationError(f"{where}: {at}: missing {key!r}")
        if not isinstance(e["kernel"], str) or not e["kernel"]:
            raise _bad(where, f"{at}.kernel", "a kernel name (a non-empty string)", e["kernel"])
        shape = e["shape"]
        if not isinstance(shape, list) or not shape:
            raise _bad(where, f"{at}.shape", "a non-empty list of positive integers", shape)
        for j, d in enumerate(shape):
            if not _is_int(d) or d <= 0:
                raise _bad(where, f"{at}.shape[{j}]", "a positive integer", d)
        t = e["time_ns"]
        if not isinstance(t, dict):
            raise _bad(where, f"{at}.time_ns", "an object with the median time", t)
        if "median" not in t:
            raise ValidationError(f"{where}: {at}.time_ns: missing 'median'")
        for key in ("median", "min", "max"):
            if key in t and not (_is_number(t[key]) and t[key] > 0):
                raise _bad(where, f"{at}.time_ns.{key}", "a positive finite number of nanoseconds", t[key])
        if not t.get("min", t["median"]) <= t["median"] <= t.get("max", t["median"]):
            raise ValidationError(f"{where}: {at}.time_ns: min {t.get('min', '-')} <= median {t['median']} <= max "
                                  f"{t.get('max', '-')} does not hold")
        if "correct" in e and not isinstance(e["correct"], bool):
            raise _bad(where, f"{at}.correct", "true or false", e["correct"])
        params = e.get("params")
        if params is not None:
            if not isinstance(params, dict):
                raise _bad(where, f"{at}.params", "an object of knob values", params)
            for k, v in params.items():
                if not isinstance(v, (str, int, float, bool)):
                    raise _bad(where, f"{at}.params[{k!r}]", "a string, number or boolean", v)
        regs = e.get("registers_per_thread")
        if regs is not None and not (_is_int(regs) and regs > 0):
            raise _bad(where, f"{at}.registers_per_thread", "a positive integer", regs)
        ncu = e.get("ncu")
        if ncu is not None:
            if not isinstance(ncu, dict):
                raise _bad(where, f"{at}.ncu", "an object of ncu metrics", ncu)
            for k, v in ncu.items():
                if not _is_number(v):
                    raise _bad(where, f"{at}.ncu[{k!r}]", "a finite number", v)
                if v < 0 or (".pct" in k and v > 100):  # counters, ratios and rates; percentages of at most 100
                    raise _bad(where, f"{at}.ncu[{k!r}]", "a percentage from 0 to 100" if ".pct" in k else
                               "a count, ratio or rate (not negative)", v)


def _ranked_stalls(metrics: dict) -> tuple[str, ...]:
    """Stall reasons (``selected`` aside), the largest first."""
    stalls = {k[len(STALL_PREFIX):].replace("_per_issue_active.ratio", ""): v for k, v in metrics.items()
              if k.startswith(STALL_PREFIX) and k.endswith("_per_issue_active.ratio")
              and isinstance(v, (int, float)) and "selected" not in k}
    return tuple(sorted(stalls, key=lambda s: -stalls[s]))


def _top_stall(metrics: dict) -> str:
    ranked = _ranked_stalls(metrics)
    return ranked[0] if ranked else ""


def compare(cfg: HardwareConfig, data: dict, progress=None, skipped: list[str] | None = None,
            workers: int | None = None, kernel_paths: tuple[str, ...] = ()) -> list[Row]:
    """Predict every correct measured row (on ``workers`` processes, default one per core; the rows are the same
    whatever the number); rows the IR cannot describe go to ``skipped`` with the reason."""
    from gpusim import loader

    loader.load(kernel_paths)
    from gpusim.api import predict_many
    from gpusim.ir import REGISTRY, KernelError

    entries = [e for e in data["kernels"] if e.get("correct") and e["kernel"] in REGISTRY]
    params_of = [{k: str(int(v) if isinstance(v, bool) else v) for k, v in (e.get("params") or {}).items()}
                 for e in entries]
    points = []
    for e, params in zip(entries, params_of, strict=True):
        overrides = dict(params)
        if e.get("registers_per_thread"):
            overrides["regs_per_thread"] = e["registers_per_thread"]
        points.append((e["kernel"], tuple(e["shape"]), overrides or None))
    if progress:
        progress(0, len(entries), "")
    predicted = predict_many(points, cfg, workers, kernel_paths, progress)
    rows = []
    skipped = skipped if skipped is not None else []
    for e, params, pred in zip(entries, params_of, predicted, strict=True):
        if isinstance(pred, KernelError):  # a twin variant the IR cannot describe (e.g. a ragged last KV block)
            skipped.append(f"{e['kernel']} {e['shape']} {params}: {pred}")
            continue
        if isinstance(pred, Exception):
            raise pred
        meas = dict(e.get("ncu") or {})
        meas[TIME] = e["time_ns"]["median"]
        row = Row(e["kernel"], tuple(e["shape"]), pred, meas, params=params)
        for metric, kind in COMPARED.items():
            p, m = pred.get(metric), meas.get(metric)
            if metric == "l1tex__t_sector_hit_rate.pct" and not meas.get(GLD_SECTORS):
                continue  # no global loads through L1 (TMA kernels): ncu's rate is of other traffic
            if not isinstance(p, (int, float)) or not isinstance(m, (int, float)):
                continue
            if kind == "pts":
                row.errors[metric] = p - m
            elif kind != "rel":
                ref = meas.get(kind)
                if isinstance(ref, (int, float)) and ref > 0:
                    row.errors[metric] = 100.0 * (p - m) / ref
            elif m == 0:
                row.errors[metric] = 0.0 if p == 0 else math.inf
            else:
                row.errors[metric] = 100.0 * (p - m) / m
        row.top_stall = (_top_stall(pred), _top_stall(meas))
        row.stalls_ranked = (_ranked_stalls(pred), _ranked_stalls(meas))
        rows.append(row)
    return rows


def spearman(xs: list[float], ys: list[float]) -> float:
    """Spearman rank correlation (average ranks for ties)."""
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2
            i = j + 1
        return r

    n = len(xs)
    if n < 2:
        return 1.0
    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / n, sum(ry) / n
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    sx = math.sqrt(sum((a - mx) ** 2 for a in rx))
    sy = math.sqrt(sum((b - my) ** 2 for b in ry))
    return cov / (sx * sy) if sx and sy else 1.0


def _top2_in_top3(r: Row) -> bool:
    """Whether the measured top two stall reasons are among the predicted top three."""
    return set(r.stalls_ranked[1][:2]) <= set(r.stalls_ranked[0][:3])


def summarize(rows: list[Row]) -> dict:
    from gpusim.ir import REGISTRY

    t = [abs(r.errors[TIME]) for r in rows if TIME in r.errors]
    worst = max(rows, key=lambda r: abs(r.errors.get(TIME, 0.0)), default=None)
    plain = [r for r in rows if not r.params]  # ladders rank each kernel at its defaults
    ladders = {}
    for fam in sorted({REGISTRY[r.kernel].family for r in plain}):
        for shape in sorted({r.shape for r in plain if REGISTRY[r.kernel].family == fam}):
            sel = [r for r in plain if REGISTRY[r.kernel].family == fam and r.shape == shape]
            if len(sel) >= 3:
                ladders[f"{fam} {','.join(map(str, shape))}"] = spearman(
                    [r.predicted[TIME] for r in sel], [r.measured[TIME] for r in sel])
    families = {}  # time error per kernel family (every row, knob settings included)
    for fam in sorted({REGISTRY[r.kernel].family for r in rows if TIME in r.errors}):
        sel = [r for r in rows if TIME in r.errors and REGISTRY[r.kernel].family == fam]
        far = max(sel, key=lambda r: abs(r.errors[TIME]))
        families[fam] = {"mape": float(sum(abs(r.errors[TIME]) for r in sel) / len(sel)), "n": len(sel),
                         "worst": float(abs(far.errors[TIME])),
                         "worst_row": far.where}
    per_metric = {}
    for metric in COMPARED:
        errs = [abs(r.errors[metric]) for r in rows if metric in r.errors and math.isfinite(r.errors[metric])]
        if errs:
            # a relative error of -100% whatever the size: rows predicted at zero where ncu measures some are
            # named one by one (tolerances.toml [zero_predictions]) instead of widening the tolerance to 100%
            zero = [r.where for r in rows if COMPARED[metric] == "rel"
                    and r.predicted.get(metric) == 0 and (r.measured.get(metric) or 0) > 0 and metric in r.errors]
            rest = [abs(r.errors[metric]) for r in rows if metric in r.errors and math.isfinite(r.errors[metric])
                    and r.where not in zero]
            per_metric[metric] = {"mean": sum(errs) / len(errs), "max": max(errs), "n": len(errs),
                                  "unit": "pts" if COMPARED[metric] == "pts" else "%",
                                  "zero_rows": zero, "max_nonzero": max(rest, default=0.0)}
    stalls = [r for r in rows if r.top_stall[1]]
    inst = [100.0 * abs(r.predicted[INSTRUCTIONS] - r.measured[INSTRUCTIONS]) / r.measured[INSTRUCTIONS]
            for r in rows if isinstance(r.measured.get(INSTRUCTIONS), (int, float)) and r.measured[INSTRUCTIONS] > 0
            and isinstance(r.predicted.get(INSTRUCTIONS), (int, float))]
    # physics: the busiest unit of every predicted row, as a share of its peak
    busiest = max(((u, k, r) for r in rows for k, u in r.predicted.get("gpusim__utilization_pct", {}).items()),
                  key=lambda x: x[0], default=(0.0, "", None))
    return {
        "max_utilization_pct": busiest[0],
        "max_utilization_where": f"{busiest[1]} of {busiest[2].where}"
        if busiest[2] else "",
        "kernels": len(rows),
        "time_mape_pct": sum(t) / len(t) if t else 0.0,
        "time_max_err_pct": max(t) if t else 0.0,
        "time_worst": worst.where if worst else "",
        "spearman": ladders,
        "families": families,
        "per_metric": per_metric,
        "top_stall_match_pct": 100.0 * sum(r.top_stall[0] == r.top_stall[1] for r in stalls) / len(stalls)
        if stalls else 0.0,
        # the measured top two stall reasons among the predicted top three
        "top2_in_top3_pct": 100.0 * sum(_top2_in_top3(r) for r in stalls)
        / len(stalls) if stalls else 0.0,
        "inst_max_err_pct": max(inst, default=0.0),
        "inst_within_10_pct": 100.0 * sum(e <= 10.0 for e in inst) / len(inst) if inst else 0.0,
    }


KNOB_GOAL_PTS = 5.0  # a knob sweep's predicted change within this many points of the measured one
RANK_GOAL = 0.95  # each ladder's Spearman rank correlation at least this


@dataclass(frozen=True)
class KnobChange:
    """One measured knob setting against the same kernel and shape at its defaults."""

    kernel: str
    shape: tuple[int, ...]
    knobs: str  # e.g. "stages=4"
    predicted_pct: float  # relative change of the time, predicted
    measured_pct: float  # relative change of the time, measured

    @property
    def gap_pts(self) -> float:
        return self.predicted_pct - self.measured_pct

    @property
    def same_direction(self) -> bool:
        return (self.predicted_pct > 0) == (self.measured_pct > 0) or abs(self.measured_pct) < 1.0

    @property
    def meets_goal(self) -> bool:
        """Within :data:`KNOB_GOAL_PTS` of the measured change, in the same direction."""
        return abs(self.gap_pts) <= KNOB_GOAL_PTS and self.same_direction


def beside_defaults(rows: list) -> list[tuple]:
    """(row, its kernel's row without knobs at the same shape) for every row with knobs that has one (rows of any
    kind with ``kernel``, ``shape`` and ``params``)."""
    base = {(r.kernel, r.shape): r for r in rows if not r.params}
    return [(r, base[r.kernel, r.shape]) for r in rows if r.params and (r.kernel, r.shape) in base]


def knob_sensitivity(rows: list[Row]) -> list[KnobChange]:
    """Every measured knob variant beside its kernel's default row at the same shape: the predicted and the
    measured relative change of the time (the what-if a user asks: "what does this knob buy?")."""
    out = []
    for r, b in beside_defaults(rows):
        pred = 100.0 * (r.predicted[TIME] / b.predicted[TIME] - 1.0)
        meas = 100.0 * (r.measured[TIME] / b.measured[TIME] - 1.0)
        out.append(KnobChange(r.kernel, r.shape, ",".join(f"{k}={v}" for k, v in r.params.items()), pred, meas))
    return out


# knobs that change what a kernel computes, not how (a causal mask): an autotuner never trades them, so a
# measured sweep compares only settings with equal problem knobs
PROBLEM_KNOBS = ("causal",)
AUTOTUNE_GOAL_PCT = 5.0  # the predicted best's measured time within this of the measured optimum (issue 13)
TIE_PCT = 0.1  # predicted times this close are a tie: the model cannot rank them; a tuner keeps the defaults


@dataclass(frozen=True)
class AutotuneCheck:
    """One measured knob sweep (a kernel at a shape, several knob settings): would the model pick the right one?"""

    kernel: str
    shape: tuple[int, ...]
    problem: str  # the problem knobs the sweep holds fixed, e.g. "causal=1" ("" for none)
    points: int  # measured settings
    predicted_best: str  # the setting the model predicts fastest, e.g. "stages=4" ("defaults")
    measured_best: str
    gap_pct: float  # the measured time of the predicted best above the measured optimum (0: the same setting)
    ties: int = 0  # other settings predicted within TIE_PCT of the best (the model cannot tell them apart)

    @property
    def met(self) -> bool:
        return self.gap_pct <= AUTOTUNE_GOAL_PCT


def _tuning_label(params: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in params.items() if k not in PROBLEM_KNOBS) or "defaults"


def autotune(rows: list[Row]) -> list[AutotuneCheck]:
    """Every measured knob sweep: the rows of one kernel at one shape with the same problem knobs (the default
    row and its knob variants, as in :func:`knob_sensitivity`), at least two settings. Reports whether the
    predicted fastest setting is the measured fastest and how far its measured time is from the optimum."""
    sweeps: dict[tuple, list[Row]] = {}
    for r in rows:
        problem = ",".join(f"{k}={v}" for k, v in r.params.items() if k in PROBLEM_KNOBS)
        sweeps.setdefault((r.kernel, r.shape, problem), []).append(r)
    out = []
    for (kernel, shape, problem), sel in sweeps.items():
        if len(sel) < 2:
            continue
        fastest = min(r.predicted[TIME] for r in sel)
        tied = [r for r in sel if r.predicted[TIME] <= fastest * (1 + TIE_PCT / 100)]
        # on a tie the kernel's defaults stay (the knobs left as they are), else the fastest predicted of them
        pred = min(tied, key=lambda r: (_tuning_label(r.params) != "defaults", r.predicted[TIME]))
        meas = min(sel, key=lambda r: r.measured[TIME])
        gap = 100.0 * (pred.measured[TIME] / meas.measured[TIME] - 1.0)
        out.append(AutotuneCheck(kernel, shape, problem, len(sel), _tuning_label(pred.params),
                                 _tuning_label(meas.params), gap, len(tied) - 1))
    return out


def autotune_lines(checks: list[AutotuneCheck]) -> list[str]:
    """The autotune section of ``gpusim validate``: one line per measured sweep, then the total."""
    lines = []
    for c in checks:
        where = f"{c.kernel}{'[' + c.problem + ']' if c.problem else ''}"
        verdict = "same best" if c.predicted_best == c.measured_best else \
            f"measured best {c.measured_best}"
        best = c.predicted_best + (f" (tie with {c.ties})" if c.ties else "")
        lines.append(f"{where:<26} {','.join(map(str, c.shape)):<16} {c.points} settings  predicted best "
                     f"{best:<24} {verdict:<28} {c.gap_pct:+6.1f}% (goal <= {AUTOTUNE_GOAL_PCT:g}%) "
                     f"{'met' if c.met else 'short'}")
    if checks:
        met = sum(c.met for c in checks)
        same = sum(c.predicted_best == c.measured_best for c in checks)
        lines.append(f"predicted best within {AUTOTUNE_GOAL_PCT:g}% of the measured optimum on {met} of {len(checks)} "
                     f"sweeps ({same} pick the measured best; goal: all)")
    return lines

# What the project aims for (issues "memory system at chip scale" and "the SM side"); printed beside the
# tolerances, which only guard against regressions. (label, summary key, goal, unit, "<=" or ">=")
GOALS = (
    ("time MAPE over the suite", "time_mape_pct", 8.0, "%", "<="),
    ("worst time error", "time_max_err_pct", 25.0, "%", "<="),
    ("instructions executed, worst row", "inst_max_err_pct", 10.0, "%", "<="),
    ("top stall reason matches ncu", "top_stall_match_pct", 80.0, "% of rows", ">="),
    ("measured top two stalls within the predicted top three", "top2_in_top3_pct", 90.0, "% of rows", ">="),
    ("DRAM read bytes, worst row", ("per_metric", "dram__bytes_read.sum"), 15.0, "%", "<="),
    ("DRAM write bytes, worst row", ("per_metric", "dram__bytes_write.sum"), 15.0, "%", "<="),
    ("L2 hit rate, worst row", ("per_metric", "lts__t_sector_hit_rate.pct"), 5.0, "pts", "<="),
    ("busiest predicted unit", "max_utilization_pct", 100.0, "% of peak", "<="),
)
# where validate/tolerances.toml guards a goal's number (per-metric goals: [metrics_max] of the metric)
TOLERANCE_OF = {"time_mape_pct": ("time", "mape_pct"), "time_max_err_pct": ("time", "max_err_pct"),
                "top_stall_match_pct": ("stalls", "min_top_match_pct")}


def goal_lines(summary: dict, knobs: list[KnobChange], tol: dict | None = None) -> list[str]:
    """One line per goal: where the model stands, the tolerance that guards it (if ``tol`` is given and has
    one) and how far that is from the goal."""
    lines = []
    tol = tol or {}
    for label, key, goal, unit, way in GOALS:
        note = ""
        if isinstance(key, tuple):
            stats = summary[key[0]].get(key[1], {})
            got = stats.get("max")
            guard = tol.get("metrics_max", {}).get(key[1])
            if stats.get("zero_rows"):
                note = (f"; {len(stats['zero_rows'])} rows predicted at 0 (listed in [zero_predictions]), the others "
                        f"at most {stats['max_nonzero']:.1f}")
        else:
            got = summary.get(key)
            table, name = TOLERANCE_OF.get(key, ("", ""))
            guard = tol.get(table, {}).get(name)
            if key == "inst_max_err_pct" and "inst_within_10_pct" in summary:
                note = f"; {summary['inst_within_10_pct']:.0f}% of rows within 10%"
        if got is None:
            continue
        met = got <= goal if way == "<=" else got >= goal
        status = "met" if met else f"{abs(got - goal):.1f} {unit} short"
        beside = (f"; tolerance {guard:g}" if guard is not None else "") + note
        lines.append(f"{label}: {got:.1f} {unit} (goal {way} {goal:g}{beside}) {status}")
    if summary["spearman"]:
        worst = min(summary["spearman"].values())
        guard = tol.get("time", {}).get("min_spearman")
        beside = f"; tolerance {guard:g}" if guard is not None else ""
        lines.append(f"rank correlation, worst ladder: {worst:.3f} (goal >= {RANK_GOAL:g}{beside}) "
                     f"{'met' if worst >= RANK_GOAL else f'{RANK_GOAL - worst:.3f} short'}")
    if knobs:
        off = [k for k in knobs if not k.meets_goal]
        lines.append(f"knob sweeps: {len(knobs) - len(off)} of {len(knobs)} within {KNOB_GOAL_PTS:g} points and the "
                     f"same direction (goal: all)")
    return lines


# Goals that rows, ladders or knob sweeps miss one by one (issues "memory system at chip scale" and "the SM side":
# "or the closing note shows, row by row, what still misses and why"): key -> what the goal asks of each
MISS_GOALS = {
    "top2_in_top3": "the measured top two stall reasons among the predicted top three",
    "dram_read": "DRAM read bytes within 15%",
    "dram_write": "DRAM write bytes within 15%",
    "l2_hit": "L2 hit rate within 5 points",
    "rank": f"each ladder's Spearman rank correlation at least {RANK_GOAL:g}",
    "knob": f"each knob sweep's predicted change within {KNOB_GOAL_PTS:g} points of the measured one, in the same "
            "direction",
}
# the per-row metric goals, their limits as GOALS states them: (goal key, metric, limit, unit)
_MISS_METRICS = tuple((goal, metric, next(g for _l, key, g, _u, _w in GOALS if key == ("per_metric", metric)), unit)
                      for goal, metric, unit in (("dram_read", "dram__bytes_read.sum", "%"),
                                                 ("dram_write", "dram__bytes_write.sum", "%"),
                                                 ("l2_hit", "lts__t_sector_hit_rate.pct", " pts")))
_EXPLAIN_KEYS = {"goal", "row", "bound", "section", "why"}
# how each goal sizes a miss (the number an entry's bound caps): the error's size in percent or points, the predicted
# rank of the measured top two stall reasons, a knob sweep's distance from the measured change in points; a ladder's
# rank correlation is the one whose bound is a floor (the lowest tolerated)
MISS_SIZES = {
    "top2_in_top3": "the worst predicted rank of the measured top two stall reasons (one past the last: not predicted)",
    "dram_read": "|error| in percent", "dram_write": "|error| in percent", "l2_hit": "|error| in points",
    "rank": "the lowest Spearman correlation tolerated",
    "knob": "|predicted - measured change| in points",
}
NOT_ANALYSED = "not analysed"  # how an entry without a DEVIATIONS.md section begins its why


def _stall_rank(r: Row) -> int:
    """The worst predicted rank (1 = first) of the measured top two stall reasons; one past the predicted list for a
    reason gpusim does not give."""
    pred, meas = r.stalls_ranked[0], r.stalls_ranked[1]
    return max((pred.index(s) + 1 if s in pred else len(pred) + 1) for s in meas[:2])


def goal_misses(rows: list[Row], summary: dict, knobs: list[KnobChange]) -> dict[str, list[tuple[str, str, float]]]:
    """Per goal of :data:`MISS_GOALS`, everything that misses it: (name, figure, size as :data:`MISS_SIZES` says). A
    row is named as reports name it (``Row.where``), a ladder as ``family shape``, a knob sweep as
    ``kernel shape knobs``."""
    out: dict[str, list[tuple[str, str, float]]] = {g: [] for g in MISS_GOALS}
    for r in rows:
        meas, pred = r.stalls_ranked[1], r.stalls_ranked[0]
        if r.top_stall[1] and not _top2_in_top3(r):
            out["top2_in_top3"].append((r.where, f"ncu {' > '.join(meas[:2])}; predicted {' > '.join(pred[:3])}",
                                        float(_stall_rank(r))))
        for goal, metric, limit, unit in _MISS_METRICS:
            e = r.errors.get(metric)
            if e is not None and not abs(e) <= limit:
                out[goal].append((r.where, f"{e:+.1f}{unit}", abs(e)))
    for ladder, rho in summary["spearman"].items():
        if rho < RANK_GOAL:
            out["rank"].append((ladder, f"{rho:.3f}", rho))
    for k in knobs:
        if not k.meets_goal:
            out["knob"].append((f"{k.kernel} {','.join(map(str, k.shape))} {k.knobs}",
                                f"predicted {k.predicted_pct:+.1f}%, measured {k.measured_pct:+.1f}%",
                                abs(k.predicted_pct - k.measured_pct)))
    return out


def deviation_sections(path: Path | None = None) -> set[str]:
    """The section headings of validate/DEVIATIONS.md (``## `` lines, without the marks)."""
    text = read_text(path or DEVIATIONS, "deviations file", ValidationError)
    return {ln[3:].strip() for ln in text.splitlines() if ln.startswith("## ")}


def load_explanations(path: Path | None = None, deviations: Path | None = None) -> list[dict]:
    """validate/misses.toml: ``[[explain]]`` entries, one per miss: its goal (:data:`MISS_GOALS`), the ``row`` it
    covers (the exact name :func:`goal_misses` gives: no patterns), the ``bound`` it tolerates (:data:`MISS_SIZES`),
    the validate/DEVIATIONS.md section that explains it (``""`` with a why that begins "not analysed": no analysis
    exists) and a one-line why. Anything else (an unknown key or goal, a section DEVIATIONS.md lacks, a row given
    twice) raises ValidationError naming the file and the entry."""
    path, deviations = path or MISSES, deviations or DEVIATIONS
    text = read_text(path, "explanation file", ValidationError)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ValidationError(f"{quote(path)}: not valid TOML: {e}") from None
    if set(data) - {"explain"} or not isinstance(data.get("explain", []), list):
        raise ValidationError(f"{quote(path)}: only [[explain]] entries are allowed, found {sorted(data)}")
    sections = deviation_sections(deviations)
    entries = data.get("explain", [])
    seen: dict[tuple[str, str], int] = {}
    for i, e in enumerate(entries, 1):
        where = f"{quote(path)}: [[explain]] entry {i}"
        if not isinstance(e, dict) or set(e) != _EXPLAIN_KEYS:
            got = sorted(e) if isinstance(e, dict) else type(e).__name__
            raise ValidationError(f"{where}: needs exactly the keys {sorted(_EXPLAIN_KEYS)}, has {got}")
        if e["goal"] not in MISS_GOALS:
            raise ValidationError(f"{where}: goal {e['goal']!r} is not one of {sorted(MISS_GOALS)}")
        if not (isinstance(e["row"], str) and e["row"].strip()):
            raise ValidationError(f"{where}: row must name one row, ladder or knob sweep as the report does")
        if any(c in e["row"] for c in "*?"):
            raise ValidationError(f"{where}: row {e['row']!r} is a pattern; an entry covers one miss, named exactly")
        if (e["goal"], e["row"]) in seen:
            raise ValidationError(f"{where}: {e['goal']} {e['row']!r} has an entry already (entry "
                                  f"{seen[e['goal'], e['row']]})")
        seen[e["goal"], e["row"]] = i
        b = e["bound"]
        if isinstance(b, bool) or not isinstance(b, (int, float)) or math.isnan(b) or b < 0:
            raise ValidationError(f"{where}: bound must be a number: {MISS_SIZES[e['goal']]}")
        if math.isinf(b) and not (e["goal"] in ("dram_read", "dram_write") and "measured 0 bytes" in e["why"]):
            raise ValidationError(f"{where}: an infinite bound is for a byte count measured as 0 (any prediction is "
                                  "an infinite relative error), and its why says 'measured 0 bytes'")
        if not (isinstance(e["why"], str) and e["why"].strip()):
            raise ValidationError(f"{where}: why must be a sentence")
        if e["section"] == "":
            if not e["why"].startswith(NOT_ANALYSED):
                raise ValidationError(f"{where}: an entry without a DEVIATIONS.md section has no analysis: its why "
                                      f"begins {NOT_ANALYSED!r}")
        elif e["section"] not in sections:
            raise ValidationError(f"{where}: section {e['section']!r} is not a heading of {quote(deviations)}")
    return entries


def _within(goal: str, size: float, bound: float) -> bool:
    return size >= bound if goal == "rank" else size <= bound


def explain(misses: dict[str, list[tuple[str, str, float]]], entries: list[dict]) -> dict[
        str, list[tuple[str, str, dict | None]]]:
    """Each miss with its entry (same goal, the same name), or None: no entry, or the miss is larger than the
    entry's bound."""
    out = {}
    for goal, items in misses.items():
        mine = {e["row"]: e for e in entries if e["goal"] == goal}
        out[goal] = [(name, fig, e if e is not None and _within(goal, size, e["bound"]) else None)
                     for name, fig, size in items for e in (mine.get(name),)]
    return out


def guard_problems(misses: dict[str, list[tuple[str, str, float]]], entries: list[dict]) -> list[str]:
    """What fails the guard (tests/test_validation_guard.py), one line each: a miss without an entry, a miss larger
    than its entry's bound, an entry that matches no miss (the row now meets its goal, or was renamed)."""
    out = []
    for goal, items in misses.items():
        mine = {e["row"]: e for e in entries if e["goal"] == goal}
        for name, fig, size in items:
            e = mine.get(name)
            if e is None:
                out.append(f"{goal}: {name} ({fig}) has no entry in validate/misses.toml")
            elif not _within(goal, size, e["bound"]):
                out.append(f"{goal}: {name} ({fig}) is beyond its entry's bound {e['bound']:g} "
                           f"({MISS_SIZES[goal]}: {size:.3g})")
    missed = {(goal, name) for goal, items in misses.items() for name, _f, _s in items}
    out += [f"{e['goal']}: the entry for {e['row']!r} matches no miss (it meets the goal now, or the name changed): "
            "remove it" for e in entries if (e["goal"], e["row"]) not in missed]
    return out


def misses_lines(explained: dict[str, list[tuple[str, str, dict | None]]]) -> list[str]:
    """One line per goal: how many miss it and how many of those validate/misses.toml explains within their bounds;
    then every miss it does not."""
    lines = []
    for goal, items in explained.items():
        if not items:
            continue
        lost = [name for name, _fig, e in items if e is None]
        lines.append(f"{MISS_GOALS[goal]}: {len(items)} miss, {len(items) - len(lost)} explained"
                     + (f"; not explained: {', '.join(lost)}" if lost else ""))
    return lines


def misses_markdown(explained: dict[str, list[tuple[str, str, dict | None]]]) -> list[str]:
    """The report's section: per goal, every row, ladder or knob sweep that misses it, why, and where
    validate/DEVIATIONS.md says more."""
    out = ["## What misses a goal, and why", "",
           "Every row, ladder and knob sweep that misses a goal, with the reason (`validate/misses.toml`) and the "
           "section of `validate/DEVIATIONS.md` that gives the measurements behind it.", ""]
    for goal, items in explained.items():
        if not items:
            continue
        out += [f"### {MISS_GOALS[goal]}: {len(items)}", "", "| what | figure | why | DEVIATIONS.md |",
                "|---|---|---|---|"]
        for name, fig, e in items:
            why, sec = (e["why"], e["section"]) if e else ("**not explained yet**", "")
            out.append(f"| {name} | {fig} | {why} | {sec} |")
        out.append("")
    return out[:-1]


def load_tolerances(path: Path = TOLERANCES) -> dict:
    """The tolerance file; unreadable or invalid TOML raises ValidationError naming the file and the line."""
    text = read_text(path, "tolerance file", ValidationError)
    try:
        out = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ValidationError(f"{quote(path)}: not valid TOML: {e}") from None
    return out


def check(summary: dict, tol: dict) -> list[str]:
    """Every tolerance the summary exceeds, one line each (empty: all within)."""
    bad = []
    t = tol.get("time", {})
    if summary["time_mape_pct"] > t.get("mape_pct", math.inf):
        bad.append(f"time MAPE {summary['time_mape_pct']:.1f}% > {t['mape_pct']}%")
    if summary["time_max_err_pct"] > t.get("max_err_pct", math.inf):
        bad.append(f"worst time error {summary['time_max_err_pct']:.1f}% ({summary['time_worst']}) > "
                   f"{t['max_err_pct']}%")
    for ladder, rho in summary["spearman"].items():
        if rho < t.get("min_spearman", -1.0):
            bad.append(f"rank correlation of the {ladder} ladder {rho:.3f} < {t['min_spearman']}")
    for metric, limit in tol.get("metrics_max", {}).items():
        got = summary["per_metric"].get(metric)
        if not got:
            continue
        listed = set(tol.get("zero_predictions", {}).get(metric, []))
        unlisted = [z for z in got.get("zero_rows", []) if z not in listed]
        if unlisted:
            bad.append(f"{metric}: predicted 0 while ncu measures some for {', '.join(unlisted)} (not listed in "
                       "[zero_predictions])")
        worst = got.get("max_nonzero", got["max"])  # the zero rows are guarded by their list
        if worst > limit:
            bad.append(f"{metric}: worst error {worst:.1f}{got['unit']} > {limit}")
    if summary.get("max_utilization_pct", 0.0) > 100.0:  # never a tolerance: a unit busier than its peak
        bad.append(f"{summary['max_utilization_where']} predicted at {summary['max_utilization_pct']:.1f}% of its "
                   "peak (> 100%)")
    if summary["top_stall_match_pct"] < tol.get("stalls", {}).get("min_top_match_pct", 0.0):
        bad.append(f"top stall matches ncu on {summary['top_stall_match_pct']:.0f}% of kernels < "
                   f"{tol['stalls']['min_top_match_pct']}%")
    return bad


def _short(metric: str) -> str:
    return metric.replace("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_", "smem conflicts ") \
        .replace("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_", "smem wavefronts ") \
        .replace("l1tex__t_sectors_pipe_lsu_mem_global_op_", "global sectors ") \
        .replace("l1tex__t_requests_pipe_lsu_mem_global_op_", "global requests ")


def repo_relative(path) -> str:
    """A path as the repository names it (absolute only when it lies outside the repository)."""
    p = Path(path).resolve()
    try:
        return str(p.relative_to(REPO))
    except ValueError:
        return str(path)


def markdown(rows: list[Row], summary: dict, source: str, cfg: HardwareConfig,
             explanations: list[dict] | None = None) -> str:
    """The report; ``explanations``: validate/misses.toml's entries (read here when not given)."""
    out = [f"# gpusim validation: {cfg.name}", "", f"Measurements: `{source}`  ",
           f"Config: `{repo_relative(cfg.path)}`", "",
           "## Totals", "",
           f"- kernels x shapes compared: {summary['kernels']}",
           f"- time MAPE: {summary['time_mape_pct']:.1f}%; worst: {summary['time_max_err_pct']:.1f}% "
           f"({summary['time_worst']})",
           f"- top stall reason matches ncu: {summary['top_stall_match_pct']:.0f}%"]
    for fam, f in summary.get("families", {}).items():
        out.append(f"- time MAPE, {fam}: {f['mape']:.1f}% over {f['n']} rows; worst {f['worst']:.1f}% "
                   f"({f['worst_row']})")
    for ladder, rho in summary["spearman"].items():
        out.append(f"- Spearman rank correlation, {ladder}: {rho:.3f}")
    out += ["", "| metric | mean error | worst | n |", "|---|---|---|---|"]
    for metric, s in summary["per_metric"].items():
        out.append(f"| `{metric}` | {s['mean']:.1f} {s['unit']} | {s['max']:.1f} {s['unit']} | {s['n']} |")
    knobs = knob_sensitivity(rows)
    out += ["", "## Goals", ""] + [f"- {line}" for line in goal_lines(summary, knobs, load_tolerances())]
    entries = load_explanations() if explanations is None else explanations
    out += [""] + misses_markdown(explain(goal_misses(rows, summary, knobs), entries))
    if knobs:
        out += ["", "## Knob sensitivity", "", "Each measured knob setting against the kernel's defaults at the same "
                "shape: the relative change of the time, predicted and measured.", "",
                "| kernel | shape | knobs | predicted change | measured change | gap | direction |",
                "|---|---|---|---|---|---|---|"]
        for k in knobs:
            out.append(f"| {k.kernel} | {','.join(map(str, k.shape))} | {k.knobs} | {k.predicted_pct:+.1f}% | "
                       f"{k.measured_pct:+.1f}% | {k.gap_pts:+.1f} pts | {'same' if k.same_direction else 'WRONG'} |")
    checks = autotune(rows)
    if checks:
        out += ["", "## Autotune check", "", "Each measured knob sweep: the setting the model predicts fastest, the "
                f"measured fastest, and how much slower the predicted best measured (goal: within "
                f"{AUTOTUNE_GOAL_PCT:g}%).", "",
                "| kernel | shape | settings | predicted best | measured best | gap | goal |",
                "|---|---|---|---|---|---|---|"]
        for c in checks:
            tie = f" (tie with {c.ties})" if c.ties else ""
            out.append(f"| {c.kernel}{' ' + c.problem if c.problem else ''} | {','.join(map(str, c.shape))} | "
                       f"{c.points} | {c.predicted_best}{tie} | {c.measured_best} | {c.gap_pct:+.1f}% | "
                       f"{'met' if c.met else 'short'} |")
    out += ["", "## Per kernel", "", "| kernel | shape | predicted ms | measured ms | time error | "
            "top stall (pred / ncu) |", "|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r.label} | {','.join(map(str, r.shape))} | {r.predicted[TIME] / 1e6:.3f} | "
                   f"{r.measured[TIME] / 1e6:.3f} | {r.errors.get(TIME, float('nan')):+.1f}% | "
                   f"{r.top_stall[0]} / {r.top_stall[1] or '-'} |")
    out += ["", "## Every metric", ""]
    for r in rows:
        out.append(f"### {r.label} {','.join(map(str, r.shape))}")
        out += ["", "| metric | predicted | measured | error |", "|---|---|---|---|"]
        for metric, kind in COMPARED.items():
            if metric in r.errors:
                unit = " pts" if kind == "pts" else "%"
                out.append(f"| {_short(metric)} | {r.predicted[metric]:,.4g} | {r.measured[metric]:,.4g} | "
                           f"{r.errors[metric]:+.1f}{unit} |")
        out.append("")
    return "\n".join(out) + "\n"


def add_section(report: str, before: str, lines: list[str]) -> str:
    """``report`` with ``lines`` inserted before the heading ``before`` (at the end when it has none)."""
    text = "\n".join(lines) + "\n"
    k = report.find("\n" + before + "\n")
    return report + "\n" + text if k < 0 else report[:k + 1] + text + "\n" + report[k + 1:]


# the figure formats gpusim writes, each with the metadata that keeps the file the same from run to run (no
# software version, no date)
FIGURE_METADATA = {"png": {"Software": None}, "svg": {"Date": None, "Creator": None},
                   "pdf": {"CreationDate": None, "Creator": None, "Producer": None}}


def check_figure_path(path: str) -> None:
    """Refuse a figure path whose format gpusim does not write (from its extension), before any work."""
    ext = Path(path).suffix[1:].lower()
    if ext not in FIGURE_METADATA:
        raise ValidationError(f"--figure {path!r}: cannot write {'.' + ext if ext else 'a file without an extension'}"
                              f" (formats: {', '.join(FIGURE_METADATA)})")


# the metrics the figure's right panel shows, each with its marker: (metric, label, marker)
FIGURE_METRICS = ((TIME, "time", "o"), ("dram__bytes_read.sum", "DRAM read bytes", "s"),
                  ("dram__bytes_write.sum", "DRAM write bytes", "D"), ("lts__t_sectors_op_read.sum", "L2 read lookups",
                                                                       "^"),
                  ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "shared-load wavefronts", "v"),
                  ("smsp__inst_executed.sum", "instructions", "P"))


def figure(rows: list[Row], path: Path) -> None:
    """Predicted against measured: the time of every row (left, log-log, one colour per kernel family), and the ratio
    predicted / measured of the main metrics per row (right, one marker per metric, rows grouped by family)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from gpusim.ir import REGISTRY

    fam_of = {r.where: REGISTRY[r.kernel].family if r.kernel in REGISTRY else "other" for r in rows}
    fams = sorted(set(fam_of.values()))
    palette = plt.get_cmap("tab10")
    color = {f: palette(i % 10) for i, f in enumerate(fams)}
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(15, 6.5), gridspec_kw={"width_ratios": [1, 1.35]})
    for f in fams:
        sel = [r for r in rows if fam_of[r.where] == f]
        ax.scatter([r.measured[TIME] / 1e6 for r in sel], [r.predicted[TIME] / 1e6 for r in sel], s=28,
                   color=color[f], edgecolors="black", linewidths=0.3, label=f"{f} ({len(sel)} rows)", zorder=3)
    lo = min(min(r.measured[TIME], r.predicted[TIME]) for r in rows) / 1e6 / 1.5
    hi = max(max(r.measured[TIME], r.predicted[TIME]) for r in rows) / 1e6 * 1.5
    ax.plot([lo, hi], [lo, hi], "k-", lw=0.8, label="exact")
    ax.plot([lo, hi], [lo * 1.25, hi * 1.25], "k:", lw=0.6, label="+-25%")
    ax.plot([lo, hi], [lo / 1.25, hi / 1.25], "k:", lw=0.6)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal")
    ax.set_xlabel("measured time (ms, CUDA events)")
    ax.set_ylabel("predicted time (ms, gpusim)")
    ax.set_title(f"time: {len(rows)} kernels x shapes")
    ax.legend(loc="upper left", fontsize=8, frameon=False)
    ax.grid(True, which="major", color="0.92")
    ordered = sorted(rows, key=lambda r: (fam_of[r.where], r.kernel, r.shape))
    for metric, label, marker in FIGURE_METRICS:
        xs, ys, cs = [], [], []
        for i, r in enumerate(ordered):
            p, m = r.predicted.get(metric), r.measured.get(metric)
            if isinstance(p, (int, float)) and isinstance(m, (int, float)) and p > 0 and m > 0:
                xs.append(i)
                ys.append(p / m)
                cs.append(color[fam_of[r.where]])
        bx.scatter(xs, ys, marker=marker, s=22, c=cs, edgecolors="black", linewidths=0.25, alpha=0.85, zorder=3)
        bx.scatter([], [], marker=marker, s=22, color="0.6", edgecolors="black", linewidths=0.25, label=label)
    bx.axhline(1.0, color="k", lw=0.8)
    for y in (1.25, 0.8):
        bx.axhline(y, color="k", lw=0.6, ls=":")
    start = 0
    for f in fams:  # the family bands, labelled under the axis
        n = sum(1 for r in ordered if fam_of[r.where] == f)
        bx.axvspan(start - 0.5, start + n - 0.5, color=color[f], alpha=0.06, lw=0)
        bx.text(start + n / 2 - 0.5, 0.02, f, transform=bx.get_xaxis_transform(), ha="center", fontsize=9,
                color=color[f])
        start += n
    bx.set_yscale("log")
    bx.set_xlim(-1, len(ordered))
    bx.set_xticks([])
    bx.set_xlabel("rows, grouped by kernel family (colour as on the left)")
    bx.set_ylabel("predicted / measured")
    bx.set_title("metrics per row: one marker per metric (dotted: +-25%)")
    bx.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    bx.grid(True, axis="y", which="major", color="0.92")
    fig.suptitle("gpusim vs the H100: predicted against measured", fontsize=12)
    fig.tight_layout()
    ext = Path(path).suffix[1:].lower()
    try:
        with matplotlib.rc_context({"svg.hashsalt": "gpusim"}):  # an SVG's element ids: the same from run to run
            fig.savefig(path, dpi=110, format=ext, metadata=FIGURE_METADATA.get(ext, {}))
    finally:  # written or not (a full disk), the figure is not kept open
        plt.close(fig)
