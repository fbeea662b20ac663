"""Design-space sweeps: every combination of a kernel's knobs, shapes and GPU configs, predicted in parallel,
cached, and returned as one tidy table (one row per point).

The pieces, in the order ``gpusim sweep`` uses them:

- :func:`parse_values` / :func:`parse_vary` / :func:`read_shapes`: the command line's grid (``stages=1..8``,
  ``swizzle=64B,128B``, a file of shapes);
- :func:`plan`: checks every kernel, shape, knob value and config *before* the sweep starts (the same
  checks ``predict`` makes on one point: an unknown knob or a value outside its choices is bad input), then
  expands the grid into :class:`Point`\\ s in a fixed order;
- :func:`run`: predicts the points not in the :class:`Cache`, on local worker processes or a Dask cluster;
  a point that cannot launch (shared memory, registers, divisibility) is a row with its one-line reason in
  ``gpusim__error``;
- :func:`rows` / :func:`write_parquet`: the tidy table, rows in grid order and columns in a stable order;
- :func:`top`, :func:`pareto`, :func:`across_gpus`, :func:`figure`: what a user reads.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import math
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from gpusim.config import ConfigError, HardwareConfig, load_config
from gpusim.inputs import parse_shape as parse_shape_text
from gpusim.inputs import quote, read_bytes, read_text
from gpusim.ir import KernelError
from gpusim.sm.occupancy import LaunchError
from gpusim.ncu import TIME

REPO = Path(__file__).resolve().parent.parent
DEFAULT_MAX_POINTS = 10_000
CACHE_VERSION = 1  # bump when the cached record's layout changes
ERROR = "gpusim__error"
SMEM = "launch__shared_mem_per_block"
OCCUPANCY = "sm__warps_active.avg.pct_of_peak_sustained_active"
UTILIZATION = "gpusim__utilization_pct"
ID_COLUMNS = ("config", "config_file", "kernel", "shape")  # then the shape's dimensions, the knobs, ERROR
# a point that cannot launch: kept as a row with the reason (the same errors the CLI reports as bad input)
POINT_ERRORS = (ConfigError, KernelError, LaunchError)
# model sources that do not change a prediction (the cache key leaves them out)
NOT_MODEL = ("app", "cli.py", "sweep.py", "validation.py", "sass.py", "trace.py", "loader.py")


class SweepError(ValueError):
    """Bad sweep input (a knob, a value, the grid's size, the scheduler); one line."""


# ---- the grid -------------------------------------------------------------------------------------------------

def parse_values(key: str, text: str, limit: int = DEFAULT_MAX_POINTS) -> list[str]:
    """``"1..4,8"`` -> ``["1", "2", "3", "4", "8"]``: comma-separated values and inclusive integer ranges. More than
    ``limit`` values (a grid of one knob above ``--max-points``) is refused before any range is expanded."""
    out: list[str] = []
    for item in text.split(","):
        item = item.strip()
        if not item:
            raise SweepError(f"--vary {key}={text}: an empty value (expected {key}=V1,V2,... or {key}=LO..HI)")
        if ".." in item:
            lo, _, hi = item.partition("..")
            if not (_INTEGER.fullmatch(lo.strip()) and _INTEGER.fullmatch(hi.strip())):
                raise SweepError(f"--vary {key}={text}: range {item!r} needs integer ends, such as 1..8")
            a, b = int(lo), int(hi)
            if a > b:
                raise SweepError(f"--vary {key}={text}: range {item!r} is empty ({a} > {b})")
            if b - a + 1 + len(out) > limit:
                raise SweepError(f"--vary {key}={text}: range {item!r} has {b - a + 1:,} values, more than "
                                 f"--max-points {limit:,}: narrow it or raise --max-points")
            out += [str(v) for v in range(a, b + 1)]
        else:
            out.append(item)
        if len(out) > limit:
            raise SweepError(f"--vary {key}: more than --max-points {limit:,} values")
    return list(dict.fromkeys(out))


_INTEGER = re.compile(r"[+-]?[0-9]{1,40}")


def parse_vary(items: Iterable[str], limit: int = DEFAULT_MAX_POINTS) -> dict[str, list[str]]:
    """``["stages=1..3", "swizzle=64B,128B"]`` -> ``{"stages": ["1", "2", "3"], "swizzle": ["64B", "128B"]}``; a
    knob of more than ``limit`` values is refused before its values are listed."""
    out: dict[str, list[str]] = {}
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise SweepError(f"--vary {item!r}: expected KEY=V1,V2,... (or KEY=LO..HI)")
        if key in out:
            raise SweepError(f"--vary {key}: given twice; list every value in one --vary {key}=...")
        out[key] = parse_values(key, text, limit)
    return out


def parse_shape(text: str, where: str = "--shape") -> tuple[int, ...]:
    """A shape as every command reads it (:func:`gpusim.inputs.parse_shape`); bad text raises SweepError."""
    return parse_shape_text(text, where, SweepError)


SHAPES_FILE_BYTES = 16 << 20  # a shapes file of --max-points shapes is well under this


def read_shapes(path: str | Path, limit: int = DEFAULT_MAX_POINTS) -> list[tuple[int, ...]]:
    """A shapes file: one shape per line (``1024,1024,1024``), blank lines and ``#`` comments ignored. Read through
    the guarded reader (a regular UTF-8 file of bounded size); more than ``limit`` shapes is refused as they are
    read."""
    text = read_text(path, "shapes file", SweepError, SHAPES_FILE_BYTES)
    where = quote(path)
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        item = line.split("#", 1)[0].strip()
        if item:
            out.append(parse_shape(item, f"{where}:{n}:"))
            if len(out) > limit:
                raise SweepError(f"--shapes {where}: more than --max-points {limit:,} shapes")
    if not out:
        raise SweepError(f"--shapes {where}: no shape in the file (one per line, e.g. 1024,1024,1024)")
    return out


@dataclass(frozen=True)
class Point:
    """One point of the grid: a kernel at a shape with knob overrides, on one of the plan's configs."""

    config: int  # index into Plan.configs
    kernel: str
    shape: tuple[int, ...]
    knobs: tuple[tuple[str, str], ...]  # the overrides (fixed ones, then the varied ones), as given

    @property
    def overrides(self) -> dict[str, str]:
        return dict(self.knobs)


@dataclass
class Plan:
    """A checked sweep: its configs, the expanded points in grid order, and the table's identity columns."""

    configs: list[HardwareConfig]
    config_files: list[str]
    points: list[Point]
    varied: list[str]  # the knobs that vary, in --vary order
    dims: list[str]  # shape dimension names (every kernel's, in order)
    knob_columns: list[str]  # every knob of the kernels (and launch overrides given), in declaration order
    kernel_paths: tuple[str, ...] = ()  # --kernels: the worker processes load them too
    _params: dict = field(default_factory=dict, repr=False)  # (kernel, knobs) -> resolved knob values

    def params(self, p: Point) -> dict:
        """Every knob of the point's kernel as the kernel sees it (defaults filled in, values coerced)."""
        key = (p.kernel, p.knobs)
        if key not in self._params:
            from gpusim.registry import resolve_params

            params, launch = resolve_params(p.kernel, p.overrides)
            self._params[key] = {**params, **launch}
        return self._params[key]


def plan(kernels: list[str], shapes: list[tuple[int, ...]], vary: dict[str, list[str]],
         fixed: dict[str, str] | None = None, configs: list[str | None] | None = None,
         max_points: int = DEFAULT_MAX_POINTS, kernel_paths: tuple[str, ...] = ()) -> Plan:
    """Check the whole sweep up front and expand its grid (configs, kernels, shapes, then the knobs in --vary
    order, the last varying fastest). Bad input raises :class:`SweepError`, ``KernelError`` or
    ``ConfigError`` with one line; a point that merely cannot launch is not checked here."""
    from gpusim import loader
    from gpusim.registry import check_shape, resolve_params

    loader.load(kernel_paths)
    fixed = dict(fixed or {})
    if not kernels:
        raise SweepError("no kernel to sweep")
    if not shapes:
        raise SweepError("no shape: give --shape M,N,K (repeatable) or --shapes FILE")
    for key, values in vary.items():
        if not values:
            raise SweepError(f"--vary {key}: no values, so the grid is empty")
        if key in fixed:
            raise SweepError(f"{key} is both varied (--vary) and fixed (--set)")
    size = len(configs or [None]) * len(kernels) * len(shapes) * math.prod(len(v) for v in vary.values())
    if size > max_points:
        raise SweepError(f"the grid has {size:,} points, more than --max-points {max_points:,}: narrow the --vary "
                         f"lists or raise --max-points")
    # the checks predict makes on one point, made once per kernel, shape and knob value
    for name in kernels:
        for shape in shapes:
            check_shape(name, shape)
        resolve_params(name, fixed)
        for key, values in vary.items():
            for v in values:
                resolve_params(name, {**fixed, key: v})
    cfgs = [load_config(c) for c in (configs or [None])]
    files = [_repo_relative(c.path) for c in cfgs]
    if len(set(files)) != len(files):
        raise SweepError(f"--config names the same file twice ({', '.join(files)})")
    dims, knob_columns = [], []
    for name in kernels:
        kd = _kernel_def(name)
        dims += [d for d in kd.shape_names if d not in dims]
        knob_columns += [k for k in kd.defaults if k not in knob_columns]
    knob_columns += [k for k in (*fixed, *vary) if k not in knob_columns]
    clash = set(knob_columns) & ({*dims, *ID_COLUMNS, ERROR})
    if clash:
        raise SweepError(f"knob {sorted(clash)[0]!r} has the name of a table column; rename it in the kernel")
    knobs = [[(k, v) for v in vs] for k, vs in vary.items()]
    points = [Point(ci, name, tuple(shape), (*fixed.items(), *combo))
              for ci in range(len(cfgs)) for name in kernels for shape in shapes
              for combo in itertools.product(*knobs)]
    return Plan(cfgs, files, points, list(vary), dims, knob_columns, tuple(kernel_paths))


def _kernel_def(name: str):
    from gpusim.registry import kernel_def

    return kernel_def(name)


def _repo_relative(path: str) -> str:
    p = Path(path).resolve()
    try:
        return str(p.relative_to(REPO))
    except ValueError:
        return str(path)


# ---- one point ------------------------------------------------------------------------------------------------

Task = tuple[str, tuple[int, ...], dict, HardwareConfig, tuple[str, ...]]


def evaluate(task: Task) -> dict:
    """Predict one point (in whichever process runs it): ``{"metrics": {...}}`` with the metrics flattened to
    scalars, or ``{"error": "the one-line reason"}`` for a point that cannot launch. JSON-normalized, so a
    result read back from the cache is the same as a fresh one."""
    from gpusim import loader
    from gpusim.api import predict

    name, shape, overrides, cfg, kernel_paths = task
    loader.load(kernel_paths)
    try:
        m, _ = predict(name, shape, overrides or None, cfg)
    except POINT_ERRORS as e:
        return {"error": " ".join(str(e).split())}
    flat = {}
    for k, v in m.items():
        if isinstance(v, dict):  # one level: a deeper structure (the stall causes) stays in `gpusim run --json`
            flat.update({f"{k}.{sub}": _plain(x) for sub, x in v.items() if not isinstance(x, dict)})
        elif isinstance(v, (list, tuple)):
            flat[k] = ",".join(map(str, v))
        else:
            flat[k] = _plain(v)
    return json.loads(json.dumps({"metrics": flat}))


def _plain(v):
    return v.item() if hasattr(v, "item") and not isinstance(v, (int, float, str, bool)) else v


def _is_result(record) -> bool:
    """Whether ``record`` is what :func:`evaluate` returns: ``{"metrics": {name: scalar}}`` or ``{"error": text}``."""
    if not isinstance(record, dict) or len(record) != 1:
        return False
    if "error" in record:
        return isinstance(record["error"], str)
    metrics = record.get("metrics")
    return isinstance(metrics, dict) and all(isinstance(k, str) and (v is None or isinstance(v, (int, float, str)))
                                             for k, v in metrics.items())


# ---- the cache --------------------------------------------------------------------------------------------------

def default_cache_dir() -> Path:
    """``$GPUSIM_CACHE_DIR`` when set, else ``~/.cache/gpusim/sweep``."""
    env = os.environ.get("GPUSIM_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "gpusim" / "sweep"


class Cache:
    """One JSON file per predicted point, named by the hash of everything the prediction depends on: the
    kernel's source (its file and the files beside it), the model's source, the shape, every knob value and
    the config file's content. A rerun, or a grown sweep, reads the points it has and computes the rest."""

    ENTRY_BYTES = 1 << 20  # a cached point is a few KB; anything larger is not ours

    def __init__(self, folder: Path | None, warn: Callable[[str], None] | None = None):
        """``warn(message)`` hears, once, that the folder cannot be written (the sweep then runs without it)."""
        self.folder = Path(folder) if folder is not None else None
        self._hashes: dict[str, str] = {}
        self._warn = warn
        if self.folder is not None:
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                self._disable(e)

    def _disable(self, e: OSError) -> None:
        """A cache folder we cannot write (read-only, full, not a folder): say so once and go on without it."""
        if self.folder is not None and self._warn is not None:
            self._warn(f"cache {quote(self.folder)}: cannot write ({e.strerror or e}); running without the cache "
                       "(--no-cache, or GPUSIM_CACHE_DIR for another folder)")
        self.folder = None

    @property
    def enabled(self) -> bool:
        return self.folder is not None

    def key(self, plan_: Plan, p: Point) -> str:
        cfg = plan_.configs[p.config]
        what = {"v": CACHE_VERSION, "model": self._model_hash(), "kernel_src": self._kernel_hash(p.kernel),
                "kernel": p.kernel, "shape": list(p.shape),
                "knobs": {k: str(v) for k, v in sorted(plan_.params(p).items())},
                "config": self._file_hash(cfg.path)}
        return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()

    def get(self, key: str) -> dict | None:
        """The cached result of a point, or None: a missing entry, and one that is not a result as :func:`evaluate`
        writes it (unreadable, not JSON, JSON of another shape, a FIFO planted in the folder), is computed again."""
        if self.folder is None:
            return None
        try:
            record = json.loads(read_text(self.folder / key[:2] / f"{key}.json", "cache entry", SweepError,
                                          self.ENTRY_BYTES))
        except (SweepError, ValueError, RecursionError):
            return None
        return record if _is_result(record) else None

    def put(self, key: str, result: dict) -> None:
        if self.folder is None:
            return
        path = self.folder / key[:2] / f"{key}.json"
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(result))
            os.replace(tmp, path)  # atomic: an interrupted write leaves no half file
        except BaseException as e:  # a full or read-only folder, or Ctrl-C mid-write: no temporary file stays
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
            if not isinstance(e, OSError):
                raise
            self._disable(e)

    def _file_hash(self, path: str) -> str:
        if path not in self._hashes:
            self._hashes[path] = hashlib.sha256(read_bytes(path, "config file", SweepError)).hexdigest()
        return self._hashes[path]

    def _files_hash(self, tag: str, files: Iterable[Path]) -> str:
        if tag not in self._hashes:
            h = hashlib.sha256()
            for f in sorted(files):
                try:
                    data = read_bytes(f, "kernel source", SweepError)
                except SweepError as e:  # a FIFO or a folder named *.py beside a kernel file: not a source
                    data = str(e).encode()
                h.update(f.name.encode() + b"\0" + data)
            self._hashes[tag] = h.hexdigest()
        return self._hashes[tag]

    def _model_hash(self) -> str:
        pkg = Path(__file__).resolve().parent
        files = [f for f in pkg.rglob("*.py") if f.relative_to(pkg).parts[0] not in NOT_MODEL]
        return self._files_hash("model", files)

    def _kernel_hash(self, name: str) -> str:
        """The kernel's file and every ``.py`` beside it (the helpers it imports, e.g. ``tc_common.py``)."""
        folder = Path(_kernel_def(name).file).resolve().parent
        return self._files_hash(f"kernel:{folder}", folder.glob("*.py"))


# ---- running ----------------------------------------------------------------------------------------------------

@dataclass
class Outcome:
    """What a run produced: one result per point (None: not computed, after an interrupt)."""

    results: list[dict | None]
    computed: int = 0
    cached: int = 0
    interrupted: bool = False

    @property
    def done(self) -> int:
        return sum(r is not None for r in self.results)


Progress = Callable[[int, int], None]  # (points done, points in all)


def run(plan_: Plan, workers: int | None = None, scheduler: str | None = None, client=None,
        cache: Cache | None = None, progress: Progress | None = None) -> Outcome:
    """Predict every point of the plan: cached ones are read, the others run on ``workers`` local processes
    (1: in this process), or on the Dask cluster at ``scheduler`` (or an existing ``client``). Results are
    cached as they arrive; Ctrl-C stops the run and returns what was computed (``interrupted``)."""
    cache = cache or Cache(None)
    n = len(plan_.points)
    out = Outcome([None] * n)
    keys = [cache.key(plan_, p) if cache.enabled else "" for p in plan_.points]
    todo = []
    for i, k in enumerate(keys):
        hit = cache.get(k) if k else None
        if hit is not None:
            out.results[i] = hit
            out.cached += 1
        else:
            todo.append(i)
    done = out.cached
    if progress:
        progress(done, n)
    tasks = [(p.kernel, p.shape, p.overrides, plan_.configs[p.config], plan_.kernel_paths)
             for p in (plan_.points[i] for i in todo)]

    def finish(j: int, result: dict) -> None:
        nonlocal done
        i = todo[j]
        out.results[i] = result
        out.computed += 1
        if keys[i]:
            cache.put(keys[i], result)
        done += 1
        if progress:
            progress(done, n)

    if not tasks:
        return out
    try:
        if scheduler is not None or client is not None:
            _run_dask(tasks, finish, scheduler, client)
        elif (workers or os.cpu_count() or 1) <= 1 or len(tasks) == 1:
            for j, t in enumerate(tasks):
                finish(j, evaluate(t))
        else:
            from gpusim.api import run_processes

            run_processes(evaluate, tasks, finish, min(workers or os.cpu_count() or 1, len(tasks)), plan_.kernel_paths)
    except KeyboardInterrupt:
        out.interrupted = True
    return out


def connect(address: str, timeout_s: float = 5.0):
    """A Dask client of the scheduler at ``address``; one-line errors when dask is missing or the scheduler
    cannot be reached within ``timeout_s``."""
    try:
        from distributed import Client
        from distributed.comm import parse_address
        from distributed.comm.addressing import parse_host_port
    except ImportError:
        raise SweepError("--scheduler needs Dask distributed: pip install 'gpusim[cluster]'") from None
    try:  # a malformed address is refused here: Client would fail half-built and stall 10 s closing itself
        scheme, location = parse_address(address, strict=False)
        if scheme == "inproc":  # a scheduler in this very process (tests, notebooks): it must be there
            from distributed.comm.inproc import global_manager

            if global_manager.get_listener_for(location) is None:
                raise ValueError("no scheduler listens at that in-process address")
        elif scheme in ("tcp", "tls"):
            parse_host_port(location)
        else:
            raise ValueError(f"gpusim reaches schedulers over tcp:// or tls://, not {scheme}://")
    except (ValueError, TypeError) as e:
        raise SweepError(f"--scheduler {address!r}: not a scheduler address such as tcp://HOST:8786 ({e})") from None
    try:
        return Client(address, timeout=timeout_s, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as e:
        why = " ".join(str(e).split()) or type(e).__name__
        raise SweepError(f"--scheduler {address}: cannot reach the Dask scheduler ({why[:160]})") from None


def _run_dask(tasks: list[Task], finish, scheduler: str | None, client) -> None:
    from distributed import as_completed

    own = client is None
    client = client or connect(scheduler)
    futures = []
    try:
        futures = client.map(evaluate, tasks, pure=False)
        index = {f.key: j for j, f in enumerate(futures)}
        for f, result in as_completed(futures, with_results=True, loop=client.loop):
            finish(index[f.key], result)
    except KeyboardInterrupt:
        client.cancel(futures)
        raise
    finally:
        if own:
            client.close()


# ---- the table --------------------------------------------------------------------------------------------------

def rows(plan_: Plan, outcome: Outcome) -> tuple[list[str], list[dict]]:
    """(column names, one dict per computed point in grid order): the configs, the kernel, the shape and its
    dimensions, every knob, ``gpusim__error``, then the ncu-named metrics in the order ``predict`` reports
    them (utilization flattened to ``gpusim__utilization_pct.<unit>``)."""
    metric_cols: dict[str, None] = {}
    for r in outcome.results:
        if r is not None:
            metric_cols.update(dict.fromkeys(r.get("metrics", {})))
    columns = [*ID_COLUMNS, *plan_.dims, *plan_.knob_columns, ERROR, *metric_cols]
    out = []
    for p, r in zip(plan_.points, outcome.results, strict=True):
        if r is None:
            continue
        kd = _kernel_def(p.kernel)
        row = dict.fromkeys(columns)
        row.update(config=plan_.configs[p.config].name, config_file=plan_.config_files[p.config], kernel=p.kernel,
                   shape=",".join(map(str, p.shape)))
        row.update(zip(kd.shape_names, p.shape, strict=True))
        row.update(plan_.params(p))
        row[ERROR] = r.get("error")
        row.update(r.get("metrics", {}))
        out.append(row)
    return columns, out


def arrow_table(columns: list[str], table_rows: list[dict]):
    """The rows as a pyarrow Table with one type per column (nullable; ints stay ints)."""
    import pyarrow as pa

    arrays = {}
    for c in columns:
        values = [r.get(c) for r in table_rows]
        kind = _arrow_type(values)
        if kind == pa.string():  # text, or a column of mixed types (a knob that is a number in one kernel only)
            values = [None if v is None else str(v) for v in values]
        arrays[c] = pa.array(values, type=kind)
    return pa.table(arrays)


def _arrow_type(values: list):
    import pyarrow as pa

    present = [v for v in values if v is not None]
    if not present:
        return pa.string()
    if all(isinstance(v, bool) for v in present):
        return pa.bool_()
    # a shape or knob beyond 64 bits (a point that cannot launch, kept as a row) is kept exactly, as text
    if any(isinstance(v, int) and not -(1 << 63) <= v < 1 << 63 for v in present):
        return pa.string()
    if all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pa.int64()
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return pa.float64()
    return pa.string()


def write_parquet(columns: list[str], table_rows: list[dict], path: str | Path, varied: list[str] = (),
                  dims: list[str] = ()) -> None:
    """The table as Parquet; the schema's ``gpusim`` metadata names the varied knobs and the shape's dimensions
    (so the app can draw a loaded table as the command did)."""
    import pyarrow.parquet as pq

    table = arrow_table(columns, table_rows)
    table = table.replace_schema_metadata({"gpusim": json.dumps({"varied": list(varied), "dims": list(dims)})})
    pq.write_table(table, str(path))


def partial_path(path: str | Path) -> str:
    """Where an interrupted sweep writes its partial table: ``-o`` itself when nothing is there yet, else beside it
    (``ws.parquet`` -> ``ws.partial.parquet``), so that a complete table already at ``-o`` is never replaced by part
    of one."""
    p = str(path)
    if not os.path.exists(p):
        return p
    return (p[:-len(".parquet")] if p.endswith(".parquet") else p) + ".partial.parquet"


def read_parquet(source) -> tuple[list[str], list[dict], dict]:
    """(columns, rows, the ``gpusim`` metadata) of a table written by :func:`write_parquet` (a path or a file
    object)."""
    import pyarrow.parquet as pq

    t = pq.read_table(source if hasattr(source, "read") else str(source))
    meta = json.loads((t.schema.metadata or {}).get(b"gpusim", b"{}"))
    return list(t.column_names), t.to_pylist(), meta


# ---- what a user reads ----------------------------------------------------------------------------------------

def ok_rows(table_rows: list[dict]) -> list[dict]:
    return [r for r in table_rows if not r.get(ERROR) and isinstance(r.get(TIME), (int, float))]


def top(table_rows: list[dict], n: int = 10) -> list[dict]:
    """The ``n`` fastest points (ties: grid order)."""
    return sorted(ok_rows(table_rows), key=lambda r: r[TIME])[:n]


def pareto(table_rows: list[dict], metric: str, maximize: bool = False, min_gain_pct: float = 0.0) -> list[dict]:
    """The points no other point beats on both time and ``metric`` (less of it, or more when ``maximize``),
    fastest first. Compare points of one shape on one GPU only. With ``min_gain_pct`` (the model's time error), a
    point joins the front only if it is faster than every point at least as good on ``metric`` by more than that:
    a trade the model cannot tell from a tie is not offered."""
    def better(v):
        return -v if maximize else v

    front, best = [], math.inf
    for r in sorted(ok_rows(table_rows), key=lambda r: (r[TIME], better(r.get(metric) or 0))):
        v = better(r.get(metric) or 0)
        if v < best:
            front.append(r)
            best = v
    if min_gain_pct <= 0:
        return front
    kept: list[dict] = []  # walked from the best on the metric: each kept point buys more than the error in time
    for r in reversed(front):
        if not kept or r[TIME] < kept[-1][TIME] / (1 + min_gain_pct / 100):
            kept.append(r)
    return kept[::-1]


def model_error_pct() -> float:
    """The model's time error as the validation guards it (``[time] mape_pct`` of validate/tolerances.toml): two
    predicted times closer than this are not told apart."""
    from gpusim import validation

    try:
        return float(validation.load_tolerances()["time"]["mape_pct"])
    except (validation.ValidationError, KeyError, TypeError, ValueError):
        return 0.0


def groups(table_rows: list[dict]) -> dict[tuple[str, str, str], list[dict]]:
    """Rows by (config file, kernel, shape): the sets a ranking or a front compares within."""
    out: dict[tuple[str, str, str], list[dict]] = {}
    for r in table_rows:
        out.setdefault((r["config_file"], r["kernel"], r["shape"]), []).append(r)
    return out


def knobs_label(r: dict, knobs: list[str]) -> str:
    return ",".join(f"{k}={r[k]}" for k in knobs if r.get(k) is not None) or "(defaults)"


def across_gpus(table_rows: list[dict], knobs: list[str]) -> tuple[list[str], list[dict]]:
    """The same points on every config side by side: (config names, one dict per point with ``times`` (ns or
    None per config) and ``speedup`` (the first config's time over each one's))."""
    configs = list(dict.fromkeys(r["config"] for r in table_rows))
    by: dict[tuple, dict] = {}
    for r in table_rows:
        key = (r["kernel"], r["shape"], knobs_label(r, knobs))
        e = by.setdefault(key, {"kernel": key[0], "shape": key[1], "knobs": key[2], "times": {}})
        e["times"][r["config"]] = r[TIME] if not r.get(ERROR) else None
    out = []
    for e in by.values():
        t0 = e["times"].get(configs[0])
        e["speedup"] = {c: (t0 / t if t and t0 else None) for c, t in e["times"].items()}
        out.append(e)
    return configs, out


def figure(table_rows: list[dict], varied: list[str], path: str | Path | None = None):
    """Time against each varied knob (best and every point per value), or a heatmap when exactly two knobs
    vary; one panel per (config, kernel, shape) group for a heatmap. Returns the matplotlib figure (written
    to ``path`` when given)."""
    import matplotlib

    if path is not None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    varied = [k for k in varied if len({r.get(k) for r in table_rows}) > 1] or varied
    grouped = groups(table_rows)
    unit = _unit(table_rows)
    if len(varied) == 2:
        panels = list(grouped.items())[:6]
        fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.4), squeeze=False)
        for ax, ((_, kernel, shape), sel) in zip(axes[0], panels, strict=True):
            _heatmap(ax, sel, varied, f"{kernel} {shape}\n{sel[0]['config']}", unit)
    else:
        knobs = varied or ["kernel"]
        fig, axes = plt.subplots(1, len(knobs), figsize=(4.6 * len(knobs), 3.8), squeeze=False)
        for ax, k in zip(axes[0], knobs, strict=True):
            for gi, ((_, kernel, shape), sel) in enumerate(grouped.items()):
                _knob_line(ax, sel, k, f"{kernel} {shape} {sel[0]['config']}" if len(grouped) > 1 else None, gi,
                           unit)
            ax.set_xlabel(k)
            ax.set_ylabel(f"predicted time ({unit[0]})")
            ax.grid(alpha=0.3)
        if len(grouped) > 1:
            axes[0][-1].legend(fontsize=6, loc="best")
        failed = len(table_rows) - len(ok_rows(table_rows))
        fig.suptitle(f"{len(table_rows)} points" + (f" ({failed} cannot launch, not drawn)" if failed else ""),
                     fontsize=9)
    fig.tight_layout()
    if path is not None:
        try:
            fig.savefig(path, dpi=120, metadata={"Software": None})
        finally:  # written or not (a full disk), the figure is not kept open in a long-lived process (the app)
            plt.close(fig)
    return fig


