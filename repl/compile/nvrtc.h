/* nvrtc.h: compiling a learner's CUDA C source with NVRTC into PTX and (for a real
 * architecture) a CUBIN, with compile errors rewritten to quote the learner's own file name and
 * line numbers. Used by bind_kernel.c and bind_debugger.c (compiles), and for its version by
 * bind_cuda.c, engine.c and main.c; knows nothing of Lua. */
#ifndef CUDALAB_NVRTC_H
#define CUDALAB_NVRTC_H

#include <signal.h>
#include <stddef.h>

typedef struct nvrtc_output {
  char *ptx;          /* NUL-terminated PTX text */
  size_t ptx_len;
  void *cubin;        /* NULL when the target was a virtual architecture */
  size_t cubin_len;
  char *ptxas_log;    /* ptxas -v report (registers, shared memory per kernel); may be "" */
  char **lowered;     /* lowered[i]: the mangled name of names[i], "" if it names no kernel */
  int nnames;
} nvrtc_output;

/* Compiles `src`, calling the file `file_name` in messages, for `arch` ("sm_90", "compute_90")
 * with the learner's extra options. names[] are the kernels to look up (name expressions).
 * On success fills *out (free with nvrtc_output_free) and returns 0. On failure returns -1 and
 * leaves in *errmsg (malloc'd, caller frees) the diagnostics, each quoting the learner's line
 * with a caret. NVRTC runs in a child process (nvrtc_child.c), so that a crash inside NVRTC
 * fails this compile with a message rather than ending the engine. */
int nvrtc_compile(const char *src, const char *file_name, const char *arch,
                  const char *const *options, int noptions, const char *const *names, int nnames,
                  nvrtc_output *out, char **errmsg);
void nvrtc_output_free(nvrtc_output *out);
/* Ctrl-C: a compile also watches *flag (the engine's, set by its SIGINT handler). When it is
 * set, the compile's child is killed and reaped, and nvrtc_compile fails with "compile
 * interrupted". Set once at start-up. */
void nvrtc_attach_interrupt(volatile sig_atomic_t *flag);
/* The same compile in this process: what nvrtc_compile runs in its child (nvrtc_child.c), and
 * what it falls back to where no child can be made. */
int nvrtc_compile_here(const char *src, const char *file_name, const char *arch,
                       const char *const *options, int noptions, const char *const *names,
                       int nnames, nvrtc_output *out, char **errmsg);
/* The warnings of a successful compile's log (out->ptxas_log, which the cache keeps) that are
 * about file_name itself, each with its quoted line and caret, as "kernel.cu:3: warning ...";
 * those about the toolkit's headers and ptxas's report are left out. A malloc'd string the
 * caller frees, or NULL when there are none (or the host is out of memory). */
char *nvrtc_warnings(const char *log, const char *file_name);
/* "13.0" */
const char *nvrtc_version_string(void);

#endif
