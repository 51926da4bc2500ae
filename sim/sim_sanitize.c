/* sim_sanitize.c: the checks a learner turns on to find where a kernel goes wrong, each of which
 * stops the launch at the first finding with the thread, the block and the source line:
 *   nan   where the NaN or infinity a kernel writes to memory was made, or under the strict
 *         check any the kernel makes, stored or not (sim_nan.c);
 *   init  a read of shared memory no thread of the block has written in this launch, or of an
 *         array made without filling it that nothing has written since (sim_mark_unset);
 *   sync  a __syncthreads() some threads of the block never reach, as compute-sanitizer's
 *         synccheck reports it: how many came, and who did not and why.
 * It also holds the hooks around ld / st / atom that the init check and watches (sim_watch.c)
 * need, and the bookkeeping of never-written memory.
 *
 * Stance: a launch that asks for none of this pays one predictable branch where a hook could be
 * (run->hook_*, decided once per launch in sim_san_begin), so the executor stays as fast as it
 * was; a launch that asks pays only for what it asked. The hooks wrap the plain instructions
 * (sim_mem_*_plain) rather than sit inside them: they read the addresses first, let the plain
 * instruction check and do the access, and look afterwards, so every bounds error keeps its own
 * message. Never-written memory has a bit per byte (sim_unset), set by the host's copies and
 * fills and by kernels' stores and atomics; the bits of an array made with sim_mark_unset are
 * kept, and marked by kernels, whether or not the init check is on, because a later launch with
 * the check on must know what earlier ones wrote; once every byte is written the bits go, and
 * launches stop paying for them. Shared memory has a bit per byte per resident block, only under
 * the init check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_bits.h"
#include "sim_run.h"

/* ---- never-written memory ---- */

/* Sets the bits of bytes [from, from + n) of u; returns how many were clear. Atomic, since
 * workers mark one array at once; a byte of bits is read first so that marking what is marked
 * already (nearly every store, once an array is filled) writes nothing. */
static uint64_t set_bits(sim_unset *u, uint64_t from, uint64_t n) {
  uint64_t fresh = 0;
  for (uint64_t i = from; i < from + n;) {
    unsigned sh = (unsigned)(i & 7);
    uint64_t take = 8 - sh < from + n - i ? 8 - sh : from + n - i;
    unsigned char mask = (unsigned char)(((1u << take) - 1) << sh);
    unsigned char *p = &u->bits[i >> 3];
    if ((__atomic_load_n(p, __ATOMIC_RELAXED) & mask) != mask) {
      unsigned char old = __atomic_fetch_or(p, mask, __ATOMIC_RELAXED);
      fresh += (uint64_t)sim_popcount((unsigned)(mask & ~old));
    }
    i += take;
  }
  if (fresh) atomic_fetch_sub(&u->unwritten, fresh);
  return fresh;
}

/* The first clear bit of [from, from + n), or -1. */
static int64_t first_clear(const sim_unset *u, uint64_t from, uint64_t n) {
  for (uint64_t i = from; i < from + n; i++)
    if (!(__atomic_load_n(&u->bits[i >> 3], __ATOMIC_RELAXED) >> (i & 7) & 1))
      return (int64_t)i;
  return -1;
}

int sim_mark_unset(sim_device *dev, const void *ptr, size_t bytes) {
  uint64_t a = (uint64_t)(uintptr_t)ptr;
  int i = sim_alloc_find(dev->allocs, dev->nallocs, a, bytes ? bytes : 1);
  if (i < 0) return -1;
  sim_alloc *t = &dev->allocs[i];
  size_t nb = (size_t)(t->size + 7) / 8;
  int whole = a == t->base && bytes == t->size;
  if (!t->unset) {
    t->unset = malloc(sizeof *t->unset + nb);
    if (!t->unset) return -1;
    /* written, but for the bytes marked below; a whole array at once, as cuda.empty asks */
    memset(t->unset->bits, whole ? 0 : 0xff, nb);
    atomic_init(&t->unset->unwritten, whole ? t->size : 0);
    if (whole) return 0;
  }
  for (uint64_t k = a - t->base; k < a - t->base + bytes; k++) {
    unsigned char *p = &t->unset->bits[k >> 3];
    if (*p >> (k & 7) & 1) atomic_fetch_add(&t->unset->unwritten, 1);
    *p = (unsigned char)(*p & ~(1u << (k & 7)));
  }
  return 0;
}

