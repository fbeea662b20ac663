"""Strict hardware-config loader.

A config is a TOML file with a top-level ``name`` and ``gpu_model`` and one table per hardware unit. Every
number is an inline table ``{ value = ..., source = "..." }``: the value with its unit in the key's name and
where it comes from (a datasheet, a paper, or one of our microbenchmarks in ``validate/``). Unknown,
missing, mistyped or out-of-range keys fail at load time with the file, the key and the allowed range.
"""

from __future__ import annotations

import dataclasses
import tomllib
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpusim.chip_spec import ChipSpec
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
    p = Path(path) if path is not None else DEFAULT_CONFIG
    where = str(p)
    try:
        raw = tomllib.loads(p.read_text())
    except FileNotFoundError:
        raise ConfigError(f"{where}: no such config file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{where}: not valid TOML: {e}") from None
    expected = {"name", "gpu_model", *SECTIONS}
    for key in raw:
        if key not in expected:
            raise ConfigError(f"{where}: unknown key '{key}' (allowed: {', '.join(sorted(expected))})")
    for key in ("name", "gpu_model"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise ConfigError(f"{where}: '{key}' must be a non-empty string")
    specs: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for section, cls in SECTIONS.items():
        table = raw.get(section)
        if not isinstance(table, dict):
            raise ConfigError(f"{where}: missing table [{section}]")
        specs[section] = _build(cls, table, f"{where}: [{section}]", sources, section)
    _check_together(specs, where)
    return HardwareConfig(path=where, name=raw["name"], gpu_model=raw["gpu_model"], sources=sources, **specs)


def _check_together(specs: dict[str, Any], where: str) -> None:
    """Keys whose allowed values depend on each other: sectors and lines are powers of two, a line is a whole
    number of sectors, and L1 and L2 use one sector size (the model moves L1 sectors to L2 one for one)."""
    l1, l2 = specs["l1"], specs["l2"]
    for section, key, value in (("l1", "sector_bytes", l1.sector_bytes), ("l1", "line_bytes", l1.line_bytes)):
        if value & (value - 1):
            raise ConfigError(f"{where}: [{section}] {key}: {value} is not a power of two")
    if l1.line_bytes < l1.sector_bytes:
        raise ConfigError(f"{where}: [l1] line_bytes: {l1.line_bytes} is smaller than sector_bytes "
                          f"({l1.sector_bytes}); a line holds whole sectors")
    if l2.sector_bytes != l1.sector_bytes:
        raise ConfigError(f"{where}: [l2] sector_bytes: {l2.sector_bytes} differs from [l1] sector_bytes "
                          f"({l1.sector_bytes}); gpusim needs one sector size")


def _build(cls: type, table: dict, where: str, sources: dict[str, str], section: str) -> Any:
    fields = {f.name: f for f in dataclasses.fields(cls)}
    hints = typing.get_type_hints(cls)
    for key in table:
        if key not in fields:
            raise ConfigError(f"{where} unknown key '{key}' (allowed: {', '.join(fields)})")
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
        if not isinstance(value, list) or not value:
            raise ConfigError(f"{where}: must be a non-empty list of integers")
        return tuple(_check(v, int, meta, where) for v in value)
    if hint is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise ConfigError(f"{where}: {value!r} must be an integer")
    if hint is float and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise ConfigError(f"{where}: {value!r} must be a number")
    lo, hi = meta["lo"], meta["hi"]
    if not lo <= value <= hi:
        raise ConfigError(f"{where}: {value} is out of range [{lo:g}, {hi:g}]")
    return float(value) if hint is float else value
