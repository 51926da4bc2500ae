/* sim_int.h: the simulator's internal data model, shared by the parser, the decoder, the
 * executor and the launcher. Nothing outside sim/ includes it.
 *
 * Stance: everything expensive happens at load time. A module is parsed once into a flat array of
 * pre-decoded instructions (sim_inst) whose operands are all register rows: immediates become
 * read-only "constant rows" and special registers (%tid.x ...) become rows filled per warp, so
 * the executor never asks "is this operand an immediate?". Registers are numbered module-wide
 * (each function gets its own range), which makes an ordinary call cheap: a jump and a copy of
 * the arguments. A function that can be active twice at once (it is on a cycle of the call graph,
 * or its address is taken, so an indirect call may reach it) is "stacked" instead (sim_calls.c):
 * a call to it saves the callee's register rows, predicates and parameter slots on a per-warp
 * save stack and restores them on return, and its local variables (NVRTC's __local_depot) live
 * in a frame on a per-thread call stack of the GPU's size (cudaLimitStackSize, 1 KiB), so each
 * activation has its own registers and its own local memory. Restoring only the callee's rows is
 * enough: a function's rows are clobbered only by another activation of the same function, and
 * that activation began at a call that saved them. The turned-down alternative, renaming rows
 * per activation, would put an add on every operand of every instruction. A warp's register file
 * is rows x 32 lanes of uint64_t, lane-major per row, so an instruction is one tight loop over
 * the active lanes. Predicates are 32-bit lane masks. */
#ifndef CUDALAB_SIM_INT_H
#define CUDALAB_SIM_INT_H

#include <stdint.h>
#include <stddef.h>
#include "launch_bounds.h" /* include/: the reader the REPL shares */
#include "sim.h"

/* The set bits of x. Without -mpopcnt, __builtin_popcount is a library call (7% of an atomic
 * histogram's modelled launch); this is as fast and portable. */
static inline int sim_popcount(uint32_t x) {
  x = x - ((x >> 1) & 0x55555555u);
  x = (x & 0x33333333u) + ((x >> 2) & 0x33333333u);
  return (int)((((x + (x >> 4)) & 0x0f0f0f0fu) * 0x01010101u) >> 24);
}

/* 128-bit integers for wide multiplies and saturating conversions. GCC and clang both have
 * them; __extension__ keeps -Wpedantic quiet about a type ISO C lacks. */
__extension__ typedef __int128 sim_i128;
__extension__ typedef unsigned __int128 sim_u128;

#define SIM_WARP 32
#define SIM_FULL 0xffffffffu

/* Generic addresses of shared and local memory live in windows no host pointer can reach
 * (user space ends at 2^47), so a generic access can tell them from a global (host) pointer. */
#define SIM_SHARED_WIN 0x0001000000000000ull
#define SIM_LOCAL_WIN 0x0002000000000000ull
#define SIM_WIN_SIZE 0x0000000100000000ull
/* The "address" of device function i (mov.u64 %rd, func; a vtable entry): SIM_FUNC_WIN + 16 i,
 * never a host address, never NULL. An indirect call decodes it back (sim_calls.c). */
#define SIM_FUNC_WIN 0x0003000000000000ull
/* The generic window of the kernel's parameter buffer (cvta.param on a __grid_constant__
 * parameter's address): SIM_PARAM_WIN + its offset. A .param address itself, which mov gives
 * (mov.b64 %rd, k_param_0), is the bare offset, read with ld.param (sim_param_addr.c). */
#define SIM_PARAM_WIN 0x0004000000000000ull

/* PTX scalar types. */
enum {
  SIM_T_NONE, SIM_T_B8, SIM_T_B16, SIM_T_B32, SIM_T_B64, SIM_T_U8, SIM_T_U16, SIM_T_U32,
  SIM_T_U64, SIM_T_S8, SIM_T_S16, SIM_T_S32, SIM_T_S64, SIM_T_F16, SIM_T_F32, SIM_T_F64,
  SIM_T_PRED,
  SIM_T_BF16, SIM_T_F16X2, SIM_T_BF16X2, /* half types: only sim_half.c computes with them */
  SIM_T_U16X2, SIM_T_S16X2, /* two 16-bit integers in a .b32: add, min and max only (sim_alu.c) */
  SIM_T_E4M3X2, SIM_T_E5M2X2, /* two 8-bit floats in a .b16: cvt only (sim_fp8.c) */
  SIM_T_COUNT
};
/* What each type is (sim_base.c). */
int sim_type_size(int t);   /* bytes */
const char *sim_type_name(int t); /* "f32" (without the dot), "?" for no type */
int sim_type_signed(int t); /* 1 for .sN */
int sim_type_float(int t);  /* 1 for .fN */
int sim_type_half(int t);   /* 1 for .f16, .bf16, .f16x2, .bf16x2 */
int sim_type_fp8(int t);    /* 1 for .e4m3x2, .e5m2x2 (sim_fp8.c) */
/* cvt to or from a pair of 8-bit floats (dt or st .e4m3x2 or .e5m2x2; the other .f32, whose two
 * sources are a and b, or .f16x2), with SIM_IF_RELU in flags (sim_fp8.c). */
uint64_t sim_fp8_cvt(int dt, int st, int flags, uint64_t a, uint64_t b);

