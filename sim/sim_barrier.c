/* sim_barrier.c: a block's barriers 0..15: __syncthreads() and its kin (bar.sync, barrier.sync
 * and bar.red without a thread count), and the named barriers with a thread count that let groups
 * of a block's warps meet apart (bar.sync a, b and bar.arrive a, b: the producer and consumer
 * warps of the PTX ISA's example, CUTLASS's NamedBarrier).
 *
 * Stance: the PTX ISA counts a barrier's arrivals in warps ("marks warps' arrival"; b is a
 * multiple of the warp size), so a phase of a barrier with a count keeps the warps that arrived,
 * each once. A barrier without a count awaits every warp of the block that has not exited: it
 * completes when no warp can run and all that wait, wait there (sim_sched.c's release_barrier),
 * and keeps no phase. A barrier with a count b
 * completes at the arrival that brings its warps to b / 32: that arrival releases the warps
 * waiting there and goes on, and the barrier starts a new phase. bar.arrive counts and goes on
 * without waiting. What the ISA leaves undefined fails the launch with a message rather than
 * computing something: a number outside 0..15 or a count that is no multiple of 32, counts that
 * differ within a phase, bar.red mixed with bar.sync or bar.arrive, a warp arriving twice in one
 * phase (the GPU counts it twice and releases the barrier early), and a barrier that can never
 * complete (the GPU hangs): sim_bar_stuck names what it awaits and where the other warps are.
 *
 * The race check (sim_race.c) keeps one barrier interval for the whole block. A barrier with a
 * count orders only the warps that took part, which that model cannot say, so the check treats
 * its completion as a __syncthreads(): it ends the interval for every warp. It is conservative in
 * what it reports: no race is reported that the barrier orders, but a race between a warp that
 * did not take part and another, across the barrier, goes unreported. (Turned down: a vector
 * clock per warp in every shadow cell, which would slow every checked shared access for the
 * sake of a rare kernel.)
 *
 * The timing model: the warps waiting at a barrier with a count wait for its latest arrival; a
 * warp that arrives with bar.arrive does not wait. */
#include <stdio.h>
#include <string.h>

#include "sim_run.h"

/* Row r's value in the lanes em when it is one value (a barrier's number or count): -1 when
 * the lanes differ. A constant row, __syncthreads()'s 0, is one value: no pass over the lanes,
 * which a reduction's barrier in every turn of its loop would pay. */
static int64_t uniform(const sim_worker *wk, const sim_warp *w, int r, uint32_t em) {
  const uint64_t *R = w->R + (size_t)r * SIM_WARP;
  uint32_t v = (uint32_t)R[__builtin_ctz(em)];
  if (r >= wk->run->m->const_first) return v;
  for (uint32_t mm = em; mm; mm &= mm - 1)
    if ((uint32_t)R[__builtin_ctz(mm)] != v) return -1;
  return v;
}

/* The instruction's name as the learner wrote it, for messages. */
static const char *bar_name(const sim_inst *in) {
  return in->ty2 ? "bar.arrive" : in->sub ? "bar.red" : in->c >= 0 ? "bar.sync" : "__syncthreads()";
}

/* bar.red with a thread count: the predicate of each warp that takes part (self, at in, and the
 * warps waiting at barrier id, at their own bar.red), counted or combined, is each one's result. */
static void reduce(sim_worker *wk, sim_warp *self, const sim_inst *in, int id) {
  const sim_run *run = wk->run;
  long count = 0, live = 0;
  for (int pass = 0; pass < 2; pass++) {
    int v = in->sub == SIM_BAR_AND ? count == live : count != 0;
    for (int i = 0; i < run->nwarps; i++) {
      sim_warp *w = &wk->warps[i];
      int part = w == self || (w->state == SIM_W_BAR && w->bar_named && w->bar_id == id);
      if (!part) continue;
      const sim_inst *ip = w == self ? in : &run->m->code[w->bar_pc];
      if (pass == 0) {
        uint32_t p = w->P[ip->imm];
        if (ip->flags & SIM_IF_NEG_PRED) p = ~p;
        count += sim_popcount(p & w->live);
        live += sim_popcount(w->live);
      } else if (ip->sub == SIM_BAR_POPC) {
        for (int l = 0; l < SIM_WARP; l++)
          if (w->live >> l & 1) w->R[ip->d * SIM_WARP + l] = (uint64_t)count;
      } else {
        w->P[ip->d] = (w->P[ip->d] & ~w->live) | (v ? w->live : 0);
      }
    }
  }
}

