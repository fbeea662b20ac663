"""Strict hardware-config loader.

A config is a TOML file with a top-level ``name``, ``gpu_model`` and ``device_names`` (the names the CUDA driver
reports for the GPU: measurement files are matched against them exactly) and one table per hardware unit. Every
number is an inline table ``{ value = ..., source = "..." }``: the value with its unit in the key's name and
where it comes from (a datasheet, a paper, or one of our microbenchmarks in ``validate/``). Unknown,
missing, mistyped or out-of-range keys fail at load time with the file, the key and the allowed range, and so do
fields that contradict each other (:data:`CONSISTENCY`: e.g. an L1 slower than the L2).
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

CONFIG_DIR = Path(__file__).resolve().parent.parent / "configs"
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
    tma: TmaSpec
    icache: IcacheSpec
    sources: dict[str, str]

    def cycles_to_ns(self, cycles: float) -> float:
        return cycles / self.chip.sm_clock_hz * 1e9


def load_config(path: str | Path | None = None) -> HardwareConfig:
    """Load and validate a hardware config (default: the H100 SXM)."""
    p = path if path is not None else DEFAULT_CONFIG  # as given: an empty path stays '', not '.'
    where = quote(p)
    text = read_text(p, "config file", ConfigError)
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{where}: not valid TOML: {e}") from None
    except RecursionError:
        raise ConfigError(f"{where}: not valid TOML: nested too deeply") from None
    expected = {"name", "gpu_model", "device_names", *SECTIONS}
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
        if not isinstance(table, dict):
            raise ConfigError(f"{where}: missing table [{section}]")
        specs[section] = _build(cls, table, f"{where}: [{section}]", sources, section)
    _check_consistency(specs, where)
    return HardwareConfig(path=os.fspath(p), name=raw["name"], gpu_model=raw["gpu_model"], device_names=tuple(names),
                          sources=sources, **specs)


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


def _value(specs: dict[str, Any], expr: str) -> float:
    """The value of a CONSISTENCY side: ``section.field``, ``a * b`` or ``max(section.field)``."""
    if " * " in expr:
        a, b = expr.split(" * ")
        return _value(specs, a) * _value(specs, b)
    if expr.startswith("max("):
        return max(_value(specs, expr[4:-1]))
    section, name = expr.split(".")
    return getattr(specs[section], name)


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
    for key in table:
        if key not in fields:
            raise ConfigError(f"{where} unknown key {key!r} (allowed: {', '.join(fields)})")
    values = {}
    for name, f in fields.items():
        if name not in table:
            raise ConfigError(f"{where} missing key '{name}' ({f.metadata['doc']})")
        entry = table[name]
        if not isinstance(entry, dict) or set(entry) != {"value", "source"}:
            raise ConfigError(f"{where} {name}: must be an inline table {{ value = ..., source = \"...\" }}")
        if not isinstance(entry["source"], str) or not entry["source"].strip():
            raise ConfigError(f"{where} {name}: 'source' must name where the number comes from")
        values[name] = _check(entry["value"], hints[name], f.metadata, f"{where} {name}")
        sources[f"{section}.{name}"] = entry["source"]
    return cls(**values)


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
