/* sim_warpsync.c: the warp-synchronous instructions that take a membermask: shfl.sync,
 * vote.sync, match.sync, redux.sync, elect.sync and bar.warp.sync (__shfl_*_sync, __ballot_sync
 * and friends, __match_*_sync, __reduce_*_sync, cg::invoke_one, __syncwarp).
 *
 * Stance: each lane's group is the non-exited lanes its own membermask names, as the PTX ISA
 * defines these instructions ("wait until all non-exited threads corresponding to membermask
 * have executed ... with the same membermask value", then operate "across all non-exited threads
 * in the membermask"). Lanes of one warp that pass different masks form different groups: the
 * tiles of cg::tiled_partition, and the groups of cg::labeled_partition or of __reduce_*_sync on
 * a mask from __match_any_sync (one group per key, interleaved across the warp). Taking one
 * lane's mask for the whole warp, the cheaper reading, gives every lane group 0's answer.
 *
 * What the ISA leaves undefined, a GPU hangs on or answers at random, so it fails the launch
 * with the lanes named: a lane outside its own mask, a live lane of a mask that does not run
 * the instruction with it (a divergent call), and two lanes of one group passing different masks.
 * bar.warp.sync is exempt from the second: since Volta the lanes of a mask may meet at different
 * __syncwarp() calls, which the divergence stack runs one path at a time. A shuffle that
 * reads a lane not running it is none of these: the ISA leaves only the value it gets
 * undefined, and a kernel may read such a lane and leave out what it got, so under the race
 * check the value is followed and reported where a lane uses it (sim_stale.c).
 *
 * Cost: the common call, every lane passing one mask, pays one pass over the lanes to see so;
 * different masks cost a pass per group. */
#include <stdint.h>
#include <string.h>

#include "sim_run.h"

/* Each executing lane's group (its mask's live lanes) into grp[l], after the checks above
 * (the divergence check when diverge is set). E is the register row of the masks; what names
 * the call in messages ("__shfl_sync"), noun the kind in "a divergent shuffle". Returns 0, or -1
 * after sim_fail. */
static int groups(sim_worker *wk, sim_warp *w, const sim_inst *in, const uint64_t *E,
                  const char *what, const char *noun, int diverge, uint32_t em, uint32_t *grp) {
  uint32_t first = (uint32_t)E[__builtin_ctz(em)], differ = 0;
  LANES(differ |= (uint32_t)E[l] ^ first);
  uint32_t outside = 0, missing = 0;
  LANES({
    uint32_t m = (uint32_t)E[l];
    if (!((m >> l) & 1)) outside |= 1u << l;
    missing |= m & w->live & ~em;
    grp[l] = m & w->live;
  });
  if (outside) {
    int l = __builtin_ctz(outside);
    return sim_fail(wk, w, l, in,
                    "%s with mask 0x%08x, but lanes 0x%08x run it without their own bit in the "
                    "mask (each thread that calls it must be in the mask: 0xffffffff for a whole "
                    "warp)",
                    what, (uint32_t)E[l], outside);
  }
  if (diverge && missing) {
    int l = __builtin_ctz(em);
    for (uint32_t mm = em; mm; mm &= mm - 1)
      if (E[__builtin_ctz(mm)] & missing) { l = __builtin_ctz(mm); break; }
    return sim_fail(wk, w, l, in,
                    "%s with mask 0x%08x, but lanes 0x%08x of that mask are not executing it "
                    "(a divergent %s)",
                    what, (uint32_t)E[l], (uint32_t)E[l] & missing, noun);
  }
  if (!differ) return 0;
  /* lanes whose masks differ: each lane of a group must pass the group's mask */
  for (uint32_t mm = em; mm; mm &= mm - 1) {
    int l = __builtin_ctz(mm);
    for (uint32_t g = (uint32_t)E[l] & em; g; g &= g - 1) {
      int j = __builtin_ctz(g);
      if ((uint32_t)E[j] != (uint32_t)E[l])
        return sim_fail(wk, w, l, in,
                        "%s: lane %d passes mask 0x%08x, but lane %d of that mask passes 0x%08x "
                        "(the lanes that synchronise together must pass the same mask)",
                        what, l, (uint32_t)E[l], j, (uint32_t)E[j]);
    }
  }
  return 0;
}

/* shfl.sync: lane l reads a from the lane its mode and operands name, wherever that lane's
 * group: the mask only synchronises (the ISA's SourceA[j] is any active lane's). A lane that
 * reads a lane not running the shuffle gets that lane's stale register here and an undefined
 * value on a GPU: under the race check, sim_stale.c follows it to where a lane uses it (a
 * kernel may well read such a lane and leave out what it got). */
