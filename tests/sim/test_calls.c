/* test_calls.c: recursion, calls through function pointers, device assert and the device heap,
 * run in the simulator: the results against CPU references, and every way they can fail (stack
 * overflow, a bad function pointer, a failed assert, a bad free, heap exhaustion, an access past
 * a heap block, a malformed indirect call) against the message it must give. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc_util.h"

static sim_device *dev;
static sim_module *mod;
static char err[4096];

static const char *src =
    "__device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\n"
    "extern \"C\" __global__ void kfib(int *out) { out[threadIdx.x] = fib(threadIdx.x % 16); }\n"
    "extern \"C\" __global__ void kdeep(int *out, int d) { out[0] = fib(d); }\n"
    "__device__ int down(int n) {\n"
    "  int buf[8]; for (int i = 0; i < 8; i++) buf[i] = n * i;\n"
    "  if (n <= 0) return 0;\n"
    "  int s = down(n - 1); volatile int *vb = buf; return s + vb[n & 7];\n"
    "}\n"
    "extern \"C\" __global__ void kdown(int *out, int d) { out[threadIdx.x] = down(d + threadIdx.x % 4); }\n"
    "__device__ int twice(int x) { return 2 * x; }\n"
    "__device__ int square(int x) { return x * x; }\n"
    "typedef int (*fn)(int);\n"
    "__device__ fn table[2] = {twice, square};\n"
    "extern \"C\" __global__ void ktable(int *out) { out[threadIdx.x] = table[threadIdx.x & 1](threadIdx.x); }\n"
    "extern \"C\" __global__ void kbadptr(int *out, long long a) { fn f = (fn)a; out[0] = f(1); }\n"
    "extern \"C\" __global__ void kassert(int *out, int lim) { assert(threadIdx.x < lim); out[threadIdx.x] = 1; }\n"
    "extern \"C\" __global__ void kmalloc(long long *out, long long bytes) {\n"
    "  out[threadIdx.x] = (long long)malloc(bytes);\n"
    "}\n"
    "extern \"C\" __global__ void kfree(const long long *ptrs) { free((void *)ptrs[threadIdx.x]); }\n"
    "extern \"C\" __global__ void kpast(int n) { int *p = new int[4]; p[n] = 1; delete[] p; }\n";

static int launch(const char *name, unsigned block, void **args, size_t stack) {
  sim_launch_opts o;
  memset(&o, 0, sizeof o);
  o.threads = 1;
  o.stack_size = stack;
  return sim_launch(dev, tu_kernel(mod, name), (sim_dim3){1, 1, 1}, (sim_dim3){block, 1, 1}, 0, args, &o, NULL, err,
                    sizeof err);
}

static int fib_ref(int n) { return n < 2 ? n : fib_ref(n - 1) + fib_ref(n - 2); }

static void test_recursion(void) {
  int *out = sim_malloc(dev, 64 * sizeof(int), "i32[64]", err, sizeof err);
  void *a1[] = {&out};
  int rc = launch("kfib", 64, a1, 0), ok = rc == 0;
  for (int i = 0; ok && i < 64; i++) ok = out[i] == fib_ref(i % 16);
  tu_check(ok, "recursive fibonacci, lanes at different depths", "rc=%d msg: %s", rc, err);
  int d = 10;
  void *a2[] = {&out, &d};
  rc = launch("kdown", 32, a2, 0);
  ok = rc == 0;
  for (int i = 0; ok && i < 32; i++) {
    int n = d + i % 4, s = 0;
    for (int k = 1; k <= n; k++) s += k * (k & 7);
    ok = out[i] == s;
  }
  tu_check(ok, "each activation has its own local array", "rc=%d msg: %s", rc, err);
  d = 13; /* only thread 3 calls 17 deep: 17 x 64 bytes > 1 KiB */
  rc = launch("kdown", 32, a2, 0);
  tu_check(rc < 0 && strstr(err, "stack overflow") && strstr(err, "call 17 deep to down") && strstr(err, "1024") &&
               strstr(err, "in kernel kdown, block (0,0,0), thread (3,0,0)") && strstr(err, "kernel.cu:7"),
           "past the call stack: stack overflow with kernel, block, thread, depth, line", "rc=%d msg: %s", rc, err);
  rc = launch("kdown", 32, a2, 4096);
  tu_check(rc == 0, "a bigger stack (launch option) lets it run", "rc=%d msg: %s", rc, err);
  d = 1000000;
  void *a3[] = {&out, &d};
  rc = launch("kdeep", 1, a3, SIM_STACK_MAX);
  tu_check(rc < 0 && strstr(err, "MiB of host memory the simulator gives one warp") && strstr(err, "deep to fib"),
           "recursion deeper than the host memory for saved registers fails cleanly", "rc=%d msg: %s", rc, err);
  rc = launch("kdeep", 1, a3, SIM_STACK_MAX + 1);
  tu_check(rc < 0 && strstr(err, "more than the simulator allows"), "a call stack over the maximum is refused",
           "rc=%d msg: %s", rc, err);
  sim_free(dev, out);
}

