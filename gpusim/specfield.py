"""Declarative spec fields: every hardware number carries its unit in its name and an allowed range.

Unit modules declare their frozen spec dataclasses with :func:`spec_field`; the strict loader in
:mod:`gpusim.config` reads the ranges from the field metadata, so the schema lives in one place. A field that only
some GPU generations have (``feature=``: ``"tma"``, ``"wgmma"``, ``"clusters"``) is optional: a config of a GPU
without the feature leaves it out and the spec holds ``None`` (see :data:`gpusim.config.FEATURES`).
"""

from __future__ import annotations

import dataclasses
from typing import Any


def spec_field(lo: float, hi: float, doc: str, choices: tuple[str, ...] = (), feature: str = "") -> Any:
    """A spec field with an inclusive allowed range ``[lo, hi]`` and a one-line meaning; required, unless it
    belongs to an optional ``feature`` (then ``None`` where the config leaves it out)."""
    meta = {"lo": lo, "hi": hi, "doc": doc, "choices": choices, "feature": feature}
    if feature:
        return dataclasses.field(default=None, kw_only=True, metadata=meta)
    return dataclasses.field(metadata=meta)


def choice_field(choices: tuple[str, ...], doc: str) -> Any:
    """A required string field that must be one of ``choices``."""
    return dataclasses.field(metadata={"lo": None, "hi": None, "doc": doc, "choices": choices, "feature": ""})


def table_field(item: type, doc: str) -> Any:
    """A field made of the section's sub-tables (``[pipes.fp32]``, ``[pipes.tensor]``, ...): a tuple of (name,
    ``item`` spec) pairs in the config's order, each sub-table one ``item``."""
    return dataclasses.field(metadata={"lo": None, "hi": None, "doc": doc, "choices": (), "feature": "",
                                       "table_of": item})