static int shfl(sim_worker *wk, sim_warp *w, const sim_inst *in, uint64_t *R, uint32_t em) {
  uint32_t grp[SIM_WARP];
  if (groups(wk, w, in, R + in->e * SIM_WARP, "__shfl_sync", "shuffle", 1, em, grp) < 0) return -1;
  const uint64_t *A = R + in->a * SIM_WARP, *B = R + in->b * SIM_WARP;
  const uint64_t *C = R + in->c * SIM_WARP;
  uint64_t src[SIM_WARP];
  uint8_t from[SIM_WARP]; /* the lane each lane read */
  uint32_t pm = 0, outside = 0; /* the lanes that read a lane not running the shuffle */
  memcpy(src, A, sizeof src);
  LANES({
    int lane = l, b = (int)(B[l] & 31), c = (int)(C[l] & 31), seg = (int)((C[l] >> 8) & 31);
    int maxl = (lane & seg) | (c & ~seg), minl = lane & seg, j;
    switch (in->sub) {
      case SIM_SHFL_UP: j = lane - b; break;
      case SIM_SHFL_DOWN: j = lane + b; break;
      case SIM_SHFL_BFLY: j = lane ^ b; break;
      default: j = minl | (b & ~seg); break;
    }
    int p = in->sub == SIM_SHFL_UP ? j >= maxl : j <= maxl; /* the source lane is in range */
    if (!p) j = lane;
    from[l] = (uint8_t)(j & 31);
    outside |= (uint32_t)!((em >> (j & 31)) & 1) << l;
    pm |= (uint32_t)p << l;
    R[in->d * SIM_WARP + l] = (uint32_t)src[j & 31];
  });
  if (in->d2 >= 0) w->P[in->d2] = (w->P[in->d2] & ~em) | pm;
  const sim_launch_opts *o = wk->run->opts;
  if ((outside || w->stale) && o && o->race_check) return sim_stale_shfl(wk, w, in, em, from, src);
  return 0;
}

/* vote.sync: over each lane's group, all / any / uni of the predicate, or the ballot of it (a
 * lane outside the group contributes 0). */
static int vote(sim_worker *wk, sim_warp *w, const sim_inst *in, uint64_t *R, uint32_t em) {
  static const char *const names[] = {"__all_sync", "__any_sync", "__uni_sync", "__ballot_sync"};
  uint32_t grp[SIM_WARP];
  const char *what = names[in->sub - SIM_VOTE_ALL];
  if (groups(wk, w, in, R + in->e * SIM_WARP, what, "vote", 1, em, grp) < 0) return -1;
  uint32_t p = w->P[in->a];
  if (in->flags & SIM_IF_NEG_PRED) p = ~p;
  p &= em;
  if (in->sub == SIM_VOTE_BALLOT) {
    LANES(R[in->d * SIM_WARP + l] = p & grp[l]);
    return 0;
  }
  uint32_t v = 0;
  LANES({
    uint32_t g = grp[l], q = p & g;
    int t = in->sub == SIM_VOTE_ALL ? q == g : in->sub == SIM_VOTE_ANY ? q != 0 : q == 0 || q == g;
    v |= (uint32_t)t << l;
  });
  w->P[in->d] = (w->P[in->d] & ~em) | v;
  return 0;
}

/* match.any: each lane gets the lanes of its group holding its value; match.all: its group, and
 * a true predicate, when all of the group hold one value, else 0 and false. */
static int match(sim_worker *wk, sim_warp *w, const sim_inst *in, uint64_t *R, uint32_t em) {
  const char *what = in->sub == SIM_MATCH_ALL ? "__match_all_sync" : "__match_any_sync";
  uint32_t grp[SIM_WARP];
  if (groups(wk, w, in, R + in->e * SIM_WARP, what, "match", 1, em, grp) < 0) return -1;
  const uint64_t *A = R + in->a * SIM_WARP;
  uint64_t *D = R + in->d * SIM_WARP;
  uint64_t msk = in->ty == SIM_T_B64 ? ~0ull : 0xffffffffull;
  if (in->sub == SIM_MATCH_ANY) {
    LANES({
      uint32_t r = 0;
      for (uint32_t g = grp[l]; g; g &= g - 1) {
        int j = __builtin_ctz(g);
        r |= (uint32_t)(((A[j] ^ A[l]) & msk) == 0) << j;
      }
      D[l] = r;
    });
    return 0;
  }
  uint32_t pm = 0;
  LANES({
    uint32_t g = grp[l];
    int same = 1;
    for (uint32_t h = g; h; h &= h - 1) same &= ((A[__builtin_ctz(h)] ^ A[l]) & msk) == 0;
    D[l] = same ? g : 0;
    pm |= (uint32_t)same << l;
  });
  if (in->d2 >= 0) w->P[in->d2] = (w->P[in->d2] & ~em) | pm;
  return 0;
}

