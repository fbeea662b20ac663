"""numba is imported on first use only (issue 29: `gpusim list` start-up)."""

import subprocess
import sys


def test_listing_kernels_imports_no_numba():
    """`gpusim list` (the CLI, the config, the memory models' modules) runs without importing numba; it fails when
    resources.py or memory/l2.py import numba or decorate with numba.njit at module level."""
    code = ("import contextlib, io, sys\n"
            "from gpusim import cli\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    cli.main(['list'])\n"
            "print('numba' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_first_call_compiles_every_function_of_the_module():
    """The first call of any stand-in puts numba dispatchers in the module's globals (the callers' lookups), the
    eagerly typed one after the function it calls."""
    import numba

    ns: dict = {}
    exec("from gpusim.lazyjit import LazyJit\n"
         "_jit = LazyJit(globals())\n"
         "@_jit(cache=False)\n"
         "def inc(x):\n"
         "    return x + 1\n"
         "@_jit('int64(int64)', cache=False)\n"
         "def twice_inc(x):\n"
         "    return inc(inc(x))\n", ns)
    stand_in = ns["twice_inc"]
    assert not isinstance(stand_in, numba.core.registry.CPUDispatcher)
    assert stand_in(3) == 5  # compiles the module's functions, then forwards
    assert isinstance(ns["inc"], numba.core.registry.CPUDispatcher)
    assert isinstance(ns["twice_inc"], numba.core.registry.CPUDispatcher)
    assert stand_in(1) == 3