def _unit(table_rows: list[dict]) -> tuple[str, float]:
    """Milliseconds, or microseconds when every point is faster than 1 ms: (name, ns per unit)."""
    good = ok_rows(table_rows)
    return ("ms", 1e6) if good and max(r[TIME] for r in good) >= 1e6 else ("us", 1e3)


def _values(sel: list[dict], knob: str) -> list:
    vals = list(dict.fromkeys(r.get(knob) for r in sel))
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
        return sorted(vals)
    return vals


def _knob_line(ax, sel: list[dict], knob: str, label: str | None, color: int, unit: tuple[str, float]) -> None:
    xs = _values(sel, knob)
    pos = {v: i for i, v in enumerate(xs)}
    good = ok_rows(sel)
    c = f"C{color % 10}"
    ax.scatter([pos[r.get(knob)] for r in good], [r[TIME] / unit[1] for r in good], s=10, alpha=0.35, color=c)
    best = [(pos[v], min(r[TIME] for r in good if r.get(knob) == v) / unit[1]) for v in xs
            if any(r.get(knob) == v for r in good)]
    if best:
        ax.plot(*zip(*best, strict=True), "-o", ms=4, color=c, label=label or "best")
    ax.set_xticks(range(len(xs)), [str(v) for v in xs], rotation=45 if len(xs) > 8 else 0, fontsize=7)


