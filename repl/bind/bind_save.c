/* bind_save.c: arrays to files and back, for the engineer who plots elsewhere: a:save(path
 * [, {format =, shape =}]) and cuda.load(path [, {format =, dtype =, host =}]) -> array, shape.
 * Two formats: NumPy's .npy (version 1.0, little-endian, C order; the header in npy.c) and CSV
 * (one row per line, commas between fields). The format comes from the extension, or opts.format.
 *
 * Stance:
 *  - A save never leaves a corrupt file: the data goes to a temporary file beside the target
 *    (created exclusively, so two saves never share one), which is synced and renamed over the
 *    target only once complete. Any failure, a full disk or an array freed half-way, removes the
 *    temporary file at once and leaves the target as it was.
 *  - Files and buffers live in userdata created released, with one idempotent release for __gc,
 *    __close and the error path (liolib.c's way), so an error anywhere leaks nothing. The work
 *    that may raise (reading the device, writing the disk) runs under lua_pcall, so that the
 *    temporary file goes at once, not when the collector comes.
 *  - A file to load may come from anywhere: its header is parsed strictly (npy.c), its size is
 *    checked against what the header says before anything is allocated from it, and a CSV field
 *    that is not a number stops the load with its line and field.
 *  - Arrays have no shape of their own: a:save takes one (its product must be #a), cuda.load
 *    returns the file's beside the flat array it loads. bf16, which NumPy lacks, is saved as f4
 *    (every bf16 value exactly) and loads back as bf16 with {dtype = "bf16"}.
 *  - When grading, a:save writes only into the submission's own folder (bind_save_confine, set
 *    by the grading process before any submission runs, and never lifted): a plain name, made
 *    and renamed relative to the folder's descriptor with O_NOFOLLOW and O_EXCL, so a path
 *    elsewhere, a ".." and a symbolic link planted under the name or as the folder are refused
 *    or replaced, never written through. The grading process's other folders (the one it runs
 *    in, where a lesson finds cudalab's kernels by a plain name) are out of reach. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>

#include "bindings.h"
#include "buffer.h"
#include "npy.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "bind_save.c writes and reads elements as little-endian host memory"
#endif

#define FILE_MT "cudalab.SaveFile"
#define BLOCK 65536       /* elements staged at a time */
#define CSV_FIELD 64      /* a number's text at most, in a CSV we read */

typedef enum fmt { FMT_NPY, FMT_CSV } fmt;

/* The folder saves are confined to when grading (bind_save_confine): one per process, set once.
 */
static struct {
  int fd;              /* the folder, O_DIRECTORY; -1: saves are not confined */
  char dir[PATH_MAX];  /* its path as the grader gave it, which a:save's path may start with */
} confined = {-1, ""};

/* An open file of a save (tmp set: the temporary file, renamed on commit) or a load. */
typedef struct save_file {
  int fd;                 /* -1 once released */
  int committed;          /* the temporary file became the target */
  int dirfd;              /* what tmp is relative to: AT_FDCWD, or the confined folder */
  char tmp[PATH_MAX];     /* "" for a load */
} save_file;

static void file_release(save_file *f) {
  if (f->fd >= 0) close(f->fd);
  f->fd = -1;
  if (f->tmp[0] && !f->committed) unlinkat(f->dirfd, f->tmp, 0);
  f->tmp[0] = '\0';
}

static int file_gc(lua_State *L) {
  file_release(luaL_checkudata(L, 1, FILE_MT));
  return 0;
}

static save_file *push_file(lua_State *L) {
  save_file *f = lua_newuserdatauv(L, sizeof *f, 0);
  f->fd = -1;
  f->committed = 0;
  f->dirfd = AT_FDCWD;
  f->tmp[0] = '\0';
  luaL_setmetatable(L, FILE_MT);
  return f;
}

/* ---- options ------------------------------------------------------------------------------- */

