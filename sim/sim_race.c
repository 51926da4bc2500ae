/* sim_race.c: shared-memory race detection. Finds two accesses to one shared byte, at least one
 * a write, by two threads of a block with nothing between them that orders memory: a
 * __syncthreads() (bar.sync / barrier.sync) for threads of different warps, a __syncthreads() or
 * a __syncwarp() (bar.warp.sync) for two lanes of one warp.
 *
 * Stance: the simulator runs a warp's 32 lanes in lockstep, so a warp-synchronous reduction with
 * no __syncwarp() gives the right sum here; since Volta a GPU schedules the lanes of a warp
 * independently and makes no such promise, so the same kernel is wrong on an H200. The checker
 * therefore treats lanes of one warp as unordered unless a warp barrier separates them, which is
 * what the PTX memory model guarantees and nothing more: bar.warp.sync and bar.sync order the
 * memory of the threads taking part; shfl.sync and vote.sync exchange registers and order no
 * memory (the CUDA programming guide says so); a fence (membar / fence, __threadfence_block)
 * orders one thread's own accesses and synchronises two threads only through a flag that the
 * other thread observes, a protocol this checker does not model, so accesses separated only by
 * fences are reported too. Atomics do not race each other; an atomic and a plain write by two
 * unordered threads do, with one exception: a plain read and an atomicCAS are let pass, although
 * the memory model calls them a race. The compare-and-swap loop of the CUDA programming guide
 * (read the word, then atomicCAS until it holds) does exactly that, correctly, and a checker that
 * flags the standard idiom teaches learners to ignore it. A plain read of a word that atomicAdd
 * and friends update (a histogram read before the barrier) is still reported.
 *
 * Each shared byte has a shadow (sim_shadow) valid for one barrier interval (the worker's epoch,
 * advanced at every __syncthreads() and block start, which forgets all earlier accesses at once).
 * It keeps the last writer, the lanes of one warp that read since, and one reader of another
 * warp. It is precise for the races the lessons teach, and can miss one that needs a longer
 * history: a write that races only with an atomic two writes back, or a __syncwarp(mask) whose
 * mask leaves out one of the two lanes (any __syncwarp() counts as ordering the whole warp).
 *
 * Warnings (SIM_RACE_WARN, the REPL's prompt): a race does not stop the launch; the first one is
 * kept as a warning and the others counted, and the lanes of one warp are held to what the
 * legacy warp-synchronous code of the CUDA samples assumed: that a warp runs in lockstep. Two
 * accesses by lanes of one warp are then ordered when they were made by different instructions
 * and either the earlier lane takes part in the later instruction, or the whole warp ran a
 * divergent branch between the two (the `if (t < s)` of a reduction loop): in the simulator's
 * divergence model, as in a converged warp on a GPU, the earlier instruction was over for every
 * lane by then. Left to warn: two lanes writing one word in one instruction, and accesses from
 * two paths of one divergent branch. To tell instructions apart, the __syncwarp() count (wsync)
 * also counts the warp's shared accesses under warnings; `synced` keeps its value at the latest
 * __syncwarp() and `conv` at the latest branch the whole warp ran (sim_exec.c); the cells stay
 * as they are. A failure (SIM_RACE_FAIL, lesson checks) keeps the strict rule above, since the
 * lessons teach __syncwarp().
 *
 * Cost: only shared accesses pay, per lane: whole-warp ones still take fast_access (sim_mem.c),
 * which calls in here once its bounds checks pass; a word is one cell (see access_lane); a lane
 * that loads the word the lane before it loaded joins it for an OR (check_words). `make bench`
 * measures the cost on a tiled matmul and a shared-memory reduction (sim_race_overhead_*). With
 * checking off, what remains on the hot path is one branch in fast_access and the bar.warp.sync
 * counter. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sim_exec.h"

enum { K_LOAD, K_STORE, K_ATOM };

/* ---- naming ---- */

/* The shared variable holding offset a of the kernel's shared memory, with the offset into it;
 * NULL when a lies in no declared variable (dynamic shared memory, or padding). */
