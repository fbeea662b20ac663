"""One SM's port to the L2 (its share of the crossbar): ``[l2] sm_port_bytes_per_cycle`` in each direction.

At run time (:class:`L2Port`) every byte an SM sends to or receives from the L2 (global loads that miss L1, stores,
TMA copies) passes the port; a CTA standing for several real CTAs books its bytes here once (its clones have ports
of their own), and on the chip-wide L2 and HBM once per CTA it stands for.
"""

from __future__ import annotations

from gpusim.resources import RateServer


class L2Port:
    """One SM's path to the L2: ``bytes_per_cycle``."""

    def __init__(self, sm: int, bytes_per_cycle: float) -> None:
        self.server = RateServer(bytes_per_cycle, f"SM{sm} L2 port")

    def transfer(self, ledger: dict, arrive: float, nbytes: float) -> float:
        """``nbytes`` through the port from ``arrive``: when they have passed."""
        return self.server.book(ledger, arrive, nbytes)[1]

    def reported(self) -> list[tuple[str, RateServer, float]]:
        return [("L2 port", self.server, 1.0)]
