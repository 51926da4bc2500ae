/* sim_race.c: shared-memory race detection. Finds two accesses to one shared byte, at least one
 * a write, by two threads of a block with nothing between them that orders memory: for threads
 * of different warps a __syncthreads() (bar.sync / barrier.sync) or a release that the later
 * one's warp acquired (sim_hb.c), for two lanes of one warp a __syncthreads() or a __syncwarp()
 * (bar.warp.sync).
 *
 * Stance: the simulator runs a warp's 32 lanes in lockstep, so a warp-synchronous reduction with
 * no __syncwarp() gives the right sum here; since Volta a GPU schedules the lanes of a warp
 * independently and makes no such promise, so the same kernel is wrong on an H200. The checker
 * therefore treats lanes of one warp as unordered unless a warp barrier separates them, which is
 * what the PTX memory model guarantees and nothing more: bar.warp.sync and bar.sync order the
 * memory of the threads taking part; shfl.sync and vote.sync exchange registers and order no
 * memory (the CUDA programming guide says so); a fence (membar / fence, __threadfence_block)
 * orders one thread's own accesses and synchronises two threads only through a flag that the
 * other thread observes: release and acquire, which sim_hb.c models for the kernels that have an
 * acquire, a release or a fence, ordering warps by vector clocks (a clock per warp, stamped on
 * every access in sim_shadow_clk). Accesses that nothing but fences separate are reported, and
 * so are two lanes of one warp that only a release and an acquire order: a warp's lanes keep
 * __syncwarp(), which a lane's release or acquire needs to serve the others.
 *
 * Strong accesses do not race each other. The PTX memory model calls two accesses morally strong
 * when both are atomics or .volatile, .relaxed, .acquire or .release loads and stores whose scope
 * holds both threads (every scope holds a block, and .volatile counts as .relaxed.sys), and such
 * a pair is never a data race: only a plain access can race. Between warps the checker follows
 * it (a flag that one warp sets and another polls, volatile or atomic, is no race). Between lanes
 * of one warp it lets pass only a C++ atomic's pair (atomics, and .relaxed, .acquire or .release
 * loads and stores) and keeps .volatile ones racing: the warp-synchronous reductions of the old
 * CUDA samples read and write a volatile array with no __syncwarp(), which the model calls free
 * of data races, yet their sum is wrong since Volta because it counts on the lanes running in
 * order, and what the lessons teach there is __syncwarp(). A plain access and a strong one by two
 * unordered threads race, with one exception: a plain read and an atomicCAS are let pass,
 * although the memory model calls them a race. The compare-and-swap loop of the CUDA
 * programming guide (read the word, then atomicCAS until it holds) does exactly that, correctly,
 * and a checker that flags the standard idiom teaches learners to ignore it. A plain read of a
 * word that atomicAdd and friends update (a histogram read before the barrier) is still
 * reported.
 *
 * Each shared byte has a shadow (sim_shadow) valid for one barrier interval (the worker's epoch,
 * advanced at every __syncthreads() and block start, which forgets all earlier accesses at once;
 * also where a barrier with a thread count completes, which orders only the warps that took part:
 * sim_barrier.c says why that errs towards missing a race rather than reporting a false one).
 * It keeps the last writer, the lanes of one warp that read since, and one reader of another
 * warp, each with how strong its access was (a plain read of another warp displaces a strong
 * one: only it can race with a strong write). It is precise for the races the lessons teach, and
 * can miss one that needs a longer history: a write that races only with an atomic two writes
 * back, or a __syncwarp(mask) whose mask leaves out one of the two lanes (any __syncwarp()
 * counts as ordering the whole warp).
 *
 * Warnings (SIM_RACE_WARN, the REPL's prompt): a race does not stop the launch; the first one is
 * kept as a warning and the others counted, and the lanes of one warp are held to what the
 * legacy warp-synchronous code of the CUDA samples assumed: that a warp runs in lockstep. Two
 * accesses by lanes of one warp are then ordered when they were made by different instructions
 * and either the earlier lane takes part in the later instruction, or the whole warp ran a
 * divergent branch between the two (the `if (t < s)` of a reduction loop): in the simulator's
 * divergence model, as in a converged warp on a GPU, the earlier instruction was over for every
 * lane by then. That code also declared its array volatile, and needs to: without it the compiler
 * may read a step's operand before the lane that writes it has, or keep a lane's sum in a register
 * past the step that another lane reads it in, so a read and a write by two lanes that lockstep
 * alone orders, neither volatile, still warn (report_lockstep: a read after the write as a write
 * after the read). Left to warn as well: two lanes writing one word in one instruction, and
 * accesses from two paths of one divergent branch. To tell instructions apart, the __syncwarp()
 * count (wsync) also counts the warp's shared accesses under warnings; `synced` keeps its value
 * at the latest __syncwarp() and `conv` at the latest branch the whole warp ran (sim_exec.c);
 * the cells stay as they are. A failure (SIM_RACE_FAIL, lesson checks) keeps the strict rule
 * above, since the lessons teach __syncwarp().
 *
 * Cost: only shared accesses pay. Most are logged and never checked lane by lane (the put-off
 * checks at the end of this file), a whole-warp load in a few stores made inline in fast_access
 * (sim_race_log_load, sim_run.h); the others are checked per lane: a word is one cell (see
 * access_lane), and a lane that loads the word the lane before it loaded joins it for an OR
 * (check_words). `make bench` measures the cost on a tiled matmul and a shared-memory reduction
 * (sim_race_overhead_*, and with the timing model sim_checks_overhead_*). With checking off, what
 * remains on the hot path is one branch in fast_access and the bar.warp.sync counter. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_run.h"

enum { K_LOAD, K_STORE, K_ATOM };

/* How strong an access is, in the PTX memory model's sense: plain (weak), .volatile (a relaxed
 * access the compiler keeps, as legacy warp-synchronous code uses it), or a C++ atomic's: an
 * atomic, or a .relaxed, .acquire or .release load or store. Ordered so that the weaker of two
 * is their minimum. */
