/* test_occupancy.c: lua/visual/occupancy.lua against NVIDIA's own occupancy calculator.
 *
 * cuda_occupancy.h (shipped with the CUDA toolkit, header-only, no GPU needed) is the code
 * behind cudaOccupancyMaxActiveBlocksPerMultiprocessor. This test runs occupancy.compute from
 * Lua and the header's cudaOccMaxActiveBlocksPerMultiprocessor side by side over a grid of
 * registers, block sizes and static and dynamic shared memory on the modelled H200, so the
 * Lua calculation that cuda.sweep and cuda.occupancy show on the simulator is the one the
 * runtime does on the GPU. Run from the repository root (it loads lua/visual/occupancy.lua). */
#include <stdio.h>
#include <stdlib.h>

#include <cuda_occupancy.h>
#include <lauxlib.h>
#include <lualib.h>

#include "device.h"

static int failures, checked;

/* The modelled H200 (include/h200.h, through the cl_device the backends without a GPU report),
 * and the same figures in cuda_occupancy.h's terms: the device is the input of both
 * calculations, not an expectation, so it comes from the one description. Filled by main. */
static cl_device dev;
static cudaOccDeviceProp h200;

static void describe_h200(void) {
  device_default_h200(&dev);
  h200 = (cudaOccDeviceProp){
      .computeMajor = dev.cc_major, .computeMinor = dev.cc_minor,
      .maxThreadsPerBlock = dev.max_threads_per_block,
      .maxThreadsPerMultiprocessor = dev.max_threads_per_sm, .regsPerBlock = dev.regs_per_block,
      .regsPerMultiprocessor = dev.regs_per_sm, .warpSize = dev.warp_size,
      .sharedMemPerBlock = dev.shared_per_block, .sharedMemPerMultiprocessor = dev.shared_per_sm,
      .numSms = dev.sm_count, .sharedMemPerBlockOptin = dev.shared_per_block_optin,
      .reservedSharedMemPerBlock = 1024, /* NVIDIA's figure for CC 8.0 and later */
  };
}

/* Blocks per SM according to cuda_occupancy.h, with the attributes cudart gives a kernel whose
 * dynamic shared memory limit was raised to the opt-in maximum (as the cuda backend does). */
static int reference(int regs, int threads, int static_smem, int dyn_smem) {
  cudaOccFuncAttributes attr = {
      .maxThreadsPerBlock = dev.max_threads_per_block, .numRegs = regs,
      .sharedSizeBytes = (size_t)static_smem, .partitionedGCConfig = PARTITIONED_GC_OFF,
      .shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN,
      .maxDynamicSharedSizeBytes = dev.shared_per_block_optin - (size_t)static_smem,
      .numBlockBarriers = 1,
  };
  cudaOccDeviceState state = {.cacheConfig = CACHE_PREFER_NONE,
                              .carveoutConfig = SHAREDMEM_CARVEOUT_DEFAULT};
  cudaOccResult res = {0};
  if (cudaOccMaxActiveBlocksPerMultiprocessor(&res, &h200, &attr, &state, threads,
                                              (size_t)dyn_smem) != CUDA_OCC_SUCCESS)
    return -1;
  return res.activeBlocksPerMultiprocessor;
}

/* Pushes the device table cuda.device() returns for the modelled H200. */
static void push_device(lua_State *L) {
  lua_newtable(L);
  const struct { const char *k; lua_Integer v; } f[] = {
      {"max_threads_per_block", dev.max_threads_per_block},
      {"max_threads_per_sm", dev.max_threads_per_sm},
      {"max_blocks_per_sm", dev.max_blocks_per_sm},
      {"regs_per_block", dev.regs_per_block},
      {"regs_per_sm", dev.regs_per_sm},
      {"warp_size", dev.warp_size},
      {"shared_per_block", (lua_Integer)dev.shared_per_block},
      {"shared_per_sm", (lua_Integer)dev.shared_per_sm},
      {"shared_per_block_optin", (lua_Integer)dev.shared_per_block_optin}};
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
    lua_pushinteger(L, f[i].v);
    lua_setfield(L, -2, f[i].k);
  }
  lua_pushfstring(L, "%d.%d", dev.cc_major, dev.cc_minor);
  lua_setfield(L, -2, "cc");
}

/* The description against NVIDIA's own table of the architecture's limits: the one figure of
 * it that cuda_occupancy.h holds by compute capability rather than taking as input. */
