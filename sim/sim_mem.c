/* sim_mem.c: the memory instructions: ld, st and atom/red on global, shared, local, const,
 * parameter and generic addresses, with bounds and alignment checks, the request / sector /
 * wavefront counters, and the hooks of optional shared-memory race detection (sim_race.c).
 *
 * Stance: check first, then act. Every lane's address is computed and checked before any lane
 * touches memory, so a failing access leaves memory as it was ("the bad access is not made").
 * Global checks hit a per-worker last-allocation cache in the common case, so checking costs a
 * compare per lane. Counters follow Nsight Compute: a request per warp-level instruction, a
 * sector per distinct 32-byte block, a shared wavefront per pass through the 32 banks. Shared
 * counters include loads and stores (the sim_counters contract); tests that compare with ncu's
 * op_ld metrics take the load lines only. Race detection itself lives in sim_race.c.
 *
 * Speed: a whole-warp ld/st of one element on global or shared memory (most of a tiled kernel's
 * instructions) takes fast_access. Each such instruction remembers the last warp's address
 * pattern with its sector or wavefront count (sim_memo); a warp that repeats it, shifted, is
 * recognised by one vectorised comparison, and its bounds, alignment and counts follow from the
 * memo in O(1) (race checking, when on, mostly logs the access with the memo's pattern and
 * checks it later if ever: sim_race.c). Anything unusual (a bad lane, several allocations,
 * partial warps, vectors, generic addresses) goes the general way, which also words every error
 * message. The turned-down alternative, a faster per-lane bank analysis, still cost ~20 host
 * instructions a lane; the memo costs ~2. */
#include <stdio.h>
#include <string.h>

#include "sim_run.h"
#include "sim_bits.h"
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

/* sim_type_signed, inlined for the loads of every warp */
static inline int type_signed(int ty) { return ty >= SIM_T_S8 && ty <= SIM_T_S64; }

/* ---- checking ---- */

static int elem_size_of_label(const char *label, int fallback) {
  int bits;
  char c;
  if (sscanf(label, "%c%d[", &c, &bits) == 2 &&
      (c == 'f' || c == 'i' || c == 'u' || c == 's' || c == 'b') &&
      (bits == 8 || bits == 16 || bits == 32 || bits == 64))
    return bits / 8;
  return fallback;
}

static const char *kind_name(int is_store) {
  return is_store == 2 ? "atomic" : is_store ? "store" : "load";
}

static uint64_t distance(const sim_alloc *t, uint64_t a) {
  return a < t->base ? t->base - a : a >= t->base + t->size ? a - (t->base + t->size) + 1 : 0;
}

/* The kernel parameter's name that points into t, if it does, for messages:
 * " (parameter 1, 'b')", " (parameter 1)" or "". Returns the name, NULL when there is none. */
static const char *param_words(const sim_run *run, const sim_alloc *t, char *who, size_t len) {
  const char *nm = NULL;
  who[0] = 0;
  if (t->param < 0) return NULL;
  if (run->opts && run->opts->param_names) nm = run->opts->param_names[t->param];
  if (nm && !nm[0]) nm = NULL;
  if (nm) snprintf(who, len, " (parameter %d, '%s')", t->param, nm);
  else snprintf(who, len, " (parameter %d)", t->param);
  return nm;
}

void sim_global_name(const sim_run *run, int i, uint64_t a, char *buf, size_t len) {
  const sim_alloc *t = &run->tab[i];
  char who[160];
  const char *nm = param_words(run, t, who, sizeof who);
  int es = elem_size_of_label(t->label, 0); /* 0: a label that does not give the element type */
  unsigned long long off = (unsigned long long)(a - t->base);
  if (!es) snprintf(buf, len, "byte %llu of %s%s", off, t->label, who);
  else if (nm) snprintf(buf, len, "%s[%llu] (%s, parameter %d)", nm, off / (unsigned)es,
                        t->label, t->param);
  else snprintf(buf, len, "element %llu of %s%s", off / (unsigned)es, t->label, who);
}

/* The kernel parameter's array nearest to a, or -1 when i (the nearest of all) is a parameter's
 * or none is. */
static int nearest_param(const sim_run *run, int i, uint64_t a) {
  if (run->tab[i].param >= 0) return -1;
  int best = -1;
  uint64_t bd = ~0ull;
  for (int k = 0; k < run->ntab; k++) {
    uint64_t d = distance(&run->tab[k], a);
    if (run->tab[k].param >= 0 && d < bd) bd = d, best = k;
  }
  return best;
}

/* When the array nearest an address outside them all is none the kernel was given: the index a
 * would be of the nearest parameter's array, into buf ("" when there is none). A learner's index
 * runs off an array the kernel was given more often than off one it was not, which may merely
 * lie closer; but an array reached through a pointer the kernel read is no parameter's either,
 * so both are told, the nearest first. */
static void param_note(const sim_run *run, int i, uint64_t a, int bytes, char *buf, size_t len) {
  int k = nearest_param(run, i, a);
  buf[0] = '\0';
  if (k < 0) return;
  const sim_alloc *p = &run->tab[k];
  uint64_t es = (uint64_t)elem_size_of_label(p->label, bytes), n = p->size / es;
  char who[160];
  param_words(run, p, who, sizeof who);
  if (a >= p->base + p->size) {
    uint64_t idx = (a - p->base) / es;
    snprintf(buf, len, "; %s is not one of the kernel's parameters: the nearest that is, %s%s, "
             "would be at index %llu (%llu elements past its end)", run->tab[i].label, p->label,
             who, (unsigned long long)idx, (unsigned long long)(idx - n + 1));
  } else {
    uint64_t el = (p->base - a + es - 1) / es;
    snprintf(buf, len, "; %s is not one of the kernel's parameters: the nearest that is, %s%s, "
             "would be at index -%llu (before its start)", run->tab[i].label, p->label, who,
             (unsigned long long)el);
  }
}

/* A global the compiler made, not the learner: printf's format strings ($str, $str$1) and
 * NVRTC's unnamed constants. An index that runs off a learner's array may land nearest one of
 * them, but the message must name an array the learner knows. */
static int compiler_made(const char *label) {
  return strchr(label, '$') != NULL || strstr(label, "__unnamed") != NULL;
}

/* The allocation nearest a among those the learner made (not compiler_made), or -1. */
static int nearest_learners(const sim_run *run, uint64_t a) {
  int best = -1;
  uint64_t bd = ~0ull;
  for (int k = 0; k < run->ntab; k++) {
    uint64_t d = distance(&run->tab[k], a);
    if (!compiler_made(run->tab[k].label) && d < bd) bd = d, best = k;
  }
  return best;
}

/* Describes where `a`, an access of span bytes, falls: inside an allocation (misaligned), or
 * relative to the nearest allocation or device-heap block (and the nearest parameter's). bytes:
 * the element size where the allocation's label gives none. */
static void describe_global(const sim_run *run, const sim_inst *in, uint64_t a, int bytes,
                            int span, char *buf, size_t len) {
  int i = sim_alloc_nearest(run->tab, run->ntab, a);
  if (i >= 0 && compiler_made(run->tab[i].label) && distance(&run->tab[i], a) > 0) {
    int mine = nearest_learners(run, a);
    if (mine >= 0) i = mine;
  }
  sim_alloc hb;
  int heap = sim_heap_nearest(run->dev, a, &hb);
  if (heap && (i < 0 || distance(&hb, a) < distance(&run->tab[i], a))) i = -2;
  if (i == -1) {
    snprintf(buf, len, "not inside any allocation");
    return;
  }
  const sim_alloc *t = i == -2 ? &hb : &run->tab[i];
  int es = elem_size_of_label(t->label, bytes);
  char who[160], other[400] = "";
  param_words(run, t, who, sizeof who);
  /* an access through a __constant__ or __device__ variable's own name (ld.const, or an address
   * bound to the variable, ptx_bind.c) cannot have meant a parameter's array */
  int by_name = in->space == SIM_SP_CONST || (in->aux > 0 && in->op != SIM_OP_TENSOR);
  if (i >= 0 && distance(t, a) > 0 && !by_name) param_note(run, i, a, bytes, other, sizeof other);
  if (a >= t->base + t->size) {
    uint64_t idx = (a - t->base) / (uint64_t)es, n = t->size / (uint64_t)es, past = idx - n + 1;
    snprintf(buf, len, "index %llu of %s%s is %llu element%s (%llu bytes) past the end%s",
             (unsigned long long)idx, t->label, who, (unsigned long long)past, past == 1 ? "" : "s",
             (unsigned long long)(a - t->base - t->size + (uint64_t)bytes), other);
  } else if (a < t->base) {
    uint64_t before = t->base - a, el = (before + (uint64_t)es - 1) / (uint64_t)es;
    snprintf(buf, len, "index -%llu of %s%s is %llu element%s (%llu bytes) before the start%s",
             (unsigned long long)el, t->label, who, (unsigned long long)el, el == 1 ? "" : "s",
             (unsigned long long)before, other);
  } else if (a + (uint64_t)span <= t->base + t->size) {
    snprintf(buf, len, "inside %s%s, byte %llu of element %lld of %llu", t->label, who,
             (unsigned long long)((a - t->base) % (uint64_t)es),
             (long long)((a - t->base) / (uint64_t)es),
             (unsigned long long)(t->size / (uint64_t)es));
  } else {
    snprintf(buf, len, "overlapping the end of %s%s (index %lld of %llu elements)", t->label, who,
             (long long)((a - t->base) / (uint64_t)es),
             (unsigned long long)(t->size / (uint64_t)es));
  }
}