void sim_mark_written(sim_device *dev, const void *ptr, size_t bytes) {
  uint64_t a = (uint64_t)(uintptr_t)ptr;
  int i = bytes ? sim_alloc_find(dev->allocs, dev->nallocs, a, 1) : -1;
  if (i < 0 || !dev->allocs[i].unset) return;
  sim_alloc *t = &dev->allocs[i];
  uint64_t off = a - t->base, n = bytes < t->size - off ? bytes : t->size - off;
  set_bits(t->unset, off, n);
}

void sim_unset_drop(sim_alloc *a) {
  free(a->unset);
  a->unset = NULL;
}

/* Marks whose every byte has been written go, from the launch's table and the device's (which
 * owns them), so that launches stop paying for them; the rest are listed in run->unset. */
static int list_unset(sim_run *run) {
  sim_device *dev = run->dev;
  int n = 0;
  for (int i = 0; i < run->ntab; i++) {
    sim_alloc *t = &run->tab[i];
    if (t->unset && !atomic_load(&t->unset->unwritten)) t->unset = NULL;
    n += t->unset != NULL;
  }
  for (int i = 0; i < dev->nallocs; i++)
    if (dev->allocs[i].unset && !atomic_load(&dev->allocs[i].unset->unwritten))
      sim_unset_drop(&dev->allocs[i]);
  if (!n) return 0;
  run->unset = malloc((size_t)n * sizeof *run->unset);
  if (!run->unset) return -1;
  for (int i = 0; i < run->ntab; i++)
    if (run->tab[i].unset) run->unset[run->nunset++] = i;
  return 0;
}

/* The managed allocations of this launch's table (their groups' touches are marked), in
 * run->um. 0, or -1 out of memory. */
static int list_managed(sim_run *run) {
  int n = 0;
  for (int i = 0; i < run->ntab; i++) n += run->tab[i].um != NULL;
  if (!n) return 0;
  run->um = malloc((size_t)n * sizeof *run->um);
  if (!run->um) return -1;
  for (int i = 0; i < run->ntab; i++)
    if (run->tab[i].um) run->um[run->num++] = i;
  return 0;
}

/* ---- a launch ---- */

int sim_san_begin(sim_run *run) {
  const sim_launch_opts *o = run->opts;
  run->san = o ? o->sanitize & (SIM_SAN_NAN | SIM_SAN_INIT | SIM_SAN_SYNC | SIM_SAN_NAN_MADE) : 0;
  if (!(run->san & SIM_SAN_NAN)) run->san &= ~SIM_SAN_NAN_MADE; /* strict only with the check */
  run->race_warn = o && o->race_check == SIM_RACE_WARN;
  /* release and acquire order warps only where the kernel has them, and only shared memory is
   * checked for races (sim_hb.c) */
  run->hb = o && o->race_check && run->k->orders && run->shared_user > 0;
  if (o && o->warning && o->warninglen) o->warning[0] = 0;
  if (list_unset(run) < 0 || list_managed(run) < 0 || sim_watch_begin(run) < 0) return -1;
  run->hook_nan = (run->san & SIM_SAN_NAN) != 0;
  run->san_load = (run->san & SIM_SAN_INIT) != 0 || run->num;
  run->san_store = run->san_load || run->nunset || run->nwatch;
  run->hook_load = run->san_load || run->hb;
  run->hook_store = run->san_store || run->hb;
  return 0;
}

void sim_san_end(sim_run *run) {
  free(run->unset);
  run->unset = NULL;
  free(run->um);
  run->um = NULL;
  run->num = 0;
  sim_watch_end(run);
}

/* ---- words for the reports ---- */

void sim_san_who(const sim_worker *wk, const sim_warp *w, int lane, const sim_inst *in, char *buf,
                 size_t len) {
  const sim_run *run = wk->run;
  unsigned lin = (unsigned)(w->index * SIM_WARP + lane), bx = run->block.x, by = run->block.y;
  char src[300];
  sim_srcline(run->m, in, src, sizeof src);
  snprintf(buf, len, "thread (%u,%u,%u) of block (%u,%u,%u), %s", lin % bx, (lin / bx) % by,
           lin / (bx * by), wk->bx, wk->by, wk->bz, src);
}

