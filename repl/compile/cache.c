/* cache.c: the kernel cache behind cache.h.
 *
 * Key: two independent 64-bit FNV-1a hashes (a 128-bit key) over everything that changes
 * NVRTC's output: the cache format version, target architecture, NVRTC version, options, the
 * include folders, the kernel names asked for, the source, and the path and contents of every
 * header of the learner's that the source includes (includes.c follows the #include lines; a
 * source whose includes it cannot follow is compiled every time, never cached). Entry: one
 * file <key>.kc holding a magic number, a MAC of the rest, and NVRTC's outputs (names, PTX,
 * CUBIN, ptxas report).
 *
 * Trust: an entry is code that will be loaded and run, so it is sealed with SipHash-2-4 under a
 * random 128-bit key of the user's own (created once, 0600, in their private state folder).
 * A plain checksum was turned down: anyone who could put a file in the folder could write a
 * matching one. An entry whose MAC does not match, or that is not the user's own private file,
 * is a miss and is compiled again; a cache folder that someone else owns or can write is not
 * used at all (the message says how to fix it), and neither is one without a usable key.
 *
 * Writes go to a temporary file unique to this process, then rename() into place: readers see a
 * whole entry or none, and two REPLs compiling the same kernel at once both end with a good
 * entry. fsync is skipped on purpose: a torn entry after a power cut fails its MAC and is
 * recompiled, which costs one compile; an fsync would cost every compile a disk flush.
 * Files are created 0600 in a 0700 folder: a learner's kernels are their own. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "includes.h"
#include "paths.h"
#include "siphash.h"

#define FORMAT "cudalab-kernel-cache-2"
#define MAGIC "CLKC2"
#define KEY_FILE "cache.key" /* in the state folder: apart from what it seals */
#define MAX_ENTRY ((size_t)64 << 20)     /* larger files are not ours */
#define MEM_BUDGET ((size_t)64 << 20)    /* in-memory entries kept per process */

typedef struct mem_entry {
  char key[33];
  unsigned char *blob;
  size_t len;
  struct mem_entry *next;
} mem_entry;

static struct {
  int opened;           /* cache_open has run */
  int disk;             /* entries are written to dir */
  int readable;         /* dir exists and can be read, even if not written */
  int warned;           /* the "memory only" notice has been given */
  char dir[4096];
  mem_entry *mem;       /* most recent first */
  size_t mem_bytes;
  size_t hits, misses;
  unsigned tmp_counter; /* makes temporary names unique within the process */
  unsigned char key[SIPHASH_KEY_BYTES]; /* seals entries; valid once cache_open found one */
} C;

/* ---- hashing ------------------------------------------------------------------------------ */

typedef struct hash2 {
  uint64_t a, b;
} hash2;

static void hash_bytes(hash2 *h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) {
    h->a = (h->a ^ p[i]) * 0x100000001b3ull;
    h->b = (h->b ^ p[i]) * 0x00000100000001b3ull ^ (h->b >> 29);
  }
}

/* Hashes a string with its terminator, so "ab","c" and "a","bc" differ. */
static void hash_str(hash2 *h, const char *s) { hash_bytes(h, s, strlen(s) + 1); }

static uint64_t checksum(const unsigned char *p, size_t n) { return siphash24(C.key, p, n); }

static void feed_hash(void *h, const void *data, size_t len) { hash_bytes(h, data, len); }

/* The key of a compile, or -1 when it has none: its #include lines cannot be followed (see
 * includes.h), so a cached result could be stale and the compile must run. Headers count by
 * contents, toolkit folders by path (their contents go with the NVRTC version). */
static int make_key(char key[33], const char *src, const char *file_name, const char *arch,
                    const char *const *options, int noptions, const char *const *names,
                    int nnames) {
  hash2 h = {0xcbf29ce484222325ull, 0x6c62272e07bb0142ull};
  hash_str(&h, FORMAT);
  hash_str(&h, arch);
  hash_str(&h, nvrtc_version_string());
  for (int i = 0; i < noptions; i++) hash_str(&h, options[i]);
  int ninc = 0;
  const char *const *inc = inc_options(&ninc);
  hash_str(&h, "--include-path--");
  for (int i = 0; i < ninc; i++) hash_str(&h, inc[i]);
  hash_str(&h, "--names--");
  for (int i = 0; i < nnames; i++) hash_str(&h, names[i]);
  hash_str(&h, src);
  hash_str(&h, "--headers--");
  char dir[4096];
  if (inc_source_dir(file_name, dir, sizeof dir) != 0) return -1;
  if (inc_user_headers(src, dir, options, noptions, feed_hash, &h) != 0) return -1;
  snprintf(key, 33, "%016llx%016llx", (unsigned long long)h.a, (unsigned long long)h.b);
  return 0;
}