/* Index of the allocation holding [a, a+len): the worker's few recent hits first, then a binary
 * search whose result replaces the oldest hit. */
static int find_cached(sim_worker *wk, uint64_t a, uint64_t len) {
  const sim_alloc *t = wk->run->tab;
  for (int k = 0; k < SIM_HITS; k++) {
    int h = wk->hits[k];
    if (h >= 0 && a - t[h].base < t[h].size && t[h].size - (a - t[h].base) >= len) return h;
  }
  int i = sim_alloc_find(t, wk->run->ntab, a, len);
  if (i >= 0) wk->hits[wk->next_hit++ % SIM_HITS] = i;
  return i;
}

/* An address this low is a null pointer indexed (p[i] with p NULL), never an array: no
 * allocation starts below it. Named so, rather than as an index far before the start of whatever
 * array happens to be nearest; with the device heap's refusals, the usual cause in a kernel. */
#define SIM_NULL_PAGE ((uint64_t)1 << 16)

#if defined(__GNUC__)
__attribute__((cold, noinline))
#endif
static int null_access(sim_worker *wk, sim_warp *w, int l, const sim_inst *in, uint64_t a,
                       int bytes, int is_store) {
  char heap[400], why[420] = "";
  if (sim_heap_refusals(wk->run->dev, heap, sizeof heap))
    snprintf(why, sizeof why, ". %s", heap);
  return sim_fail(wk, w, l, in, "null pointer: global %s of %d bytes at address 0x%llx, byte %llu "
                  "from a NULL pointer (a pointer that was never set, or a malloc that failed)%s",
                  kind_name(is_store), bytes, (unsigned long long)a, (unsigned long long)a, why);
}

/* "constant" for ld.const, whose window the simulator keeps among the global allocations. */
static const char *global_word(const sim_inst *in) {
  return in->space == SIM_SP_CONST ? "constant" : "global";
}

/* Checks a warp's global access: alignment per lane, then bounds for the whole span of the
 * warp's addresses at once (one lookup when the warp stays inside one array, the usual case),
 * lane by lane only when it does not. */
static int check_global(sim_worker *wk, sim_warp *w, const sim_inst *in, const uint64_t *ad,
                        uint32_t em, int bytes, int align, int is_store) {
  const sim_run *run = wk->run;
  uint64_t lo = ~0ull, hi = 0, mis = 0;
  LANES({
    uint64_t a = ad[l];
    mis |= a;
    lo = a < lo ? a : lo;
    hi = a > hi ? a : hi;
  });
  if (mis & (uint64_t)(align - 1)) {
    for (uint32_t mm = em; mm; mm &= mm - 1) {
      int l = __builtin_ctz(mm);
      if (ad[l] & (uint64_t)(align - 1)) {
        char d[800];
        describe_global(run, in, ad[l], in->size, bytes, d, sizeof d);
        return sim_fail(wk, w, l, in,
                        "misaligned %s %s of %d bytes at address 0x%llx (must be a multiple "
                        "of %d); it is %s",
                        global_word(in), kind_name(is_store), bytes, (unsigned long long)ad[l],
                        align, d);
      }
    }
  }
  if (hi - lo < (1ull << 40) && find_cached(wk, lo, hi - lo + (uint64_t)bytes) >= 0) return 0;
  /* Not one allocation of the table: device-heap blocks (sim_heap.c) are only looked up here. */
  if (hi - lo < (1ull << 40) && sim_heap_holds(run->dev, lo, hi - lo + (uint64_t)bytes)) return 0;
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm);
    if (find_cached(wk, ad[l], (uint64_t)bytes) < 0
        && !sim_heap_holds(run->dev, ad[l], (uint64_t)bytes)) {
      char d[800];
      if (sim_heap_freed(run->dev, ad[l], d, sizeof d))
        return sim_fail(wk, w, l, in, "use after free: global %s of %d bytes at address 0x%llx, "
                        "%s", kind_name(is_store), bytes, (unsigned long long)ad[l], d);
      if (ad[l] < SIM_NULL_PAGE) return null_access(wk, w, l, in, ad[l], bytes, is_store);
      describe_global(run, in, ad[l], in->size, bytes, d, sizeof d);
      return sim_fail(wk, w, l, in, "out-of-bounds %s %s of %d bytes at address 0x%llx: %s",
                      global_word(in), kind_name(is_store), bytes, (unsigned long long)ad[l], d);
    }
  }
  return 0;
}

/* Shared memory is at most a few hundred KiB, so an address far past it is almost always an
 * index that went below zero: a signed one (the address wraps to near 2^64), or an unsigned 32-bit
 * one such as threadIdx.x - 1 (element 2^32 - k, at size * (2^32 - k)). Says which, in words a
 * learner can act on, instead of "17179869052 bytes past the end". Returns 1 when it did. */
static int describe_below_zero(uint64_t a, int size, uint64_t limit, char *buf, size_t len) {
  if (a >= (1ull << 63)) {
    snprintf(buf, len, "%llu bytes before the start of shared memory: a negative index",
             (unsigned long long)(0 - a));
    return 1;
  }
  uint64_t wrap = (uint64_t)size << 32; /* where element 2^32 of this size would start */
  if (size > 0 && a < wrap && wrap - a <= limit + (uint64_t)size
      && (wrap - a) % (uint64_t)size == 0) {
    snprintf(buf, len, "element %llu, which is -%llu as a 32-bit unsigned index: an unsigned index "
             "(such as threadIdx.x - 1) went below zero and wrapped around",
             (unsigned long long)(a / (uint64_t)size),
             (unsigned long long)((wrap - a) / (uint64_t)size));
    return 1;
  }
  return 0;
}

/* The static __shared__ variable of the running kernel holding offset a, or NULL. */
static const sim_var *shared_var_at(const sim_run *run, uint64_t a) {
  const sim_module *m = run->m;
  for (int i = 0; i < m->nvars; i++) {
    const sim_var *v = &m->vars[i];
    if (v->space != SIM_SP_SHARED || v->is_extern) continue;
    if (v->func >= 0 && v->func != run->k->func) continue;
    if (a >= v->addr && a - v->addr < v->size) return v;
  }
  return NULL;
}

/* An access bound to static __shared__ variable v that left it: which element of v it names,
 * how far past its end or before its start, and what lies there (another variable, whose
 * element the GPU would have read or overwritten, or padding). */
static void describe_bound_shared(const sim_run *run, const sim_var *v, uint64_t a, int size,
                                  char *buf, size_t len) {
  char name[128], into[400] = "", tail[64];
  sim_demangle(v->name, name, sizeof name, NULL, 0);
  const sim_var *other = shared_var_at(run, a);
  if (other && other != v) {
    char on[128];
    sim_demangle(other->name, on, sizeof on, NULL, 0);
    snprintf(into, sizeof into, ", which is byte %llu of __shared__ %s: on a GPU this silently "
             "reads or overwrites %s", (unsigned long long)(a - other->addr), on, on);
  }
  snprintf(tail, sizeof tail, "; the block has %zu bytes of shared memory", run->shared_total);
  strncat(into, tail, sizeof into - strlen(into) - 1);
  uint64_t es = (uint64_t)size, rel = a - v->addr, wrap = es << 32;
  int whole = es && v->size % es == 0;
  if (whole && rel % es == 0 && rel < wrap && wrap - rel <= v->size + es) {
    snprintf(buf, len, "index %llu of %s[%llu], which is -%llu as a 32-bit unsigned index: an "
             "unsigned index (such as threadIdx.x - 1) went below zero and wrapped around%s",
             (unsigned long long)(rel / es), name, (unsigned long long)(v->size / es),
             (unsigned long long)((wrap - rel) / es), into);
  } else if (rel < (1ull << 63) && (a >= v->addr + v->size || a + es > v->addr + v->size)) {
    uint64_t past = a + es - (v->addr + v->size);
    if (whole && (a - v->addr) % es == 0)
      snprintf(buf, len, "index %llu of %s[%llu] (elements of %d bytes) is %llu element%s (%llu "
               "bytes) past the end of __shared__ %s (%zu bytes)%s",
               (unsigned long long)((a - v->addr) / es), name, (unsigned long long)(v->size / es),
               size, (unsigned long long)(past / es), past == es ? "" : "s",
               (unsigned long long)past, name, v->size, into);
    else
      snprintf(buf, len, "%llu bytes past the end of __shared__ %s (%zu bytes)%s",
               (unsigned long long)past, name, v->size, into);
  } else {
    uint64_t before = v->addr - a;
    if (whole && before % es == 0)
      snprintf(buf, len, "index -%llu of %s[%llu] is %llu element%s (%llu bytes) before the "
               "start of __shared__ %s%s", (unsigned long long)(before / es), name,
               (unsigned long long)(v->size / es), (unsigned long long)(before / es),
               before == es ? "" : "s", (unsigned long long)before, name, into);
    else
      snprintf(buf, len, "%llu bytes before the start of __shared__ %s (%zu bytes)%s",
               (unsigned long long)before, name, v->size, into);
  }
}

/* The shared variable a load, store or atomic of the .shared space was bound to (its address
 * is that variable's plus integers, ptx_bind.c), or NULL. */
static inline const sim_var *bound_shared(const sim_run *run, const sim_inst *in) {
  if (in->aux <= 0 || in->space != SIM_SP_SHARED ||
      (in->op != SIM_OP_LD && in->op != SIM_OP_ST && in->op != SIM_OP_ATOM))
    return NULL;
  return &run->m->vars[in->aux - 1];
}

