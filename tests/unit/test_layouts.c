/* test_layouts.c: the layouts the signature reader gives the types kernels take
 * (repl/compile/ctype_layout.c, ctype_attr.c, ctype_enum.c) and its reading of parameters in
 * array syntax (kernel_sig.c). Every expected size, alignment and offset was measured with
 * NVRTC (sizeof, alignof and member addresses in a kernel); every refusal asserts its reason.
 * The struct is passed by value to a kernel, as a learner's source would. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "kernel_sig.h"

#include "check.h"

/* The layout of `type` as kernel k(type v) in src takes it: "s=SIZE a=ALIGN f@OFF ...", or
 * "refused: WHY". Into a static buffer. */
static const char *layout(const char *src, const char *type) {
  static char out[1024];
  size_t len = strlen(src) + strlen(type) + 64;
  char *text = malloc(len);
  snprintf(text, len, "%s\n__global__ void k(%s v) {}\n", src, type);
  sig_kernel *k = NULL;
  int n = sig_find_kernels(text, &k);
  free(text);
  if (n != 1 || k[0].nparams != 1) {
    snprintf(out, sizeof out, "no kernel");
  } else if (k[0].params[0].lay < 0) {
    snprintf(out, sizeof out, "refused: %s", k[0].params[0].lay_why);
  } else {
    const lay_node *r = &k[0].lay.nodes[k[0].params[0].lay];
    int w = snprintf(out, sizeof out, "s=%zu a=%zu", r->size, r->align);
    for (int i = 0; r->kind == LAY_STRUCT && i < r->count && w < (int)sizeof out; i++) {
      const lay_node *f = &k[0].lay.nodes[r->first + i];
      w += snprintf(out + w, sizeof out - (size_t)w, " %s@%zu", f->name, f->offset);
    }
  }
  sig_free(k, n);
  return out;
}

/* Does the layout of type in src read want (exactly, or for a refusal as a part)? */
static int is(const char *src, const char *type, const char *want) {
  const char *got = layout(src, type);
  int ok = strncmp(want, "refused: ", 9) ? !strcmp(got, want)
                                          : !strncmp(got, "refused: ", 9) && strstr(got, want + 9);
  if (!ok) printf("# %s: got \"%s\", want \"%s\"\n", type, got, want);
  return ok;
}

static void test_member_alignment(void) {
  CHECK("alignas(2) on a member is kept and placed, not dropped",
        is("struct A { char a; alignas(2) char b; char c[5]; double x; };", "A",
           "s=16 a=8 a@0 b@2 c@3 x@8"));
  CHECK("alignas(type) takes the type's alignment",
        is("struct N { char c; double d; }; struct A { char a; alignas(N) char b; };", "A",
           "s=16 a=8 a@0 b@8"));
  CHECK("__align__(8) on a member",
        is("struct A { char a; __align__(8) char b; };", "A", "s=16 a=8 a@0 b@8"));
  CHECK("aligned after the name applies to that declarator alone",
        is("struct A { char a; char p __attribute__((aligned(4))), q; };", "A",
           "s=8 a=4 a@0 p@4 q@5"));
  CHECK("alignas before the type applies to every declarator",
        is("struct A { char a; alignas(4) char p, q; };", "A", "s=12 a=4 a@0 p@4 q@8"));
  CHECK("an attribute between type and name applies to every declarator",
        is("struct A { char a; int __attribute__((aligned(8))) b, c; };", "A",
           "s=24 a=8 a@0 b@8 c@16"));
  CHECK("alignas after the name", is("struct A { char a; int b alignas(8); };", "A",
                                     "s=16 a=8 a@0 b@8"));
  CHECK("alignas(0) is ignored, two alignas take the larger",
        is("struct A { char a; alignas(0) int b; }; struct B { char a; alignas(int) alignas(2) "
           "char b; };", "A", "s=8 a=4 a@0 b@4") &&
            is("struct B { char a; alignas(int) alignas(2) char b; };", "B", "s=8 a=4 a@0 b@4"));
  CHECK("alignas and aligned on the struct",
        is("struct alignas(16) S { float a; };", "S", "s=16 a=16 a@0") &&
            is("struct __attribute__((aligned)) S { char a; };", "S", "s=16 a=16 a@0") &&
            is("struct __align__(8) S { char a; };", "S", "s=8 a=8 a@0"));
  CHECK("a member of an alignas struct, and an array under __align__",
        is("struct alignas(16) B { float a; }; struct A { char a; B b; __align__(16) float "
           "x[3]; };", "A", "s=48 a=16 a@0 b@16 x@32"));
}

