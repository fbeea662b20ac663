"""The one validation layer every kernel passes through, built-in or user (``gpusim.registry.build_kernel`` calls
:func:`check_kernel` on every kernel it builds).

It checks what a kernel description says before anything is expanded or allocated from it, against the hardware
config it is built for, and guards the code it carries:

- the launch: whole numbers, CUDA's limits (``gridDim.x`` up to 2^31-1, ``gridDim.y``/``.z`` up to 65535,
  ``blockDim.x``/``.y`` up to 1024, ``blockDim.z`` up to 64: ``[sm]`` in the config), shared memory and registers
  not negative, a cluster that divides the grid;
- the program: every operation one of the IR's (a ``None`` or a stray object in a body is named), loops of at least
  one trip with inner loops not nested, memory widths the hardware has (1, 2, 4, 8, 16 bytes), warp lists inside
  the block, ``after=`` naming an operation that runs earlier (or, in a loop, anywhere in the loop), tensors of
  positive size that fit the GPU's memory;
- the cost: a grid, repeat counts, bundles and unrolled inner loops within what gpusim simulates in seconds
  (:data:`MAX_CTAS`, :data:`MAX_LANE_ADDRESSES`, :data:`MAX_PART_ADDRESSES`, :data:`MAX_WARP_INSTRUCTIONS`,
  :data:`MAX_UNROLLED_OPERATIONS`), checked before anything is expanded;
- the code a kernel carries (address expressions, ``when``, mbarrier ``seq``, ``trips_of``, ``tile_order``): each is
  wrapped so that what it raises (``sys.exit`` included) or returns wrong (NaN or fractional addresses, a lane
  address not aligned to its access width, an array of the wrong shape, a non-integer phase) is a
  :class:`~gpusim.ir.KernelError` naming the kernel, the operation and the file and line, never a traceback from
  inside the simulation; the values it returns are passed on unchanged, so a valid kernel's prediction is the same.

Every error is one line naming the kernel and what is wrong. The limits on sizes are gpusim's, not the hardware's:
they keep a description's expansion (lane addresses, unrolled inner loops) within memory and seconds; the built-in
kernels use a small fraction of them. After the simulation, :func:`check_prediction` refuses declared FLOPs that
the predicted time could not do at the GPU's peak.
"""

from __future__ import annotations

import dataclasses
import numbers
import traceback
import typing
from collections.abc import Callable

import numpy as np

from gpusim import ir
from gpusim.ir import (QUEUES, Arrive, Barrier, Commit, Compute, Kernel, KernelError, Launch, Loop, MbarWait, Mem,
                       Tensor, WaitGroup)
from gpusim.sm.pipes import PIPES

from gpusim.config import FEATURES

if typing.TYPE_CHECKING:
    from gpusim.config import HardwareConfig

WIDTHS = (1, 2, 4, 8, 16)  # bytes one lane moves in one instruction (ld/st .b8 .. .v4.b32 / .b128) [PTX]
# what one pass through the prologue, the loop body or the epilogue may cost gpusim, so that no description runs for
# minutes (at each limit a kernel takes some 5 s, 400 MB; the built-in kernels stay below 1/20 of each)
MAX_LANE_ADDRESSES = 1 << 20  # repeat x threads of one memory operation (built-ins: 24,576)
MAX_PART_ADDRESSES = 1 << 22  # lane addresses of every memory operation of a part, inner loops unrolled
MAX_WARP_INSTRUCTIONS = 1 << 17  # warp instructions of a part, inner loops unrolled (built-ins: 4,735)
MAX_UNROLLED_OPERATIONS = 1 << 12  # operations of a part, inner loops unrolled (built-ins: 169)
MAX_TRIPS = (1 << 31) - 1  # a loop's trips (a 32-bit counter)
# CTAs of one grid (tiles of a persistent kernel): the CTAs the representative SMs run are listed wave by wave, about
# 5 bytes and 0.1 us a CTA (a 2^26-CTA grid: 8 s, 350 MB); the built-in kernels' largest grids within 80 GB are 2^24
MAX_CTAS = 1 << 26