/* The barrier id's phase is over: its record starts afresh. */
static void new_phase(sim_slot *s, int id) {
  s->bar_open &= ~(1u << id);
  s->bar_warps[id] = 0;
  s->bar_expect[id] = 0;
  s->bar_op[id] = 0;
  s->bar_tmax[id] = 0;
}

/* Barrier id, with a thread count, completed at self's arrival at in: the warps waiting there
 * go on, held by the timing model until the latest arrival, as self is unless it only arrives. */
static void complete(sim_worker *wk, sim_slot *s, sim_warp *self, const sim_inst *in, int id) {
  const sim_run *run = wk->run;
  if (in->sub) reduce(wk, self, in, id);
  for (int i = 0; i < run->nwarps; i++) {
    sim_warp *w = &wk->warps[i];
    if (w->state != SIM_W_BAR || !w->bar_named || w->bar_id != id) continue;
    if (run->lat) sim_lat_hold(w, s->bar_tmax[id]);
    w->state = SIM_W_RUN;
    w->bar_named = 0;
    s->bar_woke = 1;
  }
  if (run->lat && !in->ty2) sim_lat_hold(self, s->bar_tmax[id]);
  new_phase(s, id);
  wk->epoch++; /* the race check's interval ends (see the top of the file) */
}

/* Up to 8 of the warps in mask as "0, 1, 2", and "..." past them, into buf. */
static void warp_list(uint32_t mask, char *buf, size_t len) {
  size_t n = 0;
  int k = 0;
  buf[0] = '\0';
  for (; mask && n < len; mask &= mask - 1, k++) {
    if (k == 8) {
      snprintf(buf + n, len - n, ", ...");
      return;
    }
    n += (size_t)snprintf(buf + n, len - n, "%s%d", k ? ", " : "", __builtin_ctz(mask));
  }
}

/* "with 64 threads", "with no thread count", "with bar.red and 64 threads", for messages about a
 * phase of expect warps (0: the whole block) and reduction op. */
static void count_words(int expect, int op, char *buf, size_t len) {
  if (expect) snprintf(buf, len, "with %s%d threads", op ? "bar.red and " : "", expect * SIM_WARP);
  else snprintf(buf, len, "with %sno thread count", op ? "bar.red and " : "");
}

/* Checks the barrier's number and count and that this arrival fits its phase; 0, or -1 after
 * sim_fail. *id and *expect (warps; 0 for the whole block) are set. */
static int check_arrival(sim_worker *wk, sim_warp *w, const sim_inst *in, uint32_t em, int *id,
                         int *expect) {
  const sim_run *run = wk->run;
  const sim_slot *s = &wk->slots[wk->cur];
  int l = __builtin_ctz(em);
  int64_t a = in->a >= 0 ? uniform(wk, w, in->a, em) : 0;
  int64_t b = in->c >= 0 ? uniform(wk, w, in->c, em) : 0;
  if (a < 0 || a >= SIM_NBARS)
    return sim_fail(wk, w, l, in, "%s on barrier %lld: a block's barriers are numbered 0 to 15, "
                    "the same number in every thread of a warp", bar_name(in),
                    (long long)(int32_t)w->R[in->a * SIM_WARP + l]);
  if (in->c >= 0 && (b <= 0 || b % SIM_WARP || b > 1024))
    return sim_fail(wk, w, l, in, "%s %lld, %lld: a thread count must be a multiple of 32 (the "
                    "barrier counts whole warps), from 32 to 1024, the same in every thread of a "
                    "warp", bar_name(in), (long long)a,
                    (long long)(int32_t)w->R[in->c * SIM_WARP + l]);
  if (b / SIM_WARP > run->nwarps)
    return sim_fail(wk, w, l, in, "%s %lld, %lld in a block of %d threads (%d warps): the barrier "
                    "waits for more threads than the block has, for ever", bar_name(in),
                    (long long)a, (long long)b, run->nthreads, run->nwarps);
  *id = (int)a;
  *expect = (int)(b / SIM_WARP);
  if (s->bar_warps[a] >> w->index & 1)
    return sim_fail(wk, w, l, in, "warp %d reaches barrier %lld a second time before it completes "
                    "(a bar.arrive, then another arrival there): the GPU counts the warp twice and "
                    "releases the barrier before the others arrive. Give each direction of a "
                    "producer/consumer exchange a barrier number of its own, as the PTX ISA's "
                    "example does", w->index, (long long)a);
  /* the phase's warps and what they gave: an open phase with a count, or warps waiting there
   * without one (which no phase records) */
  uint32_t there = s->bar_warps[a];
  int then_expect = s->bar_expect[a], then_op = s->bar_op[a];
  if (!there && *expect) {
    for (int i = 0; i < run->nwarps; i++) {
      const sim_warp *v = &wk->warps[i];
      if (v->state == SIM_W_BAR && !v->bar_named && !v->bar_part && v->bar_id == a) {
        there |= 1u << i;
        then_op = run->m->code[v->bar_pc].sub;
      }
    }
  }
  if (there && (then_expect != *expect || then_op != in->sub)) {
    char now[40], then[40], warps[80];
    count_words(*expect, in->sub, now, sizeof now);
    count_words(then_expect, then_op, then, sizeof then);
    warp_list(there, warps, sizeof warps);
    return sim_fail(wk, w, l, in, "%s on barrier %lld %s, where warps %s arrived %s: the warps "
                    "that meet at one barrier must give it the same thread count (or none), and "
                    "bar.red is used there alone", bar_name(in), (long long)a, now, warps, then);
  }
  return 0;
}