/* Memory state spaces. */
enum { SIM_SP_NONE, SIM_SP_GLOBAL, SIM_SP_SHARED, SIM_SP_LOCAL, SIM_SP_CONST, SIM_SP_PARAM,
       SIM_SP_FPARAM, SIM_SP_GENERIC };

/* Rounding / modifier flags in sim_inst.mod. */
enum {
  SIM_RND_MASK = 7, SIM_RN = 0, SIM_RZ = 1, SIM_RM = 2, SIM_RP = 3, /* float rounding */
  SIM_RNI = 4, SIM_RZI = 5, SIM_RMI = 6, SIM_RPI = 7,               /* to integral */
  SIM_MOD_FTZ = 8, SIM_MOD_SAT = 16, SIM_MOD_APPROX = 32, SIM_MOD_HASRND = 64,
  SIM_MOD_FULL = 128 /* div.full: also SIM_MOD_APPROX, and scales a huge divisor */
};

/* Comparison operators of setp. */
enum { SIM_CMP_EQ, SIM_CMP_NE, SIM_CMP_LT, SIM_CMP_LE, SIM_CMP_GT, SIM_CMP_GE, SIM_CMP_LO,
       SIM_CMP_LS, SIM_CMP_HI, SIM_CMP_HS, SIM_CMP_EQU, SIM_CMP_NEU, SIM_CMP_LTU, SIM_CMP_LEU,
       SIM_CMP_GTU, SIM_CMP_GEU, SIM_CMP_NUM, SIM_CMP_NAN,
       /* then testp's six kinds (ptx_inst.c's d_testp), then isspacep's spaces: whether a generic
        * address lies in the space's window (sim_alu.c's sim_compare) */
       SIM_CMP_ISGLOBAL = SIM_CMP_NAN + 7, SIM_CMP_ISSHARED, SIM_CMP_ISLOCAL, SIM_CMP_ISPARAM,
       SIM_CMP_ISCONST /* ISGLOBAL and ISCONST: b is a constant row holding the module's
                        * address, whose __constant__ variables they look in */ };

/* Executor opcodes. The hot ones are specialised by type; the long tail goes through
 * SIM_OP_ALU, a per-lane call into sim_alu() with a sub-operation. */
enum {
  SIM_OP_NOP,
  SIM_OP_MOV32, SIM_OP_MOV64,
  SIM_OP_ADD32, SIM_OP_ADD64, SIM_OP_SUB32, SIM_OP_SUB64,
  SIM_OP_MUL32, SIM_OP_MUL64, SIM_OP_MAD32, SIM_OP_MAD64,
  SIM_OP_MULWIDE_S32, SIM_OP_MULWIDE_U32, SIM_OP_MADWIDE_S32, SIM_OP_MADWIDE_U32,
  SIM_OP_AND32, SIM_OP_AND64, SIM_OP_OR32, SIM_OP_OR64, SIM_OP_XOR32, SIM_OP_XOR64,
  SIM_OP_SHL32, SIM_OP_SHL64, SIM_OP_SHR_U32, SIM_OP_SHR_U64, SIM_OP_SHR_S32, SIM_OP_SHR_S64,
  SIM_OP_ADD_F32, SIM_OP_SUB_F32, SIM_OP_MUL_F32, SIM_OP_FMA_F32,
  SIM_OP_ADD_F64, SIM_OP_SUB_F64, SIM_OP_MUL_F64, SIM_OP_FMA_F64,
  SIM_OP_CVT_U64_U32, SIM_OP_CVT_S64_S32, SIM_OP_CVT_F64_F32, SIM_OP_CVT_F32_S32,
  SIM_OP_CVT_F32_U32,
  SIM_OP_SELP32, SIM_OP_SELP64,
  SIM_OP_SETP,   /* ty = operand type, sub = comparison */
  SIM_OP_PAND, SIM_OP_POR, SIM_OP_PXOR, SIM_OP_PNOT, SIM_OP_PMOV, SIM_OP_PSETI, /* predicates */
  SIM_OP_ALU,    /* per-lane sim_alu(sub) */
  SIM_OP_LD, SIM_OP_ST, SIM_OP_LDPARAM, SIM_OP_ATOM,
  SIM_OP_BRA, SIM_OP_EXIT, SIM_OP_RETF, SIM_OP_CALL, SIM_OP_VPRINTF, SIM_OP_TRAP,
  SIM_OP_CALLS,   /* call of a stacked function (sim_calls.c); imm = call index */
  SIM_OP_CALLI,   /* indirect call through register a; imm = call index */
  SIM_OP_RETS,    /* return of a stacked function */
  SIM_OP_BUILTIN, /* __assertfail, malloc, free, operator new/delete; sub = SIM_BI_* */
  SIM_OP_BAR, SIM_OP_BARWARP, SIM_OP_SHFL, SIM_OP_VOTE, SIM_OP_ACTIVEMASK, SIM_OP_CLOCK,
  SIM_OP_PACK, SIM_OP_UNPACK, SIM_OP_CARRY, /* add/sub/mad with the carry flag (.cc, addc) */
  SIM_OP_HALF,   /* per-lane sim_half(sub): f16 / bf16 arithmetic, set, cvt (sim_half.c) */
  SIM_OP_HSETP,  /* setp on f16 / bf16 / f16x2 / bf16x2 (x2: d the low half, d2 the high) */
  SIM_OP_MATCH,  /* match.any / match.all, elect.sync (sub SIM_MATCH_*) */
  SIM_OP_REDUX,  /* redux.sync (sub SIM_ALU_ADD / MIN / MAX / AND / OR / XOR) */
  SIM_OP_TENSOR, /* wmma, mma, ldmatrix, cp.async (sim_tensor.c); aux indexes sim_module.tensor */
  SIM_OP_TEX,    /* tex.{1d,2d,3d}.v4 (sim_tex.c): a the handle, b c e the coordinates, v[] the
                  * four results; ty their type, ty2 the coordinates', sub the dimensions */
  /* mbarrier (sim_mbarrier.c): sub SIM_MB_*, the barrier's address in a + imm (space shared or
   * generic), b the count, state or parity operand; MBAR writes the row d (a state, a count; -1
   * none), MBARWAIT the predicate d; ty2: .noComplete, cp.async's .noinc, or .parity */
  SIM_OP_MBAR, SIM_OP_MBARWAIT,
  SIM_OP_FENCE,  /* membar, fence.sc, fence.acq_rel: changes nothing but the race check's view of
                  * what orders memory (sim_hb.c); flags SIM_IF_ACQUIRE / SIM_IF_RELEASE */
  SIM_OP_COUNT
};