/* The bytes [*lo, *lo + *n) of shared memory that in may touch: its bound variable's (an extern
 * array's are the launch's dynamic bytes), or the block's whole window. */
static inline void shared_extent(const sim_run *run, const sim_inst *in, uint64_t *lo,
                                 uint64_t *n) {
  const sim_var *v = bound_shared(run, in);
  if (!v) {
    *lo = 0;
    *n = run->shared_total;
  } else if (v->is_extern) {
    *lo = (run->k->static_shared + 15) / 16 * 16;
    *n = run->dyn_shared;
  } else {
    *lo = v->addr;
    *n = v->size;
  }
}

/* Where shared offset a falls: below zero, past the dynamic array, or near the nearest
 * __shared__ variable, named; for an access bound to a variable (bound, or NULL), relative to
 * that variable, with the variable it ran into. */
static void describe_shared(const sim_run *run, const sim_var *bound, uint64_t a, int size,
                            char *buf, size_t len) {
  const sim_module *m = run->m;
  if (bound && !bound->is_extern) {
    describe_bound_shared(run, bound, a, size, buf, len);
    return;
  }
  if (describe_below_zero(a, size, run->shared_total, buf, len)) return;
  const sim_var *best = NULL;
  uint64_t bd = ~0ull;
  for (int i = 0; i < m->nvars; i++) {
    const sim_var *v = &m->vars[i];
    if (v->space != SIM_SP_SHARED || v->is_extern) continue;
    if (v->func >= 0 && v->func != run->k->func) continue;
    uint64_t d = a < v->addr ? v->addr - a
               : a >= v->addr + v->size ? a - (v->addr + v->size) + 1 : 0;
    if (d < bd) {
      bd = d;
      best = v;
    }
  }
  uint64_t dyn = (run->k->static_shared + 15) / 16 * 16;
  if (run->dyn_shared && a >= dyn) {
    char at[96] = "";
    uint64_t past = a + (uint64_t)size - (dyn + run->dyn_shared);
    if ((a - dyn) % (uint64_t)size == 0 && run->dyn_shared % (size_t)size == 0)
      snprintf(at, sizeof at, "index %llu of %zu elements of %d bytes: ",
               (unsigned long long)((a - dyn) / (uint64_t)size), run->dyn_shared / (size_t)size,
               size);
    snprintf(buf, len,
             "%s%llu bytes past the end of the dynamic (extern __shared__) array of %zu bytes", at,
             (unsigned long long)past, run->dyn_shared);
    return;
  }
  /* past the static variables with no dynamic bytes: an extern __shared__ array is where the
   * access went, one the launch gave no size */
  const char *hint = "";
  for (int i = 0; !run->dyn_shared && a >= dyn && i < m->nvars; i++)
    if (m->vars[i].space == SIM_SP_SHARED && m->vars[i].is_extern &&
        (m->vars[i].func < 0 || m->vars[i].func == run->k->func))
      hint = ": the kernel's extern __shared__ array has no bytes, since the launch gave none "
             "(its size is the launch's third field, k[{grid, block, bytes}])";
  if (!best) {
    snprintf(buf, len, "the block has %zu bytes of shared memory%s", run->shared_total, hint);
    return;
  }
  char name[128], at[192] = "";
  sim_demangle(best->name, name, sizeof name, NULL, 0);
  /* how far past the end, counted as a global access's are (sim_global_name): s[256] of 256
   * is 1 element, 4 bytes, past it, the bytes the access reaches beyond the last one */
  uint64_t past = a + (uint64_t)size - (best->addr + best->size);
  /* the element the index names, counted in elements of the access's size: s[256] of 256 */
  if (a >= best->addr && (a - best->addr) % (uint64_t)size == 0 && best->size % (size_t)size == 0)
    snprintf(at, sizeof at, "index %llu of %s[%zu] (elements of %d bytes) is %llu element%s (",
             (unsigned long long)((a - best->addr) / (uint64_t)size), name,
             best->size / (size_t)size, size, (unsigned long long)(past / (uint64_t)size),
             past == (uint64_t)size ? "" : "s");
  if (a >= best->addr + best->size)
    snprintf(buf, len,
             "%s%llu bytes%s past the end of __shared__ %s (%zu bytes); the block has %zu bytes "
             "of shared memory%s", at, (unsigned long long)past, at[0] ? ")" : "", name,
             best->size, run->shared_total, hint);
  else
    snprintf(buf, len, "near __shared__ %s (%zu bytes); the block has %zu bytes of shared memory",
             name, best->size, run->shared_total);
}

/* Checks a warp's shared or local access. The common case, every lane aligned and inside, is
 * decided by one branch-free pass (an address past limit - bytes makes limit - bytes - a wrap
 * around and set the top bit; so does a wild address); only a failing warp walks the lanes
 * again to name the first bad one. */
static int check_window(sim_worker *wk, sim_warp *w, const sim_inst *in, const uint64_t *ad,
                        uint32_t em, int bytes, int align, int is_store, int space) {
  const sim_run *run = wk->run;
  uint64_t lo = 0, limit = run->local_plain; /* the window is [lo, lo + limit) */
  const sim_var *bound = space == SIM_SP_SHARED ? bound_shared(run, in) : NULL;
  if (space == SIM_SP_SHARED) shared_extent(run, in, &lo, &limit);
  if (limit >= (uint64_t)bytes) {
    uint64_t last = limit - (uint64_t)bytes, mis = 0, oob = 0;
    LANES({
      mis |= ad[l];
      oob |= (ad[l] - lo) | (last - (ad[l] - lo));
    });
    if (!(mis & (uint64_t)(align - 1)) && !(oob >> 63)) return 0;
  }
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm);
    uint64_t a = ad[l];
    const char *sp = space == SIM_SP_SHARED ? "shared" : "local";
    if (a & (uint64_t)(align - 1))
      return sim_fail(wk, w, l, in,
                      "misaligned %s %s of %d bytes at %s address 0x%llx (must be a multiple "
                      "of %d)",
                      sp, kind_name(is_store), bytes, sp, (unsigned long long)a, align);
    if (a - lo > limit || limit - (a - lo) < (uint64_t)bytes) {
      /* past the ordinary bytes: a parameter's copy (after the call stack), checked as itself */
      int r = space == SIM_SP_LOCAL && run->m->nlcopy
                  ? sim_lcopy_check(wk, w, in, l, a, bytes, is_store) : 0;
      if (r > 0) continue;
      if (r < 0) return -1;
      char d[600];
      if (space == SIM_SP_SHARED) describe_shared(run, bound, a, bytes, d, sizeof d);
      else if (a >= 1ull << 63)
        snprintf(d, sizeof d, "%llu bytes before the start of the thread's local memory: a "
                 "negative index", (unsigned long long)(0 - a));
      else
        snprintf(d, sizeof d, "element %llu of %d bytes (byte %llu) of the thread's local memory, "
                 "%llu bytes past its end: each thread has %zu bytes of local memory (a local "
                 "array indexed past its size)",
                 (unsigned long long)(a / (uint64_t)bytes), bytes, (unsigned long long)a,
                 (unsigned long long)(a + (uint64_t)bytes - limit), run->local_stride);
      return sim_fail(wk, w, l, in, "out-of-bounds %s %s of %d bytes at %s address 0x%llx: %s",
                      sp, kind_name(is_store), bytes, sp, (unsigned long long)a, d);
    }
  }
  return 0;
}

/* ---- counters ---- */

static void sort64(uint64_t *v, int n) {
  for (int i = 1; i < n; i++) {
    uint64_t x = v[i];
    int j = i - 1;
    while (j >= 0 && v[j] > x) {
      v[j + 1] = v[j];
      j--;
    }
    v[j + 1] = x;
  }
}

/* Distinct 32-byte sectors touched (an aligned access of <= 16 bytes lies in one sector). */
static unsigned count_sectors(const uint64_t *ad, uint32_t em, int bytes) {
  uint64_t s[64];
  int n = 0;
  if (bytes <= 16) { /* aligned, so one sector per lane; lanes usually ascend */
    uint64_t prev = ~0ull;
    unsigned c = 0;
    int sorted = 1;
    for (uint32_t mm = em; mm; mm &= mm - 1) {
      uint64_t x = ad[__builtin_ctz(mm)] >> 5;
      if (x != prev) {
        if (prev != ~0ull && x < prev) sorted = 0;
        c++;
        prev = x;
      }
      s[n++] = x;
    }
    if (sorted) return c;
  } else {
    for (uint32_t mm = em; mm; mm &= mm - 1) {
      int l = __builtin_ctz(mm);
      uint64_t first = ad[l] >> 5, last = (ad[l] + (uint64_t)bytes - 1) >> 5;
      for (uint64_t x = first; x <= last && n < 64; x++) s[n++] = x;
    }
  }
  sort64(s, n);
  unsigned c = n > 0;
  for (int i = 1; i < n; i++) c += s[i] != s[i - 1];
  return c;
}

