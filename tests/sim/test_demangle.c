/* test_demangle.c: sim_demangle, which turns the C++ names NVRTC gives shared variables and
 * kernels into the names a learner wrote, for messages. Function-scope names with plain and
 * nested functions, templates, discriminators and parameter types that hold digits and 'E'; and
 * names it must leave alone: unmangled, truncated, garbage. */
#include <stdio.h>
#include <string.h>

#include "nvrtc_util.h"
#include "sim_int.h"

/* Demangles m and checks the name and the enclosing function. */
static void expect(const char *m, const char *name, const char *fn) {
  char buf[128], f[128];
  sim_demangle(m, buf, sizeof buf, f, sizeof f);
  tu_check(strcmp(buf, name) == 0 && strcmp(f, fn) == 0, m, "got '%s' in '%s', want '%s' in '%s'", buf, f, name, fn);
}

int main(void) {
  tu_plan(27);
  expect("_ZZ6kernelPfE4tile", "tile", "kernel");
  expect("_ZZ5shoobE1s", "s", "shoob");                                /* extern "C" kernel */
  expect("_ZZ6reducePKfPfE4tile", "tile", "reduce");
  expect("_ZZ10warpReducePViiE1s", "s", "warpReduce");
  expect("_ZZN3lab6reduceEPfiE3buf", "buf", "lab::reduce");            /* nested function */
  expect("_ZZN3lab5inner6reduceEPfE3buf_0", "buf", "lab::inner::reduce"); /* discriminator */
  expect("_ZZ6reduceILi256EEvPfE4tile", "tile", "reduce");             /* template, literal 256 */
  expect("_ZZ4scanP6MatrixN2ns4EdgeEE5cache", "cache", "scan");        /* digits and E in types */
  expect("_ZZ4fillIfEvPT_S1_E3tmp__12_", "tmp", "fill");               /* T_, S1_, __N_ */
  expect("_ZZ4stepA16_fDv4_fE1s", "s", "step");                        /* arrays, vectors */
  expect("_ZZ3lamPiENKUliE_clEi", "lambda", "lam");                    /* a lambda's operator() */
  expect("_ZZ3lamPiENKUlifE0_clEif", "lambda #2", "lam");              /* the second one */
  expect("_ZZN2ns3lamEPiENKUlvE_clEv", "lambda", "ns::lam");           /* no parameters */
  expect("_ZZ3lamPiENKUliE_cxEi", "_ZZ3lamPiENKUliE_cxEi", "");        /* not operator() */
  expect("_ZZ3lamPiENKUli", "_ZZ3lamPiENKUli", "");                    /* truncated */
  expect("_ZN3lab4tileE", "lab::tile", "");
  expect("_Z6kernelPf", "kernel", "");
  expect("tile", "tile", "");                                          /* not mangled */
  expect("_ZZ6kern", "_ZZ6kern", "");                                  /* truncated */
  expect("_ZZ99999abcE1s", "_ZZ99999abcE1s", "");                      /* length past the end */
  expect("_ZZ6kernelPfE", "_ZZ6kernelPfE", "");                        /* no entity */
  expect("_ZZ6kernelPfEs", "_ZZ6kernelPfEs", "");                      /* a string literal, not a name */
  expect("_ZZ6kernelPfE4tilex", "_ZZ6kernelPfE4tilex", "");            /* trailing garbage */
  expect("_ZN3labE", "lab", "");
  expect("_Z", "_Z", "");
  char small[5];
  sim_demangle("_ZZ6kernelPfE4tile", small, sizeof small, NULL, 0);
  tu_check(strcmp(small, "tile") == 0, "a short buffer and no function buffer", "got '%s'", small);
  sim_demangle("_ZZ6kernelPfE10longername", small, sizeof small, NULL, 0);
  tu_check(strcmp(small, "long") == 0, "a name longer than the buffer is cut, not overrun", "got '%s'", small);
  return tu_failures() != 0;
}