static void test_indirect(void) {
  int *out = sim_malloc(dev, 64 * sizeof(int), "i32[64]", err, sizeof err);
  void *a1[] = {&out};
  int rc = launch("ktable", 64, a1, 0), ok = rc == 0;
  for (int i = 0; ok && i < 64; i++) ok = out[i] == (i & 1 ? i * i : 2 * i);
  tu_check(ok, "a table of function pointers, lanes calling different functions", "rc=%d msg: %s", rc, err);
  long long bad = 0;
  void *a2[] = {&out, &bad};
  rc = launch("kbadptr", 1, a2, 0);
  tu_check(rc < 0 && strstr(err, "indirect call through 0x0, which is not the address of a device function"),
           "a call through a null function pointer fails, saying so", "rc=%d msg: %s", rc, err);
  bad = (long long)(uintptr_t)out;
  rc = launch("kbadptr", 1, a2, 0);
  tu_check(rc < 0 && strstr(err, "not the address of a device function"), "a call through a data pointer fails",
           "rc=%d msg: %s", rc, err);
  sim_free(dev, out);
}

static void test_assert(void) {
  int *out = sim_malloc(dev, 64 * sizeof(int), "i32[64]", err, sizeof err);
  int lim = 64;
  void *a[] = {&out, &lim};
  int rc = launch("kassert", 64, a, 0);
  tu_check(rc == 0 && out[63] == 1, "an assert that holds costs nothing", "rc=%d msg: %s", rc, err);
  lim = 40;
  rc = launch("kassert", 64, a, 0);
  tu_check(rc < 0 && strstr(err, "device-side assert triggered") &&
               strstr(err, "kernel.cu:16: void kassert(int *, int): block: [0,0,0], thread: [40,0,0] Assertion `threadIdx.x < lim` failed."),
           "a failed assert gives the GPU's line", "rc=%d msg: %s", rc, err);
  sim_free(dev, out);
}

static void test_heap(void) {
  long long *ptrs = sim_malloc(dev, 64 * sizeof(long long), "i64[64]", err, sizeof err);
  long long bytes = 1 << 20;
  void *a[] = {&ptrs, &bytes};
  int rc = launch("kmalloc", 16, a, 0), got = 0;
  for (int i = 0; i < 16; i++) got += ptrs[i] != 0;
  tu_check(rc == 0 && got == 8, "an 8 MiB heap gives 8 blocks of 1 MiB, then NULL", "rc=%d got=%d msg: %s", rc, got, err);
  void *f[] = {&ptrs};
  rc = launch("kfree", 16, f, 0); /* free(NULL) is allowed */
  tu_check(rc == 0, "free of every block and of NULL", "rc=%d msg: %s", rc, err);
  rc = launch("kmalloc", 16, a, 0);
  got = 0;
  for (int i = 0; i < 16; i++) got += ptrs[i] != 0;
  tu_check(rc == 0 && got == 8, "freed blocks can be allocated again", "rc=%d got=%d msg: %s", rc, got, err);
  rc = launch("kfree", 16, f, 0);
  rc = launch("kfree", 1, f, 0);
  tu_check(rc < 0 && strstr(err, "double free: free or delete of 0x") && strstr(err, "of heap block #") &&
               strstr(err, "freed by block (0,0,0), thread (0,0,0) at kernel.cu:") &&
               strstr(err, "in kernel kfree"), "a double free is reported, with the free before it",
           "rc=%d msg: %s", rc, err);
  bytes = 100;
  rc = launch("kmalloc", 1, a, 0);
  ptrs[0] += 4;
  rc = launch("kfree", 1, f, 0);
  tu_check(rc < 0 && strstr(err, "not a live block of the device heap"), "free of a pointer into a block is reported",
           "rc=%d msg: %s", rc, err);
  int n = 3;
  void *p[] = {&n};
  rc = launch("kpast", 1, p, 0);
  tu_check(rc == 0, "new[] / delete[] of 4 ints", "rc=%d msg: %s", rc, err);
  n = 4;
  rc = launch("kpast", 1, p, 0);
  tu_check(rc < 0 && strstr(err, "out-of-bounds global store") && strstr(err, "index 4 of heap block #") &&
               strstr(err, "(16 bytes) is 1 element (4 bytes) past the end") && strstr(err, "kernel.cu:21"),
           "an access past a heap block names the block and the line", "rc=%d msg: %s", rc, err);
  n = -1;
  rc = launch("kpast", 1, p, 0);
  tu_check(rc < 0 && strstr(err, "index -1 of heap block #") && strstr(err, "before the start"),
           "an int before a heap block is out of bounds (only new[]'s 8-byte count may go there)", "rc=%d msg: %s", rc, err);
  sim_free(dev, ptrs);
}