/* The format: opts.format, else the path's extension; raises naming both choices. */
static fmt check_format(lua_State *L, const char *fn, const char *path, int opts) {
  const char *name = NULL;
  if (lua_istable(L, opts) && lua_getfield(L, opts, "format") != LUA_TNIL) {
    name = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    if (!name)
      luaL_error(L, "%s: format must be \"npy\" or \"csv\", got %s", fn, luaL_typename(L, -1));
  } else {
    const char *dot = strrchr(path, '.'), *slash = strrchr(path, '/');
    if (dot && (!slash || dot > slash)) name = dot + 1;
    if (!name || (strcmp(name, "npy") && strcmp(name, "csv")))
      luaL_error(L, "%s: cannot tell the format of '%s' from its extension: name it .npy or "
                 ".csv, or say {format = \"npy\"} or {format = \"csv\"}", fn, path);
  }
  if (strcmp(name, "npy") == 0) return FMT_NPY;
  if (strcmp(name, "csv") == 0) return FMT_CSV;
  return (fmt)luaL_error(L, "%s: format must be \"npy\" or \"csv\", got \"%s\"", fn, name);
}

/* opts.shape for n elements: a list of whole numbers whose product is n; {n} when absent. */
static int check_shape(lua_State *L, int opts, size_t n, size_t *shape) {
  if (!lua_istable(L, opts) || lua_getfield(L, opts, "shape") == LUA_TNIL) {
    shape[0] = n;
    return 1;
  }
  if (!lua_istable(L, -1)) luaL_error(L, "a:save: shape must be a list of sizes, such as {rows, "
                                         "columns}, got %s", luaL_typename(L, -1));
  lua_Integer nd = luaL_len(L, -1);
  if (nd < 1 || nd > NPY_MAX_DIMS)
    luaL_error(L, "a:save: shape must have 1 to %d sizes, got %I", NPY_MAX_DIMS, nd);
  size_t prod = 1;
  for (lua_Integer i = 1; i <= nd; i++) {
    int ok = 0;
    lua_geti(L, -1, i);
    lua_Integer v = lua_tointegerx(L, -1, &ok);
    if (!ok || v < 0)
      luaL_error(L, "a:save: shape[%I] must be a whole number of 0 or more, got %s", i,
                 luaL_tolstring(L, -1, NULL));
    lua_pop(L, 1);
    shape[i - 1] = (size_t)v;
    prod = v && prod > SIZE_MAX / (size_t)v ? SIZE_MAX : prod * (size_t)v;
  }
  if (prod != n)
    luaL_error(L, "a:save: a shape of %I sizes holds %s elements, and the array has %I",
               nd, prod == SIZE_MAX ? "too many" : lua_pushfstring(L, "%I", (lua_Integer)prod),
               (lua_Integer)n);
  lua_pop(L, 1);
  return (int)nd;
}

/* ---- writing ------------------------------------------------------------------------------- */

static void write_all(lua_State *L, save_file *f, const void *data, size_t len) {
  const char *p = data;
  while (len) {
    ssize_t w = write(f->fd, p, len);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) luaL_error(L, "a:save: cannot write %s: %s", f->tmp, strerror(errno));
    p += w;
    len -= (size_t)w;
  }
}

/* Element i of a staged block as CSV text: enough digits to read back the same element. */
static int csv_value(char *out, size_t cap, cl_dtype t, const void *base, size_t i) {
  const cl_dtype_info *d = &dtype_table[t];
  if (d->is_float) {
    double v = dtype_get_f(t, base, i);
    if (isnan(v)) return snprintf(out, cap, "nan");
    return snprintf(out, cap, "%.*g", t == DT_F64 ? 17 : 9, v);
  }
  int64_t v = dtype_get_i(t, base, i);
  if (d->kind == DK_UINT) return snprintf(out, cap, "%llu", (unsigned long long)v);
  return snprintf(out, cap, "%lld", (long long)v);
}

/* The save's body, under lua_pcall: the array at 1, the file at 2, a light pointer to the
 * settings at 3. Reads the array a block at a time into a staging userdata. */