/* Shared wavefronts: max over the 32 banks of distinct 4-byte words touched in the bank. */
static unsigned count_wavefronts(const uint64_t *ad, uint32_t em, int bytes) {
  int words = bytes < 4 ? 1 : bytes / 4;
  uint64_t seen[32];
  uint32_t used = 0;
  int slow = 0;
  for (uint32_t mm = em; mm && !slow; mm &= mm - 1) {
    int l = __builtin_ctz(mm);
    uint64_t w0 = ad[l] >> 2;
    for (int k = 0; k < words; k++) {
      uint64_t wd = w0 + (uint64_t)k;
      unsigned b = (unsigned)(wd & 31);
      if (!(used >> b & 1)) {
        used |= 1u << b;
        seen[b] = wd;
      } else if (seen[b] != wd) {
        slow = 1;
        break;
      }
    }
  }
  if (!slow) return em ? 1 : 0;
  uint64_t v[128];
  int n = 0;
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm);
    for (int k = 0; k < words && n < 128; k++) v[n++] = (ad[l] >> 2) + (uint64_t)k;
  }
  sort64(v, n);
  unsigned cnt[32] = {0}, best = 0;
  for (int i = 0; i < n; i++)
    if (i == 0 || v[i] != v[i - 1]) {
      unsigned c = ++cnt[v[i] & 31];
      if (c > best) best = c;
    }
  return best;
}

static unsigned count_kind(unsigned kind, const uint64_t *ad, uint32_t em, int bytes) {
  if (kind == SIM_MEMO_WAVEFRONTS) return count_wavefronts(ad, em, bytes);
  return count_sectors(ad, em, bytes);
}

/* The pattern's SIM_MOVE_* shape for elements of `bytes` (see sim_memo.move). */
static uint32_t move_shape(const uint64_t *delta, uint32_t em, int bytes) {
  if (em != SIM_FULL || (bytes != 4 && bytes != 8)) return SIM_MOVE_LANES;
  int runs = 1, same = 1;
  for (int l = 0; l < SIM_WARP; l++) {
    uint64_t step = delta[l] - delta[l & ~3];
    runs &= step == (uint64_t)(l & 3) * (uint64_t)bytes;
    same &= step == 0;
  }
  return runs ? SIM_MOVE_RUNS4 : same ? SIM_MOVE_SAME4 : SIM_MOVE_LANES;
}

/* Counts `kind` for this warp's addresses and remembers the pattern in mo (may be NULL). */
static unsigned memo_fill(sim_memo *mo, unsigned kind, const uint64_t *ad, uint32_t em,
                          int bytes) {
  unsigned c = count_kind(kind, ad, em, bytes);
  if (!mo) return c;
  uint64_t base = ad[__builtin_ctz(em)], dor = 0;
  int64_t dmin = 0, dmax = 0, prev = INT64_MIN;
  int rising = 1;
  if (em != SIM_FULL) memset(mo->delta, 0, sizeof mo->delta);
  LANES({
    uint64_t d = ad[l] - base;
    mo->delta[l] = d;
    dor |= d;
    dmin = (int64_t)d < dmin ? (int64_t)d : dmin;
    dmax = (int64_t)d > dmax ? (int64_t)d : dmax;
    rising &= (int64_t)d > prev;
    prev = (int64_t)d;
  });
  mo->rising = (uint32_t)rising;
  mo->move = move_shape(mo->delta, em, bytes);
  mo->dmin = dmin;
  mo->dmax = dmax;
  mo->dor = dor;
  mo->em = em;
  mo->kind = kind;
  mo->phase = (uint32_t)(base & (kind == SIM_MEMO_WAVEFRONTS ? 3 : 31));
  mo->count = c;
  mo->key = em | (uint64_t)kind << 32 | (uint64_t)mo->phase << 40;
  if (kind == SIM_MEMO_WAVEFRONTS) {
    uint64_t width = (uint64_t)(dmax - dmin), n = mo->win_n; /* dmin <= 0 <= dmax */
    if (n >= (uint64_t)bytes && width <= n - (uint64_t)bytes) {
      mo->hit_lo = mo->win_lo - (uint64_t)dmin;
      mo->hit_span = n - (uint64_t)bytes - width;
    } else {
      mo->key |= 1ull << 63;
    }
  }
  mo->lines[0].tag = mo->lines[1].tag = 0; /* the timing model's lines: rebuilt on next use */
  mo->gen++;      /* and the race check's copy of the pattern */
  return c;
}

void sim_mem_memo_init(sim_worker *wk) {
  const sim_run *run = wk->run;
  for (int pc = 0; pc < run->m->ncode; pc++) {
    const sim_inst *in = &run->m->code[pc];
    if (run->memo_slot[pc] >= 0 && in->space == SIM_SP_SHARED) {
      sim_memo *mo = &wk->memo[run->memo_slot[pc]];
      shared_extent(run, in, &mo->win_lo, &mo->win_n);
    }
  }
}

static sim_memo *memo_of(sim_worker *wk, int pc) {
  int slot = wk->run->memo_slot[pc];
  return slot < 0 ? NULL : &wk->memo[slot];
}

/* The count of `kind` for this warp's addresses, from the instruction's memo when the pattern
 * repeats (see sim_memo), else computed and remembered. */
static unsigned pattern_count(sim_worker *wk, int pc, unsigned kind, const uint64_t *ad,
                              uint32_t em, int bytes) {
  sim_memo *mo = memo_of(wk, pc);
  uint64_t base = ad[__builtin_ctz(em)];
  uint64_t phase = base & (kind == SIM_MEMO_WAVEFRONTS ? 3 : 31);
  if (mo && mo->em == em && mo->kind == kind && mo->phase == phase) {
    uint64_t diff = 0;
    LANES(diff |= (ad[l] - base) ^ mo->delta[l]);
    if (!diff) return mo->count;
  }
  return memo_fill(mo, kind, ad, em, bytes);
}

/* ---- data movement ---- */

/* Where lane l's element of a checked access lies on the host: base + l * stride + address.
 * Global addresses are host addresses (base 0); shared memory is one block for the warp; local
 * and call-parameter memory are one slice per lane. */
static void space_base(const sim_worker *wk, const sim_warp *w, int space, uintptr_t *base,
                       size_t *stride) {
  *stride = 0;
  *base = 0;
  if (space == SIM_SP_SHARED) {
    *base = (uintptr_t)wk->shared;
  } else if (space == SIM_SP_LOCAL) {
    *base = (uintptr_t)w->local;
    *stride = wk->run->local_stride;
  } else if (space == SIM_SP_FPARAM) {
    *base = (uintptr_t)w->fparam;
    *stride = wk->run->fstride;
  } else if (space == SIM_SP_PARAM) { /* the kernel's, through a parameter's address */
    *base = (uintptr_t)wk->run->params;
  }
}

static inline unsigned char *host_ptr(sim_worker *wk, sim_warp *w, int space, int l, uint64_t a) {
  uintptr_t base;
  size_t stride;
  space_base(wk, w, space, &base, &stride);
  return (unsigned char *)(base + (size_t)l * stride + a);
}

/* One host element of 2 or 4 bytes, zero- or sign-extended into a register (memcpy: host
 * addresses need not be aligned for the type). */
static inline uint64_t host_u32(const unsigned char *p) {
  uint32_t x;
  memcpy(&x, p, 4);
  return x;
}
static inline uint64_t host_s32(const unsigned char *p) {
  int32_t x;
  memcpy(&x, p, 4);
  return (uint64_t)(int64_t)x;
}
static inline uint64_t host_u16(const unsigned char *p) {
  uint16_t x;
  memcpy(&x, p, 2);
  return x;
}
static inline uint64_t host_s16(const unsigned char *p) {
  int16_t x;
  memcpy(&x, p, 2);
  return (uint64_t)(int64_t)x;
}

/* The low 4 or 2 bytes of a register to the host (little-endian). */
static inline void host_put32(unsigned char *p, uint64_t v) {
  uint32_t x = (uint32_t)v;
  memcpy(p, &x, 4);
}
static inline void host_put16(unsigned char *p, uint64_t v) {
  uint16_t x = (uint16_t)v;
  memcpy(p, &x, 2);
}

/* Loads one element per active lane. The element size and signedness are decided once per
 * instruction, not per lane, so each loop body is one host load (memcpy of a constant size). */
#define HOST(l) ((const unsigned char *)(base + (size_t)(l) * stride + ad[l]))
static inline void load_lanes(uint64_t *D, uintptr_t base, size_t stride, const uint64_t *ad,
                              uint32_t em, int sz, int sgn) {
  switch (sz * 2 + sgn) {
    case 8: LANES(D[l] = host_u32(HOST(l))); break;
    case 9: LANES(D[l] = host_s32(HOST(l))); break;
    case 16: case 17: LANES(memcpy(&D[l], HOST(l), 8)); break;
    case 4: LANES(D[l] = host_u16(HOST(l))); break;
    case 5: LANES(D[l] = host_s16(HOST(l))); break;
    case 3: LANES(D[l] = (uint64_t)(int64_t)(int8_t)*HOST(l)); break;
    default: LANES(D[l] = *HOST(l)); break;
  }
}
#undef HOST

#define HOST(l) ((unsigned char *)(base + (size_t)(l) * stride + ad[l]))
static inline void store_lanes(const uint64_t *S, uintptr_t base, size_t stride,
                               const uint64_t *ad, uint32_t em, int sz) {
  switch (sz) {
    case 4: LANES(host_put32(HOST(l), S[l])); break;
    case 8: LANES(memcpy(HOST(l), &S[l], 8)); break;
    case 2: LANES(host_put16(HOST(l), S[l])); break;
    default: LANES(*HOST(l) = (unsigned char)S[l]); break;
  }
}
#undef HOST