def _heatmap(ax, sel: list[dict], knobs: list[str], title: str, unit: tuple[str, float]) -> None:
    import numpy as np

    ys, xs = _values(sel, knobs[0]), _values(sel, knobs[1])
    grid = np.full((len(ys), len(xs)), np.nan)
    for r in ok_rows(sel):
        i, j = ys.index(r.get(knobs[0])), xs.index(r.get(knobs[1]))
        grid[i, j] = np.nanmin([grid[i, j], r[TIME] / unit[1]])
    im = ax.imshow(grid, cmap="viridis_r", aspect="auto")
    lo, hi = (np.nanmin(grid), np.nanmax(grid)) if np.isfinite(grid).any() else (0.0, 1.0)
    for i in range(len(ys)):
        for j in range(len(xs)):
            v = grid[i, j]
            dark = not np.isnan(v) and hi > lo and (v - lo) / (hi - lo) > 0.5  # viridis_r: slow cells are dark
            ax.text(j, i, "x" if np.isnan(v) else f"{v:.3g}", ha="center", va="center", fontsize=6,
                    color="grey" if np.isnan(v) else ("white" if dark else "black"))
    ax.set_xticks(range(len(xs)), [str(v) for v in xs], fontsize=7)
    ax.set_yticks(range(len(ys)), [str(v) for v in ys], fontsize=7)
    ax.set_xlabel(knobs[1])
    ax.set_ylabel(knobs[0])
    ax.set_title(f"{title}  ({unit[0]}; x: cannot launch)", fontsize=8)
    ax.figure.colorbar(im, ax=ax, label=f"predicted time ({unit[0]})")

