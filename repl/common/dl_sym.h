/* dl_sym.h: looking up a symbol of a library loaded with dlopen, into a typed pointer. Used by
 * every module that loads a library at run time (NVRTC, cuBLAS, a host BLAS, readline). */
#ifndef CUDALAB_DL_SYM_H
#define CUDALAB_DL_SYM_H

/* dlsym(lib, name) into the pointer at slot, a function's or a variable's (NULL where name is
 * missing). Returns 1 if found, else 0. */
int dl_sym(void *lib, const char *name, void *slot);

#endif
