/* kernel_sig.h: what the learner's source says about each __global__ function: its name and its
 * parameters' C types. NVRTC's PTX gives sizes but not meaning (a float* and a long are both
 * .u64), so launch checks read the source too. Used by bind_kernel.c and bind_debugger.c. */
#ifndef CUDALAB_KERNEL_SIG_H
#define CUDALAB_KERNEL_SIG_H

#include <stddef.h>

#include "ctype_layout.h"

/* SIG_AGGREGATE: a struct or a vector type taken by value, laid out in the kernel's `lay`.
 * SIG_TEXTURE: a cudaTextureObject_t, which takes a texture (cuda.texture), nothing else. */
typedef enum sig_kind { SIG_UNKNOWN, SIG_POINTER, SIG_INT, SIG_FLOAT, SIG_BOOL,
                        SIG_AGGREGATE, SIG_TEXTURE } sig_kind;

typedef struct sig_param {
  char name[64];   /* "a", or "" when unnamed */
  char type[96];   /* as written, whitespace tidied: "const float *" */
  sig_kind kind;
  int dtype;       /* pointee dtype for pointers, value dtype for scalars; -1 when none fits */
  int is_const;    /* pointer to const */
  int stars;       /* pointer depth: 1 for float *, 2 for float ** (0 for a value) */
  int row;         /* elements the pointer steps over: 4 for float (*m)[4] or float m[][4], 1
                      for any other, 0 when a row's size is not a number (a macro's) */
  char base[128];  /* the type without qualifiers, stars or namespaces: "float2", "Params" (as
                    * long as the type it comes from, so never cut) */
  int lay;         /* the node in the kernel's `lay` that lays out an aggregate value, or the
                      element of a pointer no dtype names (uint4 *, Particle *); -1 none */
  char lay_why[LAY_WHY]; /* when lay is -1 for such a type: why it could not be laid out */
} sig_param;

/* No limit is built in: a kernel has as many parameters as the GPU allows (32 KiB of them with
 * CUDA 12.1+) and a module as many kernels as its source defines. */
typedef struct sig_kernel {
  char *name;          /* what the learner calls it: "k", "ns::k", "k<int>", or for one of
                          several overloads "k(float *)" */
  char *expr;          /* the NVRTC name expression for it: the name, or for an overload
                          "(void(*)(float *))ns::k" */
  int is_template;     /* a template: needs an explicit instantiation to be launched */
  int overloaded;      /* another kernel has the same qualified name */
  int nparams;         /* -1 when the parameter list could not be read */
  sig_param *params;   /* nparams of them */
  lay_table lay;       /* the layouts params[i].lay index */
} sig_kernel;

/* Finds the __global__ functions in src (comments and strings skipped), named with their
 * namespaces. Returns how many and sets *out (free with sig_free, also when 0 are found), or
 * returns -1 with *out NULL when out of memory. */
int sig_find_kernels(const char *src, sig_kernel **out);
/* The same, with the text of the learner's headers the source includes (NULL: none), where a
 * parameter's typedef, alias or struct is looked for after the source (`typedef unsigned int
 * uint;` in a header makes `uint *` a u32 pointer). Kernels are read from src only. */
int sig_find_kernels_with(const char *src, const char *headers, sig_kernel **out);
void sig_free(sig_kernel *k, int n);
/* One parameter as the source spells it, into buf: "float *a", "int n"; an unnamed one is its
 * type alone ("int", "float *"). The one place that joins a type and a name; returns buf. */
#define SIG_PARAM_TEXT 168 /* room for any: type[96] + " " + name[64] */
const char *sig_param_text(const sig_param *p, char *buf, size_t len);
/* "inc(float *a, int n)" into buf, for messages. */
void sig_format(const sig_kernel *k, char *buf, unsigned len);

/* The signature of the instantiation `name` ("combine<double>", "ns::scale<3>") of a kernel
 * template in src, which NVRTC lowered to the mangled name `lowered`: the template's parameter
 * types with the template arguments the mangled name records substituted ("const T *" is
 * "const double *"; defaults and the learner's spelling resolved by the compiler), then read
 * as a plain kernel's are, types looked up in src then headers (NULL: none). Among overloaded
 * templates, the one with as many template parameters as the arguments and nparams parameters
 * (-1: any). 1 with *out filled (free with sig_free_one), 0 when the template or its arguments
 * cannot be read (the caller then checks sizes only), -1 out of memory. */
int sig_instantiate(const char *src, const char *headers, const char *name, const char *lowered,
                    int nparams, sig_kernel *out);
void sig_free_one(sig_kernel *k);

/* Is the name a learner gave the kernel's name? Spaces do not count: "k(float*)" is
 * "k(float *)". Used wherever a kernel is picked by name (cuda.kernel, k:debug). */
int sig_same_name(const char *a, const char *b);

/* Do a and b name the same instantiation of one template, though spelt differently: the same
 * name, and template arguments that are the same integers ("3" and "3u", "0x10" and "16") or
 * the same types ("unsigned" and "unsigned int", "long int" and "long", "float*" and "float *").
 * For a hint when a learner's spelling is not the one a kernel was made under. */
int sig_same_instance(const char *a, const char *b);

/* An instantiation's template arguments that fit the parameters of the kernel template `name`
 * (unqualified) as src declares them, for a hint: "float" for a type parameter, "16" for an
 * integer one, "true" for a bool, joined by ", " ("float, 16" for template <typename T, int
 * BLOCK>). Into out (cap bytes); "float" when the declaration cannot be read. */
void sig_template_example(const char *src, const char *name, char *out, size_t cap);

#endif
