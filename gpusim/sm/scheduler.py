"""Warp schedulers: one per SM sub-partition, each issuing at most one warp instruction per cycle.

The issue slot is modelled as a server of one instruction per cycle; warps that are ready but wait for
the slot accumulate ncu's ``not_selected`` stall. The policy is chosen by name from ``POLICIES``.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpusim.specfield import choice_field, spec_field

POLICIES = ("fcfs",)


@dataclass(frozen=True)
class SchedulerSpec:
    """Warp-scheduler parameters (``[scheduler]`` in the hardware config)."""

    issue_instructions_per_cycle: int = spec_field(1, 4, "warp instructions one scheduler issues per cycle")
    policy: str = choice_field(POLICIES, "issue-slot arbitration among ready warps")
    issue_quantum_instructions: int = spec_field(1, 4096, "instructions a warp's compute bundle issues before "
                                                 "it yields the issue slot to other ready warps")
