"""The CUDA front-end: a kernel as it is written (a ``.cu`` file, a cubin or a SASS listing) to the engine's IR.

    from gpusim.frontend import kernel_from_source
    k = kernel_from_source("my.cu", "my_kernel", grid=(64, 1, 1), block=(256, 1, 1),
                           args=["x=f32[16384]", "y=f32[16384]", "n=16384"])

The steps, one module each: :mod:`~gpusim.frontend.build` compiles the source for sm_90 and reads its SASS and
resources; :mod:`~gpusim.frontend.args` lays out the arguments; :mod:`~gpusim.frontend.machine` emulates the compiled
code for a batch of CTAs (:mod:`~gpusim.frontend.semantics`: what each instruction does;
:mod:`~gpusim.frontend.memory`: global, shared and local memory); :mod:`~gpusim.frontend.trace` records what each warp
executed and where it pointed; :mod:`~gpusim.frontend.lower` writes it as IR operations the engine times. The
emulator decides *what* each warp executes and which addresses it touches; the engine decides *when*.
"""

from __future__ import annotations

import dataclasses

from gpusim.ir import KernelError

from pathlib import Path

import numpy as np

from gpusim import ir
from gpusim.config import HardwareConfig
from gpusim.frontend import args as fargs
from gpusim.frontend import build as fbuild
from gpusim.frontend.lower import Context
from gpusim.frontend.lower import build as lower_build
from gpusim.frontend.machine import WARP, Launch, Machine
from gpusim.frontend.memory import GlobalMemory
from gpusim.frontend.trace import Batch, Grid, LoweringError, Recorder, cta_refs, ref_of, segment




class FrontendError(KernelError):
    """Anything the front-end refuses, in one line."""


