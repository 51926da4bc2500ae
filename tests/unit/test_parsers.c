/* test_parsers.c: unit tests of the pure C helpers: kernel signatures from source, parameter
 * layouts and resource use from NVRTC's output, dtype conversions, NVRTC log rewriting. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "kernel_sig.h"
#include "launch_bounds.h"
#include "nvrtc.h"
#include "ptxinfo.h"

#include "check.h"

static void test_signatures(void) {
  sig_kernel *k = NULL;
  const char *src =
      "// __global__ void commented(int *x) {}\n"
      "#define STR \"__global__ void in_macro()\"\n"
      "__global__ void __launch_bounds__(256, 2) add(const float *__restrict__ a, float* b, int n,\n"
      "                                             double s, unsigned char *bytes, bool flag) {}\n"
      "template <typename T> __global__ void tmpl(T *x) {}\n"
      "extern \"C\" __global__ void plain(void) {}\n"
      "__global__ void add(const float *__restrict__ a, float* b, int n, double s, unsigned char *bytes, bool flag);\n";
  int n = sig_find_kernels(src, &k);
  CHECK("finds three kernels, skipping comments, strings and a repeated declaration", n == 3);
  CHECK("name after __launch_bounds__", strcmp(k[0].name, "add") == 0);
  CHECK("six parameters", k[0].nparams == 6);
  CHECK("const restrict pointer", k[0].params[0].kind == SIG_POINTER && k[0].params[0].dtype == DT_F32 &&
                                      k[0].params[0].is_const && strcmp(k[0].params[0].name, "a") == 0);
  CHECK("type shown as written", strcmp(k[0].params[0].type, "const float *") == 0);
  CHECK("int scalar", k[0].params[2].kind == SIG_INT && strcmp(k[0].params[2].name, "n") == 0);
  CHECK("double scalar", k[0].params[3].kind == SIG_FLOAT);
  CHECK("unsigned char pointer is u8", k[0].params[4].dtype == DT_U8);
  CHECK("bool", k[0].params[5].kind == SIG_BOOL);
  sig_kernel *w = NULL;
  CHECK("64-bit unsigned and C integer spellings",
        sig_find_kernels("__global__ void w(unsigned long long *p, size_t n, char c, unsigned long u, "
                         "uint8_t b, long long int *q) {}", &w) == 1 &&
            w[0].params[0].kind == SIG_POINTER && w[0].params[0].dtype == DT_U64 && w[0].params[1].kind == SIG_INT &&
            w[0].params[2].kind == SIG_INT && w[0].params[2].dtype == -1 && w[0].params[3].kind == SIG_INT &&
            w[0].params[4].kind == SIG_INT && w[0].params[5].dtype == DT_I64);
  sig_free(w, 1);
  CHECK("template noticed", k[1].is_template && strcmp(k[1].name, "tmpl") == 0);
  CHECK("(void) is no parameters", k[2].nparams == 0 && strcmp(k[2].name, "plain") == 0);
  char buf[256];
  sig_format(&k[0], buf, sizeof buf);
  CHECK("formatted signature",
        strcmp(buf, "add(const float *a, float *b, int n, double s, unsigned char *bytes, bool flag)") == 0);
  sig_free(k, n);
  CHECK("no kernels in plain C", (n = sig_find_kernels("int main() { return 0; }", &k)) == 0 && k);
  sig_free(k, n);
  CHECK("unnamed parameters: the type alone, no trailing space",
        (n = sig_find_kernels("__global__ void u(float *, int, float *a) {}", &k)) == 1 &&
            (sig_format(&k[0], buf, sizeof buf), strcmp(buf, "u(float *, int, float *a)") == 0));
  char one[SIG_PARAM_TEXT];
  CHECK("one parameter's text, named and unnamed",
        n == 1 && strcmp(sig_param_text(&k[0].params[2], one, sizeof one), "float *a") == 0 &&
            strcmp(sig_param_text(&k[0].params[1], one, sizeof one), "int") == 0);
  sig_free(k, n);
  CHECK("unterminated source does not crash", (n = sig_find_kernels("__global__ void f(int *a", &k)) == 1 &&
                                                  k[0].nparams == -1);
  sig_free(k, n);
}

/* Limits: none but the GPU's. 300 parameters keep their names and kinds (the scanner stopped
 * at 32), 70 kernels are all found (it stopped at 64), a 200-character name is whole (it was
 * cut at 127). */
