/* ctype_layout.h: the memory layout of the C types a kernel takes by value or points at, other
 * than the element types: CUDA's vector types (float2, int4, ...) and the structs, typedefs and
 * aliases the kernel's own source defines, laid out by C's rules. Used by kernel_sig.c, and by
 * bind_kernel.c to marshal a Lua table into a parameter's bytes. */
#ifndef CUDALAB_CTYPE_LAYOUT_H
#define CUDALAB_CTYPE_LAYOUT_H

#include <stddef.h>

typedef enum lay_kind {
  LAY_SCALAR,  /* one element of dtype */
  LAY_BOOL,    /* a C++ bool: one byte, 0 or 1 */
  LAY_POINTER, /* a device address (8 bytes) */
  LAY_STRUCT,  /* children: the fields, in order */
  LAY_VECTOR,  /* a CUDA vector type: children x, y, z, w as many as it has */
  LAY_ARRAY    /* a fixed-size array field: `count` elements, each laid out as node `first` */
} lay_kind;

typedef struct lay_node {
  char name[48];   /* the field's name ("scale", "x"); "" for a root or an array's element */
  char type[64];   /* the type as the source spells it: "float", "float3", "Params" */
  lay_kind kind;
  int dtype;       /* LAY_SCALAR: its element type; LAY_POINTER: the pointee's, -1 unknown */
  int stars;       /* LAY_POINTER: how many: 1 for float *, 2 for float ** */
  size_t offset;   /* from the start of the enclosing aggregate (0 for a root) */
  size_t size, align;
  int first, count; /* LAY_STRUCT, LAY_VECTOR: children are nodes first .. first + count - 1;
                       LAY_ARRAY: count elements of node first */
} lay_node;

/* The nodes of every layout one kernel needs, children of a node contiguous. */
typedef struct lay_table {
  lay_node *nodes; /* malloc'd; the table owns it (lay_table_free) */
  int n, cap;
} lay_table;

#define LAY_WHY 256 /* room for a reason a type could not be laid out */

/* Lays out `type` (qualifiers and "struct" removed, no '*'), as CUDA's vector types are or as
 * the source src defines it (comments, strings and # lines already blanked), appending its nodes
 * to t. Returns the root's index; -1 with a reason in why (which names the type or field) when
 * it cannot: not defined in src (a header's type), a member it cannot lay out (a bit-field, a
 * template, an attribute it does not know), or out of memory. An enum is laid out as the
 * integer it is stored as (a LAY_SCALAR). */
int lay_type(const char *src, const char *type, lay_table *t, char *why, size_t whylen);
/* The type a typedef or `using` alias in src names, followed to the end (`typedef float real;`:
 * "real" is "float"), into out, with the stars it adds to *stars. 1 when type is an alias. */
int lay_alias(const char *src, const char *type, char *out, size_t cap, int *stars);
/* The vector type's component dtype and count (float4: f32, 4); -1 when type is not one. */
int lay_vector(const char *type, int *count);
void lay_table_free(lay_table *t);

#endif