/* Sub-operations of SIM_OP_ALU, one per ALU row of ptx_opcodes.def (which says what each
 * computes and on which pipe), then those of ATOM, VOTE, SHFL, CLOCK, MATCH and BAR. */
enum {
#define ALU(id, pipe, ints, floats) SIM_ALU_##id,
#include "ptx_opcodes.def"
  /* atomics */
  SIM_ATOM_ADD, SIM_ATOM_MIN, SIM_ATOM_MAX, SIM_ATOM_INC, SIM_ATOM_DEC, SIM_ATOM_AND,
  SIM_ATOM_OR, SIM_ATOM_XOR, SIM_ATOM_EXCH, SIM_ATOM_CAS,
  /* vote, shfl */
  SIM_VOTE_ALL, SIM_VOTE_ANY, SIM_VOTE_UNI, SIM_VOTE_BALLOT,
  SIM_SHFL_UP, SIM_SHFL_DOWN, SIM_SHFL_BFLY, SIM_SHFL_IDX,
  SIM_CLK_32, SIM_CLK_64, SIM_CLK_GLOBALTIMER, SIM_CLK_HI, SIM_CLK_GT_LO, SIM_CLK_GT_HI,
  /* match (and elect.sync, which has its shape: a row d, a predicate d2, a membermask e), bar.red
   * (SIM_OP_BAR's sub: 0 for bar.sync) */
  SIM_MATCH_ANY, SIM_MATCH_ALL, SIM_MATCH_ELECT, SIM_BAR_POPC, SIM_BAR_AND, SIM_BAR_OR
};

/* What an mbarrier instruction does (SIM_OP_MBAR, SIM_OP_MBARWAIT's sub). */
enum { SIM_MB_INIT, SIM_MB_INVAL, SIM_MB_ARRIVE, SIM_MB_DROP, SIM_MB_PENDING, SIM_MB_CPASYNC,
       SIM_MB_TEST, SIM_MB_TRY };

/* Built-in device functions (SIM_OP_BUILTIN), by the names NVRTC calls them. */
enum { SIM_BI_ASSERT, SIM_BI_MALLOC, SIM_BI_FREE };

/* One pre-decoded instruction. Every operand is a register row index (constants and special
 * registers included); predicate operands index the warp's predicate masks. */
typedef struct sim_inst {
  uint8_t op;          /* SIM_OP_* */
  uint8_t sub;         /* SIM_ALU_* / SIM_CMP_* / bool op, by op */
  uint8_t ty, ty2;     /* operand type; second type (cvt source, setp bool op; atom: the
                        * bytes of the vector whose first element it is, else 0) */
  uint8_t mod;         /* SIM_RN.. | SIM_MOD_* */
  uint8_t space;       /* SIM_SP_* for memory ops */
  uint8_t vec;         /* 1, 2 or 4 elements for ld/st; operand count for pack */
  uint8_t size;        /* bytes per element for memory ops */
  uint8_t gneg;        /* guard negated */
  uint8_t uniform;     /* atom: the address is the same in every lane, by construction
                        * (sim_trace.c) */
  uint8_t flags;       /* SIM_IF_* */
  uint8_t latsrc;      /* SIM_IF_LAT_CONSUMER: bit k for source k of a, b, c, e, v[0..3] when it
                        * reads a row some load writes (sim_mark.c; fills padding) */
  int16_t file;        /* .loc file index, -1 if none */
  int32_t guard;       /* predicate index of @p, -1 for none */
  int32_t d, d2;       /* destinations (d2: second predicate of setp/shfl, -1 none) */
  int32_t a, b, c, e;  /* sources */
  int32_t v[4];        /* vector registers of ld/st/pack */
  int32_t target;      /* branch/call target pc */
  int32_t rpc;         /* reconvergence pc of a branch (immediate post-dominator) */
  int32_t aux;         /* SIM_OP_TENSOR: index into sim_module.tensor (fills padding: no growth) */
  int64_t imm;         /* address offset */
  int32_t line;        /* source line from .loc, 0 if none */
  int32_t ptx_line;    /* line in the PTX text */
} sim_inst;

