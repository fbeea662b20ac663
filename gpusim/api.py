"""The one-call entry point: kernel name + shape + knobs -> ncu-named metrics; and many of them on a process pool."""

from __future__ import annotations

import copy
import multiprocessing
import os

from gpusim.chip import Simulation, simulate
from gpusim.config import HardwareConfig, load_config
from gpusim.ir import REGISTRY, KernelError
from gpusim.registry import build_kernel
from gpusim.kernel_checks import check_prediction
from gpusim.metrics import report
from gpusim.sm.occupancy import LaunchError
from gpusim.ncu import TIME


def predict(name: str, shape: tuple[int, ...], overrides: dict | None = None,
            config: HardwareConfig | str | None = None, trace: bool = False) -> tuple[dict, Simulation]:
    """Simulate one kernel launch; returns (metrics keyed by ncu names, the full simulation)."""
    cfg = config if isinstance(config, HardwareConfig) else load_config(config)
    kernel = build_kernel(name, tuple(shape), overrides, cfg)
    try:
        sim = simulate(kernel, cfg, trace=trace)
        metrics = report(sim)
        check_prediction(sim.kernel, sim.config, metrics[TIME] * 1e-9)
    except KernelError as e:  # an address expression of a user's file: say which file
        kd = REGISTRY.get(name)
        if kd is None or kd.origin != kd.file or kd.file in str(e):
            raise
        raise KernelError(f"{e} (in {kd.file})") from None
    return metrics, sim


def predict_source(source, kernel: str | None = None, *, grid, block, args: list[str], smem_dynamic: int = 0,
                   defines: tuple[str, ...] = (), compiler: str = "nvcc", config: HardwareConfig | str | None = None,
                   trace: bool = False, seed: int = 0, cluster=None) -> tuple[dict, Simulation]:
    """Simulate one launch of a CUDA kernel as it is written (a ``.cu`` file, a cubin or a SASS listing): compiled for
    sm_90 and emulated by the front-end (:mod:`gpusim.frontend`); returns (metrics keyed by ncu names, the
    simulation). ``cluster``: the launch's thread-block cluster, for a kernel without ``__cluster_dims__``."""
    from gpusim.frontend import kernel_from_source

    cfg = config if isinstance(config, HardwareConfig) else load_config(config)
    kernel_ir = kernel_from_source(source, kernel, grid=grid, block=block, args=args, smem_dynamic=smem_dynamic,
                                   defines=tuple(defines), compiler=compiler, config=cfg, seed=seed, cluster=cluster)
    sim = simulate(kernel_ir, cfg, trace=trace)
    return report(sim), sim


def predict_triton(source, kernel: str | None = None, *, grid, args: list[str], constexprs: dict | None = None,
                   num_warps: int = 4, num_stages: int = 3, config: HardwareConfig | str | None = None,
                   trace: bool = False, seed: int = 0) -> tuple[dict, Simulation]:
    """Simulate one launch of a ``@triton.jit`` kernel of a ``.py`` file: compiled for sm_90 by Triton (no GPU
    needed), then emulated as a CUDA kernel is (:mod:`gpusim.frontend.triton`); the block is ``32 * num_warps``
    threads, ``constexprs`` the ``tl.constexpr`` values. Returns (metrics keyed by ncu names, the simulation)."""
    from gpusim.frontend.triton import kernel_from_triton

    cfg = config if isinstance(config, HardwareConfig) else load_config(config)
    kernel_ir = kernel_from_triton(source, kernel, grid=grid, args=args, constexprs=constexprs, num_warps=num_warps,
                                   num_stages=num_stages, config=cfg, seed=seed)
    sim = simulate(kernel_ir, cfg, trace=trace)
    return report(sim), sim


def predict_many(points: list[tuple[str, tuple[int, ...], dict | None]], config: HardwareConfig | str | None = None,
                 workers: int | None = None, kernel_paths: tuple[str, ...] = (), progress=None) -> list:
    """Predict each (kernel, shape, overrides) of ``points``, independent launches, on ``workers`` processes (default:
    one per core; 1: in this process; each worker loads ``kernel_paths``). Returns, in the order of ``points``, the
    metrics of each, or the :class:`KernelError` or :class:`LaunchError` that point raised (the caller decides
    whether it is fatal).
    ``progress(done, total, kernel)`` is called as points finish. The answers are the same whatever ``workers``."""
    cfg = config if isinstance(config, HardwareConfig) else load_config(config)
    # a point given twice (the same row in two measurement files) is predicted once
    keys = [(name, tuple(shape), tuple(sorted((str(k), str(v)) for k, v in (overrides or {}).items())))
            for name, shape, overrides in points]
    copies: dict[tuple, list[int]] = {}
    for i, key in enumerate(keys):
        copies.setdefault(key, []).append(i)
    distinct = [same[0] for same in copies.values()]
    tasks = [(name, tuple(shape), overrides, cfg, tuple(kernel_paths)) for name, shape, overrides in
             (points[i] for i in distinct)]
    results: list = [None] * len(points)
    done = 0

    def finish(j: int, result) -> None:
        nonlocal done
        for i in copies[keys[distinct[j]]]:
            results[i] = result if i == distinct[j] else copy.deepcopy(result)  # each row its own metrics
            done += 1
            if progress:
                progress(done, len(points), tasks[j][0])

    workers = min(workers or os.cpu_count() or 1, len(tasks))
    if workers <= 1 or multiprocessing.current_process().daemon:  # a pool's worker may not start another pool
        for j, t in enumerate(tasks):
            finish(j, _point(t))
        return results
    run_processes(_point, tasks, finish, workers, tuple(kernel_paths))
    return results


def run_processes(fn, tasks: list, finish, workers: int, kernel_paths: tuple[str, ...] = ()) -> None:
    """``fn(task)`` for every task on a pool of ``workers`` processes (each loads ``kernel_paths`` first); calls
    ``finish(index, result)`` as they complete, in task order among those completing together. A task's exception
    is raised here; Ctrl-C is the parent's to handle (the workers ignore it); a worker whose parent dies (SIGKILL)
    exits too."""
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    pool = ProcessPoolExecutor(workers, initializer=_worker_init, initargs=(kernel_paths, os.getpid()))
    try:
        index = {pool.submit(fn, t): i for i, t in enumerate(tasks)}
        pending = set(index)
        while pending:
            ready, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in sorted(ready, key=index.get):
                finish(index[f], f.result())
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _point(task) -> dict | KernelError | LaunchError:
    """One point of :func:`predict_many`, in whichever process runs it."""
    from gpusim import loader

    name, shape, overrides, cfg, kernel_paths = task
    loader.load(kernel_paths)
    try:
        return predict(name, shape, overrides, cfg)[0]
    except (KernelError, LaunchError) as e:  # the caller decides
        return e


PARENT_POLL_S = 0.5  # how often a worker checks that its parent is alive


def _worker_init(kernel_paths: tuple[str, ...], parent: int | None = None) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it keeps what is done
    if parent is not None:
        _die_with_parent(parent)
    from gpusim import loader

    loader.load(kernel_paths)


def _die_with_parent(parent: int) -> None:
    """End this worker when its parent dies, however it dies (SIGKILL leaves the pool no chance to stop it): Linux
    sends SIGKILL at once (``PR_SET_PDEATHSIG``), and a daemon thread polling the parent covers every system."""
    import threading
    import time

    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_S)
        os._exit(1)

    if os.getppid() != parent:  # died before we got here
        os._exit(1)
    threading.Thread(target=watch, name="gpusim-parent-watch", daemon=True).start()