enum { L_PLAIN, L_VOLATILE, L_ATOMIC };

static inline int level_of(const sim_inst *in, int kind) {
  if (kind == K_ATOM) return L_ATOMIC;
  if (in->op != SIM_OP_LD && in->op != SIM_OP_ST) return L_PLAIN;
  if (!(in->flags & SIM_IF_VOLATILE)) return L_PLAIN;
  return in->flags & SIM_IF_SEM ? L_ATOMIC : L_VOLATILE;
}

/* Whether two unordered accesses of strengths a and b let each other be: between warps any two
 * strong ones (the memory model's morally strong pair, which never races), between lanes of one
 * warp only a C++ atomic's two, since the volatile warp-synchronous idiom races there (see the
 * top of the file). */
static inline int strong_pair(int a, int b, int same_warp) {
  return (a < b ? a : b) >= (same_warp ? L_ATOMIC : L_VOLATILE);
}

static inline int wlevel(const sim_shadow *s) { return s->flags >> SIM_SH_WLEVEL & 3; }
static inline int glevel(const sim_shadow *s) { return s->flags >> SIM_SH_GLEVEL & 3; }

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

/* Words a warning (sim_warn_at): the launch goes on. It yields to any other when `yields` is
 * set. */
static void vwarn(sim_worker *wk, const sim_warp *w, int lane, const sim_inst *in, int yields,
                  const char *fmt, va_list ap) {
  char msg[768];
  vsnprintf(msg, sizeof msg, fmt, ap);
  sim_warn_at(wk, w, lane, in, yields, msg);
}

#if defined(__GNUC__)
__attribute__((format(printf, 6, 7)))
#endif
static int warn_race(sim_worker *wk, const sim_warp *w, int lane, const sim_inst *in, int yields,
                     const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vwarn(wk, w, lane, in, yields, fmt, ap);
  va_end(ap);
  return 0;
}

/* A warning that yields to none, with sim_fail's shape, for report(). */
#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static int warn_first(sim_worker *wk, const sim_warp *w, int lane, const sim_inst *in,
                      const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vwarn(wk, w, lane, in, 0, fmt, ap);
  va_end(ap);
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
/* The words a race's message is made of: the shared element, the two threads, the two lines. */
typedef struct race_words {
  char what[400], me[80], them[80], here[160], there[160];
} race_words;

static void words_of(const sim_run *run, const sim_warp *w, int lane, const sim_inst *in,
                     uint64_t a, int other, int opc, race_words *t) {
  sim_shared_name(run, a, in->size, t->what, sizeof t->what);
  thread_words(run, w->index * SIM_WARP + lane, t->me, sizeof t->me);
  thread_words(run, other, t->them, sizeof t->them);
  sim_srcline(run->m, in, t->here, sizeof t->here);
  sim_srcline(run->m, &run->m->code[opc], t->there, sizeof t->there);
}

/* Counts a race found under warnings, and whether it can be the one the launch words (sim_warn_at
 * says which is): on one worker the first, with several one of a block no later in hand-out
 * order than the one worded so far, and in either case one that does not yield while the one
 * worded so far does; the others are not worded at all. */
static int warning_kept(sim_worker *wk, int yields) {
  sim_run *run = wk->run;
  unsigned long long before = atomic_fetch_add(&run->warnings, 1);
  int displaces = yields < atomic_load_explicit(&run->warn_yields, memory_order_relaxed);
  if (run->nw <= 1) return before == 0 || displaces;
  return displaces ||
         wk->slots[wk->cur].nth < atomic_load_explicit(&run->warn_nth, memory_order_relaxed);
}

#if defined(__GNUC__)
__attribute__((cold, noinline))
#endif
static int report(sim_worker *wk, sim_warp *w, int lane, const sim_inst *in, int kind, uint64_t a,
                  int other, int okind, int opc) {
  const sim_run *run = wk->run;
  if (run->race_warn && !warning_kept(wk, 0)) return 0;
  int (*say)(sim_worker *, const sim_warp *, int, const sim_inst *, const char *, ...) =
      run->race_warn ? warn_first : sim_fail;
  race_words t;
  words_of(run, w, lane, in, a, other, opc, &t);
  if (other >> 5 == w->index)
    return say(wk, w, lane, in,
                    "shared-memory race between lanes of one warp: %s %s %s at %s, which %s %s at "
                    "%s with no __syncwarp() between them. The lanes of a warp do not run in "
                    "lockstep on Volta and later GPUs (the H200 among them), so the result "
                    "depends on timing: add __syncwarp() between the two",
                    t.me, verb(kind, 0), t.what, t.here, t.them, verb(okind, 1), t.there);
  if (wk->hb) /* the kernel orders memory by release and acquire too: say how that would */
    return say(wk, w, lane, in,
               "shared-memory race between warps: %s %s %s at %s, which %s %s at %s with no "
               "__syncthreads() between them, nor a release after the earlier access that the "
               "later one's warp acquired: add __syncthreads() between the two, or release after "
               "the earlier access (a release store or atomic, or __threadfence_block() and then "
               "the flag's store) and acquire before the later one (an acquire load of the "
               "flag, or its load and then __threadfence_block())", t.me, verb(kind, 0), t.what,
               t.here, t.them, verb(okind, 1), t.there);
  return say(wk, w, lane, in,
                  "shared-memory race between warps: %s %s %s at %s, which %s %s at %s with no "
                  "__syncthreads() between them: add __syncthreads() between the two", t.me,
                  verb(kind, 0), t.what, t.here, t.them, verb(okind, 1), t.there);
}