static const sim_var *shared_var(const sim_run *run, uint64_t a, uint64_t *off) {
  const sim_module *m = run->m;
  for (int i = 0; i < m->nvars; i++) {
    const sim_var *v = &m->vars[i];
    if (v->space != SIM_SP_SHARED || v->is_extern) continue;
    if (v->func >= 0 && v->func != run->k->func) continue;
    if (a >= v->addr && a - v->addr < v->size) {
      *off = a - v->addr;
      return v;
    }
  }
  return NULL;
}

/* The first extern __shared__ declaration: the name of the dynamic shared memory. */
static const sim_var *dynamic_var(const sim_run *run) {
  const sim_module *m = run->m;
  for (int i = 0; i < m->nvars; i++)
    if (m->vars[i].space == SIM_SP_SHARED && m->vars[i].is_extern) return &m->vars[i];
  return NULL;
}

/* "__shared__ tile" or, for a variable declared in a device function other than the kernel,
 * "__shared__ tile (declared in warpReduce)". */
static void var_words(const sim_run *run, const char *mangled, char *buf, size_t len) {
  char name[128], fn[128], kname[128], kfn[8];
  sim_demangle(mangled, name, sizeof name, fn, sizeof fn);
  sim_demangle(run->f->name, kname, sizeof kname, kfn, sizeof kfn);
  if (fn[0] && strcmp(fn, kname) != 0)
    snprintf(buf, len, "__shared__ %s (declared in %s)", name, fn);
  else
    snprintf(buf, len, "__shared__ %s", name);
}

/* NVRTC declares every shared array as bytes (.b8) aligned to its element type, so the element
 * size is known only when the access agrees with that alignment (a float of a float array, not
 * a float of a float4 array or a byte of an int array). Dynamic shared memory is always aligned
 * to 16 whatever its type, so there the access's own size is taken. Otherwise only the byte
 * offset is given, rather than an element number that is not the source's. Writes "element 3 of
 * __shared__ tile (byte offset 12)" or "byte offset 12 of __shared__ v" for shared offset a. */
void sim_shared_name(const sim_run *run, uint64_t a, int elem, char *buf, size_t len) {
  uint64_t off = 0, dyn = (run->k->static_shared + 15) / 16 * 16;
  const sim_var *v = shared_var(run, a, &off);
  char words[300];
  if (!v && run->dyn_shared && a >= dyn && (v = dynamic_var(run)) != NULL) off = a - dyn;
  if (!v) {
    snprintf(buf, len, "shared address 0x%llx", (unsigned long long)a);
    return;
  }
  var_words(run, v->name, words, sizeof words);
  int typed = v->is_extern || v->align == (size_t)elem;
  if (typed && elem > 0 && off % (uint64_t)elem == 0)
    snprintf(buf, len, "element %llu of %s (byte offset %llu)",
             (unsigned long long)(off / (uint64_t)elem), words, (unsigned long long)off);
  else
    snprintf(buf, len, "byte offset %llu of %s", (unsigned long long)off, words);
}

/* "thread (5,0,0) (warp 0, lane 5)" for thread t of the block. */
static void thread_words(const sim_run *run, int t, char *buf, size_t len) {
  unsigned bx = run->block.x, by = run->block.y, u = (unsigned)t;
  snprintf(buf, len, "thread (%u,%u,%u) (warp %d, lane %d)", u % bx, (u / bx) % by, u / (bx * by),
           t >> 5, t & 31);
}

/* sim_warn with sim_fail's shape, for report(): the launch goes on. */
#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static int warn_race(sim_worker *wk, const sim_warp *w, int lane, const sim_inst *in,
                     const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  sim_warn(wk, w, lane, in, "%s", msg);
  return 0;
}

static const char *verb(int kind, int past) {
  if (kind == K_ATOM) return past ? "updated atomically" : "updates atomically";
  if (kind == K_STORE) return past ? "wrote" : "writes";
  return past ? "read" : "reads";
}