enum { SIM_IF_BPRED = 1, /* setp has a combining predicate (c) */
       /* ld / st only: a strong access (.volatile, .relaxed, .acquire or .release), which the
        * compiler may not keep in a register, and which does not race another strong one */
       SIM_IF_VOLATILE = 2,
       /* ld / st only: .relaxed, .acquire or .release, a C++ atomic's load or store rather than
        * the .volatile of legacy warp-synchronous code (sim_race.c tells them apart) */
       SIM_IF_SEM = 16,
       /* ld, st, atom and fence only: the acquire side of its ordering (.acquire, .acq_rel,
        * .sc, membar), the release side (.release, .acq_rel, .sc, membar); sim_hb.c */
       SIM_IF_ACQUIRE = 4, SIM_IF_RELEASE = 8,
       SIM_IF_CIN = 4,  /* addc/subc/madc: carry in */
       SIM_IF_COUT = 8, /* .cc: carry out */
       SIM_IF_HI = 16,  /* mad.hi */
       /* SIM_OP_ALU only: ptxas evaluates this .approx function, or the reciprocal of this
        * division's divisor, at compile time: its operand is a constant (sim_contract.c) */
       SIM_IF_FOLDED = 4,
       /* The fma (SIM_OP_ALU, SIM_OP_HALF) or SIM_ALU_DIV_ADD that a contracted sub became:
        * x - a*b negates the product, a*b - x the addend (sim_contract.c) */
       SIM_IF_NEG_PRODUCT = 8, SIM_IF_NEG_ADDEND = 16,
       /* SIM_OP_ATOM only: an exchange whose old value no instruction reads, which only stores,
        * for the init check (sim_mark_stores) */
       SIM_IF_ONLY_STORES = 1,
       /* SIM_OP_HALF only (these bits mean other things on other opcodes): */
       SIM_IF_NAN = 1,       /* min/max.NaN: a NaN operand gives NaN */
       SIM_IF_RELU = 2,      /* .relu: negative results become +0 */
       SIM_IF_SATFINITE = 4, /* .satfinite: infinities become the largest finite value */
       /* vote and bar.red only: the predicate operand is negated ({!}p); test the bit, never
        * the whole byte, which the timing model's marks below share */
       SIM_IF_NEG_PRED = 1,
       /* SIM_OP_BAR only: bar.sync / barrier.sync with a number (in imm too) and no thread
        * count, __syncthreads(), which takes the executor's short way (sim_exec.c) */
       SIM_IF_BAR_PLAIN = 2,
       /* SIM_OP_BRA and SIM_OP_EXIT only: the kernel's exit path, from which a lane does nothing
        * but leave: an exit without a guard, or a branch without one that leads to such an exit
        * (sim_cfg.c; test it with sim_on_exit_path) */
       SIM_IF_EXIT_PATH = 4,
       /* For the timing model's per-warp time (sim_trace.c), marked once per module: */
       SIM_IF_LAT_PRODUCER = 32, /* a global/local/generic load or returning atomic */
       SIM_IF_LAT_SHARED = 64,   /* a shared load or atomic */
       SIM_IF_LAT_CONSUMER = 128 }; /* reads a row some load writes, so may wait for it */
#define SIM_IF_LAT (SIM_IF_LAT_PRODUCER | SIM_IF_LAT_SHARED | SIM_IF_LAT_CONSUMER)
/* Whether opcode op writes predicates (d, and d2 for setp) rather than a register row. */
static inline int sim_writes_pred(int op) {
  return op == SIM_OP_SETP || op == SIM_OP_HSETP || op == SIM_OP_PAND || op == SIM_OP_POR ||
         op == SIM_OP_PXOR || op == SIM_OP_PNOT || op == SIM_OP_PMOV || op == SIM_OP_PSETI ||
         op == SIM_OP_MBARWAIT;
}

/* Tensor-core, ldmatrix and cp.async instructions name more registers than a sim_inst holds
 * (an mma reads up to 24 rows and writes 8), so their operands live in one side record each,
 * decoded by ptx_tensor.c and run by sim_tensor.c. The instruction's a is the address row (the
 * destination address for cp.async), b the stride or source address row, c the src-size row. */
enum { SIM_TC_WLOAD, SIM_TC_WSTORE, SIM_TC_WMMA, SIM_TC_MMA, SIM_TC_LDMATRIX, SIM_TC_CPASYNC,
       SIM_TC_CVT_TF32 };
enum { SIM_TE_F16 = 1, SIM_TE_BF16, SIM_TE_TF32, SIM_TE_F32 }; /* element types of fragments */
typedef struct sim_tensor {
  uint8_t kind;              /* SIM_TC_* */
  uint8_t m, n, k;           /* shape (ldmatrix: k = matrices, 1 2 or 4) */
  uint8_t which;             /* wmma.load/store: 0 a, 1 b, 2 c or d */
  uint8_t et, ct, dt;        /* SIM_TE_* of a and b, of c, of d
                              * (wmma.load/store: et is the fragment's) */
  uint8_t col, bcol;         /* wmma.load/store: memory is column-major; mma: a is col, b is col */
  uint8_t trans;             /* ldmatrix .trans; cvt to tf32: 0 .rna, 1 .rn, 2 .rz */
  uint8_t satfinite;         /* cvt to tf32: .satfinite */
  uint8_t nd, na, nb, nc;    /* registers in each list */
  uint8_t bytes;             /* cp.async: bytes copied */
  int64_t off2;              /* cp.async: the source address's offset */
  int32_t d[8], ra[8], rb[8], rc[8]; /* register rows (-1 for a sink) */
} sim_tensor;

