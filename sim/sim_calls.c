/* sim_calls.c: calls that the plain jump-and-copy of sim_exec.c cannot do: recursive functions,
 * calls through function pointers (virtual functions, tables of functions), and the device
 * functions the simulator provides itself (__assertfail, malloc, free, operator new / delete).
 *
 * Stance: only functions that can be active twice at once pay for it. At load time the call
 * graph (ptx_calls.c) marks a function "stacked" when it lies on a cycle or its address is taken
 * (an indirect call may reach any such function, so every indirect call site counts as an edge
 * to each of them).
 * A call to a stacked function saves the callee's register rows, predicates and parameter slots
 * on the warp's save stack, gives the activation a frame on the per-thread call stack (its
 * __local_depot, addressed from SIM_SR_FRAME), and pushes a divergence-stack frame of its own
 * (rpc SIM_RPC_CALL) whose lanes meet at the callee's final return, SIM_OP_RETS, which copies the
 * return value out and restores what the call saved. Ordinary calls keep their two-instruction
 * path in sim_exec.c; the turned-down alternative, one mechanism for every call, would have made
 * every call in every kernel pay a save of the callee's registers.
 *
 * The call stack has the GPU's default size per thread (cudaLimitStackSize, 1 KiB; a launch
 * option). An activation takes its local variables rounded up to 16 bytes plus SIM_CALL_OVERHEAD
 * (ptx_calls.c) for the return address and saved registers, which is a model: the GPU's frames
 * hold whatever registers ptxas decides to save, so the depth at which a real H200 overflows
 * differs somewhat (bench/calls_gpu.sh measures it). The kernel's own locals and those of
 * functions that are not stacked keep their static places and are not counted against the stack. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_run.h"

/* Host memory one warp's save stack may take: a bigger cudaLimitStackSize with small frames and
 * many registers could otherwise ask for gigabytes across a block's warps. */
#define SIM_SAVE_MAX ((size_t)16 << 20)

/* ---- run time ---- */

/* The header of an activation record, stored after the saved state so that a return finds it at
 * the top of the save stack. */
typedef struct act_hdr {
  int32_t call, func;     /* the call site (sim_module.calls) and the callee */
  uint64_t frame, top;    /* the caller's SIM_SR_FRAME and call-stack top */
  size_t bytes;           /* the whole record, header included */
} act_hdr;

static size_t fp_bytes(const sim_func *f) { return (size_t)(f->fp_hi - f->fp_lo); }

static int push_frame(sim_warp *w, int pc, int rpc, uint32_t mask) {
  if (w->sp == w->cap) {
    int cap = w->cap * 2;
    if (cap > 1 << 16) return -1;
    sim_frame *s = realloc(w->stack, (size_t)cap * sizeof *s);
    if (!s) return -1;
    w->stack = s;
    w->cap = cap;
  }
  w->stack[w->sp++] = (sim_frame){pc, rpc, mask};
  return 0;
}

/* Saves what an activation of f overwrites: its rows and predicates (all lanes) and its parameter
 * slots; returns -1 past SIM_SAVE_MAX or when the host is out of memory. */
static int save_state(sim_worker *wk, sim_warp *w, int call, int func) {
  const sim_func *f = &wk->run->m->funcs[func];
  size_t rows = (size_t)f->nregs * SIM_WARP * sizeof *w->R;
  size_t preds = (size_t)f->npreds * sizeof *w->P;
  size_t fpb = fp_bytes(f), st = wk->run->fstride;
  size_t bytes = (rows + preds + fpb * SIM_WARP + sizeof(act_hdr) + 7) / 8 * 8;
  if (w->save_len + bytes > SIM_SAVE_MAX) return -1;
  if (w->save_len + bytes > w->save_cap) {
    size_t cap = w->save_cap ? w->save_cap : 4096;
    while (cap < w->save_len + bytes) cap *= 2;
    unsigned char *s = realloc(w->save, cap);
    if (!s) return -1;
    w->save = s;
    w->save_cap = cap;
  }
  unsigned char *p = w->save + w->save_len;
  memcpy(p, w->R + (size_t)f->reg_first * SIM_WARP, rows);
  memcpy(p + rows, w->P + f->pred_first, preds);
  for (int l = 0; l < SIM_WARP; l++)
    memcpy(p + rows + preds + (size_t)l * fpb, w->fparam + (size_t)l * st + f->fp_lo, fpb);
  act_hdr h = {call, func, w->R[SIM_SR_FRAME * SIM_WARP], w->stack_top, bytes};
  memcpy(p + bytes - sizeof h, &h, sizeof h);
  w->save_len += bytes;
  return 0;
}