/* Any arrival: its checks, and a barrier with a count's phase. A barrier without a count keeps
 * no phase: its warps wait, and sim_sched.c's release_barrier finds them there. */
int sim_bar_arrive(sim_worker *wk, sim_warp *w, sim_frame *t, const sim_inst *in, int pc,
                   uint32_t em) {
  int id = 0, expect = 0;
  if (check_arrival(wk, w, in, em, &id, &expect) < 0) return SIM_W_ERR;
  t->pc = pc + 1;
  if (expect) {
    sim_slot *s = &wk->slots[wk->cur];
    s->bar_open |= 1u << id;
    s->bar_warps[id] |= 1u << w->index;
    s->bar_expect[id] = (uint8_t)expect;
    s->bar_op[id] = in->sub;
    if (wk->run->lat) {
      uint64_t at = sim_lat_arrival(w);
      if (at > s->bar_tmax[id]) s->bar_tmax[id] = at;
    }
    if (sim_popcount(s->bar_warps[id]) >= expect) {
      complete(wk, s, w, in, id);
      return 0;
    }
    if (in->ty2) return 0; /* bar.arrive: counted, and on */
  }
  return sim_bar_wait(w, t, pc, id, expect != 0);
}

int sim_bar_stuck(sim_worker *wk, const sim_warp *w) {
  if (w->bar_named == 2) return sim_mbar_stuck(wk, w);
  const sim_run *run = wk->run;
  const sim_slot *s = &wk->slots[wk->cur];
  const sim_inst *in = &run->m->code[w->bar_pc];
  int id = w->bar_id, exited = 0, elsewhere = -1, others = 0;
  for (int i = 0; i < run->nwarps; i++) {
    const sim_warp *v = &wk->warps[i];
    if (s->bar_warps[id] >> i & 1) continue;
    others++;
    if (v->state == SIM_W_DONE) exited++;
    else if (v->state == SIM_W_BAR && elsewhere < 0) elsewhere = i;
  }
  char where[300], at[400] = "", arrived[80];
  sim_srcline(run->m, in, where, sizeof where);
  warp_list(s->bar_warps[id], arrived, sizeof arrived);
  if (elsewhere >= 0) {
    const sim_warp *v = &wk->warps[elsewhere];
    char line[300];
    sim_srcline(run->m, &run->m->code[v->bar_pc], line, sizeof line);
    snprintf(at, sizeof at, ", warp %d waits at barrier %d at %s", elsewhere, v->bar_id, line);
  }
  return sim_fail(wk, w, __builtin_ctz(w->live), in,
                  "barrier %d at %s waits for %d threads (%d warps), and %d of its warps have "
                  "arrived (warps %s), but no other warp of the block can arrive: of the %d "
                  "others, %d have exited%s. On a GPU the block hangs here. A barrier's thread "
                  "count must be the number of threads that reach it (bar.sync or bar.arrive), in "
                  "whole warps",
                  id, where, s->bar_expect[id] * SIM_WARP, s->bar_expect[id],
                  sim_popcount(s->bar_warps[id]), arrived, others, exited, at);
}
