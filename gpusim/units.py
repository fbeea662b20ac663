"""Numbers with their units, as every surface prints them (CLI, app, validate): one formatter per kind of quantity,
SI prefixes as Nsight Compute uses them (kilo = 1000), the unit always written."""

from __future__ import annotations

import math

_PREFIXES = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))


def si(value: float, unit: str, digits: int = 3) -> str:
    """``value`` with an SI prefix and ``unit``: ``si(3.05e12, "B/s")`` -> ``"3.05 TB/s"``."""
    if value is None or not isinstance(value, (int, float)) or math.isnan(value):
        return "-"
    a = abs(value)
    for scale, prefix in _PREFIXES:
        if a >= scale:
            return f"{_digits(value / scale, digits)} {prefix}{unit}"
    return f"{_digits(value, digits)} {unit}".rstrip()


def _digits(v: float, digits: int) -> str:
    """``digits`` significant digits, no exponent, no trailing ``.0`` on whole numbers."""
    if v == 0:
        return "0"
    decimals = max(digits - 1 - int(math.floor(math.log10(abs(v)))), 0)
    return f"{v:,.{decimals}f}"


def bytes_(n: float) -> str:
    return si(n, "B")


def bytes_per_second(v: float) -> str:
    return si(v, "B/s")


def flops_per_second(v: float) -> str:
    return si(v, "FLOP/s")


def hertz(v: float) -> str:
    return si(v, "Hz")


def duration_ns(ns: float) -> str:
    """A duration given in ns, in the unit that reads best: ``1.128 ms``, ``5.9 us``, ``812 ns``."""
    if ns >= 1e9:
        return f"{ns / 1e9:,.3f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:,.3f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:,.1f} us"
    return f"{ns:,.0f} ns"


def count(n: float, unit: str = "") -> str:
    """A count with thousands separators (exact below a million, else 3 significant digits with a prefix)."""
    if isinstance(n, float) and not n.is_integer() and abs(n) < 1e6:
        return f"{n:,.2f} {unit}".rstrip()
    if abs(n) < 1e6:
        return f"{int(n):,} {unit}".rstrip()
    return f"{si(n, '')} {unit}".rstrip()


def pct(v: float, digits: int = 1) -> str:
    return f"{v:.{digits}f}%"
