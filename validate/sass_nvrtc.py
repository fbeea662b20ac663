"""The SASS of a twin as the measurement scripts build it: CuPy's RawModule (NVRTC, the device's architecture), not
the local nvcc of `gpusim sass`, to check that the IR's instruction counts come from the code that was measured.
For fa2 (d=128) the two agree: 1190 instructions in the loop, 1169 on its shortest path
(validate/measurements/h100/diagnostics/fa2_HEAD_DIM128_CAUSAL0-nvrtc.sass), while ncu counts about 1000 per
iteration (validate/DEVIATIONS.md).

    python3 validate/sass_nvrtc.py --out $OUT validate/kernels/fa2.cu -DHEAD_DIM=128 -DCAUSAL=0   # on the GPU machine

Compiles the twin (its #include "x.cuh" lines pasted in, as validate/run_tc_sm80.py does) with NVRTC for the
device's SASS architecture, as CuPy's RawModule does, and writes `cuobjdump -sass` of the cubin to OUT/<name>.sass;
then `gpusim.sass.parse_sass` and `loops` read it anywhere (this script prints their summary).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def load_source(path: Path) -> str:
    def sub(m: re.Match) -> str:
        return load_source(path.parent / m.group(1))

    return re.sub(r'^\s*#include\s+"([^"]+)"\s*$', sub, path.read_text(), flags=re.M)


def whole_elf(data: bytes) -> bytes:
    """The cubin padded to the end its ELF header names: CuPy's getCUBIN binding drops the last byte (a trailing
    NUL of the program-header table), which cuobjdump then refuses."""
    import struct

    phoff, shoff = struct.unpack_from("<QQ", data, 0x20)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", data, 0x36)
    end = max(phoff + phentsize * phnum, shoff + shentsize * shnum)
    return data + b"\0" * max(end - len(data), 0)


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
    import cupy as cp
    from cupy_backends.cuda.libs import nvrtc

    src = Path(a.source)
    major, minor = cp.cuda.Device().compute_capability[:1], cp.cuda.Device().compute_capability[1:]
    arch = f"-arch=sm_{major}{minor}"  # what CuPy's RawModule asks NVRTC for: the device's SASS
    prog = nvrtc.createProgram(load_source(src), src.name, [], [])
    try:
        nvrtc.compileProgram(prog, ["-std=c++17", arch, *a.defines])
    except nvrtc.NVRTCError:
        print(nvrtc.getProgramLog(prog), file=sys.stderr)
        raise
    stem = src.stem + "".join("_" + d[2:].replace("=", "") for d in a.defines)
    cubin = out / f"{stem}.cubin"  # kept: a newer NVRTC's cubin may need a newer cuobjdump than this machine has
    cubin.write_bytes(whole_elf(nvrtc.getCUBIN(prog)))
    r = subprocess.run(["cuobjdump", "-sass", str(cubin)], capture_output=True, text=True, check=False)
    if r.returncode or "Function" not in r.stdout:
        print(f"{cubin}: cuobjdump could not read it ({(r.stderr or r.stdout).strip()[:200]}); run "
              f"`cuobjdump -sass {cubin.name}` where a matching one is", file=sys.stderr)
        return 1
    (out / f"{stem}.sass").write_text(r.stdout)
    from gpusim.sass import parse_sass, summarize

    print(f"{stem}.sass ({arch}, NVRTC {'.'.join(map(str, nvrtc.getVersion()))})")
    print(summarize(parse_sass(r.stdout)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