/* Distinct elements of a fragment (which: 0 a, 1 b, 2 c/d) per lane: the matrix's size over the
 * warp. Here, with the record, because the decoder (ptx_tensor.c) counts a fragment's registers
 * with them and the executor (sim_tensor.c) lays the fragment out. */
static inline int sim_frag_distinct(const sim_tensor *t, int which) {
  return which == 0 ? t->m * t->k / 32 : which == 1 ? t->k * t->n / 32 : t->m * t->n / 32;
}
/* Elements of a fragment per lane, repeats included. wmma's f16 a and b fragments keep the 16
 * elements (8 registers) of the first tensor cores' layout whatever the shape, so on later GPUs
 * they hold their distinct elements more than once (NVRTC's PTX for sm_90 names 8 registers;
 * bf16 and tf32 fragments, newer, have none to spare). */
static inline int sim_frag_elems(const sim_tensor *t, int which) {
  if (t->kind == SIM_TC_WMMA || t->kind == SIM_TC_WLOAD || t->kind == SIM_TC_WSTORE)
    if (which < 2 && t->et == SIM_TE_F16) return 16;
  return sim_frag_distinct(t, which);
}

/* A variable with an address: global/const data owned by the module, or a shared / local
 * variable given an offset in its window. */
typedef struct sim_var {
  char *name;
  int space;       /* SIM_SP_* */
  size_t size, align;
  uint64_t addr;   /* host address (global/const), or offset (shared/local) */
  unsigned char *data; /* global/const storage, owned */
  int is_extern;   /* extern .shared: dynamic shared memory */
  int func;        /* owning function index, -1 for module scope */
  int elem;        /* element type of the declaration (for labels) */
} sim_var;

/* A function or kernel. */
typedef struct sim_func {
  char *name;
  int is_entry, is_extern;
  int first, end;        /* instructions [first, end) */
  int nparams;
  sim_param *params;     /* entries: offsets in the param buffer */
  size_t param_bytes;
  int param_base;        /* .func: per-lane param scratch offset of its params */
  unsigned char *param_taken; /* .entry: per parameter, 1 when the kernel takes its address
                          * (mov, cvta.param), the only ones a load through a register may
                          * read (sim_param_addr.c); NULL when it takes none. Owned */
  int ret_off, ret_size; /* .func: return value scratch slot */
  int reg_first, nregs;  /* register rows declared in this function */
  int pred_first, npreds; /* predicates declared in this function */
  int addr_taken;        /* its address is an operand or an initializer:
                          * indirect calls may reach it */
  int stacked;           /* may be active twice at once: called through the save stack
                          * (sim_calls.c) */
  int fp_lo, fp_hi;      /* stacked: its parameter and return slots lie in fparam [fp_lo, fp_hi) */
  size_t local_lo;       /* first byte of its locals in the static frame; stacked: frame-relative */
  size_t frame_bytes;    /* stacked: bytes one activation takes on the call stack */
  size_t local_bytes, shared_bytes; /* declared in this function */
  int has_dyn_shared;
  /* Its launch bounds, from the directives after its parameters (0: none declared), read by
   * launch_bounds.h's reader; sim_launch refuses a launch outside them, as the GPU does. */
  lb_bounds bounds;
} sim_func;

/* The shared memory the GPU reserves for the system at the start of each block's window (sm_80
 * and later: 1 KiB; cudaDevAttrReservedSharedMemoryPerBlock). cooperative_groups keeps the
 * barriers and exchange slots of its multi-warp tiles there, found through the
 * %reserved_smem_offset_* registers, and counts on it being zero when the block starts. Modelled
 * only for a module that reads those registers, so that every other kernel's shared variables
 * keep offset 0 and an access below the first is still reported as out of bounds. */
#define SIM_RESERVED_SMEM 1024
/* What the registers say of it, as an H100 reads them (tests/gpu/warp_masks_vs_gpu.lua, for
 * kernels with and without cooperative_groups): _begin 0, _end 288, _cap 1024, _0 and _1 both 0;
 * a block's own shared variables start at 1024. */
#define SIM_RESERVED_SMEM_END 288

struct sim_kernel {
  sim_module *mod;
  int func;              /* index into mod->funcs */
  size_t static_shared;  /* module-scope + this kernel's shared, the reserved bytes included */
  size_t reserved_shared; /* SIM_RESERVED_SMEM if its module reads the reserved registers, else 0 */
  size_t local_bytes;    /* declared by the kernel itself */
  int orders;            /* it may run an acquire, a release or a fence (ptx_calls_orders): the
                          * race check then follows them (sim_hb.c) */
};

/* A device function parameter whose address the function takes: the PTX ISA copies it onto the
 * stack, and the address is a local one (ptx_param_addr.c). The copy is a local variable of the
 * function. In a stacked function it lies in the activation's frame; otherwise in the region of
 * parameter copies after the call stack, between guard bytes no variable owns, where an access
 * is checked against the copy itself (sim_param_addr.c). */
#define SIM_LCOPY_GUARD 256 /* guard bytes on each side of a copy in the region */
typedef struct sim_lcopy {
  int func, param;   /* the function and which of its parameters */
  int var;           /* the local variable that holds the copy */
  size_t size;       /* the parameter's bytes */
  int64_t at;        /* offset of the copy in the region; -1 when it lies in a stacked frame */
} sim_lcopy;

