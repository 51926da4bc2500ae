/* test_inc_scan.c: the include scanner the kernel cache keys on (repl/compile/inc_scan.c). Each
 * spelling here was compiled with NVRTC 13 against headers holding #error: the expected lists
 * are the headers NVRTC opened, but for #if 0 and __has_include, which the scan counts on
 * purpose. A header NVRTC opens that the scan misses is a stale cached kernel once that header
 * is edited. */
#include <stdio.h>
#include <string.h>

#include "inc_scan.h"

#include "check.h"

/* The names fn saw, each as its quote character and name, joined by ',': "\"a.h,<b.h". */
typedef struct seen {
  char list[512];
} seen;

static int collect(void *ctx, const char *name, int quote) {
  seen *s = ctx;
  size_t n = strlen(s->list);
  snprintf(s->list + n, sizeof s->list - n, "%s%c%s", n ? "," : "", quote, name);
  return 0;
}

/* The list for src, or "FAIL" when the scan returned -1. */
static const char *scan(const char *src, seen *s) {
  s->list[0] = '\0';
  if (inc_scan(src, strlen(src), collect, s) != 0) snprintf(s->list, sizeof s->list, "FAIL");
  return s->list;
}

static int finds(const char *src, const char *want) {
  seen s;
  const char *got = scan(src, &s);
  if (strcmp(got, want) == 0) return 1;
  printf("    for %s\n    got %s, want %s\n", src, got, want);
  return 0;
}

static void test_spellings(void) {
  CHECK("a plain include", finds("#include \"a.h\"\n#include <b.h>\n", "\"a.h,<b.h"));
  CHECK("a comment between # and include", finds("# /*x*/ include \"a.h\"\n", "\"a.h"));
  CHECK("an empty comment for the space", finds("#/**/include \"a.h\"\n", "\"a.h"));
  CHECK("the %: digraph", finds("%:include \"a.h\"\n", "\"a.h"));
  CHECK("%: with comments all round",
        finds("  /**/ %: /**/ include /**/ <a.h> /**/\n", "<a.h"));
  CHECK("form feeds and vertical tabs are blanks", finds("\f#\vinclude\f\"a.h\"\n", "\"a.h"));
  CHECK("\\r is a blank too", finds("#\rinclude \"a.h\"\r\n", "\"a.h"));
  CHECK("a splice inside the word and the name",
        finds("#inc\\\nlude \"a\\\n.h\"\n", "\"a.h"));
  CHECK("a splice between # and include", finds("#\\\ninclude \"a.h\"\n", "\"a.h"));
  CHECK("a splice before \\r\\n", finds("#inc\\\r\nlude \"a\\\r\n.h\"\r\n", "\"a.h"));
  CHECK("a splice before the line's start", finds("\\\n#include \"a.h\"\n", "\"a.h"));
  CHECK("a comment across lines between include and the name",
        finds("#include /*\n*/ \"a.h\"\n", "\"a.h"));
  CHECK("a comment holding a newline ends the line it began on, as in NVRTC",
        finds("int x; /*\n*/ #include \"a.h\"\n", "\"a.h"));
  CHECK("a name in a comment is no name", finds("#include /* \"b.h\" */ \"a.h\"\n", "\"a.h"));
  CHECK("include_next", finds("#include_next <a.h>\n", "<a.h"));
  CHECK("__has_include counts: creating the header changes the compile",
        finds("#if __has_include(\"a.h\")\n#endif\n#if __has_include( <b.h> )\n#endif\n",
              "\"a.h,<b.h"));
  CHECK("#ifdef __has_include is no header", finds("#ifdef __has_include\n#endif\n", ""));
  CHECK("nor defined(__has_include)",
        finds("#if defined(__has_include) || defined __has_include_next\n#endif\n", ""));
  CHECK("a byte order mark is skipped", finds("\xef\xbb\xbf#include \"a.h\"\n", "\"a.h"));
}

static void test_not_includes(void) {
  CHECK("not a directive after a token on the line",
        finds("int x; /* c */ #include \"a.h\"\n", ""));
  CHECK("a splice joins the # to the line before", finds("int x; \\\n#include \"a.h\"\n", ""));
  CHECK("inside a string spliced over two lines", finds("\"abc\\\n#include \"a.h\"\n", ""));
  CHECK("inside a comment", finds("/*\n#include \"a.h\"\n*/\n// #include \"b.h\"\n", ""));
  CHECK("a backslash and spaces is no splice (NVRTC warns so)",
        finds("#inc\\  \nlude \"a.h\"\n", ""));
  CHECK("trigraphs are off", finds("?\?=include \"a.h\"\n", ""));
  CHECK("## at a line's start is no directive", finds("##include \"a.h\"\n", ""));
}

/* What would hide a later include if read as the wrong token. */
static void test_tokens(void) {
  CHECK("a comment opener inside a string",
        finds("const char *s = \"/*\";\n#include \"a.h\"\n", "\"a.h"));
  CHECK("a comment opener inside a character constant",
        finds("char c = '/', d = '*';\n#include \"a.h\"\n", "\"a.h"));
  CHECK("an escaped quote inside a string",
        finds("const char *s = \"\\\" /*\";\n#include \"a.h\"\n", "\"a.h"));
  CHECK("a comment opener inside a raw string",
        finds("const char *s = R\"x(\" /* )x\";\n#include \"a.h\"\n", "\"a.h"));
  CHECK("a raw string over lines hides what is inside it only",
        finds("auto s = u8R\"(\n#include \"b.h\"\n)\";\n#include \"a.h\"\n", "\"a.h"));
  CHECK("a digit separator starts no character constant",
        finds("int y = 1'0; const char *s = \"'/*\";\n#include \"a.h\"\n", "\"a.h"));
  CHECK("an apostrophe in #warning costs one line only",
        finds("#warning don't\n#include \"a.h\"\n", "\"a.h"));
  CHECK("a comment opener inside a header name is part of the name",
        finds("#include \"a/*b.h\"\n#include \"c.h\"\n", "\"a/*b.h,\"c.h"));
  CHECK("a line comment ends at a newline, not at a spliced one",
        finds("// x \\\n#include \"b.h\"\n#include \"a.h\"\n", "\"a.h"));
  CHECK("inside #if 0 too: a needless key costs only a miss",
        finds("#if 0\n#include \"a.h\"\n#endif\n", "\"a.h"));
}

static void test_cannot_follow(void) {
  CHECK("a macro as the name cannot be followed", finds("#define H \"a.h\"\n#include H\n", "FAIL"));
  CHECK("nor one after %: and a comment", finds("%:/**/include/**/H\n", "FAIL"));
  CHECK("nor __has_include with a macro", finds("#if __has_include(H)\n#endif\n", "FAIL"));
  CHECK("nor __has_include handed to a macro",
        finds("#define HI __has_include\n#if HI(\"a.h\")\n#endif\n", "FAIL"));
  CHECK("nor a name without its closing quote", finds("#include \"a.h\n", "FAIL"));
  CHECK("an empty source has none", finds("", ""));
}

int main(void) {
  PLAN(42);
  test_spellings();
  test_not_includes();
  test_tokens();
  test_cannot_follow();
  return failures != 0;
}
