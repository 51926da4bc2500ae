/* ptx_loc.c: where each instruction was written, from the PTX's .loc directives.
 *
 * NVRTC's -lineinfo marks code inlined from another function with where it was inlined:
 * `.loc 2 542 5, function_name $L__info_string0, inlined_at 1 4 17`. A fault, a race or a step
 * in a toolkit header's inlined code (a texture fetch, cooperative_groups' thread_rank) at that
 * header's own line names a file the learner never wrote; the line to show is where their code
 * called into the toolkit: the inlined_at chain followed outward until it leaves the toolkit's
 * headers. The learner's own inlined __device__ functions keep their own lines, as a debugger
 * shows them.
 *
 * The .file directives that name the files come after the code, so each instruction keeps the
 * .loc it was under and the lines are settled once the whole module is read. */
#include <string.h>

#include "ptx_loc.h"

/* Whether a .file path is one of the toolkit's headers: NVRTC's built-in header, or a file in
 * an include folder of a CUDA installation (`.../cuda/include/`, `.../cuda-13.0/include/`,
 * `.../cuda-13.0/targets/x86_64-linux/include/`). A folder named like cuda-course is not one. */
static int toolkit_path(const char *s) {
  if (strstr(s, "__nv_nvrtc_builtin_header")) return 1;
  for (const char *c = strstr(s, "/cuda"); c; c = strstr(c + 1, "/cuda")) {
    const char *r = c + 5;
    if (*r == '-')
      for (r++; (*r >= '0' && *r <= '9') || *r == '.'; r++) {}
    if (!strncmp(r, "/include/", 9)) return 1;
    if (!strncmp(r, "/targets/", 9)) {
      const char *slash = strchr(r + 9, '/');
      if (slash && !strncmp(slash, "/include/", 9)) return 1;
    }
  }
  return 0;
}

void ptx_loc_file(ptx_parser *p, int n, const char *path) {
  p->toolkit_file = ptx_grow(p, p->toolkit_file, &p->cap_toolkit, n + 1, 1);
  if (n >= p->ntoolkit) {
    memset(p->toolkit_file + p->ntoolkit, 0, (size_t)(n + 1 - p->ntoolkit));
    p->ntoolkit = n + 1;
  }
  p->toolkit_file[n] = (unsigned char)toolkit_path(path);
}

void ptx_loc_add(ptx_parser *p, const ptx_loc *loc) {
  p->locs = ptx_grow(p, p->locs, &p->cap_locs, p->nlocs + 1, sizeof *p->locs);
  p->locs[p->nlocs] = *loc;
  p->cur_loc = p->nlocs++;
}

void ptx_loc_inst(ptx_parser *p, int pc) {
  p->inst_loc = ptx_grow(p, p->inst_loc, &p->cap_inst_loc, pc + 1, sizeof *p->inst_loc);
  for (; p->ninst_loc < pc; p->ninst_loc++) p->inst_loc[p->ninst_loc] = -1;
  p->inst_loc[pc] = p->cur_loc;
  if (pc >= p->ninst_loc) p->ninst_loc = pc + 1;
}

static int toolkit(const ptx_parser *p, int f) {
  return f >= 0 && f < p->ntoolkit && p->toolkit_file[f];
}

/* The learner's line for .loc k: its own where it is not in the toolkit or not inlined; else
 * where it was inlined, followed outward through the .loc that stands at that place (the
 * closest before k) while that is in the toolkit too. */
static void outer(const ptx_parser *p, int k, int *file, int *line) {
  const ptx_loc *l = &p->locs[k];
  *file = l->file;
  *line = l->line;
  for (int depth = 0; depth < 64 && toolkit(p, *file) && l->in_file >= 0; depth++) {
    *file = l->in_file;
    *line = l->in_line;
    if (!toolkit(p, *file)) return;
    int j = k - 1;
    while (j >= 0 && j >= k - 4096 && !(p->locs[j].file == l->in_file &&
                                         p->locs[j].line == l->in_line &&
                                         p->locs[j].col == l->in_col))
      j--;
    if (j < 0 || j < k - 4096) return;
    k = j;
    l = &p->locs[k];
  }
}

void ptx_loc_settle(ptx_parser *p) {
  sim_module *m = p->m;
  for (int pc = 0; pc < m->ncode && pc < p->ninst_loc; pc++) {
    int k = p->inst_loc[pc];
    if (k < 0 || k >= p->nlocs || !toolkit(p, p->locs[k].file)) continue;
    int file, line;
    outer(p, k, &file, &line);
    m->code[pc].file = (int16_t)file;
    m->code[pc].line = line;
  }
}
