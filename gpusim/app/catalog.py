"""What the app can run: registered kernels, their knobs and shapes, the hardware configs, and a prediction
that turns bad input into a one-line message instead of an exception."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from gpusim.config import CONFIG_DIR, DEFAULT_CONFIG, ConfigError, HardwareConfig, load_config
from gpusim.ir import REGISTRY, KernelDef, KernelError
from gpusim.sm.occupancy import LaunchError

REPO = Path(__file__).resolve().parents[2]
LAUNCH_KNOBS = ("regs_per_thread", "smem_bytes")
# one default per shape dimension name, for families the CLI has no default shape for
DIM_DEFAULTS = {"M": 4096, "N": 4096, "K": 4096, "B": 4, "H": 16, "d": 64}
USER_ERRORS = (KernelError, LaunchError, ConfigError, ValueError)

log = logging.getLogger(__name__)


def registry() -> dict[str, KernelDef]:
    """Every registered kernel, in registration order (the ladder order)."""
    from gpusim import loader

    loader.load()

    return REGISTRY


def load_kernels(path_text: str = "", upload: tuple[str, bytes] | None = None) -> str:
    """Load a user's kernels (a path to a ``.py`` file or folder, and/or an uploaded file's name and bytes)
    through the same loader as ``--kernels``; returns "" or the one-line error."""
    import hashlib
    import tempfile

    from gpusim import loader

    paths = [path_text.strip()] if path_text.strip() else []
    if upload is not None:
        name, data = upload
        if not name.endswith(".py"):
            return f"{name}: expected a .py kernel file"
        folder = Path(tempfile.gettempdir()) / "gpusim_uploads" / hashlib.sha256(data).hexdigest()[:16]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / Path(name).name).write_bytes(data)
        paths.append(str(folder / Path(name).name))
    try:
        loader.load(paths)
    except KernelError as e:
        return str(e)
    return ""


def families() -> list[str]:
    """Kernel families in registration order: ``sgemm``, then whatever the IR adds (``hgemm``, ...)."""
    return list(dict.fromkeys(kd.family for kd in registry().values()))


def kernels(family: str | None = None) -> list[str]:
    return [n for n, kd in registry().items() if family is None or kd.family == family]


def kernels_with(knob: str) -> list[str]:
    """Kernels that expose ``knob`` (``stages`` for the pipeline lab, ``swizzle`` for the swizzle lab)."""
    return [n for n, kd in registry().items() if knob in kd.defaults]


def knob_values(name: str, knob: str, fallback: tuple = ()) -> list:
    """Allowed values of a knob: its declared choices, else ``fallback``."""
    kd = registry()[name]
    return list(kd.choices.get(knob) or fallback)


def default_shape(name: str) -> tuple[int, ...]:
    """The CLI's default shape for the kernel's family, else one default per dimension name."""
    from gpusim.ladder_shapes import DEFAULT_SHAPES, rung_shape

    kd = registry()[name]
    text = DEFAULT_SHAPES.get(kd.family)
    if text:
        dims = tuple(int(x) for x in text.split(","))
        if len(dims) == len(kd.shape_names):
            return rung_shape(name, dims)  # a square-matrix kernel of the family: the same elements
    return tuple(DIM_DEFAULTS.get(n, 1024) for n in kd.shape_names)


def parse_shape(text: str, name: str) -> tuple[int, ...]:
    """``"4096, 4096, 4096"`` -> ``(4096, 4096, 4096)``; raises ``ValueError`` with a one-line reason."""
    kd = registry()[name]
    want = ",".join(kd.shape_names)
    try:
        dims = tuple(int(x) for x in text.replace("x", ",").split(",") if x.strip())
    except ValueError:
        raise ValueError(f"shape {text!r}: expected {len(kd.shape_names)} integers ({want}), "
                         f"such as {','.join(map(str, default_shape(name)))}") from None
    if len(dims) != len(kd.shape_names):
        raise ValueError(f"shape {text!r}: {name} needs {len(kd.shape_names)} values ({want})")
    if any(d <= 0 for d in dims):
        raise ValueError(f"shape {text!r}: every dimension must be positive")
    return dims


@dataclass(frozen=True)
class Knob:
    """One tunable parameter of a kernel, as a widget should offer it."""

    name: str
    default: bool | int | str
    kind: str  # "bool", "choice", "int" or "str"
    choices: tuple = ()


def knobs(name: str) -> list[Knob]:
    kd = registry()[name]
    out = []
    for key, default in kd.defaults.items():
        choices = tuple(kd.choices.get(key) or ())
        if isinstance(default, bool):
            out.append(Knob(key, default, "bool"))
        elif choices:
            out.append(Knob(key, default, "choice", choices))
        elif isinstance(default, int):
            out.append(Knob(key, default, "int"))
        else:
            out.append(Knob(key, default, "str"))
    return out


def config_choices() -> dict[str, str]:
    """Label -> path of every hardware config in ``configs/`` (the H100 first)."""
    out = {}
    for path in sorted(CONFIG_DIR.glob("*.toml"), key=lambda p: (p != DEFAULT_CONFIG, p.name)):
        try:
            cfg = load_config(path)
        except ConfigError as e:  # a broken config is listed by its error, not hidden
            log.warning("skipping %s: %s", path, e)
            continue
        out[f"{cfg.gpu_model}: {cfg.name}"] = str(path)
    return out


def config(path: str | None) -> HardwareConfig:
    return load_config(path or DEFAULT_CONFIG)


@dataclass
class Outcome:
    """A prediction, or the reason there is none (bad input: one line, shown in the page)."""

    metrics: dict | None = None
    sim: object | None = None
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.metrics is not None


def predict(name: str, shape: tuple[int, ...], overrides: dict | None, config_path: str | None,
            trace: bool = False) -> Outcome:
    """``gpusim.api.predict`` with user errors (bad knob, untileable shape, launch that does not fit) turned
    into :class:`Outcome` messages. Anything else is a bug: logged with its traceback, shown as one line."""
    from gpusim.api import predict as _predict

    try:
        metrics, sim = _predict(name, tuple(shape), dict(overrides or {}), config(config_path), trace=trace)
    except USER_ERRORS as e:
        return Outcome(error=str(e))
    except Exception as e:  # the page must not show a stack trace; the log keeps it
        log.exception("simulator failure for %s %s %s", name, shape, overrides)
        return Outcome(error=f"the simulator failed on this input ({type(e).__name__}: {e}); this is a "
                             "gpusim bug, the server log has the details")
    return Outcome(metrics=metrics, sim=sim)


def build(name: str, shape: tuple[int, ...], overrides: dict | None, cfg: HardwareConfig | None = None):
    """Build the kernel for ``cfg`` (default: the H100) without simulating it; raises the user errors of
    ``build_kernel``."""
    from gpusim.registry import build_kernel

    return build_kernel(name, tuple(shape), dict(overrides or {}), cfg)