/* Hand-written PTX for what NVRTC never emits: malformed indirect calls and built-ins. */
static void test_bad_ptx(void) {
  static const struct { const char *body, *want, *name; } cases[] = {
      {"  .reg .b32 %r<2>;\n  call %r1, (p);\n", "an indirect call needs a 64-bit register", "indirect call through a 32-bit register"},
      {"  call.uni free, ();\n", "argument count does not match", "free without its argument"},
      {"  { .param .b64 a;\n  call.uni malloc, (a);\n  }\n", "call to malloc with an unexpected signature",
       "malloc without a return value"},
      {"  call.uni nosuch, (p);\n", "call to unknown function 'nosuch'", "a call to an unknown function"},
      {"  .reg .b64 %rd<2>;\n  mov.u64 %rd1, nosuch;\n", "unknown symbol", "the address of an unknown function"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char ptx[1024];
    snprintf(ptx, sizeof ptx,
             ".version 9.0\n.target sm_90\n.address_size 64\n.extern .func free(.param .b64 free_param_0);\n"
             ".extern .func malloc(.param .b64 malloc_param_0);\n"
             ".visible .entry k(.param .u64 p)\n{\n%s  ret;\n}\n", cases[i].body);
    sim_module *m = sim_module_load(ptx, strlen(ptx), err, sizeof err);
    tu_check(!m && strstr(err, cases[i].want), cases[i].name, "msg: %s", m ? "(loaded)" : err);
    sim_module_free(m);
  }
}

/* Whole modules that go wrong outside a kernel body: function addresses in initializers, and a
 * .callprototype cut short. */
static void test_bad_modules(void) {
  static const struct { const char *ptx, *want, *name; } cases[] = {
      {".version 9.0\n.target sm_90\n.address_size 64\n.func f()\n{\n ret;\n}\n.global .u32 t[1] = {f};\n",
       "the address of f needs a 64-bit initializer", "a function's address in a 32-bit initializer"},
      {".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n ret;\n}\n.global .u64 t[1] = {k};\n",
       "taking the address of kernel k is not supported", "a kernel's address in an initializer"},
      {".version 9.0\n.target sm_90\n.address_size 64\n.func f()\n{\n ret;\n}\n.global .u64 t[1] = {f, f};\n",
       "too many initializers for t", "more function addresses than elements"},
      {".version 9.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n p : .callprototype (.param .b32 _) _ (",
       "unexpected end of PTX in .callprototype", "a .callprototype cut short"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    sim_module *m = sim_module_load(cases[i].ptx, strlen(cases[i].ptx), err, sizeof err);
    tu_check(!m && strstr(err, cases[i].want), cases[i].name, "msg: %s", m ? "(loaded)" : err);
    sim_module_free(m);
  }
}

int main(void) {
  tu_plan(28);
  dev = sim_device_new(NULL);
  mod = tu_module("calls module", src);
  if (!dev || !mod) return 1;
  test_recursion();
  test_indirect();
  test_assert();
  test_heap();
  test_bad_ptx();
  test_bad_modules();
  sim_module_free(mod);
  sim_device_free(dev);
  return tu_failures() ? 1 : 0;
}
