/* test_src_guard.c: the checks on what reaches NVRTC (repl/compile/src_guard.c): a graded kernel
 * source reads no file but the toolkit's headers and the submission's own, however it spells an
 * include; a kernel's name is one C++ name; a compiler option is one line. Each refusal's
 * message is asserted: it names the line and says what is allowed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvrtc.h"
#include "src_guard.h"

#include "check.h"

#define RULE "when grading a kernel may include the toolkit's headers and its own files only"

static int allowed_n(const char *src, size_t len) {
  char why[SRC_GUARD_WHY];
  if (src_guard_source(src, len, why, sizeof why) == 0) return 1;
  printf("    refused: %s\n", why);
  return 0;
}

static int allowed(const char *src) { return allowed_n(src, strlen(src)); }

/* Refused, with a message holding want and the rule. */
static int refused_n(const char *src, size_t len, const char *want) {
  char why[SRC_GUARD_WHY];
  if (src_guard_source(src, len, why, sizeof why) == 0) {
    printf("    allowed, want %s\n", want);
    return 0;
  }
  if (strstr(why, want) && strstr(why, RULE)) return 1;
  printf("    got: %s\n    want: %s\n", why, want);
  return 0;
}

static int refused(const char *src, const char *want) { return refused_n(src, strlen(src), want); }

static void test_allowed(void) {
  CHECK("a toolkit header and an own file",
        allowed("#include <cuda/std/cstdint>\n#include \"helper.h\"\n__global__ void k() {}\n"));
  CHECK("headers in folders, with + and -",
        allowed("#include <cooperative_groups/reduce.h>\n#include <c++-x/a_b.h>\n"));
  CHECK("__has_include of allowed names; #ifdef and defined of the bare operator",
        allowed("#if __has_include(<cuda_fp16.h>) && __has_include(\"h.h\")\n#endif\n"
                "#ifdef __has_include\n#endif\n#if defined(__has_include) || defined "
                "__has_include_next\n#endif\n"));
  CHECK("#pragma without a literal, #define, #line, #error",
        allowed("#pragma unroll 4\n#define N 4\n#line 10\n#if 0\n#error don't\n#endif\n"));
  CHECK("a raw string's fake comment opener and fake directive are text",
        allowed("auto s = R\"x(/* \n#include \"/etc/passwd\"\n)x\";\n#include \"a.h\"\n"));
  CHECK("a '\"' character constant, u8/u/U/L strings, a digit separator",
        allowed("char q = '\"'; auto a = u8\"/*\", b = u\"x\", c = U\"y\", d = L\"*/\";\n"
                "int n = 1'000;\n#include \"a.h\"\n"));
  CHECK("CR-LF line ends", allowed("#include \"a.h\"\r\n#include <b.h>\r\nint x;\r\n"));
  CHECK("an unterminated string ends at its line", allowed("char *s = \"abc\nint x;\n"));
  CHECK("an empty source", allowed(""));
  CHECK("UTF-8 in a comment and a string", allowed("// \xc3\xa9t\xc3\xa9\nauto s = \"\xc3\xa9\";\n"));
}

static void test_paths(void) {
  CHECK("an absolute quoted path", refused("#include \"/etc/passwd\"\n",
                                          "line 1: #include \"/etc/passwd\" names a path"));
  CHECK("a parent folder", refused("#include \"../records/1001.json\"\n", "names a path"));
  CHECK("an absolute angled path", refused("int x;\n#include </etc/shadow>\n",
                                          "line 2: #include </etc/shadow> names a path"));
  CHECK("a .. part in a toolkit header", refused("#include <cuda/../../etc/passwd>\n",
                                                "names a path"));
  CHECK("a folder in a quoted name", refused("#include \"sub/file.h\"\n", "names a path"));
  CHECK("a backslash", refused("#include \"a\\b.h\"\n", "names a path"));
  CHECK("a name that is no plain file name", refused("#include \"a b.h\"\n",
                                                     "is not a plain file name"));
  CHECK("an empty name and a name of dots", refused("#include \"\"\n", "names no file") &&
                                                refused("#include \"..\"\n", "names a path"));
  CHECK("#if 0 is judged too", refused("#if 0\n#include \"/etc/passwd\"\n#endif\n", "line 2:"));
}

