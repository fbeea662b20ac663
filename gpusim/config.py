"""Strict hardware-config loader.

A config is a TOML file with a top-level ``name``, ``gpu_model`` and ``device_names`` (the names the CUDA driver
reports for the GPU: measurement files are matched against them exactly) and one table per hardware unit. Every
number is an inline table ``{ value = ..., source = "..." }``: the value with its unit in the key's name and
where it comes from (a datasheet, a paper, or one of our microbenchmarks in ``validate/``). Unknown,
missing, mistyped or out-of-range keys fail at load time with the file, the key and the allowed range, and so do
fields that contradict each other (:data:`CONSISTENCY`: e.g. an L1 slower than the L2).

Generations differ: what only some GPUs have (:data:`FEATURES`: Hopper's TMA, wgmma and thread-block clusters) is
optional, all of a feature's keys or none, and a config without it holds ``None`` there (``cfg.tma is None``). The
execution pipes are the sub-tables of ``[pipes]`` (``[pipes.fp32]``, ...), in the config's order. A config may
start from another: ``inherits = "h100_sxm"`` (a config beside it, by name, or a path relative to it) takes every
table of that one and replaces only the keys it sets itself; the sources of what it inherits say so.

The bundled configs live in the package (``gpusim/configs/``), so an installed gpusim finds them from any folder.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpusim.chip_spec import ChipSpec
from gpusim.inputs import quote, read_text
from gpusim.memory.hbm import HbmSpec
from gpusim.memory.l1 import L1Spec
from gpusim.memory.l2 import L2Spec
from gpusim.memory.shared import SharedMemorySpec
from gpusim.memory.tma import TmaSpec
from gpusim.sm.icache import IcacheSpec
from gpusim.sm.occupancy import SmSpec
from gpusim.sm.pipes import PipesSpec
from gpusim.sm.scheduler import SchedulerSpec

CONFIG_DIR = Path(__file__).resolve().parent / "configs"  # the bundled configs, part of the package
DEFAULT_CONFIG = CONFIG_DIR / "h100_sxm.toml"

SECTIONS: dict[str, type] = {
    "chip": ChipSpec,
    "sm": SmSpec,
    "scheduler": SchedulerSpec,
    "pipes": PipesSpec,
    "shared_memory": SharedMemorySpec,
    "l1": L1Spec,
    "l2": L2Spec,
    "hbm": HbmSpec,
    "tma": TmaSpec,
    "icache": IcacheSpec,
}
OPTIONAL_SECTIONS = ("tma",)  # a GPU without the unit leaves the table out (FEATURES says which feature it is)
# What only some GPU generations have: the feature's name -> its parts, every one present or none ("section", a
# "section.field" marked feature= in its spec, or "pipes.NAME" for a pipe), and what it is (for errors).
FEATURES: dict[str, tuple[tuple[str, ...], str]] = {
    "tma": (("tma", "chip.tensor_map_param_launch_ns"), "the Tensor Memory Accelerator (Hopper, sm_90)"),
    "wgmma": (("pipes.wgmma", "chip.sm_clock_wgmma_saturated_hz"), "warpgroup MMA, wgmma.mma_async (Hopper, sm_90)"),
    "clusters": (("sm.max_cluster_ctas",), "thread-block clusters (Hopper, sm_90)"),
}


def bundled_configs() -> list[str]:
    """The names of the bundled configs (``--config NAME``), the default first."""
    return sorted((p.stem for p in CONFIG_DIR.glob("*.toml")), key=lambda n: (n != DEFAULT_CONFIG.stem, n))


class ConfigError(ValueError):
    """A malformed hardware config; the message names the file and the key."""


@dataclass(frozen=True)
class HardwareConfig:
    """One GPU's hardware description, as frozen unit specs."""

    path: str
    name: str
    gpu_model: str
    device_names: tuple[str, ...]  # what the CUDA driver calls this GPU: measurements must come from one of them
    chip: ChipSpec
    sm: SmSpec
    scheduler: SchedulerSpec
    pipes: PipesSpec
    shared_memory: SharedMemorySpec
    l1: L1Spec
    l2: L2Spec
    hbm: HbmSpec
    tma: TmaSpec | None  # None: a GPU without TMA (before Hopper)
    icache: IcacheSpec
    sources: dict[str, str]
    inherits: tuple[str, ...] = ()  # the configs this one starts from, nearest first

    def cycles_to_ns(self, cycles: float) -> float:
        return cycles / self.chip.sm_clock_hz * 1e9

    def has(self, feature: str) -> bool:
        """Whether the GPU has ``feature`` (a key of :data:`FEATURES`)."""
        return _present(self, FEATURES[feature][0][0])

    @property
    def features(self) -> tuple[str, ...]:
        return tuple(f for f in FEATURES if self.has(f))

    def missing(self, feature: str) -> str:
        """The one-line reason a kernel that needs ``feature`` cannot run on this config ("" if it has it)."""
        if self.has(feature):
            return ""
        parts, what = FEATURES[feature]
        return (f"needs {feature} ({what}), which the {self.name} config does not have "
                f"(no {_part_text(parts[0])} in {self.path})")