typedef struct save_job {
  fmt format;
  int ndim;
  size_t shape[NPY_MAX_DIMS];
} save_job;

static int save_body(lua_State *L) {
  cl_buf *b = buf_check_live(L, 1, "a:save's array");
  save_file *f = luaL_checkudata(L, 2, FILE_MT);
  const save_job *job = lua_touserdata(L, 3);
  cl_dtype t = b->dtype;
  size_t es = dtype_table[t].size;
  unsigned char *stage = lua_newuserdatauv(L, BLOCK * es, 0);
  float *wide = t == DT_BF16 ? lua_newuserdatauv(L, BLOCK * sizeof(float), 0) : NULL;
  luaL_Buffer text;
  if (job->format == FMT_NPY) {
    char head[64 + NPY_MAX_DIMS * 24 + 64];
    size_t hl = npy_write_header(head, sizeof head, t == DT_BF16 ? "<f4" : npy_descr(t),
                                 job->shape, job->ndim);
    if (!hl) return luaL_error(L, "a:save: the shape does not fit a .npy header");
    write_all(L, f, head, hl);
  }
  size_t cols = job->ndim == 2 ? job->shape[1] : 1, col = 0;
  for (size_t first = 0; first < b->n; first += BLOCK) {
    size_t cnt = b->n - first < BLOCK ? b->n - first : BLOCK;
    buf_check_unfreed(L, b, "a:save");
    buf_read(L, b, first, cnt, stage);
    if (job->format == FMT_NPY) {
      if (wide) {
        for (size_t j = 0; j < cnt; j++) wide[j] = (float)dtype_get_f(t, stage, j);
        write_all(L, f, wide, cnt * sizeof(float));
      } else {
        write_all(L, f, stage, cnt * es);
      }
      continue;
    }
    luaL_buffinit(L, &text);
    for (size_t j = 0; j < cnt; j++) {
      char *p = luaL_prepbuffsize(&text, 48);
      int len = csv_value(p, 46, t, stage, j);
      p[len] = ++col == cols ? '\n' : ',';
      if (col == cols) col = 0;
      luaL_addsize(&text, (size_t)len + 1);
    }
    luaL_pushresult(&text);
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    write_all(L, f, s, len);
    lua_pop(L, 1);
  }
  if (fsync(f->fd) != 0)
    return luaL_error(L, "a:save: cannot write %s: %s", f->tmp, strerror(errno));
  return 0;
}

/* The temporary file beside path (relative to f->dirfd): path.tmp-PID-N, created exclusively
 * with the mode a new file gets (0666 less the umask); never through a link when confined. */
static void open_temp(lua_State *L, save_file *f, const char *path) {
  static unsigned counter;
  int nofollow = f->dirfd == AT_FDCWD ? 0 : O_NOFOLLOW;
  for (int tries = 0; tries < 100; tries++) {
    int n = snprintf(f->tmp, sizeof f->tmp, "%s.tmp-%ld-%u", path, (long)getpid(), counter++);
    if (n < 0 || (size_t)n >= sizeof f->tmp)
      luaL_error(L, "a:save: the path '%s' is too long", path);
    f->fd = openat(f->dirfd, f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | nofollow, 0666);
    if (f->fd >= 0) return;
    if (errno != EEXIST) {
      int e = errno;
      f->tmp[0] = '\0';
      luaL_error(L, "a:save: cannot write '%s': %s", path, strerror(e));
    }
  }
  f->tmp[0] = '\0';
  luaL_error(L, "a:save: cannot make a temporary file beside '%s'", path);
}

/* Whether name is one a confined save may write: a plain file name, [A-Za-z0-9_.-], not
 * starting with a dot (no "..", no hidden file), at most NAME_MAX bytes. */
static int plain_name(const char *name) {
  size_t n = strlen(name);
  if (n == 0 || n > NAME_MAX || name[0] == '.') return 0;
  for (size_t i = 0; i < n; i++) {
    char c = name[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '_' || c == '-' || c == '.'))
      return 0;
  }
  return 1;
}

