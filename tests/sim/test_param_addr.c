/* test_param_addr.c: a parameter's address taken, in PTX written by hand so that every form
 * the PTX ISA allows is met, NVRTC's or not: ld.param through a register in a kernel, cvta.param
 * and cvta.to.param, .param::entry, a device function's parameter through mov (its copy in
 * local memory), against CPU references; and the hostile ones, with their messages: an address
 * past the parameters, a wild or negative one, a misaligned one, a kernel that reads through a
 * register without taking any parameter's address, and what the decoder refuses. The kernels
 * NVRTC writes are in tests/simulator/param_addr.lua. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc_util.h"

static sim_device *dev;
static char err[4096];

#define HEAD ".version 9.0\n.target sm_90\n.address_size 64\n"

/* s[tid * k + j] of a 16-byte struct, read four ways: ld.param through mov's address; a generic
 * ld of cvta.param's; ld.param of cvta.to.param's way back; and cvta.param::entry of the name.
 * Each thread writes the four into o[4 * tid ..]. */
static const char *reads_ptx =
    HEAD
    ".visible .entry reads(.param .align 4 .b8 s[16], .param .u32 k, .param .u32 j,\n"
    "                      .param .u64 o)\n{\n"
    "  .reg .b64 %rd<12>;\n  .reg .b32 %r<12>;\n"
    "  mov.b64 %rd1, s;\n"
    "  ld.param.u32 %r1, [k];\n  ld.param.u32 %r2, [j];\n  ld.param.u64 %rd2, [o];\n"
    "  mov.u32 %r3, %tid.x;\n  mad.lo.s32 %r4, %r3, %r1, %r2;\n"
    "  mul.wide.s32 %rd3, %r4, 4;\n  add.s64 %rd4, %rd1, %rd3;\n"
    "  ld.param.u32 %r5, [%rd4];\n"
    "  cvta.param.u64 %rd5, %rd4;\n  ld.u32 %r6, [%rd5];\n"
    "  cvta.to.param.u64 %rd6, %rd5;\n  ld.param.u32 %r7, [%rd6];\n"
    "  cvta.param::entry.u64 %rd7, s;\n  add.s64 %rd8, %rd7, %rd3;\n  ld.u32 %r8, [%rd8];\n"
    "  mul.wide.u32 %rd9, %r3, 16;\n  add.s64 %rd10, %rd2, %rd9;\n"
    "  st.global.v4.u32 [%rd10], {%r5, %r6, %r7, %r8};\n"
    "  ret;\n}\n"
    /* a read through a register with no parameter's address taken: whatever the register holds */
    ".visible .entry blind(.param .u64 a, .param .u32 v)\n{\n"
    "  .reg .b64 %rd<3>;\n  .reg .b32 %r<3>;\n"
    "  ld.param.u64 %rd1, [a];\n  ld.param.u32 %r1, [%rd1];\n  ret;\n}\n"
    /* a device function's parameter through mov: the address of its copy, which it changes */
    ".func (.param .b32 rv) twice(.param .align 4 .b8 q[12], .param .b32 i)\n{\n"
    "  .reg .b64 %rd<6>;\n  .reg .b32 %r<6>;\n"
    "  mov.b64 %rd1, q;\n  ld.param.u32 %r1, [i];\n"
    "  mul.wide.s32 %rd2, %r1, 4;\n  add.s64 %rd3, %rd1, %rd2;\n"
    "  ld.local.u32 %r2, [%rd3];\n  add.s32 %r3, %r2, %r2;\n  st.local.u32 [%rd3], %r3;\n"
    "  ld.local.u32 %r4, [%rd3];\n  ld.param.u32 %r5, [q+8];\n  add.s32 %r4, %r4, %r5;\n"
    "  st.param.b32 [rv], %r4;\n  ret;\n}\n"
    ".visible .entry calls(.param .u64 o, .param .u32 i)\n{\n"
    "  .reg .b64 %rd<3>;\n  .reg .b32 %r<4>;\n"
    "  ld.param.u64 %rd1, [o];\n  ld.param.u32 %r1, [i];\n"
    "  {\n  .param .align 4 .b8 a0[12];\n  .param .b32 a1;\n  .param .b32 r0;\n"
    "  st.param.b32 [a0], 5;\n  st.param.b32 [a0+4], 7;\n  st.param.b32 [a0+8], 100;\n"
    "  st.param.b32 [a1], %r1;\n"
    "  call.uni (r0), twice, (a0, a1);\n  ld.param.b32 %r2, [r0];\n  }\n"
    "  st.global.u32 [%rd1], %r2;\n  ret;\n}\n";

static sim_module *mod;

static int run(const char *k, unsigned threads, void **args) {
  sim_launch_opts o = {0};
  o.threads = 1;
  err[0] = 0;
  return sim_launch(dev, sim_module_kernel(mod, k), (sim_dim3){1, 1, 1},
                    (sim_dim3){threads, 1, 1}, 0, args, &o, NULL, err, sizeof err);
}