static void test_signature_limits(void) {
  static char src[65536];
  size_t w = 0;
  w += (size_t)snprintf(src + w, sizeof src - w, "__global__ void many(");
  for (int i = 0; i < 300; i++) w += (size_t)snprintf(src + w, sizeof src - w, "%sfloat *p%d", i ? ", " : "", i);
  w += (size_t)snprintf(src + w, sizeof src - w, ") {}\n");
  for (int i = 0; i < 69; i++) w += (size_t)snprintf(src + w, sizeof src - w, "__global__ void k%d(int n) {}\n", i);
  char longname[201];
  memset(longname, 'n', 200), longname[200] = 0;
  snprintf(src + w, sizeof src - w, "__global__ void %s(double x) {}\n", longname);
  sig_kernel *k = NULL;
  int n = sig_find_kernels(src, &k);
  CHECK("70 kernels and one more are all found", n == 71);
  char shown[64] = "";
  if (n > 0) sig_format(&k[0], shown, sizeof shown);
  CHECK("a signature too long to show ends in ...)", strlen(shown) == 63 && strcmp(shown + 59, "...)") == 0);
  CHECK("300 parameters, each named and typed", n > 0 && k[0].nparams == 300 && strcmp(k[0].params[299].name, "p299") == 0 &&
                                                    k[0].params[299].kind == SIG_POINTER && k[0].params[299].dtype == DT_F32);
  CHECK("a 200-character name is whole", n == 71 && strcmp(k[70].name, longname) == 0 && strcmp(k[70].expr, longname) == 0);
  sig_free(k, n);
}

/* Names as NVRTC's name expressions take them: namespaces, explicit instantiations, overloads. */
static void test_signature_names(void) {
  const char *src =
      "namespace outer { namespace inner {\n"
      "  __global__ void deep(float *a) {}\n"
      "} __global__ void mid(int *a) {} }\n"
      "namespace { __global__ void anon(int n) {} }\n"
      "namespace ns = outer;\n"
      "template <typename T> __global__ void fill(T *a, T v) {}\n"
      "template __global__ void fill<float>(float *a, float v);\n"
      "template __global__ void fill< int >(int *a, int v);\n"
      "__global__ void over(float *a) {}\n"
      "__global__ void over(int *a) {}\n"
      "__global__ void over(float *a);\n"
      "__global__ void top(void) {}\n";
  sig_kernel *k = NULL;
  int n = sig_find_kernels(src, &k);
  CHECK("names: nine kernels (a declaration of an overload is not a tenth)", n == 9);
  if (n != 9) { sig_free(k, n); return; }
  CHECK("nested namespaces qualify the name", strcmp(k[0].name, "outer::inner::deep") == 0 && strcmp(k[0].expr, k[0].name) == 0);
  CHECK("a closed namespace is left", strcmp(k[1].name, "outer::mid") == 0);
  CHECK("an anonymous namespace adds nothing", strcmp(k[2].name, "anon") == 0);
  CHECK("a template is marked", strcmp(k[3].name, "fill") == 0 && k[3].is_template);
  CHECK("an explicit instantiation is named with its arguments", strcmp(k[4].name, "fill<float>") == 0 && !k[4].is_template &&
                                                                     k[4].nparams == 2);
  CHECK("spaces inside template arguments are squeezed", strcmp(k[5].name, "fill<int>") == 0);
  CHECK("overloads are named by their parameter types", strcmp(k[6].name, "over(float *)") == 0 && k[6].overloaded &&
                                                            strcmp(k[7].name, "over(int *)") == 0);
  CHECK("and looked up by a function-pointer cast", strcmp(k[6].expr, "(void(*)(float *))over") == 0);
  CHECK("after an alias (namespace ns = outer;) names are at the top level again",
        strcmp(k[7].expr, "(void(*)(int *))over") == 0 && strcmp(k[8].name, "top") == 0);
  sig_free(k, n);
}

/* The attributes a kernel's declaration may carry, with their balanced arguments, between
 * __global__ and the name, before __global__, or between a template's <...> and __global__:
 * none of them is the kernel's name (__cluster_dims__ and __maxnreg__ once were). */