/* elect.sync (cg::invoke_one, cuda::ptx::elect_sync): each group's leader is its lowest lane,
 * the same every time for the same mask, as the PTX ISA asks; d gets the leader's lane in every
 * lane of the group, d2 is true in the leader alone. A mask's exited lanes are no part of its
 * group, so the leader is the lowest of its lanes still running, all of which run it (a live
 * lane of the mask elsewhere is a divergent call, which the GPU waits on for ever). */
static int elect(sim_worker *wk, sim_warp *w, const sim_inst *in, uint64_t *R, uint32_t em) {
  uint32_t grp[SIM_WARP], pm = 0;
  if (groups(wk, w, in, R + in->e * SIM_WARP, "elect.sync (cg::invoke_one)", "election", 1, em,
             grp) < 0)
    return -1;
  LANES({
    int leader = __builtin_ctz(grp[l]); /* grp[l] holds l itself: checked */
    if (in->d >= 0) R[in->d * SIM_WARP + l] = (uint32_t)leader;
    pm |= (uint32_t)(leader == l) << l;
  });
  if (in->d2 >= 0) w->P[in->d2] = (w->P[in->d2] & ~em) | pm;
  return 0;
}

/* The reduction k (redux's index into its names) of a over the lanes of g, signed when s. */
static uint32_t reduce(int k, int s, const uint64_t *A, uint32_t g) {
  uint32_t acc = (uint32_t)A[__builtin_ctz(g)];
  for (g &= g - 1; g; g &= g - 1) {
    uint32_t v = (uint32_t)A[__builtin_ctz(g)];
    switch (k) {
      case 0: acc += v; break;
      case 1: acc = s ? ((int32_t)v < (int32_t)acc ? v : acc) : (v < acc ? v : acc); break;
      case 2: acc = s ? ((int32_t)v > (int32_t)acc ? v : acc) : (v > acc ? v : acc); break;
      case 3: acc &= v; break;
      case 4: acc |= v; break;
      default: acc ^= v; break;
    }
  }
  return acc;
}

/* redux.sync: each group's sum (wrapping), minimum, maximum, and, or or xor, in its lanes; one
 * reduction per group, not per lane. */
static int redux(sim_worker *wk, sim_warp *w, const sim_inst *in, uint64_t *R, uint32_t em) {
  static const char *const names[] = {"__reduce_add_sync", "__reduce_min_sync", "__reduce_max_sync",
                                      "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync"};
  int k = in->sub == SIM_ALU_ADD ? 0 : in->sub == SIM_ALU_MIN ? 1 : in->sub == SIM_ALU_MAX ? 2
        : in->sub == SIM_ALU_AND ? 3 : in->sub == SIM_ALU_OR ? 4 : 5;
  uint32_t grp[SIM_WARP];
  if (groups(wk, w, in, R + in->e * SIM_WARP, names[k], "reduction", 1, em, grp) < 0) return -1;
  const uint64_t *A = R + in->a * SIM_WARP;
  uint64_t *D = R + in->d * SIM_WARP;
  /* a group is its lanes' mask: they all run it (checked), so the group's lanes are its own */
  for (uint32_t left = em; left;) {
    uint32_t g = grp[__builtin_ctz(left)];
    uint32_t acc = reduce(k, in->ty == SIM_T_S32, A, g);
    for (uint32_t h = g; h; h &= h - 1) D[__builtin_ctz(h)] = acc;
    left &= ~g;
  }
  return 0;
}

/* bar.warp.sync: orders the warp's shared accesses for the race checker (sim_race.c, which
 * counts any __syncwarp() as ordering the whole warp), and its lanes' releases and acquires
 * (sim_hb.c). */
static int barwarp(sim_worker *wk, sim_warp *w, const sim_inst *in, uint32_t em) {
  uint32_t grp[SIM_WARP];
  const uint64_t *E = w->R + in->a * SIM_WARP; /* bar.warp.sync's mask is its one operand */
  if (groups(wk, w, in, E, "__syncwarp", "__syncwarp", 0, em, grp) < 0) return -1;
  w->synced = ++w->wsync;
  if (wk->hb) sim_hb_syncwarp(wk, w);
  return 0;
}

int sim_warpsync_exec(sim_worker *wk, sim_warp *w, const sim_inst *in, uint32_t em) {
  if (!em) return 0; /* guarded off in every lane: nothing runs, nothing waits */
  switch (in->op) {
    case SIM_OP_SHFL: return shfl(wk, w, in, w->R, em);
    case SIM_OP_VOTE: return vote(wk, w, in, w->R, em);
    case SIM_OP_MATCH: return in->sub == SIM_MATCH_ELECT ? elect(wk, w, in, w->R, em)
                                                         : match(wk, w, in, w->R, em);
    case SIM_OP_REDUX: return redux(wk, w, in, w->R, em);
    default: return barwarp(wk, w, in, em); /* SIM_OP_BARWARP */
  }
}