/* Pushes s in double quotes, as Lua's %q shows a string: a quote, a backslash and every byte
 * that is not printable ASCII escaped (a path that is meant to mislead the reader of a message
 * shows as what it is); cut after 200 bytes. */
static void push_quoted(lua_State *L, const char *s) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addchar(&b, '"');
  size_t i = 0;
  for (; s[i] && i < 200; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') {
      luaL_addchar(&b, '\\');
      luaL_addchar(&b, (char)c);
    } else if (c < 32 || c > 126) {
      char esc[8];
      snprintf(esc, sizeof esc, "\\%u", c);
      luaL_addstring(&b, esc);
    } else {
      luaL_addchar(&b, (char)c);
    }
  }
  luaL_addstring(&b, s[i] ? "\"..." : "\"");
  luaL_pushresult(&b);
}

/* When saves are confined, the name path comes to inside the folder (a plain name, or the
 * folder's path then one), with f->dirfd set to the folder; raises for any other path. When
 * not confined, path itself. */
static const char *confined_target(lua_State *L, save_file *f, const char *path) {
  if (confined.fd < 0) return path;
  const char *name = path;
  size_t dl = strlen(confined.dir);
  if (strncmp(path, confined.dir, dl) == 0 && path[dl] == '/') name = path + dl + 1;
  if (!plain_name(name)) {
    push_quoted(L, path);
    luaL_error(L, "a:save(%s): when grading a file may be written only in the submission's own "
               "folder, by a plain name such as workfile \"out.npy\"", lua_tostring(L, -1));
  }
  f->dirfd = confined.fd;
  return name;
}

/* a:save(path [, {format = "npy" | "csv", shape = {...}}]) -> a */
int bind_save_method(lua_State *L) {
  cl_buf *b = buf_check_live(L, 1, "self");
  const char *path = luaL_checkstring(L, 2);
  if (!lua_isnoneornil(L, 3)) luaL_checktype(L, 3, LUA_TTABLE);
  lua_settop(L, 3);
  save_job *job = lua_newuserdatauv(L, sizeof *job, 0); /* anchored until we return */
  job->format = check_format(L, "a:save", path, 3);
  job->ndim = check_shape(L, 3, b->n, job->shape);
  if (job->format == FMT_CSV && job->ndim > 2)
    luaL_error(L, "a:save: a CSV file holds 1 or 2 dimensions (rows of columns), and the shape "
               "has %d; save it as .npy", job->ndim);
  save_file *f = push_file(L);
  int fidx = lua_gettop(L);
  path = confined_target(L, f, path);
  open_temp(L, f, path);
  lua_pushcfunction(L, save_body);
  lua_pushvalue(L, 1);
  lua_pushvalue(L, fidx);
  lua_pushlightuserdata(L, job);
  if (lua_pcall(L, 3, 0, 0) != LUA_OK) {
    file_release(f); /* the temporary file goes now; the target was never touched */
    return lua_error(L);
  }
  int rc = close(f->fd);
  f->fd = -1;
  /* renameat replaces a link planted under the name; it never writes through one */
  if (rc != 0 || renameat(f->dirfd, f->tmp, f->dirfd, path) != 0) {
    int e = errno;
    file_release(f);
    return luaL_error(L, "a:save: cannot write '%s': %s", path, strerror(e));
  }
  f->committed = 1;
  file_release(f);
  lua_settop(L, 1);
  return 1;
}

/* ---- reading ------------------------------------------------------------------------------- */

/* Reads len bytes at offset off of the file, or raises naming the path. Returns bytes read,
 * fewer only at the end of the file. */
static size_t read_at(lua_State *L, int fd, const char *path, void *dst, size_t len, off_t off) {
  size_t got = 0;
  while (got < len) {
    ssize_t r = pread(fd, (char *)dst + got, len - got, off + (off_t)got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) luaL_error(L, "cuda.load: cannot read '%s': %s", path, strerror(errno));
    if (r == 0) break;
    got += (size_t)r;
  }
  return got;
}