static void test_signature_attributes(void) {
  static const struct { const char *src, *name; int nparams; } forms[] = {
      {"__global__ void __cluster_dims__(2, 1, 1) a1(float *a, int n) {}", "a1", 2},
      {"__global__ void __maxnreg__(32) a2(int *a) {}", "a2", 1},
      {"__global__ __launch_bounds__(128, 2) void a3(int *a, int n) {}", "a3", 2},
      {"__global__ void __launch_bounds__((BLOCK) * 2, (MIN)) a4(int *a) {}", "a4", 1},
      {"__global__ void __attribute__((noinline, used)) a5(int *a) {}", "a5", 1},
      {"__global__ void __attribute__((deprecated(\"old\"))) a6(int *a) {}", "a6", 1},
      {"__attribute__((used)) __global__ void a7(int *a) {}", "a7", 1},
      {"__cluster_dims__(2) __launch_bounds__(64) __global__ void a8(int *a) {}", "a8", 1},
      {"__global__ void __cluster_dims__((2), 1, 1) __maxnreg__(40) a9(int *a, int n) {}", "a9", 2},
      {"__global__ [[nodiscard(\"x\")]] void a10(int *a) {}", "a10", 1},
      {"extern \"C\" __global__ void\n__launch_bounds__(256)\na11(int *a) {}", "a11", 1},
  };
  int all = 1;
  for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
    sig_kernel *k = NULL;
    int n = sig_find_kernels(forms[i].src, &k);
    int ok = n == 1 && strcmp(k[0].name, forms[i].name) == 0 && k[0].nparams == forms[i].nparams;
    if (!ok) printf("    %s: found %d, %s\n", forms[i].src, n, n > 0 ? k[0].name : "");
    all &= ok;
    sig_free(k, n);
  }
  CHECK("attributes with arguments are skipped wherever they stand", all);
  sig_kernel *k = NULL;
  int n = sig_find_kernels("template <int B> __launch_bounds__(B) __global__ void t1(float *a) {}\n"
                           "template <typename T> static __forceinline__ __global__\n"
                           "  void __cluster_dims__(2, 1, 1) t2(T *a) {}\n", &k);
  CHECK("a template is a template past the attributes before __global__",
        n == 2 && strcmp(k[0].name, "t1") == 0 && k[0].is_template &&
            strcmp(k[1].name, "t2") == 0 && k[1].is_template);
  sig_free(k, n);
  n = sig_find_kernels("int t[2]; __global__ void after_array(int *a) {}", &k);
  CHECK("an array's brackets before a kernel are not an attribute",
        n == 1 && strcmp(k[0].name, "after_array") == 0 && !k[0].is_template);
  sig_free(k, n);
  n = sig_find_kernels("struct P { float w[4]; int n; };\n"
                       "__global__ void g(const __grid_constant__ P p, float *o) {}", &k);
  CHECK("a __grid_constant__ struct is a struct taken by value, with its layout",
        n == 1 && k[0].params[0].kind == SIG_AGGREGATE && k[0].params[0].lay >= 0 &&
            strcmp(k[0].params[0].base, "P") == 0 && strcmp(k[0].params[0].type, "const P") == 0);
  sig_free(k, n);
}

static void test_ptx_params(void) {
  const char *ptx =
      ".visible .entry _Z3fooPfid(\n"
      "\t.param .u64 .ptr .align 1 _Z3fooPfid_param_0,\n"
      "\t.param .u32 _Z3fooPfid_param_1,\n"
      "\t.param .f64 _Z3fooPfid_param_2,\n"
      "\t.param .align 16 .b8 _Z3fooPfid_param_3[32]\n"
      ")\n{\n}\n";
  ptx_param room[4];
  ptx_entry_info e = {0};
  CHECK("entry counted with no room", ptx_entry_params(ptx, "_Z3fooPfid", &e) == 0 && e.nparams == 4 && e.param_bytes == 64);
  e.params = room, e.cap = 4;
  CHECK("entry found", ptx_entry_params(ptx, "_Z3fooPfid", &e) == 0);
  CHECK("four params", e.nparams == 4);
  CHECK("pointer: 8 bytes at 0", e.params[0].size == 8 && e.params[0].offset == 0);
  CHECK("u32 at 8", e.params[1].size == 4 && e.params[1].offset == 8);
  CHECK("f64 aligned to 16", e.params[2].offset == 16 && strcmp(e.params[2].ptx_type, "f64") == 0);
  CHECK("aggregate: 32 bytes aligned 16", e.params[3].size == 32 && e.params[3].offset == 32);
  CHECK("total", e.param_bytes == 64);
  CHECK("missing entry", ptx_entry_params(ptx, "_Z3barv", &e) == -1);
  CHECK("prefix of another name is not a match", ptx_entry_params(ptx, "_Z3foo", &e) == -1);
}

