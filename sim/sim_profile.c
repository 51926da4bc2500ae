/* sim_profile.c: folds what the workers gathered during a launch into the timing model's inputs
 * (sim_profile): the instruction mix by pipe, atomics per address, each block's own time, and
 * the memory traffic past L1 and L2 from the replayed trace (sim_cache.c).
 *
 * Stance: the mix is counted in PTX instructions but weighed in the machine instructions they
 * become on sm_90 (a 64-bit add is two, an f32 division about ten and a special-function op),
 * from per-instruction execution counts the simulator keeps anyway, so it costs nothing while
 * the launch runs. */
#include <stdlib.h>
#include <string.h>

#include "sim_run.h"

typedef struct inst_cost {
  int cls;       /* SIM_CLS_* of the main pipe */
  double weight; /* machine instructions on that pipe */
  double sfu;    /* and on the special-function unit */
  double flops;  /* per thread */
} inst_cost;

static inst_cost alu_cost(const sim_inst *in) {
  int f64 = in->ty == SIM_T_F64, f32 = in->ty == SIM_T_F32, w64 = sim_type_size(in->ty) == 8;
  int fcls = f64 ? SIM_CLS_FP64 : SIM_CLS_FP32;
  int approx = (in->mod & SIM_MOD_APPROX) != 0;
  if (in->op == SIM_OP_ALU && (in->flags & SIM_IF_FOLDED)) {
    /* ptxas evaluated it (sim_contract.c): a move, or a multiply by the divisor's reciprocal */
    if (in->sub == SIM_ALU_DIV) return (inst_cost){SIM_CLS_FP32, 1, 0, 1};
    if (in->sub == SIM_ALU_DIV_ADD) return (inst_cost){SIM_CLS_FP32, 1, 0, 2};
    return (inst_cost){SIM_CLS_ALU, 1, 0, 0};
  }
  switch (in->sub) {
    case SIM_ALU_DIV_ADD: /* MUFU.RCP and one FFMA (sim_contract.c) */
      return (inst_cost){SIM_CLS_FP32, 1, 1, 2};
    case SIM_ALU_DIV:
    case SIM_ALU_REM:
      if (f32)
        return approx ? (inst_cost){SIM_CLS_FP32, 2, 1, 1} : (inst_cost){SIM_CLS_FP32, 9, 1, 1};
      if (f64) return (inst_cost){SIM_CLS_FP64, 9, 1, 1};
      return (inst_cost){SIM_CLS_INT, w64 ? 40 : 18, 1, 0};
    case SIM_ALU_SQRT:
    case SIM_ALU_RCP:
      if (f64) return (inst_cost){SIM_CLS_FP64, 8, 1, 1};
      return approx ? (inst_cost){SIM_CLS_FP32, 0, 1, 1} : (inst_cost){SIM_CLS_FP32, 6, 1, 1};
    case SIM_ALU_RSQRT:
    case SIM_ALU_EX2:
    case SIM_ALU_LG2:
    case SIM_ALU_SIN:
    case SIM_ALU_COS:
    case SIM_ALU_TANH:
      if (f64) return (inst_cost){SIM_CLS_FP64, 8, 1, 1};
      return (inst_cost){SIM_CLS_FP32, 1, 1, 1};
    case SIM_ALU_FMA:
    case SIM_ALU_MAD:
      if (f32 || f64) return (inst_cost){fcls, 1, 0, 2};
      return (inst_cost){SIM_CLS_INT, w64 ? 4 : 1, 0, 0};
    case SIM_ALU_MUL:
    case SIM_ALU_MULHI:
    case SIM_ALU_MULWIDE:
    case SIM_ALU_MADHI:
    case SIM_ALU_MADWIDE:
    case SIM_ALU_MUL24:
    case SIM_ALU_MAD24:
      if (f32 || f64) return (inst_cost){fcls, 1, 0, 1};
      return (inst_cost){SIM_CLS_INT, w64 ? 4 : 1, 0, 0};
    case SIM_ALU_ADD:
    case SIM_ALU_SUB:
    case SIM_ALU_MIN:
    case SIM_ALU_MAX:
    case SIM_ALU_ABS:
    case SIM_ALU_NEG:
    case SIM_ALU_COPYSIGN:
      if (f32 || f64) return (inst_cost){fcls, 1, 0, in->sub <= SIM_ALU_SUB ? 1 : 0};
      return (inst_cost){SIM_CLS_ALU, w64 ? 2 : 1, 0, 0};
    case SIM_ALU_CVT:
      if (f64 || in->ty2 == SIM_T_F64) return (inst_cost){SIM_CLS_FP64, 1, 0, 0};
      return (inst_cost){SIM_CLS_INT, 1, 0, 0};
    default: /* the rest issue once (twice on 64 bits) on the pipe their row names */
      return (inst_cost){sim_alu_pipe(in->sub) == PIPE_INT ? SIM_CLS_INT : SIM_CLS_ALU,
                         w64 ? 2 : 1, 0, 0};
  }
}

