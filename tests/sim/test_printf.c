/* test_printf.c: device printf's widths, precisions and sizes in the simulator: '*' widths taken
 * from the argument buffer (with the arguments after them still at the right offsets), h
 * converting the value as C does, %p in a width, the two forms the GPU's printf does not make
 * ('.*' and hh, refused), and the hostile formats a learner may write (huge counts,
 * '*' with nothing to take, over-long output), each refused with its message. Every expected
 * line is the host C library's printf of the same values, which is what a GPU's driver formats
 * with; test_basic.c has the plain conversions. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc_util.h"

static sim_device *dev;
static sim_module *mod;
static char err[4096];

/* The text the kernels print, collected by the sink (past its size it is dropped, and the
 * comparison fails). */
static char out[8192];
static size_t outlen;
static void sink(const char *text, size_t len, void *ud) {
  (void)ud;
  if (outlen + len < sizeof out) memcpy(out + outlen, text, len), outlen += len, out[outlen] = 0;
}

/* Kernel names: none is part of another's, as tu_kernel matches substrings. */
static const char KERNELS[] =
    "extern \"C\" __global__ void pstar(int w, int v) { printf(\"[%*d]\\n\", w, v); }\n"
    "extern \"C\" __global__ void pmixed(int w, double x, const char *s) {\n"
    "  printf(\"%*d|%lld|%.2f|%-*s|%*.2e|%d\\n\", w, 1, 1234567890123ll, x, w, s, w, x, 9);\n"
    "}\n"
    "extern \"C\" __global__ void psizes(int v) {\n"
    "  printf(\"%hx %hd %hu %hX %ho %#hx\\n\", v, v, v, v, v, v);\n"
    "}\n"
    "extern \"C\" __global__ void pptr(const void *p) {\n"
    "  printf(\"[%20p][%-20p][%p]\\n\", p, p, p);\n"
    "}\n"
    "extern \"C\" __global__ void pflags(int v) {\n"
    "  printf(\"[%------------------------------------\"\n"
    "         \"------------------------------------6d]\\n\", v);\n"
    "}\n"
    "extern \"C\" __global__ void hugewidth(int v) { printf(\"[%999999999d]\\n\", v); }\n"
    "extern \"C\" __global__ void hugeprec(double x) {\n"
    "  printf(\"[%.999999999999999999999999999999999999999999999f]\\n\", x);\n"
    "}\n"
    "extern \"C\" __global__ void noargs() { printf(\"[%d]\\n\"); }\n"
    "extern \"C\" __global__ void nostar() { printf(\"[%*d]\\n\"); }\n"
    "extern \"C\" __global__ void twostars(int w, int v) { printf(\"[%**d]\\n\", w, v); }\n"
    "extern \"C\" __global__ void pprec(int p, double x) { printf(\"[%.*f]\\n\", p, x); }\n"
    "extern \"C\" __global__ void phhd(int v) { printf(\"[%hhd]\\n\", v); }\n"
    "extern \"C\" __global__ void hhhd(int v) { printf(\"[%hhhd]\\n\", v); }\n"
    "extern \"C\" __global__ void shortfloat(double x) { printf(\"[%hf]\\n\", x); }\n"
    "extern \"C\" __global__ void fewargs(int v) {\n"
    "  printf(\"%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d%d\\n\", v);\n"
    "}\n"
    "extern \"C\" __global__ void toolong(int v) { printf(\"%1048576d%1048576d\\n\", v, v); }\n";

/* Launches kernel name on one thread with args; the launch's result, its text in out. */
static int run1(const char *name, void **args) {
  outlen = 0, out[0] = 0, err[0] = 0;
  return tu_launch(dev, tu_kernel(mod, name), 1, 1, 0, args, 1, NULL, err, sizeof err);
}

/* '*' takes the width from the next int: 6 pads, -6 left-justifies, as C does. */
static void test_star(void) {
  int w = 6, v = 42;
  void *args[] = {&w, &v};
  int rc = run1("pstar", args);
  tu_check(rc == 0 && strcmp(out, "[    42]\n") == 0, "device printf: %*d takes its width",
           "rc=%d got [%s] %s", rc, out, err);
  w = -6;
  rc = run1("pstar", args);
  tu_check(rc == 0 && strcmp(out, "[42    ]\n") == 0,
           "device printf: a negative * width left-justifies", "rc=%d got [%s] %s", rc, out, err);
}

/* Stars in front of an int, a double and a string: each is one more int in the buffer, and the
 * 8-byte arguments after them still sit at their 8-byte boundaries. */
static void test_star_offsets(void) {
  char *s = sim_malloc(dev, 4, "u8[4]", err, sizeof err);
  if (!s) {
    tu_check(0, "device printf: * before 8-byte arguments", "sim_malloc: %s", err);
    return;
  }
  memcpy(s, "abc", 4);
  int w = 7;
  double x = 3.14159;
  void *args[] = {&w, &x, &s};
  char want[256];
  snprintf(want, sizeof want, "%*d|%lld|%.2f|%-*s|%*.2e|%d\n", w, 1, 1234567890123ll, x, w, s,
           w, x, 9);
  int rc = run1("pmixed", args);
  tu_check(rc == 0 && strcmp(out, want) == 0,
           "device printf: * widths keep the other arguments' offsets",
           "rc=%d got [%s] want [%s] %s", rc, out, want, err);
  w = -7; /* a negative * width left-justifies */
  snprintf(want, sizeof want, "%*d|%lld|%.2f|%-*s|%*.2e|%d\n", w, 1, 1234567890123ll, x, w, s,
           w, x, 9);
  rc = run1("pmixed", args);
  tu_check(rc == 0 && strcmp(out, want) == 0 && strncmp(out, "1      |", 8) == 0,
           "device printf: a negative * width left-justifies", "rc=%d got [%s] want [%s] %s", rc,
           out, want, err);
  sim_free(dev, s);
}