static void test_packing(void) {
  CHECK("a packed struct: 13 bytes, not 16",
        is("struct __attribute__((packed)) Rec { char tag; int v; double d; };", "Rec",
           "s=13 a=1 tag@0 v@1 d@5"));
  CHECK("__packed__ and a packed typedef'd struct",
        is("struct __attribute__((__packed__)) P { char a; int b; };", "P", "s=5 a=1 a@0 b@1") &&
            is("typedef struct __attribute__((packed)) { char a; int b; } T;", "T",
               "s=5 a=1 a@0 b@1"));
  CHECK("a packed member", is("struct P { char tag; int v __attribute__((packed)); double d; };",
                              "P", "s=16 a=8 tag@0 v@1 d@8"));
  CHECK("packed after a name applies to it alone, before the type to all",
        is("struct P { char a; int b __attribute__((packed)), c; };", "P",
           "s=12 a=4 a@0 b@1 c@8") &&
            is("struct P { char a; __attribute__((packed)) int b, c; };", "P",
               "s=9 a=1 a@0 b@1 c@5"));
  CHECK("alignas and aligned raise a member of a packed struct",
        is("struct __attribute__((packed)) P { char a; alignas(4) int b; };", "P",
           "s=8 a=4 a@0 b@4") &&
            is("struct __attribute__((packed)) P { char a; int b __attribute__((aligned(2))); };",
               "P", "s=6 a=2 a@0 b@2"));
  CHECK("packed lowers vector and struct members to 1",
        is("struct N { char c; double d; }; struct __attribute__((packed)) P { char a; float4 f; "
           "N n; };", "P", "s=33 a=1 a@0 f@1 n@17"));
  CHECK("packed with aligned(4) on the struct",
        is("struct __attribute__((aligned(4), packed)) P { char a; int b; short c; };", "P",
           "s=8 a=4 a@0 b@1 c@5"));
  CHECK("#pragma pack(push, 2) caps a double, and pop restores",
        is("#pragma pack(push, 2)\nstruct Q { char a; double d; };\n#pragma pack(pop)\n", "Q",
           "s=10 a=2 a@0 d@2") &&
            is("#pragma pack(push, 2)\n#pragma pack(pop)\nstruct Q { char a; double d; };", "Q",
               "s=16 a=8 a@0 d@8"));
  CHECK("under #pragma pack alignas is not capped, aligned is",
        is("#pragma pack(2)\nstruct Q { char a; alignas(8) int b; };", "Q", "s=16 a=8 a@0 b@8") &&
            is("#pragma pack(2)\nstruct Q { char a; int b __attribute__((aligned(8))); };", "Q",
               "s=6 a=2 a@0 b@2") &&
            is("#pragma pack(2)\nstruct Q { char a; __align__(8) int b; };", "Q",
               "s=6 a=2 a@0 b@2"));
  CHECK("#pragma pack caps a float4 member and a nested struct",
        is("#pragma pack(push, 2)\nstruct Q { char a; float4 f; };\n#pragma pack(pop)", "Q",
           "s=18 a=2 a@0 f@2") &&
            is("struct N { char c; double d; };\n#pragma pack(1) // packed\nstruct Q { char a; "
               "N n; };\n#pragma pack()\n", "Q", "s=17 a=1 a@0 n@1"));
  const char *nested = "#pragma pack(push)\n#pragma pack(1)\nstruct Q7 { char a; int b; };\n"
                       "#pragma pack(push, 4)\nstruct Q8 { char a; double b; };\n"
                       "#pragma pack(pop)\nstruct Q9 { char a; int b; };\n#pragma pack(pop)\n"
                       "struct Q10 { char a; int b; };\n";
  CHECK("nested push and pop", is(nested, "Q7", "s=5 a=1 a@0 b@1") &&
                                   is(nested, "Q8", "s=12 a=4 a@0 b@4") &&
                                   is(nested, "Q9", "s=5 a=1 a@0 b@1") &&
                                   is(nested, "Q10", "s=8 a=4 a@0 b@4"));
  CHECK("the struct's own alignment is not capped by #pragma pack",
        is("#pragma pack(2)\nstruct __attribute__((aligned(8))) Q { char a; int b; };", "Q",
           "s=8 a=8 a@0 b@2") &&
            is("#pragma pack(1)\nstruct alignas(4) Q { char a; int b; char c; };", "Q",
               "s=8 a=4 a@0 b@1 c@5"));
}

