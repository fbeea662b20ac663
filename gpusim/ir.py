"""Tile-level kernel description (the IR).

A kernel is a launch (grid, block, registers per thread, shared memory per block) and one program that
every warp runs: a prologue, an outer loop (typically over K tiles; the simulator fast-forwards it once
it reaches a steady state), and an epilogue. Operations are at tile granularity: one memory operation is
one warp instruction repeated ``repeat`` times, with per-lane byte addresses computed by a vectorised
expression of the thread and block indices; one compute operation is a bundle of warp instructions.

Address expressions receive an :class:`AddrCtx` whose array fields broadcast over
``(repeat, warp, lane)`` and return byte offsets into their tensor (global) or into the CTA's shared
memory. A negative address marks an inactive lane.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
import numpy as np

SPACES = ("global", "shared")
# ldsm/stsm: ldmatrix/stmatrix (shared only, 16-B rows); tma: a TMA tile copy global -> shared (one thread
# issues it; its addresses are the 16-B chunks of the box, listed over ``repeat`` x 32 lanes of one warp); tma_st:
# a TMA tile store shared -> global, addressed alike, whose completion (its box read out of shared memory) joins
# the ``cp.async`` queue's open group (SASS: UTMASTG, UTMACMDFLUSH commits, DEPBAR.LE SB0 waits, as for cp.async)
KINDS = ("ld", "st", "ldsm", "stsm", "tma", "tma_st")
LOADS = ("ld", "ldsm")
TMA_KINDS = ("tma", "tma_st")  # copies of the SM's TMA unit: one instruction a box, L1 bypassed
STORES = ("st", "tma_st")  # what writes global memory through the L2's write path
QUEUES = ("cp.async", "wgmma")  # asynchronous-operation queues with commit/wait groups
ATOMIC_RULES = ("", "lanes", "words")  # Mem.atomic: not atomic, each lane serialized per bank, one word's lanes combine
# instruction-set facts, not hardware numbers: a warpgroup is 4 contiguous warps of 32 threads, and setmaxnreg
# takes a multiple of 8 registers in 24..256 [PTX]
WARPGROUP_THREADS = 128
SETMAXNREG_RANGE = (24, 256)
SETMAXNREG_STEP = 8
SeqFn = Callable[[int, int], int]  # (outer iteration, inner iteration) -> mbarrier phase sequence number
# (outside the loop the outer iteration is 0 in the prologue and the CTA's trips in the epilogue: the iteration
# after its last, so that a phase there can continue the loop's count where CTAs run different trips)


@dataclass(frozen=True)
class AddrCtx:
    """Indices an address expression may use."""

    r: np.ndarray  # (R, 1, 1) repeat index within the operation
    warp: np.ndarray  # (1, W, 1) warp index within the CTA
    lane: np.ndarray  # (1, 1, 32) lane index
    tid: np.ndarray  # (1, W, 32) linear thread index within the CTA
    block: tuple[int, int, int]  # blockDim (x, y, z)
    bx: int
    by: int
    bz: int
    it: int  # outer-loop iteration
    j: int  # inner-loop iteration (0 outside an inner loop)

    @property
    def tx(self) -> np.ndarray:
        return self.tid % self.block[0]

    @property
    def ty(self) -> np.ndarray:
        return (self.tid // self.block[0]) % self.block[1]


AddrFn = Callable[[AddrCtx], np.ndarray]


@dataclass(frozen=True)
class Mem:
    """A memory operation: ``repeat`` warp instructions of ``width_bytes`` per lane."""

    name: str
    space: str
    kind: str
    width_bytes: int
    addr: AddrFn
    tensor: str = ""  # global tensor the addresses index (for the cache footprint)
    repeat: int = 1
    after: tuple[str, ...] = ()  # operations whose results this one waits for
    warps: tuple[int, ...] | None = None  # warps of the CTA that execute it (None: all)
    # the shared-memory write of an asynchronous global->shared copy (cp.async / LDGSTS): issued by its
    # global-load twin, so it takes no issue slot, and ncu counts it under op_ldgsts, not op_st
    async_copy: bool = False
    # ldmatrix / stmatrix .x1/.x2/.x4: 8 rows of 16 B per matrix, row addresses from lanes 0..8*matrices-1
    matrices: int = 0
    # asynchronous queue the operation joins (``cp.async``): the warp does not wait for it; a later
    # ``WaitGroup`` does
    group: str = ""
    # tma: the mbarrier its completion arrives on, and the phase sequence number of that arrival
    arrive: str = ""
    seq: SeqFn | None = None
    # a guarded instruction (SASS ``@P0 LDS``): every executing warp issues it even when its predicate turns
    # every lane off (no memory work then); False: a warp with no active lane skips it (a uniform branch)
    predicated: bool = False
    # the SASS reuses the registers holding the instructions' operands (the address) every ``operand_reuse``
    # instructions, as ptxas does short of registers: the instruction that overwrites them waits until the LSU has
    # read them, when the group's last instruction enters the L1TEX pipe (ncu: long_scoreboard on that
    # instruction). 0: no reuse, the instructions issue back to back
    operand_reuse: int = 0
    # the least cycles the warp spends issuing the ``repeat`` instructions: their SASS control codes' stall counts
    # (``gpusim sass``); the cycles beyond one per instruction are ncu's ``wait``. 0: one a cycle
    stall_cycles: int = 0
    # an atomic read-modify-write (``atomicAdd``: ATOMS on shared, RED/ATOMG on global), kind ``st`` for its traffic,
    # counted by ncu under op_atom / op_red, not op_st. On shared memory, ``"lanes"``: every lane's read-modify-write
    # takes its bank once, lanes on one word included (ATOMS.ADD, :func:`gpusim.memory.shared.atomic_wavefronts_batch`);
    # ``"words"``: lanes on one word combine, as a store's do (ATOMS.POPC.INC, ``atomicAdd(p, 1)``). Measured:
    # validate/micro/atomics.cu (validate/measurements/h100/irregular-2026-11-27.json, "micro"). "": not atomic
    atomic: str = ""
    # a global atomic whose result no instruction reads (SASS RED, ``atomicAdd`` with its value unused): ncu counts it
    # under op_red (requests, sectors, the L2's lookups), an ATOMG that returns the old value under op_atom
    reduction: bool = False
    # a global atomic on floating-point data (``atomicAdd(float*, float)``: RED/ATOMG .F32, .F64): the L2 takes longer
    # to apply one to a word than an integer one ([l2] atomic_float_request_min_ns)
    float_atomic: bool = False


@dataclass(frozen=True)
class Compute:
    """A bundle of ``count`` warp instructions on ``pipe`` forming ``ilp`` independent chains."""

    name: str
    pipe: str
    count: int
    ilp: int = 1
    after: tuple[str, ...] = ()
    warps: tuple[int, ...] | None = None  # warps of the CTA that execute it (None: all)
    # asynchronous queue (``wgmma``): the warp issues ``count // units`` instructions and goes on; the pipe
    # works ``count`` units; a later ``WaitGroup`` waits for completion
    group: str = ""
    units: int = 1  # pipe units per issued instruction (wgmma m64nNk16: N/8)
    # warp selection per inner-loop iteration: ``when(warp, j)`` is true for the warps (of ``warps``) that execute
    # the bundle in inner iteration ``j`` (a branch taken by some warps only in some iterations); None: always
    when: Callable[[int, int], bool] | None = None
    # the least cycles the warp spends issuing the bundle: the control codes' stall counts summed over the SASS
    # instructions it stands for (``gpusim sass`` prints them per loop); the cycles beyond one per instruction
    # are ncu's ``wait``. 0: the pipe's latency and ``ilp`` alone decide
    stall_cycles: int = 0
    # the mean register-file reads of those SASS instructions (source registers not served by the operand reuse
    # cache, ``gpusim.sass.Inst.register_reads``): the scheduler's dispatch reads ``[scheduler]
    # register_reads_per_cycle`` a cycle, so above that each instruction holds the issue slot longer (ncu:
    # dispatch_stall). 0: within one cycle
    register_reads: float = 0.0
    # whether the warp waits for the bundle's chains to finish before its next operation (a hand-written bundle
    # stands for a whole computation), or only until it has issued the chains' last instructions, later operations
    # waiting for its results through ``after`` (a run of SASS instructions, as the front-end builds them)
    waits_for_results: bool = True


@dataclass(frozen=True)
class Barrier:
    """``__syncthreads()`` (``warps=None``) or a named barrier (``bar.sync id, n``) among ``warps``.

    ``members``: the warps that must arrive before any goes on, where they are not the warps executing this
    operation (0: ``warps``, or the whole CTA). Warps that reach ``__syncthreads`` at different places in the code
    (divergent roles) execute different operations named ``__syncthreads`` with ``members`` the CTA's warps."""

    name: str = "bar"
    warps: tuple[int, ...] | None = None
    members: int = 0
    # ``bar.arrive`` (SASS ``BAR.ARV``): the warp counts as arrived and goes on; the warps that ``bar.sync`` on the
    # same barrier wait until ``members`` have arrived (a producer hands a consumer its turn)
    arrive: bool = False


