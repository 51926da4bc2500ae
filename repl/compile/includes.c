/* includes.c: NVRTC's include path, and the headers a source includes.
 *
 * The toolkit's headers are found next to the NVRTC library a compile loads (its lib folder's
 * ../include), so that the headers always match the compiler, whatever CUDA_HOME the binary was
 * built with; $CUDA_HOME and the build's CUDA_HOME are the fallbacks for unusual layouts.
 *
 * Stance on the kernel cache: the key covers the contents of every header the learner can edit,
 * rather than the cache being skipped whenever a source has an #include. Lessons include their
 * own headers from the kernels folder in every kernel, and a compile costs 20-120 ms where reading
 * a few small headers costs microseconds. The scan (inc_scan.c) reads the text as the
 * preprocessor's first phases do and follows every #include, even one inside #if 0: keying on a
 * header that was not used costs nothing but a needless miss when it changes; missing one that
 * was used would return a stale kernel. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inc_scan.h"
#include "includes.h"
#include "nvrtc.h"
#include "nvrtc_headers.h"
#include "nvrtc_lib.h"
#include "paths.h"

#ifndef CUDALAB_CUDA_HOME
#define CUDALAB_CUDA_HOME "/usr/local/cuda"
#endif

#define MAX_DIRS 3
#define MAX_HEADERS 256          /* user headers followed per compile */
#define MAX_HEADER ((size_t)16 << 20)

static struct {
  int ready;                      /* inc_dirs has looked */
  int n;                          /* folders found */
  int ntoolkit;                   /* the first ntoolkit of them are the toolkit's */
  char dir[MAX_DIRS][PATH_MAX];   /* the folders, in search order */
  char opt[MAX_DIRS][PATH_MAX + 2]; /* "-I" + dir */
  const char *dirs[MAX_DIRS];     /* pointers into dir, for callers */
  const char *opts[MAX_DIRS];     /* pointers into opt */
} I;

static int is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int has_file(const char *dir, const char *name) {
  char p[PATH_MAX];
  if (snprintf(p, sizeof p, "%s/%s", dir, name) >= (int)sizeof p) return 0;
  return access(p, R_OK) == 0;
}

/* The include folder of the toolkit whose NVRTC is loaded, in out; -1 if none is found. */
static int toolkit_include(char *out, size_t len) {
  char cand[4][PATH_MAX + 32];
  int n = 0;
  char lib[PATH_MAX];
  const char *so = nvrtc_lib_path(); /* the one a compile loads, found without loading it */
  if (so && realpath(so, lib)) {
    char *slash = strrchr(lib, '/');
    if (slash) *slash = '\0';
    snprintf(cand[n++], sizeof cand[0], "%s/../include", lib);      /* lib64/ or lib/ */
    snprintf(cand[n++], sizeof cand[0], "%s/../../include", lib);   /* lib/x64/ */
  }
  const char *home = getenv("CUDA_HOME");
  if (home && *home) snprintf(cand[n++], sizeof cand[0], "%s/include", home);
  snprintf(cand[n++], sizeof cand[0], "%s/include", CUDALAB_CUDA_HOME);
  for (int i = 0; i < n; i++)
    if (has_file(cand[i], "cuda_fp16.h") && realpath(cand[i], out) && strlen(out) < len) return 0;
  return -1;
}

static void add_dir(const char *d) {
  if (I.n == MAX_DIRS || !is_dir(d)) return;
  snprintf(I.dir[I.n], sizeof I.dir[0], "%s", d);
  snprintf(I.opt[I.n], sizeof I.opt[0], "-I%s", d);
  I.dirs[I.n] = I.dir[I.n];
  I.opts[I.n] = I.opt[I.n];
  I.n++;
}

static void find_dirs(void) {
  if (I.ready) return;
  I.ready = 1;
  char inc[PATH_MAX], more[PATH_MAX + 8];
  if (toolkit_include(inc, sizeof inc) == 0) {
    add_dir(inc);
    snprintf(more, sizeof more, "%s/cccl", inc);
    add_dir(more);
  }
  I.ntoolkit = I.n;
  char data[PATH_MAX];
  if (paths_data_dir(data, sizeof data) == 0) {
    snprintf(more, sizeof more, "%s/kernels", data);
    add_dir(more);
  }
}

const char *const *inc_dirs(int *n) {
  find_dirs();
  *n = I.n;
  return I.dirs;
}

const char *const *inc_options(int *n) {
  find_dirs();
  *n = I.n;
  return I.opts;
}

/* ---- following #include lines ------------------------------------------------------------- */

typedef struct walk {
  const char *udirs[64];   /* the learner's -I folders, first in the search */
  int nudirs;
  char *seen[MAX_HEADERS]; /* headers already fed (malloc'd paths) */
  int nseen;
  inc_feed feed;
  void *ctx;
  inc_feed text; /* when set, also given each user header's contents alone (its NUL not fed) */
} walk;

static int in_toolkit(const char *path) {
  for (int i = 0; i < I.ntoolkit; i++) {
    size_t l = strlen(I.dir[i]);
    if (strncmp(path, I.dir[i], l) == 0 && path[l] == '/') return 1;
  }
  return 0;
}

/* The first folder of the search where name exists, as a path in out; 0 if found. */
static int resolve(walk *w, const char *name, const char *here, char *out, size_t len) {
  if (name[0] == '/') {
    snprintf(out, len, "%s", name);
    return access(out, R_OK) == 0 ? 0 : -1;
  }
  const char *order[64 + MAX_DIRS + 1];
  int n = 0;
  if (here) order[n++] = here;
  for (int i = 0; i < w->nudirs; i++) order[n++] = w->udirs[i];
  for (int i = 0; i < I.n; i++) order[n++] = I.dir[i];
  for (int i = 0; i < n; i++) {
    snprintf(out, len, "%s/%s", order[i], name);
    struct stat st;
    if (stat(out, &st) == 0 && S_ISREG(st.st_mode)) return 0;
  }
  return -1;
}