static void do_load(sim_worker *wk, sim_warp *w, const sim_inst *in, int space,
                    const uint64_t *ad, uint32_t em) {
  uintptr_t base;
  size_t stride;
  space_base(wk, w, space, &base, &stride);
  int sz = in->size, sgn = type_signed(in->ty) && sz < 8;
  for (int k = 0; k < in->vec; k++)
    if (in->v[k] >= 0)
      load_lanes(w->R + in->v[k] * SIM_WARP, base + (uintptr_t)(k * sz), stride, ad, em, sz, sgn);
}

static void do_store(sim_worker *wk, sim_warp *w, const sim_inst *in, int space,
                     const uint64_t *ad, uint32_t em) {
  uintptr_t base;
  size_t stride;
  space_base(wk, w, space, &base, &stride);
  int sz = in->size;
  for (int k = 0; k < in->vec; k++)
    store_lanes(w->R + in->v[k] * SIM_WARP, base + (uintptr_t)(k * sz), stride, ad, em, sz);
}

/* Checks, counts and performs one space's part of an ld/st. */
static int mem_access(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, int space,
                      const uint64_t *ad, uint32_t em, int is_store) {
  int bytes = in->size * in->vec;
  switch (space) {
    case SIM_SP_GLOBAL: case SIM_SP_CONST:
      if (check_global(wk, w, in, ad, em, bytes, bytes, is_store) < 0) return -1;
      if (space == SIM_SP_GLOBAL) {
        wk->ic[pc].req++;
        wk->ic[pc].sect += pattern_count(wk, pc, SIM_MEMO_SECTORS, ad, em, bytes);
        if (wk->run->lat)
          sim_trace_access(wk, w, pc, is_store ? SIM_TR_STORE : SIM_TR_LOAD, ad, em, bytes, -1);
      }
      break;
    case SIM_SP_SHARED: {
      if (check_window(wk, w, in, ad, em, bytes, bytes, is_store, space) < 0) return -1;
      unsigned wf = pattern_count(wk, pc, SIM_MEMO_WAVEFRONTS, ad, em, bytes);
      wk->ic[pc].wf += wf;
      wk->ic[pc].conf += wf - 1;
      if (wk->shadow && sim_race_check(wk, w, in, ad, em, bytes, is_store) < 0) return -1;
      break;
    }
    case SIM_SP_LOCAL:
      if (check_window(wk, w, in, ad, em, bytes, bytes, is_store, space) < 0) return -1;
      break;
    case SIM_SP_PARAM:
      if (sim_param_check(wk, w, in, ad, em, bytes, is_store) < 0) return -1;
      break;
    default: break;
  }
  if (is_store) do_store(wk, w, in, space, ad, em);
  else do_load(wk, w, in, space, ad, em);
  return 0;
}

/* Splits a generic access by window; the address arrays are rewritten to space offsets. */
typedef int access_fn(sim_worker *, sim_warp *, const sim_inst *, int, int, const uint64_t *,
                      uint32_t, int);

/* The lanes of em whose generic address lies in the shared window (*sm), the local one (*lm) or
 * the kernel parameters' (*pm), their addresses rewritten to offsets in that window; the rest
 * are global. A host address lies below every window: one compare for the usual lane. */
static void split_windows(uint64_t *ad, uint32_t em, uint32_t *sm, uint32_t *lm, uint32_t *pm) {
  *sm = *lm = *pm = 0;
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm);
    uint64_t a = ad[l];
    if (a < SIM_SHARED_WIN) continue;
    if (a - SIM_SHARED_WIN < SIM_WIN_SIZE) {
      *sm |= 1u << l;
      ad[l] = a - SIM_SHARED_WIN;
    } else if (a - SIM_LOCAL_WIN < SIM_WIN_SIZE) {
      *lm |= 1u << l;
      ad[l] = a - SIM_LOCAL_WIN;
    } else if (a - SIM_PARAM_WIN < SIM_WIN_SIZE) {
      *pm |= 1u << l;
      ad[l] = a - SIM_PARAM_WIN;
    }
  }
}

static int generic(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint64_t *ad,
                   uint32_t em, int is_store, access_fn *fn) {
  uint32_t sm, lm, pm;
  split_windows(ad, em, &sm, &lm, &pm);
  uint32_t gm = em & ~sm & ~lm & ~pm;
  if (gm && fn(wk, w, in, pc, SIM_SP_GLOBAL, ad, gm, is_store) < 0) return -1;
  if (sm && fn(wk, w, in, pc, SIM_SP_SHARED, ad, sm, is_store) < 0) return -1;
  if (lm && fn(wk, w, in, pc, SIM_SP_LOCAL, ad, lm, is_store) < 0) return -1;
  if (pm && fn(wk, w, in, pc, SIM_SP_PARAM, ad, pm, is_store) < 0) return -1;
  return 0;
}

static void addresses(const sim_warp *w, const sim_inst *in, uint32_t em, uint64_t *ad) {
  const uint64_t *A = w->R + in->a * SIM_WARP;
  uint64_t off = (uint64_t)in->imm;
  LANES(ad[l] = A[l] + off);
}

/* The parts of fast_access, inlined into each of its two copies (fast_base, fast_avx2) so that
 * the AVX2 one is AVX2 throughout. */
#define SIM_FAST inline __attribute__((always_inline))

/* The two whole-warp loops of fast_access. The address comparison is written once and compiled
 * twice: for the baseline instruction set and, chosen at run time when the CPU has it, for AVX2
 * (four lanes per instruction). The load stays scalar, unrolled: AVX2 gathers are no faster for
 * four elements, and much slower under the microcode fix for Intel's Gather Data Sampling. */
static inline __attribute__((always_inline))
uint64_t diff_loop(const uint64_t *A, const uint64_t *delta) {
  uint64_t diff = 0, A0 = A[0];
  for (int l = 0; l < SIM_WARP; l++) diff |= (A[l] - A0) ^ delta[l];
  return diff;
}
static uint64_t diff_base(const uint64_t *A, const uint64_t *delta) {
  return diff_loop(A, delta);
}
#if defined(__x86_64__) && defined(__GNUC__)
/* diff_loop with AVX2, written out: the compiler's vectorised loop spent a third of its
 * instructions on its counter, and asked to unroll it, stopped vectorising. Inline in
 * fast_access_avx2. */
__attribute__((target("avx2")))
static inline uint64_t diff_avx2(const uint64_t *A, const uint64_t *delta) {
  const __m256i a0 = _mm256_set1_epi64x((long long)A[0]);
  __m256i d0 = _mm256_setzero_si256(), d1 = d0; /* two chains of ORs */
#define DIFF4(d, k)                                                               \
  d = _mm256_or_si256(d, _mm256_xor_si256(                                        \
          _mm256_sub_epi64(_mm256_loadu_si256((const __m256i *)(const void *)(A + (k))), a0), \
          _mm256_loadu_si256((const __m256i *)(const void *)(delta + (k)))))
  DIFF4(d0, 0);
  DIFF4(d1, 4);
  DIFF4(d0, 8);
  DIFF4(d1, 12);
  DIFF4(d0, 16);
  DIFF4(d1, 20);
  DIFF4(d0, 24);
  DIFF4(d1, 28);
#undef DIFF4
  d0 = _mm256_or_si256(d0, d1);
  return !_mm256_testz_si256(d0, d0);
}
/* libgcc detects the CPU at start-up */
static int have_avx2(void) { return __builtin_cpu_supports("avx2"); }
#else
static uint64_t diff_avx2(const uint64_t *A, const uint64_t *delta) {
  return diff_loop(A, delta);
}
static int have_avx2(void) { return 0; }
#endif

/* Zero-extending 4-byte loads of a whole warp from base + A[l]; D and A are distinct rows. */
static void load32(uint64_t *restrict D, uintptr_t base, const uint64_t *restrict A) {
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 8
#endif
  for (int l = 0; l < SIM_WARP; l++) {
    uint32_t x;
    memcpy(&x, (const unsigned char *)(base + A[l]), 4);
    D[l] = x;
  }
}

/* Where a whole-warp access may land, and how its memo counts it. */
typedef struct fast_win {
  uint64_t lo;      /* the first valid address */
  uint64_t last;    /* the greatest valid offset from lo of an element's first byte */
  uintptr_t host;   /* host address of address 0 (0 for global: its addresses are host ones) */
  unsigned kind;    /* SIM_MEMO_WAVEFRONTS (shared) or SIM_MEMO_SECTORS (global) */
  uint64_t gran;    /* bank width or sector size: the memo's phase is the address modulo it */
  int h;            /* the allocation, for global accesses; -1 for shared ones */
} fast_win;

/* The window of the access whose first lane's address is a0: the shared bytes the instruction
 * may touch (shared, a constant in each copy of fast_access), or the global allocation holding
 * a0. Returns 1 when there is none (the general path words the error). */
static SIM_FAST int fast_window(sim_worker *wk, uint64_t a0, uint64_t bytes, fast_win *fw,
                                sim_memo *mo, int shared) {
  const sim_run *run = wk->run;
  if (shared) { /* the bound variable's bytes, or all the block's */
    if (mo->win_n < bytes) return 1;
    *fw = (fast_win){mo->win_lo, mo->win_n - bytes, (uintptr_t)wk->shared, SIM_MEMO_WAVEFRONTS,
                     4, -1};
    return 0;
  }
  /* the allocation this instruction's last warp lay in first: an instruction mostly keeps to
   * one array (allocations never overlap, so whichever holds the address is the one) */
  int h = mo->alloc;
  if (h >= run->ntab || a0 - run->tab[h].base >= run->tab[h].size ||
      run->tab[h].size - (a0 - run->tab[h].base) < bytes) {
    h = find_cached(wk, a0, bytes);
    if (h < 0) return 1;
    mo->alloc = h;
  }
  *fw = (fast_win){run->tab[h].base, run->tab[h].size - bytes, 0, SIM_MEMO_SECTORS, 32, h};
  return 0;
}

