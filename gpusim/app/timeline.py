"""The simulated timeline of one SM (``Simulation.full.trace``) as Gantt bars a chart can draw.

The engine records ``(warp, name, category, t0_cycles, t1_cycles)`` per operation and per stall. For a chart
the spans are grouped into a few activities a learner recognises (loads, TMA, MMA, softmax, barrier waits),
overlapping or touching spans of one activity on one row are merged, and the view is cut to the first
cycles so that the chart stays small.
"""

from __future__ import annotations

from dataclasses import dataclass

# display activity of each trace category, in legend order; a category not listed falls back on the rules
# of ``activity``
EXTRAPOLATED = "extrapolated (not simulated)"  # a warp's fast-forwarded loop iterations or tiles
ACTIVITIES = ("global memory", "TMA", "shared memory", "MMA (tensor cores)", "softmax (SFU)", "FP32 / INT32",
              "barrier / async wait", "stall", EXTRAPOLATED)
MAX_BARS = 3000  # bars a chart draws comfortably in a browser
# which activity an instant in several counts for in the shares: the warp's own work before what it has in flight
# (a load or TMA copy is drawn from issue to arrival, so it overlaps the math that hides it), waits last
PRIORITY = ("MMA (tensor cores)", "softmax (SFU)", "FP32 / INT32", "shared memory", "global memory", "TMA",
            "barrier / async wait", "stall")


def activity(category: str, name: str) -> str:
    """The activity a trace span belongs to (``category`` from the engine, ``name`` the op or stall)."""
    c = category.lower()
    if c == "extrapolated":  # gpusim.engine.EXTRAPOLATED
        return EXTRAPOLATED
    if c == "stall":
        return "barrier / async wait" if name.startswith("wait:") else "stall"
    if "tma" in c:
        return "TMA"
    if c in ("tensor", "wgmma") or "mma" in c:
        return "MMA (tensor cores)"
    if c == "sfu":
        return "softmax (SFU)"
    if c in ("fp32", "int32"):
        return "FP32 / INT32"
    if "barrier" in c or "mbar" in c or "wait" in c:
        return "barrier / async wait"
    if c.startswith("global"):
        return "global memory"
    if c.startswith("shared") or "ldsm" in c or "stsm" in c:
        return "shared memory"
    return category


@dataclass(frozen=True)
class Bar:
    row: str
    order: int  # row order (top to bottom)
    activity: str
    start: float  # cycles
    end: float
    ops: str  # the operation names merged into this bar (first few)
    count: int


def row_label(warp: int, warps_per_cta: int, warpgroups: bool) -> str:
    cta, w = divmod(warp, warps_per_cta)
    if warpgroups:
        return f"CTA {cta} WG {w // 4}"
    return f"CTA {cta} warp {w}"


def bars(trace: list[tuple], warps_per_cta: int, warpgroups: bool = False, max_rows: int = 16,
         max_bars: int = MAX_BARS) -> tuple[list[Bar], float, float]:
    """Merged Gantt bars of the first ``max_rows`` rows; per warpgroup shows each warpgroup's first warp.

    Returns (bars, cycles shown, the last cycle of the rows drawn): when there are more than ``max_bars`` bars,
    only the bars that start before the cut are kept, so the view is the beginning of the kernel (and the cycles
    shown are fewer than the rows' last cycle).
    """
    if not trace:
        return [], 0.0, 0.0
    warps = sorted({e[0] for e in trace})
    if warpgroups:
        warps = [w for w in warps if (w % warps_per_cta) % 4 == 0]
    warps = warps[:max_rows]
    order = {w: i for i, w in enumerate(warps)}
    spans: dict[tuple[int, str], list[tuple[float, float, str]]] = {}
    for w, name, cat, t0, t1 in trace:
        if w in order:
            spans.setdefault((w, activity(cat, name)), []).append((t0, t1, name))
    out: list[Bar] = []
    for (w, act), items in spans.items():
        items.sort()
        cur = None
        for t0, t1, name in items:
            if cur is not None and t0 <= cur[1]:
                cur[1] = max(cur[1], t1)
                cur[3] += 1
                if name not in cur[2] and len(cur[2]) < 3:
                    cur[2].append(name)
                continue
            if cur is not None:
                out.append(_bar(w, act, cur, warps_per_cta, warpgroups, order))
            cur = [t0, t1, [name], 1]
        out.append(_bar(w, act, cur, warps_per_cta, warpgroups, order))
    drawn_end = max((b.end for b in out), default=0.0)  # the rows drawn end here (other warps may run longer)
    shown = drawn_end
    if len(out) > max_bars:
        out.sort(key=lambda b: b.start)
        shown = out[max_bars].start
        out = out[:max_bars]
    out.sort(key=lambda b: (b.order, b.start))
    return out, shown, drawn_end