@dataclass(frozen=True)
class Commit:
    """``cp.async.commit_group`` / ``wgmma.commit_group``: close the warp's open group of ``queue``."""

    queue: str
    warps: tuple[int, ...] | None = None


@dataclass(frozen=True)
class WaitGroup:
    """``cp.async.wait_group n`` / ``wgmma.wait_group n``: wait until at most ``pending`` groups of ``queue``
    are still in flight."""

    queue: str
    pending: int = 0
    warps: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Arrive:
    """``mbarrier.arrive`` by each executing warp on phase ``seq(it, j)`` of mbarrier ``bar``."""

    bar: str
    seq: SeqFn
    warps: tuple[int, ...] | None = None


@dataclass(frozen=True)
class MbarWait:
    """``mbarrier.try_wait.parity`` loop: wait until phase ``seq(it, j)`` of ``bar`` has completed (a negative
    sequence number is a phase completed before the kernel's loop began)."""

    bar: str
    seq: SeqFn
    warps: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Loop:
    """A loop. The outer loop (``var='it'``) is fast-forwarded; inner loops (``var='j'``) are unrolled."""

    trips: int
    body: tuple[Op, ...]
    var: str = "it"


@dataclass(frozen=True)
class Fence:
    """``MEMBAR`` (``__threadfence()``): the warp waits until its earlier stores have reached the L2 and been
    acknowledged, and at least for the fence's own round trip (``[l2] fence_cycles``, ``fence_after_store_cycles``)."""

    warps: tuple[int, ...] | None = None