def _part_text(part: str) -> str:
    return f"[{part}]" if "." not in part or part.startswith("pipes.") else f"[{part.split('.')[0]}] " \
        f"{part.split('.')[1]}"


def _present(specs, part: str) -> bool:
    """Whether a FEATURES part is in a config (``specs``: a HardwareConfig or the loader's dict of specs)."""
    get = specs.get if isinstance(specs, dict) else lambda k: getattr(specs, k)
    if "." not in part:
        return get(part) is not None
    section, name = part.split(".")
    if section == "pipes":
        return get("pipes").pipe(name) is not None
    return getattr(get(section), name) is not None


def load_config(path: str | Path | None = None) -> HardwareConfig:
    """Load and validate a hardware config (default: the H100 SXM)."""
    p = path if path is not None else DEFAULT_CONFIG  # as given: an empty path stays '', not '.'
    where = quote(p)
    raw, chain = _read(p, ())
    expected = {"name", "gpu_model", "device_names", "inherits", *SECTIONS}
    for key in raw:
        if key not in expected:
            raise ConfigError(f"{where}: unknown key {key!r} (allowed: {', '.join(sorted(expected))})")
    for key in ("name", "gpu_model"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise ConfigError(f"{where}: '{key}' must be a non-empty string")
    names = raw.get("device_names")
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n.strip() for n in names):
        raise ConfigError(f"{where}: 'device_names' must be a non-empty list of the names the CUDA driver reports "
                          "for this GPU (cudaDeviceProp.name)")
    specs: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for section, cls in SECTIONS.items():
        table = raw.get(section)
        if table is None and section in OPTIONAL_SECTIONS:
            specs[section] = None
            continue
        if not isinstance(table, dict):
            raise ConfigError(f"{where}: missing table [{section}]")
        specs[section] = _build(cls, table, f"{where}: [{section}]", sources, section)
    _check_features(specs, where)
    _check_consistency(specs, where)
    return HardwareConfig(path=os.fspath(p), name=raw["name"], gpu_model=raw["gpu_model"], device_names=tuple(names),
                          sources=sources, inherits=chain[1:], **specs)


INHERITED = "inherited from {file}: "  # how the source of an inherited number begins