/* A call site: parameter slots (per-lane scratch offsets) copied into the callee and back. */
typedef struct sim_call {
  int func;                        /* callee index in sim_module.funcs; -1 for an indirect call */
  int nargs;
  int arg_off[16], arg_size[16];   /* caller's argument slots */
  int ret_off, ret_size;           /* caller's return slot, ret_size 0 when none */
} sim_call;

struct sim_module {
  sim_inst *code;  int ncode;
  sim_func *funcs; int nfuncs;
  sim_var *vars;   int nvars;
  sim_kernel *kernels; int nkernels;
  int nrows;              /* register rows in all: special + user registers + constants */
  int nuser;              /* user register rows end here (they start at SIM_SR_COUNT) */
  int npreds;
  int const_first;        /* constant rows [const_first, nrows) */
  uint64_t *consts;       /* values of the constant rows */
  size_t local_frame;     /* per-thread local bytes for any kernel of the module */
  size_t fparam_bytes;    /* per-lane scratch for call parameters */
  size_t shared_module;   /* module-scope static shared bytes (they come first) */
  int reserved_smem;      /* reads %reserved_smem_offset_*: the window starts with the 1 KiB */
  char **files; int nfiles; /* .file names, index = file number */
  char **paths;             /* the same files as the PTX names them, with their folders (the
                             * debugger reads an #include'd header from there); nfiles of them */
  sim_call *calls; int ncalls;
  sim_tensor *tensor; int ntensor; /* operands of SIM_OP_TENSOR instructions */
  char *folded;           /* per pc: ptxas folds it into another instruction (sim_mark.c) */
  double *dep_stall;      /* per pc: cycles it waits for its arithmetic sources (sim_depend.c's
                           * memo, found with dep_perf; NULL until the first modelled launch) */
  sim_perf dep_perf;
  int has_stacked;        /* some function is stacked: warps get a call stack and a save stack */
  sim_lcopy *lcopy; int nlcopy; /* device function parameters whose address is taken */
  size_t lcopy_bytes;     /* per-thread bytes of the region of their copies, guards included */
  struct sim_dbginfo *debug; /* variables by source name (NVRTC's -G only), else NULL */
};

/* A kernel's variables by their source names, read from the DWARF that NVRTC's -G writes into
 * the PTX (ptx_dwarf.c), for the debugger (sim_debugger.c). A variable has a scope (the pcs of
 * its lexical block or function) and, within it, places: for a range of pcs, a register row, a
 * predicate or bytes of the thread's local memory. Where it has no place it has no value (not
 * computed yet, or no longer kept). Names and types are copied: the module keeps no pointer
 * into the PTX. */
enum { SIM_DL_ROW, SIM_DL_PRED, SIM_DL_LOCAL };
typedef struct sim_dloc {
  int32_t lo, hi;     /* pcs [lo, hi) where it is there; -1, -1: all of its scope */
  int32_t kind;       /* SIM_DL_* */
  int64_t where;      /* the row, the predicate, or the byte offset in the local frame */
} sim_dloc;
typedef struct sim_dvar {
  char *name;         /* as the source spells it */
  char *type;         /* as C writes it: "float *", "unsigned int", "int[4]" */
  int32_t lo, hi;     /* pcs [lo, hi) of its scope */
  int func;           /* the function it belongs to */
  int depth;          /* lexical blocks around it: an inner declaration hides an outer one */
  int enc;            /* SIM_DV_* (sim.h): how its bits read */
  int size;           /* bytes of one element */
  int count;          /* elements: 1, or an array's length */
  int line;           /* where it is declared; 0 unknown */
  int param;          /* a parameter of its function */
  int loc, nloc;      /* its places: sim_dbginfo.locs[loc .. loc + nloc) */
} sim_dvar;
typedef struct sim_dbginfo {
  sim_dvar *vars;
  int nvars;
  sim_dloc *locs;
  int nlocs;
  char why[200];      /* why there are no names, when the DWARF could not be read; else "" */
} sim_dbginfo;
void sim_dbginfo_free(sim_dbginfo *d);

/* Special register rows come first in every warp's register file: rows [0, SIM_SR_COUNT).
 * User registers follow; constant rows come last, from sim_module.const_first. */