Op = Mem | Compute | Barrier | Commit | WaitGroup | Arrive | MbarWait | Fence | Loop


@dataclass(frozen=True)
class Tensor:
    name: str
    size_bytes: int
    # per-thread local memory (register spills, stack arrays): the driver gives each thread slot an SM can hold one
    # frame, which the CTAs that follow on the slot reuse; ``size_bytes`` is the grid's frames as the addresses lay
    # them out, of which only the resident CTAs' exist at once (gpusim/chip.py: tiles keyed by slot)
    local: bool = False


@dataclass(frozen=True)
class Launch:
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    regs_per_thread: int
    smem_bytes: int

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def num_ctas(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]


@dataclass(frozen=True)
class Kernel:
    """A complete tile-level kernel description."""

    name: str
    family: str
    shape: tuple[int, ...]
    params: dict
    launch: Launch
    prologue: tuple[Op, ...]
    loop: Loop | None
    epilogue: tuple[Op, ...]
    tensors: tuple[Tensor, ...]
    flops: int
    cuda_twin: str  # path of the CUDA implementation in validate/kernels/
    notes: str = ""
    # mbarrier -> arrivals that complete one phase (warps executing Arrive, TMA copies completing)
    mbarriers: dict = field(default_factory=dict)
    # persistent kernels: the order in which the tiles (the grid's CTAs, by linear index) are processed, as a
    # function from positions (an integer array) to tile indices; ``launch`` then describes the tile grid,
    # ``persistent_ctas`` the CTAs really launched
    tile_order: Callable[[np.ndarray], np.ndarray] | None = None
    persistent_ctas: int = 0
    # persistent kernels: warp instructions (summed over the CTA's warps, from the twin's SASS) that a launched CTA
    # executes outside its tiles (set-up, the tile-count test, the exit), and what one with no tile executes;
    # counted in smsp__inst_executed, not simulated (a few hundred instructions per CTA)
    cta_instructions: int = 0
    idle_cta_instructions: int = 0
    # outer-loop trips of each CTA (linear index) when they differ (causal attention); None: all equal
    trips_of: Callable[[int], int] | None = None
    # setmaxnreg: registers per thread of each warpgroup after reallocation (None: the launch's count)
    warpgroup_regs: tuple[int, ...] | None = None
    # thread-block cluster size (TMA multicast partners); 1: no cluster
    cluster: int = 1
    # SASS instructions of the hot (outer) loop, as `gpusim sass` reports them: what the instruction caches must
    # hold (gpusim/sm/icache.py); 0: small enough to fit
    loop_sass_instructions: int = 0
    # memory operations whose addresses come from data (a histogram's bins, a gather's indices): their counts change
    # from one loop iteration and one CTA to the next, and are sampled (gpusim.patterns.VARYING_SAMPLES), not
    # required to repeat
    varying: frozenset = frozenset()

    @property
    def local_tensors(self) -> frozenset[str]:
        """The tensors that are local memory (:attr:`Tensor.local`: register spills, stack arrays)."""
        return frozenset(t.name for t in self.tensors if t.local)

    @property
    def tensor_bytes(self) -> int:
        """Device memory the global tensors take, laid out as :meth:`tensor_base` places them."""
        return sum(-(-t.size_bytes // (1 << 20)) * (1 << 20) for t in self.tensors)

    def tensor_base(self, name: str) -> int:
        """Byte address of a global tensor: tensors are laid out one after another, 1 MiB aligned."""
        base = 0
        for t in self.tensors:
            if t.name == name:
                return base
            base += -(-t.size_bytes // (1 << 20)) * (1 << 20)
        raise KernelError(f"{self.name}: unknown tensor '{name}'")

    def all_ops(self) -> list[Op]:
        """Every non-loop operation in program order (inner-loop bodies included once)."""
        out: list[Op] = []

        def walk(ops):
            for op in ops:
                if isinstance(op, Loop):
                    walk(op.body)
                else:
                    out.append(op)

        walk(self.prologue)
        if self.loop is not None:
            walk(self.loop.body)
        walk(self.epilogue)
        return out


class KernelError(ValueError):
    """Bad kernel name, parameter or shape; the message names what and where."""


@dataclass(frozen=True)
class KernelDef:
    """A registered kernel builder and its tunable parameters with defaults."""

    name: str
    family: str
    build: Callable[..., Kernel]
    defaults: dict
    shape_names: tuple[str, ...]
    doc: str
    cuda_twin: str
    choices: dict = field(default_factory=dict)  # parameter -> allowed values
    origin: str = ""  # where it was defined: ``package.module`` (built-in, pip package) or a file path
    file: str = ""  # the Python file that registered it
    source: str = ""  # the CUDA source it describes (``gpusim run`` compares its SASS with the IR)
    # whether the builder takes the hardware config it is built for (a keyword-only ``hw``): kernels whose launch
    # depends on the GPU (one persistent CTA per SM, the shared-memory limit of a block) read it from there
    wants_hw: bool = False


REGISTRY: dict[str, KernelDef] = {}
LAUNCH_KNOBS = ("regs_per_thread", "smem_bytes")  # launch resources any kernel may override


def register(name: str, family: str = "user", shape_names: tuple[str, ...] = (), defaults: dict | None = None,
             cuda_twin: str = "", choices: dict | None = None, source: str = ""):
    """Decorator that registers a kernel builder ``build(shape, **params) -> Kernel``.

    A builder that declares a keyword-only parameter ``hw`` receives the :class:`~gpusim.config.HardwareConfig`
    the kernel is built for (``hw.chip.sm_count``, ``hw.sm.smem_per_block_max_bytes``, ...). ``cuda_twin`` (the
    validated CUDA twin in ``validate/kernels/``) is required of the built-in kernels only; ``source``
    names the ``.cu`` file a user kernel describes, relative to the kernel file."""

    def deco(fn):
        import inspect
        from pathlib import Path

        file = inspect.getsourcefile(fn) or fn.__code__.co_filename
        module = fn.__module__ or ""
        origin = file if module.startswith("gpusim_user_") or module == "__main__" else module
        where = f"{file}:{fn.__code__.co_firstlineno}"
        if name in REGISTRY:
            raise KernelError(f"kernel '{name}' is defined twice: in {REGISTRY[name].file} and in {file}")
        if not isinstance(name, str) or not name.isidentifier():
            raise KernelError(f"{where}: kernel name {name!r} must be an identifier")
        if not isinstance(shape_names, tuple) or not all(isinstance(n, str) for n in shape_names):
            raise KernelError(f"{where}: {name}: shape_names must be a tuple of names, got {shape_names!r}")
        if module.split(".")[0] == "kernels_ir" and not cuda_twin:
            raise KernelError(f"{where}: built-in kernel '{name}' needs cuda_twin")
        src = ""
        if source:
            src = str((Path(file).parent / source).resolve())
        doc = ((fn.__doc__ or "").strip().splitlines() or [""])[0]
        hw = inspect.signature(fn).parameters.get("hw")
        wants_hw = hw is not None and hw.kind is inspect.Parameter.KEYWORD_ONLY
        REGISTRY[name] = KernelDef(name, family, fn, dict(defaults or {}), tuple(shape_names), doc, cuda_twin,
                                   dict(choices or {}), origin, file, src, wants_hw)
        return fn

    return deco


def _check_async(kernel: Kernel) -> None:
    """Asynchronous operations name known queues and declared mbarriers; setmaxnreg fits the launch."""
    name = kernel.name
    for op in kernel.all_ops():
        queue = getattr(op, "queue", None) or getattr(op, "group", "")
        if queue and queue not in QUEUES:
            raise KernelError(f"{name}: unknown asynchronous queue '{queue}' (known: {', '.join(QUEUES)})")
        bar = getattr(op, "bar", None) or getattr(op, "arrive", "")
        if bar and bar not in kernel.mbarriers:
            raise KernelError(f"{name}: mbarrier '{bar}' is used but not declared "
                              f"(declared: {', '.join(kernel.mbarriers) or 'none'})")
        if isinstance(op, Mem) and op.kind == "tma" and (op.space != "global" or not op.arrive or op.seq is None
                                                           or op.width_bytes != 16):
            raise KernelError(f"{name}: TMA copy '{op.name}' needs space 'global', width_bytes=16 and an mbarrier "
                              "to arrive on (arrive=, seq=)")
        if isinstance(op, Mem) and op.kind == "tma_st" and (op.space != "global" or op.arrive or op.width_bytes != 16
                                                              or op.group not in ("", "cp.async")):
            raise KernelError(f"{name}: TMA store '{op.name}' needs space 'global', width_bytes=16, no mbarrier and "
                              "at most the 'cp.async' group (its bulk group)")
        if isinstance(op, Compute) and (op.units < 1 or op.count % op.units):
            raise KernelError(f"{name}: '{op.name}' count {op.count} is not a multiple of units={op.units}")
        if isinstance(op, Compute) and (isinstance(op.register_reads, bool)
                                        or not isinstance(op.register_reads, (int, float))
                                        or not 0 <= op.register_reads <= 8):
            raise KernelError(f"{name}: '{op.name}' register_reads={op.register_reads!r} must be a number from 0 "
                              "to 8 (register sources per instruction)")
        if isinstance(op, Compute) and (not isinstance(op.stall_cycles, int) or op.stall_cycles < 0
                                        or (op.stall_cycles and op.group)):
            raise KernelError(f"{name}: '{op.name}' stall_cycles={op.stall_cycles!r} must be a whole number >= 0, "
                              "on a bundle the warp issues itself (no group)")
        for attr in ("stall_cycles", "operand_reuse") if isinstance(op, Mem) else ():
            v = getattr(op, attr)
            if not isinstance(v, int) or v < 0 or (v and (op.async_copy or op.kind in TMA_KINDS)):
                raise KernelError(f"{name}: '{op.name}' {attr}={v!r} must be a whole number >= 0, on an instruction "
                                  "the warp issues itself (not a TMA copy or an async store)")
    for bar, count in kernel.mbarriers.items():
        if not isinstance(count, int) or count < 1:
            raise KernelError(f"{name}: mbarrier '{bar}' needs a positive arrival count, got {count!r}")
    if kernel.warpgroup_regs is not None:
        threads = kernel.launch.threads_per_block
        groups = -(-threads // WARPGROUP_THREADS)
        regs = kernel.warpgroup_regs
        if len(regs) != groups:
            raise KernelError(f"{name}: setmaxnreg lists {len(regs)} warpgroups, the block has {groups}")
        for r in regs:
            lo, hi = SETMAXNREG_RANGE
            if r % SETMAXNREG_STEP or not lo <= r <= hi:
                raise KernelError(f"{name}: setmaxnreg {r} must be a multiple of {SETMAXNREG_STEP} in {lo}..{hi}")
        if WARPGROUP_THREADS * sum(regs) > kernel.launch.regs_per_thread * threads:
            raise KernelError(f"{name}: setmaxnreg {'/'.join(map(str, regs))} per warpgroup needs "
                              f"{WARPGROUP_THREADS * sum(regs)} registers, more than the "
                              f"{kernel.launch.regs_per_thread} x {threads} the launch allocates")


def _where(e: Exception, file: str) -> str:
    import traceback

    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == file] or \
        traceback.extract_tb(e.__traceback__)
    at = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
    return f"{type(e).__name__}: {e}{at}"


def instructions_per_warp(ops, warp: int = 0) -> int:
    """Warp instructions warp ``warp`` issues for ``ops`` (inner loops unrolled): each memory operation its
    ``repeat`` (the shared-memory half of an asynchronous copy none, a TMA box one), each compute bundle
    ``count / units``, every other operation one. Set against ``gpusim sass``'s count of the same code, the
    difference is what the IR does not describe (address and loop-control work), which a kernel adds as an
    ``int32`` bundle."""
    n = 0
    for op in ops:
        if isinstance(op, Loop):
            n += op.trips * instructions_per_warp(op.body, warp)
        elif getattr(op, "warps", None) is not None and warp not in op.warps:
            continue
        elif isinstance(op, Mem):
            n += 0 if op.async_copy else 1 if op.kind in TMA_KINDS else op.repeat  # one UTMALDG / UTMASTG a box
        elif isinstance(op, Compute):
            n += op.count // op.units
        else:
            n += 1
    return n


def require_divisible(kernel: str, shape_name: str, value: int, tile_name: str, tile: int) -> None:
    """Raise a clear error when a kernel cannot tile a dimension."""
    if value % tile:
        raise KernelError(f"{kernel}: {shape_name}={value} is not a multiple of {tile_name}={tile}")


def _replace(obj, **kw):
    import dataclasses

    return dataclasses.replace(obj, **kw)


def _as_int(kernel: str, key: str, value) -> int:
    if isinstance(value, str) and not value.isascii():  # int() would read other scripts' digits ("\u0663" is 3)
        raise KernelError(f"{kernel}: {key}={value!r} must be an integer")
    try:
        v = int(value)
    except (TypeError, ValueError):
        raise KernelError(f"{kernel}: {key}={value!r} must be an integer") from None
    if v < 0:
        raise KernelError(f"{kernel}: {key}={v} must not be negative")
    return v


def _coerce(kernel: str, key: str, value, default, choices):
    if isinstance(default, bool):
        ok = {"0": False, "1": True, "false": False, "true": True}
        if str(value).lower() not in ok:
            raise KernelError(f"{kernel}: {key}={value!r} must be 0 or 1")
        v = ok[str(value).lower()]
    elif isinstance(default, int):
        v = _as_int(kernel, key, value)
        if v == 0 and default != 0:  # a parameter whose default is 0 means something by it (fa2's br=0: automatic)
            raise KernelError(f"{kernel}: {key}={v} must be positive")
    else:
        v = str(value)
    if choices is not None and v not in choices:
        raise KernelError(f"{kernel}: {key}={v!r} is not one of {', '.join(map(str, choices))}")
    return v