def check_kernel(kernel: Kernel, hw: HardwareConfig, file: str = "") -> Kernel:
    """``kernel`` checked against ``hw``, with the code it carries guarded (see the module's doc); ``file`` is the
    kernel's source, named in errors about its code. Raises :class:`KernelError` (one line)."""
    name = kernel.name if isinstance(kernel.name, str) else repr(kernel.name)
    c = _Checker(name, hw, file)
    c.kernel_fields(kernel)
    c.launch(kernel)
    c.program(kernel)
    return c.guarded(kernel)


def check_prediction(kernel: Kernel, hw: HardwareConfig, seconds: float) -> None:
    """A kernel's declared ``flops`` done in the predicted ``seconds`` must not exceed the GPU's peak (every SM's
    fastest pipe at the SM clock): above it, the declaration is wrong, and the FLOP/s it would report impossible."""
    if not kernel.flops or seconds <= 0:
        return
    p = hw.pipes
    per_cycle = max(2 * (p.fp32_lanes_per_sm or 0), p.dense_tensor_flops_per_cycle_per_sm or 0)
    peak = per_cycle * hw.chip.sm_count * hw.chip.sm_clock_hz
    if kernel.flops > peak * seconds:
        raise KernelError(f"{kernel.name}: flops={kernel.flops:.4g} in the predicted {seconds * 1e3:.4g} ms is "
                          f"{kernel.flops / seconds / 1e12:.4g} TFLOP/s, above the {hw.name}'s peak of "
                          f"{peak / 1e12:.4g} TFLOP/s: the kernel declares more FLOPs than it can do")


class MissingFeatureError(KernelError):
    """A kernel that needs what the GPU of the config lacks (TMA, wgmma, clusters on an A100): one line naming it."""


class CodeError(Exception):
    """What a kernel's address expression did wrong; ``gpusim.patterns`` turns it into a KernelError naming the
    kernel and the operation (as it does the expression's own exceptions)."""


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_))