/* Pushes the shape table {d0, d1, ...}. */
static void push_shape(lua_State *L, const size_t *shape, int ndim) {
  lua_createtable(L, ndim, 0);
  for (int i = 0; i < ndim; i++) {
    lua_pushinteger(L, (lua_Integer)shape[i]);
    lua_seti(L, -2, i + 1);
  }
}

/* The dtype the load asks for (opts.dtype), or -1 for the file's own. */
static int opt_dtype(lua_State *L, int opts) {
  if (!lua_istable(L, opts) || lua_getfield(L, opts, "dtype") == LUA_TNIL) return -1;
  const char *name = lua_tostring(L, -1);
  int t = name && lua_type(L, -1) == LUA_TSTRING ? dtype_parse(name) : -1;
  if (t < 0)
    luaL_error(L, "cuda.load: dtype must be one of %s, got %s", dtype_names(),
               luaL_tolstring(L, -1, NULL));
  lua_pop(L, 1);
  return t;
}

/* Leaves the result on the stack: host buffer h (at hidx) as it is, or copied to a new device
 * array when `device`, with the shape after it. */
static int finish(lua_State *L, int hidx, int device, const size_t *shape, int ndim) {
  if (device) {
    cl_buf *h = lua_touserdata(L, hidx);
    cl_buf *d = buf_push_new(L, h->n, h->dtype, 1);
    buf_store(L, d, 0, h->n, h->ptr);
  } else {
    lua_pushvalue(L, hidx);
  }
  push_shape(L, shape, ndim);
  return 2;
}

/* The host buffer of the file's dtype at hidx, converted to float type want: a new buffer on
 * the stack. Only between float types (f32 data to bf16, f64 to f32): an integer's conversion
 * is the learner's to choose, after loading. */
static int convert(lua_State *L, int hidx, int want, const char *path) {
  cl_buf *h = lua_touserdata(L, hidx);
  if (!dtype_table[h->dtype].is_float || !dtype_table[want].is_float)
    return luaL_error(L, "cuda.load: '%s' holds %s, and dtype = \"%s\" asks for %s: load it as "
                      "it is and convert after (cuda.array(a:tolist(), \"%s\"))", path,
                      dtype_table[h->dtype].name, dtype_table[want].name,
                      dtype_table[want].name, dtype_table[want].name);
  cl_buf *out = buf_push_new(L, h->n, (cl_dtype)want, 0);
  for (size_t i = 0; i < h->n; i++)
    dtype_set_f((cl_dtype)want, out->ptr, i, dtype_get_f(h->dtype, h->ptr, i));
  return lua_gettop(L);
}

static int load_npy(lua_State *L, int fd, const char *path, off_t size, int want, int device) {
  unsigned char start[12];
  size_t got = read_at(L, fd, path, start, sizeof start, 0), need;
  char err[256];
  if (npy_header_size(start, got, &need, err, sizeof err))
    return luaL_error(L, "cuda.load: '%s': %s", path, err);
  unsigned char *head = lua_newuserdatauv(L, need, 0);
  got = read_at(L, fd, path, head, need, 0);
  npy_header h;
  if (npy_read_header(head, got, &h, err, sizeof err))
    return luaL_error(L, "cuda.load: '%s': %s", path, err);
  size_t es = dtype_table[h.dtype].size, bytes = h.n * es;
  size_t have = (size_t)size - h.data_offset;
  if (have < bytes)
    return luaL_error(L, "cuda.load: '%s' is truncated: its header says %I elements of %s (%I "
                      "bytes), and the file holds %I bytes after the header", path,
                      (lua_Integer)h.n, dtype_table[h.dtype].name, (lua_Integer)bytes,
                      (lua_Integer)have);
  if (have > bytes)
    return luaL_error(L, "cuda.load: '%s' has %I bytes after the %I elements its header "
                      "describes: not a .npy file of one array", path,
                      (lua_Integer)(have - bytes), (lua_Integer)h.n);
  cl_buf *buf = buf_push_new(L, h.n, (cl_dtype)h.dtype, 0);
  int hidx = lua_gettop(L);
  if (read_at(L, fd, path, buf->ptr, bytes, (off_t)h.data_offset) != bytes)
    return luaL_error(L, "cuda.load: '%s' changed while it was read", path);
  if (want >= 0 && want != h.dtype) hidx = convert(L, hidx, want, path);
  return finish(L, hidx, device, h.shape, h.ndim); /* a scalar's shape is {} */
}