/* ---- serialising an nvrtc_output ------------------------------------------------------------ */

static void put32(unsigned char **p, uint32_t v) {
  memcpy(*p, &v, 4);
  *p += 4;
}

static void put_bytes(unsigned char **p, const void *d, size_t n) {
  if (n) memcpy(*p, d, n);
  *p += n;
}

/* Blob: MAGIC, u64 MAC of what follows, u32 counts and lengths, names, PTX, CUBIN, log. */
static unsigned char *serialise(const nvrtc_output *o, size_t *len) {
  size_t log_len = o->ptxas_log ? strlen(o->ptxas_log) : 0;
  size_t n = 5 + 8 + 16 + o->ptx_len + o->cubin_len + log_len;
  for (int i = 0; i < o->nnames; i++) n += 4 + strlen(o->lowered[i]);
  unsigned char *blob = malloc(n), *p = blob;
  if (!blob) return NULL;
  put_bytes(&p, MAGIC, 5);
  p += 8; /* checksum, filled last */
  put32(&p, (uint32_t)o->nnames);
  put32(&p, (uint32_t)o->ptx_len);
  put32(&p, (uint32_t)o->cubin_len);
  put32(&p, (uint32_t)log_len);
  for (int i = 0; i < o->nnames; i++) {
    put32(&p, (uint32_t)strlen(o->lowered[i]));
    put_bytes(&p, o->lowered[i], strlen(o->lowered[i]));
  }
  put_bytes(&p, o->ptx, o->ptx_len);
  put_bytes(&p, o->cubin, o->cubin_len);
  put_bytes(&p, o->ptxas_log, log_len);
  uint64_t sum = checksum(blob + 13, n - 13);
  memcpy(blob + 5, &sum, 8);
  *len = n;
  return blob;
}

/* Reads a blob back; -1 when it is not a whole, uncorrupted entry. */
typedef struct reader {
  const unsigned char *p, *end;
} reader;

static int get32(reader *r, uint32_t *v) {
  if (r->end - r->p < 4) return -1;
  memcpy(v, r->p, 4);
  r->p += 4;
  return 0;
}

static char *get_str(reader *r, size_t n) {
  if ((size_t)(r->end - r->p) < n) return NULL;
  char *s = malloc(n + 1);
  if (!s) return NULL;
  memcpy(s, r->p, n);
  s[n] = '\0';
  r->p += n;
  return s;
}

static int deserialise(const unsigned char *blob, size_t len, int nnames, nvrtc_output *o) {
  memset(o, 0, sizeof *o);
  if (len < 29 || memcmp(blob, MAGIC, 5) != 0) return -1;
  uint64_t sum;
  memcpy(&sum, blob + 5, 8);
  if (sum != checksum(blob + 13, len - 13)) return -1;
  reader r = {blob + 13, blob + len};
  uint32_t n, ptx_len, cubin_len, log_len;
  if (get32(&r, &n) || get32(&r, &ptx_len) || get32(&r, &cubin_len) || get32(&r, &log_len))
    return -1;
  if ((int)n != nnames) return -1;
  o->lowered = calloc((size_t)n + 1, sizeof *o->lowered);
  if (!o->lowered) return -1;
  o->nnames = (int)n;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t l;
    if (get32(&r, &l) || !(o->lowered[i] = get_str(&r, l))) goto bad;
  }
  if (!(o->ptx = get_str(&r, ptx_len))) goto bad;
  o->ptx_len = ptx_len;
  if (cubin_len) {
    if (!(o->cubin = get_str(&r, cubin_len))) goto bad;
    o->cubin_len = cubin_len;
  }
  if (!(o->ptxas_log = get_str(&r, log_len)) || r.p != r.end) goto bad;
  return 0;
bad:
  nvrtc_output_free(o);
  return -1;
}

/* ---- storage ------------------------------------------------------------------------------ */

static void notice_memory_only(const char *why) {
  if (C.warned) return;
  C.warned = 1;
  fprintf(stderr, "cudalab: the kernel cache%s%s (%s); compiled kernels are kept in memory for "
                  "this session only\n", C.dir[0] ? " in " : "", C.dir, why);
}