/* The cost of what is not arithmetic with an opcode of its own: comparisons, SIM_OP_ALU, memory,
 * barriers, control flow, warp-wide and tensor instructions. */
static inst_cost other_cost(const sim_inst *in) {
  switch (in->op) {
    case SIM_OP_SETP:
      if (in->ty == SIM_T_F64) return (inst_cost){SIM_CLS_FP64, 1, 0, 0};
      return (inst_cost){in->ty == SIM_T_F32 ? SIM_CLS_FP32 : SIM_CLS_ALU,
                         sim_type_size(in->ty) == 8 ? 2 : 1, 0, 0};
    case SIM_OP_ALU: return alu_cost(in);
    case SIM_OP_LD:
    case SIM_OP_ST:
      if (in->space == SIM_SP_SHARED) return (inst_cost){SIM_CLS_SHARED, 1, 0, 0};
      if (in->space == SIM_SP_LOCAL) return (inst_cost){SIM_CLS_LOCAL, 1, 0, 0};
      return (inst_cost){SIM_CLS_GLOBAL, 1, 0, 0};
    case SIM_OP_ATOM:
      return (inst_cost){in->space == SIM_SP_SHARED ? SIM_CLS_SHARED : SIM_CLS_ATOM, 1, 0, 0};
    case SIM_OP_TEX: /* priced as ld.global.nc, the read-only path it shares: a first model */
      return (inst_cost){SIM_CLS_GLOBAL, 1, 0, 0};
    case SIM_OP_BAR: return (inst_cost){SIM_CLS_BAR, 1, 0, 0};
    case SIM_OP_MBAR: /* an mbarrier in shared memory: a shared-memory atomic, as a first model */
    case SIM_OP_MBARWAIT: return (inst_cost){SIM_CLS_SHARED, 1, 0, 0};
    case SIM_OP_BRA:
    case SIM_OP_CALL:
    case SIM_OP_CALLS:
    case SIM_OP_CALLI:
    case SIM_OP_RETF:
    case SIM_OP_RETS:
    case SIM_OP_EXIT: return (inst_cost){SIM_CLS_BRANCH, 1, 0, 0};
    case SIM_OP_SHFL:
    case SIM_OP_VOTE: return (inst_cost){SIM_CLS_SHARED, 1, 0, 0};
    case SIM_OP_TENSOR:
      /* wmma.load/store, ldmatrix, cp.async by their space; mma and cvt issue once */
      if (in->space == SIM_SP_SHARED) return (inst_cost){SIM_CLS_SHARED, 1, 0, 0};
      if (in->space) return (inst_cost){SIM_CLS_GLOBAL, 1, 0, 0};
      return (inst_cost){SIM_CLS_ALU, 1, 0, 0};
    case SIM_OP_NOP:
    case SIM_OP_FENCE:
    case SIM_OP_BARWARP: return (inst_cost){SIM_CLS_ALU, 0, 0, 0};
    default: return (inst_cost){SIM_CLS_ALU, 1, 0, 0};
  }
}

/* The cost of one instruction: the arithmetic opcodes here, the rest in other_cost. */
static inst_cost cost_of(const sim_inst *in) {
  switch (in->op) {
    case SIM_OP_ADD_F32:
    case SIM_OP_SUB_F32:
    case SIM_OP_MUL_F32: return (inst_cost){SIM_CLS_FP32, 1, 0, 1};
    case SIM_OP_FMA_F32: return (inst_cost){SIM_CLS_FP32, 1, 0, 2};
    case SIM_OP_ADD_F64:
    case SIM_OP_SUB_F64:
    case SIM_OP_MUL_F64: return (inst_cost){SIM_CLS_FP64, 1, 0, 1};
    case SIM_OP_FMA_F64: return (inst_cost){SIM_CLS_FP64, 1, 0, 2};
    case SIM_OP_CVT_F64_F32: return (inst_cost){SIM_CLS_FP64, 1, 0, 0};
    case SIM_OP_CVT_F32_S32:
    case SIM_OP_CVT_F32_U32: return (inst_cost){SIM_CLS_INT, 1, 0, 0};
    case SIM_OP_MUL32:
    case SIM_OP_MAD32:
    case SIM_OP_MULWIDE_S32:
    case SIM_OP_MULWIDE_U32:
    case SIM_OP_MADWIDE_S32:
    case SIM_OP_MADWIDE_U32: return (inst_cost){SIM_CLS_INT, 1, 0, 0};
    case SIM_OP_MUL64:
    case SIM_OP_MAD64: return (inst_cost){SIM_CLS_INT, 4, 0, 0};
    case SIM_OP_ADD64:
    case SIM_OP_SUB64:
    case SIM_OP_SHL64:
    case SIM_OP_SHR_U64:
    case SIM_OP_SHR_S64:
    case SIM_OP_AND64:
    case SIM_OP_OR64:
    case SIM_OP_XOR64:
    case SIM_OP_SELP64: return (inst_cost){SIM_CLS_ALU, 2, 0, 0};
    default: return other_cost(in);
  }
}