/* Reports that lane `lane` of w, doing `kind` at shared offset a, races with thread `other`'s
 * earlier access of kind okind at instruction opc. Says what to add: __syncwarp() for two lanes
 * of one warp (or __syncthreads(), which also serves), __syncthreads() for two warps. Returns
 * -1 (the launch has failed), or 0 under SIM_RACE_WARN, where only the first race of a launch is
 * worded and the rest are counted. */
#if defined(__GNUC__)
__attribute__((cold, noinline))
#endif
static int report(sim_worker *wk, sim_warp *w, int lane, const sim_inst *in, int kind, uint64_t a,
                  int other, int okind, int opc) {
  const sim_run *run = wk->run;
  if (run->race_warn && atomic_fetch_add(&wk->run->warnings, 1) > 0) return 0;
  int (*say)(sim_worker *, const sim_warp *, int, const sim_inst *, const char *, ...) =
      run->race_warn ? warn_race : sim_fail;
  char what[400], me[80], them[80], here[160], there[160];
  sim_shared_name(run, a, in->size, what, sizeof what);
  thread_words(run, w->index * SIM_WARP + lane, me, sizeof me);
  thread_words(run, other, them, sizeof them);
  sim_srcline(run->m, in, here, sizeof here);
  sim_srcline(run->m, &run->m->code[opc], there, sizeof there);
  if (other >> 5 == w->index)
    return say(wk, w, lane, in,
                    "shared-memory race between lanes of one warp: %s %s %s at %s, which %s %s at "
                    "%s with no __syncwarp() between them. The lanes of a warp do not run in "
                    "lockstep on Volta and later GPUs (the H200 among them), so the result "
                    "depends on timing: add __syncwarp() between the two",
                    me, verb(kind, 0), what, here, them, verb(okind, 1), there);
  return say(wk, w, lane, in,
                  "shared-memory race between warps: %s %s %s at %s, which %s %s at %s with no "
                  "__syncthreads() between them: add __syncthreads() between the two", me,
                  verb(kind, 0), what, here, them, verb(okind, 1), there);
}

/* ---- the shadow ---- */

/* Whether counter value x came before y, the counters being free to wrap. */
static inline int before(uint32_t x, uint32_t y) { return (int32_t)(x - y) < 0; }

/* Under warnings: whether an access of this warp made when its wsync stood at `sync` is ordered
 * before all it does now by a __syncwarp() or by a branch the whole warp ran since. */
static inline int warp_ordered(const sim_warp *w, uint32_t sync) {
  return before(sync, w->synced) || !before(w->conv, sync);
}

/* Two accesses conflict unless a barrier orders them: a __syncthreads() (a new epoch, checked
 * by the caller) for any two threads, a __syncwarp() for two lanes of one warp, or, under
 * warnings, lockstep (see the top of the file): the other lane runs this instruction too (em)
 * and its access was an earlier instruction's. sync is the earlier access's warp's wsync at the
 * time. */
static inline int unordered(const sim_worker *wk, const sim_warp *w, int other, uint32_t sync,
                            uint32_t em) {
  if (other >> 5 != w->index) return 1;
  if (!wk->run->race_warn) return sync == w->wsync;
  if (warp_ordered(w, sync)) return 0;
  return sync == w->wsync || !(em >> (other & 31) & 1);
}

/* Whether the reads a cell's reader group holds (from rsync on) are ordered before everything
 * the warp does now by a __syncwarp(), and can be forgotten. */
static inline int reads_synced(const sim_worker *wk, const sim_shadow *s, const sim_warp *w) {
  return wk->run->race_warn ? warp_ordered(w, s->rsync) : s->rsync != w->wsync;
}

/* A prior read by a thread other than t that this write (or atomic) races with: -1 none, else
 * the thread, with its instruction in *pc. Under warnings a read by a lane that runs this
 * instruction too was made in lockstep before it (a read and a write are never one instruction
 * here: note_read sees plain loads only). */
