"""The kernel registry's front door: a registered kernel looked up (every kernel source loaded first), its shape and
parameters checked, its IR built and validated by the one layer every kernel passes (:mod:`gpusim.kernel_checks`).
:mod:`gpusim.ir` holds the IR and the registry itself; this module is what uses them with the loader and the checks,
so that the IR imports neither."""

from __future__ import annotations

from gpusim.config import HardwareConfig
from gpusim.ir import (ATOMIC_RULES, KINDS, LAUNCH_KNOBS, REGISTRY, SPACES, Compute, Kernel, KernelDef, KernelError,
                       Launch, Mem, _as_int, _check_async, _coerce, _replace, _where)
from gpusim.sm.pipes import PIPES


def kernel_def(name: str) -> KernelDef:
    """The registered kernel ``name`` (every kernel source loaded first)."""
    from gpusim import loader

    loader.load()
    if name not in REGISTRY:
        raise KernelError(f"unknown kernel {name!r} (see 'gpusim list'; known: {', '.join(sorted(REGISTRY))})")
    return REGISTRY[name]


def check_shape(name: str, shape: tuple[int, ...]) -> KernelDef:
    """The registered kernel ``name``, after checking that ``shape`` has its number of positive dimensions."""
    kd = kernel_def(name)
    if len(shape) != len(kd.shape_names):
        raise KernelError(f"{name}: shape needs {len(kd.shape_names)} values "
                          f"({','.join(kd.shape_names)}), got {len(shape)}")
    for n, v in zip(kd.shape_names, shape, strict=True):
        if v <= 0:
            raise KernelError(f"{name}: shape {n}={v} must be positive")
    return kd


def resolve_params(name: str, overrides: dict | None = None) -> tuple[dict, dict]:
    """(every parameter of kernel ``name`` with the overrides applied and coerced to its type, the launch
    overrides ``regs_per_thread`` / ``smem_bytes``); an unknown key or a value outside a parameter's type or
    choices raises :class:`KernelError`."""
    kd = kernel_def(name)
    params = dict(kd.defaults)
    launch_overrides = {}
    for key, value in (overrides or {}).items():
        if key in LAUNCH_KNOBS:
            launch_overrides[key] = _as_int(name, key, value)
        elif key in params:
            params[key] = _coerce(name, key, value, params[key], kd.choices.get(key))
        else:
            allowed = ", ".join([*params, *LAUNCH_KNOBS])
            raise KernelError(f"{name}: unknown parameter {key!r} (allowed: {allowed})")
    return params, launch_overrides


def build_kernel(name: str, shape: tuple[int, ...], overrides: dict | None = None,
                 config: HardwareConfig | None = None) -> Kernel:
    """Build a registered kernel for ``config`` (default: the H100), validating the shape and every override."""
    kd = check_shape(name, shape)
    params, launch_overrides = resolve_params(name, overrides)
    from gpusim.config import load_config

    hw = config if config is not None else load_config()
    if kd.wants_hw:
        params["hw"] = hw
    try:
        kernel = kd.build(tuple(shape), **params)
    except KernelError:
        raise
    except (Exception, SystemExit) as e:  # a user's builder (sys.exit too): one line with its file and line
        raise KernelError(f"{name}: the builder raised {_where(e, kd.file)}") from None
    if not isinstance(kernel, Kernel):
        raise KernelError(f"{name}: the builder in {kd.file} returned {type(kernel).__name__}, not a Kernel")
    from gpusim.kernel_checks import check_kernel

    kernel = check_kernel(kernel, hw, kd.file)  # the one validation layer every kernel passes (launch, program, code)
    for op in kernel.all_ops():
        if isinstance(op, Compute) and op.pipe not in PIPES:
            raise KernelError(f"{name}: '{op.name}' names unknown pipe '{op.pipe}' (known: {', '.join(PIPES)})")
        if isinstance(op, Mem) and (op.space not in SPACES or op.kind not in KINDS):
            raise KernelError(f"{name}: '{op.name}' has space '{op.space}' and kind '{op.kind}' "
                              f"(allowed: {', '.join(SPACES)} / {', '.join(KINDS)})")
        if isinstance(op, Mem) and (op.atomic not in ATOMIC_RULES or op.atomic and (op.kind != "st" or op.async_copy)):
            raise KernelError(f"{name}: atomic '{op.name}' needs kind 'st' (its traffic is a store's) and atomic one "
                              f"of {', '.join(repr(r) for r in ATOMIC_RULES)}")
        if isinstance(op, Mem) and op.reduction and not (op.atomic and op.space == "global"):
            raise KernelError(f"{name}: '{op.name}' has reduction=True: only a global atomic can be a reduction (RED)")
        if isinstance(op, Mem) and op.kind in ("ldsm", "stsm") and (
                op.space != "shared" or op.matrices not in (1, 2, 4) or op.width_bytes != 16):
            raise KernelError(f"{name}: '{op.name}' ({op.kind}) needs space 'shared', width_bytes=16 and "
                              f"matrices in 1, 2, 4 (got {op.space}, {op.width_bytes}, {op.matrices})")
    if launch_overrides:  # before the checks of the launch: setmaxnreg must fit the registers really allocated
        launch = kernel.launch
        smem = launch_overrides.get("smem_bytes", launch.smem_bytes)
        if smem < launch.smem_bytes:  # the builder's buffers (TMA destinations included) need what it declares
            raise KernelError(f"{name}: smem_bytes={smem} is below the {launch.smem_bytes} B of shared memory the "
                              "kernel's buffers need")
        kernel = _replace(kernel, launch=Launch(launch.grid, launch.block,
                                                launch_overrides.get("regs_per_thread", launch.regs_per_thread), smem))
    _check_async(kernel)
    return kernel