/* Reads the 16-byte key at path into C.key: 0, -1 when there is none yet (ENOENT), -2 when
 * there is one that cannot be trusted (why says so). Only a regular file of the user's that no
 * one else can read or write will do: a key others can read seals nothing. */
static int key_read(const char *path, char *why, size_t whylen) {
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return -1;
    snprintf(why, whylen, "the cache key %s cannot be read (%s); remove it", path, strerror(errno));
    return -2;
  }
  struct stat st;
  ssize_t got = -1;
  why[0] = '\0';
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
    snprintf(why, whylen, "the cache key %s is not a private file of yours (mode 0600); remove it, "
             "and cudalab will make a new one", path);
  else if ((got = read(fd, C.key, sizeof C.key)) != (ssize_t)sizeof C.key)
    snprintf(why, whylen, "the cache key %s is damaged; remove it, and cudalab will make a new one",
             path);
  close(fd);
  return why[0] ? -2 : 0;
}

/* Makes a new random key at path. Written under a temporary name and put in place with link(),
 * which never replaces: of two processes starting at once, one key wins and both read it. */
static int key_create(const char *path, char *why, size_t whylen) {
  unsigned char k[SIPHASH_KEY_BYTES];
  char tmp[4300];
  if (getrandom(k, sizeof k, 0) != (ssize_t)sizeof k) {
    snprintf(why, whylen, "no random numbers for a cache key (%s)", strerror(errno));
    return -1;
  }
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  int ok = fd >= 0 && write(fd, k, sizeof k) == (ssize_t)sizeof k;
  if (fd >= 0 && close(fd) != 0) ok = 0;
  if (ok && link(tmp, path) != 0 && errno != EEXIST) ok = 0;
  int e = errno;
  unlink(tmp);
  if (!ok) {
    snprintf(why, whylen, "cannot write a cache key to %s (%s)", path, strerror(e));
    return -1;
  }
  return 0;
}

/* The user's key into C.key, made on first use; 0, or -1 with why. */
static int key_load(char *why, size_t whylen) {
  char dir[4096], path[4200];
  if (paths_state_dir(dir, sizeof dir, why, whylen) != 0) return -1;
  snprintf(path, sizeof path, "%s/" KEY_FILE, dir);
  int r = key_read(path, why, whylen);
  if (r == -1 && key_create(path, why, whylen) == 0) r = key_read(path, why, whylen);
  return r == 0 ? 0 : -1;
}

static void cache_open(void) {
  if (C.opened) return;
  C.opened = 1;
  char why[4400];
  if (paths_cache_dir(C.dir, sizeof C.dir, why, sizeof why) != 0 ||
      key_load(why, sizeof why) != 0) {
    C.dir[0] = '\0';
    notice_memory_only(why);
    return;
  }
  C.readable = access(C.dir, R_OK | X_OK) == 0;
  C.disk = access(C.dir, W_OK) == 0;
  if (!C.disk) notice_memory_only("it cannot be written");
}

static void entry_path(char *buf, size_t len, const char *key) {
  snprintf(buf, len, "%s/%s.kc", C.dir, key);
}

/* The entry at path, malloc'd (the caller frees it), or NULL for a miss. Anything but a regular
 * file is a miss: O_NONBLOCK keeps a FIFO from waiting forever for a writer (where even Ctrl-C
 * could not reach), and O_NOFOLLOW keeps a symbolic link from pointing the cache elsewhere. So
 * is a file someone else owns or can write, with a message: it may have been planted. The
 * entry written after the compile then replaces it. */
static unsigned char *read_file(const char *path, const char *key, size_t *len) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return NULL;
  struct stat st;
  unsigned char *buf = NULL;
  int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  if (ok && (st.st_uid != geteuid() || (st.st_mode & 022))) {
    fprintf(stderr, "cudalab: cache entry %s.kc is %s; compiling again\n", key,
            st.st_uid != geteuid() ? "not yours" : "writable by others");
    ok = 0;
  }
  if (ok && (size_t)st.st_size <= MAX_ENTRY && (buf = malloc((size_t)st.st_size + 1))) {
    size_t got = 0;
    while (got < (size_t)st.st_size) {
      ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      got += (size_t)r;
    }
    *len = got;
  }
  close(fd);
  return buf;
}