/* "(3,0,0)" for thread t of the block. */
static void thread_xyz(const sim_run *run, unsigned t, char *buf, size_t len) {
  unsigned bx = run->block.x, by = run->block.y;
  snprintf(buf, len, "(%u,%u,%u)", t % bx, (t / bx) % by, t / (bx * by));
}

/* ---- the init check ---- */


/* The space an access of lane address a in `space` lies in, with a made an offset into it for
 * shared memory: generic addresses are resolved by their window. */
static int resolve(int space, uint64_t *a) {
  if (space != SIM_SP_GENERIC) return space;
  if (*a - SIM_SHARED_WIN < SIM_WIN_SIZE) {
    *a -= SIM_SHARED_WIN;
    return SIM_SP_SHARED;
  }
  return *a - SIM_LOCAL_WIN < SIM_WIN_SIZE ? SIM_SP_LOCAL : SIM_SP_GLOBAL;
}

/* The run->unset entry whose allocation holds global address a, or -1. */
static int unset_at(const sim_run *run, uint64_t a) {
  for (int k = 0; k < run->nunset; k++) {
    const sim_alloc *t = &run->tab[run->unset[k]];
    if (a - t->base < t->size) return run->unset[k];
  }
  return -1;
}

static void mark_shared(sim_worker *wk, uint64_t off, int bytes) {
  for (uint64_t i = off; i < off + (uint64_t)bytes && i < wk->run->shared_total; i++)
    wk->iset[i >> 3] = (unsigned char)(wk->iset[i >> 3] | 1u << (i & 7));
}

/* A block starts with nothing of its shared memory written, but for the reserved region, which
 * the GPU hands over zeroed (cooperative_groups reads its barriers there without writing them). */
void sim_init_block(sim_worker *wk) {
  memset(wk->iset, 0, wk->run->shared_total / 8 + 1);
  mark_shared(wk, 0, (int)wk->run->k->reserved_shared);
}

/* Marks what lanes em wrote: shared bytes (under the init check) and never-written arrays. */
static void mark_written(sim_worker *wk, int space, const uint64_t *ad, uint32_t em, int bytes) {
  const sim_run *run = wk->run;
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    uint64_t a = ad[__builtin_ctz(mm)];
    int sp = resolve(space, &a), i;
    if (sp == SIM_SP_SHARED && wk->iset) mark_shared(wk, a, bytes);
    if (sp == SIM_SP_GLOBAL && (i = unset_at(run, a)) >= 0) {
      const sim_alloc *t = &run->tab[i];
      uint64_t off = a - t->origin, end = t->base + t->size - t->origin,
               n = (uint64_t)bytes < end - off ? (uint64_t)bytes : end - off;
      set_bits(t->unset, off, n);
    }
  }
}

/* Marks the managed groups lanes em touched (is_store: wrote), for sim_managed_settle. An
 * access never spans two groups' worth of allocations: its first byte names the group, and one
 * that straddles a group boundary marks the next group too. */
static void mark_managed(const sim_run *run, int space, const uint64_t *ad, uint32_t em,
                         int bytes, int is_store) {
  if (!run->num) return;
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    uint64_t a = ad[__builtin_ctz(mm)];
    if (resolve(space, &a) != SIM_SP_GLOBAL) continue;
    for (int k = 0; k < run->num; k++) {
      const sim_alloc *t = &run->tab[run->um[k]];
      if (a - t->base >= t->size) continue;
      sim_um_touch(t, a, is_store);
      uint64_t last = a + (uint64_t)bytes - 1, g = (a - t->origin) / SIM_UM_GROUP;
      if (last - t->base < t->size && (last - t->origin) / SIM_UM_GROUP != g)
        sim_um_touch(t, last, is_store);
      break;
    }
  }
}

#if defined(__GNUC__)
__attribute__((cold, noinline))
#endif
static int report_shared(sim_worker *wk, sim_warp *w, int lane, const sim_inst *in, uint64_t a) {
  char at[400], what[400];
  sim_san_who(wk, w, lane, in, at, sizeof at);
  sim_shared_name(wk->run, a, in->size, what, sizeof what);
  return sim_fail(wk, w, lane, in,
                  "uninitialised read (init check): %s, reads %s, which no thread of the block "
                  "has written in this launch", at, what);
}

