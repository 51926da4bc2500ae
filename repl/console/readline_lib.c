/* readline_lib.c: loading GNU Readline with dlopen, and looking up what lineedit.c uses.
 *
 * cudalab does not link readline. Mapping and relocating libreadline and its libtinfo was a
 * tenth of cudalab's start-up time, paid by every script, pipe and `-e` run, none of which
 * edits a line. Only a console on a terminal loads it, when lineedit_init is called; a console
 * whose readline cannot be loaded reads plain lines and says so (lineedit.c).
 *
 * Which file: libreadline.so.8 (the soname of readline 8, the one whose headers cudalab is
 * built with), then libreadline.so (the development package's link, for a readline installed
 * under another name), both through the dynamic loader's search; every name lineedit.c uses
 * must be there, or none is used. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "dl_sym.h"
#include "readline_lib.h"

static const char *const sonames[] = {"libreadline.so.8", "libreadline.so"};
#define NSONAMES ((int)(sizeof sonames / sizeof *sonames))

static struct {
  int tried;         /* readline_lib_load has run */
  int loaded;        /* every field of lib is set */
  readline_lib lib;  /* the table handed out */
  char why[512];     /* why it could not be loaded */
} R;

/* dlopen of the first soname that loads; NULL with the first name's reason in R.why. */
static void *open_library(void) {
  void *handle = NULL;
  for (int i = 0; !handle && i < NSONAMES; i++) {
    /* RTLD_LAZY: a function is bound at its first call, and most are never called. */
    handle = dlopen(sonames[i], RTLD_LAZY | RTLD_LOCAL);
    const char *e = handle ? NULL : dlerror();
    if (e && !R.why[0]) snprintf(R.why, sizeof R.why, "%s", e);
  }
  return handle;
}

const readline_lib *readline_lib_load(const char **why) {
  *why = R.why;
  if (R.tried) return R.loaded ? &R.lib : NULL;
  R.tried = 1;
  void *handle = open_library();
  if (!handle) return NULL;
#define READLINE_SLOT(name) {#name, &R.lib.name},
  static const struct {
    const char *name; /* "rl_callback_read_char" */
    void *slot;       /* &R.lib.rl_callback_read_char */
  } syms[] = {READLINE_FUNCTIONS(READLINE_SLOT) READLINE_VARIABLES(READLINE_SLOT)};
#undef READLINE_SLOT
  for (size_t i = 0; i < sizeof syms / sizeof *syms; i++) {
    if (dl_sym(handle, syms[i].name, syms[i].slot)) continue;
    snprintf(R.why, sizeof R.why, "the loaded libreadline has no %s (it is not GNU Readline 8)",
             syms[i].name);
    dlclose(handle);
    return NULL;
  }
  R.loaded = 1;
  return &R.lib;
}
