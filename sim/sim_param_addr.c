/* sim_param_addr.c: where an access through a parameter's address may land. A kernel that
 * takes a parameter's address (ptx_param_addr.c) reads it with ld.param through a register, or,
 * made generic with cvta.param, with a plain ld; either way the address is an offset in the
 * launch's parameter buffer, which is host memory, so every lane's access is checked here before
 * sim_mem.c moves a byte.
 *
 * Stance: an access must lie inside one parameter whose address the kernel takes. The buffer
 * also holds the other parameters and the padding between them, which a GPU would return
 * without complaint; but an index that runs off a struct's array into them is the learner's
 * bug, so it is told as one, naming the parameter it ran off, as an index off an array is. What
 * an address says of its origin is nothing, so two taken parameters side by side pass an index
 * from one into the other; the common case, one struct taken, is exact. Stores and atomics are
 * refused: a kernel's parameters are read-only (PTX has no st.param for them, and a
 * __grid_constant__ one is const). Costs nothing on other accesses: only loads of the .param
 * space and generic lanes in its window come here.
 *
 * A device function's parameter copy (sim_lcopy), in the region after the call stack, is checked
 * here too when a local access lands past the ordinary local bytes: inside the copy it is an
 * ordinary local access; in the guard bytes around it, or past the region, it is told as an
 * index past that parameter. */
#include <stdio.h>

#include "sim_run.h"

/* Index of the taken parameter of f holding [a, a + bytes), or -1. */
static int taken_holding(const sim_func *f, uint64_t a, uint64_t bytes) {
  for (int k = 0; f->param_taken && k < f->nparams; k++) {
    const sim_param *q = &f->params[k];
    if (f->param_taken[k] && a - q->offset < q->size && q->size - (a - q->offset) >= bytes)
      return k;
  }
  return -1;
}

/* Bytes from [start, start + size) to a, 0 inside; signed, so that an index that went below
 * zero (the address wrapped around) is just before the parameter it ran off. */
static uint64_t gap(uint64_t start, uint64_t size, uint64_t a) {
  int64_t d = (int64_t)(a - start);
  return d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d < size ? 0 : (uint64_t)d - size + 1;
}

/* The taken parameter nearest to a, or -1 when the kernel takes none. */
static int taken_nearest(const sim_func *f, uint64_t a) {
  int best = -1;
  uint64_t bd = ~0ull;
  for (int k = 0; f->param_taken && k < f->nparams; k++) {
    uint64_t d = gap(f->params[k].offset, f->params[k].size, a);
    if (f->param_taken[k] && d < bd) bd = d, best = k;
  }
  return best;
}

/* "parameter 0 ('f', 132 bytes)", the name where the launch knows it. */
static void param_words(const sim_run *run, int k, char *buf, size_t len) {
  const char *nm = run->opts && run->opts->param_names ? run->opts->param_names[k] : NULL;
  size_t size = run->f->params[k].size;
  if (nm && nm[0]) snprintf(buf, len, "parameter %d ('%s', %zu bytes)", k, nm, size);
  else snprintf(buf, len, "parameter %d (%zu bytes)", k, size);
}

/* Where an access at byte d of a parameter of size bytes (d may be negative) falls, its
 * elements es bytes and its span `bytes`, in the words of a global access's message
 * (sim_mem.c's describe_global); who names the parameter. */
static void place_words(int64_t d, uint64_t size, uint64_t e, int bytes, const char *who,
                        char *buf, size_t len) {
  uint64_t wrap = e << 32, u = (uint64_t)d; /* wrap: where element 2^32 would start */
  if (d > 0 && u < wrap && wrap - u <= size + e && (wrap - u) % e == 0) {
    snprintf(buf, len, "index %llu of %s, which is -%llu as a 32-bit unsigned index: an unsigned "
             "index (such as threadIdx.x - 1) went below zero and wrapped around",
             (unsigned long long)(u / e), who, (unsigned long long)((wrap - u) / e));
  } else if (d >= 0 && u >= size) {
    uint64_t idx = u / e, n = size / e, past = idx - n + 1;
    snprintf(buf, len, "index %llu of %s is %llu element%s (%llu bytes) past the end",
             (unsigned long long)idx, who, (unsigned long long)past, past == 1 ? "" : "s",
             (unsigned long long)(u - size + (uint64_t)bytes));
  } else if (d < 0) {
    uint64_t before = (uint64_t)0 - u, el = (before + e - 1) / e;
    snprintf(buf, len, "index -%llu of %s is %llu element%s (%llu bytes) before the start",
             (unsigned long long)el, who, (unsigned long long)el, el == 1 ? "" : "s",
             (unsigned long long)before);
  } else {
    snprintf(buf, len, "overlapping the end of %s (index %llu of %llu elements)", who,
             (unsigned long long)(u / e), (unsigned long long)(size / e));
  }
}