/* Under warnings: lane `lane` of w makes an access of kind `kind` (a load or a store) to shared
 * offset a, which `other`, a lane of the same warp, accessed the other way (okind) at instruction
 * opc with nothing but lockstep between them, and neither access is volatile. Legacy
 * warp-synchronous code relies on lockstep and volatile together; without volatile the compiler
 * may read every step's operand before any lane has written its sum, or keep a sum in a register
 * past the step that another lane reads it in (a warp-synchronous reduction without volatile
 * gives a wrong sum even where the lanes do run in lockstep), so such a pair is told of at the
 * prompt too, a read after the write as a write after the read, where a volatile one is let
 * pass. The read after the write yields to any other race of the launch: it comes first in
 * most code that has one (each level of a tree sum reads what another lane wrote at the level
 * before), and a race between warps, or two lanes writing one word, is the surer bug to name. */
#if defined(__GNUC__)
__attribute__((cold, noinline))
#endif
static int report_lockstep(sim_worker *wk, sim_warp *w, int lane, const sim_inst *in, int kind,
                           uint64_t a, int other, int okind, int opc) {
  const sim_run *run = wk->run;
  int yields = kind == K_LOAD;
  if (!warning_kept(wk, yields)) return 0;
  race_words t;
  words_of(run, w, lane, in, a, other, opc, &t);
  return warn_race(wk, w, lane, in, yields,
                   "shared-memory race between lanes of one warp: %s %s %s at %s, which %s %s at "
                   "%s with no __syncwarp() between them, and the array is not volatile. Code "
                   "that counts on a warp's lanes running in lockstep is wrong without volatile "
                   "even where they do: the compiler may read a value before the lane that "
                   "writes it has (a warp-synchronous reduction without volatile sums wrong so). "
                   "Add __syncwarp() between the two (or make the array volatile)",
                   t.me, verb(kind, 0), t.what, t.here, t.them, verb(okind, 1), t.there);
}

/* ---- the shadow ---- */

/* The clocks of cell s's accesses (sim_shadow_clk), when the launch runs the release/acquire
 * model. */
static inline sim_shadow_clk *clocks(const sim_worker *wk, const sim_shadow *s) {
  return &wk->shadow_clk[s - wk->shadow];
}

/* Whether thread `other`'s access at clock clk, of another warp than w's, happened before what
 * lane `lane` of w does now through a release that w acquired (sim_hb.c). Never without the
 * release/acquire model: then only a __syncthreads() orders two warps. */
static inline int released(const sim_worker *wk, const sim_warp *w, int lane, int other,
                           uint32_t clk) {
  return wk->hb && sim_hb_knows(wk, w, lane, other, clk);
}

/* The same for every read of cell s's reader group, of another warp than w's. */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static int group_released(const sim_worker *wk, const sim_warp *w, int lane, const sim_shadow *s) {
  if (!wk->hb) return 0;
  uint32_t clk = clocks(wk, s)->r;
  for (uint32_t mm = s->rlanes; mm; mm &= mm - 1)
    if (!sim_hb_knows(wk, w, lane, s->rwarp * SIM_WARP + __builtin_ctz(mm), clk)) return 0;
  return 1;
}

/* Whether cell s's write conflicts with what lane `lane` of w does now. Two accesses conflict
 * unless something orders them: a __syncthreads() (a new epoch, checked by the caller) for any
 * two threads; for two warps a release the later one acquired; for two lanes of one warp a
 * __syncwarp(), or, under warnings, lockstep (see the top of the file): the other lane runs this
 * instruction too (em) and its access was an earlier instruction's. */
static inline int unordered(const sim_worker *wk, const sim_warp *w, int lane, const sim_shadow *s,
                            uint32_t em) {
  int other = s->writer;
  uint32_t sync = s->wsync;
  if (other >> 5 != w->index) return !released(wk, w, lane, other, wk->hb ? clocks(wk, s)->w : 0);
  if (!wk->run->race_warn) return sync == w->wsync;
  if (sim_warp_ordered(w, sync)) return 0;
  return sync == w->wsync || !(em >> (other & 31) & 1);
}

/* Whether the reads a cell's reader group holds (from rsync on) are ordered before everything
 * the warp does now by a __syncwarp(), and can be forgotten. */
static inline int reads_synced(const sim_worker *wk, const sim_shadow *s, const sim_warp *w) {
  return wk->run->race_warn ? sim_warp_ordered(w, s->rsync) : s->rsync != w->wsync;
}

/* A prior read by a thread other than t that this write (or atomic) races with: -1 none, else
 * the thread, with its instruction in *pc. Under warnings a read by a lane that runs this
 * instruction too was made in lockstep before it (a read and a write are never one instruction
 * here: note_read sees plain loads only). */
