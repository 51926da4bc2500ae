/* test_tmpl_args.c: the template arguments of a kernel template's instantiation, decoded from
 * the mangled names NVRTC gives (repl/compile/tmpl_args.c), and two spellings of one
 * instantiation told to be one (kernel_sig.c's sig_same_instance): every form a learner's
 * template takes, and for names this reader does not decode, or broken ones, a refusal that
 * never reads past the name. */
#include <stdio.h>
#include <string.h>

#include "kernel_sig.h"
#include "tmpl_args.h"

#include "check.h"

/* The arguments decoded from mangled, joined by " | ", are want ("-" when refused). */
static int decodes(const char *mangled, const char *want) {
  char args[TMPL_MAX_ARGS][TMPL_ARG_CAP], got[2048] = "";
  int n = tmpl_args_decode(mangled, args, TMPL_MAX_ARGS);
  if (n < 0) snprintf(got, sizeof got, "-");
  for (int i = 0; i < n; i++) {
    strcat(got, i ? " | " : "");
    strcat(got, args[i]);
  }
  if (strcmp(got, want) == 0) return 1;
  printf("    for %s\n    got  %s\n    want %s\n", mangled, got, want);
  return 0;
}

int main(void) {
  PLAN(8);
  CHECK("built-in types, defaults and integer literals, as NVRTC mangles them",
        decodes("_Z7combineIdEvPT_PKS0_i", "double") &&
            decodes("_Z1tIPKfyLin3EEvPT_T0_", "const float * | unsigned long long | -3") &&
            decodes("_Z5scaleILj3EEvPf", "3") && decodes("_Z1tIcaLi2EEvPT_T0_",
                                                          "char | signed char | 2"));
  CHECK("classes, substitutions of them, namespaces and class templates",
        decodes("_Z1tI6float4S0_Li2EEvPT_T0_", "float4 | float4 | 2") &&
            decodes("_Z1tI6__halfS0_Li2EEvPT_T0_", "__half | __half | 2") &&
            decodes("_Z1tIN2ns1QENS0_1WIS1_EELi2EEvPT_T0_", "ns::Q | ns::W<ns::Q> | 2") &&
            decodes("_Z1tIN2ns1WINS0_1QEEES3_Li2EEvPT_T0_",
                    "ns::W<ns::Q> | ns::W<ns::Q> | 2"));
  CHECK("a kernel in a namespace; bool and 64-bit literals; a const pointer",
        decodes("_ZN2ns1uINS_1WIiEELb1ELx5000000000EEEvPT_", "ns::W<int> | true | 5000000000") &&
            decodes("_Z1tIKPfS1_Li2EEvPT_T0_", "float *const | float *const | 2"));
  CHECK("no template, or no mangling: refused",
        decodes("_Z3addPfS_", "-") && decodes("add", "-") && decodes("_ZN2ns3addEPf", "-") &&
            decodes("", "-"));
  CHECK("what this reader does not decode is refused, not guessed: packs, expressions",
        decodes("_Z1kIJifEEvDpT_", "-") && decodes("_Z1kILi3EXplT_Li1EEEvv", "-") &&
            decodes("_Z1kIA4_fEvv", "-") && decodes("_Z1kIS4_Evv", "-"));
  CHECK("broken names: cut short, lengths past their end, nesting past any bound",
        decodes("_Z7combineId", "-") && decodes("_Z999999999combineIdEv", "-") &&
            decodes("_Z7comb", "-") && decodes("_Z1kIN", "-") && decodes("_Z1kIL", "-") &&
            decodes("_Z1kI1AI1AI1AI1AI1AI1AI1AI1AI1AI1AI1AI1AI1AI1AI1AI1AI1AI1AIiEEEEEEEEEEEEEEEEEEEv",
                    "-"));
  static char deep[1 << 20];
  size_t n = (size_t)snprintf(deep, sizeof deep, "_Z1kI");
  memset(deep + n, 'P', sizeof deep - n - 8);
  strcpy(deep + sizeof deep - 8, "fEvv");
  CHECK("a type nested a million deep (pointer to pointer to ...): refused, within the stack",
        decodes(deep, "-") && decodes("_Z1kIPPPPfEvv", "float * * * *"));
  CHECK("one instantiation, spelt two ways",
        sig_same_instance("scale<3>", "scale<3u>") && sig_same_instance("k<0x10>", "k< 16 >") &&
            sig_same_instance("combine<unsigned>", "combine<unsigned int>") &&
            sig_same_instance("k<long int, float*>", "k<long, float *>") &&
            sig_same_instance("k<unsigned long long int>", "k<long long unsigned>") &&
            sig_same_instance("ns::k<true>", "ns:: k<1>") &&
            !sig_same_instance("k<char>", "k<signed char>") &&
            !sig_same_instance("k<int>", "k<int, int>") && !sig_same_instance("k<3>", "k<4>") &&
            !sig_same_instance("k<int>", "j<int>") && !sig_same_instance("k<int", "k<int>") &&
            !sig_same_instance("k<int>>", "k<int>") && !sig_same_instance("k", "k"));
  return failures != 0;
}
