"""Where kernels come from: the one place that imports kernel descriptions.

Sources, loaded in this order: the entry-point group ``gpusim.kernels`` (gpusim itself declares its built-in
``kernels_ir`` there; a pip-installed package can add its own), the built-in ``kernels_ir`` package when no
entry point provides it (a source checkout that was never installed), the paths in ``GPUSIM_KERNELS``
(``os.pathsep``-separated), and the paths given to :func:`load` (``--kernels``). A path is a ``.py`` file or a
folder of them. A file that fails to import is reported as one line naming the file, the line and the message.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import traceback
from importlib.metadata import entry_points
from pathlib import Path

from gpusim.inputs import check_regular_file
from gpusim.ir import REGISTRY, KernelError

GROUP = "gpusim.kernels"
BUILTIN = "kernels_ir"
ENV = "GPUSIM_KERNELS"

_loaded_sources: set[str] = set()


class LoadError(KernelError):
    """A kernel source that cannot be loaded (one line: file, line, message)."""


def load(paths: list[str] | tuple[str, ...] = ()) -> None:
    """Load every kernel source: entry points and built-ins, ``GPUSIM_KERNELS``, then ``paths``.

    Idempotent: a source already loaded is not loaded again."""
    _load_builtins()
    env = [p for p in os.environ.get(ENV, "").split(os.pathsep) if p]
    for p in env:
        _load_path(p, f"{ENV} entry")
    for p in paths or ():
        _load_path(p, "--kernels")


def origin(name: str) -> str:
    """Where kernel ``name`` was defined: a file path or ``package:module``."""
    return REGISTRY[name].origin


def is_builtin(name: str) -> bool:
    return REGISTRY[name].origin.startswith(BUILTIN + ".") or REGISTRY[name].origin == BUILTIN


def _load_builtins() -> None:
    if "entry points" in _loaded_sources:
        return
    _loaded_sources.add("entry points")
    names = []
    for ep in sorted(entry_points(group=GROUP), key=lambda e: (e.value != BUILTIN, e.name)):
        names.append(ep.value)
    if BUILTIN not in names:  # source checkout without reinstall: the built-ins are still ours
        names.insert(0, BUILTIN)
    for module in dict.fromkeys(names):
        _import_module(module)


def _import_module(module: str) -> None:
    if module in _loaded_sources:
        return
    _loaded_sources.add(module)
    try:
        importlib.import_module(module)
    except KernelError:
        raise
    except Exception as e:
        raise LoadError(f"kernel package {module}: {_where(e)}") from None


def _load_path(text: str, what: str) -> None:
    path = Path(text)
    if not text or not path.exists():  # Path('') is the working folder: an empty path names no file
        raise LoadError(f"{what} {text!r}: no such file or folder")
    if path.is_dir():
        files = sorted(p for p in path.glob("*.py") if not p.name.startswith("_"))
        if not files:
            raise LoadError(f"{what} {text!r}: the folder holds no .py kernel file")
    elif path.suffix == ".py":
        files = [path]
    else:
        raise LoadError(f"{what} {text!r}: expected a .py file or a folder of them")
    for f in files:
        check_regular_file(f, "kernel file", LoadError)  # a FIFO named x.py would block the import
        _load_file(f)


def _load_file(path: Path) -> None:
    key = str(path.resolve())
    if key in _loaded_sources:
        return
    _loaded_sources.add(key)
    module = "gpusim_user_" + "".join(c if c.isalnum() else "_" for c in key)
    spec = importlib.util.spec_from_file_location(module, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[module] = mod
    try:
        spec.loader.exec_module(mod)
    except KernelError as e:
        sys.modules.pop(module, None)
        raise LoadError(f"{path}: {e}") from None
    except BaseException as e:  # anything a user's file raises (SystemExit included): one line
        sys.modules.pop(module, None)
        if isinstance(e, KeyboardInterrupt):
            raise
        raise LoadError(_where(e, path)) from None


def _where(e: BaseException, path: Path | None = None) -> str:
    """``FILE:LINE: Type: message`` for an exception raised while importing ``path``."""
    msg = f"{type(e).__name__}: {e}".strip()
    if isinstance(e, SyntaxError):
        return f"{e.filename}:{e.lineno}: SyntaxError: {e.msg}"
    frames = traceback.extract_tb(e.__traceback__)
    if path is not None:
        mine = [f for f in frames if Path(f.filename).resolve() == path.resolve()]
        frames = mine or frames
    if frames:
        f = frames[-1]
        return f"{f.filename}:{f.lineno}: {msg}"
    return f"{path}: {msg}"