/* h converts the promoted int to short before formatting, as C does. */
static void test_sizes(void) {
  int v = 0x1ff41;
  void *args[] = {&v};
  char want[256];
  snprintf(want, sizeof want, "%hx %hd %hu %hX %ho %#hx\n", v, v, v, v, v, v);
  int rc = run1("psizes", args);
  tu_check(rc == 0 && strcmp(out, want) == 0 && strncmp(out, "ff41 -191 65345 ", 16) == 0,
           "device printf: h converts to short", "rc=%d got [%s] want [%s] %s", rc,
           out, want, err);
}

/* %p in a width, right- and left-justified; the GPU prints 0x and hexadecimal digits. */
static void test_ptr_width(void) {
  void *p = (void *)(uintptr_t)0xabc123;
  void *args[] = {&p};
  const char *want = "[            0xabc123][0xabc123            ][0xabc123]\n";
  int rc = run1("pptr", args);
  tu_check(rc == 0 && strcmp(out, want) == 0, "device printf: %20p and %-20p pad the pointer",
           "rc=%d got [%s] %s", rc, out, err);
}

/* 72 repeated flags mean one: the width after them still counts. */
static void test_repeated_flags(void) {
  int v = 7;
  void *args[] = {&v};
  int rc = run1("pflags", args);
  tu_check(rc == 0 && strcmp(out, "[7     ]\n") == 0,
           "device printf: repeated flags keep the width", "rc=%d got [%s] %s", rc, out, err);
}

/* Runs kernel name, which must fail with a message holding want and print nothing. */
static void check_refused(const char *name, void **args, const char *want, const char *test) {
  int rc = run1(name, args);
  tu_check(rc < 0 && strstr(err, want) && outlen == 0, test, "rc=%d err [%s] printed [%s]", rc,
           err, out);
}

/* Counts past what one call may print, from digits or from '*', are refused before the host
 * pads to them; so is text that grows past 1 MiB in pieces. */
static void test_huge_counts(void) {
  int v = 1;
  double x = 1.5;
  void *iv[] = {&v}, *dx[] = {&x};
  check_refused("hugewidth", iv,
                "printf: the width in '%999999999d' is over 1 MiB, the most one call may print",
                "device printf: %999999999d is refused");
  check_refused("hugeprec", dx,
                "printf: the precision in '%.99999999999999999999999999999999999...' is over 1 MiB",
                "device printf: a 45-digit precision is refused, its text cut short");
  int w = 2000000;
  void *wv[] = {&w, &v};
  check_refused("pstar", wv, "printf: the width (from argument 1) in '%*d' is over 1 MiB",
                "device printf: a * width of 2000000 is refused");
  w = INT_MIN;
  check_refused("pstar", wv, "printf: the width (from argument 1) in '%*d' is over 1 MiB",
                "device printf: a * width of INT_MIN is refused, not negated into overflow");
  int p = 3;
  double y = 3.14159;
  void *py[] = {&p, &y};
  check_refused("pprec", py, "printf: '%.*f' takes its precision from an argument ('.*'), which "
                "the GPU's printf does not", "device printf: a * precision is refused, as the "
                "GPU's printf cannot make it");
  check_refused("phhd", iv, "printf: '%hhd': the GPU's printf does not take hh",
                "device printf: hh is refused, as the GPU's printf gets it wrong");
  check_refused("toolong", iv,
                "printf: the text of one call is over 1 MiB, the most one call may print",
                "device printf: two 1 MiB conversions are refused");
}

/* A conversion with no argument to take, and formats that are no conversion CUDA makes. */
static void test_bad_formats(void) {
  int v = 1, w = 3;
  double x = 1.5;
  void *iv[] = {&v}, *wv[] = {&w, &v}, *dx[] = {&x};
  check_refused("noargs", NULL, "printf: '%d' needs argument 1, but the call passes no arguments",
                "device printf: %d with no arguments is refused");
  check_refused("nostar", NULL, "printf: '%*d' needs argument 1, but the call passes no arguments",
                "device printf: %*d with no arguments is refused");
  /* which argument fails depends on the local memory's layout, so the number is not checked */
  check_refused("fewargs", iv,
                "(for '%d'): does the call pass as many arguments as its format takes?",
                "device printf: 32 %d with one argument are refused once past local memory");
  check_refused("twostars", wv, "printf: unsupported conversion '%**'",
                "device printf: a second * is refused");
  check_refused("hhhd", iv, "printf: unsupported conversion '%hhhd'",
                "device printf: hhh is refused");
  check_refused("shortfloat", dx, "printf: unsupported conversion '%hf'",
                "device printf: h on a float is refused");
}

int main(void) {
  tu_plan(20);
  dev = sim_device_new(NULL);
  mod = tu_module("compile the printf kernels", KERNELS);
  if (!mod) return 1;
  sim_set_printf_sink(dev, sink, NULL);
  test_star();
  test_star_offsets();
  test_sizes();
  test_ptr_width();
  test_repeated_flags();
  test_huge_counts();
  test_bad_formats();
  sim_set_printf_sink(dev, NULL, NULL);
  sim_module_free(mod);
  sim_device_free(dev);
  return tu_failures() ? 1 : 0;
}
