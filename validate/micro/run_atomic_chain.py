"""An atomic's round trip to the L2, on the GPU this runs on: one thread's chain of dependent global atomicAdds (each
address from the old value the one before returned) against its chain of dependent ld.global.cg loads from an
L2-resident buffer, in SM cycles per link (clock64 around the chain; chains of 256 and 1024, the difference over 768
links).

    python3 validate/micro/run_atomic_chain.py --out validate/measurements/h200/atomchain-2026-11-28.json
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import common  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    import cupy as cp
    import numpy as np

    mod = cp.RawModule(code=(HERE / "atomic_chain.cu").read_text(), options=("-std=c++17",))
    data = common.cupy_header(cp, "atomchain-1")
    data["how"] = __doc__
    c = cp.zeros(8192, dtype=cp.uint32)
    cyc = cp.zeros(2, dtype=cp.uint64)
    rng = np.random.default_rng(1)
    size = 1 << 20  # 4 MiB: L2-resident
    perm = rng.permutation(size).astype(np.uint32)
    nxt = np.empty(size, dtype=np.uint32)
    nxt[perm] = np.roll(perm, -1)  # one cycle through every index
    p = cp.asarray(nxt)
    rows = {}
    for name, args in (("atom_chain", (c, cyc)), ("load_chain", (p, cyc))):
        f = mod.get_function(name)
        per = {}
        for n in (256, 1024):
            got = []
            for _ in range(5):
                f((1,), (1,), (*args, np.int32(n)))
                cp.cuda.runtime.deviceSynchronize()
                got.append(int(cp.asnumpy(cyc)[0]))
            per[n] = sorted(got)[len(got) // 2]
        rows[name] = {"cycles_256": per[256], "cycles_1024": per[1024],
                      "cycles_per_link": (per[1024] - per[256]) / 768}
        common.log(f"{name}: {rows[name]}")
    data["chains"] = rows
    common.write_json(Path(a.out), data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
