/* test_const_decl.c: the element type m:constant reads from the learner's source for a
 * module-scope __constant__ or __device__ variable (repl/compile/const_decl.c): every form a
 * variable's declaration takes, and never a function, a pointer, a local, a comment or a name
 * the source redefines taken for one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "const_decl.h"

#include "check.h"

/* const_decl_type's answer for name in src, as "TYPE" (0), "?TYPE" (1) or "-" (-1), is want. */
static int reads(const char *src, const char *name, const char *want) {
  char type[96], got[100];
  int r = const_decl_type(src, name, type, sizeof type);
  snprintf(got, sizeof got, "%s%s", r < 0 ? "-" : r > 0 ? "?" : "", r < 0 ? "" : type);
  if (strcmp(got, want) == 0) return 1;
  printf("    for %s in %s\n    got  %s\n    want %s\n", name, src, got, want);
  return 0;
}

/* const_decl_find's dimensions and space for name in src are want ("array managed"). */
static int shape(const char *src, const char *name, const char *want) {
  static const char *const spaces[] = {"constant", "device", "managed"};
  const_decl_var v;
  char got[64];
  if (const_decl_find(src, name, &v) < 0) snprintf(got, sizeof got, "-");
  else snprintf(got, sizeof got, "%s %s", v.is_array ? "array" : "one", spaces[v.space]);
  if (strcmp(got, want) == 0) return 1;
  printf("    for %s in %s\n    got  %s\n    want %s\n", name, src, got, want);
  return 0;
}

/* const_decl_list's variables in src, as "SPACE TYPE NAME[]" joined by "; " ('?' before an
 * unreadable type), are want. */
static int lists(const char *src, const char *want) {
  static const char *const spaces[] = {"constant", "device", "managed"};
  const_decl_var *v;
  int n = const_decl_list(src, &v);
  char got[2048] = "";
  size_t o = 0;
  for (int i = 0; i < n && o < sizeof got - 400; i++)
    o += (size_t)snprintf(got + o, sizeof got - o, "%s%s %s%s %s%s", i ? "; " : "",
                          spaces[v[i].space], v[i].status ? "?" : "", v[i].type, v[i].name,
                          v[i].is_array ? "[]" : "");
  free(v);
  if (n >= 0 && strcmp(got, want) == 0) return 1;
  printf("    in %s\n    got  %s\n    want %s\n", src, got, want);
  return 0;
}

