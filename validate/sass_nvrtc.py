"""The SASS of a twin as the measurement scripts build it: CuPy's RawModule (NVRTC, the device's architecture), not
the local nvcc of `gpusim sass`. The two can differ (fa2: local nvcc's loop holds 1169 instructions on its
shortest path, while ncu counts about 1000 per iteration of the CuPy build).

    python3 validate/sass_nvrtc.py --out $OUT validate/kernels/fa2.cu -DHEAD_DIM=128 -DCAUSAL=0   # on the GPU machine

Compiles the twin (its #include "x.cuh" lines pasted in, as validate/run_tc_sm80.py does) with a fresh CuPy cache
directory, loads it, and writes `cuobjdump -sass` of the cubin CuPy cached (the ELF after its hash) to
OUT/<name>.sass; then
`gpusim.sass.parse_sass` and `loops` read it anywhere (this script prints their summary).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def load_source(path: Path) -> str:
    def sub(m: re.Match) -> str:
        return load_source(path.parent / m.group(1))

    return re.sub(r'^\s*#include\s+"([^"]+)"\s*$', sub, path.read_text(), flags=re.M)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("source")
    a, defines = ap.parse_known_args()  # -DNAME=VALUE, as for gpusim sass
    bad = [d for d in defines if not d.startswith("-D")]
    if bad:
        ap.error(f"unrecognized arguments: {' '.join(bad)}")
    a.defines = defines
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    cache = tempfile.mkdtemp(prefix="cupy_cache_")
    os.environ["CUPY_CACHE_DIR"] = cache
    import cupy as cp

    src = Path(a.source)
    mod = cp.RawModule(code=load_source(src), options=("-std=c++17", *a.defines))
    mod.get_function(src.stem)  # compiles and loads (a twin's kernel is named after its file)
    stem = src.stem + "".join("_" + d.lstrip("-D").replace("=", "") for d in a.defines)
    from gpusim.sass import parse_sass, summarize

    for i, f in enumerate(sorted(Path(cache).rglob("*"))):
        data = f.read_bytes() if f.is_file() else b""
        elf = data.find(b"\x7fELF")  # CuPy's cache file: a hash, then the cubin
        if elf < 0:
            continue
        cubin = Path(cache) / f"k{i}.cubin"
        cubin.write_bytes(data[elf:])
        r = subprocess.run(["cuobjdump", "-sass", str(cubin)], capture_output=True, text=True, check=False)
        if r.returncode or "Function" not in r.stdout:
            continue
        dest = out / f"{stem}{'' if i == 0 else f'_{i}'}.sass"
        dest.write_text(r.stdout)
        print(dest.name)
        print(summarize(parse_sass(r.stdout)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
