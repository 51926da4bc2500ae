/* test_chunk.c: the console's scanner of unfinished chunks (repl/common/chunk.c). It may only claim
 * "unfinished" when Lua's parser would stop at <eof>; every case here says which. */
#include <string.h>

#include "chunk.h"
#include "check.h"

/* Feeds text line by line and returns chunk_unfinished. */
static int unfinished(const char *text) {
  chunk_scan s;
  chunk_reset(&s);
  for (const char *p = text;;) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    chunk_feed(&s, p, n);
    if (!nl) break;
    p = nl + 1;
  }
  return chunk_unfinished(&s);
}

int main(void) {
  PLAN(23);
  CHECK("an open function is unfinished", unfinished("function f()\n  return 1"));
  CHECK("a closed one is not", !unfinished("function f()\n  return 1\nend"));
  CHECK("if ... elseif ... else needs one end", unfinished("if a then\nelseif b then\nelse"));
  CHECK("and is finished by it", !unfinished("if a then\nelseif b then\nelse\nend"));
  CHECK("while/for count their do once", !unfinished("while x do\nfor i = 1, 2 do end\nend"));
  CHECK("repeat waits for until", unfinished("repeat\n x = 1"));
  CHECK("until closes repeat", !unfinished("repeat\n x = 1\nuntil x"));
  CHECK("open brackets", unfinished("t = {\n 1, (2"));
  CHECK("closed brackets", !unfinished("t = {\n 1, (2)}"));
  CHECK("a long string spans lines", unfinished("s = [==[\nend ]] end"));
  CHECK("and ends at its own level", !unfinished("s = [==[\nend ]] end]==]"));
  CHECK("a long comment hides keywords", unfinished("--[[ function\nend"));
  CHECK("a closed long comment", !unfinished("--[[ function\n]] x = 1"));
  CHECK("a line comment hides keywords", !unfinished("x = 1 -- function do if ( {"));
  CHECK("quoted keywords do not count", !unfinished("x = 'function' .. \"do (\" .. 'it\\'s'"));
  CHECK("names that contain keywords do not count", !unfinished("endx = doit + if_ + functions"));
  CHECK("numbers with exponents are one token", !unfinished("x = 1e+5 + 0x1p-3 + 3.end_"));
  CHECK("a closer that does not match claims nothing", !unfinished("function f() )\n x = {"));
  CHECK("an extra end claims nothing", !unfinished("end\nfunction f()"));
  CHECK("a quote open at a line's end claims nothing", !unfinished("f(\"abc\nfunction g()"));
  CHECK("[= without a second [ claims nothing", !unfinished("x = [=\nfunction g()"));
  CHECK("a plain index bracket is a bracket", unfinished("x = t[\n1"));
  char deep[CHUNK_DEPTH + 10];
  memset(deep, '(', sizeof deep - 1);
  deep[sizeof deep - 1] = '\0';
  CHECK("nesting deeper than it tracks claims nothing", !unfinished(deep));
  return failures != 0;
}