def _bar(w, act, cur, warps_per_cta, warpgroups, order) -> Bar:
    return Bar(row_label(w, warps_per_cta, warpgroups), order[w], act, cur[0], cur[1], ", ".join(cur[2]), cur[3])


OTHER = "issuing, or no work (not a traced span)"


def busy_share(trace: list[tuple], warps_per_cta: int) -> dict[str, float]:
    """Per activity, the share of all traced warps' simulated time (each from 0 to the last traced cycle, less its
    extrapolated stretches: :func:`extrapolated_share`) spent in it; an instant in several activities counts for the
    first in :data:`PRIORITY` order (then activities not listed there, by name), and the time in none is
    :data:`OTHER`, so the shares add up to 100%. One sweep over each warp's sorted span ends: O(n log n)."""
    total, warps, end_all = _sweep(trace)
    simulated = warps * end_all - total.get(EXTRAPOLATED, 0.0)
    if simulated <= 0:
        return {}
    return {a: round(100.0 * v / simulated, 1) for a, v in sorted(total.items(), key=lambda kv: -kv[1])
            if a != EXTRAPOLATED}


def extrapolated_share(trace: list[tuple]) -> float:
    """The share (%) of all traced warps' time that the engine extrapolated instead of simulating."""
    total, warps, end_all = _sweep(trace)
    return round(100.0 * total.get(EXTRAPOLATED, 0.0) / (warps * end_all), 1) if warps and end_all > 0 else 0.0


def _sweep(trace: list[tuple]) -> tuple[dict[str, float], int, float]:
    """(time per activity over every traced warp, with :data:`OTHER` for none; the warps; the last traced cycle)."""
    if not trace:
        return {}, 0, 0.0
    end_all = max(e[4] for e in trace)
    of = {(cat, name): activity(cat, name) for _, name, cat, t0, t1 in trace if t1 > t0}
    order = (EXTRAPOLATED, *PRIORITY)  # an extrapolated stretch is nothing else
    acts = sorted(set(of.values()), key=lambda a: (order.index(a) if a in order else len(order), a))
    rank = {a: i for i, a in enumerate(acts)}
    per_warp: dict[int, list[tuple[float, int, int]]] = {}  # (time, +1 start / -1 end, activity's rank)
    for w, name, cat, t0, t1 in trace:
        if t1 > t0:
            r = rank[of[cat, name]]
            per_warp.setdefault(w, []).extend(((max(t0, 0.0), 1, r), (t1, -1, r)))
    warps = len({e[0] for e in trace})
    total = [0.0] * (len(acts) + 1)  # the last: OTHER
    for events in per_warp.values():
        events.sort()
        open_ = [0] * len(acts)
        prev = 0.0
        for t, step, r in events:
            if t > prev:
                top = next((i for i, n in enumerate(open_) if n), len(acts))
                total[top] += t - prev
                prev = t
            open_[r] += step
        total[-1] += end_all - prev
    names = [*acts, OTHER]
    out = {names[i]: v for i, v in enumerate(total) if v}
    if warps > len(per_warp):  # warps with no span at all
        out[OTHER] = out.get(OTHER, 0.0) + (warps - len(per_warp)) * end_all
    return out, warps, end_all