static inline int racing_reader(const sim_worker *wk, const sim_shadow *s, const sim_warp *w, int t,
                                uint32_t em, int32_t *pc) {
  const sim_shadow_pc *p = &wk->shadow_pc[s - wk->shadow];
  if (s->rwarp < 0) return -1;
  if (s->xreader >= 0 && s->xreader >> 5 != w->index) {
    *pc = p->xpc;
    return s->xreader;
  }
  int first = s->rwarp * SIM_WARP + s->rfirst;
  if (s->rwarp != w->index) {
    *pc = p->rpc;
    return first;
  }
  uint32_t others = s->rlanes & ~(1u << (t & 31));
  if (wk->run->race_warn) others &= ~em;
  if (!others || reads_synced(wk, s, w)) return -1;
  *pc = p->rpc;
  return others >> s->rfirst & 1 ? first : s->rwarp * SIM_WARP + __builtin_ctz(others);
}

static inline void note_read(const sim_worker *wk, sim_shadow *s, const sim_warp *w, int t,
                             int pc) {
  int lane = t & 31;
  if (s->rwarp < 0 || (s->rwarp == w->index && reads_synced(wk, s, w))) {
    s->rwarp = (int16_t)w->index;
    s->rlanes = 1u << lane;
    s->rsync = w->wsync;
    s->rfirst = (uint8_t)lane;
    wk->shadow_pc[s - wk->shadow].rpc = pc;
  } else if (s->rwarp == w->index) {
    s->rlanes |= 1u << lane;
  } else if (s->xreader < 0) {
    s->xreader = (int16_t)t;
    wk->shadow_pc[s - wk->shadow].xpc = pc;
  }
}

/* A cell left from an earlier barrier interval is emptied: every access in it is ordered
 * before everything now. */
static inline void freshen(sim_shadow *s, uint32_t epoch) {
  if (s->epoch == epoch) return;
  s->epoch = epoch;
  s->writer = s->rwarp = s->xreader = -1;
  s->rlanes = 0;
  s->flags = 0;
}

/* Checks and records thread t's access to one shadow cell. Returns 0, or -1 with the race
 * reported. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int access_cell(sim_worker *wk, sim_warp *w, const sim_inst *in, int lane,
                              uint64_t a, sim_shadow *s, int kind, int pc, uint32_t em) {
  int t = w->index * SIM_WARP + lane;
  freshen(s, wk->epoch);
  int atomic = s->flags & SIM_SH_ATOMIC, cas = kind == K_ATOM && in->sub == SIM_ATOM_CAS;
  int exempt = atomic && (kind == K_ATOM || (kind == K_LOAD && (s->flags & SIM_SH_CAS)));
  int raced = 0; /* reported (under warnings, where the access is then recorded as usual) */
  if (s->writer >= 0 && s->writer != t && !exempt && unordered(wk, w, s->writer, s->wsync, em)) {
    if (report(wk, w, lane, in, kind, a, s->writer, atomic ? K_ATOM : K_STORE,
               wk->shadow_pc[s - wk->shadow].wpc) < 0)
      return -1;
    raced = 1;
  }
  if (kind == K_LOAD) {
    note_read(wk, s, w, t, pc);
    return 0;
  }
  int32_t rpc = 0;
  int r = cas || raced ? -1 : racing_reader(wk, s, w, t, em, &rpc);
  if (r >= 0 && report(wk, w, lane, in, kind, a, r, K_LOAD, rpc) < 0) return -1;
  s->writer = (int16_t)t; /* every earlier access is ordered before this one: they are forgotten */
  s->wsync = w->wsync;
  wk->shadow_pc[s - wk->shadow].wpc = pc;
  s->flags = (uint8_t)((s->flags & SIM_SH_SPLIT) | (kind == K_ATOM ? SIM_SH_ATOMIC : 0) |
                       (cas ? SIM_SH_CAS : 0));
  s->rwarp = s->xreader = -1;
  s->rlanes = 0;
  return 0;
}