static void test_reads(void) {
  uint32_t s[4] = {11, 22, 33, 44}, k = 1, j = 0;
  uint32_t *o = sim_malloc(dev, 4 * 16, "u32[16]", err, sizeof err);
  void *args[] = {s, &k, &j, &o};
  int rc = run("reads", 4, args), wrong = 0;
  for (int t = 0; t < 4; t++)
    for (int w = 0; w < 4; w++) wrong += o[4 * t + w] != s[t];
  tu_check(rc == 0 && !wrong, "a struct parameter read through mov, cvta.param, cvta.to.param and "
           ".param::entry", "rc=%d wrong=%d %s", rc, wrong, err);
  j = 1; /* thread 3 reads s[4]: the parameter k after the struct */
  rc = run("reads", 4, args);
  tu_check(rc < 0 && strstr(err, "out-of-bounds parameter load of 4 bytes at parameter address "
                                 "0x10: index 4 of parameter 0 (16 bytes) is 1 element (4 bytes) "
                                 "past the end") && strstr(err, "thread (3,0,0)"),
           "an index past the struct, into the next parameter, is out of bounds", "%s", err);
  k = 0x40000000; /* thread 1's index times 4 wraps a 32-bit offset: a wild address */
  j = 0;
  rc = run("reads", 4, args);
  tu_check(rc < 0 && strstr(err, "index 1073741824 of parameter 0 (16 bytes) is 1073741821 "
                                 "elements"), "a wild address is named, not read", "%s", err);
  k = 1;
  j = (uint32_t)-2; /* thread 0 at s[-2], thread 1 at s[-1] */
  rc = run("reads", 4, args);
  tu_check(rc < 0 && strstr(err, "index -2 of parameter 0 (16 bytes) is 2 elements (8 bytes) "
                                 "before the start"), "a negative index is before the start",
           "%s", err);
  sim_free(dev, o);
}

static void test_blind(void) {
  uint64_t a = 8;
  uint32_t v = 1;
  void *args[] = {&a, &v};
  int rc = run("blind", 1, args);
  tu_check(rc < 0 && strstr(err, "out-of-bounds parameter load of 4 bytes at parameter address "
                                 "0x8: the kernel takes the address of none of its parameters"),
           "a read through a register of a kernel that takes no parameter's address", "%s", err);
  a = 2;
  rc = run("blind", 1, args);
  tu_check(rc < 0 && strstr(err, "misaligned parameter load of 4 bytes at parameter address 0x2 "
                                 "(must be a multiple of 4)"), "a misaligned parameter load",
           "%s", err);
}

static void test_func_copy(void) {
  uint32_t *o = sim_malloc(dev, 4, "u32[1]", err, sizeof err);
  uint32_t i = 1;
  void *args[] = {&o, &i};
  int rc = run("calls", 1, args);
  tu_check(rc == 0 && o[0] == 7 * 2 + 100, "a device function's parameter through mov: its copy, "
           "changed and read back", "rc=%d o=%u %s", rc, o[0], err);
  i = 3; /* q[3]: past its 12 bytes */
  rc = run("calls", 1, args);
  tu_check(rc < 0 && strstr(err, "out-of-bounds local load of 4 bytes at local address 0x") &&
               strstr(err, "index 3 of parameter 0 of twice (12 bytes, the function's copy of it "
                           "in the thread's local memory) is 1 element (4 bytes) past the end"),
           "an index past a function parameter's copy", "%s", err);
  sim_free(dev, o);
}

/* Loads a module; the load must fail with `want` in its message. */
static void refused(const char *ptx, const char *want, const char *name) {
  sim_module *m = sim_module_load(ptx, strlen(ptx), err, sizeof err);
  tu_check(!m && strstr(err, want), name, "msg: %s", m ? "(loaded)" : err);
  sim_module_free(m);
}

static void test_refused(void) {
  refused(HEAD ".visible .entry k(.param .u32 s)\n{\n  .reg .b64 %rd<3>;\n  .reg .b32 %r<3>;\n"
          "  mov.b64 %rd1, s;\n  st.param.u32 [%rd1], %r1;\n  ret;\n}\n",
          "a store through a parameter's address: a kernel's parameters are read-only",
          "st.param through a kernel parameter's address is refused at load");
  refused(HEAD ".func f(.param .b64 q)\n{\n  .reg .b32 %r<3>;\n  mov.u32 %r1, q;\n  ret;\n}\n",
          "a device function parameter's address is 64 bits",
          "a 32-bit address of a function's parameter is refused");
  refused(HEAD ".func f(.param .b64 q)\n{\n  .reg .b64 %rd<3>;\n  cvta.param.u64 %rd1, q;\n"
          "  ret;\n}\n", "cvta.param takes a kernel's parameter",
          "cvta.param of a function's parameter is refused");
  refused(HEAD ".func f(.param .b64 q)\n{\n  .reg .b64 %rd<3>;\n  {\n  .param .b64 a;\n"
          "  mov.b64 %rd1, a;\n  }\n  ret;\n}\n", "only a function's own parameters have an "
          "address", "the address of a call's argument slot is refused");
  refused(HEAD ".visible .entry k(.param .u32 s)\n{\n  .reg .b64 %rd<3>;\n"
          "  cvta.to.param.u64 %rd1, s;\n  ret;\n}\n", "'cvta.to.param.u64'",
          "cvta.to.param of a name is refused");
}

int main(void) {
  tu_plan(14);
  dev = sim_device_new(NULL);
  mod = sim_module_load(reads_ptx, strlen(reads_ptx), err, sizeof err);
  if (!tu_check(mod != NULL, "the hand-written module loads", "%s", err)) return 1;
  test_reads();
  test_blind();
  test_func_copy();
  test_refused();
  sim_module_free(mod);
  sim_device_free(dev);
  return tu_failures() ? 1 : 0;
}