/* Where a, an access of elements of es bytes spanning `bytes`, falls against the nearest taken
 * kernel parameter. */
static void describe(const sim_run *run, uint64_t a, int es, int bytes, char *buf, size_t len) {
  const sim_func *f = run->f;
  int k = taken_nearest(f, a);
  if (k < 0) {
    snprintf(buf, len, "the kernel takes the address of none of its parameters");
    return;
  }
  char who[200];
  param_words(run, k, who, sizeof who);
  place_words((int64_t)(a - f->params[k].offset), f->params[k].size, (uint64_t)es, bytes, who,
              buf, len);
}

/* A store or an atomic on the parameters: named, with what to do instead. */
static int refuse_write(sim_worker *wk, sim_warp *w, const sim_inst *in, int l, uint64_t a,
                        int bytes, int is_store) {
  const sim_run *run = wk->run;
  int k = taken_holding(run->f, a, 1);
  char who[200] = "the kernel's parameters";
  if (k >= 0) param_words(run, k, who, sizeof who);
  return sim_fail(wk, w, l, in, "%s of %d bytes to %s at parameter address 0x%llx: a kernel's "
                  "parameters are read-only (a __grid_constant__ parameter is const); copy the "
                  "parameter into a local variable to change it", is_store == 2 ? "atomic" :
                  "store", bytes, who, (unsigned long long)a);
}

int sim_param_check(sim_worker *wk, sim_warp *w, const sim_inst *in, const uint64_t *ad,
                    uint32_t em, int bytes, int is_store) {
  const sim_func *f = wk->run->f;
  uint64_t lo = ~0ull, hi = 0, mis = 0;
  LANES({
    mis |= ad[l];
    lo = ad[l] < lo ? ad[l] : lo;
    hi = ad[l] > hi ? ad[l] : hi;
  });
  /* the usual warp: every lane in one struct, aligned */
  if (!is_store && !(mis & (uint64_t)(bytes - 1)) && hi - lo < (1ull << 32) &&
      taken_holding(f, lo, hi - lo + (uint64_t)bytes) >= 0)
    return 0;
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm);
    uint64_t a = ad[l];
    if (is_store) return refuse_write(wk, w, in, l, a, bytes, is_store);
    if (a & (uint64_t)(bytes - 1))
      return sim_fail(wk, w, l, in, "misaligned parameter load of %d bytes at parameter "
                      "address 0x%llx (must be a multiple of %d)", bytes, (unsigned long long)a,
                      bytes);
    if (taken_holding(f, a, (uint64_t)bytes) < 0) {
      char d[400];
      describe(wk->run, a, in->size, bytes, d, sizeof d);
      return sim_fail(wk, w, l, in, "out-of-bounds parameter load of %d bytes at parameter "
                      "address 0x%llx: %s", bytes, (unsigned long long)a, d);
    }
  }
  return 0;
}

/* ---- a device function's parameter copies ---- */

int sim_lcopy_check(sim_worker *wk, sim_warp *w, const sim_inst *in, int l, uint64_t a,
                    int bytes, int is_store) {
  const sim_run *run = wk->run;
  const sim_module *m = run->m;
  if (a >= (1ull << 63)) return 0; /* a negative index: the caller's words */
  int best = -1;
  uint64_t bd = ~0ull;
  for (int i = 0; i < m->nlcopy; i++) {
    const sim_lcopy *lc = &m->lcopy[i];
    if (lc->at < 0) continue;
    uint64_t d = gap(run->local_plain + (uint64_t)lc->at, lc->size, a);
    if (d < bd) bd = d, best = i;
  }
  if (best < 0) return 0;
  const sim_lcopy *lc = &m->lcopy[best];
  int64_t d = (int64_t)(a - (run->local_plain + (uint64_t)lc->at));
  if (d >= 0 && (uint64_t)d < lc->size && lc->size - (uint64_t)d >= (uint64_t)bytes) return 1;
  char fn[128], who[300], where[600];
  sim_demangle(m->funcs[lc->func].name, fn, sizeof fn, NULL, 0);
  snprintf(who, sizeof who, "parameter %d of %s (%zu bytes, the function's copy of it in the "
           "thread's local memory)", lc->param, fn, lc->size);
  place_words(d, lc->size, in->size, bytes, who, where, sizeof where);
  return sim_fail(wk, w, l, in, "out-of-bounds local %s of %d bytes at local address 0x%llx: %s",
                  is_store == 2 ? "atomic" : is_store ? "store" : "load", bytes,
                  (unsigned long long)a, where);
}
