/* sim_mbarrier.c: the asynchronous barriers of cuda::barrier and cuda::memcpy_async (PTX's
 * mbarrier): an 8-byte object in a block's shared memory that counts the arrivals of a phase,
 * and the waits on a phase's completion.
 *
 * Stance: the object is the simulator's own encoding of what the PTX ISA describes (bits 0..20
 * the arrivals the phase still awaits, 21..41 the count each phase starts with, 42 set once
 * initialised, 63 the phase's parity); a kernel never reads it but through these instructions.
 * An arrival (arrive, arrive_drop, cp.async.mbarrier.arrive) counts threads, lane by lane in lane
 * order, and the one that brings the count to zero completes the phase: the parity flips and the
 * count starts again. Its state token is the phase's parity and the count left. test_wait asks
 * whether a phase completed; try_wait, which the ISA lets suspend the thread until it does, makes
 * the warp wait (sim_sched.c's scheduler runs the others) until an arrival completes a phase of
 * its barrier, then runs again. A barrier that can never complete is reported, as a GPU would
 * hang on it (sim_mbar_stuck). cp.async copies complete when they are issued here, so the arrival
 * cp.async.mbarrier.arrive makes for them comes at once (with .noinc it counts; without, it adds
 * one to the count and takes it off again, and changes nothing). What the ISA leaves undefined,
 * a barrier used before init or after inval, a count of 0, more arrivals than a phase awaits, a
 * .noComplete arrival that completes it, fails the launch by name.
 *
 * The race check ends its interval for the whole block where a phase completes, as at a barrier
 * with a thread count (sim_barrier.c says why: no race reported that the barrier orders). The
 * timing model holds a warp that try_wait made wait until the arrival that released it; a wait
 * that finds its phase complete already is not held (the object keeps no time). */
#include <stdio.h>
#include <string.h>

#include "sim_run.h"

#define MB_COUNT 0x1fffffull        /* a count's bits */
#define MB_EXPECT_SHIFT 21
#define MB_INIT (1ull << 42)
#define MB_PHASE (1ull << 63)
#define MB_MAX ((1u << 20) - 1)     /* the largest count the PTX ISA allows */

/* The shared offset of lane l's mbarrier, or -1 after sim_fail (outside shared memory, past it,
 * misaligned). */
static int64_t offset(sim_worker *wk, sim_warp *w, const sim_inst *in, int l) {
  uint64_t a = w->R[(size_t)in->a * SIM_WARP + l] + (uint64_t)in->imm;
  if (in->space == SIM_SP_GENERIC) {
    if (a - SIM_SHARED_WIN >= SIM_WIN_SIZE)
      return sim_fail(wk, w, l, in, "cuda::barrier (mbarrier) at address 0x%llx, which is not in "
                      "shared memory: a block's barrier object is a __shared__ variable",
                      (unsigned long long)a);
    a -= SIM_SHARED_WIN;
  }
  if (a % 8 || a >= wk->run->shared_total || wk->run->shared_total - a < 8)
    return sim_fail(wk, w, l, in, "cuda::barrier (mbarrier) at shared offset %llu, outside the "
                    "block's %zu bytes of shared memory or not 8-byte aligned",
                    (unsigned long long)a, wk->run->shared_total);
  return (int64_t)a;
}

static uint64_t load(const sim_worker *wk, int64_t off) {
  uint64_t v;
  memcpy(&v, wk->shared + off, 8);
  return v;
}

static void store(sim_worker *wk, int64_t off, uint64_t v) {
  memcpy(wk->shared + off, &v, 8);
}

/* The phase of the barrier at off completed at w's arrival: the warps that wait on it (try_wait)
 * run again, held by the timing model until then; the race check's interval ends. */
static void completed(sim_worker *wk, const sim_warp *w, int64_t off) {
  const sim_run *run = wk->run;
  sim_slot *s = &wk->slots[wk->cur];
  uint64_t at = run->lat ? sim_lat_arrival(w) : 0;
  for (uint32_t m = s->mbar_waiting; m; m &= m - 1) {
    sim_warp *v = &wk->warps[__builtin_ctz(m)];
    if (!v->mbar_multi && v->mbar_off != (uint64_t)off) continue;
    if (run->lat) sim_lat_hold(v, at);
    v->state = SIM_W_RUN;
    v->bar_named = 0;
    s->mbar_waiting &= ~(1u << v->index);
    s->bar_woke = 1;
  }
  wk->epoch++;
}

/* One lane's arrival of cnt threads on the barrier v at off (arrive_drop also takes them off the
 * count of later phases): v updated, the state token returned; -1 in *err after sim_fail. */
static uint64_t arrival(sim_worker *wk, sim_warp *w, const sim_inst *in, int l, int64_t off,
                        uint64_t *v, uint32_t cnt, int *err) {
  uint64_t pending = *v & MB_COUNT, expect = *v >> MB_EXPECT_SHIFT & MB_COUNT;
  if (cnt == 0 || cnt > pending) {
    *err = sim_fail(wk, w, l, in, "an arrival of %u threads on a cuda::barrier (mbarrier) whose "
                    "phase awaits %llu more: each thread counted in init(&bar, count) arrives "
                    "once a phase (the PTX ISA leaves more undefined)",
                    cnt, (unsigned long long)pending);
    return 0;
  }
  if (in->sub == SIM_MB_DROP) expect -= cnt;
  pending -= cnt;
  uint64_t token = (*v & MB_PHASE) | MB_INIT | pending;
  if (pending == 0) {
    if (in->ty2) {
      *err = sim_fail(wk, w, l, in, "mbarrier.arrive.noComplete completed the barrier's phase, "
                      "which the PTX ISA leaves undefined");
      return 0;
    }
    *v ^= MB_PHASE;
    pending = expect;
    completed(wk, w, off);
  }
  *v = (*v & (MB_PHASE | MB_INIT)) | expect << MB_EXPECT_SHIFT | pending;
  return token;
}