/* One CSV field, trimmed, into elem i of the buffer; raises naming the line and field. */
static void csv_store(lua_State *L, const char *path, cl_buf *b, size_t i, const char *s,
                      size_t len, size_t line, size_t field) {
  while (len && (*s == ' ' || *s == '\t')) s++, len--;
  while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r')) len--;
  char text[CSV_FIELD + 1];
  int fits = len > 0 && len <= CSV_FIELD && !memchr(s, '\0', len);
  if (fits) {
    memcpy(text, s, len);
    text[len] = '\0';
  }
  const cl_dtype_info *d = &dtype_table[b->dtype];
  char *end = NULL;
  if (fits && d->kind == DK_UINT && b->dtype == DT_U64 && text[0] != '-') {
    errno = 0;
    unsigned long long u = strtoull(text, &end, 10);
    if (*end == '\0' && errno == 0) {
      dtype_set_i(b->dtype, b->ptr, i, (int64_t)u);
      return;
    }
  } else if (fits && !d->is_float && !(d->kind == DK_UINT && text[0] == '-')) {
    /* a u64's -1 is 2^64 - 1 to Lua, but in a file it is a number below the type's range */
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (*end == '\0' && errno == 0 && dtype_holds_int(b->dtype, v)) {
      dtype_set_i(b->dtype, b->ptr, i, v);
      return;
    }
  }
  double v = fits ? strtod(text, &end) : 0;
  if (!fits || *end != '\0') {
    lua_pushlstring(L, s, len > 40 ? 40 : len);
    luaL_error(L, "cuda.load: '%s', line %I, field %I: '%s%s' is not a number", path,
               (lua_Integer)line, (lua_Integer)field, lua_tostring(L, -1), len > 40 ? "..." : "");
  }
  if (d->is_float) {
    dtype_set_f(b->dtype, b->ptr, i, v);
    return;
  }
  if (!dtype_holds_whole(b->dtype, v)) {
    char range[64];
    luaL_error(L, "cuda.load: '%s', line %I, field %I: %s is not a whole number in the range "
               "of %s (%s); load with another dtype", path, (lua_Integer)line,
               (lua_Integer)field, text, d->name, dtype_range_text(b->dtype, range, sizeof range));
  }
  if (b->dtype == DT_U64 && v >= 9223372036854775808.0)
    dtype_set_i(b->dtype, b->ptr, i, (int64_t)(uint64_t)v);
  else
    dtype_set_i(b->dtype, b->ptr, i, (int64_t)v);
}

/* Walks the CSV text: counts rows and fields (b NULL), or stores them (b set). A blank line or
 * one starting with '#' is skipped, as numpy.loadtxt does. Every row must have as many fields
 * as the first. */