static inline int racing_reader(const sim_worker *wk, const sim_shadow *s, const sim_warp *w, int t,
                                uint32_t em, int lv, int32_t *pc) {
  const sim_shadow_pc *p = &wk->shadow_pc[s - wk->shadow];
  if (s->rwarp < 0) return -1;
  int xlv = s->flags & SIM_SH_XPLAIN ? L_PLAIN : L_VOLATILE, lane = t & 31;
  if (s->xreader >= 0 && s->xreader >> 5 != w->index && !strong_pair(lv, xlv, 0) &&
      !released(wk, w, lane, s->xreader, wk->hb ? clocks(wk, s)->x : 0)) {
    *pc = p->xpc;
    return s->xreader;
  }
  int first = s->rwarp * SIM_WARP + s->rfirst;
  if (strong_pair(lv, glevel(s), s->rwarp == w->index)) return -1;
  if (s->rwarp != w->index) {
    if (group_released(wk, w, lane, s)) return -1;
    *pc = p->rpc;
    return first;
  }
  uint32_t others = s->rlanes & ~(1u << (t & 31));
  if (wk->run->race_warn) others &= ~em;
  if (!others || reads_synced(wk, s, w)) return -1;
  *pc = p->rpc;
  return others >> s->rfirst & 1 ? first : s->rwarp * SIM_WARP + __builtin_ctz(others);
}

/* Under warnings, after a plain store found no racing reader: a read of the word by another lane
 * of this warp that only lockstep orders before it (the lane runs this store too, and no
 * __syncwarp() or warp-wide branch came between), by a load that was not volatile either, is
 * told of (report_lockstep). */
static void lockstep_read(sim_worker *wk, const sim_shadow *s, sim_warp *w, int lane,
                          const sim_inst *in, uint64_t a, uint32_t em) {
  if (s->rwarp != w->index || sim_warp_ordered(w, s->rsync)) return;
  uint32_t others = s->rlanes & em & ~(1u << lane);
  if (!others) return;
  int32_t rpc = wk->shadow_pc[s - wk->shadow].rpc;
  if (rpc < 0 || rpc >= wk->run->m->ncode || (wk->run->m->code[rpc].flags & SIM_IF_VOLATILE))
    return;
  report_lockstep(wk, w, lane, in, K_STORE, a, w->index * SIM_WARP + __builtin_ctz(others),
                  K_LOAD, rpc);
}

/* Records thread t's read, of strength lv, in the cell. A plain read of another warp takes the
 * place of a strong one there: only a plain read can race with a strong write. Under the
 * release/acquire model a read also takes the place of one that happened before it (through a
 * release it acquired) and was no weaker: what races with the earlier read and not with it
 * would have to be ordered after the one and not the other, which happened-before rules out. */
/* Under warnings, before a plain load that found no race with the word's last writer: a write by
 * another lane of this warp that only lockstep orders before the load (no __syncwarp() came
 * between: a warp-wide branch, or the lane's running this instruction too, is lockstep), by a
 * store that was not volatile either, is told of (report_lockstep), as lockstep_read tells of the
 * write after a read. */
static inline void lockstep_write(sim_worker *wk, const sim_shadow *s, sim_warp *w, int lane,
                                  const sim_inst *in, uint64_t a) {
  if (s->writer < 0 || s->writer >> 5 != w->index || (s->writer & 31) == lane) return;
  if (wlevel(s) != L_PLAIN || sim_before(s->wsync, w->synced)) return;
  report_lockstep(wk, w, lane, in, K_LOAD, a, s->writer, K_STORE,
                  wk->shadow_pc[s - wk->shadow].wpc);
}

