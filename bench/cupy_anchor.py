# cupy_anchor.py: CuPy's figures beside cudalab's, where CuPy is installed: the time of
# `import cupy`, a RawKernel launch (asynchronous, empty kernel and three arrays + int), and a
# RawKernel compile that hits CuPy's own kernel cache. Prints "name: value unit" lines.
import sys
import time

t0 = time.perf_counter()
import cupy as cp  # noqa: E402

print(f"cupy_import_ms: {(time.perf_counter() - t0) * 1e3:.1f} ms")

SRC = r'''
extern "C" __global__ void empty() {}
extern "C" __global__ void three(float *a, float *b, float *c, int n) { if (n < 0) a[0] = b[0] + c[0]; }
'''
t0 = time.perf_counter()
mod = cp.RawModule(code=SRC)
empty, three = mod.get_function("empty"), mod.get_function("three")
cp.cuda.Device().synchronize()
print(f"cupy_module_load_ms: {(time.perf_counter() - t0) * 1e3:.2f} ms")

a, b, c = (cp.zeros(256, dtype=cp.float32) for _ in range(3))
n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000


def per_launch_us(fn, args):
    fn((1,), (32,), args)
    cp.cuda.Device().synchronize()
    best = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            fn((1,), (32,), args)
        cp.cuda.Device().synchronize()
        best.append((time.perf_counter() - t0) * 1e6 / n)
    return sorted(best)[2]


print(f"cupy_launch_empty_us: {per_launch_us(empty, ()):.3f} us")
print(f"cupy_launch_3arrays_us: {per_launch_us(three, (a, b, c, cp.int32(1024))):.3f} us")