/* The pipe an instruction's result comes from, and the issue slots it takes on it. */
static int class_of(const sim_inst *in, double *slots) {
  inst_cost c = cost_of(in);
  *slots = c.weight + c.sfu;
  return c.cls;
}

/* The mix by pipe, and the warps' waits for their own results (sim_depend.c) as a share of the
 * instructions they issued. */
static void fold_mix(const sim_run *run, const sim_worker *wks, int nw, sim_profile *p) {
  const sim_module *m = run->m;
  double *warps = calloc((size_t)m->ncode + 1, sizeof *warps), issued = 0, threads = 0;
  const char *folded = m->folded;
  int executed = 0;
  for (int i = 0; i < m->ncode; i++) {
    double warp = 0, thread = 0;
    for (int w = 0; w < nw; w++) {
      warp += (double)wks[w].ic[i].warp;
      thread += (double)wks[w].ic[i].thread;
    }
    if (warps) warps[i] = warp;
    issued += warp;
    threads += thread;
    if (warp == 0) continue;
    executed++;
    inst_cost c = cost_of(&m->code[i]);
    if (folded && folded[i] == 1) continue;
    double issued_share = folded && folded[i] == 2 ? 0.25 : 1; /* unrolled by four */
    p->cls[c.cls] += warp * c.weight * issued_share;
    p->cls[SIM_CLS_SFU] += warp * c.sfu;
    if (c.cls == SIM_CLS_FP64)
      p->thread_flops64 += thread * c.flops;
    else
      p->thread_flops32 += thread * c.flops;
  }
  if (warps && issued > 0)
    p->dep_stall_ratio = sim_dep_stalls(m, &run->dev->desc.perf, warps, class_of) / issued;
  free(warps);
  /* Spill code runs where the registers are short, which is mostly in the loops that make up
   * the work: its static bytes are scaled by how many times, on average, each executed
   * instruction ran per thread. */
  double all_threads = (double)run->nblocks * run->nthreads;
  if (run->opts && run->opts->spill_bytes && executed && all_threads > 0)
    p->spill_bytes_thread = (double)run->opts->spill_bytes * threads / (executed * all_threads);
  p->local_frame_bytes = run->opts ? (double)run->opts->local_frame_bytes : 0;
}

static void fold_atomics(const sim_worker *wks, int nw, sim_profile *p) {
  sim_atab all = {0};
  for (int w = 0; w < nw; w++) {
    p->atom_ops += wks[w].prof.atom_ops;
    p->atom_ops_l2 += wks[w].prof.atom_ops_l2;
    p->atom_sectors += wks[w].prof.atom_sectors;
    sim_atab_merge(&all, &wks[w].prof.atom);
  }
  sim_atab_price(&all, p);
  sim_atab_free(&all);
}

/* The GPU's order: blocks resident together (a wave) progress side by side, so their accesses
 * interleave by each warp's progress; waves follow one another. As one 64-bit key: wave, the
 * warp's request number, the block within its wave, the warp; 0 when a field does not fit, and
 * then the comparison sort below decides. */
static uint64_t order_key(const sim_trace_ent *e, uint32_t wave_blocks) {
  uint64_t wave = e->block / wave_blocks, inwave = e->block % wave_blocks;
  if (wave >= (1u << 16) || e->seq >= (1u << 22) || inwave >= (1u << 16) || e->warp >= 64) return 0;
  return wave << 48 | (uint64_t)e->seq << 26 | inwave << 10 | (uint64_t)e->warp << 4 | 1;
}

static int cmp_ent(const void *a, const void *b, void *wave_blocks) {
  const sim_trace_ent *x = a, *y = b;
  uint32_t wb = *(const uint32_t *)wave_blocks, wx = x->block / wb, wy = y->block / wb;
  if (wx != wy) return wx < wy ? -1 : 1;
  if (x->seq != y->seq) return x->seq < y->seq ? -1 : 1;
  if (x->block != y->block) return x->block < y->block ? -1 : 1;
  return (x->warp > y->warp) - (x->warp < y->warp);
}

