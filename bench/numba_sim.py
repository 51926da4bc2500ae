# numba_sim.py: the anchor for the simulator's speed: Numba's CUDA simulator (pure Python,
# NUMBA_ENABLE_CUDASIM=1) on the same vector add. Prints "numba_sim_threads_per_s: N /s".
import os
import sys
import time

os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
import numpy as np  # noqa: E402
from numba import cuda  # noqa: E402


@cuda.jit
def vector_add(a, b, c, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        c[i] = a[i] + b[i]


n = int(sys.argv[1]) if len(sys.argv) > 1 else 16384
a = np.random.rand(n).astype(np.float32)
b = np.random.rand(n).astype(np.float32)
c = np.zeros(n, dtype=np.float32)
vector_add[(n + 255) // 256, 256](a, b, c, n)  # warm-up (first call compiles nothing, but imports)
t0 = time.perf_counter()
vector_add[(n + 255) // 256, 256](a, b, c, n)
dt = time.perf_counter() - t0
assert np.allclose(c, a + b)
print(f"numba_sim_threads_per_s: {n / dt:.4g} /s")