enum { SIM_SR_TID_X, SIM_SR_TID_Y, SIM_SR_TID_Z, SIM_SR_NTID_X, SIM_SR_NTID_Y, SIM_SR_NTID_Z,
       SIM_SR_CTAID_X, SIM_SR_CTAID_Y, SIM_SR_CTAID_Z, SIM_SR_NCTAID_X, SIM_SR_NCTAID_Y,
       SIM_SR_NCTAID_Z, SIM_SR_LANEID, SIM_SR_WARPID, SIM_SR_NWARPID, SIM_SR_LANEMASK_EQ,
       SIM_SR_LANEMASK_LT, SIM_SR_LANEMASK_LE, SIM_SR_LANEMASK_GT, SIM_SR_LANEMASK_GE,
       SIM_SR_DYNSMEM, SIM_SR_DYNSMEM_SIZE, SIM_SR_TOTAL_SMEM, SIM_SR_SMID, SIM_SR_NSMID,
       SIM_SR_AGGR_SMEM, SIM_SR_GRIDID, SIM_SR_ZERO,
       /* clusters: a launch without them is a grid of one-block clusters */
       SIM_SR_CLUSTER_CTAID_X, SIM_SR_CLUSTER_CTAID_Y, SIM_SR_CLUSTER_CTAID_Z,
       SIM_SR_CLUSTER_NCTAID_X, SIM_SR_CLUSTER_NCTAID_Y, SIM_SR_CLUSTER_NCTAID_Z,
       SIM_SR_CLUSTERID_X, SIM_SR_CLUSTERID_Y, SIM_SR_CLUSTERID_Z, SIM_SR_NCLUSTERID_X,
       SIM_SR_NCLUSTERID_Y, SIM_SR_NCLUSTERID_Z, SIM_SR_CLUSTER_CTARANK,
       SIM_SR_CLUSTER_NCTARANK, SIM_SR_IS_EXPLICIT_CLUSTER,
       SIM_SR_ENVREG1, SIM_SR_ENVREG2, /* the grid workspace's address (sim_launch_opts) */
       SIM_SR_FRAME, /* local offset of the running stacked activation's frame (sim_calls.c) */
       SIM_SR_LCOPY, /* local offset of the parameter copies' region (sim_lcopy), which follows
                      * the call stack, so that it moves with cuda.simopts{stack} */
       SIM_SR_COUNT };

#define SIM_TRACE_BUFS 257 /* one per host worker (at most 256) and one for the merged trace */

/* A live allocation of sim_malloc (or a module global variable during a launch). */
typedef struct sim_alloc {
  uint64_t base, size;
  uint64_t origin; /* where its allocation starts: base, or for a view (sim_extent) before base;
                      offsets that name bytes of the allocation (the init check's, the timing
                      model's) are taken from here */
  char label[64];
  int param;      /* during a launch: kernel parameter that points into it, -1 none */
  void *raw;      /* malloc'd pointer to free, NULL for module variables */
  size_t mapped;  /* bytes mmap'd for raw (large allocations), 0 when malloc'd */
  uint32_t serial; /* order of allocation: names it for the timing model's caches, whatever its
                    * address (host addresses change from run to run; the model must not) */
  struct sim_unset *unset; /* bytes never written (sim_mark_unset), NULL when none are */
  struct sim_managed *um;  /* managed memory's groups (sim_managed.c), NULL for plain memory */
} sim_alloc;

/* The device's texture objects, which sim_texture.c makes and sim_tex.c fetches from; here, with
 * the device that owns (and frees) the table, so that freeing a device needs neither file. */
typedef struct sim_texture {
  sim_tex_desc d;
  unsigned char *data; /* the copy: an allocation of the device (sim_malloc), NULL once freed */
  int esize;           /* bytes of one channel */
} sim_texture;
typedef struct sim_textures {
  sim_texture *t; /* handle h is t[h - 1] */
  size_t n, cap;
} sim_textures;

/* Freed mappings kept for the next array of their size (sim_regions.c), oldest first. */
#define SIM_KEEP_REGIONS 8
typedef struct sim_regions {
  struct { void *p; size_t bytes; } kept[SIM_KEEP_REGIONS];
  int n;
  size_t bytes;
} sim_regions;
/* A zeroed kept region of exactly mapped bytes, or NULL; keep one that is freed (or unmap it);
 * release all (returns how many there were). */
void *sim_region_take(sim_device *dev, size_t mapped);
void sim_region_keep(sim_device *dev, void *p, size_t mapped);
int sim_regions_release(sim_device *dev);

struct sim_device {
  sim_device_desc desc;
  sim_alloc *allocs; int nallocs, cap;  /* sorted by base */
  uint32_t next_serial;                 /* sim_alloc.serial of the next allocation */
  uint64_t launches;                    /* launches so far: %gridid of the next is one more */
  size_t used;
  sim_counters *lines; int nlines_cap;  /* last launch's per-line counters */
  void (*sink)(const char *text, size_t len, void *ud);
  void *sink_ud;
  /* The timing model's trace buffers, kept from one launch to the next so that a launch does not
   * pay page faults for fresh ones (a device runs one launch at a time). */
  struct sim_trace_ent *trace_buf[SIM_TRACE_BUFS];
  size_t trace_cap[SIM_TRACE_BUFS];
  void *scratch; size_t scratch_cap;   /* bytes: the sort's keys and output */
  struct sim_caches *caches;           /* the L1 and L2 models, kept likewise (sim_cache.c) */
  struct sim_heap *heap;               /* the device heap of malloc/new in kernels,
                                        * NULL until used */
  struct sim_watches *watches;         /* watched elements (sim_watch.c), NULL until one is */
  struct sim_textures *textures;       /* texture objects (sim_texture.c), NULL until one is */
  sim_regions regions;                 /* freed mappings kept for reuse (sim_regions.c) */
};
void sim_heap_free(struct sim_heap *h); /* sim_heap.c */
/* A bit per byte of one allocation, set once the byte is written (sim_sanitize.c). */
typedef struct sim_unset {
  _Atomic uint64_t unwritten; /* bytes whose bit is still clear: 0 means the mark can go */
  unsigned char bits[];       /* bit (i & 7) of bits[i >> 3]: byte i has been written */
} sim_unset;
/* An allocation goes: its mark is freed, and watches on it end (sim_sanitize.c, sim_watch.c). */
void sim_unset_drop(sim_alloc *a);
void sim_watch_forget(sim_device *dev, uint64_t base, uint64_t size);
void sim_managed_drop(sim_alloc *a); /* sim_managed.c: its groups' state is freed */
void sim_watches_free(struct sim_watches *w);
void sim_cache_free(struct sim_caches *c);