def _read(p: str | Path, seen: tuple[str, ...]) -> tuple[dict, tuple[str, ...]]:
    """The TOML of config ``p`` with what it inherits merged in (its own keys win), and the chain of files read
    (``p`` first). A parent is named by ``inherits``: a bundled-style name looked up beside ``p``, or a path
    relative to ``p``'s folder."""
    where = quote(p)
    text = read_text(p, "config file", ConfigError)
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{where}: not valid TOML: {e}") from None
    except RecursionError:
        raise ConfigError(f"{where}: not valid TOML: nested too deeply") from None
    here = os.fspath(p)
    if "inherits" not in raw:
        return raw, (here,)
    parent = raw["inherits"]
    if not isinstance(parent, str) or not parent.strip():
        raise ConfigError(f"{where}: 'inherits' must name a config: a bundled-style name such as \"h100_sxm\" (a "
                          "file beside this one) or a path relative to this file")
    folder = Path(p).parent
    cand = folder / parent if parent.endswith(".toml") else folder / f"{parent}.toml"
    key = os.path.realpath(cand)
    chain = (*seen, os.path.realpath(here))
    if key in chain:
        loop = " -> ".join(Path(c).name for c in (*chain, key))
        raise ConfigError(f"{where}: 'inherits' = {parent!r} makes a cycle ({loop})")
    if not cand.is_file():
        raise ConfigError(f"{where}: 'inherits' = {parent!r}: no config {quote(cand)}")
    base, parents = _read(cand, chain)
    name = Path(parents[0]).name
    merged = {k: v for k, v in base.items() if k != "inherits"}
    for section, table in merged.items():  # what comes from the parent says so in its source
        if section in SECTIONS and isinstance(table, dict):
            merged[section] = _mark_inherited(table, name)
    for k, v in raw.items():
        if k == "inherits":
            continue
        merged[k] = _merge(merged.get(k), v) if k in SECTIONS else v
    return merged, (here, *parents)


def _mark_inherited(table: dict, name: str) -> dict:
    out = {}
    for k, v in table.items():
        if isinstance(v, dict) and set(v) == {"value", "source"} and isinstance(v["source"], str):
            src = v["source"]
            out[k] = {"value": v["value"], "source": src if src.startswith("inherited from ")
                      else INHERITED.format(file=name) + src}
        elif isinstance(v, dict) and "value" not in v:
            out[k] = _mark_inherited(v, name)
        else:
            out[k] = v
    return out


def _merge(base: Any, over: Any) -> Any:
    """A section of the parent with the child's keys over it; a sub-table (``[pipes.fp32]``) merged key by key."""
    if not isinstance(base, dict) or not isinstance(over, dict):
        return over
    out = dict(base)
    for k, v in over.items():
        sub = isinstance(v, dict) and "value" not in v and "source" not in v
        out[k] = _merge(base.get(k), v) if sub else v
    return out


def _check_features(specs: dict[str, Any], where: str) -> None:
    """A generation's feature is all there or not at all: a config with [tma] but no tensor-map launch cost, or a
    wgmma clock without a wgmma pipe, describes half a feature."""
    for feature, (parts, _) in FEATURES.items():
        have = [part for part in parts if _present(specs, part)]
        if have and len(have) < len(parts):
            lack = [_part_text(part) for part in parts if part not in have]
            raise ConfigError(f"{where}: {_part_text(have[0])} is given but {', '.join(lack)} is not: the "
                              f"{feature} feature's keys come together ({', '.join(map(_part_text, parts))}), "
                              "or none of them for a GPU without it")