/* The launch bounds cuda.kernel reads from an .entry, with launch_bounds.h's reader, the one
 * the simulator's parser uses: a bad bound is refused with the simulator's words (tests/sim/
 * test_bounds.c), never read as 1 as this reader once did. */
static void test_ptx_bounds(void) {
  lb_bounds b;
  char why[512] = "";
  const char *ptx = ".visible .entry k(\n\t.param .u64 p\n)\n.maxntid 128, 2 // .maxntid 1\n"
                    ".minnctapersm 4 .maxnreg 64 .reqnctapercluster 2, 1, 1 .explicitcluster\n"
                    "{\n}\n";
  CHECK("every directive read, a comment's skipped",
        ptx_entry_bounds(ptx, "k", &b, why, sizeof why) == 0 && b.maxntid[0] == 128 &&
            b.maxntid[1] == 2 && b.maxntid[2] == 1 && b.min_blocks == 4 && b.maxnreg == 64 &&
            b.cluster[0] == 2 && b.explicit_cluster && lb_max_threads(&b) == 256);
  CHECK("a bound of 0 is refused, naming it",
        ptx_entry_bounds(".entry k()\n.maxntid 0\n{\n}\n", "k", &b, why, sizeof why) == -1 &&
            strcmp(why, "bad launch bound '0' after .maxntid: each of its numbers must be a whole "
                        "number from 1 to 2147483647") == 0 && b.maxntid[0] == 0);
  CHECK("a bound past 2^31 is refused",
        ptx_entry_bounds(".entry k() .maxntid 4294967296 {}", "k", &b, why, sizeof why) == -1 &&
            strstr(why, "'4294967296' after .maxntid"));
  CHECK("a fourth dimension is refused",
        ptx_entry_bounds(".entry k() .reqntid 1,1,1,1 {}", "k", &b, why, sizeof why) == -1 &&
            strcmp(why, "bad launch bound: .reqntid takes 3 numbers, not more") == 0);
  CHECK("a missing entry says so",
        ptx_entry_bounds(".entry k() {}", "j", &b, why, sizeof why) == -1 &&
            strcmp(why, "no .entry j in its PTX") == 0);
  lb_dim3 one = {1, 1, 1}, big = {300, 1, 1};
  ptx_entry_bounds(".entry k() .maxntid 256 {}", "k", &b, why, sizeof why);
  CHECK("a block over the bound is refused in the simulator's words",
        lb_check(&b, "k", one, big, 8, why, sizeof why) == -1 &&
            strstr(why, "kernel k was declared with __launch_bounds__(256): a block of 300 threads"));
}

static void test_ptx_entry_names(void) {
  const char *ptx =
      "// .entryway is a word, not an entry\n"
      ".visible .entry twice(\n\t.param .u64 twice_param_0\n)\n{\n}\n"
      ".visible .entry _ZN2ns5sevenEPf(\n\t.param .u64 p\n)\n{\n}\n"
      ".visible .entry a_name_of_twenty_char(\n)\n{\n}\n"
      ".visible .entry last(\n)\n{\n}\n";
  char name[16];
  CHECK("first entry", ptx_entry_name(ptx, 0, name, sizeof name) == 0 && strcmp(name, "twice") == 0);
  CHECK("a mangled entry whole", ptx_entry_name(ptx, 1, name, sizeof name) == 0 &&
                                     strcmp(name, "_ZN2ns5sevenEPf") == 0);
  CHECK("a name too long for the room: 1 and empty, not a cut name",
        ptx_entry_name(ptx, 2, name, sizeof name) == 1 && name[0] == '\0');
  CHECK("the entry after it is still found", ptx_entry_name(ptx, 3, name, sizeof name) == 0 &&
                                                 strcmp(name, "last") == 0);
  CHECK("past the last entry", ptx_entry_name(ptx, 4, name, sizeof name) == -1);
  CHECK("no entries at all", ptx_entry_name("// nothing\n", 0, name, sizeof name) == -1);
}

