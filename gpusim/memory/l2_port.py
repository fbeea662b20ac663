"""One SM's port to the L2 (its share of the crossbar): ``[l2] sm_port_bytes_per_cycle`` in each direction.

At run time (:class:`L2Port`, stage ``L2 port`` of a request's path) every byte an SM sends to or receives from the
L2 (global loads that miss L1, stores, TMA copies) passes the port; a CTA standing for several real CTAs books its
bytes here once (its clones have ports of their own), and on the chip-wide L2 and HBM once per CTA it stands for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpusim.resources import RateServer

if TYPE_CHECKING:
    from gpusim.memory.l2 import L2Spec
    from gpusim.sm.clock import Clock


class L2Port:
    """One SM's path to the L2: ``bytes_per_cycle``."""

    NAME = "L2 port"

    def __init__(self, sm: int, bytes_per_cycle: float) -> None:
        self.server = RateServer(bytes_per_cycle, f"SM{sm} {self.NAME}")

    @classmethod
    def from_spec(cls, spec: L2Spec, clock: Clock, sm: int = 0) -> L2Port:
        """SM ``sm``'s port (``[l2] sm_port_bytes_per_cycle``, a number of the SM's clock)."""
        return cls(sm, spec.sm_port_bytes_per_cycle)

    def transfer(self, ledger: dict, arrive: float, nbytes: float) -> float:
        """``nbytes`` through the port from ``arrive``: when they have passed."""
        return self.server.book(ledger, arrive, nbytes)[1]

    def serve(self, request, t: float) -> float:
        """Stage ``L2 port``: the request's bytes stream through the port from ``t`` while the L2 serves them (the
        L2 is done no sooner than the port, ``request.port_done``); the request goes on at once."""
        request.port_done = self.server.book(request.ledger, t, request.l2_bytes)[1]
        return t

    def reported(self) -> list[tuple[str, RateServer, float]]:
        return [(self.NAME, self.server, 1.0)]
