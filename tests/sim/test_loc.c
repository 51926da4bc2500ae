/* test_loc.c: the line each instruction shows (sim/ptx_loc.c). Code that NVRTC inlines from a
 * toolkit header (cooperative_groups, a texture fetch, NVRTC's built-in header) shows the line of
 * the learner's code it was inlined into, followed outward through headers that inline each
 * other; the learner's own code keeps its lines, inlined or not, also in a folder of theirs
 * whose name starts like a toolkit's (cuda-course/include). */
#include <stdio.h>
#include <string.h>

#include "nvrtc_util.h"
#include "sim_int.h"

static const char PTX[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry k(.param .u64 p)\n{\n"
    "  .reg .b64 %rd<3>;\n  .reg .b32 %r<4>;\n"
    "  .loc 1 10 3\n"
    "  ld.param.u64 %rd1, [p];\n"
    "  .loc 2 500 5, function_name $L__info_string0, inlined_at 1 11 7\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  .loc 3 80 9, function_name $L__info_string1, inlined_at 2 500 5\n"
    "  add.s32 %r2, %r1, 1;\n"
    "  .loc 4 20 2, function_name $L__info_string2, inlined_at 1 12 4\n"
    "  add.s32 %r3, %r2, 1;\n"
    "  .loc 5 30 1, function_name $L__info_string3, inlined_at 1 13 2\n"
    "  st.global.u32 [%rd1], %r3;\n"
    "  .loc 1 14 1\n"
    "  ret;\n"
    "}\n"
    ".file 1 \"/home/ann/cuda-course/src/main.cu\"\n"
    ".file 2 \"/usr/local/cuda-13.0/include/cooperative_groups.h\"\n"
    ".file 3 \"/usr/local/cuda-13.0/targets/x86_64-linux/include/cooperative_groups/details/h.h\"\n"
    ".file 4 \"/home/ann/cuda-course/include/mine.h\"\n"
    ".file 5 \"__nv_nvrtc_builtin_header.h\"\n";

int main(void) {
  tu_plan(3);
  char err[512];
  sim_module *m = sim_module_load(PTX, strlen(PTX), err, sizeof err);
  if (!tu_check(m != NULL, "the module loads", "%s", err)) return 1;
  /* the (file:line) each instruction shows, a repeat of the one before left out */
  char seen[512] = "", last[64] = "";
  for (int pc = 0; pc < m->ncode; pc++) {
    const sim_inst *in = &m->code[pc];
    if (in->file < 0 || in->file >= m->nfiles || !m->files[in->file]) continue;
    char here[64];
    snprintf(here, sizeof here, "%s:%d", m->files[in->file], in->line);
    if (!strcmp(here, last)) continue;
    snprintf(last, sizeof last, "%s", here);
    size_t n = strlen(seen);
    snprintf(seen + n, sizeof seen - n, "%s%s", n ? " " : "", here);
  }
  const char *want = "main.cu:10 main.cu:11 mine.h:20 main.cu:13 main.cu:14";
  tu_check(!strcmp(seen, want), "toolkit code shows the learner's line; the learner's own keeps its",
           "got '%s', want '%s'", seen, want);
  sim_module_free(m);
  /* .loc lines NVRTC never writes (inline PTX may): cut short, or inlined at itself in a toolkit
   * file. Each loads or is refused with a message, and a line stays one the module names. */
  static const char *const odd[] = {
      ".loc 2 7 1, inlined_at\n", ".loc 2 7 1, function_name $L__x, inlined_at 2\n",
      ".loc 2 7 1, inlined_at 2 7 1\n", ".loc 2 7 1, inlined_at 2 7 1, inlined_at 1 3 1\n"};
  int fine = 1;
  for (size_t i = 0; i < sizeof odd / sizeof *odd; i++) {
    char ptx[1024];
    snprintf(ptx, sizeof ptx,
             ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n%s"
             "  ret;\n}\n.file 1 \"a.cu\"\n.file 2 \"/usr/local/cuda/include/t.h\"\n", odd[i]);
    err[0] = 0;
    sim_module *o = sim_module_load(ptx, strlen(ptx), err, sizeof err);
    if (!o && !err[0]) fine = 0;
    for (int pc = 0; o && pc < o->ncode; pc++)
      if (o->code[pc].file >= o->nfiles || (o->code[pc].file >= 0 && o->code[pc].line > 7)) fine = 0;
    if (o) sim_module_free(o);
  }
  tu_check(fine, "odd .loc lines load or are refused with a message", "a line or file out of range");
  return tu_failures() != 0;
}