# ---- the printed report -----------------------------------------------------------------------------------------

def fmt_time(ns: float) -> str:
    return f"{ns / 1e6:.3f} ms" if ns >= 1e6 else f"{ns / 1e3:.1f} us"


def _rate(r: dict) -> str:
    if r.get("gpusim__tflops", 0) and r["gpusim__tflops"] >= 10:
        return f"{r['gpusim__tflops']:.0f} TFLOP/s"
    if r.get("gpusim__gflops"):
        return f"{r['gpusim__gflops']:,.0f} GFLOP/s"
    t = r[TIME]
    dram = (r.get("dram__bytes_read.sum") or 0) + (r.get("dram__bytes_write.sum") or 0)
    return f"{dram / t:,.0f} GB/s DRAM" if t else "-"


def _table(header: list[str], body: list[list[str]], indent: str = "  ") -> list[str]:
    widths = [max(len(x) for x in col) for col in zip(header, *body, strict=True)]
    line = lambda cells: indent + "  ".join(c.ljust(w) if i == 0 else c.rjust(w)  # noqa: E731
                                            for i, (c, w) in enumerate(zip(cells, widths, strict=True)))
    return [line(header), indent + "  ".join("-" * w for w in widths), *(line(b) for b in body)]


def _point_cells(r: dict, knobs: list[str], many: dict[str, bool]) -> list[str]:
    cells = [knobs_label(r, knobs)]
    if many["kernel"]:
        cells.insert(0, r["kernel"])
    if many["shape"]:
        cells.insert(len(cells) - 1, r["shape"])
    return cells