#if defined(__GNUC__)
__attribute__((cold, noinline))
#endif
static int report_global(sim_worker *wk, sim_warp *w, int lane, const sim_inst *in, int i,
                         uint64_t a) {
  char at[400], what[300];
  sim_san_who(wk, w, lane, in, at, sizeof at);
  sim_global_name(wk->run, i, a, what, sizeof what);
  return sim_fail(wk, w, lane, in,
                  "uninitialised read (init check): %s, reads %s, which nothing has written "
                  "since the array was made without filling it", at, what);
}

/* The init check of a read of `bytes` per lane at ad[] in space (generic resolved per lane),
 * after the plain instruction found every lane in bounds. 0, or -1 with the first unwritten
 * byte's lane reported. */
static int check_read(sim_worker *wk, sim_warp *w, const sim_inst *in, int space,
                      const uint64_t *ad, uint32_t em, int bytes) {
  const sim_run *run = wk->run;
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm), i;
    uint64_t a = ad[l];
    int sp = resolve(space, &a);
    if (sp == SIM_SP_SHARED && wk->iset) {
      for (uint64_t k = a; k < a + (uint64_t)bytes && k < run->shared_total; k++)
        if (!(wk->iset[k >> 3] >> (k & 7) & 1)) return report_shared(wk, w, l, in, k);
    } else if (sp == SIM_SP_GLOBAL && (i = unset_at(run, a)) >= 0) {
      const sim_alloc *t = &run->tab[i];
      uint64_t off = a - t->origin, end = t->base + t->size - t->origin,
               n = (uint64_t)bytes < end - off ? (uint64_t)bytes : end - off;
      int64_t bad = first_clear(t->unset, off, n);
      if (bad >= 0) return report_global(wk, w, l, in, i, t->origin + (uint64_t)bad);
    }
  }
  return 0;
}

/* ---- the memory hooks ---- */

/* The lanes' addresses as the instruction names them (generic ones unresolved): read before
 * the plain instruction runs, since a load may overwrite its own address register. */
static void lane_addresses(const sim_warp *w, const sim_inst *in, uint32_t em, uint64_t *ad) {
  const uint64_t *A = w->R + in->a * SIM_WARP;
  LANES(ad[l] = A[l] + (uint64_t)in->imm);
}

/* Whether the release/acquire model wants this ld or st (sim_hb.c): a strong one. */
static int hb_wants(const sim_worker *wk, const sim_inst *in) {
  return wk->hb && (in->flags & SIM_IF_VOLATILE);
}

int sim_hook_ld(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em) {
  uint64_t ad[SIM_WARP];
  int hb = hb_wants(wk, in);
  if (!hb && !wk->run->san_load) return sim_mem_ld_plain(wk, w, in, pc, em);
  lane_addresses(w, in, em, ad);
  int r = sim_mem_ld_plain(wk, w, in, pc, em);
  if (r == 0) mark_managed(wk->run, in->space, ad, em, in->size * in->vec, 0);
  if (r == 0 && (wk->run->san & SIM_SAN_INIT))
    r = check_read(wk, w, in, in->space, ad, em, in->size * in->vec);
  if (r == 0 && hb) sim_hb_access(wk, w, in, ad, em);
  return r;
}

int sim_hook_st(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em) {
  uint64_t ad[SIM_WARP];
  sim_watch_hit hit;
  int bytes = in->size * in->vec;
  if (!wk->run->san_store && !hb_wants(wk, in)) return sim_mem_st_plain(wk, w, in, pc, em);
  lane_addresses(w, in, em, ad);
  int watched = wk->run->nwatch && sim_watch_before(wk, in, ad, em, bytes, &hit);
  int r = sim_mem_st_plain(wk, w, in, pc, em);
  if (watched) sim_watch_after(wk, w, in, ad, em, NULL, NULL, &hit, r);
  if (r == 0) mark_written(wk, in->space, ad, em, bytes);
  if (r == 0) mark_managed(wk->run, in->space, ad, em, bytes, 1);
  if (r == 0 && hb_wants(wk, in)) sim_hb_access(wk, w, in, ad, em);
  return r;
}

/* An atomic reads before it writes: under the init check, one on a word nothing has written
 * (a counter the kernel forgot to zero) is reported like a load; but an exchange whose old value
 * nothing reads only stores (SIM_IF_ONLY_STORES, sim_mark.c), as clearing memory with
 * atomicExch(&s[i], 0) does, and counts as a write alone. */