/* Global accesses feed the timing model's trace (ad NULL: the memo mo holds the pattern, at
 * a0). */
static inline void fast_trace(sim_worker *wk, sim_warp *w, int pc, int is_store,
                              const uint64_t *ad, const fast_win *fw, uint64_t bytes,
                              sim_memo *mo, uint64_t a0) {
  if (!wk->run->lat || fw->kind != SIM_MEMO_SECTORS) return;
  int kind = is_store ? SIM_TR_STORE : SIM_TR_LOAD;
  if (ad)
    sim_trace_access(wk, w, pc, kind, ad, SIM_FULL, (int)bytes, fw->h);
  else
    sim_trace_warp(wk, w, pc, kind, a0, mo, (int)bytes, fw->h);
}

/* The warp's count of wavefronts or sectors, its bounds and alignment checked, when the lanes'
 * addresses A[l] + off repeat the memo mo: then the pattern's ends suffice (shared: the memo's
 * window test, sim_memo.hit_lo; global: fw's allocation). Returns -1 when they do not, or when an
 * end is out of bounds or misaligned. */
static SIM_FAST long fast_memo_hit(const sim_memo *mo, const fast_win *fw, const uint64_t *A,
                                   uint64_t off, uint64_t bytes, int shared, int avx2) {
  uint64_t a0 = A[0] + off;
  uint64_t kind = shared ? SIM_MEMO_WAVEFRONTS : SIM_MEMO_SECTORS, gran = shared ? 4 : 32;
  uint64_t diff = mo->key ^ (SIM_FULL | kind << 32 | (a0 & (gran - 1)) << 40);
  diff |= avx2 ? diff_avx2(A, mo->delta) : diff_base(A, mo->delta);
  if (diff) return -1;
  if ((a0 | mo->dor) & (bytes - 1)) return -1;
  if (shared) return a0 - mo->hit_lo > mo->hit_span ? -1 : (long)mo->count;
  uint64_t amin = a0 + (uint64_t)mo->dmin, amax = a0 + (uint64_t)mo->dmax;
  if (amin - fw->lo > fw->last || amax - fw->lo > fw->last || amax < amin) return -1;
  return mo->count;
}

/* The memo missed: one branch-free pass checks every lane, bounds and alignment folded into one
 * OR (an offset past `last`, or below the window's start, wraps around and sets the top bit),
 * then the count refills the memo. Returns the count, or -1 for the general path. Out of line:
 * a warp mostly repeats its instruction's pattern, and inline, this pass's row of addresses
 * gave every access through fast_access a frame realigned for it and a dozen spills. */
#if defined(__GNUC__)
__attribute__((noinline, cold))
#endif
static long fast_memo_fill(sim_worker *wk, sim_warp *w, int pc, int is_store, int shared,
                           sim_memo *mo, const uint64_t *A, uint64_t off, uint64_t bytes) {
  /* the window again, as fast_access found it (the allocation is in mo->alloc now): passed in,
   * it had to live in the caller's frame */
  fast_win fw;
  if (fast_window(wk, A[0] + off, bytes, &fw, mo, shared)) return -1;
  uint64_t ad[SIM_WARP], bad = 0, top = 1ull << 63;
  for (int l = 0; l < SIM_WARP; l++) {
    uint64_t a = A[l] + off, o = a - fw.lo;
    ad[l] = a;
    bad |= (a & (bytes - 1)) | ((o | (fw.last - o)) & top);
  }
  if (bad) return -1;
  unsigned c = memo_fill(mo, fw.kind, ad, SIM_FULL, (int)bytes);
  fast_trace(wk, w, pc, is_store, ad, &fw, bytes, mo, 0);
  return c;
}

/* A whole warp's elements moved four lanes at a time, the pattern's shape (sim_memo.move) known:
 * lane l's element lies at p + delta[l], p the host address of the first lane's. A group of
 * SIM_MOVE_RUNS4 is one 16- or 32-byte block, of SIM_MOVE_SAME4 one element. Stores go group
 * by group in lane order and a group's lanes write distinct elements (or, SAME4, its last lane
 * the one), so that where lanes write one address the highest still wins. The same bits as
 * load_lanes and store_lanes, in about a quarter of the host instructions: a tiled matmul's
 * shared loads are half of its instructions. */
#if defined(__x86_64__) && defined(__GNUC__)
/* Each case is a loop of its own over the 8 groups, unrolled: a test of the shape per group cost
 * more than the moves. Inline in fast_access_avx2, which knows is_store. */
#define GROUPS(...)                                   \
  _Pragma("GCC unroll 8") for (int g = 0; g < SIM_WARP; g += 4) { \
    const unsigned char *q = p + delta[g];            \
    uint64_t *Vg = V + g;                             \
    __VA_ARGS__;                                      \
  }
__attribute__((target("avx2")))
static inline void move_groups(uint64_t *V, const unsigned char *p, const uint64_t *delta,
                        uint32_t shape, int bytes, int sgn, int is_store) {
  const __m256i pick = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6); /* low words of 4 lanes */
  if (shape == SIM_MOVE_RUNS4 && bytes == 4) {
    if (is_store)
      GROUPS(_mm_storeu_si128((__m128i *)(void *)q,
                              _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
                                  _mm256_loadu_si256((const __m256i *)(const void *)Vg), pick))))
    else if (sgn)
      GROUPS(_mm256_storeu_si256((__m256i *)(void *)Vg, _mm256_cvtepi32_epi64(_mm_loadu_si128(
                                                            (const __m128i *)(const void *)q))))
    else
      GROUPS(_mm256_storeu_si256((__m256i *)(void *)Vg, _mm256_cvtepu32_epi64(_mm_loadu_si128(
                                                            (const __m128i *)(const void *)q))))
  } else if (shape == SIM_MOVE_RUNS4) { /* 8 bytes */
    if (is_store) GROUPS(memcpy((unsigned char *)q, Vg, 32))
    else GROUPS(memcpy(Vg, q, 32))
  } else if (is_store) { /* SIM_MOVE_SAME4: the group's last lane writes last */
    if (bytes == 4) GROUPS(host_put32((unsigned char *)q, Vg[3]))
    else GROUPS(memcpy((unsigned char *)q, &Vg[3], 8))
  } else if (bytes == 8) {
    GROUPS(uint64_t v; memcpy(&v, q, 8);
           _mm256_storeu_si256((__m256i *)(void *)Vg, _mm256_set1_epi64x((long long)v)))
  } else if (sgn) {
    GROUPS(_mm256_storeu_si256((__m256i *)(void *)Vg, _mm256_set1_epi64x((long long)host_s32(q))))
  } else {
    GROUPS(_mm256_storeu_si256((__m256i *)(void *)Vg, _mm256_set1_epi64x((long long)host_u32(q))))
  }
}
#undef GROUPS
#else
static void move_groups(uint64_t *V, const unsigned char *p, const uint64_t *delta,
                        uint32_t shape, int bytes, int sgn, int is_store) {
  (void)V;
  (void)p;
  (void)delta;
  (void)shape;
  (void)bytes;
  (void)sgn;
  (void)is_store; /* never called: have_avx2() says no */
}
#endif

/* The data moves from host + A[l] (host includes the instruction's offset): the address row
 * itself serves as the offsets; or, when the memo mo holds the lanes' pattern with a shape
 * move_groups takes, four lanes at a time from p0, the host address of the first lane's. */
static SIM_FAST void fast_move(sim_warp *w, const sim_inst *in, uintptr_t host, const uint64_t *A,
                             int is_store, const sim_memo *mo, uintptr_t p0, int avx2) {
  uint64_t *V = w->R + in->v[0] * SIM_WARP;
  int bytes = in->size, sgn = type_signed(in->ty) && bytes < 8;
  if (!is_store && in->v[0] < 0) return;
  if (mo->move != SIM_MOVE_LANES && avx2) {
    move_groups(V, (const unsigned char *)p0, mo->delta, mo->move, bytes, sgn, is_store);
    return;
  }
  if (is_store) store_lanes(V, host, 0, A, SIM_FULL, bytes);
  else if (bytes == 4 && !sgn && V != A) load32(V, host, A);
  else load_lanes(V, host, 0, A, SIM_FULL, bytes, sgn);
}

/* The hot case: a whole warp loading or storing one element per lane in global or shared memory.
 * When the lanes' addresses repeat the instruction's memo (one vectorised pass over the address
 * row; the instruction's offset cancels out), bounds and alignment are checked on the pattern's
 * ends and the counts come from the memo (fast_memo_hit); otherwise one pass checks every lane
 * (fast_memo_fill). Returns 1, having touched nothing, when the general path must
 * take over: a bad lane (whose message that path words), a warp spanning several allocations.
 * Returns -1 when race checking (shared memory, checked before the access is made) found a race.
 * avx2 is a constant in each of its two copies (below). */