static void test_members(void) {
  CHECK("every declarator of a member with initializers",
        is("struct S { int a = 1, b = 2; float v{0}, w{1.5f}; };", "S",
           "s=16 a=4 a@0 b@4 v@8 w@12"));
  CHECK("member functions, constructors and statics take no room",
        is("struct S { float x; __device__ S() : x(0) {} __device__ S(float v) : x{v} {} "
           "__device__ float get() const { return x; } static const int N = 4; "
           "__device__ S &operator=(const S &o) = default; int n; };", "S",
           "s=8 a=4 x@0 n@4"));
  CHECK("an elaborated enum member", is("enum Mode { A = 3, B = 7 }; struct S { enum Mode m; "
                                        "float v; };", "S", "s=8 a=4 m@0 v@4"));
  CHECK("harmless attributes pass",
        is("struct S { [[maybe_unused]] int a; int b __attribute__((unused)); };", "S",
           "s=8 a=4 a@0 b@4"));
}

static void test_enums(void) {
  CHECK("a plain enum member is an int",
        is("enum Mode { A = 3, B = 7 }; struct S { Mode m; float v; };", "S", "s=8 a=4 m@0 v@4"));
  CHECK("an enum class with a fixed type takes that type's size",
        is("enum class Op : unsigned char { Add = 1, Mul = 2 }; struct S { Op op; float v; };",
           "S", "s=8 a=4 op@0 v@4") &&
            is("enum E4 : unsigned char { X4 }; struct W { char a; E4 e; int b; };", "W",
               "s=8 a=4 a@0 e@1 b@4"));
  CHECK("an enum class without a type, an opaque one, a typedef'd enum",
        is("enum class E { X }; struct S { char c; E e; };", "S", "s=8 a=4 c@0 e@4") &&
            is("enum class E3 : short; struct S { char c; E3 e; };", "S", "s=4 a=2 c@0 e@2") &&
            is("typedef enum { P, Q = P + 4 } T; struct S { char c; T t; };", "S",
               "s=8 a=4 c@0 t@4"));
  CHECK("a plain enum whose values may not fit in int is refused with the fix",
        is("enum L { LA = 0x100000000 }; struct S { L l; };", "S",
           "refused: enum 'L' has a value this reader does not evaluate (LA = 0x100000000), so "
           "its size is the compiler's to choose: give it a fixed type, as in enum L : int"));
  sig_kernel *k = NULL;
  int n = sig_find_kernels("enum class Op : short { A }; enum M { X };\n"
                           "__global__ void k(Op o, M *m, M v) {}", &k);
  CHECK("enum parameters: a value is an integer, a pointer takes its integer's array",
        n == 1 && k[0].params[0].kind == SIG_INT && k[0].params[0].dtype == DT_I16 &&
            k[0].params[1].kind == SIG_POINTER && k[0].params[1].dtype == DT_I32 &&
            k[0].params[2].kind == SIG_INT && k[0].params[2].dtype == DT_I32);
  sig_free(k, n);
}