# Physical consistency across fields: (smaller, larger, strict, why). Each side is "section.field"; a rule holds
# when smaller < larger (strict) or smaller <= larger.
CONSISTENCY = (
    ("hbm.achievable_bandwidth_bytes_per_second", "hbm.peak_bandwidth_bytes_per_second", False,
     "sustained HBM bandwidth cannot exceed the peak"),
    ("l1.hit_latency_cycles", "l2.hit_latency_near_cycles", True, "an L1 hit is faster than an L2 hit"),
    ("l2.hit_latency_near_cycles", "l2.hit_latency_far_cycles", False,
     "the near L2 partition is no slower than the far one"),
    ("l2.hit_latency_far_cycles", "hbm.load_latency_cycles", True, "an L2 hit is faster than an HBM access"),
    ("shared_memory.load_latency_cycles", "l2.hit_latency_near_cycles", True,
     "shared memory is faster than an L2 hit"),
    ("tma.l2_latency_cycles", "tma.hbm_latency_cycles", True, "a TMA copy from L2 completes before one from HBM"),
    ("l2.reuse_all_hit_footprint_ratio", "l2.reuse_all_miss_footprint_ratio", True,
     "re-reads begin to miss before they all miss"),
    ("l2.writeback_all_kept_footprint_ratio", "l2.writeback_all_gone_footprint_ratio", True,
     "dirty lines begin to leave before they have all left"),
    ("sm.max_threads_per_block", "sm.max_threads_per_sm", False, "one block must fit on an SM"),
    ("sm.max_threads_per_sm", "sm.max_warps_per_sm * sm.warp_size_threads", False,
     "resident threads come in resident warps"),
    ("sm.max_ctas_per_sm", "sm.max_warps_per_sm", False, "every resident block holds at least one warp"),
    ("sm.max_registers_per_block", "sm.registers_per_sm", False, "one block's registers must fit on an SM"),
    ("sm.register_allocation_unit_registers", "sm.registers_per_sm", False,
     "the register allocation unit must fit on an SM"),
    ("sm.smem_per_block_max_bytes", "sm.smem_per_sm_max_bytes", False, "one block's shared memory must fit on an SM"),
    ("sm.smem_per_sm_max_bytes", "sm.unified_l1_smem_bytes", False,
     "the shared-memory carve-out is part of the unified L1"),
    ("max(shared_memory.carveouts_bytes)", "sm.unified_l1_smem_bytes", False,
     "a shared-memory carve-out is part of the unified L1"),
    ("sm.smem_per_sm_max_bytes", "max(shared_memory.carveouts_bytes)", False,
     "the largest per-SM shared memory must be one of the carve-outs"),
    ("l2.size_bytes", "hbm.capacity_bytes", True, "the L2 caches part of HBM"),
    ("chip.sm_clock_wgmma_saturated_hz", "chip.sm_clock_mma_sync_saturated_hz", False,
     "the clock under wgmma is no higher than under mma.sync"),
    ("chip.sm_clock_mma_sync_saturated_hz", "chip.sm_clock_hz", False,
     "the clock under tensor work is no higher than the SM clock"),
    ("l2.sector_bytes", "hbm.fetch_granularity_bytes", False, "a miss fetches whole sectors from HBM"),
    ("hbm.fetch_granularity_bytes", "hbm.near_block_bytes", False, "a DRAM row span holds whole fetch blocks"),
    ("l1.line_bytes", "l2.size_bytes", False, "the L2 holds whole lines"),
)
# Sizes that are powers of two (address bits select them) and sizes that are whole numbers of a unit: (the field,
# the unit as a CONSISTENCY side, what the unit is). A config breaking them describes hardware that cannot be built
# (3 banks, a 33-byte fetch, an L2 of 1,048,577 B), and the model's address arithmetic assumes them.
POWERS_OF_TWO = ("shared_memory.banks", "shared_memory.bank_width_bytes", "l1.sector_bytes", "l1.line_bytes",
                 "l2.sector_bytes", "hbm.fetch_granularity_bytes", "hbm.near_block_bytes", "icache.instruction_bytes",
                 "sm.register_allocation_unit_registers")
