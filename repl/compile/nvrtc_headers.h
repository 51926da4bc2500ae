/* nvrtc_headers.h: the host headers (stdio.h, assert.h, stdint.h, ...) that cudalab supplies to
 * NVRTC itself, by name and content. */
#ifndef CUDALAB_NVRTC_HEADERS_H
#define CUDALAB_NVRTC_HEADERS_H

extern const char *const nvrtc_builtin_names[];
extern const char *const nvrtc_builtin_sources[];
extern const int nvrtc_builtin_count;

/* Whether name (as an #include names it) is one of them: never looked up on disk. */
int nvrtc_supplies_header(const char *name);

/* The option that asks for the stand-ins of host-only headers (helper_cuda.h, string.h, ...):
 * cudalab's own, never handed to NVRTC; bind_kernel.c adds it for cuda.module(file,
 * {device_only = true}). Being an option, it is in the kernel cache's key and reaches the
 * compiling child as the others do. */
#define NVRTC_STAND_INS "-cudalab-host-stand-ins"

/* The built-in headers followed by the stand-ins, all empty: sets *names and *sources (static
 * arrays), returns how many. */
int nvrtc_headers_with_stand_ins(const char *const **names, const char *const **sources);

/* Whether name is one of the stand-ins. */
int nvrtc_stand_in_header(const char *name);

#endif
