/* const_decl.h: what the learner's source says of a module-scope __constant__ or __device__
 * variable: its element type as C spells it. The PTX gives its size but often not its type (a
 * float table is ".b8 c[64]"), so m:constant reads the source to check the values it is given.
 * Used by bind_constant.c; plain C, no I/O, no Lua. */
#ifndef CUDALAB_CONST_DECL_H
#define CUDALAB_CONST_DECL_H

#include <stddef.h>

/* Finds the declaration of the variable `name` ("coef", or "ns::coef" for one in namespace ns)
 * in src: `__constant__ TYPE name[...]`, `__device__ TYPE name = ...` or `__managed__ ...`,
 * with qualifiers (static, const, volatile, extern "C", __align__(n)) in any order, any array
 * dimensions, and other declarators beside it (`__device__ int a, name[4];`). Comments, string
 * literals, directives, functions (`__device__ int name(int x)`) and declarations inside
 * functions or structs are never taken for it. Writes its element type, whitespace
 * tidied ("unsigned int", "float2"), typedefs followed ("uchar" -> "unsigned char"), into type
 * (cap bytes). 0 if found; 1 if found but its type is one this reader cannot see the meaning
 * of (a macro, a `using` alias, a struct of a standard type's name) or a pointer ("int *"):
 * type then holds it as spelled; -1 if src declares no such variable, or its type does not fit. */
int const_decl_type(const char *src, const char *name, char *type, size_t cap);

#endif
