"""Warp schedulers: one per SM sub-partition, each issuing at most one warp instruction per cycle.

The issue slot is modelled as a server of one instruction per cycle (:class:`IssueSlots`, the unit the engine's
warps call); warps that are ready but wait for the slot accumulate ncu's ``not_selected`` stall. The policy is
chosen by name from ``POLICIES`` (``[scheduler] policy``), the kind of server the slot is: ``fcfs`` is the rate
server's own order (earliest arrival first, bin by bin).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpusim.resources import RateServer
from gpusim.specfield import choice_field, spec_field

if TYPE_CHECKING:
    from gpusim.sm.clock import Clock

POLICIES: dict[str, type] = {"fcfs": RateServer}


@dataclass(frozen=True)
class SchedulerSpec:
    """Warp-scheduler parameters (``[scheduler]`` in the hardware config)."""

    issue_instructions_per_cycle: int = spec_field(1, 4, "warp instructions one scheduler issues per cycle")
    policy: str = choice_field(tuple(POLICIES), "issue-slot arbitration among ready warps")
    issue_quantum_instructions: int = spec_field(1, 4096, "instructions a warp's compute bundle issues before "
                                                 "it yields the issue slot to other ready warps")
    register_reads_per_cycle: int = spec_field(1, 8, "source operands the register file delivers to one "
                                               "scheduler's dispatch per cycle")


class IssueSlots:
    """One SM's issue slots at run time: each sub-partition's scheduler is a server of ``instructions_per_cycle``
    warp instructions per cycle, and a warp issues on its own sub-partition's."""

    NAME = "issue"

    def __init__(self, sm: int, subpartitions: int, instructions_per_cycle: float, policy: str = "fcfs",
                 quantum_instructions: int = 1, register_reads_per_cycle: int = 0) -> None:
        server = POLICIES[policy]
        self.instructions_per_cycle = instructions_per_cycle
        self.quantum_instructions = quantum_instructions  # a compute bundle's quantum before the warp yields
        self.register_reads_per_cycle = register_reads_per_cycle  # source operands read a cycle (0: no limit)
        self.slots = [server(instructions_per_cycle, f"SM{sm} {self.NAME} {i}") for i in range(subpartitions)]

    @classmethod
    def from_spec(cls, spec: SchedulerSpec, clock: Clock, sm: int, subpartitions: int) -> IssueSlots:
        return cls(sm, subpartitions, spec.issue_instructions_per_cycle, spec.policy,
                   spec.issue_quantum_instructions, spec.register_reads_per_cycle)

    def dispatch_cycles(self, n: int, register_reads: int) -> float:
        """Cycles of the issue slot ``n`` instructions of ``register_reads`` source operands each take: one each,
        unless the register file is slower (measured: validate/micro/run_regread.py, an FFMA with three register
        sources 1.5 cycles)."""
        rpc = self.register_reads_per_cycle
        if rpc and register_reads > rpc:
            return n * register_reads / rpc
        return n

    def slot(self, sub: int) -> RateServer:
        """Sub-partition ``sub``'s issue slot, for a warp to book its instructions on."""
        return self.slots[sub]

    def issue(self, ledger: dict, sub: int, t: float, n: float) -> tuple[float, float]:
        """``n`` instructions of a warp of sub-partition ``sub``, ready at ``t``: (start, end) of their issue."""
        return self.slots[sub].book(ledger, t, n)

    def reported(self) -> list[tuple[str, RateServer, float]]:
        return [(self.NAME, s, 1.0) for s in self.slots]