/* The spellings of one include that NVRTC reads as #include "/etc/passwd". */
static void test_spellings(void) {
  const char *p = "names a path";
  CHECK("a splice inside the word", refused("#inc\\\nlude \"/etc/passwd\"\n", "line 1: "));
  CHECK("a splice inside the name", refused("#include \"/etc/pa\\\r\nsswd\"\n", p));
  CHECK("a backslash, blanks and a newline, as GCC splices",
        refused("int x;\n#inc\\  \nlude \"/etc/passwd\"\n", "line 2: #include"));
  CHECK("a comment between # and include", refused("# /*x*/ include \"/etc/passwd\"\n", p));
  CHECK("an empty comment before #", refused("/**/#include \"/etc/passwd\"\n", p));
  CHECK("the %: digraph, with comments", refused("%:/**/include/**/\"/etc/passwd\"\n", p));
  CHECK("a comment over lines ends the line it began on",
        refused("int x; /*\n*/ #include \"/etc/passwd\"\n", "line 2:"));
  CHECK("comment openers in strings: attack (a)",
        refused("const char *a = \"/*\";\n#include \"/etc/passwd\"\nconst char *b = \"*/\";\n",
                "line 2: #include \"/etc/passwd\" names a path"));
  CHECK("a raw string with a comment opener, then a real directive",
        refused("auto s = R\"x( /* )x\";\n#include \"/etc/passwd\"\n", "line 2:"));
  CHECK("a '\"' character constant, then a directive",
        refused("char q = '\"';\n#include \"/etc/passwd\"\n", "line 2:"));
  CHECK("u8 strings holding comment marks",
        refused("auto s = u8\"/*\";\n#include \"/etc/passwd\"\nauto t = u8\"*/\";\n", "line 2:"));
  CHECK("a string over a splice hides nothing after it",
        refused("const char *s = \"a\\\nb/*\";\n#include \"/etc/passwd\"\n", "line 3:"));
  CHECK("CR-LF line ends", refused("int x;\r\n#include \"/etc/passwd\"\r\n", "line 2:"));
  CHECK("a digit separator read as C++11 reads it",
        refused("int a = 1'2 /*\n#include \"/etc/passwd\"\n*/;\n", "line 2:"));
  CHECK("a byte order mark before #", refused("\xef\xbb\xbf#include \"/etc/passwd\"\n", p));
  CHECK("a no-break space before #, should a front end take it for a blank",
        refused("\xc2\xa0#include \"/etc/passwd\"\n", p));
}

static void test_directives(void) {
  CHECK("an include through a macro",
        refused("#define P \"/etc/passwd\"\n#include P\n",
                "line 2: #include P names its file through a macro"));
  CHECK("an unterminated header name", refused("#include \"a.h\n", "through a macro"));
  CHECK("#include_next", refused("#include_next <cuda_fp16.h>\n", "#include_next is refused"));
  CHECK("#import", refused("#import \"a.h\"\n", "line 1: #import is refused"));
  CHECK("#embed", refused("#embed \"a.h\"\n", "#embed is refused"));
  CHECK("__has_include of a path", refused("#if __has_include(\"/etc/passwd\")\n#endif\n",
                                          "line 1: __has_include(\"/etc/passwd\") names a path"));
  CHECK("__has_include through a macro",
        refused("#if __has_include(P)\n#endif\n", "__has_include(P) names its file through"));
  CHECK("__has_include handed over by a macro",
        refused("#define H __has_include\n#if H(\"/etc/passwd\")\n#endif\n", "line 1: "));
  CHECK("__has_include_next of a path",
        refused("#if __has_include_next(</etc/x>)\n#endif\n", "__has_include_next(</etc/x>)"));
  CHECK("_Pragma", refused("int x;\n_Pragma(\"unroll\")\n", "line 2: _Pragma is refused"));
  CHECK("#pragma GCC dependency",
        refused("#pragma GCC dependency \"f.h\"\n", "a #pragma that holds the literal \"f.h\""));
  CHECK("#pragma include_alias",
        refused("#pragma include_alias(<a.h>, <b.h>)\n", "holds include_alias"));
  CHECK("token pasting", refused("#define C(a, b) a ## b\n", "line 1: the ## operator"));
  CHECK("a comment that never ends", refused("int x;\n/* #include \"a.h\"\n",
                                            "line 2: a comment that never ends"));
  CHECK("a raw string that never ends", refused("auto s = R\"(\n#include \"/x\"\n",
                                               "line 1: a raw string that never ends"));
}

static void test_bytes(void) {
  CHECK("a trigraph", refused("?\?=include \"/etc/passwd\"\n", "the trigraph ?\?= is refused"));
  CHECK("a trigraph in a string", refused("int x;\nauto s = \"what?\?!\";\n", "line 2: the trigraph"));
  CHECK("two question marks and no trigraph", allowed("auto s = \"what??\";\n"));
  CHECK("a NUL byte", refused_n("int x;\n\0#include \"/etc/passwd\"\n", 31,
                                "line 2: a NUL byte (byte \\x00) is refused"));
  CHECK("a control character", refused("int x;\x01\n", "line 1: a control character"));
  CHECK("a carriage return that ends no line",
        refused("int x;\r#include \"/etc/passwd\"\n", "a carriage return that ends no line"));
}

static int name_ok(const char *s) {
  char why[SRC_GUARD_WHY];
  if (src_guard_name(s, strlen(s), why, sizeof why) == 0) return 1;
  printf("    %s: %s\n", s, why);
  return 0;
}

static int name_bad_n(const char *s, size_t len, const char *want) {
  char why[SRC_GUARD_WHY];
  if (src_guard_name(s, len, why, sizeof why) == 0) return 0;
  if (strstr(why, want)) return 1;
  printf("    got %s, want %s\n", why, want);
  return 0;
}