/* Pops the top activation record back into the warp; returns its header. */
static act_hdr restore_state(sim_warp *w, const sim_module *m, size_t st) {
  act_hdr h;
  memcpy(&h, w->save + w->save_len - sizeof h, sizeof h);
  w->save_len -= h.bytes;
  const sim_func *f = &m->funcs[h.func];
  const unsigned char *p = w->save + w->save_len;
  size_t rows = (size_t)f->nregs * SIM_WARP * sizeof *w->R;
  size_t preds = (size_t)f->npreds * sizeof *w->P, fpb = fp_bytes(f);
  memcpy(w->R + (size_t)f->reg_first * SIM_WARP, p, rows);
  memcpy(w->P + f->pred_first, p + rows, preds);
  for (int l = 0; l < SIM_WARP; l++)
    memcpy(w->fparam + (size_t)l * st + f->fp_lo, p + rows + preds + (size_t)l * fpb, fpb);
  for (int l = 0; l < SIM_WARP; l++) w->R[SIM_SR_FRAME * SIM_WARP + l] = h.frame;
  w->stack_top = h.top;
  w->depth--;
  return h;
}

/* A function's name as its source spells it: _Z4downi -> down, _ZNK2Sq4areaEv -> Sq::area.
 * Only the name, not the parameter types; anything else is copied as it is. */
static void source_name(const char *mangled, char *buf, size_t len) {
  const char *s = mangled;
  size_t n = 0;
  buf[0] = 0;
  if (strncmp(s, "_Z", 2) != 0) {
    snprintf(buf, len, "%s", mangled);
    return;
  }
  s += 2;
  if (*s == 'N') /* a nested name: skip its cv- and restrict-qualifiers */
    for (s++; *s == 'K' || *s == 'V' || *s == 'r'; s++) {}
  while (*s >= '1' && *s <= '9') {
    char *end;
    long k = strtol(s, &end, 10);
    if (k <= 0 || (long)strnlen(end, (size_t)k) < k) break;
    n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%.*s", n ? "::" : "", (int)k, end);
    if (n >= len) break;
    s = end + k;
  }
  if (!buf[0]) snprintf(buf, len, "%s", mangled);
}

int sim_call_stacked(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em,
                     int func) {
  const sim_run *run = wk->run;
  const sim_module *m = run->m;
  const sim_func *f = &m->funcs[func];
  const sim_call *c = &m->calls[in->imm];
  int lane = __builtin_ctz(em);
  char name[128];
  uint64_t base = w->stack_top, need = base + f->frame_bytes;
  int overflow = need > m->local_frame + run->stack_size;
  if (c->nargs != f->nparams || overflow) source_name(f->name, name, sizeof name);
  if (c->nargs != f->nparams)
    return sim_fail(wk, w, lane, in, "indirect call to %s with %d argument%s, but it takes %d: the "
                    "function pointer has the wrong type", name, c->nargs,
                    c->nargs == 1 ? "" : "s", f->nparams);
  if (overflow)
    return sim_fail(wk, w, lane, in, "stack overflow: call %d deep to %s needs %llu bytes of call "
                    "stack per thread, but a thread has %zu (cudaLimitStackSize; "
                    "cuda.simopts{stack = bytes} changes it): recursion too deep, or without an "
                    "end", w->depth + 1, name, (unsigned long long)(need - m->local_frame),
                    run->stack_size);
  if (save_state(wk, w, (int)in->imm, func) < 0) {
    source_name(f->name, name, sizeof name);
    return sim_fail(wk, w, lane, in, "call %d deep to %s: recursion this deep needs more than the "
                    "%zu MiB of host memory the simulator gives one warp for the callers' "
                    "registers (with a smaller cuda.simopts{stack = bytes} it is a stack "
                    "overflow)", w->depth + 1, name, SIM_SAVE_MAX >> 20);
  }
  size_t st = run->fstride;
  LANES({
    unsigned char *fp = w->fparam + (size_t)l * st;
    for (int i = 0; i < c->nargs; i++) {
      size_t n = (size_t)c->arg_size[i];
      memmove(fp + f->params[i].offset, fp + c->arg_off[i],
              n < f->params[i].size ? n : f->params[i].size);
    }
  });
  for (int l = 0; l < SIM_WARP; l++) w->R[SIM_SR_FRAME * SIM_WARP + l] = base;
  w->stack_top = need;
  w->depth++;
  w->stack[w->sp - 1].pc = pc + 1; /* where the caller's lanes resume */
  if (push_frame(w, f->first, SIM_RPC_CALL, em) < 0)
    return sim_fail(wk, w, lane, in, "control flow nests too deeply (divergence stack overflow)");
  return 0;
}