static void csv_walk(lua_State *L, const char *path, const char *s, size_t len, cl_buf *b,
                     size_t *rows, size_t *cols) {
  size_t line = 0, i = 0, r = 0;
  for (const char *p = s, *end = s + len; p < end;) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    line++;
    const char *q = p;
    while (q < eol && (*q == ' ' || *q == '\t' || *q == '\r')) q++;
    if (q < eol && *q != '#') {
      size_t fields = 0;
      for (const char *f = p; f <= eol;) {
        const char *comma = memchr(f, ',', (size_t)(eol - f));
        if (!comma) comma = eol;
        fields++;
        if (b) csv_store(L, path, b, i++, f, (size_t)(comma - f), line, fields);
        f = comma + 1;
      }
      if (r == 0 && !b) *cols = fields;
      if (fields != *cols)
        luaL_error(L, "cuda.load: '%s', line %I has %I fields, and the first row has %I", path,
                   (lua_Integer)line, (lua_Integer)fields, (lua_Integer)*cols);
      r++;
    }
    p = eol + 1;
  }
  *rows = r;
}

static int load_csv(lua_State *L, int fd, const char *path, off_t size, int want, int device) {
  char *text = lua_newuserdatauv(L, (size_t)size + 1, 0);
  if (read_at(L, fd, path, text, (size_t)size, 0) != (size_t)size)
    return luaL_error(L, "cuda.load: '%s' changed while it was read", path);
  size_t rows = 0, cols = 0;
  csv_walk(L, path, text, (size_t)size, NULL, &rows, &cols);
  cl_buf *buf = buf_push_new(L, rows * cols, want >= 0 ? (cl_dtype)want : DT_F32, 0);
  int hidx = lua_gettop(L);
  csv_walk(L, path, text, (size_t)size, buf, &rows, &cols);
  size_t shape[2] = {rows, cols};
  return finish(L, hidx, device, shape, cols > 1 ? 2 : 1); /* one column: a list, {rows} */
}

/* cuda.load(path [, {format =, dtype =, host = true}]) -> array (or host buffer), shape */
static int cuda_load(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 2);
  fmt format = check_format(L, "cuda.load", path, 2);
  int want = opt_dtype(L, 2);
  int device = !(lua_istable(L, 2) && lua_getfield(L, 2, "host") != LUA_TNIL &&
                 lua_toboolean(L, -1));
  lua_settop(L, 2);
  save_file *f = push_file(L);
  /* O_NONBLOCK: a FIFO named x.npy is refused below, never waited on for a writer */
  f->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (f->fd < 0) return luaL_error(L, "cuda.load: cannot open '%s': %s", path, strerror(errno));
  struct stat st;
  if (fstat(f->fd, &st) != 0 || !S_ISREG(st.st_mode))
    return luaL_error(L, "cuda.load: '%s' is not a regular file", path);
  int n = format == FMT_NPY ? load_npy(L, f->fd, path, st.st_size, want, device)
                            : load_csv(L, f->fd, path, st.st_size, want, device);
  file_release(f);
  return n;
}

/* sandbox.confine_saves(dir): from now on, every a:save of this process writes only into dir,
 * by a plain name (the grading process calls it before a submission runs). dir must be a
 * folder, itself no symbolic link; it is opened once, so a folder swapped in later under its
 * name is not written. Once set, it cannot be moved or lifted: a second call raises. */
int bind_save_confine(lua_State *L) {
  const char *dir = luaL_checkstring(L, 1);
  if (confined.fd >= 0)
    return luaL_error(L, "sandbox.confine_saves: saves are already confined to %s",
                      confined.dir);
  if (strlen(dir) >= sizeof confined.dir)
    return luaL_error(L, "sandbox.confine_saves: the path is too long");
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return luaL_error(L, "sandbox.confine_saves: cannot open the folder %s: %s", dir,
                      strerror(errno));
  snprintf(confined.dir, sizeof confined.dir, "%s", dir);
  confined.fd = fd;
  return 0;
}

int luaopen_cudalab_save(lua_State *L) {
  static const luaL_Reg meta[] = {{"__gc", file_gc}, {"__close", file_gc}, {NULL, NULL}};
  luaL_newmetatable(L, FILE_MT);
  luaL_setfuncs(L, meta, 0);
  lua_pop(L, 1);
  static const luaL_Reg functions[] = {{"load", cuda_load}, {NULL, NULL}};
  luaL_newlib(L, functions);
  return 1;
}
