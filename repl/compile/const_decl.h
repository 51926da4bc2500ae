/* const_decl.h: what the learner's source says of a __constant__ variable: its element type as
 * C spells it. The PTX gives its size but often not its type (a float table is ".b8 c[64]"),
 * so m:constant reads the source to check the values it is given. Used by bind_constant.c;
 * plain C, no I/O, no Lua. */
#ifndef CUDALAB_CONST_DECL_H
#define CUDALAB_CONST_DECL_H

#include <stddef.h>

/* Finds the declaration `__constant__ TYPE name[...]` (qualifiers such as static, const and
 * __device__ in any order, any array dimensions) of the variable `name` (unqualified) in src,
 * skipping comments and string literals, and writes its element type, whitespace tidied
 * ("unsigned int", "float2"), into type (cap bytes). 0 if found; -1 if src declares no
 * __constant__ of that name, or its type does not fit. */
int const_decl_type(const char *src, const char *name, char *type, size_t cap);

#endif
