/* ptx_state.h: the parser's state and what its files share (ptx_state.c): the ptx_parser record,
 * errors, growable arrays, the symbol table, constant rows, call sites and functions. Included by
 * the parser's files only (ptx_parse.c, ptx_inst.c, ptx_tensor.c, ptx_emit.c, ptx_dwarf.c). */
#ifndef CUDALAB_PTX_STATE_H
#define CUDALAB_PTX_STATE_H

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

/* A .loc: where the code after it was written, and where that code was inlined (-1 when it
 * was not): ptx_loc.c settles the line each instruction shows from these. */
typedef struct ptx_loc {
  int file, line, col;
  int in_file, in_line, in_col;
} ptx_loc;

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
  int cap_lcopy;             /* parameter copies live in m->lcopy */
  int depth;                 /* brace depth inside a function body */
  int cur_func;              /* function being parsed, -1 at module scope */
  int loc_file, loc_line;    /* last .loc */
  ptx_loc *locs; int nlocs, cap_locs;  /* every .loc, in order (ptx_loc.c) */
  int cur_loc;               /* index of the last .loc in locs, -1 before one */
  int *inst_loc; int ninst_loc, cap_inst_loc; /* per instruction: its .loc, -1 for none */
  unsigned char *toolkit_file; int ntoolkit, cap_toolkit; /* per .file: a toolkit header */
  size_t kernel_shared;      /* running shared offset of the current kernel (relative) */
  char *err; size_t errlen;
  const ptx_tok *inst;       /* opcode of the instruction being decoded, for messages */
  const char *text_end;      /* one past the PTX text the tokens point into, for a reader of
                                the text itself (launch_bounds.h's) */
  struct ptx_dwcap *dw;      /* what the DWARF reader collects (ptx_dwarf.c); NULL when the PTX
                                has no debug information, which is every module but -G's */
  jmp_buf fail;              /* parse errors longjmp here; everything is owned by p or p->m */
} ptx_parser;

/* Errors: fill err and unwind to ptx_parse, which frees everything. */
void ptx_fail(ptx_parser *p, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3), noreturn))
#endif
    ;
void *ptx_grow(ptx_parser *p, void *arr, int *cap, int need, size_t elem);

const ptx_sym *ptx_lookup(ptx_parser *p, const char *name, int len, int *row);
int ptx_const_row(ptx_parser *p, int var, uint64_t value);
int ptx_type_of(const char *s, int len); /* "f32" -> SIM_T_F32, 0 if not a type */

int ptx_new_call(ptx_parser *p);
/* A new variable in the module's table (zeroed), its index; the table may move. */
int ptx_new_var(ptx_parser *p);
/* Gives local variable v (size and align set) its offset in the module's static frame, counted
 * in the current function's local bytes. */
void ptx_place_local(ptx_parser *p, sim_var *v);
/* Makes the uses of constant row `row` (still encoded), a local variable's address, in f's code
 * relative to base_row, a row the warp holds (SIM_SR_FRAME, SIM_SR_LCOPY), the constant then
 * being the offset off from it: a mov becomes an add of base_row, an ld/st address [row+k] takes
 * base_row as its base and off into its offset. Returns -1, or the pc of a use of another kind,
 * which it leaves for the caller to refuse. */
int ptx_rebase_uses(sim_module *m, const sim_func *f, int row, int base_row, int64_t off);
int ptx_find_func(ptx_parser *p, const ptx_tok *name); /* index, -1 if not declared */
/* SIM_FUNC_WIN address; marks it address-taken */
uint64_t ptx_func_addr(ptx_parser *p, int fi);

#endif
