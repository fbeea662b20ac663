"""Static SASS opcode counts per kernel: `python3 sass_summary.py CUBIN_DIR OUT.json` (needs cuobjdump).

The cubins are built with `nvcc -cubin -arch=sm_90 -std=c++17` from validate/kernels/*.cu and
validate/micro/micro.cu (same ptxas as NVRTC, so the same code as the measured kernels up to compiler flags).
Counts are static (instructions in the binary, not executed); they show e.g. LDS.128 vs LDS, LDGSTS, FFMA per loop.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

FUNC = re.compile(r"Function\s*:\s*(\S+)")
INST = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P[T0-9]+\s+)?([A-Z][A-Z0-9_.]*)")


def summarize(text: str) -> dict[str, dict[str, int]]:
    out: dict[str, Counter] = {}
    cur = None
    for ln in text.splitlines():
        m = FUNC.search(ln)
        if m:
            cur = m.group(1)
            out[cur] = Counter()
            continue
        m = INST.search(ln)
        if m and cur:
            out[cur][m.group(1)] += 1
    return {k: dict(sorted(v.items())) for k, v in out.items()}


def main() -> int:
    src, dst = Path(sys.argv[1]), Path(sys.argv[2])
    tool = shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump"
    res: dict[str, dict[str, int]] = {}
    for cubin in sorted(src.glob("*.cubin")):
        p = subprocess.run([tool, "-sass", str(cubin)], capture_output=True, text=True)
        res.update(summarize(p.stdout))
        if p.returncode:
            res[f"{cubin.name}:error"] = {p.stderr[:200]: p.returncode}
    dst.write_text(json.dumps(res, indent=1) + "\n")
    print(f"sass summary: {len(res)} functions -> {dst}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