/* Managed memory (sim_managed.c): a group's place, advice and, during a launch, what the
 * kernel did to it (bits: 1 read, 2 written). Workers of one launch mark touches at once, so
 * touch is written with relaxed atomics; it is read after they have all stopped. */
typedef struct sim_managed {
  uint64_t ngroups;
  unsigned char *where;  /* SIM_UM_* per group */
  unsigned char *advice; /* SIM_UM_READ_MOSTLY | SIM_UM_PREFER_* per group */
  unsigned char *touch;  /* per group */
} sim_managed;

/* A lane of a kernel touched address a of managed allocation t (is_store: a store or an atomic).
 * The load first: most touches find their bit set already and write nothing. */
static inline void sim_um_touch(const sim_alloc *t, uint64_t a, int is_store) {
  unsigned char *p = &t->um->touch[(a - t->origin) / SIM_UM_GROUP];
  unsigned char bit = is_store ? 3 : 1;
  if ((__atomic_load_n(p, __ATOMIC_RELAXED) & bit) != bit)
    __atomic_fetch_or(p, bit, __ATOMIC_RELAXED);
}

/* Address lookup (sim_base.c): index of the allocation containing [a, a+n), or -1. */
int sim_alloc_find(const sim_alloc *t, int n, uint64_t a, uint64_t len);
int sim_alloc_nearest(const sim_alloc *t, int n, uint64_t a);

/* The load-time passes, which the loader (sim_load.c) runs in this order after the parser. What
 * ptxas does where PTX leaves it free: contracts products and divisions into the sums that use
 * them, and marks the instructions it evaluates at compile time (sim_contract.c). */
int sim_contract(sim_module *m, char *err, size_t errlen);
int sim_cfg_build(sim_module *m, char *err, size_t errlen); /* labels resolved: rpc per branch */
/* The timing model's marks (sim_mark.c): the SIM_IF_LAT_* flags and uniform atomics; m->folded,
 * or NULL when there is no memory for it. */
void sim_mark_lat(sim_module *m);
void sim_mark_fold(sim_module *m);
/* The init check's mark (sim_mark.c): SIM_IF_ONLY_STORES on exchanges whose result is unread. */
void sim_mark_stores(sim_module *m);
/* bra, exit, ret, trap: no instruction after it is in its basic block (sim_cfg.c) */
int sim_ends_block(const sim_inst *in);
/* Whether a lane at in has reached the kernel's exit path (SIM_IF_EXIT_PATH): it counts as
 * exited for barriers, since nothing it runs from there on can be seen. */
static inline int sim_on_exit_path(const sim_inst *in) {
  return (in->op == SIM_OP_BRA || in->op == SIM_OP_EXIT) && (in->flags & SIM_IF_EXIT_PATH);
}

/* Per-lane generic ALU (sim_alu.c) and conversions (sim_cvt.c). sim_alu runs the function that
 * ptx_opcodes.def's row for in->sub names for in->ty; sim_alu_has says whether there is one (the
 * decoder emits no SIM_OP_ALU without). */
uint64_t sim_alu(const sim_inst *in, uint64_t a, uint64_t b, uint64_t c, uint64_t e);
int sim_alu_has(int sub, int ty);
/* The timing model's pipe for a sub-operation: a SIM_CLS_*, or PIPE_TYPED when sim_profile.c
 * prices it by its operand type. */
enum { PIPE_ALU = SIM_CLS_ALU, PIPE_INT = SIM_CLS_INT, PIPE_TYPED = -1 };
int sim_alu_pipe(int sub);
uint64_t sim_cvt(int dt, int st, int mod, uint64_t x);
/* f16 / bf16 (sim_half.c): one lane of SIM_OP_HALF, one comparison of half values (NaN-aware,
 * ftz: flush subnormals first), and the 16-bit float operations of atom.add / min / max (sub a
 * SIM_ALU_ADD, MIN or MAX). */
uint64_t sim_half(const sim_inst *in, uint64_t a, uint64_t b, uint64_t c);
int sim_half_compare(int cmp, int ty, int ftz, uint32_t a, uint32_t b);
uint32_t sim_half_atom(int sub, int ty, uint32_t a, uint32_t b);
int sim_compare(int cmp, int ty, uint64_t a, uint64_t b);

/* A variable's or kernel's name as written in the source (sim_demangle.c): "_ZZ6kernelPfE4tile"
 * -> "tile" with fn "kernel"; "_ZN2ns4tileE" -> "ns::tile"; "_Z6kernelPf" -> "kernel";
 * "_ZZ6kernelPfENKUliE_clEi" (a lambda's call operator) -> "lambda" with fn "kernel". A name
 * that is not mangled, or not understood, is copied as it is. fn (may be NULL) receives the
 * enclosing function of a function-scope variable, "" otherwise. Returns buf. */
const char *sim_demangle(const char *mangled, char *buf, size_t len, char *fn, size_t fnlen);

/* snprintf into an error buffer that may be NULL or empty (sim_base.c). */
void sim_errf(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