def compile_source(path: str | Path, arch: str = "sm_90", defines: tuple[str, ...] = (),
                   compiler: str = "nvcc") -> list[fbuild.CompiledKernel]:
    """The kernels of a ``.cu`` file (compiled by nvcc or NVRTC), a cubin or a ``cuobjdump -sass`` listing."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix == ".cu":
        return fbuild.compile_cuda(p, arch, tuple(defines), compiler=compiler)
    if suffix == ".cubin":
        return fbuild.load_cubin(p)
    if suffix == ".sass":
        return fbuild.load_sass(p)
    if suffix == ".py":  # its signature comes from the arguments: compiled with them
        raise fbuild.BuildError(f"{p}: a Triton file compiles with its arguments: use "
                                "gpusim.frontend.triton.kernel_from_triton (or api.predict_triton)")
    raise fbuild.BuildError(f"{p}: expected a .cu, .cubin or .sass file")


def _dims(value, what: str) -> tuple[int, int, int]:
    if isinstance(value, int):
        value = (value,)
    if isinstance(value, str):
        try:
            value = tuple(int(x) for x in value.split(","))
        except ValueError:
            raise FrontendError(f"--{what} {value!r}: expected up to three comma-separated integers") from None
    v = tuple(int(x) for x in value)
    if not 1 <= len(v) <= 3 or any(x < 1 for x in v):
        raise FrontendError(f"--{what} {value!r}: expected one to three positive integers")
    return (*v, *(1,) * (3 - len(v)))


def check_launch(grid, block, sm) -> None:
    """CUDA's launch limits, as the config's ``[sm]`` states them, checked before anything is emulated."""
    threads = block[0] * block[1] * block[2]
    if threads > sm.max_threads_per_block:
        raise FrontendError(f"--block {','.join(map(str, block))}: {threads} threads per block, CUDA allows "
                            f"{sm.max_threads_per_block}")
    caps = (("--block", "blockDim", block, (sm.max_block_dim_xy, sm.max_block_dim_xy, sm.max_block_dim_z)),
            ("--grid", "gridDim", grid, (sm.max_grid_dim_x, sm.max_grid_dim_yz, sm.max_grid_dim_yz)))
    for flag, what, dims, hi in caps:
        for axis, v, cap in zip("xyz", dims, hi, strict=True):
            if v > cap:
                raise FrontendError(f"{flag}: {what}.{axis}={v} exceeds CUDA's {cap}")


def resident_ctas(config: HardwareConfig, grid, block, regs: int, smem: int) -> list[tuple[int, int, int]]:
    """The CTAs the engine's L1 model places on the first SM (linear indices c * SMs): emulated with the batch, so
    that data-dependent addresses are known for every CTA the model asks about."""
    from gpusim.sm.occupancy import LaunchError, occupancy

    cfg = config
    try:
        occ = occupancy(cfg.sm, block[0] * block[1] * block[2], regs, smem, cfg.shared_memory.carveouts_bytes)
    except LaunchError as e:
        raise FrontendError(f"the launch does not fit an SM: {e}") from None
    gx, gy, gz = grid
    n = gx * gy * gz
    sms = cfg.chip.sm_count
    out = []
    for c in range(occ.ctas_per_sm):
        lin = c * sms
        if lin < n:
            out.append((lin % gx, (lin // gx) % gy, lin // (gx * gy)))
    return out


def _cluster(ck, grid, launch=None) -> tuple[int, int, int]:
    """The kernel's cluster: its ``__cluster_dims__``, or the launch's (``launch``, as cudaLaunchKernelEx's cluster
    attribute gives it; CUDA refuses a launch whose cluster differs from the kernel's own), which the IR takes along x
    only (``Kernel.cluster``)."""
    if launch is not None:
        launch = _dims(launch, "cluster")
        if tuple(ck.cluster) not in ((1, 1, 1), launch):
            raise FrontendError(f"--cluster {launch[0]},{launch[1]},{launch[2]}: {ck.name} declares "
                                f"__cluster_dims__({ck.cluster[0]}, {ck.cluster[1]}, {ck.cluster[2]})")
    cx, cy, cz = launch if launch is not None and launch != (1, 1, 1) else ck.cluster
    if (cy, cz) != (1, 1):
        raise FrontendError(f"{ck.name}: a cluster of {cx}x{cy}x{cz} CTAs: gpusim takes clusters along x only")
    if grid[0] % cx:
        raise FrontendError(f"--grid {grid[0]},{grid[1]},{grid[2]}: gridDim.x is not a multiple of the kernel's "
                            f"cluster of {cx} CTAs (CUDA launches whole clusters)")
    return (cx, cy, cz)


def _with_partners(ctas: list, cluster: tuple[int, int, int]) -> list:
    """``ctas`` and the other CTAs of each one's cluster (along x), in that order."""
    cx = cluster[0]
    out = list(ctas)
    for x, y, z in ctas:
        for r in range(cx):
            p = (x - x % cx + r, y, z)
            if p not in out:
                out.append(p)
    return out


def kernel_from_source(source: str | Path, kernel: str | None = None, *, grid, block, args: list[str],
                       smem_dynamic: int = 0, defines: tuple[str, ...] = (), arch: str = "sm_90", seed: int = 0,
                       max_steps: int = 400_000, compiled: list | None = None, compiler: str = "nvcc",
                       config=None, data: bool = False, cluster=None) -> ir.Kernel:
    """Compile (or read) ``source``, emulate ``kernel`` for the launch and describe it in the IR. ``data``: compute
    every value, not only those addresses and control flow need (the prediction is the same; slower). ``cluster``:
    the launch's thread-block cluster (X[,Y,Z]) for a kernel without ``__cluster_dims__``."""
    from gpusim.config import load_config

    config = config if config is not None else load_config()
    grid, block = _dims(grid, "grid"), _dims(block, "block")
    check_launch(grid, block, config.sm)
    if smem_dynamic < 0:
        raise FrontendError(f"--smem {smem_dynamic}: dynamic shared memory cannot be negative")
    kernels = compiled if compiled is not None else compile_source(source, arch, defines, compiler)
    ck = fbuild.pick(kernels, kernel, str(source))
    bound = fargs.bind(ck, list(args))
    bufs = fargs.tensor_buffers(bound, seed)
    device = fargs.device_buffers(ck.module, {b.name for b in bufs})  # __device__ variables: tensors of their own
    bufs += list(device.values())
    gmem = GlobalMemory(bufs)
    gmem.tmaps = [(t, [b.name for b in bufs].index(t.tensor)) for t in fargs.tmap_args(bound)]
    bases = {b.name: b.base for b in bufs}
    params = fargs.param_block(ck, bound, bases)
    smem = ck.static_smem_bytes + smem_dynamic
    cluster = _cluster(ck, grid, cluster)
    const4, calls = fargs.const4_block(ck.module, device)
    launch = Launch(grid, block, smem, ck.stack_bytes, params, cluster, ck.module.const3, const4, calls,
                    ck.module.const2.get(ck.mangled, b""))
    ctas = cta_refs(grid)
    for c in resident_ctas(config, grid, block, ck.regs or 32, smem):  # the first SM's CTAs (its L1 stream)
        if c not in ctas:
            ctas.append(c)
    if cluster != (1, 1, 1):  # a cluster's CTAs arrive on each other's mbarriers and multicast into each other
        ctas = _with_partners(ctas, cluster)
    no_jump: frozenset = frozenset()
    for _ in range(3):
        rec = Recorder()
        m = Machine(ck.program, launch, ctas, gmem, rec, max_steps, no_jump, data=data)
        m.run()
        lane_trips = m.jump.trips if m.jump is not None else None
        batch = Batch(ctas, Grid(grid, cluster), m.T // WARP, rec.recs, m.jump, lane_trips)
        try:
            mid = tuple(g // 2 for g in grid)
            base = ctas.index(ref_of(mid, batch.grid))
            threads = block[0] * block[1] * block[2]
            tensors = [ir.Tensor(b.name, b.size_bytes) for b in bufs]
            loop_insts = (m.jump.back - m.jump.head + 1) if m.jump is not None else 0
            notes = "; ".join(m.notes)
            regs = ck.regs or 32
            kernel_ir = None
            try:
                seg = segment(rec.recs, rec.loops, m.jump)
                if seg.lane_trips is not None:  # a loop split from its tail iterations: their trips, per lane
                    batch.lane_trips = seg.lane_trips
                    # the CTA whose warps decide who executes a bundle runs the most iterations (the interior CTA
                    # 1 of causal attention runs one, and its warps are idle in the later recorded iterations)
                    base = int(np.argmax(seg.cta_trips(len(ctas), batch.warps_per_cta)))
            except LoweringError as e:  # warp-specialized roles: each role's loop lowered apart, then joined
                if m.hopper is None or "warp-specialized" not in str(e):
                    raise
                if m.jump is not None:
                    raise LoweringError(str(e), retry_without_jump=True) from None
                kernel_ir = _lower_roles(ck, batch, base, bufs, threads, grid, block, regs, smem, tensors, notes,
                                         config.pipes.match_slots_per_distinct_value)
            if kernel_ir is None:
                ctx = Context(batch, seg, [b.name for b in bufs], threads, m.T // WARP, base, ck.stack_bytes,
                              threads * grid[0] * grid[1] * grid[2],
                              match_slots_per_distinct_value=config.pipes.match_slots_per_distinct_value)
                kernel_ir = lower_build(ck.name, ck.program, ctx, ir.Launch(grid, block, regs, smem), tensors,
                                        ck.source, notes, loop_insts)
            if cluster[0] > 1:  # partners' multicast halves and arrivals: symmetric, as the CTA's own
                kernel_ir = dataclasses.replace(kernel_ir, cluster=cluster[0])
            from gpusim.kernel_checks import check_kernel

            # the layer every kernel passes (its guards of user code are not needed: the address functions are ours)
            check_kernel(kernel_ir, config, str(source))
            return kernel_ir
        except LoweringError as e:
            if not e.retry_without_jump or m.jump is None:
                raise
            no_jump = no_jump | {m.jump.head}
    raise LoweringError("the kernel's loops could not be summarised")


def _lower_roles(ck, batch, base, bufs, threads, grid, block, regs, smem, tensors, notes,
                 match_slots: float) -> ir.Kernel:
    """A warp-specialized kernel (emulated in full): each role's steps lowered as a kernel of their own, then joined
    into one program (:func:`gpusim.frontend.hopper.merge_roles`)."""
    import dataclasses

    from gpusim.frontend import hopper_lower as hopper

    warps = batch.warps_per_cta
    role_list = hopper.roles(batch.recs, warps, base)
    def lower_role(role, summarise: bool, trips: int | None = None, peel: int = 0):
        recs, loops = hopper.role_recs(batch.recs, role, warps, ck.program, len(batch.ctas), peel)
        b = Batch(batch.ctas, batch.grid, warps, recs, None, None)
        seg = segment(recs, loops if summarise else [], None, trips=trips, uneven=True)
        role_base = base
        if seg.lane_trips is not None:  # a loop split from its tail iterations (causal attention): as in
            # kernel_from_source, its trips per lane
            b.lane_trips = seg.lane_trips
        # the CTA that runs the most decides who executes a bundle (emulated in full: where its CTAs run different
        # trips)
        runs = seg.cta_trips(len(batch.ctas), warps)
        if runs is not None and (seg.lane_trips is not None or len(set(runs)) > 1):
            role_base = int(np.argmax(runs))
        ctx = Context(b, seg, [x.name for x in bufs], threads, warps, role_base, ck.stack_bytes,
                      threads * grid[0] * grid[1] * grid[2], match_slots_per_distinct_value=match_slots)
        return lower_build(ck.name, ck.program, ctx, ir.Launch(grid, block, regs, smem), tensors, ck.source, notes, 0)

    kernels = [lower_role(role, True) for role in role_list]
    # the role with the most warps keeps its loop; a role whose loop runs more trips (a producer that loads the
    # block of the consumers' last turn, which follows their loop) keeps as many and writes the others after it; one
    # that runs fewer is written out in full. Where the CTAs run different trips (causal attention), the extra
    # iterations go before the loop instead: their mbarrier phases count from the kernel's start, the same in every
    # CTA, where after the loop they would follow each CTA's trips
    main = max(range(len(role_list)), key=lambda i: (kernels[i].loop is not None, len(role_list[i])))
    trips = kernels[main].loop.trips if kernels[main].loop is not None else None
    main_trips_of = kernels[main].trips_of
    ctas = [c[0] + grid[0] * (c[1] + grid[1] * c[2]) for c in batch.ctas]

    def fit(k, r):
        if main_trips_of is not None and k.loop is not None:
            if k.trips_of is None:
                return k
            extra = {k.trips_of(i) - main_trips_of(i) for i in ctas}
            if len(extra) == 1 and (d := extra.pop()) > 0:
                return lower_role(r, True, peel=d)
            return k
        if k.loop is None or k.loop.trips == trips:
            return k
        if trips is not None and k.loop.trips > trips:
            cut = lower_role(r, True, trips)
            if cut.loop is not None and cut.loop.trips == trips:
                return cut
        return lower_role(r, False)
    kernels = [fit(k, r) for k, r in zip(kernels, role_list, strict=True)]
    pro, loop, epi, bars = hopper.merge_roles(kernels, role_list)
    flops = sum(k.flops for k in kernels)
    note = f"warp-specialized: {len(role_list)} roles (warps {'; '.join(map(str, role_list))}) lowered apart"
    return dataclasses.replace(kernels[0], prologue=pro, loop=loop, epilogue=epi, mbarriers=bars, flops=flops,
                               notes="; ".join(x for x in (notes, note) if x), trips_of=main_trips_of,
                               varying=frozenset().union(*(k.varying for k in kernels)))