int sim_mbar_exec(sim_worker *wk, sim_warp *w, const sim_inst *in, uint32_t em) {
  uint64_t *R = w->R, *D = in->d >= 0 ? R + (size_t)in->d * SIM_WARP : NULL;
  const uint64_t *B = R + (size_t)in->b * SIM_WARP;
  if (in->sub == SIM_MB_PENDING) { /* the count a state token holds */
    LANES(D[l] = (uint32_t)(B[l] & MB_COUNT));
    return 0;
  }
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm), err = 0;
    int64_t off = offset(wk, w, in, l);
    if (off < 0) return -1;
    uint64_t v = load(wk, off);
    uint32_t cnt = (uint32_t)B[l];
    if (in->sub == SIM_MB_INIT) {
      if (cnt == 0 || cnt > MB_MAX)
        return sim_fail(wk, w, l, in, "init(&bar, %u) of a cuda::barrier (mbarrier): the count "
                        "of threads must be 1 to %u", cnt, MB_MAX);
      store(wk, off, MB_INIT | (uint64_t)cnt << MB_EXPECT_SHIFT | cnt);
      continue;
    }
    if (in->sub == SIM_MB_INVAL) {
      store(wk, off, 0);
      continue;
    }
    if (!(v & MB_INIT))
      return sim_fail(wk, w, l, in, "an arrival on a cuda::barrier (mbarrier) that was never "
                      "initialised, or was invalidated: init(&bar, count) in one thread, then "
                      "__syncthreads(), before any thread arrives");
    if (in->sub == SIM_MB_CPASYNC && !in->ty2) continue; /* one more, and one less at once */
    uint64_t token = arrival(wk, w, in, l, off, &v, cnt, &err);
    if (err) return -1;
    store(wk, off, v);
    if (D) D[l] = token;
  }
  wk->writes++; /* progress, for spin detection (sim_sched.c) */
  return 0;
}

int sim_mbar_wait(sim_worker *wk, sim_warp *w, sim_frame *t, const sim_inst *in, int pc,
                  uint32_t em) {
  const uint64_t *B = w->R + (size_t)in->b * SIM_WARP;
  uint32_t done = 0;
  int64_t first = -1;
  int multi = 0;
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm);
    int64_t off = offset(wk, w, in, l);
    if (off < 0) return SIM_W_ERR;
    uint64_t v = load(wk, off);
    if (!(v & MB_INIT)) {
      sim_fail(wk, w, l, in, "a wait on a cuda::barrier (mbarrier) that was never initialised, "
               "or was invalidated: init(&bar, count) in one thread, then __syncthreads()");
      return SIM_W_ERR;
    }
    /* the phase asked about: the token's, or the parity given; it completed when the
     * barrier's parity is no longer that */
    uint64_t want = in->ty2 ? (B[l] & 1) : B[l] >> 63;
    if ((v >> 63) != want) {
      done |= 1u << l;
    } else if (first < 0) {
      first = off;
    } else if (off != first) {
      multi = 1;
    }
  }
  if (done == em || in->sub == SIM_MB_TEST) {
    w->P[in->d] = (w->P[in->d] & ~em) | done;
    return 0;
  }
  /* try_wait: the warp waits until a phase of its barrier completes, then runs the wait again */
  t->pc = pc;
  w->state = SIM_W_BAR;
  w->bar_pc = pc;
  w->bar_id = -1;
  w->bar_named = 2;
  w->mbar_off = (uint64_t)first;
  w->mbar_multi = multi;
  wk->slots[wk->cur].mbar_waiting |= 1u << w->index;
  return SIM_W_BAR;
}

int sim_mbar_stuck(sim_worker *wk, const sim_warp *w) {
  const sim_run *run = wk->run;
  uint64_t v = load(wk, (int64_t)w->mbar_off);
  int exited = 0, waiting = 0, elsewhere = -1;
  for (int i = 0; i < run->nwarps; i++) {
    const sim_warp *o = &wk->warps[i];
    if (o->state == SIM_W_DONE) exited++;
    else if (o->state == SIM_W_BAR && o->bar_named == 2) waiting++;
    else if (o->state == SIM_W_BAR && elsewhere < 0) elsewhere = i;
  }
  char where[300], at[400] = "";
  sim_srcline(run->m, &run->m->code[w->bar_pc], where, sizeof where);
  if (elsewhere >= 0) {
    char line[300];
    sim_srcline(run->m, &run->m->code[wk->warps[elsewhere].bar_pc], line, sizeof line);
    snprintf(at, sizeof at, "; warp %d waits at a barrier at %s", elsewhere, line);
  }
  return sim_fail(wk, w, __builtin_ctz(w->live), &run->m->code[w->bar_pc],
                  "the wait on a cuda::barrier (mbarrier, shared offset %llu) at %s never ends: "
                  "its phase awaits %llu more arrivals of the %llu counted in init(&bar, count), "
                  "and no thread of the block can arrive: %d of its %d warps wait on barriers "
                  "like it, %d have exited%s. On a GPU the block hangs here. Every thread counted "
                  "must arrive each phase (bar.arrive(), or arrive_and_wait())",
                  (unsigned long long)w->mbar_off, where, (unsigned long long)(v & MB_COUNT),
                  (unsigned long long)(v >> MB_EXPECT_SHIFT & MB_COUNT), waiting, run->nwarps,
                  exited, at);
}