int main(void) {
  PLAN(19);
  CHECK("__constant__ and __device__ alike, initialised or not",
        reads("__constant__ int c[4] = {1, 2};\n__device__ float f = 1.5f;\n", "f", "float") &&
            reads("__device__ int t[4] = {10, 20, 300, -40};", "t", "int") &&
            reads("__device__ int t[4];", "t", "int") && reads("__managed__ int u;", "u", "int"));
  CHECK("qualifiers, linkage and alignment are no part of the type",
        reads("static __device__ volatile unsigned int n;", "n", "unsigned int") &&
            reads("extern \"C\" __device__ const long long v = 3;", "v", "long long") &&
            reads("__device__ __align__(16) float v4[4];", "v4", "float") &&
            reads("float __device__ alignas(8) w[2];", "w", "float") &&
            reads("__device__ __constant__ short s[2];", "s", "short") &&
            reads("extern \"C\" {\n__device__ double d;\n}", "d", "double"));
  CHECK("arrays of several dimensions",
        reads("#define N 3\n__device__ float m[N][2 * N] = {{1}, {2}};", "m", "float"));
  CHECK("several declarators share the type; a pointer among them is said to be one",
        reads("__device__ int a = 1, b[2] = {3, 4}, c;", "b", "int") &&
            reads("__device__ int a = 1, b[2] = {3, 4}, c;", "c", "int") &&
            reads("__device__ int *p, q[4];", "q", "int") &&
            reads("__device__ int *p, q[4];", "p", "?int *") &&
            reads("__device__ int x{5}, y{6};", "y", "int"));
  CHECK("a __device__ function is no variable",
        reads("__device__ int f(int x) { return x; }", "f", "-") &&
            reads("__device__ inline float g() { return 1; }", "g", "-") &&
            reads("template <typename T> __device__ T h(T x) { return x; }", "h", "-") &&
            reads("__device__ int k(int table[4]);", "table", "-") &&
            reads("__device__ __forceinline__ int f2(int a, int b) { return a; }", "b", "-"));
  CHECK("comments, strings and directives are skipped",
        reads("// __device__ int x;\n/* __device__ int x; */\n__device__ float x;", "x", "float") &&
            reads("const char *s = \"__device__ int y;\";\n#define D __device__ int y\n", "y",
                  "-"));
  CHECK("a variable inside a function or struct is no module's",
        reads("__global__ void k() { int z[4]; z[0] = 1; }", "z", "-") &&
            reads("struct S { int q; };\n__device__ S z;", "q", "-"));
  CHECK("namespaces: ns::x is the x in ns, x the one at file scope",
        reads("namespace a { __device__ float x; }\n__device__ int x;", "x", "int") &&
            reads("namespace a { __device__ float x; }\n__device__ int x;", "a::x", "float") &&
            reads("namespace a::b { __device__ short x; }", "a::b::x", "short") &&
            reads("namespace { __device__ float x; }", "x", "-"));
  CHECK("typedefs of plain types are followed",
        reads("typedef unsigned char uchar;\n__device__ uchar px[4];", "px", "unsigned char") &&
            reads("typedef float real;\ntypedef real value;\n__device__ value v;", "v", "float"));
  CHECK("a standard name the source redefines is not taken for the standard type",
        reads("typedef double int32_t;\n__device__ int32_t v;", "v", "double") &&
            reads("struct int32_t { double d; };\n__device__ int32_t v;", "v", "?int32_t") &&
            reads("#define float int\n__device__ float v;", "v", "?float") &&
            reads("using real = float;\n__device__ real v;", "v", "?real") &&
            reads("typedef int *ip;\n__device__ ip v;", "v", "?ip"));
  CHECK("a typedef chain too long to follow is given up",
        reads("typedef double A; typedef A B; typedef B C; typedef C D; typedef D E;\n"
              "typedef E F;\n__device__ F v;", "v", "?B"));
  CHECK("digit separators start no character constant",
        reads("__device__ int big = 1'000; __device__ float after;", "after", "float"));
  CHECK("whether a variable has dimensions, and its memory space",
        shape("__constant__ float4 c;", "c", "one constant") &&
            shape("__device__ float2 c[3] = {};", "c", "array device") &&
            shape("__device__ int a = 1, b[2][2], c{3};", "b", "array device") &&
            shape("__device__ int a = 1, b[2][2], c{3};", "c", "one device") &&
            shape("__device__ int a[2] = {1, 2}, c;", "c", "one device") &&
            shape("__managed__ __device__ int4 m[1];", "m", "array managed") &&
            shape("__device__ __constant__ double2 d;", "d", "one constant"));
  CHECK("a listing: every variable at namespace scope, named with its namespaces, in order",
        lists("__constant__ float a[2] = {1, 2}, b = 3;\nnamespace ns { namespace in {\n"
              "__device__ int c; } __managed__ double d[4]; }\n__device__ __constant__ short e;\n"
              "extern \"C\" { __device__ float4 f; }\n__managed__ __device__ int g[1];",
              "constant float a[]; constant float b; device int ns::in::c; managed double "
              "ns::d[]; constant short e; device float4 f; managed int g[]"));
  CHECK("a listing takes no comment, string, directive, function, local, anonymous namespace",
        lists("// __constant__ float gone[4];\n/* __device__ int fake; */\n"
              "#define DECL(n) __constant__ float n[2]\nDECL(made);\n"
              "const char *s = \"__device__ int q;\";\n__device__ int twice(int v) { return v; }\n"
              "__global__ void k() { __shared__ int t[4]; static __device__ int z; }\n"
              "namespace { __device__ int hidden; }\nstruct S { int m; };\n"
              "template <typename T> __device__ T tv;\n__device__ int kept;",
              "device int kept"));
  CHECK("a listing says which types it cannot read and follows typedefs",
        lists("typedef unsigned char uchar;\n#define REAL float\nstruct P { int a; };\n"
              "__device__ uchar px[4];\n__device__ REAL r;\n__device__ P p, *pp;",
              "device unsigned char px[]; device ?REAL r; device ?P p; device ?P * pp") &&
            lists("", "") && lists("}}} __device__ int x; {{{", "device int x"));
  /* Deep braces, many words, long names, an unterminated comment: bounded, no crash. */
  static char deep[200000];
  size_t o = 0;
  for (int i = 0; i < 50000; i++) deep[o++] = '{';
  memcpy(deep + o, "__device__ int x;", 17);
  o += 17;
  for (int i = 0; i < 50000; i++) deep[o++] = '}';
  strcpy(deep + o, "__device__ float y;");
  CHECK("50000 braces deep: what is inside is no module's, what follows is",
        reads(deep, "x", "-") && reads(deep, "y", "float"));
  static char words[8000];
  o = 0;
  for (int i = 0; i < 900; i++) o += (size_t)snprintf(words + o, sizeof words - o, "const ");
  snprintf(words + o, sizeof words - o, "__device__ int w;");
  char longname[400];
  memset(longname, 'n', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  CHECK("too many words, a name too long, an unterminated comment or string: not found",
        reads(words, "w", "-") && reads("__device__ int x; /* ", "y", "-") &&
            reads("__device__ int x = \"", "x", "int") && reads("", "x", "-") &&
            reads("__device__ int x;", longname, "-") &&
            reads("}}}} __device__ int x;", "x", "int"));
  static char many[40000];
  o = 0;
  for (int i = 0; i < 300; i++)
    o += (size_t)snprintf(many + o, sizeof many - o, "__device__ T%d v%d;\n", i, i);
  const_decl_var *v;
  int n = const_decl_list(many, &v);
  CHECK("a listing follows at most 256 distinct types; the rest are unreadable, none dropped",
        n == 300 && v && v[255].status == 0 && strcmp(v[255].type, "T255") == 0 &&
            v[256].status == 1 && strcmp(v[299].name, "v299") == 0);
  free(v);
  return failures != 0;
}