def _point_header(many: dict[str, bool]) -> list[str]:
    return [*(["kernel"] if many["kernel"] else []), *(["shape"] if many["shape"] else []), "knobs"]


def report_lines(table_rows: list[dict], knobs: list[str], n_top: int = 10) -> list[str]:
    """The top ``n_top`` points and the Pareto fronts (time vs shared memory per CTA, time vs occupancy) of each
    GPU config, then the configs side by side when there are several."""
    many = {c: len({r[c] for r in table_rows}) > 1 for c in ("kernel", "shape", "config")}
    out: list[str] = []
    failed = [r for r in table_rows if r.get(ERROR)]
    out.append(f"{len(table_rows)} points: {len(table_rows) - len(failed)} predicted, {len(failed)} cannot launch")
    reasons: dict[str, list[str]] = {}  # reasons alike but for their numbers, with every instance
    for r in failed:
        reasons.setdefault(re.sub(r"\d+", "#", r[ERROR]), []).append(r[ERROR])
    for same in sorted(reasons.values(), key=lambda x: -len(x))[:3]:
        out.append(f"  {len(same)} x {same[0]}" + (" (and alike)" if len(set(same)) > 1 else ""))
    if len(reasons) > 3:
        out.append(f"  ... and {len(reasons) - 3} other kinds of reason (column {ERROR})")
    for cfg in dict.fromkeys(r["config"] for r in table_rows):
        sel = [r for r in table_rows if r["config"] == cfg]
        best = top(sel, n_top)
        out += ["", f"top {len(best)} on {cfg}:" if best else f"no point launches on {cfg}"]
        if best:
            out += _table(["#", *_point_header(many), "time", "rate", "smem/CTA", "occupancy", "CTAs/SM",
                           "occupancy limiter"],
                          [[str(i + 1), *_point_cells(r, knobs, many), fmt_time(r[TIME]), _rate(r),
                            f"{(r.get(SMEM) or 0) / 1024:.1f} KB", f"{r.get(OCCUPANCY) or 0:.1f}%",
                            str(r.get("gpusim__ctas_per_sm", "-")), str(r.get("gpusim__occupancy_limiter", "-"))]
                           for i, r in enumerate(best)])
        for (_, kernel, shape), g in groups(sel).items():
            if len(ok_rows(g)) < 2:
                continue
            where = " ".join(x for x, m in ((kernel, many["kernel"]), (shape, many["shape"])) if m)
            for title, metric, hi, fmt in (
                    ("shared memory per CTA", SMEM, False, lambda v: f"{(v or 0) / 1024:.1f} KB"),
                    ("occupancy", OCCUPANCY, True, lambda v: f"{v or 0:.1f}%")):
                front = pareto(g, metric, maximize=hi, min_gain_pct=model_error_pct())
                out.append(f"Pareto front{' of ' + where if where else ''}, time vs {title} (time differences "
                           f"under the model's {model_error_pct():g}% error are ties): " + "; ".join(
                    f"{knobs_label(r, knobs)} {fmt_time(r[TIME])} {fmt(r.get(metric))}" for r in front))
    if many["config"]:
        configs, side = across_gpus(table_rows, knobs)
        first = configs[0]
        ranked = sorted((e for e in side if e["times"].get(first)), key=lambda e: e["times"][first])[:n_top]
        out += ["", f"across GPUs (speed-up: {first} time / each GPU's time), the {len(ranked)} fastest on {first}:"]
        hdr = [*_point_header(many), *(f"{c}" for c in configs), *(f"x {c}" for c in configs[1:])]
        body = []
        for e in ranked:
            r = {"kernel": e["kernel"], "shape": e["shape"]}
            cells = [*([r["kernel"]] if many["kernel"] else []), *([r["shape"]] if many["shape"] else []), e["knobs"]]
            cells += [fmt_time(e["times"][c]) if e["times"].get(c) else "cannot launch" for c in configs]
            cells += [f"{e['speedup'][c]:.2f}" if e["speedup"].get(c) else "-" for c in configs[1:]]
            body.append(cells)
        out += _table(hdr, body)
        for c in configs:
            b = top([r for r in table_rows if r["config"] == c], 1)
            if b:
                out.append(f"best on {c}: {' '.join(_point_cells(b[0], knobs, many))} {fmt_time(b[0][TIME])}")
    return out