static void test_refusals(void) {
  CHECK("an attribute after the closing brace, which NVRTC ignores",
        is("struct P { char t; int v; } __attribute__((packed));", "P",
           "refused: struct 'P' has an attribute after its closing brace, which the compiler "
           "ignores: write it after the keyword, as in struct __attribute__((packed)) P"));
  CHECK("[[gnu::aligned]], which NVRTC ignores",
        is("struct P { char a; [[gnu::aligned(8)]] char b; };", "P",
           "refused: a member of 'P' has [[gnu::aligned(8)]], whose effect on the layout this "
           "reader does not know"));
  CHECK("an alignment it does not evaluate",
        is("struct P { char a; alignas(2 * sizeof(int)) char b; };", "P",
           "refused: a member of 'P' has alignas(2 * sizeof(int)), an alignment this reader "
           "does not evaluate (it reads a number or a type there)"));
  CHECK("an alignment that is no power of two, or huge",
        is("struct P { char a; alignas(3) char b; };", "P",
           "refused: a member of 'P' has alignas(3), which is not a power of two up to 4096") &&
            is("struct P { char a; __align__(99999999999999999999999) char b; };", "P",
               "refused: a member of 'P' has __align__(") &&
            is("struct alignas(1048576) P { char a; };", "P",
               "refused: struct 'P' has alignas(1048576), which is not a power of two up to"));
  CHECK("an attribute whose effect it does not know",
        is("struct P { char a; int b __attribute__((mode(DI))); };", "P",
           "refused: a member of 'P' has __attribute__((mode(DI))), whose effect on the layout "
           "this reader does not know"));
  CHECK("a #pragma pack it does not follow",
        is("#pragma pack(push, r1, 4)\nstruct P { char a; int b; };", "P",
           "refused: struct 'P': a #pragma pack before it is one this reader does not follow") &&
            is("#pragma pack(pop)\nstruct P { char a; int b; };", "P",
               "refused: struct 'P': a #pragma pack before it") &&
            is("#pragma pack(push, 1\nstruct P { char a; int b; };", "P",
               "refused: struct 'P': a #pragma pack before it") &&
            is("#pragma pack(3)\nstruct P { char a; int b; };", "P",
               "refused: struct 'P': a #pragma pack before it"));
  CHECK("a #pragma pack inside the body",
        is("struct P { char a;\n#pragma pack(1)\n int b; };", "P",
           "refused: struct 'P' has a #pragma pack inside its body"));
  CHECK("a pointer to a function or to an array as a member",
        is("struct P { float (*fp)(int); };", "P",
           "refused: struct 'P' has a member declared with parentheses (float (*fp)") &&
            is("struct P { int (x); };", "P", "refused: struct 'P' has a member declared with "
                                              "parentheses"));
  CHECK("a virtual function, fields mixed with a function, a type defined inside",
        is("struct P { virtual void f(); int x; };", "P",
           "refused: struct 'P' has a virtual function") &&
            is("struct P { int x, f(); };", "P",
               "refused: struct 'P' declares fields and a function in one declaration") &&
            is("struct P { struct { int a; } in; };", "P",
               "refused: struct 'P' defines a type (a struct, union or enum) inside it") &&
            is("struct P { enum { A, B } m; };", "P", "refused: struct 'P' defines a type"));
}