static void test_ptxas(void) {
  const char *log =
      "ptxas info    : Compiling entry function '_Z1av' for 'sm_90'\n"
      "ptxas info    : Function properties for _Z1av\n"
      "ptxas         .     40 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n"
      "ptxas info    : Used 32 registers, used 1 barriers, 256 bytes smem, 380 bytes cmem[0]\n"
      "ptxas info    : Compiling entry function '_Z1bv' for 'sm_90'\n"
      "ptxas info    : Used 8 registers, used 0 barriers\n";
  ptxas_info a, b, c;
  ptxas_parse(log, "_Z1av", &a);
  ptxas_parse(log, "_Z1bv", &b);
  ptxas_parse(log, "_Z1cv", &c);
  CHECK("registers", a.registers == 32 && b.registers == 8);
  CHECK("shared, stack, spills, constant", a.shared_static == 256 && a.stack_bytes == 40 &&
                                               a.spill_bytes == 8 && a.const_bytes == 380);
  CHECK("second kernel has no shared memory", b.shared_static == 0 && b.stack_bytes == 0);
  CHECK("unknown kernel", c.registers == -1);
}

static void test_dtypes(void) {
  CHECK("names", dtype_parse("f64") == DT_F64 && dtype_parse("u8") == DT_U8 && dtype_parse("f8") == -1);
  CHECK("16- and 8-bit names", dtype_parse("f16") == DT_F16 && dtype_parse("bf16") == DT_BF16 &&
                                   dtype_parse("i16") == DT_I16 && dtype_parse("u16") == DT_U16 &&
                                   dtype_parse("i8") == DT_I8);
  CHECK("their C names", dtype_from_c_type("__half") == DT_F16 && dtype_from_c_type("half") == DT_F16 &&
                             dtype_from_c_type("nv_bfloat16") == DT_BF16 &&
                             dtype_from_c_type("short") == DT_I16 && dtype_from_c_type("uint16_t") == DT_U16 &&
                             dtype_from_c_type("signed char") == DT_I8 && dtype_from_c_type("char") == -1);
  CHECK("C names", dtype_from_c_type("unsigned int") == DT_U32 && dtype_from_c_type("long long") == DT_I64);
  unsigned char buf[16];
  dtype_set_i(DT_U32, buf, 0, 4294967295LL);
  CHECK("u32 keeps its top bit", dtype_get_i(DT_U32, buf, 0) == 4294967295LL);
  dtype_set_i(DT_I64, buf, 1, -9007199254740993LL);
  CHECK("i64 keeps every bit", dtype_get_i(DT_I64, buf, 1) == -9007199254740993LL);
  dtype_set_f(DT_F32, buf, 0, 0.1);
  CHECK("f32 rounds", dtype_get_f(DT_F32, buf, 0) == (double)0.1f);
  /* u64, the row added to dtypes.def alone: its spellings, its same-bits reading, its range */
  CHECK("u64's names", dtype_parse("u64") == DT_U64 &&
                           dtype_from_c_type("unsigned long long") == DT_U64 &&
                           dtype_from_c_type("uint64_t") == DT_U64 &&
                           dtype_from_c_type("size_t") == DT_U64 &&
                           dtype_from_c_type("unsigned long") == DT_U64);
  dtype_set_i(DT_U64, buf, 0, -1);
  CHECK("u64 takes -1 as all ones and reads it back as the same bits",
        dtype_get_i(DT_U64, buf, 0) == -1 && dtype_get_f(DT_U64, buf, 0) == 18446744073709551615.0);
  dtype_set_f(DT_U64, buf, 1, 9223372036854775808.0);
  CHECK("u64 takes 2^63 from a float", dtype_get_i(DT_U64, buf, 1) == INT64_MIN);
  char range[48];
  CHECK("ranges from the rows", strcmp(dtype_range_text(DT_U64, range, sizeof range),
                                       "0..18446744073709551615") == 0 &&
                                    strcmp(dtype_range_text(DT_I8, range, sizeof range), "-128..127") == 0 &&
                                    dtype_table[DT_I16].lo == INT16_MIN && dtype_table[DT_U32].hi == UINT32_MAX);
  CHECK("every Lua integer fits u64 and i64, not u8", dtype_holds_int(DT_U64, -5) && dtype_holds_int(DT_I64, INT64_MIN) &&
                                                            !dtype_holds_int(DT_U8, 256) && !dtype_holds_int(DT_U8, -1));
  CHECK("whole floats past 2^63 fit u64 only", dtype_holds_whole(DT_U64, 1e19) && !dtype_holds_whole(DT_U64, 2e19) &&
                                                   !dtype_holds_whole(DT_I64, 1e19) && !dtype_holds_whole(DT_U64, -1.0));
  CHECK("the names list is the table's", strcmp(dtype_names(), "f32, f64, i32, u32, i64, u8, f16, bf16, i16, u16, i8, u64") == 0 &&
                                             strcmp(dtype_float_names(), "f32, f64, f16 or bf16") == 0);
}

