"""The public API for writing your own kernel description (see ``docs/authoring.md``).

A kernel file imports only from here::

    from gpusim.authoring import Barrier, Compute, Kernel, Launch, Loop, Mem, Tensor, register

    @register("example_copy", shape_names=("N",), source="copy.cu")
    def build(shape):
        (n,) = shape
        ...
        return Kernel("example_copy", shape, Launch((n // 256, 1, 1), (256, 1, 1), 16, 0),
                      loop=Loop(1, body), tensors=(Tensor("x", 4 * n), Tensor("y", 4 * n)))

and is loaded with ``gpusim run example_copy --shape 1048576 --kernels FILE.py`` (or a folder, or
``GPUSIM_KERNELS``, or an entry point in the ``gpusim.kernels`` group of an installed package).

These names are stable: ``register``, ``Kernel``, ``Launch``, ``Tensor``, ``Mem``, ``Compute``, ``Barrier``,
``Loop``, ``Commit``, ``WaitGroup``, ``Arrive``, ``MbarWait``, ``AddrCtx``, ``KernelError``,
``require_divisible``, ``instructions_per_warp``, ``PIPES``, ``KINDS``, ``SPACES``.
"""

from __future__ import annotations

from collections.abc import Callable

from gpusim import ir
from gpusim.ir import (
    KINDS,
    SPACES,
    AddrCtx,
    Arrive,
    Barrier,
    Commit,
    Compute,
    KernelError,
    Launch,
    Loop,
    MbarWait,
    Mem,
    Op,
    Tensor,
    WaitGroup,
    register,
    instructions_per_warp,
    require_divisible,
)
from gpusim.sm.pipes import PIPES

__all__ = ["KINDS", "PIPES", "SPACES", "AddrCtx", "Arrive", "Barrier", "Commit", "Compute", "Kernel",
           "KernelError", "Launch", "Loop", "MbarWait", "Mem", "Tensor", "WaitGroup", "register",
           "instructions_per_warp", "require_divisible"]


def Kernel(name: str, shape: tuple[int, ...], launch: Launch, *, tensors: tuple[Tensor, ...],  # noqa: N802
           prologue: tuple[Op, ...] = (), loop: Loop | None = None, epilogue: tuple[Op, ...] = (),
           flops: int = 0, family: str = "user", params: dict | None = None, notes: str = "",
           mbarriers: dict | None = None, trips_of: Callable[[int], int] | None = None,
           cluster: int = 1, loop_sass_instructions: int = 0) -> ir.Kernel:
    """A complete kernel: launch, program (prologue, outer ``Loop``, epilogue) and global tensors.

    ``flops`` is optional: without it the report leads with DRAM bytes per second. ``loop_sass_instructions``
    (the hot loop's size as ``gpusim sass`` reports it) lets the instruction-cache model charge fetch stalls
    when the loop does not fit."""
    # values pass as given (a list of operations becomes a tuple): gpusim.kernel_checks says what is wrong with them,
    # rather than int() turning flops=1.5 into 1 or a list of mbarriers into an empty dict
    return ir.Kernel(name=name, family=family, shape=tuple(shape), params=dict(params or {}), launch=launch,
                     prologue=tuple(prologue), loop=loop, epilogue=tuple(epilogue), tensors=tuple(tensors),
                     flops=flops, cuda_twin="", notes=notes, mbarriers={} if mbarriers is None else mbarriers,
                     trips_of=trips_of, cluster=cluster, loop_sass_instructions=loop_sass_instructions)