static inline void note_read(const sim_worker *wk, sim_shadow *s, const sim_warp *w, int t,
                             int pc, int lv) {
  int lane = t & 31;
  if (s->rwarp < 0 || (s->rwarp == w->index && reads_synced(wk, s, w)) ||
      (s->rwarp != w->index && wk->hb && lv <= glevel(s) && group_released(wk, w, lane, s))) {
    s->rwarp = (int16_t)w->index;
    s->rlanes = 1u << lane;
    s->rsync = w->wsync;
    s->rfirst = (uint8_t)lane;
    s->flags = (uint8_t)((s->flags & ~(3u << SIM_SH_GLEVEL)) | (unsigned)lv << SIM_SH_GLEVEL);
    wk->shadow_pc[s - wk->shadow].rpc = pc;
    if (wk->hb) clocks(wk, s)->r = sim_hb_clock(wk->hb, w->index);
  } else if (s->rwarp == w->index) {
    s->rlanes |= 1u << lane;
    if (lv < glevel(s))
      s->flags = (uint8_t)((s->flags & ~(3u << SIM_SH_GLEVEL)) | (unsigned)lv << SIM_SH_GLEVEL);
    if (wk->hb) clocks(wk, s)->r = sim_hb_clock(wk->hb, w->index);
  } else if (s->xreader < 0 || (lv == L_PLAIN && !(s->flags & SIM_SH_XPLAIN)) ||
             (wk->hb && s->xreader >> 5 != w->index &&
              (lv == L_PLAIN || !(s->flags & SIM_SH_XPLAIN)) &&
              released(wk, w, lane, s->xreader, clocks(wk, s)->x))) {
    s->xreader = (int16_t)t;
    s->flags = (uint8_t)(lv == L_PLAIN ? s->flags | SIM_SH_XPLAIN : s->flags & ~SIM_SH_XPLAIN);
    wk->shadow_pc[s - wk->shadow].xpc = pc;
    if (wk->hb) clocks(wk, s)->x = sim_hb_clock(wk->hb, w->index);
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
  int lv = level_of(in, kind);
  int exempt = (kind == K_LOAD && (s->flags & SIM_SH_CAS)) ||
               strong_pair(lv, wlevel(s), s->writer >> 5 == w->index);
  int raced = 0; /* reported (under warnings, where the access is then recorded as usual) */
  if (s->writer >= 0 && s->writer != t && !exempt && unordered(wk, w, lane, s, em)) {
    if (report(wk, w, lane, in, kind, a, s->writer, atomic ? K_ATOM : K_STORE,
               wk->shadow_pc[s - wk->shadow].wpc) < 0)
      return -1;
    raced = 1;
  }
  if (kind == K_LOAD) {
    if (!raced && lv == L_PLAIN && wk->run->race_warn) lockstep_write(wk, s, w, lane, in, a);
    note_read(wk, s, w, t, pc, lv);
    return 0;
  }
  int32_t rpc = 0;
  int r = cas || raced ? -1 : racing_reader(wk, s, w, t, em, lv, &rpc);
  if (r >= 0 && report(wk, w, lane, in, kind, a, r, K_LOAD, rpc) < 0) return -1;
  if (r < 0 && !raced && kind == K_STORE && wk->run->race_warn && !(in->flags & SIM_IF_VOLATILE))
    lockstep_read(wk, s, w, lane, in, a, em);
  s->writer = (int16_t)t; /* every earlier access is ordered before this one: they are forgotten */
  s->wsync = w->wsync;
  wk->shadow_pc[s - wk->shadow].wpc = pc;
  if (wk->hb) clocks(wk, s)->w = sim_hb_clock(wk->hb, w->index);
  s->flags = (uint8_t)((s->flags & SIM_SH_SPLIT) | (kind == K_ATOM ? SIM_SH_ATOMIC : 0) |
                       (cas ? SIM_SH_CAS : 0) | (unsigned)lv << SIM_SH_WLEVEL);
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
      if (wk->hb) *clocks(wk, c) = *clocks(wk, h);
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

/* Whether cell s's writer is of another warp and the release/acquire model is on: whether a
 * lane's read is ordered after it then depends on the lane (what a lane acquired is its own
 * until a __syncwarp()), so each lane is checked. */
static inline int per_lane_order(const sim_worker *wk, const sim_warp *w,
                                      const sim_shadow *s) {
  return wk->hb && s->writer >> 5 != w->index;
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
        (s->writer < 0 || (!per_lane_order(wk, w, s) && !unordered(wk, w, l, s, em)))) {
      prev = s;
      prev_a = a;
    }
  }
  return 0;
}

/* The checks of one access, made now. */
static int check_now(sim_worker *wk, sim_warp *w, const sim_inst *in, const uint64_t *ad,
                     uint32_t em, int bytes, int kind, int pc) {
  if (bytes == 4) return check_words(wk, w, in, ad, em, kind, pc);
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm);
    if (access_lane(wk, w, in, l, ad[l], bytes, kind, pc, em) < 0) return -1;
  }
  return 0;
}

/* ---- put-off checks (sim_rlog) ----
 *
 * Most shared accesses cannot race, and can be seen not to without their cells: a load of bytes
 * that no store or atomic of the current barrier interval has touched (no cell it reads has a
 * writer), a store of distinct words no access of the interval has touched yet (every cell it
 * writes is empty), and a store over exactly the words that the same lanes have just loaded, the
 * first access of the interval to them (a tree reduction's buf[t] += buf[t + s]: each cell then
 * holds its own lane's read alone, which a write by that lane does not race with, and which it
 * forgets). What such an access leaves in the cells matters only to a later access of the same
 * interval that touches the same bytes; most intervals end at a barrier first, and a barrier
 * forgets everything. So these accesses are logged, with what their check would read of the
 * warp, and checked only when an access checked at once overlaps the log's bytes (or the log is
 * full, or the worker turns to another block), just before that access's own check and in the
 * order they were made: each cell is then left as the checks made at the time would have left
 * it, since nothing else touched it in between. Logged accesses never report; every other access
 * is checked at once, as before; so the same races are found, in the same order. A tiled
 * matmul's intervals and a tree reduction's are then never checked at all.
 *
 * What the interval touched is kept per 128-byte chunk of shared memory, a bit each (a warp's
 * access of consecutive words is one or two), in three maps: the chunks of the log's accesses
 * (MAP_LOG), those of the accesses whose cells hold them (MAP_CELLS: checked at once, or logged
 * and since checked), and those any store or atomic wrote (MAP_WRITTEN). MAP_LOG is drawn from
 * the log only once something asks for it (log_map), and kept up to date from then on: an
 * interval of loads alone, a tiled matmul's inner loop, never needs it. */

/* log entries at most; patterns kept from one log to the next; log2 of a chunk's bytes */
enum { RLOG_MAX = 1024, RPAT_KEEP = 256, CHUNK_SHIFT = SIM_RACE_CHUNK };
enum { MAP_LOG, MAP_CELLS, MAP_WRITTEN, MAPS }; /* MAP_LOG first: sim_race_log_load */

