"""numba.njit, imported and applied on first use: importing numba takes about a second and compiling (or loading
from its cache) the engine's kernels more, which commands that simulate nothing (``gpusim list``, ``--help``, the
config checks) should not pay.

    jit = LazyJit(globals())

    @jit(cache=True)
    def _walk(a, ...): ...

Each decorated function stays a plain Python stand-in until one of the module's functions is first called; that
call imports numba, compiles every function registered with the module's ``LazyJit`` in definition order (so a
function compiled eagerly from a signature finds the jitted functions it calls, as when they were decorated at
import) and puts the compiled dispatchers in the module's globals, where the module's own callers look them up from
then on. A stand-in called after that (a reference taken before the first call) forwards to the dispatcher.
"""

from __future__ import annotations

import functools


class LazyJit:
    def __init__(self, namespace: dict):
        self.namespace = namespace
        self.pending: list[tuple[str, object, tuple, dict]] = []
        self.compiled = False

    def __call__(self, *args, **kwargs):
        def decorate(fn):
            name = fn.__name__
            self.pending.append((name, fn, args, kwargs))

            @functools.wraps(fn)
            def stand_in(*a):
                if not self.compiled:
                    self.compile()
                return self.namespace[name](*a)

            stand_in.py_func = fn
            return stand_in

        return decorate

    def compile(self) -> None:
        import numba

        for name, fn, args, kwargs in self.pending:
            self.namespace[name] = numba.njit(*args, **kwargs)(fn)
        self.compiled = True
