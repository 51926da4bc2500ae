/* ptx_parse.h: state shared by the PTX parser's two halves, ptx_parse.c (module structure,
 * declarations, symbols) and ptx_inst.c (one instruction into sim_inst records).
 * Nothing outside the parser includes it. */
#ifndef CUDALAB_PTX_PARSE_H
#define CUDALAB_PTX_PARSE_H

#include <setjmp.h>

#include "ptx_lex.h"
#include "sim_int.h"

/* Kinds of names in scope. */
enum { PTX_SYM_REG, PTX_SYM_PRED, PTX_SYM_VAR, PTX_SYM_KPARAM, PTX_SYM_FPARAM, PTX_SYM_FUNC };

typedef struct ptx_sym {
  const char *name; int len; /* points into the PTX text */
  int kind;                  /* PTX_SYM_* */
  int type;                  /* SIM_T_* of a register / parameter */
  int index;                 /* first row, predicate, var, func; or param offset */
  int count;                 /* > 0: a %r<N> range, index + k is %rk */
  int size;                  /* param bytes */
  int depth;                 /* scope depth it was declared at */
} ptx_sym;

/* A constant row's value: a plain number, or the address of a variable plus an offset, which is
 * only known once the whole module has been laid out. */
typedef struct ptx_const {
  int var;          /* -1: plain value */
  uint64_t value;   /* the value, or the offset added to the variable's address */
} ptx_const;

typedef struct ptx_fixup {
  int inst;                  /* instruction whose target is a label */
  const char *name; int len;
} ptx_fixup;

typedef struct ptx_label {
  const char *name; int len;
  int pc;
} ptx_label;

typedef struct ptx_parser {
  ptx_lexer lx;
  sim_module *m;
  int cap_code, cap_funcs, cap_vars;
  ptx_sym *syms; int nsyms, cap_syms;
  ptx_const *consts; int nconsts, cap_consts;
  ptx_fixup *fix; int nfix, cap_fix;
  ptx_label *labels; int nlabels, cap_labels;
  int cap_calls;             /* calls live in m->calls */
  int cap_tensor;            /* tensor operand records live in m->tensor */
  int depth;                 /* brace depth inside a function body */
  int cur_func;              /* function being parsed, -1 at module scope */
  int loc_file, loc_line;    /* last .loc */
  size_t kernel_shared;      /* running shared offset of the current kernel (relative) */
  char *err; size_t errlen;
  const ptx_tok *inst;       /* opcode of the instruction being decoded, for messages */
  const char *text_end;      /* one past the PTX text the tokens point into, for a reader of
                                the text itself (launch_bounds.h's) */
  struct ptx_dwcap *dw;      /* what the DWARF reader collects (ptx_dwarf.c); NULL when the PTX
                                has no debug information, which is every module but -G's */
  jmp_buf fail;              /* parse errors longjmp here; everything is owned by p or p->m */
} ptx_parser;

/* Errors: fill err and unwind to sim_parse, which frees everything. */
void ptx_fail(ptx_parser *p, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3), noreturn))
#endif
    ;
void *ptx_grow(ptx_parser *p, void *arr, int *cap, int need, size_t elem);

const ptx_sym *ptx_lookup(ptx_parser *p, const char *name, int len, int *row);
int ptx_const_row(ptx_parser *p, int var, uint64_t value);
int ptx_type_of(const char *s, int len); /* "f32" -> SIM_T_F32, 0 if not a type */

/* One instruction's decoding state, shared by ptx_inst.c and the tensor decoder (ptx_tensor.c). */
enum { O_REG, O_PRED, O_IMM, O_VAR, O_SREG, O_ADDR, O_VEC, O_SINK, O_NAME, O_KPARAM, O_FPARAM };

typedef struct opnd {
  int kind;            /* O_* */
  int row;             /* register row / predicate / special row / var / param offset */
  int type;            /* declared type of a register */
  int neg;             /* !%p */
  uint64_t bits;       /* immediate */
  int fkind;           /* immediate: 0 int, 1 0f-hex, 2 0d-hex, 3 decimal float */
  double fval;
  int base;            /* O_ADDR: kind of base (O_REG, O_VAR, O_KPARAM, O_FPARAM, O_IMM) */
  int64_t off;         /* O_ADDR offset */
  int n, vec[8];       /* O_VEC rows (-1 for a sink) */
  const ptx_tok *tok;  /* O_NAME */
} opnd;

typedef struct mods {
  char base[24];
  int types[4], ntypes;
  int space, rnd, has_rnd, ftz, sat, approx, full, vec, cmp, has_cmp, cc;
  const char *words[12]; int wlen[12]; int nwords;
} mods;

typedef struct ictx {
  ptx_parser *p;
  const ptx_tok *op;   /* opcode token, for messages */
  int line;
  mods md;
  opnd o[8];
  int n, second;
  int guard, gneg;
  unsigned words;      /* bit k: the k-th word of the instruction's row is among its modifiers */
} ictx;

/* ptx_inst.c's helpers for other decoders. All fail the load (longjmp) on a bad operand. */
void ptx_unsupported(ictx *c, const char *why)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;
sim_inst *ptx_emit(ictx *c, int op);
/* operand i as a row (immediates become constant rows) */
int ptx_src(ictx *c, int i, int ty);
void ptx_addr(ictx *c, sim_inst *in, int i); /* address operand i into in->a and in->imm */
int ptx_has(const mods *md, const char *w); /* md has the modifier word w */
/* wmma, mma, ldmatrix and cp.async (ptx_tensor.c); operands already parsed into c. */
void ptx_tensor_inst(ictx *c);
/* One operand at the cursor into o (a register, number, vector {..}, name); for decoders that
 * read their own operand lists (MD_OWN). */
void ptx_opnd(ptx_parser *p, opnd *o);
/* tex (ptx_texture.c), which reads its own operands: its address operand [handle, {coords}] is
 * no plain address. */
void ptx_tex_inst(ictx *c);

/* The DWARF reader (ptx_dwarf.c). begin looks for debug information in the text and, when there
 * is some, sets p->dw; the parser then hands it each register declaration, label and .section
 * as it meets them (ptx_dwarf_section returns 0 for a section it does not keep, which the parser
 * skips). finish builds the module's sim_dbginfo once everything is laid out; drop frees what
 * was collected, after finish or after a failed parse. Debug information that cannot be read
 * never fails the load: the module then has a sim_dbginfo that says why it has no names. */
void ptx_dwarf_begin(ptx_parser *p, const char *ptx, size_t len);
void ptx_dwarf_reg(ptx_parser *p, const ptx_tok *name, int type, int row, int count);
void ptx_dwarf_label(ptx_parser *p, const ptx_tok *name, int pc);
int ptx_dwarf_section(ptx_parser *p);
void ptx_dwarf_finish(ptx_parser *p);
void ptx_dwarf_drop(ptx_parser *p);

/* Parses one instruction (optionally guarded) at the cursor, through its ';'. */
void ptx_parse_inst(ptx_parser *p);
int ptx_new_call(ptx_parser *p);
int ptx_find_func(ptx_parser *p, const ptx_tok *name); /* index, -1 if not declared */
/* SIM_FUNC_WIN address; marks it address-taken */
uint64_t ptx_func_addr(ptx_parser *p, int fi);

#endif