class _Checker:
    def __init__(self, name: str, hw: HardwareConfig, file: str):
        self.name, self.hw, self.file = name, hw, file

    def fail(self, message: str) -> KernelError:
        return KernelError(f"{self.name}: {message}")

    def whole(self, what: str, v, lo: int = 0, hi: int | None = None) -> None:
        if not _is_int(v) or v < lo or (hi is not None and v > hi):
            bound = f"from {lo:,} to {hi:,}" if hi is not None else f"at least {lo:,}" if lo else ">= 0"
            raise self.fail(f"{what}={v!r} must be a whole number {bound}")

    # ---- the kernel's own fields -----------------------------------------------------------------------------
    def kernel_fields(self, k: Kernel) -> None:
        if not isinstance(k.name, str) or not k.name:
            raise self.fail("the kernel's name must be a non-empty string")
        self.whole("flops", k.flops)
        if self.hw.sm.max_cluster_ctas is None:  # a GPU without clusters (before Hopper): only the trivial one
            self.whole("cluster", k.cluster, 1)
            if k.cluster != 1:
                raise MissingFeatureError(f"{self.name}: cluster={k.cluster} {self.hw.missing('clusters')}")
        else:
            self.whole("cluster", k.cluster, 1, self.hw.sm.max_cluster_ctas)
        self.whole("loop_sass_instructions", k.loop_sass_instructions)
        self.whole("persistent_ctas", k.persistent_ctas, 0, self.hw.sm.max_grid_dim_x)
        self.whole("cta_instructions", k.cta_instructions)
        self.whole("idle_cta_instructions", k.idle_cta_instructions)
        for what, fn in (("trips_of", k.trips_of), ("tile_order", k.tile_order)):
            if fn is not None and not callable(fn):
                raise self.fail(f"{what} must be a function or None, got {type(fn).__name__}")
        if not isinstance(k.tensors, tuple) or not all(isinstance(t, Tensor) for t in k.tensors):
            raise self.fail("tensors must be a tuple of Tensor(name, size_bytes)")
        seen = set()
        for t in k.tensors:
            if not isinstance(t.name, str) or not t.name:
                raise self.fail(f"a tensor's name must be a non-empty string, got {t.name!r}")
            if t.name in seen:
                raise self.fail(f"two tensors are named {t.name!r}")
            seen.add(t.name)
            self.whole(f"tensor {t.name!r} size_bytes", t.size_bytes, 1)
        hbm = self.hw.hbm.capacity_bytes
        if k.tensor_bytes > hbm:  # before the launch: a shape no GPU holds is said as such
            raise self.fail(f"the tensors take {k.tensor_bytes:,} B, more than the {hbm:,} B of HBM of the "
                            f"{self.hw.name}")
        if not isinstance(k.mbarriers, dict):
            raise self.fail("mbarriers must be a dict of mbarrier name -> arrivals per phase")

    # ---- the launch --------------------------------------------------------------------------------------------
    def launch(self, k: Kernel) -> None:
        launch, sm = k.launch, self.hw.sm
        if not isinstance(launch, Launch):
            raise self.fail(f"launch must be a Launch(grid, block, regs_per_thread, smem_bytes), got "
                            f"{type(launch).__name__}")
        for what in ("grid", "block"):
            dims = getattr(launch, what)
            if not isinstance(dims, tuple) or len(dims) != 3 or not all(_is_int(d) for d in dims):
                raise self.fail(f"launch {what} must be a tuple of three whole numbers (x, y, z), got {dims!r}")
            for axis, d in zip("xyz", dims, strict=True):
                if d < 1:
                    raise self.fail(f"{'gridDim' if what == 'grid' else 'blockDim'}.{axis} = {d}: a launch needs at "
                                    "least 1")
        # a persistent kernel's grid is its tile grid; the CTAs really launched are persistent_ctas, in one row
        limits = (("gridDim", launch.grid, (sm.max_grid_dim_x, sm.max_grid_dim_yz, sm.max_grid_dim_yz)),
                  ("blockDim", launch.block, (sm.max_block_dim_xy, sm.max_block_dim_xy, sm.max_block_dim_z)))
        for what, dims, caps in limits[1:] if k.persistent_ctas else limits:
            for axis, d, cap in zip("xyz", dims, caps, strict=True):
                if d > cap:
                    raise self.fail(f"{what}.{axis} = {d:,} is above CUDA's limit of {cap:,} on the {self.hw.name}: "
                                    "the launch would fail")
        if launch.num_ctas > MAX_CTAS:
            raise self.fail(f"a grid of {launch.num_ctas:,} {'tiles' if k.persistent_ctas else 'CTAs'} is more than "
                            f"gpusim simulates ({MAX_CTAS:,})")
        self.whole("regs_per_thread", launch.regs_per_thread, 1)
        self.whole("smem_bytes", launch.smem_bytes)
        if k.cluster > 1 and launch.grid[0] % k.cluster:
            raise self.fail(f"gridDim.x = {launch.grid[0]} is not a multiple of the cluster of {k.cluster} CTAs "
                            "(CUDA launches whole clusters)")

    # ---- the program -------------------------------------------------------------------------------------------
    def program(self, k: Kernel) -> None:
        kinds = typing.get_args(ir.Op)
        warps = -(-k.launch.threads_per_block // self.hw.sm.warp_size_threads)
        self.warps, self.threads = warps, k.launch.threads_per_block
        mem_names: set[str] = set()
        for part in ("prologue", "epilogue"):
            ops = getattr(k, part)
            if not isinstance(ops, tuple):
                raise self.fail(f"{part} must be a tuple of operations, got {type(ops).__name__}")
        if k.loop is not None:
            if not isinstance(k.loop, Loop):
                raise self.fail(f"loop must be a Loop or None, got {type(k.loop).__name__}")
            if k.loop.var != "it":
                raise self.fail(f"the outer loop's var is {k.loop.var!r}: the kernel's loop is var='it' (inner "
                                "loops, var='j', go in its body)")

        def walk(ops, where: str, depth: int) -> np.ndarray:
            """Check ``ops``; returns what one warp's pass through them costs gpusim (inner loops unrolled):
            operations, warp instructions, lane addresses evaluated."""
            if not isinstance(ops, tuple):
                raise self.fail(f"{where}: a body must be a tuple of operations, got {type(ops).__name__}")
            cost = np.zeros(3, dtype=object)
            for i, op in enumerate(ops):
                at = f"{where}[{i}]"
                if not isinstance(op, kinds):
                    raise self.fail(f"{at} is {op!r:.60}, not an operation (Mem, Compute, Barrier, Loop, ...)")
                if isinstance(op, Loop):
                    if op is k.loop or op.var == "it":
                        raise self.fail(f"{at}: a loop with var='it' inside the program: only the kernel's own loop "
                                        "is the outer loop (inner loops are var='j')")
                    if op.var != "j":
                        raise self.fail(f"{at}: loop var {op.var!r} must be 'j' (an inner loop)")
                    if depth:
                        raise self.fail(f"{at}: inner loops do not nest (an address expression sees one j)")
                    self.whole(f"{at} (inner loop) trips", op.trips, 1, MAX_UNROLLED_OPERATIONS)
                    cost += op.trips * walk(op.body, f"{at}.body", depth + 1)
                else:
                    self.op(op, at, mem_names)
                    cost += _cost(op, self.threads)
            return cost

        for part, ops in (("prologue", k.prologue), ("loop.body", k.loop.body if k.loop is not None else ()),
                          ("epilogue", k.epilogue)):
            if part == "loop.body" and k.loop is not None:
                self.whole("the outer loop's trips", k.loop.trips, 1, MAX_TRIPS)
            cost = walk(ops, part, 0)
            for total, limit, what in zip(cost, (MAX_UNROLLED_OPERATIONS, MAX_WARP_INSTRUCTIONS, MAX_PART_ADDRESSES),
                                          ("operations", "warp instructions", "lane addresses"), strict=True):
                if total > limit:
                    raise self.fail(f"{part}: one pass takes {total:,} {what} (inner loops unrolled), more than the "
                                    f"{limit:,} gpusim simulates")
        self.dependencies(k)
        for bar, count in k.mbarriers.items():
            if not isinstance(bar, str) or not _is_int(count) or count < 1:
                raise self.fail(f"mbarrier {bar!r} needs a positive whole arrival count, got {count!r}")

    def op(self, op, at: str, mem_names: set[str]) -> None:
        label = f"{at} {getattr(op, 'name', '')!r}" if getattr(op, "name", None) else at
        if isinstance(op, (Mem, Compute, Barrier)):
            if not isinstance(op.name, str) or not op.name:
                raise self.fail(f"{at}: an operation's name must be a non-empty string, got {op.name!r}")
        warps = getattr(op, "warps", None)
        if warps is not None:
            if not isinstance(warps, tuple) or not warps or not all(_is_int(w) for w in warps):
                raise self.fail(f"{label}: warps must be None (all) or a non-empty tuple of warp indices, got "
                                f"{warps!r:.60}")
            bad = [w for w in warps if not 0 <= w < self.warps]
            if bad:
                raise self.fail(f"{label}: warp {bad[0]} is not in the block (its {self.threads} threads are warps "
                                f"0..{self.warps - 1})")
            if len(set(warps)) != len(warps):
                raise self.fail(f"{label}: warps lists a warp twice")
        if isinstance(op, (Mem, Compute)):
            after = op.after
            if not isinstance(after, tuple) or not all(isinstance(a, str) for a in after):
                raise self.fail(f"{label}: after must be a tuple of operation names, got {after!r:.60}")
        if isinstance(op, Mem):
            if op.kind in ir.TMA_KINDS and self.hw.tma is None:
                raise MissingFeatureError(f"{self.name}: {label} (a TMA copy) {self.hw.missing('tma')}")
            if op.name in mem_names:
                raise self.fail(f"two memory operations are named {op.name!r}")
            mem_names.add(op.name)
            if op.space not in ir.SPACES or op.kind not in ir.KINDS:
                raise self.fail(f"{label} has space {op.space!r} and kind {op.kind!r} (allowed: "
                                f"{', '.join(ir.SPACES)} / {', '.join(ir.KINDS)})")
            if not _is_int(op.width_bytes) or op.width_bytes not in WIDTHS:
                raise self.fail(f"{label}: width_bytes={op.width_bytes!r}: a lane moves 1, 2, 4, 8 or 16 bytes")
            self.whole(f"{label} repeat", op.repeat, 1)
            if op.repeat * self.threads > MAX_LANE_ADDRESSES:
                raise self.fail(f"{label}: repeat={op.repeat:,} x {self.threads} threads is "
                                f"{op.repeat * self.threads:,} lane addresses, more than the {MAX_LANE_ADDRESSES:,} "
                                "gpusim evaluates at once")
            if not callable(op.addr):
                raise self.fail(f"{label}: addr must be a function of the address context, got {op.addr!r:.60}")
            if op.space == "global" and not (isinstance(op.tensor, str) and op.tensor):
                raise self.fail(f"{label}: a global access names the tensor it reads or writes (tensor=)")
            for attr in ("predicated", "async_copy"):
                if not isinstance(getattr(op, attr), bool):
                    raise self.fail(f"{label}: {attr} must be True or False, got {getattr(op, attr)!r}")
            if op.seq is not None and not callable(op.seq):
                raise self.fail(f"{label}: seq must be a function (it, j) -> phase, got {op.seq!r:.60}")
            self.whole(f"{label} matrices", op.matrices, 0, 4)
        elif isinstance(op, Compute):
            if not isinstance(op.pipe, str) or op.pipe not in PIPES:
                raise self.fail(f"{label} names unknown pipe {op.pipe!r} (known: {', '.join(PIPES)})")
            if op.pipe not in self.hw.pipes.names:  # a pipe this GPU lacks (wgmma before Hopper)
                why = self.hw.missing(op.pipe) if op.pipe in FEATURES else (
                    f"needs the {op.pipe} pipe, which the {self.hw.name} config does not have (no [pipes.{op.pipe}] "
                    f"in {self.hw.path})")
                raise MissingFeatureError(f"{self.name}: {label} {why}")
            self.whole(f"{label} count", op.count, 0, MAX_WARP_INSTRUCTIONS)  # 0: a SASS remainder of none
            self.whole(f"{label} ilp", op.ilp, 1)
            self.whole(f"{label} units", op.units, 1)
            if op.when is not None and not callable(op.when):
                raise self.fail(f"{label}: when must be a function (warp, j) -> bool or None, got {op.when!r:.60}")
        elif isinstance(op, (Commit, WaitGroup)):
            if op.queue not in QUEUES:
                raise self.fail(f"{label}: unknown asynchronous queue {op.queue!r} (known: {', '.join(QUEUES)})")
            if isinstance(op, WaitGroup):
                self.whole(f"{label} pending", op.pending)
        elif isinstance(op, (Arrive, MbarWait)) and not callable(op.seq):
            raise self.fail(f"{label}: seq must be a function (it, j) -> phase, got {op.seq!r:.60}")

    def dependencies(self, k: Kernel) -> None:
        """``after=`` names an operation that ran before: earlier in the program, or anywhere in the outer loop for
        one in it (the previous iteration's), or anywhere in an inner loop for one in it."""
        named = {op.name for op in k.all_ops() if isinstance(op, (Mem, Compute))}
        seen: set[str] = set()

        def loop_names(ops) -> set[str]:
            out = set()
            for op in ops:
                if isinstance(op, Loop):
                    out |= loop_names(op.body)
                elif isinstance(op, (Mem, Compute)):
                    out.add(op.name)
            return out

        def walk(ops, carried: set[str]):
            for op in ops:
                if isinstance(op, Loop):
                    walk(op.body, carried | loop_names(op.body))
                    continue
                if isinstance(op, (Mem, Compute)):
                    for d in op.after:
                        if d not in named:
                            raise self.fail(f"{op.name!r} waits for {d!r} (after=), which no operation is named")
                        if d not in seen and d not in carried:
                            raise self.fail(f"{op.name!r} waits for {d!r} (after=), which does not run before it "
                                            "(nor in a loop around both): the dependency can never be met")
                    seen.add(op.name)

        walk(k.prologue, set())
        if k.loop is not None:
            walk(k.loop.body, loop_names(k.loop.body))
        walk(k.epilogue, set())

    # ---- the code a kernel carries --------------------------------------------------------------------------------
    def guarded(self, k: Kernel) -> Kernel:
        """The kernel with every function it carries wrapped by a check of what it raises and returns."""
        loop = None if k.loop is None else dataclasses.replace(k.loop, body=self.guard_body(k.loop.body))
        num_tiles = k.launch.num_ctas
        return dataclasses.replace(
            k, prologue=self.guard_body(k.prologue), loop=loop, epilogue=self.guard_body(k.epilogue),
            trips_of=None if k.trips_of is None else self.wrap(k.trips_of, "trips_of", _trips_result),
            tile_order=None if k.tile_order is None else self.wrap(
                k.tile_order, "tile_order", lambda r, args: _order_result(r, args, num_tiles)))

    def guard_body(self, body: tuple) -> tuple:
        return tuple(self.guard_op(op) for op in body)

    def guard_op(self, op):
        if isinstance(op, Loop):
            return dataclasses.replace(op, body=self.guard_body(op.body))
        if isinstance(op, Mem):
            width = op.width_bytes
            changes = {"addr": self.wrap(op.addr, f"the address expression of {op.name!r}",
                                         lambda r, args: _address_result(r, args, width), CodeError)}
            if op.seq is not None:
                changes["seq"] = self.wrap(op.seq, f"the seq of {op.name!r}", _seq_result)
            return dataclasses.replace(op, **changes)
        if isinstance(op, Compute) and op.when is not None:
            return dataclasses.replace(op, when=self.wrap(op.when, f"the when() of {op.name!r}", _when_result))
        if isinstance(op, (Arrive, MbarWait)):
            return dataclasses.replace(op, seq=self.wrap(op.seq, f"the seq of the {type(op).__name__} on "
                                                                 f"{op.bar!r}", _seq_result))
        return op

    def wrap(self, fn: Callable, what: str, check: Callable, error: type[Exception] | None = None) -> Callable:
        """``fn`` whose exceptions (``SystemExit`` too) and bad results are a one-line KernelError naming the kernel,
        ``what`` and the file and line; with ``error``, an exception of that type whose message the caller prefixes
        (address expressions: ``gpusim.patterns`` names the kernel and the operation), an exception of ``fn`` passing
        unchanged (``SystemExit`` as ``error``)."""
        name, file = self.name, self.file

        def guarded(*args):
            try:
                result = fn(*args)
            except KernelError:
                raise
            except (Exception, SystemExit) as e:
                if error is None:
                    raise KernelError(f"{name}: {what} raised {_where(e, file)}") from None
                if isinstance(e, SystemExit):
                    raise error(_where(e, file)) from None
                raise
            problem = check(result, args)
            if problem:
                at = _defined_at(fn)
                raise (KernelError(f"{name}: {what}{at} {problem}") if error is None else error(f"{problem}{at}"))
            return result

        guarded.__wrapped__ = fn
        return guarded


def _cost(op, threads: int) -> np.ndarray:
    """(operations, warp instructions, lane addresses) of one execution of ``op`` by one warp (a CTA's threads for
    the addresses), as :func:`gpusim.ir.instructions_per_warp` counts instructions."""
    if isinstance(op, Mem):
        return np.array([1, 0 if op.async_copy else 1 if op.kind in ir.TMA_KINDS else op.repeat, op.repeat * threads],
                        dtype=object)
    if isinstance(op, Compute):
        return np.array([1, op.count // op.units, 0], dtype=object)
    return np.array([1, 1, 0], dtype=object)


def _address_result(result, args, width: int) -> str:
    """What is wrong with an address expression's result, or ''."""
    ctx = args[0]
    try:
        a = np.asarray(result)
    except Exception:  # a ragged list, an object numpy cannot read
        return f"returned {type(result).__name__}, not an array of byte addresses"
    if a.dtype.kind not in "iuf":
        return f"returned {a.dtype} values, not byte addresses (integers)"
    target = (ctx.r.shape[0], ctx.warp.shape[1], ctx.lane.shape[2])
    try:
        if np.broadcast_shapes(a.shape, target) != target:
            raise ValueError
    except ValueError:
        return f"returned an array of shape {a.shape}, which does not broadcast to (repeat, warps, lanes) = {target}"
    if a.dtype.kind == "f":
        if not np.isfinite(a).all():
            return "returned a NaN or infinite address"
        if (a != np.floor(a)).any():
            return "returned a fractional address (byte addresses are whole numbers)"
        if (np.abs(a) >= 2.0 ** 62).any():
            return "returned an address beyond 2^62"
    live = a[a >= 0]
    if live.size and (live % width).any():
        bad = int(live[(live % width) != 0].flat[0])
        return f"returned address {bad}, not a multiple of the access width {width} B (a misaligned address)"
    return ""


def _when_result(result, args) -> str:
    if isinstance(result, (bool, np.bool_)) or (_is_int(result) and result in (0, 1)):
        return ""
    return f"returned {result!r:.40}, not True or False"


def _seq_result(result, args) -> str:
    return "" if _is_int(result) else f"returned {result!r:.40}, not a whole phase number"


def _trips_result(result, args) -> str:
    return "" if _is_int(result) and 1 <= result <= MAX_TRIPS else \
        f"returned {result!r:.40} for CTA {args[0]}, not a whole number of trips from 1 to {MAX_TRIPS:,}"


def _order_result(result, args, tiles: int) -> str:
    pos = np.asarray(args[0])
    try:
        r = np.asarray(result)
    except Exception:
        return f"returned {type(result).__name__}, not an array of tile indices"
    if r.dtype.kind not in "iu" or r.shape != pos.shape:
        return (f"returned {r.dtype} values of shape {r.shape}, not whole tile indices of the positions' shape "
                f"{pos.shape}")
    if r.size and (r.min() < 0 or r.max() >= tiles):
        return f"returned tile {int(r.max() if r.max() >= tiles else r.min())}, outside the grid's {tiles:,} tiles"
    return ""


def _defined_at(fn) -> str:
    code = getattr(fn, "__code__", None)
    return f" ({code.co_filename}:{code.co_firstlineno})" if code is not None else ""


def _where(e: BaseException, file: str) -> str:
    """``Type: message at FILE:LINE`` (the innermost frame in ``file``, else the innermost one)."""
    frames = traceback.extract_tb(e.__traceback__)[1:]  # the first frame is the guard's own call
    mine = [f for f in frames if file and f.filename == file]
    frame = (mine or frames or [None])[-1]
    msg = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
    if isinstance(e, SystemExit):
        msg = f"SystemExit({e.code!r}) (sys.exit in kernel code)"
    return f"{msg} at {frame.filename}:{frame.lineno}" if frame is not None else msg