/* Every 16-bit pattern reads back to itself; bf16 from any float agrees with the usual
 * round-to-nearest-even on the float's bits; f16 agrees with the compiler's _Float16 where the
 * compiler has one (both round once from double). */
static void test_half_conversions(void) {
  int f16_ok = 1, bf16_ok = 1;
  for (unsigned b = 0; b < 65536; b++) {
    double v = dtype_f16_value((uint16_t)b), w = dtype_bf16_value((uint16_t)b);
    if (v == v) f16_ok &= dtype_f16_bits(v) == b;
    if (w == w) bf16_ok &= dtype_bf16_bits(w) == b;
  }
  CHECK("every finite f16 and bf16 pattern round-trips", f16_ok && bf16_ok);
  CHECK("NaN is 0x7fff", dtype_f16_bits(NAN) == 0x7fff && dtype_bf16_bits(-NAN) == 0x7fff);
  uint64_t x = 88172645463325252ull;
  int agree = 1;
  for (int i = 0; i < 2000000; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    uint32_t u = (uint32_t)x;
    float f;
    memcpy(&f, &u, 4);
    if (f != f) continue;
    uint16_t want = (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
    agree &= dtype_bf16_bits(f) == want;
  }
  CHECK("bf16 from 2M random floats rounds to nearest even", agree);
#ifdef __FLT16_MAX__
  /* _Float16 is an extension to C11 (ISO/IEC TS 18661-3); __extension__ keeps -Wpedantic quiet. */
  __extension__ typedef _Float16 f16;
  agree = 1;
  for (int i = 0; i < 2000000; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    double d;
    memcpy(&d, &x, 8);
    d = ldexp(frexp(d, &(int){0}), (int)(x % 70) - 40); /* magnitudes 2^-40 .. 2^30 */
    if (d != d) continue;
    f16 h = (f16)d;
    uint16_t want;
    memcpy(&want, &h, 2);
    agree &= dtype_f16_bits(d) == want;
  }
  CHECK("f16 from 2M random doubles agrees with _Float16", agree);
#endif
}

static void test_compile_errors(void) {
  nvrtc_output out;
  char *err = NULL;
  const char *src = "__global__ void k(float *a) {\n  a[0] = nope;\n}\n";
  int rc = nvrtc_compile(src, "mine.cu", "compute_90", NULL, 0, NULL, 0, &out, &err);
  CHECK("compile error fails", rc == -1 && err);
  CHECK("learner's file name and line", err && strstr(err, "mine.cu:2: error: identifier \"nope\" is undefined"));
  CHECK("line quoted", err && strstr(err, "  a[0] = nope;"));
  CHECK("no summary line", err && !strstr(err, "detected in the compilation"));
  free(err);
  const char *names[] = {"k"};
  rc = nvrtc_compile("__global__ void k(float *a) { a[0] = 1; }", "ok.cu", "sm_90", NULL, 0, names, 1,
                     &out, &err);
  CHECK("compiles to PTX and CUBIN", rc == 0 && out.ptx && out.cubin && out.cubin_len > 0);
  CHECK("lowered name", rc == 0 && strcmp(out.lowered[0], "_Z1kPf") == 0);
  CHECK("ptxas report", rc == 0 && strstr(out.ptxas_log, "Used"));
  nvrtc_output_free(&out);
}

int main(void) {
  PLAN(86);
  test_signatures();
  test_signature_limits();
  test_signature_names();
  test_signature_attributes();
  test_ptx_params();
  test_ptx_bounds();
  test_ptx_entry_names();
  test_ptxas();
  test_dtypes();
  test_half_conversions();
  test_compile_errors();
  return failures ? 1 : 0;
}