int sim_hook_atom(sim_worker *wk, sim_warp *w, const sim_inst *in, int pc, uint32_t em) {
  uint64_t ad[SIM_WARP], b[SIM_WARP], c[SIM_WARP];
  sim_watch_hit hit;
  if (!wk->run->san_store && !wk->hb) return sim_mem_atom_plain(wk, w, in, pc, em);
  lane_addresses(w, in, em, ad);
  int watched = wk->run->nwatch && sim_watch_before(wk, in, ad, em, in->size, &hit);
  if (watched) { /* the atomic's result may overwrite its operand rows */
    const uint64_t *B = w->R + in->b * SIM_WARP;
    const uint64_t *C = w->R + (in->c >= 0 ? in->c : SIM_SR_ZERO) * SIM_WARP;
    memcpy(b, B, sizeof b);
    memcpy(c, C, sizeof c);
  }
  int r = sim_mem_atom_plain(wk, w, in, pc, em);
  if (watched) sim_watch_after(wk, w, in, ad, em, b, c, &hit, r);
  if (r == 0 && (wk->run->san & SIM_SAN_INIT) && !(in->flags & SIM_IF_ONLY_STORES))
    r = check_read(wk, w, in, in->space, ad, em, in->size);
  if (r == 0) mark_written(wk, in->space, ad, em, in->size);
  if (r == 0) mark_managed(wk->run, in->space, ad, em, in->size, 1);
  if (r == 0 && wk->hb) sim_hb_access(wk, w, in, ad, em);
  return r;
}

int sim_hook_lanes(sim_worker *wk, sim_warp *w, const sim_inst *in, int space,
                   const uint64_t *ad, uint32_t em, int bytes, int is_store) {
  mark_managed(wk->run, space, ad, em, bytes, is_store);
  if (is_store) {
    mark_written(wk, space, ad, em, bytes);
    return 0;
  }
  return wk->run->san & SIM_SAN_INIT ? check_read(wk, w, in, space, ad, em, bytes) : 0;
}

/* ---- the sync check ---- */

int sim_sync_partial(sim_worker *wk, sim_warp *w, sim_frame *t, int pc, uint32_t em) {
  const sim_inst *in = &wk->run->m->code[pc];
  t->pc = pc + 1;
  w->state = SIM_W_BAR;
  w->bar_pc = pc;
  w->bar_id = in->a >= 0 ? (int)(uint32_t)w->R[(size_t)in->a * SIM_WARP + __builtin_ctz(em)] : 0;
  w->bar_lanes = em;
  w->bar_part = 1;
  w->bar_named = 0;
  return SIM_W_BAR;
}

/* The block's threads by where they are once no warp can run. */
typedef struct sync_view {
  int pc;               /* the barrier named: where the lowest waiting warp waits */
  int other_pc;         /* another barrier some wait at, -1 none */
  unsigned arrived;     /* threads at pc */
  unsigned char *kind;  /* per thread: S_* */
} sync_view;

enum { S_ARRIVED, S_EXITED, S_PATH, S_ELSEWHERE };

/* Where lane l of a warp parked at a barrier with only some lanes goes on: the pc of the topmost
 * divergence frame under the running one that holds it. A lane whose path has returned waits
 * there on the kernel's exit path, not yet exited: S_EXITED tells the learner what the code
 * did. */
static int pending(const sim_run *run, const sim_warp *w, int l) {
  for (int f = w->sp - 2; f >= 0; f--)
    if (w->stack[f].mask >> l & 1) {
      int pc = w->stack[f].pc;
      return pc >= 0 && pc < run->m->ncode && sim_on_exit_path(&run->m->code[pc]) ? S_EXITED
                                                                                  : S_PATH;
    }
  return S_PATH;
}