int sim_ret_stacked(sim_worker *wk, sim_warp *w, const sim_inst *in, uint32_t em) {
  const sim_module *m = wk->run->m;
  if (w->stack[w->sp - 1].rpc != SIM_RPC_CALL)
    return sim_fail(wk, w, __builtin_ctz(em), in,
                    "internal error: a recursive function returned with its lanes apart");
  act_hdr h;
  memcpy(&h, w->save + w->save_len - sizeof h, sizeof h);
  const sim_call *c = &m->calls[h.call];
  const sim_func *f = &m->funcs[h.func];
  size_t st = wk->run->fstride;
  if (c->ret_off >= 0 && f->ret_off >= 0) {
    size_t n = (size_t)(c->ret_size < f->ret_size ? c->ret_size : f->ret_size);
    LANES({
      unsigned char *fp = w->fparam + (size_t)l * st;
      memmove(fp + c->ret_off, fp + f->ret_off, n);
    });
  }
  restore_state(w, m, st);
  w->sp--;
  return 0;
}

void sim_unwind_stacked(sim_worker *wk, sim_warp *w) {
  (void)restore_state(w, wk->run->m, wk->run->fstride);
}

int sim_act_below(const sim_warp *w, size_t *end, sim_act *out) {
  act_hdr h;
  if (*end < sizeof h || *end > w->save_len) return -1;
  memcpy(&h, w->save + *end - sizeof h, sizeof h);
  if (h.bytes > *end || h.bytes < sizeof h) return -1;
  *end -= h.bytes;
  *out = (sim_act){h.func, w->save + *end, h.frame};
  return 0;
}

uint64_t sim_act_row(const sim_module *m, const sim_act *a, int row, int lane) {
  const sim_func *f = &m->funcs[a->func];
  uint64_t v;
  memcpy(&v, a->saved + ((size_t)(row - f->reg_first) * SIM_WARP + (size_t)lane) * sizeof v,
         sizeof v);
  return v;
}

uint32_t sim_act_pred(const sim_module *m, const sim_act *a, int p) {
  const sim_func *f = &m->funcs[a->func];
  size_t rows = (size_t)f->nregs * SIM_WARP * sizeof(uint64_t);
  uint32_t v;
  memcpy(&v, a->saved + rows + (size_t)(p - f->pred_first) * sizeof v, sizeof v);
  return v;
}

/* The function an address names, or -1: only the addresses mov and initializers hand out. */
static int func_of_addr(const sim_module *m, uint64_t a) {
  if (a < SIM_FUNC_WIN || (a - SIM_FUNC_WIN) % 16) return -1;
  uint64_t i = (a - SIM_FUNC_WIN) / 16;
  if (i >= (uint64_t)m->nfuncs || !m->funcs[i].addr_taken || m->funcs[i].first < 0) return -1;
  return (int)i;
}

/* Lanes calling different functions take turns, as on the GPU: each group re-runs the call
 * instruction alone in a frame of its own that ends right after it. */
int sim_call_indirect(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em) {
  const uint64_t *A = w->R + (size_t)in->a * SIM_WARP;
  int lane = __builtin_ctz(em);
  uint64_t target = A[lane];
  int fi = func_of_addr(wk->run->m, target);
  if (fi < 0)
    return sim_fail(wk, w, lane, in, "indirect call through 0x%llx, which is not the address of "
                    "a device function (a null or uninitialised function pointer, or a virtual "
                    "call on an object that was never built?)", (unsigned long long)target);
  uint32_t same = 0;
  LANES(same |= (uint32_t)(A[l] == target) << l);
  if (same == em) return sim_call_stacked(wk, w, in, pc, em, fi);
  wk->ic[pc].div++;
  w->stack[w->sp - 1].pc = pc + 1;
  if (push_frame(w, pc, pc + 1, em & ~same) < 0 || push_frame(w, pc, pc + 1, same) < 0)
    return sim_fail(wk, w, lane, in, "control flow nests too deeply (divergence stack overflow)");
  return 0;
}