static SIM_FAST int fast_access(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc,
                                int is_store, int shared, int avx2) {
  const uint64_t *A = w->R + in->a * SIM_WARP;
  uint64_t off = (uint64_t)in->imm, bytes = in->size;
  fast_win fw = {0, 0, (uintptr_t)wk->shared, SIM_MEMO_WAVEFRONTS, 4, -1};
  sim_memo *mo = memo_of(wk, pc);
  if (!mo) return 1;
  /* a shared access's window is the memo's own (sim_memo.hit_lo) */
  if (!shared && fast_window(wk, A[0] + off, bytes, &fw, mo, 0)) return 1;
  long c = fast_memo_hit(mo, &fw, A, off, bytes, shared, avx2);
  if (c >= 0) {
    if (!shared) fast_trace(wk, w, pc, is_store, NULL, &fw, bytes, mo, A[0] + off);
  } else {
    c = fast_memo_fill(wk, w, pc, is_store, shared, mo, A, off, bytes);
  }
  if (c < 0) return 1;
  if (shared) {
    if (wk->shadow && !(!is_store && sim_race_log_load(wk, w, in, pc, A, off, mo)) &&
        sim_race_check_warp(wk, w, in, A, off, is_store, mo) < 0)
      return -1;
    wk->ic[pc].wf += (unsigned)c;
    wk->ic[pc].conf += (unsigned)c - 1;
  } else {
    wk->ic[pc].req++;
    wk->ic[pc].sect += (unsigned)c;
  }
  fast_move(w, in, fw.host + off, A, is_store, mo, fw.host + (uintptr_t)(A[0] + off), avx2);
  return 0;
}

static int fast_case(const sim_inst *in, uint32_t em) {
  return em == SIM_FULL && in->vec == 1
      && (in->space == SIM_SP_SHARED || in->space == SIM_SP_GLOBAL);
}

/* Every other ld or st, and those fast_access declines: each lane's address computed, checked
 * and moved (mem_access), the generic ones split by window first. Out of line, so that the
 * fast path's frame holds no row of addresses. */
static __attribute__((noinline)) int access_lanes(sim_worker *wk, sim_warp *w,
                                                  const sim_inst *in, int pc, uint32_t em,
                                                  int is_store) {
  uint64_t ad[SIM_WARP];
  addresses(w, in, em, ad);
  if (in->space == SIM_SP_GENERIC) return generic(wk, w, in, pc, ad, em, is_store, mem_access);
  return mem_access(wk, w, in, pc, in->space, ad, em, is_store);
}

/* A fast_case access: fast_access, compiled twice as the interpreter is (sim_exec.c), for the
 * baseline instruction set and, chosen at run time, for AVX2, into which the address check
 * (diff_avx2) and the mover (move_groups) inline (as calls, with their arguments and the AVX
 * state's clearing, they were a fifth of a shared load's host instructions); or the general
 * path when it declines. Each ends in a tail call or a return, so sim_mem_ld and sim_mem_st,
 * which only choose, need no frame of their own. */
static int fast_base(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em,
                     int is_store) {
  int shared = in->space == SIM_SP_SHARED;
  int r = is_store ? fast_access(wk, w, in, pc, 1, shared, 0)
                   : fast_access(wk, w, in, pc, 0, shared, 0);
  return r > 0 ? access_lanes(wk, w, in, pc, em, is_store) : r;
}
/* The AVX2 copy once for each of loads and stores on shared and on global memory: as one
 * function taking is_store, each access paid the prologue and register saves of both paths, and
 * a shared access tested on its way what only a global one needs (the allocation, the trace). */
#if defined(__x86_64__) && defined(__GNUC__)
#define FAST_AVX2(name, is_store, shared)                                                   \
  __attribute__((target("avx2"))) static int name(sim_worker *wk, sim_warp *w,             \
                                                  const sim_inst *in, int pc, uint32_t em) { \
    int r = fast_access(wk, w, in, pc, is_store, shared, 1);                                \
    return r > 0 ? access_lanes(wk, w, in, pc, em, is_store) : r;                          \
  }
#else
#define FAST_AVX2(name, is_store, shared)                                                   \
  static int name(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em) {  \
    return fast_base(wk, w, in, pc, em, is_store);                                          \
  }
#endif
FAST_AVX2(fast_avx2_ld_shared, 0, 1)
FAST_AVX2(fast_avx2_ld_global, 0, 0)
FAST_AVX2(fast_avx2_st_shared, 1, 1)
FAST_AVX2(fast_avx2_st_global, 1, 0)
#undef FAST_AVX2

static inline int ld_plain(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc,
                           uint32_t em) {
  if (!fast_case(in, em)) return access_lanes(wk, w, in, pc, em, 0);
  if (!have_avx2()) return fast_base(wk, w, in, pc, em, 0);
  return in->space == SIM_SP_SHARED ? fast_avx2_ld_shared(wk, w, in, pc, em)
                                    : fast_avx2_ld_global(wk, w, in, pc, em);
}

static inline int st_plain(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc,
                           uint32_t em) {
  /* progress, for spin detection (sim_sched.c): a store counts even when it rewrites a value */
  wk->writes++;
  if (!fast_case(in, em)) return access_lanes(wk, w, in, pc, em, 1);
  if (!have_avx2()) return fast_base(wk, w, in, pc, em, 1);
  return in->space == SIM_SP_SHARED ? fast_avx2_st_shared(wk, w, in, pc, em)
                                    : fast_avx2_st_global(wk, w, in, pc, em);
}

int sim_mem_ld_plain(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em) {
  return ld_plain(wk, w, in, pc, em);
}

int sim_mem_st_plain(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em) {
  return st_plain(wk, w, in, pc, em);
}

/* The debugging hooks (sim_sanitize.c) are off unless a launch asks for them: one flag each. */
int sim_mem_ld(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em) {
  if (wk->run->hook_load) return sim_hook_ld(wk, w, in, pc, em);
  return ld_plain(wk, w, in, pc, em);
}

int sim_mem_st(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em) {
  if (wk->run->hook_store) return sim_hook_st(wk, w, in, pc, em);
  return st_plain(wk, w, in, pc, em);
}

/* ---- other instructions' accesses ---- */

static int lanes_space(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, int space,
                       const uint64_t *ad, uint32_t em, int bytes, int align, int is_store,
                       unsigned char **ptr) {
  switch (space) {
    case SIM_SP_GLOBAL:
      if (check_global(wk, w, in, ad, em, bytes, align, is_store) < 0) return -1;
      if (pc < 0) break; /* the caller counts */
      wk->ic[pc].req++;
      wk->ic[pc].sect += count_kind(SIM_MEMO_SECTORS, ad, em, bytes);
      break;
    case SIM_SP_SHARED: {
      if (check_window(wk, w, in, ad, em, bytes, align, is_store, space) < 0) return -1;
      if (pc >= 0) {
        unsigned wf = count_kind(SIM_MEMO_WAVEFRONTS, ad, em, bytes);
        wk->ic[pc].wf += wf;
        wk->ic[pc].conf += wf - 1;
      }
      if (wk->shadow && sim_race_check(wk, w, in, ad, em, bytes, is_store) < 0) return -1;
      break;
    }
    case SIM_SP_LOCAL:
      if (check_window(wk, w, in, ad, em, bytes, align, is_store, space) < 0) return -1;
      break;
    case SIM_SP_PARAM:
      if (sim_param_check(wk, w, in, ad, em, bytes, is_store) < 0) return -1;
      break;
    default:
      return sim_fail(wk, w, __builtin_ctz(em), in, "internal error: state space %d", space);
  }
  if (wk->run->san_store && sim_hook_lanes(wk, w, in, space, ad, em, bytes, is_store) < 0)
    return -1;
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm);
    ptr[l] = host_ptr(wk, w, space, l, ad[l]);
  }
  return 0;
}

/* Patterns are counted afresh (no memo): one tensor instruction makes several accesses per pc. */
int sim_mem_lanes(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, int space,
                  const uint64_t *ad, uint32_t em, int bytes, int align, int is_store,
                  unsigned char **ptr) {
  if (!em) return 0;
  if (space != SIM_SP_GENERIC)
    return lanes_space(wk, w, in, pc, space, ad, em, bytes, align, is_store, ptr);
  uint64_t a2[SIM_WARP];
  uint32_t sm, lm, pm;
  LANES(a2[l] = ad[l]);
  split_windows(a2, em, &sm, &lm, &pm);
  uint32_t gm = em & ~sm & ~lm & ~pm;
  if (gm && lanes_space(wk, w, in, pc, SIM_SP_GLOBAL, a2, gm, bytes, align, is_store, ptr) < 0)
    return -1;
  if (sm && lanes_space(wk, w, in, pc, SIM_SP_SHARED, a2, sm, bytes, align, is_store, ptr) < 0)
    return -1;
  if (lm && lanes_space(wk, w, in, pc, SIM_SP_LOCAL, a2, lm, bytes, align, is_store, ptr) < 0)
    return -1;
  if (pm && lanes_space(wk, w, in, pc, SIM_SP_PARAM, a2, pm, bytes, align, is_store, ptr) < 0)
    return -1;
  return 0;
}

/* ---- atomics ---- */