static int lz_alloc(sim_worker *wk) {
  size_t chunks = (wk->run->shared_total >> CHUNK_SHIFT) + 2;
  wk->lzwords = chunks / 64 + 1;
  wk->lzmap = malloc(MAPS * wk->lzwords * sizeof *wk->lzmap);
  return wk->lzmap ? 0 : -1;
}

static inline uint64_t *map(const sim_worker *wk, int which) {
  return wk->lzmap + (size_t)which * wk->lzwords;
}

/* An empty log. Its patterns stay for the next intervals' accesses to share (a tiled loop's
 * are the same in every interval), until there are RPAT_KEEP of them. */
static inline void log_clear(sim_worker *wk) {
  wk->nrlog = 0;
  wk->lz_logmap = 0;
  wk->llo = UINT64_MAX;
  wk->lhi = 0;
  if (wk->npat > RPAT_KEEP) {
    wk->npat = 0;
    wk->lz_serial++; /* the memos' snapshots are gone */
  }
}

/* A new barrier interval starts with an empty log and nothing touched. Out of memory for the
 * maps, every access is checked at once. */
static inline void lz_begin(sim_worker *wk) {
  if (wk->lz_epoch == wk->epoch) return;
  wk->lz_epoch = wk->epoch;
  log_clear(wk); /* the barrier orders the logged accesses before all that follows */
  wk->lz_wrote = 0;
  wk->lz_off = !wk->lzmap && lz_alloc(wk) < 0;
  if (!wk->lz_off) memset(wk->lzmap, 0, MAPS * wk->lzwords * sizeof *wk->lzmap);
}

/* Whether a chunk of the bytes [lo, hi) has its bit in map m; map_set sets them. An access
 * within one word of the map, the usual case, takes no loop. */
static inline uint64_t chunk_bits(uint64_t c0, uint64_t c1, uint64_t i) {
  uint64_t bits = ~0ull;
  if (i == c0 >> 6) bits &= ~0ull << (c0 & 63);
  if (i == c1 >> 6) bits &= ~0ull >> (63 - (c1 & 63));
  return bits;
}
static inline int map_any(const uint64_t *m, uint64_t lo, uint64_t hi) {
  uint64_t c0 = lo >> CHUNK_SHIFT, c1 = (hi - 1) >> CHUNK_SHIFT;
  for (uint64_t i = c0 >> 6; i <= c1 >> 6; i++)
    if (m[i] & chunk_bits(c0, c1, i)) return 1;
  return 0;
}
static inline void map_set(uint64_t *m, uint64_t lo, uint64_t hi) {
  uint64_t c0 = lo >> CHUNK_SHIFT, c1 = (hi - 1) >> CHUNK_SHIFT;
  for (uint64_t i = c0 >> 6; i <= c1 >> 6; i++) m[i] |= chunk_bits(c0, c1, i);
}

/* Makes the logged accesses' checks, in order, and empties the log: its chunks' cells now hold
 * them. */
static void replay(sim_worker *wk) {
  const sim_inst *code = wk->run->m->code;
  sim_warp tw; /* what a check reads of the warp, as it was at the access */
  memset(&tw, 0, sizeof tw);
  for (int i = 0; i < wk->nrlog; i++) {
    const sim_rlog *e = &wk->rlog[i];
    const uint32_t *pat = wk->rpat[e->pat];
    uint64_t ad[SIM_WARP];
    uint32_t em = e->em;
    tw.index = e->warp;
    tw.wsync = e->wsync;
    tw.synced = e->synced;
    tw.conv = e->conv;
    LANES(ad[l] = (uint32_t)(e->base + pat[l]));
    /* cannot fail: a logged access does not race (see above) */
    (void)check_now(wk, &tw, &code[e->pc], ad, em, e->bytes, e->store ? K_STORE : K_LOAD, e->pc);
  }
  uint64_t *cells = map(wk, MAP_CELLS);
  for (int i = 0; i < wk->nrlog; i++) map_set(cells, wk->rlog[i].lo, wk->rlog[i].hi);
  log_clear(wk);
}

/* MAP_LOG, drawn from the log if it is not kept yet (see above). */
static const uint64_t *log_map(sim_worker *wk) {
  uint64_t *lg = map(wk, MAP_LOG);
  if (!wk->lz_logmap) {
    memset(lg, 0, wk->lzwords * sizeof *lg);
    for (int i = 0; i < wk->nrlog; i++) map_set(lg, wk->rlog[i].lo, wk->rlog[i].hi);
    wk->lz_logmap = 1;
  }
  return lg;
}

/* The warp's state a check reads, kept in e. */
static inline void log_warp(sim_rlog *e, const sim_warp *w, const sim_inst *in,
                            const sim_worker *wk) {
  e->pc = (int32_t)(in - wk->run->m->code);
  e->warp = w->index;
  e->wsync = w->wsync;
  e->synced = w->synced;
  e->conv = w->conv;
}

/* Room for one more entry and its pattern; 0, or -1 when out of memory. A full log is checked
 * and emptied. */
