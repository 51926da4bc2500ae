/* test_host_aside.c: what cuda.module(file, {device_only = true}) sets aside of a .cu file
 * (repl/compile/host_aside.c): host functions, their declarations and host variables go, device
 * code and directives stay, every line where it was; text it cannot read is refused by line. */
#include <stdio.h>
#include <string.h>

#include "host_aside.h"

#include "check.h"

/* The spans set aside from src, each as "first-last what", joined by "; "; or "FAIL: why". */
static const char *spans(const char *src, char *buf, size_t cap) {
  host_aside_result r;
  char why[256];
  if (host_aside(src, strlen(src), &r, why, sizeof why) != 0) {
    snprintf(buf, cap, "FAIL: %s", why);
    return buf;
  }
  buf[0] = '\0';
  for (int i = 0; i < r.n; i++) {
    size_t n = strlen(buf);
    snprintf(buf + n, cap - n, "%s%ld-%ld %s", i ? "; " : "", r.spans[i].first, r.spans[i].last,
             r.spans[i].what);
  }
  host_aside_free(&r);
  return buf;
}

static int sets_aside(const char *src, const char *want) {
  char buf[1024];
  const char *got = spans(src, buf, sizeof buf);
  if (strcmp(got, want) == 0) return 1;
  printf("    for %s\n    got  %s\n    want %s\n", src, got, want);
  return 0;
}

/* The text left for NVRTC equals want. */
static int leaves(const char *src, const char *want) {
  host_aside_result r;
  char why[256];
  if (host_aside(src, strlen(src), &r, why, sizeof why) != 0) return 0;
  int ok = r.len == strlen(src) && strcmp(r.text, want) == 0;
  if (!ok) printf("    got  [%s]\n    want [%s]\n", r.text, want);
  host_aside_free(&r);
  return ok;
}

int main(void) {
  PLAN(16);
  CHECK("a kernel and a device function stay",
        sets_aside("__global__ void k(float *a) { a[0] = 1; }\n"
                   "__device__ __forceinline__ int f(int x) { return x; }\n"
                   "__host__ __device__ int g(int x) { return x; }\n", ""));
  CHECK("main and an unqualified function go",
        sets_aside("int iDivUp(int a, int b) { return (a + b - 1) / b; }\n"
                   "__global__ void k() {}\n"
                   "int main(int argc, char **argv) {\n  k<<<1, 1>>>();\n  return 0;\n}\n",
                   "1-1 function iDivUp; 3-6 function main"));
  CHECK("the blanks keep every newline and column",
        leaves("void h() {\n  x();\n}\n__global__ void k() {}\n",
               "          \n      \n \n__global__ void k() {}\n"));
  CHECK("directives inside a function stay, so #if and #endif pair",
        leaves("void h() {\n#if A\n  a();\n#endif\n}\n", "          \n#if A\n      \n#endif\n \n"));
  CHECK("__host__ alone goes, declared or defined",
        sets_aside("__host__ void h();\n__host__ int g() { return 0; }\n",
                   "1-1 function h; 2-2 function g"));
  CHECK("extern \"C\" host functions and a namespace's go, their blocks stay",
        sets_aside("extern \"C\" void run(int n) { }\nextern \"C\" {\nvoid a() {}\n"
                   "__global__ void k() {}\n}\nnamespace ns {\nvoid b() {}\n}\n",
                   "1-1 function run; 3-3 function a; 7-7 function b"));
  CHECK("declarations of a function set aside go too, before or after it",
        sets_aside("bool runTest(int);\ntemplate <class T> void reduce(T *a) { }\n"
                   "template void reduce<int>(int *a);\nbool runTest(int d) { return d; }\n"
                   "void other(int);\n",
                   "1-1 declaration of runTest; 2-2 function reduce; "
                   "3-3 declaration of reduce; 4-4 function runTest"));
  CHECK("host variables go; constants device code may read, device ones and types stay",
        sets_aside("const char *sSDKsample = \"x\";\nint MATRIX_SIZE = 1024;\n"
                   "const int N = 16;\nconstexpr float K = 2.0f;\n__constant__ float c[4];\n"
                   "__device__ int counter;\nextern int elsewhere;\ntypedef unsigned int uint;\n"
                   "namespace cg = cooperative_groups;\nstruct S { int a; };\n"
                   "static uint *d_Buf;\n",
                   "1-1 variable sSDKsample; 2-2 variable MATRIX_SIZE; 11-11 variable d_Buf"));
  CHECK("templates and structs with device members stay",
        sets_aside("template <class T> struct SharedMemory {\n"
                   "  __device__ inline operator T *() { return 0; }\n};\n"
                   "template <class T, unsigned int bs>\n__global__ void r(T *g) {}\n", ""));
  CHECK("comments, strings and raw strings hide braces",
        sets_aside("/* } */ // {\nvoid h() { const char *s = \"}\"; char c = '{'; }\n"
                   "__device__ const char *r = R\"x(})x\";\n",
                   "2-2 function h"));
  CHECK("an #else branch repeats the first's braces and is not read",
        sets_aside("#if A\nvoid h() {\n#else\nvoid h(int) {\n#endif\n}\n"
                   "__global__ void k() {}\n", "2-6 function h"));
  CHECK("a digit separator is no character constant",
        sets_aside("void h() { int n = 1'000'000; }\n__global__ void k() {}\n",
                   "1-1 function h"));
  CHECK("a brace never closed is refused by line",
        sets_aside("__global__ void k() {}\nvoid h() {\n", "FAIL: the '{' on line 2 is never "
                   "closed"));
  CHECK("a stray '}' is refused by line",
        sets_aside("__global__ void k() {}\n}\n", "FAIL: a '}' on line 2 closes nothing"));
  CHECK("a comment never ended is refused by line",
        sets_aside("__global__ void k() {}\n/* open\n", "FAIL: a comment that begins on line 2 "
                   "never ends"));
  CHECK("a string never ended is refused by line",
        sets_aside("void h() { \"abc\n}\n", "FAIL: a string or character that begins on line 1 "
                   "never ends"));
  return failures != 0;
}