/* Sorts the trace into the GPU's order: a least-significant-digit radix sort of (key, index)
 * pairs on order_key (the trace is tens of thousands of entries, sorted after every launch), or
 * qsort when a key does not fit. Returns the sorted array: e or out. */
typedef struct keyed {
  uint64_t key;
  size_t at;
} keyed;

static sim_trace_ent *sort_trace(sim_trace_ent *e, sim_trace_ent *out, keyed *k, size_t n,
                                 uint32_t wave_blocks) {
  int fits = k != NULL && out != NULL;
  for (size_t i = 0; i < n && fits; i++)
    fits = (k[i] = (keyed){order_key(&e[i], wave_blocks), i}).key != 0;
  if (!fits) {
    qsort_r(e, n, sizeof *e, cmp_ent, &wave_blocks);
    return e;
  }
  keyed *src = k, *dst = k + n;
  for (int shift = 4; shift < 64; shift += 12) {
    size_t count[4097] = {0};
    for (size_t i = 0; i < n; i++) count[(src[i].key >> shift & 4095) + 1]++;
    for (int d = 0; d < 4096; d++) count[d + 1] += count[d];
    for (size_t i = 0; i < n; i++) dst[count[src[i].key >> shift & 4095]++] = src[i];
    keyed *t = src;
    src = dst;
    dst = t;
  }
  for (size_t i = 0; i < n; i++) out[i] = e[src[i].at];
  return out;
}

void sim_profile_fold(sim_run *run, sim_worker *wks, int nw, const sim_stats *st, sim_profile *p) {
  memset(p, 0, sizeof *p);
  p->valid = 1;
  p->regs_per_thread = run->opts ? run->opts->regs_per_thread : 0;
  p->lat_ref = (double)run->lat_global;
  p->ld_sectors = (double)st->total.ld_sectors;
  p->st_sectors = (double)st->total.st_sectors;
  p->shared_wavefronts = (double)st->total.shared_wavefronts;
  fold_mix(run, wks, nw, p);
  fold_atomics(wks, nw, p);
  size_t n = 0;
  for (int w = 0; w < nw; w++) {
    const sim_wprof *s = &wks[w].prof;
    p->l1_wavefronts += s->l1_wavefronts;
    p->st_lines += s->st_lines;
    p->block_issue += s->block_issue;
    p->block_mem += s->block_mem;
    p->block_other += s->block_other;
    n += s->n;
  }
  sim_device *dev = run->dev;
  sim_trace_ent *all = dev->trace_buf[SIM_TRACE_BUFS - 1];
  if (n > dev->trace_cap[SIM_TRACE_BUFS - 1]) {
    free(all);
    all = malloc(n * sizeof *all);
    dev->trace_buf[SIM_TRACE_BUFS - 1] = all;
    dev->trace_cap[SIM_TRACE_BUFS - 1] = all ? n : 0;
  }
  if (n && !all) return; /* no replay: the launch counts as having no reuse in L1 or L2 */
  /* A long trace is thinned to about SIM_TRACE_TARGET entries by keeping the lines whose hash
   * has `extra` more zero bits: the same lines in every run, so the result stays deterministic. */
  int extra = 0;
  while (extra < 20 && (double)n / (double)(1 << extra) > SIM_TRACE_TARGET) extra++;
  size_t k = 0;
  for (int w = 0; w < nw; w++) {
    const sim_wprof *s = &wks[w].prof;
    if (!s->n) continue; /* an idle worker's buffer may be NULL */
    if (!extra) {
      memcpy(all + k, s->ent, s->n * sizeof *all);
      k += s->n;
      continue;
    }
    for (size_t i = 0; i < s->n; i++)
      if (s->ent[i].level >= extra) all[k++] = s->ent[i];
  }
  n = k;
  int bps =
      sim_occupancy(&run->dev->desc, run->nthreads, p->regs_per_thread, run->shared_user, NULL);
  uint32_t wave = (uint32_t)run->dev->desc.sm_count * (uint32_t)(bps > 0 ? bps : 1);
  size_t need = n * (sizeof(sim_trace_ent) + 2 * sizeof(keyed));
  if (need > dev->scratch_cap) {
    free(dev->scratch);
    dev->scratch = malloc(need);
    dev->scratch_cap = dev->scratch ? need : 0;
  }
  sim_trace_ent *tmp = dev->scratch;
  keyed *keys = tmp ? (keyed *)(void *)(tmp + n) : NULL;
  sim_trace_ent *sorted = n ? sort_trace(all, tmp, keys, n, wave) : all; /* qsort wants no NULL */
  sim_cache_replay(run, wks, nw, sorted, n, bps, (double)(1 << (SIM_TRACE_SHIFT + extra)), p);
}