static int log_room(sim_worker *wk) {
  if (wk->nrlog == wk->caprlog && wk->caprlog >= RLOG_MAX) replay(wk);
  if (wk->nrlog == wk->caprlog) {
    int cap = wk->caprlog ? 2 * wk->caprlog : 64;
    sim_rlog *r = realloc(wk->rlog, (size_t)cap * sizeof *r);
    if (!r) return -1;
    wk->rlog = r;
    wk->caprlog = cap;
  }
  if (wk->npat == wk->cappat) {
    int cap = wk->cappat ? 2 * wk->cappat : 64;
    uint32_t(*p)[SIM_WARP] = realloc(wk->rpat, (size_t)cap * sizeof *p);
    if (!p) return -1;
    wk->rpat = p;
    wk->cappat = cap;
  }
  return 0;
}

/* A new log entry for an access of [lo, hi) by w (its offsets are the caller's to give: base
 * and pat), its chunks marked (and written, for a store); NULL, logging nothing, when out of
 * memory. */
static inline sim_rlog *log_access(sim_worker *wk, const sim_warp *w, const sim_inst *in,
                                   uint32_t em, int bytes, int store, uint64_t lo, uint64_t hi) {
  if (__builtin_expect(wk->nrlog == wk->caprlog || wk->npat == wk->cappat, 0) && log_room(wk) < 0)
    return NULL;
  sim_rlog *e = &wk->rlog[wk->nrlog++];
  e->lo = (uint32_t)lo;
  e->hi = (uint32_t)hi;
  e->bytes = (uint16_t)bytes;
  e->store = (uint8_t)store;
  e->em = em;
  log_warp(e, w, in, wk);
  if (lo < wk->llo) wk->llo = lo;
  if (hi > wk->lhi) wk->lhi = hi;
  if (wk->lz_logmap) map_set(map(wk, MAP_LOG), lo, hi);
  if (store) {
    map_set(map(wk, MAP_WRITTEN), lo, hi);
    wk->lz_wrote = 1;
  }
  return e;
}

/* The lanes' offsets of e, one per lane of em at ad. */
static inline void log_offsets(sim_worker *wk, sim_rlog *e, const uint64_t *ad, uint32_t em) {
  uint32_t *pat = wk->rpat[wk->npat];
  e->pat = wk->npat++;
  e->base = 0;
  LANES(pat[l] = (uint32_t)ad[l]);
}

/* The offsets of e, a whole warp's access at a0 whose deltas the memo mo holds: the pattern
 * copied from the memo once per fill of it and per log. */
static inline void log_memo_offsets(sim_worker *wk, sim_rlog *e, uint64_t a0, sim_memo *mo) {
  if (mo->snap_serial != wk->lz_serial || mo->snap_gen != mo->gen) {
    uint32_t *pat = wk->rpat[wk->npat];
    for (int l = 0; l < SIM_WARP; l++) pat[l] = (uint32_t)mo->delta[l];
    mo->snap = wk->npat++;
    mo->snap_gen = mo->gen;
    mo->snap_serial = wk->lz_serial;
  }
  e->pat = mo->snap;
  e->base = (uint32_t)a0;
}

/* Whether a load of [lo, hi) may be logged: nothing of the interval wrote its chunks. */
static inline int load_may_wait(const sim_worker *wk, uint64_t lo, uint64_t hi) {
  return !wk->lz_off && (!wk->lz_wrote || !map_any(map(wk, MAP_WRITTEN), lo, hi));
}

/* Whether a store of distinct words over [lo, hi) may be logged: no access of the interval
 * touched its chunks. */
static inline int store_may_wait(sim_worker *wk, uint64_t lo, uint64_t hi) {
  return !wk->lz_off && !map_any(map(wk, MAP_CELLS), lo, hi) &&
         !(wk->nrlog && lo < wk->lhi && wk->llo < hi && map_any(log_map(wk), lo, hi));
}

/* Whether the lanes' words are all different: addresses ascending lane by lane, the usual
 * layout, are; any other is taken as not (and checked at once). */
static int ascending(const uint64_t *ad, uint32_t em) {
  uint64_t prev = 0;
  int any = 0;
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm);
    if (any && ad[l] <= prev) return 0;
    prev = ad[l];
    any = 1;
  }
  return 1;
}

/* A store of distinct words at ad over bytes [lo, hi) that the interval has touched: when the
 * only access that touched them is a logged load, by the same lanes of the same warp, of the
 * same words, and the first of the interval to touch them (no cell of theirs holds an access:
 * one that came after the load would have checked the log first), that entry becomes the
 * store's (see above). Returns 1 when it did. The entries between the two touch other bytes, so
 * the store may take the load's place among them. */
static int store_over_load(sim_worker *wk, const sim_warp *w, const sim_inst *in,
                           const uint64_t *ad, uint32_t em, uint64_t lo, uint64_t hi) {
  if (!(lo < wk->lhi && wk->llo < hi) || map_any(map(wk, MAP_CELLS), lo, hi)) return 0;
  sim_rlog *hit = NULL;
  for (int i = wk->nrlog - 1; i >= 0; i--) {
    sim_rlog *e = &wk->rlog[i];
    if (e->lo < hi && lo < e->hi) {
      if (hit) return 0;
      hit = e;
    }
  }
  if (!hit || hit->store || hit->warp != w->index || hit->em != em || hit->bytes != 4) return 0;
  const uint32_t *pat = wk->rpat[hit->pat];
  uint32_t diff = 0;
  LANES(diff |= (hit->base + pat[l]) ^ (uint32_t)ad[l]);
  if (diff) return 0;
  hit->store = 1;
  log_warp(hit, w, in, wk);
  map_set(map(wk, MAP_WRITTEN), lo, hi);
  wk->lz_wrote = 1;
  return 1;
}