static char *read_all(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  struct stat st;
  if (fstat(fileno(f), &st) == 0 && (size_t)st.st_size <= MAX_HEADER &&
      (buf = malloc((size_t)st.st_size + 1))) {
    *len = fread(buf, 1, (size_t)st.st_size, f);
    buf[*len] = '\0';
  }
  fclose(f);
  return buf;
}

static int follow(walk *w, const char *src, size_t len, const char *here, int depth);

/* Feeds one include (name, quoted or not) of a file in folder here (NULL: angle brackets). */
static int feed_include(walk *w, const char *name, const char *here, int depth) {
  if (nvrtc_supplies_header(name)) return 0; /* nvrtc.c gives it: never looked up */
  char path[PATH_MAX * 2];
  if (resolve(w, name, here, path, sizeof path) != 0) {
    w->feed(w->ctx, "missing:", 8);
    w->feed(w->ctx, name, strlen(name) + 1);
    return 0;
  }
  char real[PATH_MAX];
  if (!realpath(path, real)) return -1;
  w->feed(w->ctx, real, strlen(real) + 1);
  if (in_toolkit(real)) return 0;
  for (int i = 0; i < w->nseen; i++)
    if (strcmp(w->seen[i], real) == 0) return 0;
  if (w->nseen == MAX_HEADERS || depth > 64 || !(w->seen[w->nseen] = strdup(real))) return -1;
  w->nseen++;
  size_t len = 0;
  char *text = read_all(real, &len);
  if (!text) return -1;
  w->feed(w->ctx, text, len + 1);
  if (w->text) w->text(w->ctx, text, len);
  char *slash = strrchr(real, '/');
  *slash = '\0'; /* real is now the header's folder: its own quoted includes start there */
  int rc = follow(w, text, len, real, depth + 1);
  free(text);
  return rc;
}

/* Where one file's includes are being followed from: inc_scan's context. */
typedef struct file_ctx {
  walk *w;
  const char *here; /* the file's folder, where its quoted includes are looked for first */
  int depth;        /* how deep in nested includes the file is */
} file_ctx;

static int on_include(void *ctx, const char *name, int quote) {
  file_ctx *f = ctx;
  return feed_include(f->w, name, quote == '"' ? f->here : NULL, f->depth) != 0 ? -1 : 0;
}

/* Every header a file's text names, as the preprocessor reads it (inc_scan.c); -1 for an
 * include through a macro, which cannot be followed without a preprocessor. */
static int follow(walk *w, const char *src, size_t len, const char *here, int depth) {
  file_ctx f = {w, here, depth};
  return inc_scan(src, len, on_include, &f);
}

/* The learner's -I folders: "-Idir", "-I dir", "--include-path=dir", "--include-path dir". */
static int user_dirs(walk *w, const char *const *options, int noptions) {
  for (int i = 0; i < noptions; i++) {
    const char *o = options[i], *d = NULL;
    if (strncmp(o, "-I", 2) == 0) d = o[2] ? o + 2 : (i + 1 < noptions ? options[++i] : NULL);
    else if (strncmp(o, "--include-path", 14) == 0)
      d = o[14] == '=' ? o + 15 : (!o[14] && i + 1 < noptions ? options[++i] : NULL);
    else if (strncmp(o, "--pre-include", 13) == 0 || strcmp(o, "-include") == 0)
      return -1; /* a header included from the options: not worth following */
    if (!d) continue;
    if (w->nudirs == 64) return -1;
    w->udirs[w->nudirs++] = d;
  }
  return 0;
}

int inc_source_dir(const char *file_name, char *out, size_t cap) {
  const char *slash = strrchr(file_name, '/');
  if (!slash) return snprintf(out, cap, ".") < (int)cap ? 0 : -1;
  size_t n = slash == file_name ? 1 : (size_t)(slash - file_name); /* "/k.cu": "/" */
  if (n >= cap) return -1;
  memcpy(out, file_name, n);
  out[n] = '\0';
  return 0;
}

static int walk_headers(walk w, const char *src, const char *src_dir, const char *const *options,
                        int noptions) {
  find_dirs();
  inc_feed feed = w.feed;
  void *ctx = w.ctx;
  int rc = user_dirs(&w, options, noptions);
  /* NVRTC looks for the source's quoted includes first in the folder of its program name,
   * which bind_kernel.c makes the kernel file's path ("kernel.cu", the current folder, for a
   * source given as a string). The folder is fed too: the same header name means another file
   * when the source moves. */
  feed(ctx, src_dir, strlen(src_dir) + 1);
  if (rc == 0) rc = follow(&w, src, strlen(src), src_dir, 0);
  for (int i = 0; i < w.nseen; i++) free(w.seen[i]);
  return rc;
}

int inc_user_headers(const char *src, const char *src_dir, const char *const *options,
                     int noptions, inc_feed feed, void *ctx) {
  return walk_headers((walk){.feed = feed, .ctx = ctx}, src, src_dir, options, noptions);
}

static void feed_nothing(void *ctx, const void *data, size_t len) {
  (void)ctx, (void)data, (void)len;
}

int inc_user_header_texts(const char *src, const char *src_dir, const char *const *options,
                          int noptions, inc_feed text, void *ctx) {
  return walk_headers((walk){.feed = feed_nothing, .ctx = ctx, .text = text}, src, src_dir,
                      options, noptions);
}
