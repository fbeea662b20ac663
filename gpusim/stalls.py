"""What each stall reason means in the model, per mechanism, in Nsight Compute's names.

The engine charges every non-issuing warp cycle to an ncu stall reason and tallies what the warp waited on
(``ChipResult.stall_causes``: a load, a queue, a barrier, an mbarrier, a wait_group ...); ``gpusim.metrics.report``
turns the tally into ``gpusim__stall_causes`` (per reason, the share of its cycles each cause holds). Here each
cause gets its sentence: which hardware mechanism the model charges that way, and why ncu names it so (the mapping
of Hopper's asynchronous waits was measured: ``validate/micro/run_stallmap.py``).
"""

from __future__ import annotations

CAUSES = "gpusim__stall_causes"

# Per reason: what the model charges to it, whatever the cause (ncu's names; the model's mechanism).
REASONS = {
    "long_scoreboard": "a warp waits for a result coming back through the L1TEX path: a global load (L1, L2 or HBM "
                       "latency), and on Hopper an mbarrier try_wait (a TMA copy landing, or a producer's arrive) "
                       "or cp.async.wait_group",
    "short_scoreboard": "a warp waits for a result from the MIO path: a shared-memory load or ldmatrix, or a shuffle",
    "lg_throttle": "the LG queue in front of the L1TEX pipe is full of global memory instructions: the warp cannot "
                   "issue another until one enters the pipe",
    "mio_throttle": "a sub-partition's MIO queue is full of shared-memory instructions (or MUFU): the warp cannot "
                    "issue another",
    "barrier": "a warp waits at a barrier for the other warps of its CTA (bar.sync / __syncthreads, a named "
               "barrier), or for its wgmma batch (wgmma.wait_group, which ncu charges to barrier)",
    "math_pipe_throttle": "the warp's next instruction needs an execution pipe that is busy with other warps' work",
    "wait": "a fixed-latency wait: a dependent instruction waits for a math result, or the control codes hold the "
            "warp (the stall cycles the compiler set; a TMA copy's issue)",
    "drain": "the warp has finished and waits for its stores to reach L2 before it can exit",
    "no_instruction": "the warp's next instructions are not in the instruction cache: its loop body is larger than "
                      "the cache, and the fetch delivers them slower than one a cycle",
    "dispatch_stall": "the dispatch cannot read the instruction's register operands this cycle (three register "
                      "sources need two reads)",
    "not_selected": "the warp was ready, but its scheduler issued another warp's instruction this cycle",
    "selected": "the warp issued an instruction",
}


def _cause_sentence(reason: str, cause: str) -> str:
    """One cause of a reason, as a reader needs it."""
    if cause.startswith("mbarrier"):
        bar, _, by = cause.partition(" <- ")
        if by == "TMA copies":
            return f"{bar} (an mbarrier try_wait: waiting for the stage's TMA copies to land in shared memory)"
        if by == "warps arriving":
            return (f"{bar} (an mbarrier try_wait: waiting for other warps to arrive, as consumers arrive when they "
                    "have freed a stage)")
        if by:
            return f"{bar} (an mbarrier try_wait: waiting for {by} to complete its phase)"
        return f"{bar} (an mbarrier try_wait: waiting for a TMA copy to land or a producer warp to arrive)"
    if cause == "cp.async.wait_group":
        return ("cp.async.wait_group (waiting for the asynchronous copies of a stage to land in shared memory, or for "
                "TMA stores to read their boxes out of it: one scoreboard, SASS DEPBAR.LE SB0)")
    if cause == "wgmma.wait_group":
        return "wgmma.wait_group (waiting for the warpgroup's tensor-core batch to finish)"
    if cause.startswith("global load"):
        return f"{cause} (its data comes from L1, L2 or HBM)"
    if cause.startswith("shared l"):
        return f"{cause} (a shared-memory read: bank conflicts make it longer)"
    if cause.startswith("LG queue"):
        return f"{cause}: too many global memory instructions in flight for the L1TEX pipe"
    if cause.startswith("MIO queue"):
        return f"{cause}: too many shared-memory instructions queued for the L1TEX pipe"
    if cause == "__syncthreads":
        return "__syncthreads (the CTA's warps arrive at different times)"
    if cause.startswith("named barrier"):
        return f"{cause} (producer and consumer warps hand tiles over)"
    if cause.startswith("stores draining"):
        return "stores draining to L2 before the warp may exit"
    if cause.split(" ", 1)[0] in ("fp32", "int32", "sfu", "shfl", "tensor", "wgmma"):
        return f"the result of {cause} (a dependent instruction waits the pipe's latency)"
    if cause == "operands read by the L1TEX pipe":
        return "a store's register operands, read as the L1TEX pipe takes each instruction"
    return cause


def causes(m: dict, reason: str) -> list[tuple[str, float]]:
    """The model's causes of ``reason`` in ``m``: (cause, share of the reason's cycles in %), the largest first."""
    got = (m.get(CAUSES) or {}).get(reason) or {}
    return sorted(((c, float(v)) for c, v in got.items()), key=lambda x: (-x[1], x[0]))


def explain(reason: str, m: dict | None = None, top: int = 2) -> str:
    """The mechanism behind ``reason``: the model's own causes in ``m`` when it tallied them (the largest
    ``top``, with their share), else what the model charges to that reason."""
    got = causes(m or {}, reason)
    if got:
        parts = [f"{share:.0f}% {_cause_sentence(reason, c)}" for c, share in got[:top]]
        return "; ".join(parts)
    return REASONS.get(reason, "")