WHOLE_UNITS = (
    ("l2.size_bytes", "l1.line_bytes", "lines"),
    ("hbm.capacity_bytes", "hbm.fetch_granularity_bytes", "fetch blocks"),
    ("hbm.near_block_bytes", "hbm.fetch_granularity_bytes", "fetch blocks"),
    ("l1.line_bytes", "l1.sector_bytes", "sectors"),
    ("sm.smem_per_sm_max_bytes", "shared_memory.banks * shared_memory.bank_width_bytes", "rows of the banks"),
    ("sm.smem_per_block_max_bytes", "shared_memory.banks * shared_memory.bank_width_bytes", "rows of the banks"),
    ("sm.smem_reserved_per_block_bytes", "shared_memory.banks * shared_memory.bank_width_bytes", "rows of the banks"),
    ("sm.unified_l1_smem_bytes", "l1.line_bytes", "lines"),
    ("shared_memory.carveouts_bytes", "shared_memory.banks * shared_memory.bank_width_bytes", "rows of the banks"),
    ("icache.loop_bytes", "icache.instruction_bytes", "instructions"),
    ("sm.max_threads_per_sm", "sm.warp_size_threads", "warps"),
)


def _value(specs: dict[str, Any], expr: str) -> Any:
    """The value of a CONSISTENCY side: ``section.field``, ``a * b`` or ``max(section.field)``; ``None`` where the
    config has no such part (a feature it lacks)."""
    if " * " in expr:
        a, b = (_value(specs, e) for e in expr.split(" * "))
        return None if a is None or b is None else a * b
    if expr.startswith("max("):
        v = _value(specs, expr[4:-1])
        return None if v is None else max(v)
    section, name = expr.split(".")
    return None if specs[section] is None else getattr(specs[section], name)


def _check_consistency(specs: dict[str, Any], where: str) -> None:
    """Fields that are each in range but contradict each other (the hardware could not be built), and keys whose
    allowed values depend on each other: sectors and lines are powers of two, a line is a whole number of
    sectors, and L1 and L2 use one sector size (the model moves L1 sectors to L2 one for one)."""
    l1, l2 = specs["l1"], specs["l2"]
    for expr in POWERS_OF_TWO:
        value = _value(specs, expr)
        if value & (value - 1):
            section, key = expr.split(".")
            raise ConfigError(f"{where}: [{section}] {key}: {value} is not a power of two")
    if l1.line_bytes < l1.sector_bytes:
        raise ConfigError(f"{where}: [l1] line_bytes: {l1.line_bytes} is smaller than sector_bytes "
                          f"({l1.sector_bytes}); a line holds whole sectors")
    if l2.sector_bytes != l1.sector_bytes:
        raise ConfigError(f"{where}: [l2] sector_bytes: {l2.sector_bytes} differs from [l1] sector_bytes "
                          f"({l1.sector_bytes}); gpusim needs one sector size")
    for small, large, strict, why in CONSISTENCY:
        a, b = _value(specs, small), _value(specs, large)
        if a is None or b is None:  # a feature the GPU does not have
            continue
        if a > b or (strict and a == b):
            raise ConfigError(f"{where}: {small} = {a:g} must be {'<' if strict else '<='} {large} = {b:g} ({why})")
    for expr, unit_expr, units in WHOLE_UNITS:
        unit = _value(specs, unit_expr)
        values = _value(specs, expr)
        for value in values if isinstance(values, tuple) else (values,):
            if value % unit:
                section, key = expr.split(".")
                raise ConfigError(f"{where}: [{section}] {key}: {value} is not a whole number of {units} "
                                  f"({unit_expr} = {unit})")
    for section in ("l2", "hbm"):
        spec = specs[section]
        xs, ys = spec.loaded_utilization_pct, spec.loaded_added_cycles
        if len(xs) != len(ys):
            raise ConfigError(f"{where}: [{section}] loaded_utilization_pct and loaded_added_cycles must have the same "
                              f"length ({len(xs)} and {len(ys)})")
        if list(xs) != sorted(set(xs)):
            raise ConfigError(f"{where}: [{section}] loaded_utilization_pct must be strictly increasing")
    icache = specs["icache"]
    if len(icache.loop_bytes) != len(icache.fetch_cycles_per_instruction):
        raise ConfigError(f"{where}: [icache] loop_bytes and fetch_cycles_per_instruction must have the same length "
                          f"({len(icache.loop_bytes)} and {len(icache.fetch_cycles_per_instruction)})")
    if list(icache.loop_bytes) != sorted(set(icache.loop_bytes)):
        raise ConfigError(f"{where}: [icache] loop_bytes must be strictly increasing")
    carveouts = specs["shared_memory"].carveouts_bytes
    if list(carveouts) != sorted(set(carveouts)):
        raise ConfigError(f"{where}: shared_memory.carveouts_bytes must be strictly increasing")