/* ---- built-in functions ---- */

/* Copies a NUL-terminated device string into buf (truncated, never failing: "?" when
 * unreadable). */
static void read_str(sim_worker *wk, sim_warp *w, int lane, uint64_t a, char *buf, size_t len) {
  size_t n = 0;
  char ch;
  while (n + 1 < len && sim_mem_read_generic(wk, w, lane, a + n, &ch, 1) == 0 && ch) buf[n++] = ch;
  buf[n] = 0;
  if (!n) snprintf(buf, len, "?");
}

static uint64_t arg64(const sim_warp *w, size_t st, int lane, int off) {
  uint64_t v;
  memcpy(&v, w->fparam + (size_t)lane * st + off, 8);
  return v;
}

/* A failed assert. The GPU prints, for every failing thread,
 *   file:line: function: block: [x,y,z], thread: [x,y,z] Assertion `expr` failed.
 * and the launch fails with cudaErrorAssert ("device-side assert triggered"). The first
 * failing thread's line goes into the launch error, which adds where it happened as usual. */
static int assert_fail(sim_worker *wk, sim_warp *w, const sim_inst *in, const sim_call *c,
                       int lane) {
  size_t st = wk->run->fstride;
  char expr[200], file[200], func[200];
  read_str(wk, w, lane, arg64(w, st, lane, c->arg_off[0]), expr, sizeof expr);
  read_str(wk, w, lane, arg64(w, st, lane, c->arg_off[1]), file, sizeof file);
  read_str(wk, w, lane, arg64(w, st, lane, c->arg_off[3]), func, sizeof func);
  const char *base = strrchr(file, '/');
  uint32_t line;
  memcpy(&line, w->fparam + (size_t)lane * st + c->arg_off[2], 4);
  const sim_run *run = wk->run;
  unsigned lin = (unsigned)(w->index * SIM_WARP + lane), bx = run->block.x, by = run->block.y;
  return sim_fail(wk, w, lane, in, "device-side assert triggered (cudaErrorAssert): %s:%u: %s: "
                  "block: [%u,%u,%u], thread: [%u,%u,%u] Assertion `%s` failed.",
                  base ? base + 1 : file, line, func, wk->bx, wk->by, wk->bz, lin % bx,
                  (lin / bx) % by, lin / (bx * by), expr);
}

int sim_builtin(sim_worker *wk, sim_warp *w, const sim_inst *in, uint32_t em) {
  const sim_call *c = &wk->run->m->calls[in->imm];
  size_t st = wk->run->fstride;
  sim_device *dev = wk->run->dev;
  if (!em) return 0;
  switch (in->sub) {
    case SIM_BI_ASSERT: return assert_fail(wk, w, in, c, __builtin_ctz(em));
    case SIM_BI_MALLOC:
      LANES({
        uint64_t p = sim_heap_malloc(dev, arg64(w, st, l, c->arg_off[0]));
        memcpy(w->fparam + (size_t)l * st + c->ret_off, &p, 8);
      });
      return 0;
    default:
      for (uint32_t mm = em; mm; mm &= mm - 1) {
        int l = __builtin_ctz(mm);
        uint64_t p = arg64(w, st, l, c->arg_off[0]);
        if (!p) continue;
        char by[240], where[128], src[100], gone[320];
        sim_where(wk, w, l, where, sizeof where);
        sim_srcline(wk->run->m, in, src, sizeof src);
        snprintf(by, sizeof by, "%s at %s", where, src);
        if (sim_heap_release(dev, p, by) == 0) continue;
        if (sim_heap_freed(dev, p, gone, sizeof gone))
          return sim_fail(wk, w, l, in, "double free: free or delete of 0x%llx, which is %s",
                          (unsigned long long)p, gone);
        return sim_fail(wk, w, l, in, "free or delete of 0x%llx, which is not a live block of "
                        "the device heap (freed already, or not returned by malloc or new in "
                        "a kernel)", (unsigned long long)p);
      }
      return 0;
  }
}
