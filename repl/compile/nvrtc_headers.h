/* nvrtc_headers.h: the host headers (stdio.h, assert.h, stdint.h, ...) that cudalab supplies to
 * NVRTC itself, by name and content. */
#ifndef CUDALAB_NVRTC_HEADERS_H
#define CUDALAB_NVRTC_HEADERS_H

extern const char *const nvrtc_builtin_names[];
extern const char *const nvrtc_builtin_sources[];
extern const int nvrtc_builtin_count;

/* Whether name (as an #include names it) is one of them: never looked up on disk. */
int nvrtc_supplies_header(const char *name);

#endif