uint64_t sim_atom_apply(int sub, int ty, uint64_t old, uint64_t b, uint64_t c) {
  int sz = sim_type_size(ty);
  uint64_t msk = sz == 8 ? ~0ull : sz == 2 ? 0xffffull : 0xffffffffull;
  if (sim_type_half(ty) && (sub == SIM_ATOM_ADD || sub == SIM_ATOM_MIN || sub == SIM_ATOM_MAX)) {
    int op = sub == SIM_ATOM_ADD ? SIM_ALU_ADD : sub == SIM_ATOM_MIN ? SIM_ALU_MIN : SIM_ALU_MAX;
    return sim_half_atom(op, ty, (uint32_t)old, (uint32_t)b) & msk;
  }
  switch (sub) {
    case SIM_ATOM_ADD:
      if (ty == SIM_T_F32) {
        float x, y;
        uint32_t u = (uint32_t)old, v = (uint32_t)b;
        memcpy(&x, &u, 4);
        memcpy(&y, &v, 4);
        if ((u & 0x7f800000u) == 0) x = 0.0f * (u >> 31 ? -1.0f : 1.0f);
        if ((v & 0x7f800000u) == 0) y = 0.0f * (v >> 31 ? -1.0f : 1.0f);
        float r = x + y;
        uint32_t o = sim_f32_canon(r);
        if ((o & 0x7f800000u) == 0) o &= 0x80000000u; /* atom.add.f32 flushes subnormals */
        return o;
      }
      if (ty == SIM_T_F64) {
        double x, y;
        memcpy(&x, &old, 8);
        memcpy(&y, &b, 8);
        double r = x + y;
        uint64_t o;
        memcpy(&o, &r, 8);
        return o;
      }
      return (old + b) & msk;
    case SIM_ATOM_MIN:
      if (sim_type_signed(ty) && sz == 8) return (int64_t)old < (int64_t)b ? old : b;
      if (sim_type_signed(ty)) return ((int32_t)old < (int32_t)b ? old : b) & msk;
      return ((old & msk) < (b & msk) ? old : b) & msk;
    case SIM_ATOM_MAX:
      if (sim_type_signed(ty) && sz == 8) return (int64_t)old > (int64_t)b ? old : b;
      if (sim_type_signed(ty)) return ((int32_t)old > (int32_t)b ? old : b) & msk;
      return ((old & msk) > (b & msk) ? old : b) & msk;
    case SIM_ATOM_INC: return (old & msk) >= (b & msk) ? 0 : (old + 1) & msk;
    case SIM_ATOM_DEC:
      return ((old & msk) == 0 || (old & msk) > (b & msk)) ? b & msk : (old - 1) & msk;
    case SIM_ATOM_AND: return old & b & msk;
    case SIM_ATOM_OR: return (old | b) & msk;
    case SIM_ATOM_XOR: return (old ^ b) & msk;
    case SIM_ATOM_EXCH: return b & msk;
    default: return (old & msk) == (b & msk) ? c & msk : old & msk; /* cas */
  }
}

/* One lane's atomic on global memory, which other host threads may touch at once: a fetch-add
 * for integer additions, else a compare-and-swap loop (cas.b16 and the 16-bit float additions
 * included). Sets *old and *nv, the values before and after. */
static void atom_host16(const sim_inst *in, unsigned char *p, uint64_t b, uint64_t c,
                        uint64_t *old, uint64_t *nv) {
  uint16_t *q = (uint16_t *)(void *)p;
  uint16_t o = __atomic_load_n(q, __ATOMIC_RELAXED), n;
  do n = (uint16_t)sim_atom_apply(in->sub, in->ty, o, b, c);
  while (!__atomic_compare_exchange_n(q, &o, n, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  *old = o;
  *nv = n;
}
static void atom_host32(const sim_inst *in, unsigned char *p, uint64_t b, uint64_t c,
                        uint64_t *old, uint64_t *nv) {
  uint32_t *q = (uint32_t *)(void *)p;
  if (in->sub == SIM_ATOM_ADD && !sim_type_float(in->ty) && !sim_type_half(in->ty)) {
    *old = __atomic_fetch_add(q, (uint32_t)b, __ATOMIC_RELAXED);
    *nv = (uint32_t)(*old + (uint32_t)b);
    return;
  }
  uint32_t o = __atomic_load_n(q, __ATOMIC_RELAXED), n;
  do n = (uint32_t)sim_atom_apply(in->sub, in->ty, o, b, c);
  while (!__atomic_compare_exchange_n(q, &o, n, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  *old = o;
  *nv = n;
}
static void atom_host64(const sim_inst *in, unsigned char *p, uint64_t b, uint64_t c,
                        uint64_t *old, uint64_t *nv) {
  uint64_t *q = (uint64_t *)(void *)p;
  if (in->sub == SIM_ATOM_ADD && !sim_type_float(in->ty) && !sim_type_half(in->ty)) {
    *old = __atomic_fetch_add(q, b, __ATOMIC_RELAXED);
    *nv = *old + b;
    return;
  }
  uint64_t o = __atomic_load_n(q, __ATOMIC_RELAXED), n;
  do n = sim_atom_apply(in->sub, in->ty, o, b, c);
  while (!__atomic_compare_exchange_n(q, &o, n, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  *old = o;
  *nv = n;
}

/* Bounds, alignment, timing trace and race checks of an atomic in one space. The first element
 * of a vector atomic (ty2: the vector's bytes) checks the whole vector, its bounds and its
 * alignment, so that one the GPU refuses changes no element; the GPU has vector atomics on
 * global memory only. */
static int atom_check(sim_worker *wk, sim_warp *w, const sim_inst *in, int space,
                      const uint64_t *ad, uint32_t em) {
  int sz = in->ty2 ? in->ty2 : in->size;
  if (space == SIM_SP_LOCAL)
    return sim_fail(wk, w, __builtin_ctz(em), in, "atomic operation on local memory");
  if (space == SIM_SP_PARAM) return sim_param_check(wk, w, in, ad, em, sz, 2); /* refused */
  if (space != SIM_SP_GLOBAL && in->ty2)
    return sim_fail(wk, w, __builtin_ctz(em), in, "vector atomic (atomicAdd on a float2 or "
                    "float4, or .v2 / .v4 / .v8 in PTX) on shared memory: the GPU has vector "
                    "atomics on global memory only; add the elements one at a time there");
  if (space == SIM_SP_GLOBAL) {
    if (check_global(wk, w, in, ad, em, sz, sz, 2) < 0) return -1;
    if (wk->run->lat) sim_trace_atom(wk, w, in, ad, em);
    return 0;
  }
  if (check_window(wk, w, in, ad, em, sz, sz, 2, SIM_SP_SHARED) < 0) return -1;
  if (wk->shadow && sim_race_check(wk, w, in, ad, em, sz, 2) < 0) return -1;
  return 0;
}

static int atom_space(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, int space,
                      const uint64_t *ad, uint32_t em, int is_store) {
  (void)is_store;
  (void)pc;
  int sz = in->size;
  if (atom_check(wk, w, in, space, ad, em) < 0) return -1;
  const uint64_t *B = w->R + in->b * SIM_WARP;
  const uint64_t *C = w->R + (in->c >= 0 ? in->c : SIM_SR_ZERO) * SIM_WARP;
  uint64_t *D = in->d >= 0 ? w->R + in->d * SIM_WARP : NULL;
  int changed = 0; /* an atomic that leaves memory as it was (a failed CAS, adding 0) is a read */
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm);
    unsigned char *p = host_ptr(wk, w, space, l, ad[l]);
    uint64_t old = 0, nv;
    if (space == SIM_SP_SHARED) {
      /* A block's shared memory belongs to one host thread: plain operations are atomic. */
      memcpy(&old, p, (size_t)sz);
      nv = sim_atom_apply(in->sub, in->ty, old, B[l], C[l]);
      memcpy(p, &nv, (size_t)sz);
    } else if (sz == 2) {
      atom_host16(in, p, B[l], C[l], &old, &nv);
    } else if (sz == 4) {
      atom_host32(in, p, B[l], C[l], &old, &nv);
    } else {
      atom_host64(in, p, B[l], C[l], &old, &nv);
    }
    changed |= nv != old;
    if (D) D[l] = old;
  }
  wk->writes += (uint64_t)changed; /* progress, for spin detection (sim_sched.c) */
  return 0;
}

int sim_mem_atom(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em) {
  if (wk->run->hook_store) return sim_hook_atom(wk, w, in, pc, em);
  return sim_mem_atom_plain(wk, w, in, pc, em);
}

int sim_mem_atom_plain(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em) {
  uint64_t ad[SIM_WARP];
  addresses(w, in, em, ad);
  if (in->space == SIM_SP_GENERIC) return generic(wk, w, in, pc, ad, em, 2, atom_space);
  return atom_space(wk, w, in, pc, in->space, ad, em, 2);
}

int sim_mem_read_generic(sim_worker *wk, sim_warp *w, int lane, uint64_t a, void *out, size_t len) {
  if (a - SIM_LOCAL_WIN < SIM_WIN_SIZE) {
    a -= SIM_LOCAL_WIN;
    if (a > wk->run->local_stride || wk->run->local_stride - a < len) return -1;
    memcpy(out, w->local + (size_t)lane * wk->run->local_stride + a, len);
    return 0;
  }
  if (a - SIM_SHARED_WIN < SIM_WIN_SIZE) {
    a -= SIM_SHARED_WIN;
    if (a > wk->run->shared_total || wk->run->shared_total - a < len) return -1;
    memcpy(out, wk->shared + a, len);
    return 0;
  }
  if (a - SIM_PARAM_WIN < SIM_WIN_SIZE) { /* a __grid_constant__ parameter's bytes */
    a -= SIM_PARAM_WIN;
    if (a > wk->run->f->param_bytes || wk->run->f->param_bytes - a < len) return -1;
    memcpy(out, wk->run->params + a, len);
    return 0;
  }
  if (sim_alloc_find(wk->run->tab, wk->run->ntab, a, len) < 0
      && !sim_heap_holds(wk->run->dev, a, len))
    return -1;
  memcpy(out, (const void *)(uintptr_t)a, len);
  return 0;
}