/* Sorts every thread of the block into v->kind. */
static void sort_threads(const sim_worker *wk, sync_view *v) {
  const sim_run *run = wk->run;
  v->pc = -1;
  v->other_pc = -1;
  v->arrived = 0;
  for (int i = 0; i < run->nwarps; i++) {
    const sim_warp *w = &wk->warps[i];
    uint32_t at = w->state == SIM_W_BAR ? (w->bar_part ? w->bar_lanes : w->live) : 0;
    if (at && v->pc < 0) v->pc = w->bar_pc;
    int here = at && w->bar_pc == v->pc;
    if (at && !here && v->other_pc < 0) v->other_pc = w->bar_pc;
    for (int l = 0; l < SIM_WARP && i * SIM_WARP + l < run->nthreads; l++) {
      unsigned char k = !(w->live >> l & 1) ? S_EXITED
                      : !(at >> l & 1)      ? (unsigned char)pending(run, w, l)
                      : here                ? S_ARRIVED : S_ELSEWHERE;
      v->kind[i * SIM_WARP + l] = k;
      v->arrived += k == S_ARRIVED;
    }
  }
}

/* "; 16 exited before reaching it (threads (48,0,0), (49,0,0), (50,0,0) and 13 more)" for the
 * threads of kind k, appended to buf; nothing when there are none. */
static void add_group(const sim_run *run, const sync_view *v, int k, const char *what, char *buf,
                      size_t len) {
  unsigned n = 0, shown = 0;
  char list[160] = "";
  for (int t = 0; t < run->nthreads; t++) {
    if (v->kind[t] != k) continue;
    if (shown < 3) {
      char xyz[40];
      thread_xyz(run, (unsigned)t, xyz, sizeof xyz);
      size_t at = strlen(list);
      snprintf(list + at, sizeof list - at, "%s%s", shown ? ", " : "", xyz);
      shown++;
    }
    n++;
  }
  if (!n) return;
  size_t at = strlen(buf);
  snprintf(buf + at, len - at, "; %u %s (thread%s %s%s", n, what, n == 1 ? "" : "s", list,
           n > shown ? "" : ")");
  if (n > shown) {
    at = strlen(buf);
    snprintf(buf + at, len - at, " and %u more)", n - shown);
  }
}

/* The report: what synccheck calls a barrier error, with counts and the first few threads of each
 * kind that did not arrive, at the barrier's line. */
#if defined(__GNUC__)
__attribute__((cold, noinline))
#endif
static int report_sync(sim_worker *wk, const sync_view *v) {
  const sim_run *run = wk->run;
  const sim_inst *bar = &run->m->code[v->pc];
  char src[300], other[300] = "", groups[700] = "", elsewhere[400];
  sim_srcline(run->m, bar, src, sizeof src);
  if (v->other_pc >= 0) sim_srcline(run->m, &run->m->code[v->other_pc], other, sizeof other);
  snprintf(elsewhere, sizeof elsewhere, "wait at another __syncthreads(), at %s", other);
  add_group(run, v, S_EXITED, "exited before reaching it", groups, sizeof groups);
  add_group(run, v, S_PATH, "are on another path of a branch", groups, sizeof groups);
  add_group(run, v, S_ELSEWHERE, elsewhere, groups, sizeof groups);
  const sim_warp *w = NULL;
  for (int i = 0; i < run->nwarps && !w; i++)
    if (wk->warps[i].state == SIM_W_BAR && wk->warps[i].bar_pc == v->pc) w = &wk->warps[i];
  int lane = __builtin_ctz(w->bar_part ? w->bar_lanes : w->live);
  return sim_fail(wk, w, lane, bar,
                  "barrier error (sync check): the __syncthreads() at %s was reached by %u of the "
                  "%d threads of block (%u,%u,%u)%s. Every thread of a block must reach the same "
                  "__syncthreads(): on a GPU the block hangs or goes on before the others have "
                  "written (compute-sanitizer's synccheck reports this as a barrier error)",
                  src, v->arrived, run->nthreads, wk->bx, wk->by, wk->bz, groups);
}

int sim_sync_check(sim_worker *wk) {
  sync_view v;
  unsigned char kinds[1024]; /* threads per block are at most 1024 (sim_launch checks) */
  v.kind = (size_t)wk->run->nthreads <= sizeof kinds ? kinds : malloc((size_t)wk->run->nthreads);
  if (!v.kind) return sim_fail(wk, &wk->warps[0], 0, &wk->run->m->code[0], "out of memory");
  sort_threads(wk, &v);
  int r = v.pc >= 0 && v.arrived < (unsigned)wk->run->nthreads ? report_sync(wk, &v) : 0;
  if (v.kind != kinds) free(v.kind);
  return r;
}
