"""Launch validate/micro/l1_mix.cu once (after a warm-up) for ncu: `python3 validate/micro/l1_mix_ncu.py MODE MISS`.

    ncu --clock-control none --kernel-name l1mix --launch-skip 1 --launch-count 1 --metrics ... \
        python3 validate/micro/l1_mix_ncu.py 3 0

(validate/measurements/h100/l1mix-ncu-2026-12-07.txt: MODE 3 against MODE 0 with 1 miss in 32 and with none.)
"""

import sys

import cupy as cp
import numpy as np

mode, miss = int(sys.argv[1]), int(sys.argv[2])
code = open("validate/micro/l1_mix.cu").read()
f = cp.RawModule(code=code, options=(f"-DMISS={miss}", f"-DMODE={mode}")).get_function("l1mix")
sms = cp.cuda.Device().attributes["MultiProcessorCount"]
ctas, iters = 2 * sms, 4096
hot = cp.ones(ctas * 1024, dtype=cp.float32)
cold = cp.ones(ctas * 32 * iters * 32, dtype=cp.float32)
sink = cp.zeros(ctas * 1024, dtype=cp.float32)
for _ in range(2):
    f((ctas,), (1024,), (hot, cold, np.int32(iters), np.int32(0), sink))
cp.cuda.Device().synchronize()