static int name_bad(const char *s, const char *want) { return name_bad_n(s, strlen(s), want); }

static void test_names(void) {
  CHECK("kernel names", name_ok("scale") && name_ok("scale<float>") && name_ok("ns::k") &&
                            name_ok("::k") && name_ok("k<int, 4>") && name_ok("k<float *>") &&
                            name_ok("k(float *, int)") && name_ok("k<a::b<int>>") &&
                            name_ok("k<-1>") && name_ok("k<const int &>"));
  CHECK("attack (b): a newline and an #include",
        name_bad("k\n#include \"/etc/passwd\"", "it holds a newline"));
  CHECK("#, quotes, /, \\, ;, { and }", name_bad("k#", "it holds '#'") &&
                                            name_bad("k\"", "it holds '\"'") &&
                                            name_bad("k'", "it holds '''") &&
                                            name_bad("k/x", "it holds '/'") &&
                                            name_bad("k\\", "it holds '\\'") &&
                                            name_bad("k;", "it holds ';'") &&
                                            name_bad("k{", "it holds '{'") &&
                                            name_bad("k}", "it holds '}'"));
  CHECK("control characters, NUL and bytes past ASCII",
        name_bad("k\tx", "a control character (\\x09)") && name_bad_n("k\0x", 3, "a NUL byte") &&
            name_bad("k\xc3\xa9", "a byte past ASCII"));
  CHECK("digraph and trigraph starters", name_bad("k%:", "'%'") && name_bad("k?", "'?'"));
  CHECK("shapes", name_bad("k<int", "not balanced") && name_bad("k>", "not balanced") &&
                      name_bad("k<int)", "not balanced") && name_bad("a:b", "single ':'") &&
                      name_bad("1k", "does not start with a name") && name_bad("", "empty"));
  char longname[SRC_GUARD_NAME_MAX + 2];
  memset(longname, 'k', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  CHECK("at most 1024 bytes", name_bad(longname, "1025 bytes long, over the limit of 1024") &&
                                  name_ok(longname + 1));
}

static void test_exprs_and_options(void) {
  char why[SRC_GUARD_WHY];
  const char *over = "(void(*)(const float *__restrict__, int))ns::k";
  CHECK("the scanner's overload expression", src_guard_expr(over, strlen(over), why, 99) == 0);
  CHECK("an expression with a newline",
        src_guard_expr("k\n#x", 4, why, sizeof why) == -1 && strstr(why, "a newline"));
  CHECK("an expression with a digraph", src_guard_expr("k%:", 3, why, sizeof why) == -1);
  CHECK("an option", src_guard_option("-DN=4", 5, why, sizeof why) == 0);
  CHECK("an option with a newline", src_guard_option("-DX=1\n#include \"/x\"", 19, why,
                                                     sizeof why) == -1 &&
                                        strstr(why, "it holds a newline"));
  CHECK("an option with NUL or a control character",
        src_guard_option("-DX\0", 4, why, sizeof why) == -1 && strstr(why, "NUL") &&
            src_guard_option("-D\x1b", 3, why, sizeof why) == -1 && strstr(why, "\\x1b"));
}

/* NVRTC's own entry refuses what no binding should have let through, before loading NVRTC. */
static void test_nvrtc_inputs(void) {
  const char *src = "__global__ void k() {}";
  const char *names[] = {"k\n#include \"/etc/passwd\""}, *options[] = {"-DX=1\n#x"};
  nvrtc_output out;
  char *err = NULL;
  int rc = nvrtc_compile_here(src, "kernel.cu", "compute_90", NULL, 0, names, 1, &out, &err);
  CHECK("nvrtc refuses a name expression with a newline",
        rc == -1 && err && strstr(err, "the kernel name \"k\\n#include") &&
            strstr(err, "it holds a newline"));
  free(err);
  rc = nvrtc_compile_here(src, "kernel.cu", "compute_90", options, 1, NULL, 0, &out, &err);
  CHECK("nvrtc refuses an option with a newline",
        rc == -1 && err && strstr(err, "the compiler option \"-DX=1\\n#x\" cannot be passed"));
  free(err);
}

static void test_quote(void) {
  char out[64];
  src_guard_quote("k\n#include \"x\"\\", 15, 80, out, sizeof out);
  CHECK("quote escapes", strcmp(out, "\"k\\n#include \\\"x\\\"\\\\\"") == 0);
  src_guard_quote("abcdef", 6, 3, out, sizeof out);
  CHECK("quote cuts", strcmp(out, "\"abc...\"") == 0);
  src_guard_quote("abcdef", 6, 80, out, 4);
  CHECK("quote fits its buffer", strcmp(out, "\"ab") == 0);
}

int main(void) {
  PLAN(74);
  test_allowed();
  test_paths();
  test_spellings();
  test_directives();
  test_bytes();
  test_names();
  test_exprs_and_options();
  test_nvrtc_inputs();
  test_quote();
  return failures != 0;
}
