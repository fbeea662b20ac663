"""Warp schedulers: one per SM sub-partition, each issuing at most one warp instruction per cycle.

The issue slot is modelled as a server of one instruction per cycle (:class:`IssueSlots`, the unit the engine's
warps call); warps that are ready but wait for the slot accumulate ncu's ``not_selected`` stall. The policy is
chosen by name from ``POLICIES``: ``fcfs`` is the rate server's own order (earliest arrival first, bin by bin).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpusim.resources import RateServer
from gpusim.specfield import choice_field, spec_field

POLICIES = ("fcfs",)


@dataclass(frozen=True)
class SchedulerSpec:
    """Warp-scheduler parameters (``[scheduler]`` in the hardware config)."""

    issue_instructions_per_cycle: int = spec_field(1, 4, "warp instructions one scheduler issues per cycle")
    policy: str = choice_field(POLICIES, "issue-slot arbitration among ready warps")
    issue_quantum_instructions: int = spec_field(1, 4096, "instructions a warp's compute bundle issues before "
                                                 "it yields the issue slot to other ready warps")
    register_reads_per_cycle: int = spec_field(1, 8, "source operands the register file delivers to one "
                                               "scheduler's dispatch per cycle")


class IssueSlots:
    """One SM's issue slots at run time: each sub-partition's scheduler is a server of ``instructions_per_cycle``
    warp instructions per cycle, and a warp issues on its own sub-partition's."""

    def __init__(self, sm: int, subpartitions: int, instructions_per_cycle: float) -> None:
        self.slots = [RateServer(instructions_per_cycle, f"SM{sm} issue {i}") for i in range(subpartitions)]

    def slot(self, sub: int) -> RateServer:
        """Sub-partition ``sub``'s issue slot, for a warp to book its instructions on."""
        return self.slots[sub]

    def issue(self, ledger: dict, sub: int, t: float, n: float) -> tuple[float, float]:
        """``n`` instructions of a warp of sub-partition ``sub``, ready at ``t``: (start, end) of their issue."""
        return self.slots[sub].book(ledger, t, n)

    def reported(self) -> list[tuple[str, RateServer, float]]:
        return [("issue", s, 1.0) for s in self.slots]
