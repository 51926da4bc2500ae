/* includes.h: where NVRTC looks for #include files (the CUDA Toolkit's headers and cudalab's
 * kernels folder), and which of the learner's own headers a source pulls in, so that the kernel
 * cache can key on their contents. Used by nvrtc.c and cache.c; knows nothing of Lua. */
#ifndef CUDALAB_INCLUDES_H
#define CUDALAB_INCLUDES_H

#include <stddef.h>

/* The folders cudalab adds to every compile's include path, in search order: the toolkit's
 * include folder, its cccl folder (CUDA 13 keeps <cuda/atomic> there), cudalab's kernels folder;
 * each only when it exists. Found once, then kept. Sets *n; the strings are static. */
const char *const *inc_dirs(int *n);

/* "-I<dir>" options for inc_dirs(), to append to NVRTC's options (static strings). */
const char *const *inc_options(int *n);

/* Called with each piece of what the cache key must cover. */
typedef void (*inc_feed)(void *ctx, const void *data, size_t len);

/* The folder NVRTC searches first for a quoted #include of the source compiled under the
 * program name file_name: the name's folder ("src" for "src/k.cu"), "." for a bare name, as
 * nvcc searches the folder of the file it compiles. In out (cap bytes); -1 if it does not fit. */
int inc_source_dir(const char *file_name, char *out, size_t cap);

/* Follows src's #include directives, found as NVRTC's preprocessor reads them (inc_scan.h:
 * splices, comments, '%:', any whitespace), and resolved as NVRTC would (a quoted name first in
 * the including file's folder: src_dir for the source itself, a header's own folder for what it
 * includes; then the -I folders in `options`, in order; then inc_dirs()), and feeds the path and
 * contents of every header found outside the toolkit, through nested includes, and of every
 * header named in __has_include; a name found nowhere is fed as missing, so
 * that creating it later changes the key. Toolkit headers are fed by path only: their contents
 * change with NVRTC's version, which is in the key already. Returns 0, or -1 when the includes
 * cannot be followed (a macro as the file name, an unreadable header, more than 256 headers):
 * the caller must then compile without the cache. */
int inc_user_headers(const char *src, const char *src_dir, const char *const *options,
                     int noptions, inc_feed feed, void *ctx);

/* The same walk, giving `text` only the contents of each of the learner's headers the source
 * pulls in (each once, without its NUL; toolkit headers and nvrtc.c's stand-ins not), so that
 * the signature reader can follow a typedef or struct a header defines. Returns as
 * inc_user_headers does; what was given before a -1 is still the headers found so far. */
int inc_user_header_texts(const char *src, const char *src_dir, const char *const *options,
                          int noptions, inc_feed text, void *ctx);

#endif