/* A 4-byte word is tracked in one cell (its first byte's) until an access of 1 or 2 bytes
 * touches it in the current interval; then it is split: its state is copied to the cells of
 * its other bytes, and every access to it goes byte by byte until the next barrier. Words are
 * what kernels almost always use, and a quarter of the cells is a quarter of the time. The cells
 * lie in four planes, one per byte of a word (cell()), so the cells of consecutive words are
 * adjacent: a tile's shadow then fits in the host's L1 cache, which byte order did not. */
static inline sim_shadow *cell(const sim_worker *wk, uint64_t byte) {
  return &wk->shadow[(size_t)(byte & 3) * wk->shadow_plane + (size_t)(byte >> 2)];
}

static inline sim_shadow *split_word(sim_worker *wk, uint64_t word) {
  sim_shadow *h = cell(wk, word);
  freshen(h, wk->epoch);
  if (!(h->flags & SIM_SH_SPLIT)) {
    h->flags |= SIM_SH_SPLIT;
    for (int j = 1; j < 4; j++) {
      sim_shadow *c = cell(wk, word + (uint64_t)j);
      *c = *h;
      wk->shadow_pc[c - wk->shadow] = wk->shadow_pc[h - wk->shadow];
    }
  }
  return h;
}

/* One lane's access of `bytes` bytes at a. */
static int access_lane(sim_worker *wk, sim_warp *w, const sim_inst *in, int lane, uint64_t a,
                       int bytes, int kind, int pc, uint32_t em) {
  if (!((a | (uint64_t)bytes) & 3)) {
    for (int k = 0; k < bytes; k += 4) {
      uint64_t word = a + (uint64_t)k;
      sim_shadow *s = cell(wk, word);
      freshen(s, wk->epoch);
      int cells = s->flags & SIM_SH_SPLIT ? 4 : 1;
      for (int j = 0; j < cells; j++)
        if (access_cell(wk, w, in, lane, a, cell(wk, word + (uint64_t)j), kind, pc, em) < 0)
          return -1;
    }
    return 0;
  }
  for (int k = 0; k < bytes; k++) {
    uint64_t b = a + (uint64_t)k;
    split_word(wk, b & ~(uint64_t)3);
    if (access_cell(wk, w, in, lane, a, cell(wk, b), kind, pc, em) < 0) return -1;
  }
  return 0;
}

/* The common case, one aligned word per lane (a float or an int), without access_lane's loops.
 * A lane that loads the word the lane before it loaded (a broadcast, as of A's element in a
 * tiled matmul) only joins the readers when the word has no writer it could race with: the
 * previous lane's full check has just made the cell's readers this warp's. */
static int check_words(sim_worker *wk, sim_warp *w, const sim_inst *in, const uint64_t *ad,
                       uint32_t em, int kind, int pc) {
  sim_shadow *prev = NULL; /* the previous lane's cell, when a load of it may simply join */
  uint64_t prev_a = ~0ull;
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm);
    uint64_t a = ad[l];
    if (prev && a == prev_a) {
      prev->rlanes |= 1u << l;
      continue;
    }
    sim_shadow *s = cell(wk, a);
    freshen(s, wk->epoch);
    prev = NULL;
    if (s->flags & SIM_SH_SPLIT) {
      if (access_lane(wk, w, in, l, a, 4, kind, pc, em) < 0) return -1;
      continue;
    }
    if (access_cell(wk, w, in, l, a, s, kind, pc, em) < 0) return -1;
    if (kind == K_LOAD && s->rwarp == w->index &&
        (s->writer < 0 || !unordered(wk, w, s->writer, s->wsync, em))) {
      prev = s;
      prev_a = a;
    }
  }
  return 0;
}

int sim_race_check(sim_worker *wk, sim_warp *w, const sim_inst *in, const uint64_t *ad,
                   uint32_t em, int bytes, int kind) {
  int pc = (int)(in - wk->run->m->code);
  if (wk->run->race_warn) w->wsync++; /* tells this instruction's accesses from earlier ones */
  if (bytes == 4) return check_words(wk, w, in, ad, em, kind, pc);
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm);
    if (access_lane(wk, w, in, l, ad[l], bytes, kind, pc, em) < 0) return -1;
  }
  return 0;
}
