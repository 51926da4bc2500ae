/* const_decl.h: what the learner's source says of its module-scope __constant__, __device__
 * and __managed__ variables: their element types as C spells them, their dimensions, their
 * memory space. The PTX gives a variable's size but often not its type (a float table is
 * ".b8 c[64]"), so m:constant reads the source to check the values it is given, and
 * m:variables lists them (which cuda.export's record reads). Used by bind_constant.c; plain C,
 * no I/O, no Lua. */
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

enum { CONST_DECL_CONSTANT, CONST_DECL_DEVICE, CONST_DECL_MANAGED };

/* One variable as the source declares it. */
typedef struct const_decl_var {
  char name[256];  /* as m:constant takes it: "coef", "ns::coef" */
  char type[96];   /* its element type, as const_decl_type writes it */
  int status;      /* as const_decl_type returns: 0 a type read, 1 one it cannot see into */
  int is_array;    /* declared with dimensions (coef[16]), not one value */
  int space;       /* CONST_DECL_CONSTANT, _DEVICE or _MANAGED (__managed__ __device__ is
                      managed, __device__ __constant__ constant) */
} const_decl_var;

/* const_decl_type's answer (0, 1 or -1) for the variable `name`, with all of *out filled when
 * it is found. */
int const_decl_find(const char *src, const char *name, const_decl_var *out);
/* Every variable at namespace scope, in the order src declares them (those of an anonymous
 * namespace left out: their names are the compiler's own), read as const_decl_find reads one:
 * *out is a malloc'd array the caller frees, the count is returned. -1 (and *out NULL) when out
 * of memory. */
int const_decl_list(const char *src, const_decl_var **out);

#endif