def _build(cls: type, table: dict, where: str, sources: dict[str, str], section: str) -> Any:
    fields = {f.name: f for f in dataclasses.fields(cls)}
    hints = typing.get_type_hints(cls)
    tables = [f for f in fields.values() if "table_of" in f.metadata]
    for key in table:
        if key not in fields and not tables:
            raise ConfigError(f"{where} unknown key {key!r} (allowed: {', '.join(fields)})")
    values = {}
    for f in tables:  # [section.NAME] sub-tables: every key that is not one of the section's own fields
        item, parts = f.metadata["table_of"], []
        for key, sub in table.items():
            if key in fields:
                continue
            if not isinstance(sub, dict) or "value" in sub or "source" in sub or not key.isidentifier():
                allowed = ", ".join(n for n in fields if n != f.name)
                raise ConfigError(f"{where} unknown key {key!r} (allowed: {allowed}, or a sub-table "
                                  f"[{section}.NAME] for each of {f.metadata['doc']})")
            parts.append((key, _build(item, sub, f"{where[:-1]}.{key}]", sources, f"{section}.{key}")))
        if not parts:
            raise ConfigError(f"{where} has no sub-table [{section}.NAME]: {f.metadata['doc']} are declared there")
        values[f.name] = tuple(parts)
    for name, f in fields.items():
        if "table_of" in f.metadata:
            continue
        if name not in table:
            if f.metadata["feature"]:  # a generation's optional field: None where the GPU lacks it
                continue
            raise ConfigError(f"{where} missing key '{name}' ({f.metadata['doc']})")
        entry = table[name]
        if not isinstance(entry, dict) or set(entry) != {"value", "source"}:
            raise ConfigError(f"{where} {name}: must be an inline table {{ value = ..., source = \"...\" }}")
        if not isinstance(entry["source"], str) or not entry["source"].strip():
            raise ConfigError(f"{where} {name}: 'source' must name where the number comes from")
        values[name] = _check(entry["value"], _required(hints[name]), f.metadata, f"{where} {name}")
        sources[f"{section}.{name}"] = entry["source"]
    one_of = getattr(cls, "ONE_OF", ())
    if one_of and sum(values.get(n) is not None for n in one_of) != 1:
        raise ConfigError(f"{where} needs exactly one of {' and '.join(one_of)}")
    return cls(**values)


def _required(hint: Any) -> Any:
    """``int`` of ``int | None`` (an optional field's value, when given, is checked as the type itself)."""
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    return args[0] if type(None) in typing.get_args(hint) and len(args) == 1 else hint


def _check(value: Any, hint: Any, meta: dict, where: str) -> Any:
    if meta["choices"]:
        if value not in meta["choices"]:
            raise ConfigError(f"{where}: {value!r} is not one of {', '.join(meta['choices'])}")
        return value
    if typing.get_origin(hint) is tuple:
        item = typing.get_args(hint)[0]
        if not isinstance(value, list) or not value:
            raise ConfigError(f"{where}: must be a non-empty list of {'integers' if item is int else 'numbers'}")
        return tuple(_check(v, item, meta, where) for v in value)
    if hint is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ConfigError(f"{where}: {value!r} must be an integer")
    if hint is float and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise ConfigError(f"{where}: {value!r} must be a number")
    lo, hi = meta["lo"], meta["hi"]
    if not lo <= value <= hi:
        raise ConfigError(f"{where}: {value} is out of range [{lo:g}, {hi:g}]")
    return float(value) if hint is float else value