static void write_entry(const char *key, const unsigned char *blob, size_t len) {
  if (!C.disk) return;
  char path[4200], tmp[4300];
  entry_path(path, sizeof path, key);
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%u", path, (long)getpid(), C.tmp_counter++);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  int ok = fd >= 0;
  for (size_t done = 0; ok && done < len;) {
    ssize_t w = write(fd, blob + done, len - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) ok = 0;
    else done += (size_t)w;
  }
  if (fd >= 0 && close(fd) != 0) ok = 0;
  if (ok && rename(tmp, path) == 0) return;
  int e = errno;
  unlink(tmp);
  C.disk = 0;
  notice_memory_only(strerror(e));
}

static void remember(const char *key, unsigned char *blob, size_t len) {
  if (len > MEM_BUDGET) {
    free(blob);
    return;
  }
  while (C.mem && C.mem_bytes + len > MEM_BUDGET) { /* drop everything: simple, and rare */
    mem_entry *e = C.mem;
    C.mem = e->next;
    C.mem_bytes -= e->len;
    free(e->blob);
    free(e);
  }
  mem_entry *e = malloc(sizeof *e);
  if (!e) {
    free(blob);
    return;
  }
  snprintf(e->key, sizeof e->key, "%s", key);
  e->blob = blob;
  e->len = len;
  e->next = C.mem;
  C.mem = e;
  C.mem_bytes += len;
}

static mem_entry *recall(const char *key) {
  for (mem_entry *e = C.mem; e; e = e->next)
    if (strcmp(e->key, key) == 0) return e;
  return NULL;
}

/* A hit from memory or disk fills *out; 0 on a hit, -1 on a miss. */
static int lookup(const char *key, int nnames, nvrtc_output *out) {
  mem_entry *m = recall(key);
  if (m) return deserialise(m->blob, m->len, nnames, out);
  if (!C.readable) return -1;
  char path[4200];
  entry_path(path, sizeof path, key);
  size_t len = 0;
  unsigned char *blob = read_file(path, key, &len);
  if (!blob) return -1;
  if (deserialise(blob, len, nnames, out) != 0) {
    fprintf(stderr, "cudalab: cache entry %s.kc was damaged, or not sealed with your key; "
                    "compiling again\n", key);
    free(blob);
    if (C.disk) unlink(path);
    return -1;
  }
  remember(key, blob, len);
  return 0;
}

int cache_compile(const char *src, const char *file_name, const char *arch,
                  const char *const *options, int noptions, const char *const *names, int nnames,
                  nvrtc_output *out, char **errmsg) {
  cache_open();
  char key[33];
  *errmsg = NULL;
  if (make_key(key, src, file_name, arch, options, noptions, names, nnames) != 0) {
    C.misses++;
    return nvrtc_compile(src, file_name, arch, options, noptions, names, nnames, out, errmsg);
  }
  if (lookup(key, nnames, out) == 0) {
    C.hits++;
    return 0;
  }
  C.misses++;
  if (nvrtc_compile(src, file_name, arch, options, noptions, names, nnames, out, errmsg) != 0)
    return -1;
  size_t len = 0;
  unsigned char *blob = serialise(out, &len);
  if (blob) {
    write_entry(key, blob, len);
    remember(key, blob, len);
  }
  return 0;
}

static int is_entry(const char *name) {
  size_t n = strlen(name);
  return n == 35 && strcmp(name + 32, ".kc") == 0;
}

void cache_stats_get(cache_stats *s) {
  cache_open();
  memset(s, 0, sizeof *s);
  snprintf(s->dir, sizeof s->dir, "%s", C.disk ? C.dir : "");
  s->disk = C.disk;
  s->hits = C.hits;
  s->misses = C.misses;
  DIR *d = C.readable ? opendir(C.dir) : NULL;
  if (!d) {
    for (mem_entry *e = C.mem; e; e = e->next) {
      s->entries++;
      s->bytes += e->len;
    }
    return;
  }
  for (struct dirent *e; (e = readdir(d));) {
    if (!is_entry(e->d_name)) continue;
    char path[4400];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", C.dir, e->d_name);
    if (stat(path, &st) == 0) {
      s->entries++;
      s->bytes += (size_t)st.st_size;
    }
  }
  closedir(d);
}

int cache_clear(void) {
  cache_open();
  while (C.mem) {
    mem_entry *e = C.mem;
    C.mem = e->next;
    free(e->blob);
    free(e);
  }
  C.mem_bytes = 0;
  if (!C.disk) return 0;
  DIR *d = opendir(C.dir);
  if (!d) return -1;
  int removed = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (!is_entry(e->d_name)) continue;
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", C.dir, e->d_name);
    if (unlink(path) == 0) removed++;
  }
  closedir(d);
  return removed;
}