/* Hostile source: refused with a reason, never a crash, an overflow or a hang. */
static void test_hostile(void) {
  size_t cap = 1 << 20, n = 0;
  char *src = malloc(cap);
  n += (size_t)snprintf(src + n, cap - n, "struct S0 { char c; };\n");
  for (int i = 1; i < 100; i++)
    n += (size_t)snprintf(src + n, cap - n, "struct S%d { S%d a; char c; };\n", i, i - 1);
  CHECK("structs nested 100 deep", is(src, "S99", "refused: nests structs more than 8 deep"));
  n = 0;
  n += (size_t)snprintf(src + n, cap - n, "struct W0 { char c; };\n");
  for (int i = 1; i < 8; i++) { /* 200 fields of the one before: 200^7 nodes unbounded */
    n += (size_t)snprintf(src + n, cap - n, "struct W%d {", i);
    for (int f = 0; f < 200; f++) n += (size_t)snprintf(src + n, cap - n, " W%d f%d;", i - 1, f);
    n += (size_t)snprintf(src + n, cap - n, " };\n");
  }
  CHECK("a struct of 200^7 nested fields", is(src, "W7", "refused: has more than 4096 fields"));
  CHECK("alignas of itself", is("struct S { alignas(S) char c; };", "S", "refused: "));
  CHECK("unclosed attributes and bodies",
        !strncmp(layout("struct S { alignas(8 char c; };", "S"), "refused: ", 9) &&
            !strncmp(layout("struct S { char c __attribute__((aligned(4)); };", "S"), "refused",
                     7) &&
            !strncmp(layout("struct S { char c; [[gnu::x ", "S"), "refused: ", 9) &&
            !strncmp(layout("#pragma pack(push,\nstruct S { char c; };", "S"), "refused", 7));
  memset(src, '(', cap - 64);
  memcpy(src, "#pragma pack", 12);
  snprintf(src + cap - 64, 64, "\nstruct S { char c; };");
  CHECK("a #pragma pack line of a million parentheses",
        is(src, "S", "refused: struct 'S': a #pragma pack before it is one this reader does not "
                     "follow (it follows pack(N), pack(), pack(push[, N]) and pack(pop))"));
  free(src);
}

static void test_array_params(void) {
  sig_kernel *k = NULL;
  int n = sig_find_kernels("__global__ void ad(float a[], const int b[8], float (*m)[4], "
                           "float r[][2][3], void (*f)(int), int n) {}", &k);
  char buf[SIG_PARAM_TEXT];
  CHECK("float a[] is float *a, and so checked",
        n == 1 && k[0].nparams == 6 && k[0].params[0].kind == SIG_POINTER &&
            k[0].params[0].dtype == DT_F32 && k[0].params[0].row == 1 &&
            !strcmp(sig_param_text(&k[0].params[0], buf, sizeof buf), "float *a"));
  CHECK("const int b[8] is const int *b",
        n == 1 && k[0].params[1].dtype == DT_I32 && k[0].params[1].is_const &&
            !strcmp(sig_param_text(&k[0].params[1], buf, sizeof buf), "const int *b"));
  CHECK("float (*m)[4] points at rows of 4 floats",
        n == 1 && k[0].params[2].kind == SIG_POINTER && k[0].params[2].dtype == DT_F32 &&
            k[0].params[2].row == 4 && !strcmp(k[0].params[2].type, "float (*)[4]") &&
            !strcmp(sig_param_text(&k[0].params[2], buf, sizeof buf), "float (*m)[4]"));
  CHECK("float r[][2][3] points at rows of 6",
        n == 1 && k[0].params[3].dtype == DT_F32 && k[0].params[3].row == 6 &&
            !strcmp(sig_param_text(&k[0].params[3], buf, sizeof buf), "float (*r)[2][3]"));
  CHECK("a function pointer keeps its spelling",
        n == 1 && !strcmp(sig_param_text(&k[0].params[4], buf, sizeof buf), "void (*f)(int)") &&
            k[0].params[5].kind == SIG_INT);
  sig_free(k, n);
  n = sig_find_kernels("__global__ void o(float (*m)[4]) {}\n__global__ void o(int *p) {}", &k);
  CHECK("an overload taking a pointer to rows is named as C++ spells it",
        n == 2 && !strcmp(k[0].name, "o(float (*)[4])") &&
            !strcmp(k[0].expr, "(void(*)(float (*)[4]))o"));
  sig_free(k, n);
  n = sig_find_kernels("__global__ void h(float a[N], float (*b)[M], float c[][ ) {}", &k);
  CHECK("sizes it cannot read: still pointers, rows unknown",
        n == 1 && k[0].params[0].dtype == DT_F32 && k[0].params[1].row == 0);
  sig_free(k, n);
}

int main(void) {
  PLAN(52);
  test_member_alignment();
  test_packing();
  test_members();
  test_enums();
  test_refusals();
  test_hostile();
  test_array_params();
  return failures ? 1 : 0;
}