static void independent_limits(void) {
  int blocks = 0;
  if (cudaOccMaxBlocksPerMultiprocessor(&blocks, &h200) == CUDA_OCC_SUCCESS &&
      blocks == dev.max_blocks_per_sm)
    printf("ok - include/h200.h's blocks per SM (%d) is cuda_occupancy.h's for CC %d.%d\n",
           dev.max_blocks_per_sm, dev.cc_major, dev.cc_minor);
  else
    printf("not ok - include/h200.h says %d blocks per SM, cuda_occupancy.h %d\n",
           dev.max_blocks_per_sm, blocks), failures++;
}

/* occupancy.compute({registers, shared_static}, device, threads, dyn).blocks_per_sm */
static int from_lua(lua_State *L, int regs, int threads, int static_smem, int dyn_smem) {
  lua_getfield(L, 1, "compute");
  lua_newtable(L);
  lua_pushinteger(L, regs), lua_setfield(L, -2, "registers");
  lua_pushinteger(L, static_smem), lua_setfield(L, -2, "shared_static");
  push_device(L);
  lua_pushinteger(L, threads);
  lua_pushinteger(L, dyn_smem);
  if (lua_pcall(L, 4, 1, 0) != LUA_OK) {
    printf("# %s\n", lua_tostring(L, -1));
    lua_pop(L, 1);
    return -2;
  }
  lua_getfield(L, -1, "blocks_per_sm");
  int n = (int)lua_tointeger(L, -1);
  lua_pop(L, 2);
  return n;
}

static void compare_grid(lua_State *L) {
  static const int regs[] = {0, 8, 12, 16, 24, 30, 32, 40, 48, 56, 64, 72, 80, 96, 128, 168, 200, 255};
  static const int threads[] = {1, 32, 33, 64, 96, 128, 160, 192, 256, 288, 384, 512, 640, 768, 1000, 1024};
  static const int smem[] = {0, 100, 4096, 12288, 32768, 49152};
  static const int dyn[] = {0, 1, 1000, 20000, 50000, 100000, 180000, 232448};
  int shown = 0;
  for (size_t a = 0; a < sizeof regs / sizeof *regs; a++)
    for (size_t b = 0; b < sizeof threads / sizeof *threads; b++)
      for (size_t c = 0; c < sizeof smem / sizeof *smem; c++)
        for (size_t d = 0; d < sizeof dyn / sizeof *dyn; d++) {
          int want = reference(regs[a], threads[b], smem[c], dyn[d]);
          if (want < 0) want = 0; /* the header refuses what cannot launch; Lua says 0 */
          int got = from_lua(L, regs[a], threads[b], smem[c], dyn[d]);
          checked++;
          if (got != want) {
            failures++;
            if (shown++ < 10)
              printf("# regs %d, %d threads, %d static + %d dynamic shared: Lua %d, CUDA %d\n",
                     regs[a], threads[b], smem[c], dyn[d], got, want);
          }
        }
}

/* Answers a learner can check in NVIDIA's spreadsheet calculator for CC 9.0. */
static void known_answers(lua_State *L) {
  struct { int regs, threads, smem, dyn, blocks; const char *what; } k[] = {
      {32, 256, 0, 0, 8, "32 regs, 256 threads: 8 blocks (100%)"},
      {64, 256, 0, 0, 4, "64 regs, 256 threads: 4 blocks (50%), registers bind"},
      {12, 32, 0, 0, 32, "32 threads: 32 blocks (50%), the block limit binds"},
      {16, 256, 32768, 0, 6, "32 KiB static shared: 6 blocks, the 1 KiB reserve counts"},
      {255, 1024, 0, 0, 0, "255 regs x 1024 threads cannot launch"},
  };
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    int got = from_lua(L, k[i].regs, k[i].threads, k[i].smem, k[i].dyn);
    int ref = reference(k[i].regs, k[i].threads, k[i].smem, k[i].dyn);
    if (ref < 0) ref = 0;
    if (got == k[i].blocks && ref == k[i].blocks) printf("ok - %s\n", k[i].what);
    else printf("not ok - %s: Lua %d, cuda_occupancy.h %d\n", k[i].what, got, ref), failures++;
  }
}

int main(void) {
  printf("1..7\n"); /* the plan: tests/run.sh holds the run to seven checks */
  describe_h200();
  independent_limits();
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  if (luaL_dostring(L, "package.path = 'lua/?.lua;lua/visual/?.lua;' .. package.path; "
                      "return require 'occupancy'")) {
    printf("not ok - load lua/visual/occupancy.lua: %s\n", lua_tostring(L, -1));
    return 1;
  }
  known_answers(L);
  int before = failures;
  compare_grid(L);
  if (failures == before) printf("ok - occupancy.lua agrees with cuda_occupancy.h on %d configurations\n", checked);
  else printf("not ok - occupancy.lua differs from cuda_occupancy.h in %d of %d configurations\n",
              failures - before, checked);
  lua_close(L);
  return failures != 0;
}