/* An access of [lo, hi) checked now: after the logged accesses, when it may overlap theirs. */
static int check_at_once(sim_worker *wk, sim_warp *w, const sim_inst *in, const uint64_t *ad,
                         uint32_t em, int bytes, int kind, uint64_t lo, uint64_t hi) {
  if (!wk->lz_off) {
    if (wk->nrlog && lo < wk->lhi && wk->llo < hi && map_any(log_map(wk), lo, hi))
      replay(wk);
    map_set(map(wk, MAP_CELLS), lo, hi);
    if (kind != K_LOAD) {
      map_set(map(wk, MAP_WRITTEN), lo, hi);
      wk->lz_wrote = 1;
    }
  }
  return check_now(wk, w, in, ad, em, bytes, kind, (int)(in - wk->run->m->code));
}

/* One access of [lo, hi): logged when it can be (see above), else checked now. distinct: the
 * lanes' words are all different (1), may not be (0), or are to be looked at (-1). */
static int race_access(sim_worker *wk, sim_warp *w, const sim_inst *in, const uint64_t *ad,
                       uint32_t em, int bytes, int kind, uint64_t lo, uint64_t hi, int distinct) {
  lz_begin(wk);
  sim_rlog *e = NULL;
  if (kind == K_LOAD && load_may_wait(wk, lo, hi)) {
    e = log_access(wk, w, in, em, bytes, 0, lo, hi);
  } else if (kind == K_STORE && !wk->lz_off && bytes == 4 &&
             (distinct < 0 ? ascending(ad, em) : distinct)) {
    if (store_may_wait(wk, lo, hi))
      e = log_access(wk, w, in, em, bytes, 1, lo, hi);
    else if (store_over_load(wk, w, in, ad, em, lo, hi))
      return 0;
  }
  if (!e) return check_at_once(wk, w, in, ad, em, bytes, kind, lo, hi);
  log_offsets(wk, e, ad, em);
  return 0;
}

/* The lanes of em whose write lies in the shared memory the GPU reserves for the system
 * (sim_int.h): cooperative_groups' own barriers, made of atomics and spinning loads, which order
 * what they guard without a __syncthreads(). Not checked, so never recorded: a load there then
 * finds no writer to race with. */
static uint32_t system_lanes(const sim_worker *wk, const uint64_t *ad, uint32_t em, int kind) {
  uint64_t r = wk->run->k->reserved_shared;
  uint32_t sys = 0;
  if (r && kind != K_LOAD) LANES(if (ad[l] < r) sys |= 1u << l);
  return sys;
}

int sim_race_check(sim_worker *wk, sim_warp *w, const sim_inst *in, const uint64_t *ad,
                   uint32_t em, int bytes, int kind) {
  if (wk->run->race_warn) w->wsync++; /* tells this instruction's accesses from earlier ones */
  em &= ~system_lanes(wk, ad, em, kind);
  if (!em) return 0;
  uint64_t lo = ~0ull, hi = 0;
  LANES({
    lo = ad[l] < lo ? ad[l] : lo;
    hi = ad[l] > hi ? ad[l] : hi;
  });
  return race_access(wk, w, in, ad, em, bytes, kind, lo, hi + (uint64_t)bytes, -1);
}

/* A whole warp's access at A[l] + off (fast_access, sim_mem.c), whose pattern the memo mo holds:
 * its extent is known without a pass over the lanes, and a load that may be logged, most of a
 * tiled kernel's instructions, is logged with less ado. */
int sim_race_check_warp(sim_worker *wk, sim_warp *w, const sim_inst *in, const uint64_t *A,
                        uint64_t off, int kind, sim_memo *mo) {
  if (wk->run->race_warn) w->wsync++;
  uint64_t a0 = A[0] + off, lo = a0 + (uint64_t)mo->dmin, hi = a0 + (uint64_t)mo->dmax + in->size;
  lz_begin(wk);
  sim_rlog *e = NULL;
  if (kind == K_LOAD && load_may_wait(wk, lo, hi))
    e = log_access(wk, w, in, SIM_FULL, in->size, 0, lo, hi);
  else if (kind == K_STORE && in->size == 4 && mo->rising && store_may_wait(wk, lo, hi))
    e = log_access(wk, w, in, SIM_FULL, 4, 1, lo, hi);
  if (e) {
    log_memo_offsets(wk, e, a0, mo);
    return 0;
  }
  uint64_t ad[SIM_WARP];
  for (int l = 0; l < SIM_WARP; l++) ad[l] = A[l] + off;
  if (lo < wk->run->k->reserved_shared) {
    uint32_t em = SIM_FULL & ~system_lanes(wk, ad, SIM_FULL, kind);
    return em ? race_access(wk, w, in, ad, em, in->size, kind, lo, hi, -1) : 0;
  }
  return race_access(wk, w, in, ad, SIM_FULL, in->size, kind, lo, hi, (int)mo->rising);
}

void sim_race_flush(sim_worker *wk) {
  if (wk->nrlog && wk->lz_epoch == wk->epoch) replay(wk); /* else a barrier came since */
}

void sim_race_hide(sim_worker *wk) {
  if (wk->nrlog && wk->lz_epoch == wk->epoch) replay(wk); /* else a barrier came since */
  log_clear(wk);
}

void sim_race_shown(sim_worker *wk) {
  wk->lz_epoch = wk->epoch;
  wk->lz_off = 1;
  log_clear(wk);
}
