/* dl_sym.c: dlsym into a typed pointer, once for every library cudalab loads at run time.
 *
 * Stance: ISO C has no conversion between void * and a function pointer; POSIX has the two
 * share one representation, so the pointer's bytes are copied rather than cast, which keeps
 * -Wpedantic quiet without a cast through an integer. */
#include <dlfcn.h>
#include <string.h>

#include "dl_sym.h"

int dl_sym(void *lib, const char *name, void *slot) {
  void *p = dlsym(lib, name);
  memcpy(slot, &p, sizeof p);
  return p != NULL;
}
