"""Declarative spec fields: every hardware number carries its unit in its name and an allowed range.

Unit modules declare their frozen spec dataclasses with :func:`spec_field`; the strict loader in
:mod:`gpusim.config` reads the ranges from the field metadata, so the schema lives in one place.
"""

from __future__ import annotations

import dataclasses
from typing import Any


def spec_field(lo: float, hi: float, doc: str, choices: tuple[str, ...] = ()) -> Any:
    """A required spec field with an inclusive allowed range ``[lo, hi]`` and a one-line meaning."""
    return dataclasses.field(metadata={"lo": lo, "hi": hi, "doc": doc, "choices": choices})


def choice_field(choices: tuple[str, ...], doc: str) -> Any:
    """A required string field that must be one of ``choices``."""
    return dataclasses.field(metadata={"lo": None, "hi": None, "doc": doc, "choices": choices})
