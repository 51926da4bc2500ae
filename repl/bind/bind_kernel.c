/* bind_kernel.c: kernels for Lua. cuda.kernel / cuda.module compile CUDA C with NVRTC and load
 * the result on the active backend; k[{grid, block}](args...) launches.
 *
 * Stance: everything a launch can get wrong is checked here, before the backend sees it, and
 * named in the learner's terms: the parameter as the source declares it ("argument 1 (float *a)")
 * and the device limit with the device's own value. The parameter layout (PTX) and the source
 * signature are read once per kernel into a marshalling plan; a launch then marshals into a
 * buffer the kernel owns, so it allocates nothing but the small launch object Lua's k[cfg]
 * syntax implies. That object is a C closure rather than a userdata with __call: calling it
 * skips the interpreter's metamethod lookup and the check of self, which is most of what a
 * launch from Lua costs beyond cudaLaunchKernel itself (bench/RESULTS.md). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>

#include "buffer.h"
#include "cache.h"
#include "h200.h"
#include "host_aside.h"
#include "includes.h"
#include "kargs.h"
#include "kernel_sig.h"
#include "launch_bounds.h"
#include "launch_log.h"
#include "nvrtc.h"
#include "nvrtc_headers.h"
#include "ptxinfo.h"
#include "src_guard.h"
#include "bindings.h"
#include "runtime.h"
#include "stream.h"
#include "texture.h"
#include "udata_tag.h"

#define SIGS_MT "cudalab.KernelSigs"
#define SHOWN_MAX 300 /* a value shown in a message: 60 bytes, each escaped to at most 4 */
/* The most parameter bytes a kernel may take: 32,764 with CUDA 12.1+ on Volta and later (4 KiB
 * before), as cudaLaunchKernel and the simulator allow. Nothing else is bounded: a kernel keeps
 * every parameter's name and check, a module every kernel. */
#define ARG_BYTES 32764

typedef struct cl_mod {
  cl_module *mod;            /* backend module; NULL until loaded */
  const cl_backend *backend; /* the backend it was loaded on */
  nvrtc_output out;          /* PTX, CUBIN, ptxas report, lowered names */
  char file_name[128];       /* the learner's name for the source */
  char path[PATH_MAX];       /* the program name NVRTC compiles it under: the kernel file's path
                                as given ("src/stencil.cu"), so that its quoted #includes are
                                looked for first beside it, as nvcc does; "kernel.cu" for a
                                source given as a string (the current folder) */
  char arch[16];             /* what it was compiled for */
  int lesson_owned;          /* lesson code compiled it from a string or from kernels/: its
                                launches by lesson code are not held to the kernel time limit
                                (cuda._lesson, bind_limits.c); a learner's file never is */
} cl_mod;

/* A kernel is one userdata sized for its own parameters: the struct, then a tail holding the
 * argument buffer, the PTX layout, argv, the source's parameters, the plan and the two names.
 * The pointers below point into that tail, so Lua's collector frees it all at once and a
 * kernel of 1,000 parameters costs what it needs, never a fixed worst case. */
typedef struct cl_kernel {
  cl_function *fn;        /* owned by the module, which the kernel keeps alive */
  struct cl_mod *m;       /* that module: m->mod is NULL once released by a direct call of
                             getmetatable(m).__gc(m), and then fn must not be used */
  const cl_backend *backend;
  const char *lowered;    /* the .entry name */
  sig_kernel sig;         /* from the source (name, params in the tail; expr NULL);
                             sig.nparams < 0 when it could not be read */
  ptx_entry_info layout;  /* from the PTX: sizes and offsets */
  ptxas_info res;         /* registers, shared memory */
  lb_bounds bounds;       /* __launch_bounds__, __cluster_dims__ ... from the PTX */
  int grid_sync;          /* it syncs its whole grid: a launch must be cooperative */
  unsigned char *plan;    /* sig_kind per parameter; SIG_UNKNOWN: decided by the value passed
                             (no source signature) */
  void **argv;            /* argv[i] points at parameter i in args */
  unsigned char *warned;  /* per parameter: its unchecked array was warned of */
  int had_views;          /* the last launch's arguments had a view (kargs_finish) */
  uint64_t *args;         /* marshalled parameter values, 8-aligned */
} cl_kernel;

/* The kernels the source scanner found, owned by a userdata so that an error raised while
 * they are in use (a compile error, say) cannot leak them. */
typedef struct sigs_box {
  sig_kernel *k;
  int n;
} sigs_box;

typedef struct cl_launch {
  uint64_t tag;  /* udata_tag(self, UDATA_LAUNCH) */
  cl_dim3 grid, block;
  size_t shared;
  cl_kernel *k;  /* the kernel, kept alive by the launch record's uservalue 1 */
  cl_lstream *stream; /* the stream it queues on, kept alive by uservalue 2; NULL: default */
  int checked;   /* the configuration passed check_limits: a configuration never changes, so a
                    launch object called in a loop is checked once */
  int cooperative; /* cooperative = true: every block resident at once (grid syncs work) */
} cl_launch;

/* ---- compiling ----------------------------------------------------------------------------- */

/* Opens a kernel file to read: a regular file only. It is opened without blocking and checked
 * before anything is read, so that a FIFO (or a device) named like a kernel never hangs the
 * prompt, as fopen would. NULL when there is none; *irregular is set when the path names
 * something that is not a regular file. */
static FILE *open_source(const char *path, int *irregular) {
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENXIO) *irregular = 1; /* a FIFO with no writer, on some systems */
    return NULL;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *irregular = 1;
    close(fd);
    return NULL;
  }
  FILE *f = fdopen(fd, "rb");
  if (!f) close(fd);
  return f;
}

/* A string that names a .cu file (one line, ending in .cu or .cuh) is read from disk: first as
 * given, then from the kernels/ folder cudalab ships. Pushes the source; returns the file name
 * to use in messages, and in *path the name to compile it under (see cl_mod.path): the path as
 * given for a file found so, the plain name for one of kernels/ (a folder of -I already).
 * *not_a_file is set for a source given as a string or found in kernels/: not a file of the
 * learner's. */
static const char *push_source(lua_State *L, int idx, const char **path, int *not_a_file) {
  size_t len;
  const char *s = luaL_checklstring(L, idx, &len);
  int is_file = !strchr(s, '\n') && len > 3 &&
                (strcmp(s + len - 3, ".cu") == 0 || (len > 4 && strcmp(s + len - 4, ".cuh") == 0));
  *path = "kernel.cu";
  *not_a_file = !is_file;
  if (!is_file) {
    lua_pushvalue(L, idx);
    return *path;
  }
  char shipped[PATH_MAX + 64];
  int irregular = 0;
  FILE *f = open_source(s, &irregular);
  if (f) *path = s;
  if (!f && !irregular && rt.data_dir[0] && !strchr(s, '/')) {
    snprintf(shipped, sizeof shipped, "%s/kernels/%s", rt.data_dir, s);
    f = open_source(shipped, &irregular);
    *path = s;
    *not_a_file = f != NULL;
  }
  if (!f && irregular)
    luaL_error(L, "kernel file '%s' is not a regular file (a FIFO, a device or a folder?): "
               "give the path of a .cu file, or the source itself", s);
  if (!f)
    luaL_error(L, "kernel file '%s' not found (looked in the current folder and in kernels/)", s);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) luaL_addlstring(&b, chunk, n);
  int bad = ferror(f);
  fclose(f);
  if (bad) luaL_error(L, "cannot read kernel file '%s'", s);
  luaL_pushresult(&b);
  const char *base = strrchr(s, '/');
  return base ? base + 1 : s;
}

/* The compiler options one module may pass: a fixed array on the C stack, since a learner passes
 * a handful; more is an error that says the limit, never a silent cut. 48 leaves room in the 64
 * that nvrtc.c passes on for cudalab's own options and include folders. */
#define MAX_OPTIONS 48

/* The string on top of the stack, compiler option i, if it is one option: NVRTC takes each as
 * one argument, and a NUL would cut it short unseen, a newline or other control character
 * make it more than one line of the compile's command. Raises naming the option. */
static const char *check_option(lua_State *L, lua_Integer i) {
  size_t len;
  const char *o = lua_tolstring(L, -1, &len);
  char why[SRC_GUARD_WHY], shown[SHOWN_MAX];
  if (src_guard_option(o, len, why, sizeof why) == 0) return o;
  src_guard_quote(o, len, 60, shown, sizeof shown);
  luaL_error(L, "compiler option %I must be one option such as \"-DN=4\", got %s: %s", i, shown,
             why);
  return NULL;
}

/* Options come as the array part of opts or as opts.options: {"-use_fast_math", "-DN=4"}.
 * Pushes a table that holds every option string; out points into those strings, so they live
 * as long as it stays on the stack. The options table cannot be trusted to keep them: its
 * __index may make each string on the spot, and a finalizer run by any later allocation may
 * empty it, either of which lets the collector free a string before the compile reads it.
 * Turned down: copying the strings into C memory, which would need freeing on every error. */
static int collect_options(lua_State *L, int opts, const char **out, int max) {
  int n = 0;
  lua_newtable(L);
  if (lua_isnoneornil(L, opts)) return 0;
  luaL_checktype(L, opts, LUA_TTABLE);
  int keep = lua_gettop(L);
  int list = opts;
  if (lua_getfield(L, opts, "options") == LUA_TTABLE) list = lua_gettop(L);
  for (lua_Integer i = 1; lua_geti(L, list, i) != LUA_TNIL; i++) {
    if (lua_type(L, -1) != LUA_TSTRING)
      luaL_error(L, "compiler option %I must be a string like \"-use_fast_math\", got %s", i,
                 luaL_typename(L, -1));
    if (n == max) luaL_error(L, "too many compiler options (at most %d)", max);
    out[n++] = check_option(L, i);
    lua_rawseti(L, keep, n);
  }
  lua_settop(L, keep);
  return n;
}

static int mod_gc(lua_State *L) {
  cl_mod *m = luaL_checkudata(L, 1, MODULE_MT);
  if (m->mod) m->backend->module_unload(m->mod);
  m->mod = NULL;
  nvrtc_output_free(&m->out);
  return 0;
}

static int sigs_gc(lua_State *L) {
  sigs_box *b = luaL_checkudata(L, 1, SIGS_MT);
  sig_free(b->k, b->n);
  b->k = NULL;
  b->n = 0;
  return 0;
}

/* opts.device_only: true when the source's host code is to be set aside. Raises when it is
 * neither a boolean nor nil. */
static int device_only(lua_State *L, int opts) {
  if (lua_isnoneornil(L, opts)) return 0;
  int t = lua_getfield(L, opts, "device_only");
  if (t != LUA_TNIL && t != LUA_TBOOLEAN)
    luaL_error(L, "opts.device_only must be true or false, got %s", luaL_typename(L, -1));
  int on = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return on;
}

#define ASIDE_MT "cudalab.HostAside"

static int aside_gc(lua_State *L) {
  host_aside_free(luaL_checkudata(L, 1, ASIDE_MT));
  return 0;
}

/* Replaces the source at src with its device part (host_aside.h), then pushes the list of what
 * was set aside, {{first = 55, last = 196, what = "function main"}, ...}. The result lives in a
 * userdata whose __gc frees it, so that an error while the Lua copies are made leaks nothing. */
static void push_device_part(lua_State *L, int src) {
  size_t len;
  const char *s = lua_tolstring(L, src, &len);
  host_aside_result *r = lua_newuserdatauv(L, sizeof *r, 0);
  memset(r, 0, sizeof *r);
  luaL_setmetatable(L, ASIDE_MT);
  char why[256];
  if (host_aside(s, len, r, why, sizeof why) != 0)
    luaL_error(L, "cannot set the host code aside: %s", why);
  lua_pushlstring(L, r->text, r->len);
  lua_replace(L, src);
  lua_createtable(L, r->n, 0);
  for (int i = 0; i < r->n; i++) {
    lua_createtable(L, 0, 3);
    lua_pushinteger(L, r->spans[i].first);
    lua_setfield(L, -2, "first");
    lua_pushinteger(L, r->spans[i].last);
    lua_setfield(L, -2, "last");
    lua_pushstring(L, r->spans[i].what);
    lua_setfield(L, -2, "what");
    lua_seti(L, -2, i + 1);
  }
  lua_remove(L, -2); /* the result: collected */
}

/* Gives the module on top of the stack, as its uservalue 2, what compiles it again: the source
 * at src and a copy of the options, so that k:debug can add -G (bind_debugger.c); and the list
 * at aside (0: none) of what device_only set aside, for m:set_aside(). */
static void keep_origin(lua_State *L, int src, const char *const *options, int n, int aside) {
  lua_createtable(L, n, 2);
  lua_pushvalue(L, src);
  lua_setfield(L, -2, "source");
  if (aside) {
    lua_pushvalue(L, aside);
    lua_setfield(L, -2, "set_aside");
  }
  for (int i = 0; i < n; i++) {
    lua_pushstring(L, options[i]);
    lua_seti(L, -2, i + 1);
  }
  lua_setiuservalue(L, -2, 2);
}

/* The learner's headers a compile pulls in, joined, gathered in C memory (a Lua error during
 * the walk would leak what it holds). */
typedef struct header_text {
  char *buf;
  size_t n, cap;
  int oom;
} header_text;

static void add_header(void *ctx, const void *data, size_t len) {
  header_text *h = ctx;
  if (h->oom) return;
  if (h->n + len + 2 > h->cap) {
    size_t cap = (h->n + len + 2) * 2;
    char *grown = realloc(h->buf, cap);
    if (!grown) {
      h->oom = 1;
      return;
    }
    h->buf = grown;
    h->cap = cap;
  }
  memcpy(h->buf + h->n, data, len);
  h->n += len;
  h->buf[h->n++] = '\n';
  h->buf[h->n] = '\0';
}

/* Reads the kernels' signatures in the source src compiled under the program name path with
 * these options, their parameters' types looked up in the headers it includes too, as NVRTC
 * finds them (includes.c). A header walk that stops (an #include through a macro) leaves the
 * headers found so far: a type not found is a warning at launch, never a wrong check. */
static void user_headers(const char *src, const char *path, const char *const *options,
                         int noptions, header_text *h) {
  char dir[PATH_MAX];
  if (inc_source_dir(path, dir, sizeof dir) == 0)
    (void)inc_user_header_texts(src, dir, options, noptions, add_header, h);
}

static int find_sigs(lua_State *L, const char *src, const char *path, const char *const *options,
                     int noptions, sig_kernel **out) {
  header_text h = {0};
  user_headers(src, path, options, noptions, &h);
  int n = h.oom ? -1 : sig_find_kernels_with(src, h.buf, out);
  free(h.buf);
  if (n < 0) luaL_error(L, "out of host memory reading the kernels' signatures");
  return n;
}

/* Reads into ibox (a sigs_box on the stack, which owns it) the signature of the instantiation
 * `name` of a kernel template, which the module at mod_idx compiled to the .entry low: the
 * template's parameters with the template arguments of low's mangled name (kernel_sig.c), so
 * that its launches are checked as a plain kernel's are. Leaves ibox empty when the template
 * cannot be read that way; the launch then checks sizes only, as before. */
static void instance_sig(lua_State *L, int mod_idx, const cl_mod *m, const char *name,
                         const char *low, sigs_box *ibox) {
  ptx_entry_info lay = {0};
  int nparams = ptx_entry_params(m->out.ptx, low, &lay) == 0 ? lay.nparams : -1;
  const char *options[MAX_OPTIONS];
  int noptions = 0, top = lua_gettop(L);
  lua_getiuservalue(L, mod_idx, 2); /* what compiled it: its strings live as long as it */
  int origin = lua_gettop(L);
  lua_getfield(L, origin, "source");
  const char *src = lua_tostring(L, -1);
  for (int i = 1; noptions < MAX_OPTIONS; i++) {
    if (lua_geti(L, origin, i) != LUA_TSTRING) break;
    options[noptions++] = lua_tostring(L, -1);
  }
  header_text h = {0};
  user_headers(src ? src : "", m->path, options, noptions, &h);
  sig_kernel *k = h.oom ? NULL : calloc(1, sizeof *k);
  int r = k && src ? sig_instantiate(src, h.buf, name, low, nparams, k) : k ? 0 : -1;
  free(h.buf);
  if (r == 1) {
    ibox->k = k;
    ibox->n = 1;
  } else {
    free(k);
  }
  lua_settop(L, top);
  if (r < 0) luaL_error(L, "out of host memory reading the kernels' signatures");
}

#define WARNINGS_SHOWN "cudalab.warnings_shown" /* registry: warning texts shown this session */

/* Prints NVRTC's warnings about the learner's own file after a compile that succeeded (a
 * warning such as 'variable "b" was declared but never referenced' often points at the bug),
 * unless opts.warnings is false. Each text is shown once a session: a script that builds the
 * same kernel in a loop, or compiles it again from the cache (whose log keeps the warnings),
 * says it once. Turned down: printing on every compile, which floods a loop. */
static void show_warnings(lua_State *L, int opts, const cl_mod *m) {
  if (lua_istable(L, opts)) {
    int t = lua_getfield(L, opts, "warnings");
    int off = t == LUA_TBOOLEAN && !lua_toboolean(L, -1);
    if (t != LUA_TNIL && t != LUA_TBOOLEAN)
      luaL_error(L, "opts.warnings must be true or false, got %s", luaL_typename(L, -1));
    lua_pop(L, 1);
    if (off) return;
  }
  char *w = m->out.ptxas_log ? nvrtc_warnings(m->out.ptxas_log, m->path) : NULL;
  if (!w) return;
  lua_pushstring(L, w);
  free(w);
  if (lua_getfield(L, LUA_REGISTRYINDEX, WARNINGS_SHOWN) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, WARNINGS_SHOWN);
  }
  lua_pushvalue(L, -2);
  if (lua_rawget(L, -2) == LUA_TNIL) {
    lua_pushvalue(L, -3);
    lua_pushboolean(L, 1);
    lua_rawset(L, -4);
    fflush(stdout); /* what the script printed before comes first, in a log of both */
    fprintf(stderr, "%s\n(compiled; {warnings = false} in cuda.kernel's options hides these)\n",
            lua_tostring(L, -3));
    fflush(stderr);
  }
  lua_pop(L, 3);
}

/* Compiles source at idx with options table at opts; pushes the module (uservalue 1: a table
 * of its kernels by name, filled by make_kernels). The kernels the scanner found are in box,
 * which sits on the stack below; their NVRTC name expressions are looked up in order (templates
 * left out), then `extra` when it is not NULL: a name the learner asked for that the scanner did
 * not find, tried as a name expression of its own. */
static cl_mod *compile_module(lua_State *L, int src_idx, int opts, sigs_box *box,
                              const char **extra) {
  const char *path;
  int not_a_file;
  const char *file = push_source(L, src_idx, &path, &not_a_file);
  int src = lua_gettop(L), aside = 0, dev = device_only(L, opts);
  if (dev) {
    push_device_part(L, src);
    aside = lua_gettop(L);
  }
  const char *options[MAX_OPTIONS];
  int noptions = collect_options(L, opts, options, MAX_OPTIONS);
  /* the headers of such a file declare its host functions too (reduction.h's reduce<T>) */
  int has_default = 0;
  for (int i = 0; i < noptions; i++) has_default |= strcmp(options[i], "-default-device") == 0;
  if (dev && noptions + 2 > MAX_OPTIONS)
    luaL_error(L, "too many compiler options (at most %d with device_only)", MAX_OPTIONS - 2);
  if (dev && !has_default) options[noptions++] = "-default-device";
  if (dev) options[noptions++] = NVRTC_STAND_INS; /* empty helper_cuda.h, string.h, ... */
  box->n = find_sigs(L, lua_tostring(L, src), path, options, noptions, &box->k);
  for (int i = 0; *extra && i < box->n; i++)
    if (sig_same_name(box->k[i].name, *extra)) *extra = NULL; /* found: no extra expression */
  const char **names = lua_newuserdatauv(L, sizeof *names * ((size_t)box->n + 1), 0);
  int nnames = 0;
  for (int i = 0; i < box->n; i++)
    if (!box->k[i].is_template) names[nnames++] = box->k[i].expr;
  if (*extra) names[nnames++] = *extra;
  const cl_backend *be = rt_backend(L);
  cl_mod *m = lua_newuserdatauv(L, sizeof *m, 2); /* 1: its kernels; 2: what compiled it */
  memset(m, 0, sizeof *m);
  luaL_setmetatable(L, MODULE_MT);
  keep_origin(L, src, options, noptions, aside);
  snprintf(m->file_name, sizeof m->file_name, "%s", file);
  if (strlen(path) >= sizeof m->path) luaL_error(L, "the kernel file's path is too long");
  snprintf(m->path, sizeof m->path, "%s", path);
  snprintf(m->arch, sizeof m->arch, "%s", be->target_arch());
  char *errmsg = NULL;
  if (cache_compile(lua_tostring(L, src), m->path, m->arch, options, noptions, names,
                    nnames, &m->out, &errmsg) != 0) {
    lua_pushfstring(L, "compile error\n%s", errmsg ? errmsg : "(no message)");
    free(errmsg);
    lua_error(L);
  }
  show_warnings(L, opts, m);
  cl_image img = {m->out.ptx, m->out.ptx_len, m->out.cubin, m->out.cubin_len};
  cl_err err;
  if (be->module_load(&img, &m->mod, &err) != 0) rt_raise(L, &err);
  m->backend = be;
  m->lesson_owned = rt.lesson_code > 0 && not_a_file;
  return m;
}

#define ALIGN8(n) (((n) + 7) & ~(size_t)7)

/* A struct or vector type taken by value: NVRTC declares one as an array of bytes
 * (".param .align 8 .b8 p[16]"), a scalar by its own type (.u8 for a bool or a char). */
static int is_aggregate(const ptx_param *pp) { return strcmp(pp->ptx_type, "b8") == 0; }

/* Allocates the kernel userdata for the parameters of layout lay (nparams, param_bytes set),
 * keeping sn of the source's parameters, and points its fields into the tail; pushes it. */
static cl_kernel *new_kernel(lua_State *L, const ptx_entry_info *lay, int sn, int nodes,
                             const char *name, const char *low) {
  size_t np = (size_t)lay->nparams, nl = strlen(name) + 1, ll = strlen(low) + 1;
  size_t args = ALIGN8(lay->param_bytes ? lay->param_bytes : 1), head = ALIGN8(sizeof(cl_kernel));
  size_t size = head + args + np * sizeof(ptx_param) + np * sizeof(void *) +
                (size_t)sn * sizeof(sig_param) + (size_t)nodes * sizeof(lay_node) + 2 * np + nl +
                ll;
  cl_kernel *k = lua_newuserdatauv(L, size, 2); /* 1: the module; 2: the last launch */
  memset(k, 0, size);
  unsigned char *t = (unsigned char *)k + head;
  k->args = (uint64_t *)(void *)t;
  t += args;
  k->layout = *lay;
  k->layout.params = (ptx_param *)(void *)t;
  k->layout.cap = (int)np;
  t += np * sizeof(ptx_param);
  k->argv = (void **)(void *)t;
  t += np * sizeof(void *);
  k->sig.params = (sig_param *)(void *)t;
  t += (size_t)sn * sizeof(sig_param);
  k->sig.lay.nodes = (lay_node *)(void *)t; /* the kernel's copy: never freed on its own */
  k->sig.lay.n = nodes;
  t += (size_t)nodes * sizeof(lay_node);
  k->plan = t;
  t += np;
  k->warned = t;
  t += np;
  k->sig.name = memcpy(t, name, nl);
  t += nl;
  k->lowered = memcpy(t, low, ll);
  return k;
}

/* Creates a kernel object for sig (lowered name at low) and stores it in the module's table;
 * leaves nothing on the stack. The module is at mod_idx. */
static void make_kernel(lua_State *L, int mod_idx, cl_mod *m, const sig_kernel *sig,
                        const char *low) {
  ptx_entry_info lay = {0};
  if (ptx_entry_params(m->out.ptx, low, &lay) != 0) /* counts them, with no room given */
    luaL_error(L, "cannot read the parameters of kernel '%s' from its PTX", sig->name);
  if (lay.param_bytes > ARG_BYTES)
    luaL_error(L, "kernel '%s' takes %I bytes of parameters; CUDA passes at most 32,764 bytes of "
               "kernel parameters (CUDA 12.1 and later): pass large data in an array instead",
               sig->name, (lua_Integer)lay.param_bytes);
  int sn = sig->nparams == lay.nparams ? sig->nparams : 0; /* a mismatch: the PTX decides */
  int nodes = sn > 0 ? sig->lay.n : 0;
  cl_kernel *k = new_kernel(L, &lay, sn, nodes, sig->name, low);
  luaL_setmetatable(L, KERNEL_MT);
  lua_pushvalue(L, mod_idx);
  lua_setiuservalue(L, -2, 1);
  k->sig.nparams = sig->nparams == lay.nparams ? sig->nparams : -1;
  k->sig.is_template = sig->is_template;
  k->sig.overloaded = sig->overloaded;
  if (sn > 0) memcpy(k->sig.params, sig->params, sizeof *sig->params * (size_t)sn);
  if (nodes > 0) memcpy(k->sig.lay.nodes, sig->lay.nodes, sizeof *sig->lay.nodes * (size_t)nodes);
  k->backend = m->backend;
  k->m = m;
  if (ptx_entry_params(m->out.ptx, low, &k->layout) != 0)
    luaL_error(L, "cannot read the parameters of kernel '%s' from its PTX", sig->name);
  for (int i = 0; i < k->layout.nparams; i++) {
    k->argv[i] = (unsigned char *)k->args + k->layout.params[i].offset;
    k->plan[i] = k->sig.nparams >= 0 ? k->sig.params[i].kind : SIG_UNKNOWN;
    if (k->plan[i] == SIG_UNKNOWN && k->layout.params[i].ptx_type[0] == 'f') k->plan[i] = SIG_FLOAT;
    /* a struct or vector the source names; a __half is .b8 too, but its plan says float */
    if (is_aggregate(&k->layout.params[i]) && k->sig.nparams >= 0 &&
        (k->plan[i] == SIG_UNKNOWN || k->plan[i] == SIG_AGGREGATE))
      k->plan[i] = SIG_AGGREGATE;
  }
  ptxas_parse(m->out.ptxas_log, low, &k->res);
  char why[256]; /* the .entry was found above: its parameters were read */
  if (ptx_entry_bounds(m->out.ptx, low, &k->bounds, why, sizeof why) != 0)
    luaL_error(L, "kernel '%s': %s", sig->name, why);
  k->grid_sync = ptx_entry_grid_sync(m->out.ptx, low);
  cl_err err;
  if (m->backend->function(m->mod, low, &k->fn, &err) != 0) rt_raise(L, &err);
  if (m->backend->set_resources)
    m->backend->set_resources(k->fn, k->res.registers, k->res.stack_bytes,
                              k->res.spill_bytes + k->res.spill_load_bytes);
  if (m->backend->source_names) {
    int n = k->sig.nparams > 0 ? k->sig.nparams : 0;
    const char **names = lua_newuserdatauv(L, sizeof *names * ((size_t)n + 1), 0);
    for (int i = 0; i < n; i++) names[i] = k->sig.params[i].name;
    m->backend->source_names(k->fn, sig->name, names, n);
    lua_pop(L, 1);
  }
  lua_getiuservalue(L, mod_idx, 1);
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, sig->name);
  lua_pop(L, 2);
}

/* Whether name is an instantiation of the template called key ("k<float>" for "k"). */
static int instance_of(const char *name, const char *key) {
  size_t len = strlen(key);
  return len > 0 && strncmp(name, key, len) == 0 && name[len] == '<';
}

/* Pushes the kernel named key from the kernel table at tbl, or nil: by its exact name, else
 * by a name equal but for spaces ("k(float*)" for "k(float *)"), else the one instantiation of
 * the template key the source makes ("k<float>" for "k", as a kernel template with one
 * explicit instantiation names one kernel; with several, none is picked and push_name_hint
 * lists them). */
static int push_kernel(lua_State *L, int tbl, const char *key) {
  if (lua_getfield(L, tbl, key) != LUA_TNIL) return 1;
  lua_pop(L, 1);
  int instances = 0;
  for (lua_pushnil(L); lua_next(L, tbl); lua_pop(L, 1)) {
    if (lua_type(L, -2) != LUA_TSTRING) continue;
    if (sig_same_name(lua_tostring(L, -2), key)) {
      lua_remove(L, -2);
      return 1;
    }
    instances += instance_of(lua_tostring(L, -2), key);
  }
  if (instances == 1)
    for (lua_pushnil(L); lua_next(L, tbl); lua_pop(L, 1))
      if (lua_type(L, -2) == LUA_TSTRING && instance_of(lua_tostring(L, -2), key)) {
        lua_remove(L, -2);
        return 1;
      }
  lua_pushnil(L);
  return 0;
}

/* Pushes a hint for a key that names no kernel of the table at tbl: the names it may have
 * meant (overloads "key(...)", instantiations "key<...>", "ns::key", or the one instantiation
 * key spells another way, "scale<3u>" for "scale<3>"), sorted, or "". */
static void push_name_hint(lua_State *L, int tbl, const char *key) {
  luaL_Buffer b;
  size_t len = strlen(key);
  lua_newtable(L);
  int list = lua_gettop(L), n = 0;
  for (lua_pushnil(L); lua_next(L, tbl); lua_pop(L, 1)) {
    if (lua_type(L, -2) != LUA_TSTRING) continue;
    size_t kl;
    const char *name = lua_tolstring(L, -2, &kl);
    int overload = strncmp(name, key, len) == 0 && (name[len] == '(' || name[len] == '<');
    int in_ns = kl > len + 2 && strcmp(name + kl - len, key) == 0 && name[kl - len - 1] == ':';
    int respelt = strchr(key, '<') && sig_same_instance(name, key);
    if (overload || in_ns || respelt) {
      lua_pushvalue(L, -2);
      lua_seti(L, list, ++n);
    }
  }
  lua_getglobal(L, "table"); /* in order, as m:kernels() lists them, not the table's */
  lua_getfield(L, -1, "sort");
  lua_pushvalue(L, list);
  lua_call(L, 1, 0);
  lua_pop(L, 1);
  luaL_buffinit(L, &b);
  for (int i = 1; i <= n; i++) {
    luaL_addstring(&b, i == 1 ? ": did you mean " : i == n ? " or " : ", ");
    lua_geti(L, list, i);
    luaL_addchar(&b, '"');
    luaL_addvalue(&b);
    luaL_addchar(&b, '"');
  }
  if (n > 0) luaL_addchar(&b, '?');
  luaL_pushresult(&b);
  lua_remove(L, list);
}

#define NAME_FORMS "a kernel in a namespace is named \"ns::k\", an explicit instantiation " \
                   "\"k<int>\", one of several overloads \"k(float *)\""

/* Raises why no kernel could be made of the source: none is declared, only templates are, or
 * the compiler does not know the one the scanner read under that name. */
static void no_kernel(lua_State *L, int mod_idx, const cl_mod *m, const sigs_box *box,
                      int missed) {
  for (int i = 0; i < box->n; i++)
    if (box->k[i].is_template) {
      char args[256];
      const char *base = strrchr(box->k[i].name, ':');
      lua_getiuservalue(L, mod_idx, 2);
      lua_getfield(L, -1, "source");
      sig_template_example(lua_tostring(L, -1), base ? base + 1 : box->k[i].name, args,
                           sizeof args);
      luaL_error(L, "'%s' in %s is a kernel template: pick an instantiation by name, "
                 "cuda.kernel(src, {name = \"%s<%s>\"}), and the compiler makes it (or add "
                 "template __global__ void %s<%s>(...); to the source)", box->k[i].name,
                 m->file_name, box->k[i].name, args, box->k[i].name, args);
    }
  if (missed >= 0)
    luaL_error(L, "no kernel found in %s: the compiler knows no kernel '%s' (inside #if 0, or made "
               "by a macro?). If it has another name, pick it with cuda.kernel(src, {name = ...}): "
               NAME_FORMS, m->file_name, box->k[missed].expr);
  luaL_error(L,
             "no __global__ function found in %s: a kernel starts with __global__ void name(...)",
             m->file_name);
}

/* Raises, for a name `extra` of the form "t<...>" that the compiler could not instantiate, when
 * the source has a kernel template t: that its arguments do not fit the template's
 * parameters, with a form that does. Returns when there is no such template. */
static void not_instantiated(lua_State *L, int mod_idx, const cl_mod *m, const sigs_box *box,
                             const char *extra) {
  const char *lt = strchr(extra, '<');
  if (!lt) return;
  for (int i = 0; i < box->n; i++) {
    const char *name = box->k[i].name;
    size_t len = strlen(name);
    char base[512];
    snprintf(base, sizeof base, "%.*s", (int)(lt - extra), extra);
    if (!box->k[i].is_template || !sig_same_name(name, base) || len >= 256) continue;
    char args[256];
    const char *plain = strrchr(name, ':');
    lua_getiuservalue(L, mod_idx, 2);
    lua_getfield(L, -1, "source");
    sig_template_example(lua_tostring(L, -1), plain ? plain + 1 : name, args, sizeof args);
    luaL_error(L, "no kernel named '%s' in %s: the compiler could not instantiate the kernel "
               "template %s with those arguments (a misspelt type, too many or too few, a "
               "value its parameter cannot hold?); it takes arguments such as \"%s<%s>\"",
               extra, m->file_name, name, name, args);
  }
}

/* The source name of a C++ kernel's mangled name when it is a plain function, in namespaces or
 * not ("_Z3addPfS_" is "add", "_ZN2ns3addEPf" is "ns::add"): 0, or -1 for anything else
 * (templates, operators), which keeps its mangled name. */
static int plain_name(const char *mangled, char *out, size_t cap) {
  const char *p = mangled + 2;
  int nested = *p == 'N';
  size_t n = 0;
  if (strncmp(mangled, "_Z", 2) != 0) return -1;
  p += nested;
  do {
    if (!isdigit((unsigned char)*p)) return -1;
    size_t len = 0;
    while (isdigit((unsigned char)*p)) len = len * 10 + (size_t)(*p++ - '0');
    if (len == 0 || strlen(p) < len || n + len + 3 > cap) return -1;
    if (n) out[n++] = ':', out[n++] = ':';
    memcpy(out + n, p, len);
    n += len;
    p += len;
  } while (nested && *p != 'E');
  out[n] = '\0';
  return 0;
}

/* Is the .entry named low made already: a kernel of the module's table at tbl has it? */
static int entry_made(lua_State *L, int tbl, const char *low) {
  for (lua_pushnil(L); lua_next(L, tbl); lua_pop(L, 1)) {
    cl_kernel *k = luaL_testudata(L, -1, KERNEL_MT);
    if (k && strcmp(k->lowered, low) == 0) {
      lua_pop(L, 2);
      return 1;
    }
  }
  return 0;
}

/* Kernels the scanner cannot see, a macro's (#define KERNEL(name) __global__ void name(...)), or
 * with `included` those of the headers the source includes: the compiled module's entries not
 * made yet, named as their source names them (an extern "C" one as its PTX does, a C++ one by
 * its unmangled name when that is plain and not taken by an overload, else by its mangled name;
 * with `included`, one that has no plain name, a template's instantiation, is left to
 * {name = ...}), their arguments checked by the PTX's sizes. Returns how many were made. */
static int made_by_macros(lua_State *L, int mod_idx, cl_mod *m, int included) {
  char low[512], name[512];
  int made = 0;
  lua_getiuservalue(L, mod_idx, 1);
  int tbl = lua_gettop(L);
  for (int i = 0, r; (r = ptx_entry_name(m->out.ptx, i, low, sizeof low)) >= 0; i++) {
    if (r > 0) continue; /* a name past 511 characters: cuda.kernel(src, {name = }) finds it */
    if (included && entry_made(L, tbl, low)) continue;
    if (strncmp(low, "_Z", 2) != 0) {
      memcpy(name, low, sizeof name);
    } else if (plain_name(low, name, sizeof name) != 0) {
      if (included) continue;
      memcpy(name, low, sizeof name);
    }
    if (lua_getfield(L, tbl, name) != LUA_TNIL) /* an overload of a name taken: its own */
      memcpy(name, low, sizeof name);
    lua_pop(L, 1);
    sig_kernel s = {0};
    s.name = name;
    s.nparams = -1;
    make_kernel(L, mod_idx, m, &s, low);
    made++;
  }
  lua_pop(L, 1);
  return made;
}

/* Compiles and pushes the module with every kernel created; returns its index. `extra`: a
 * kernel name the learner asked for (or NULL), looked up as an NVRTC name expression when the
 * source scanner did not find it, so any form NVRTC takes works. */
static int build_module(lua_State *L, int src_idx, int opts, const char *extra, int all) {
  sigs_box *box = lua_newuserdatauv(L, sizeof *box, 0);
  box->k = NULL;
  box->n = 0;
  luaL_setmetatable(L, SIGS_MT);
  cl_mod *m = compile_module(L, src_idx, opts, box, &extra);
  int mod_idx = lua_gettop(L);
  lua_newtable(L);
  lua_setiuservalue(L, mod_idx, 1);
  int low = 0, made = 0, missed = -1;
  for (int i = 0; i < box->n; i++) {
    if (box->k[i].is_template) continue;
    const char *lowered = m->out.lowered[low++];
    if (*lowered) {
      make_kernel(L, mod_idx, m, &box->k[i], lowered);
      made++;
    } else if (missed < 0) {
      missed = i;
    }
  }
  if (extra) {
    if (!*m->out.lowered[low]) {
      lua_getiuservalue(L, mod_idx, 1);
      push_name_hint(L, lua_gettop(L), extra);
      if (*lua_tostring(L, -1))
        luaL_error(L, "no kernel named '%s' in %s%s", extra, m->file_name, lua_tostring(L, -1));
      not_instantiated(L, mod_idx, m, box, extra);
      luaL_error(L, "no kernel named '%s' in %s: the compiler knows no kernel by that name; "
                 NAME_FORMS, extra, m->file_name);
    }
    sigs_box *ibox = lua_newuserdatauv(L, sizeof *ibox, 0);
    ibox->k = NULL;
    ibox->n = 0;
    luaL_setmetatable(L, SIGS_MT);
    instance_sig(L, mod_idx, m, extra, m->out.lowered[low], ibox);
    sig_kernel s = {0};
    s.name = (char *)extra;
    s.nparams = -1; /* no source signature: checked by the PTX's sizes */
    make_kernel(L, mod_idx, m, ibox->n ? ibox->k : &s, m->out.lowered[low]);
    lua_pop(L, 1);
    made++;
  }
  if (made == 0 && box->n == 0) made = made_by_macros(L, mod_idx, m, 0);
  else if (all) made += made_by_macros(L, mod_idx, m, 1); /* an #include'd file's kernels */
  if (made == 0) no_kernel(L, mod_idx, m, box, missed);
  return mod_idx;
}

static int cuda_module(lua_State *L) {
  if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 2); /* index 2 is the options (or nil) whatever is pushed later */
  build_module(L, 1, 2, NULL, 1);
  return 1;
}

/* Pushes the names of the kernels of the module at mod_idx as a sorted list; returns how many.
 * The list is collected before anything is formatted: a luaL_Buffer filled inside the lua_next
 * loop may push onto the stack over lua_next's key, and did once the names passed 1 KiB. */
static lua_Integer push_kernel_names(lua_State *L, int mod_idx) {
  lua_getiuservalue(L, mod_idx, 1);
  lua_newtable(L);
  lua_Integer n = 0;
  for (lua_pushnil(L); lua_next(L, -3); lua_pop(L, 1)) {
    lua_pushvalue(L, -2);
    lua_seti(L, -4, ++n);
  }
  lua_remove(L, -2);
  lua_getglobal(L, "table");
  lua_getfield(L, -1, "sort");
  lua_pushvalue(L, -3);
  lua_call(L, 1, 0);
  lua_pop(L, 1);
  return n;
}

#define NAME_WANTED "opts.name must be a kernel's name such as \"scale\" or \"scale<float>\""

/* opts.name, on top of the stack, if it is a kernel's name: a C++ name expression, which NVRTC
 * pastes into source it compiles (src_guard_name), so a newline and a directive in it would be
 * compiled too. Raises showing the value, its control characters escaped, and what is wrong. */
static const char *check_name(lua_State *L) {
  if (lua_type(L, -1) != LUA_TSTRING)
    luaL_error(L, NAME_WANTED ", got %s", luaL_typename(L, -1));
  size_t len;
  const char *name = lua_tolstring(L, -1, &len);
  char why[SRC_GUARD_WHY], shown[SHOWN_MAX];
  if (src_guard_name(name, len, why, sizeof why) == 0) return name;
  src_guard_quote(name, len, 60, shown, sizeof shown);
  luaL_error(L, NAME_WANTED ", got %s: %s", shown, why);
  return NULL;
}

/* cuda.kernel(src [, opts]): the one kernel of the source, or opts.name among several. */
static int cuda_kernel(lua_State *L) {
  const char *want = NULL;
  if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 2);
  if (lua_istable(L, 2) && lua_getfield(L, 2, "name") != LUA_TNIL) want = check_name(L);
  int mod_idx = build_module(L, 1, 2, want, 0);
  lua_getiuservalue(L, mod_idx, 1);
  int tbl = lua_gettop(L);
  if (want) {
    if (!push_kernel(L, tbl, want)) {
      push_name_hint(L, tbl, want);
      luaL_error(L, "no kernel named '%s' in this source%s", want, lua_tostring(L, -1));
    }
    return 1;
  }
  lua_Integer count = push_kernel_names(L, mod_idx);
  if (count != 1) {
    int list = lua_gettop(L);
    luaL_Buffer names;
    luaL_buffinit(L, &names);
    for (lua_Integer i = 1; i <= count; i++) {
      if (i > 1) luaL_addstring(&names, ", ");
      lua_geti(L, list, i);
      luaL_addvalue(&names); /* the one buffer call allowed a value above the buffer */
    }
    luaL_pushresult(&names);
    luaL_error(L, "this source defines %I kernels (%s): pick one with "
               "cuda.kernel(src, {name = \"...\"}) or load them all with cuda.module(src)",
               count, lua_tostring(L, -1));
  }
  lua_pushnil(L);
  lua_next(L, tbl);
  return 1;
}

/* ---- launch checks ------------------------------------------------------------------------- */

static unsigned check_dim_value(lua_State *L, int idx, const char *what, char axis) {
  int ok = 0;
  lua_Integer v = lua_tointegerx(L, idx, &ok);
  if (!ok || v < 1)
    luaL_error(L, "%s.%c must be a whole number of at least 1, got %s", what, axis,
               luaL_tolstring(L, idx, NULL));
  if (v > 0xffffffffLL) luaL_error(L, "%s.%c = %I is too large", what, axis, v);
  return (unsigned)v;
}

/* A dimension given as a number or {x, y, z} (entries missing at the end are 1). An entry
 * missing before one that is given is an error, not a 1: {g, g, 1} with g a name that holds
 * nothing (a `local` of an earlier line at the prompt) would otherwise launch one block in
 * silence. */
static cl_dim3 check_dim(lua_State *L, int idx, const char *what) {
  cl_dim3 d = {1, 1, 1};
  if (lua_type(L, idx) == LUA_TNUMBER) {
    d.x = check_dim_value(L, idx, what, 'x');
  } else if (lua_istable(L, idx)) {
    unsigned *v[3] = {&d.x, &d.y, &d.z};
    int missing = -1; /* the first entry that is nil */
    for (int i = 0; i < 3; i++) {
      if (lua_geti(L, idx, i + 1) != LUA_TNIL) {
        if (missing >= 0)
          luaL_error(L, "%s.%c is nil but %s.%c is given: each of {x, y, z} up to the last must "
                     "be a number (a name that holds nothing, such as a local of an earlier line?)",
                     what, "xyz"[missing], what, "xyz"[i]);
        *v[i] = check_dim_value(L, -1, what, "xyz"[i]);
      } else if (missing < 0) {
        missing = i;
      }
      lua_pop(L, 1);
    }
    if (missing == 0)
      luaL_error(L, "%s is an empty table: give {x}, {x, y} or {x, y, z} (a name that holds "
                 "nothing, such as a local of an earlier line?)", what);
  } else {
    luaL_error(L, "%s must be a number or {x, y, z}, got %s", what, luaL_typename(L, idx));
  }
  return d;
}

/* Raises that the block b is over the device's threads per block. Dimensions run to 2^32 - 1,
 * so they and their product are printed unsigned (through lua_Integer they once showed as
 * "-1 x -1 x -1"); a product past 2^64 is not computed, only said to be larger. */
static void block_too_large(lua_State *L, const cl_device *d, const unsigned b[3]) {
  char block[96]; /* lua_pushfstring has no unsigned conversions */
  unsigned long long xy = (unsigned long long)b[0] * b[1]; /* exact: each factor < 2^32 */
  if (xy > ULLONG_MAX / b[2])
    snprintf(block, sizeof block, "more than %llu threads (%u x %u x %u)", ULLONG_MAX, b[0], b[1],
             b[2]);
  else
    snprintf(block, sizeof block, "%llu threads (%u x %u x %u)", xy * b[2], b[0], b[1], b[2]);
  luaL_error(L, "a block of %s is over the limit of %d threads per block on %s", block,
             d->max_threads_per_block, d->name);
}

/* Raises when the kernel's static shared memory and `dynamic` bytes more are over what a block
 * may have. The limit is the opt-in one (227 KiB on the H200), static and dynamic together:
 * above 48 KiB every backend opts the kernel in, as a CUDA program calls cudaFuncSetAttribute
 * (cudaFuncAttributeMaxDynamicSharedMemorySize) for it. */
static void check_shared(lua_State *L, const cl_kernel *k, size_t dynamic) {
  const cl_device *d = rt_device(L);
  size_t shared = k->res.shared_static + dynamic;
  if (shared > d->shared_per_block_optin)
    luaL_error(L, "the launch needs %I bytes of shared memory per block (%I static + %I dynamic); "
               "the %s allows at most %I (%I KiB) per block, static and dynamic together",
               (lua_Integer)shared, (lua_Integer)k->res.shared_static, (lua_Integer)dynamic,
               d->name, (lua_Integer)d->shared_per_block_optin,
               (lua_Integer)(d->shared_per_block_optin >> 10));
}

static void check_limits(lua_State *L, const cl_kernel *k, const cl_launch *c) {
  const cl_device *d = rt_device(L);
  const unsigned b[3] = {c->block.x, c->block.y, c->block.z};
  const unsigned g[3] = {c->grid.x, c->grid.y, c->grid.z};
  unsigned long long xy = (unsigned long long)b[0] * b[1];
  if (xy > (unsigned long long)d->max_threads_per_block / b[2]) block_too_large(L, d, b);
  unsigned long long threads = xy * b[2];
  for (int i = 0; i < 3; i++) {
    if (b[i] > (unsigned)d->max_block_dim[i])
      luaL_error(L, "block.%c = %I is over the limit of %d on %s", "xyz"[i], (lua_Integer)b[i],
                 d->max_block_dim[i], d->name);
    if (g[i] > (unsigned)d->max_grid_dim[i])
      luaL_error(L, "grid.%c = %I is over the limit of %d on %s", "xyz"[i], (lua_Integer)g[i],
                 d->max_grid_dim[i], d->name);
  }
  char why[512];
  /* the GPU's refusals in words; a launch that counts clusters is left to the backend, which
   * knows how it counts */
  lb_dim3 grid = {c->grid.x, c->grid.y, c->grid.z}, block = {c->block.x, c->block.y, c->block.z};
  if (!k->bounds.blocks_are_clusters &&
      lb_check(&k->bounds, k->sig.name, grid, block, CL_H200_MAX_CLUSTER_BLOCKS, why, sizeof why))
    luaL_error(L, "%s", why);
  check_shared(L, k, c->shared);
  if (k->res.registers > 0) {
    /* Registers are allocated per warp in units of 256 (8 per thread). */
    unsigned long long per_thread = ((unsigned long long)k->res.registers + 7) / 8 * 8;
    unsigned long long need = per_thread * ((threads + 31) / 32 * 32);
    if (need > (unsigned long long)d->regs_per_block)
      luaL_error(L, "%s uses %d registers per thread: a block of %I threads needs %I registers, "
                 "more than the %d the %s has per block; use at most %I threads per block",
                 k->sig.name, k->res.registers, (lua_Integer)threads, (lua_Integer)need,
                 d->regs_per_block, d->name,
                 (lua_Integer)((unsigned long long)d->regs_per_block / per_thread / 32 * 32));
  }
}

/* "argument 2 (int n)" or "argument 2" when the source signature is unknown. */
static const char *arg_name(lua_State *L, const cl_kernel *k, int i) {
  if (k->sig.nparams < 0) return lua_pushfstring(L, "argument %d", i + 1);
  char param[SIG_PARAM_TEXT];
  return lua_pushfstring(L, "argument %d (%s)", i + 1,
                         sig_param_text(&k->sig.params[i], param, sizeof param));
}

/* What parameter i points at, as the source says (nothing known without a signature). */
static kargs_pointee pointee_of(const cl_kernel *k, int i) {
  kargs_pointee p = {-1, 1, NULL, NULL, -1, 1};
  if (k->sig.nparams < 0) return p;
  const sig_param *sp = &k->sig.params[i];
  p.row = sp->row;
  p.dtype = sp->dtype;
  p.stars = sp->stars;
  p.type = sp->base;
  p.nodes = k->sig.lay.nodes;
  p.elem = sp->lay;
  return p;
}

/* Says once per kernel and parameter that an array went unchecked: the source names a type the
 * signature reader cannot lay out (curandState *, a header's struct), so nothing says what its
 * elements are. Never silent, never fatal: the kernel may well be right. */
static void warn_unchecked(lua_State *L, cl_kernel *k, int i) {
  if (k->warned[i]) return;
  k->warned[i] = 1;
  const sig_param *sp = &k->sig.params[i];
  char text[768];
  snprintf(text, sizeof text, "warning: %s: the array passed for it is not checked: %s. Make "
           "sure its bytes hold whole %s elements (a u8 array of count * sizeof(%s) bytes is "
           "the usual choice).", arg_name(L, k, i), sp->lay_why[0] ? sp->lay_why : "unknown type",
           sp->base, sp->base);
  lua_pop(L, 1);
  cl_print_fitted(stderr, text);
  fflush(stderr);
}

/* kargs_name's way to name parameter `i` of kernel `k`. */
typedef struct arg_ref {
  const cl_kernel *k;
  int i;
} arg_ref;

static const char *push_arg_name(lua_State *L, const void *ud) {
  const arg_ref *r = ud;
  return arg_name(L, r->k, r->i);
}

static void put_pointer(lua_State *L, cl_kernel *k, int i, int idx) {
  kargs_pointee p = pointee_of(k, i);
  int unknown = 0;
  arg_ref r = {k, i};
  kargs_name nm = {push_arg_name, &r};
  uint64_t a = kargs_pointer(L, idx, k->backend, &p, &nm, i, &unknown);
  if (unknown) warn_unchecked(L, k, i);
  memcpy(k->argv[i], &a, sizeof a);
}

/* A struct or vector type by value: from a table by field name (or a string of its bytes). */
static void put_aggregate(lua_State *L, cl_kernel *k, int i, int idx) {
  const ptx_param *pp = &k->layout.params[i];
  const sig_param *sp = k->sig.nparams >= 0 ? &k->sig.params[i] : NULL;
  arg_ref r = {k, i};
  kargs_name nm = {push_arg_name, &r};
  kargs_aggregate(L, idx, sp ? k->sig.lay.nodes : NULL, sp ? sp->lay : -1,
                  sp ? sp->lay_why : NULL, k->argv[i], pp->size, pp->align, k->backend, &nm, i);
}

/* A texture's handle as argument i; raises for a freed texture or another backend's. The name
 * is pushed only then: a launch makes no string. */
static void put_handle(lua_State *L, cl_kernel *k, int i, const cl_ltexture *t) {
  if (!t->live || t->be != k->backend) tex_handle(L, t, k->backend, arg_name(L, k, i));
  memcpy(k->argv[i], &t->handle, sizeof t->handle);
}

/* An integer argument of `size` bytes (its PTX parameter's), stored as the device reads it:
 * the value's low bytes, least significant first. A parameter narrower than a Lua integer
 * takes anything its size can hold, signed or unsigned, since learners pass 0xffffffff to an
 * int mask; one whose source type is known and narrower than 4 bytes (short, signed char) is
 * held to that type's own range, which says the sign. */
static void put_integer(lua_State *L, cl_kernel *k, int i, int idx, size_t size) {
  int ok = 0;
  lua_Integer v = lua_tointegerx(L, idx, &ok);
  if (!ok && lua_isboolean(L, idx)) {
    v = lua_toboolean(L, idx);
    ok = 1;
  }
  cl_ltexture *t = ok || size != 8 ? NULL : tex_test(L, idx);
  if (t) { /* unsigned long long, what cudaTextureObject_t is: a texture's handle */
    put_handle(L, k, i, t);
    return;
  }
  if (!ok)
    luaL_error(L, "%s: expected an integer, got %s", arg_name(L, k, i),
               lua_type(L, idx) == LUA_TNUMBER ? luaL_tolstring(L, idx, NULL)
                                               : luaL_typename(L, idx));
  int bits = 8 * (int)size;
  if (size < sizeof v && (v < -((lua_Integer)1 << (bits - 1)) || v >= (lua_Integer)1 << bits))
    luaL_error(L, "%s: %I does not fit in %d bits", arg_name(L, k, i), v, bits);
  int dt = size < 4 && k->sig.nparams >= 0 ? k->sig.params[i].dtype : -1;
  if (dt >= 0 && !dtype_table[dt].is_float && dtype_table[dt].size == size &&
      !dtype_holds_int((cl_dtype)dt, v)) {
    char range[48];
    luaL_error(L, "%s: %I does not fit in %s (%s)", arg_name(L, k, i), v, dtype_table[dt].c_type,
               dtype_range_text((cl_dtype)dt, range, sizeof range));
  }
  unsigned char *out = k->argv[i];
  for (size_t b = 0; b < size && b < sizeof v; b++) out[b] = (unsigned char)((uint64_t)v >> 8 * b);
}

/* A bool: true or false, or 0 or 1 as C code writes them. Any other number is refused, as a
 * struct's bool field refuses it (kargs.c): its bits stored as they are would make a bool that
 * is neither (2 == true is false on the device), and C's rule, any non-zero is true, would hide
 * a count or a mask passed to the wrong parameter. */
static void put_bool(lua_State *L, cl_kernel *k, int i, int idx, size_t size) {
  int ok = 0;
  lua_Integer v = 0;
  if (lua_isboolean(L, idx)) {
    v = lua_toboolean(L, idx);
    ok = 1;
  } else {
    v = lua_tointegerx(L, idx, &ok);
  }
  if (!ok || (v != 0 && v != 1))
    luaL_error(L, "%s: expected true or false, got %s", arg_name(L, k, i),
               luaL_tolstring(L, idx, NULL));
  memset(k->argv[i], 0, size);
  *(unsigned char *)k->argv[i] = (unsigned char)v;
}

/* A cudaTextureObject_t: a texture made by cuda.texture, whose handle the kernel receives. An
 * array or a number is refused: a kernel would read some other texture, or none. */
static void put_texture(lua_State *L, cl_kernel *k, int i, int idx) {
  cl_ltexture *t = tex_test(L, idx);
  if (!t) {
    cl_buf *b = buf_test(L, idx);
    luaL_error(L, "%s: expected a texture (cuda.texture(array, {...}) makes one), got %s", 
               arg_name(L, k, i), b ? buf_describe(L, b) : luaL_typename(L, idx));
  }
  put_handle(L, k, i, t);
}

/* A float argument, stored by its type's own conversion (a __half or __nv_bfloat16 rounds as the
 * GPU's cvt.rn does). The type is the signature's, or where that names none of the right size
 * (a template's T) the PTX parameter's (.f32, .f64), which is how the plan knew it for a float. */
static void put_float(lua_State *L, cl_kernel *k, int i, int idx, size_t size) {
  if (lua_type(L, idx) != LUA_TNUMBER)
    luaL_error(L, "%s: expected a number, got %s", arg_name(L, k, i), luaL_typename(L, idx));
  int dt = k->sig.nparams > i ? k->sig.params[i].dtype : -1;
  if (dt < 0 || dtype_table[dt].size != size) dt = dtype_parse(k->layout.params[i].ptx_type);
  if (dt < 0 || !dtype_table[dt].is_float || dtype_table[dt].size != size)
    luaL_error(L, "%s: a float parameter of %d bytes (.%s) has no element type to convert to",
               arg_name(L, k, i), (int)size, k->layout.params[i].ptx_type);
  dtype_set_f((cl_dtype)dt, k->argv[i], 0, lua_tonumber(L, idx));
}

/* The kind of an argument the source signature does not name: an array (or nil) passed where
 * the PTX has 8 bytes is a pointer, anything else an integer. (An aggregate's plan says so from
 * the PTX alone.) */
static sig_kind guess_kind(lua_State *L, cl_kernel *k, int i, int idx) {
  const ptx_param *pp = &k->layout.params[i];
  if (is_aggregate(pp) && (pp->size > 8 || !lua_isnumber(L, idx))) return SIG_AGGREGATE;
  if (pp->size == 8 && tex_test(L, idx)) return SIG_TEXTURE;
  return pp->size == 8 && (buf_test(L, idx) || lua_isnil(L, idx)) ? SIG_POINTER : SIG_INT;
}

/* Marshals Lua arguments first..first+n-1 by the kernel's plan. */
static void marshal(lua_State *L, cl_kernel *k, int first, int n) {
  if (n != k->layout.nparams) {
    char sig[512] = "";
    if (k->sig.nparams >= 0) sig_format(&k->sig, sig, sizeof sig);
    luaL_error(L, "%s takes %d argument%s, got %d", sig[0] ? sig : k->sig.name, k->layout.nparams,
               k->layout.nparams == 1 ? "" : "s", n);
  }
  kargs_begin();
  for (int i = 0; i < n; i++) {
    int idx = first + i;
    sig_kind kind = k->plan[i];
    if (kind == SIG_UNKNOWN) kind = guess_kind(L, k, i, idx);
    if (kind == SIG_POINTER) put_pointer(L, k, i, idx);
    else if (kind == SIG_AGGREGATE) put_aggregate(L, k, i, idx);
    else if (kind == SIG_TEXTURE) put_texture(L, k, i, idx);
    else if (kind == SIG_FLOAT) put_float(L, k, i, idx, k->layout.params[i].size);
    else if (kind == SIG_BOOL) put_bool(L, k, i, idx, k->layout.params[i].size);
    else put_integer(L, k, i, idx, k->layout.params[i].size);
  }
  kargs_finish(L, k->backend, k->fn, &k->had_views);
}

static cl_kernel *check_kernel(lua_State *L, int idx) { return luaL_checkudata(L, idx, KERNEL_MT); }

/* A kernel whose module was released can only have been released by hand (the kernel keeps
 * its module alive); it is refused rather than used after free. */
static cl_kernel *check_loaded(lua_State *L, cl_kernel *k) {
  if (!k->m->mod)
    luaL_error(L, "the module of kernel %s has been released: compile it again", k->sig.name);
  return k;
}

/* The launch record behind a launch closure; NULL for any other value. The closure's upvalue
 * can be replaced through the debug library, so even the hot path checks what it finds. */
static cl_launch *to_launch(lua_State *L, int idx) {
  cl_launch *c = lua_touserdata(L, idx);
  return c && lua_rawlen(L, idx) == sizeof *c && c->tag == udata_tag(c, UDATA_LAUNCH) ? c : NULL;
}

/* Checks what a launch needs beyond its arguments and marshals those at first..top. */
static cl_kernel *prepare_launch(lua_State *L, cl_launch *c, int first) {
  cl_kernel *k = check_loaded(L, c->k);
  if (k->backend != rt.backend)
    luaL_error(L, "%s was compiled for the %s backend, but %s is active now: compile it again",
               k->sig.name, k->backend->name, rt.backend->name);
  if (!c->checked) {
    check_limits(L, k, c);
    c->checked = 1;
  }
  marshal(L, k, first, lua_gettop(L) - first + 1);
  return k;
}

/* ---- the launch log ------------------------------------------------------------------------ */

/* Appends the launch now on the stack (arguments 1..nargs, the launch object as upvalue 1) to
 * cuda.launches' log (bind_launch_log.c) while it is on. Dimensions are kept as numbers: a table
 * in a weak-valued record would be collected. */
static void log_launch(lua_State *L, const cl_launch *c, int nargs) {
  if (!launch_log_begin(L, c->k->sig.name, nargs)) return;
  lua_getiuservalue(L, lua_upvalueindex(1), 1);
  lua_setfield(L, -2, "kernel");
  const unsigned dims[6] = {c->grid.x, c->grid.y, c->grid.z, c->block.x, c->block.y, c->block.z};
  static const char *const names[6] = {"gx", "gy", "gz", "bx", "by", "bz"};
  for (int i = 0; i < 6; i++) bind_set_int(L, names[i], dims[i]);
  bind_set_int(L, "shared", (lua_Integer)c->shared);
  if (rt.capturing) bind_set_bool(L, "captured", 1);
  launch_log_end(L, nargs);
}

/* ---- the session record, for cuda.export --------------------------------------------------- */

/* cuda.record(true) has every launch from Lua described, before it runs and after, to the
 * recorder in lua/export_record.lua, which keeps what a CUDA C++ program needs to do the same
 * work (the arrays' contents where the host set them, the launches, the results). The launch
 * log above cannot serve: it keeps no array alive and no contents, and lesson checks empty it.
 * The description is built here because only here is the kernel's source, its parameters as
 * the source declares them and the bytes each argument was marshalled into. While the record
 * is off a launch pays one test of a flag; while it is on, the recorder copies the launch's
 * arrays to the host twice, which is why it is off by default. */
#define RECORD_KEY "cudalab.record.hook"

static int record_on; /* one engine, one Lua state: a flag, not a registry lookup */

static const char *kind_name(sig_kind kind) {
  switch (kind) {
  case SIG_UNKNOWN: return "unknown";
  case SIG_POINTER: return "pointer";
  case SIG_INT: return "int";
  case SIG_FLOAT: return "float";
  case SIG_BOOL: return "bool";
  case SIG_AGGREGATE: return "aggregate";
  case SIG_TEXTURE: return "texture";
  }
  return "unknown";
}

/* Parameter i of k, whose argument is at Lua index idx, as a table: the source's text for it,
 * its kind, its PTX type and the bytes it was marshalled into; for an array, the array whose
 * memory it is (a view's root) and the view's first element there. */
static void push_param(lua_State *L, cl_kernel *k, int i, int idx) {
  const ptx_param *pp = &k->layout.params[i];
  lua_createtable(L, 0, 10);
  sig_kind kind = k->plan[i] == SIG_UNKNOWN ? guess_kind(L, k, i, idx) : (sig_kind)k->plan[i];
  bind_set_str(L, "kind", kind_name(kind));
  bind_set_str(L, "ptx", pp->ptx_type);
  lua_pushlstring(L, (const char *)k->argv[i], pp->size);
  lua_setfield(L, -2, "bytes");
  if (k->sig.nparams > i) {
    char text[SIG_PARAM_TEXT];
    const sig_param *sp = &k->sig.params[i];
    bind_set_str(L, "text", sig_param_text(sp, text, sizeof text));
    bind_set_str(L, "type", sp->type);
    if (sp->dtype >= 0) bind_set_str(L, "dtype", dtype_table[sp->dtype].name);
  }
  if (tex_test(L, idx)) bind_set_bool(L, "texture", 1);
  cl_buf *b = buf_test(L, idx);
  if (b) {
    bind_set_str(L, "array_dtype", dtype_table[b->dtype].name);
    bind_set_int(L, "first", (lua_Integer)(b->view ? b->first : 0));
    bind_set_int(L, "n", (lua_Integer)b->n);
    bind_set_bool(L, "holds_ptrs", b->holds_ptrs);
    if (b->view) lua_getiuservalue(L, idx, 1);
    else lua_pushvalue(L, idx);
    lua_setfield(L, -2, "root");
  }
}

/* The launch about to run, as the recorder reads it (lua/export_record.lua says what each
 * field is for). The source and options are those of the kernel's module. */
static void push_launch_info(lua_State *L, const cl_launch *c, int kidx, int nargs) {
  cl_kernel *k = c->k;
  bind_kernel_origin o;
  bind_kernel_origin_of(L, kidx, &o);
  lua_createtable(L, 0, 12);
  bind_set_str(L, "name", k->sig.name);
  bind_set_str(L, "lowered", k->lowered);
  bind_set_str(L, "source", o.source);
  bind_set_str(L, "file", o.file_name);
  lua_createtable(L, o.noptions, 0);
  for (int i = 0; i < o.noptions; i++) {
    lua_pushstring(L, o.options[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "options");
  bind_push_dim(L, c->grid);
  lua_setfield(L, -2, "grid");
  bind_push_dim(L, c->block);
  lua_setfield(L, -2, "block");
  bind_set_int(L, "shared", (lua_Integer)c->shared);
  bind_set_bool(L, "stream", c->stream != NULL);
  bind_set_bool(L, "cooperative", c->cooperative);
  bind_set_bool(L, "captured", rt.capturing);
  lua_pushvalue(L, kidx); /* the kernel, whose module's __constant__ contents the record reads */
  lua_setfield(L, -2, "kernel");
  lua_createtable(L, nargs, 0);
  for (int i = 0; i < nargs; i++) {
    push_param(L, k, i, i + 1);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "params");
}

/* Calls the recorder's hook with ("before", info) or ("after"): arguments 1..nargs stay where
 * they are. The launch object (upvalue 1) holds the kernel as its uservalue 1. */
static void record_call(lua_State *L, const cl_launch *c, int nargs, int before) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, RECORD_KEY) != LUA_TFUNCTION) {
    lua_pop(L, 1);
    return;
  }
  lua_pushstring(L, before ? "before" : "after");
  if (before) {
    lua_getiuservalue(L, lua_upvalueindex(1), 1);
    int kidx = lua_gettop(L);
    push_launch_info(L, c, kidx, nargs);
    lua_remove(L, kidx);
  }
  lua_call(L, before ? 2 : 1, 0);
}

/* cuda.record(true | false): starts the session record (emptied) or stops it (kept, for
 * cuda.export); cuda.record() returns the recorder's summary. The recorder is the Lua module
 * export_record, whose hook the launches call. */
static int cuda_record(lua_State *L) {
  int query = lua_isnone(L, 1);
  if (!query)
    luaL_argexpected(L, lua_isboolean(L, 1), 1, "true (start recording, emptied) or false (stop)");
  int on = lua_toboolean(L, 1);
  lua_settop(L, 1);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "export_record");
  lua_call(L, 1, 1);
  int mod = lua_gettop(L);
  if (query) {
    lua_getfield(L, mod, "summary");
    lua_call(L, 0, 1);
    return 1;
  }
  lua_getfield(L, mod, on ? "start" : "stop");
  lua_call(L, 0, 0);
  if (on) lua_getfield(L, mod, "hook");
  else lua_pushnil(L);
  lua_setfield(L, LUA_REGISTRYINDEX, RECORD_KEY);
  record_on = on;
  return 0;
}

/* Whether this launch is lesson code's of its own kernel (cuda._lesson), which the kernel time
 * limit in force does not hold: the limit is for the learner's kernels. */
static int lesson_launch(const cl_kernel *k) {
  return rt.lesson_code > 0 && k->m->lesson_owned && rt.kernel_time_limit > 0;
}

/* A launch on a stream, or one a timeline records: off the hot path, which tests one flag. */
static int launch_queued(lua_State *L, cl_launch *c, cl_kernel *k) {
  cl_lstream *st = c->stream;
  if (st) rt_refuse_in_capture(L, "a launch on a cuda.Stream");
  if (stream_tracing) rt_refuse_in_capture(L, "a launch while a timeline records");
  if (st && !st->s)
    return luaL_error(L, "this launch is on cuda.Stream %d, which has been freed", st->id);
  if (st && st->be != k->backend)
    return luaL_error(L, "this launch is on cuda.Stream %d of the %s backend, but %s runs on %s",
                      st->id, st->be->name, k->sig.name, k->backend->name);
  int slot = stream_tracing ? trace_open(L, st) : -1;
  cl_err err;
  int lesson = lesson_launch(k);
  if (lesson) rt_kernel_time_suspend(1);
  int rc = st ? k->backend->launch_on(k->fn, c->grid, c->block, c->shared, k->argv, st->s, &err)
              : k->backend->launch(k->fn, c->grid, c->block, c->shared, k->argv, &err);
  if (lesson) rt_kernel_time_suspend(0);
  if (rc != 0) rt_raise(L, &err);
  if (slot >= 0) trace_close(L, st, slot, &(trace_info){.kind = "kernel", .name = k->sig.name});
  return 0;
}

/* The hot path of every launch from Lua: no allocation, no table lookups beyond the arguments'
 * own type checks (and the launch log's, only while a check has it on). */
static int launch_call(lua_State *L) {
  cl_launch *c = to_launch(L, lua_upvalueindex(1));
  if (!c)
    return luaL_error(L, "this launch object has been tampered with: "
                         "make a new one with k[{grid, block}]");
  cl_kernel *k = prepare_launch(L, c, 1);
  int nargs = lua_gettop(L);
  if (record_on) record_call(L, c, nargs, 1);
  if (c->cooperative) {
    /* a capture records the launch without the grid workspace its grid sync needs */
    if (rt.capturing)
      return luaL_error(L, "a cooperative launch cannot be captured in cuda.graph: its grid "
                        "sync needs a launch of its own; launch it before or after the graph");
    cl_err err;
    int lesson = lesson_launch(k);
    if (lesson) rt_kernel_time_suspend(1);
    int rc = k->backend->launch_cooperative(k->fn, c->grid, c->block, c->shared, k->argv, &err);
    if (lesson) rt_kernel_time_suspend(0);
    if (rc != 0) rt_raise(L, &err);
  } else if (c->stream || stream_tracing) {
    launch_queued(L, c, k);
  } else if (lesson_launch(k)) {
    cl_err err;
    rt_kernel_time_suspend(1);
    int rc = k->backend->launch(k->fn, c->grid, c->block, c->shared, k->argv, &err);
    rt_kernel_time_suspend(0);
    if (rc != 0) rt_raise(L, &err);
  } else {
    cl_err err;
    if (k->backend->launch(k->fn, c->grid, c->block, c->shared, k->argv, &err) != 0)
      rt_raise(L, &err);
  }
  if (rt.capturing) bind_graph_captured(L, lua_upvalueindex(1), 1);
  log_launch(L, c, nargs);
  if (record_on) record_call(L, c, nargs, 0);
  return 0;
}

/* For repl/bind/bench_hooks.c: the launch record of the launch object at idx, or NULL when the
 * value is not one. */
cl_launch *bind_kernel_launch_at(lua_State *L, int idx) {
  cl_launch *c = NULL;
  if (lua_tocfunction(L, idx) == launch_call && lua_getupvalue(L, idx, 1)) {
    c = to_launch(L, -1);
    lua_pop(L, 1);
  }
  return c;
}

/* For repl/bind/bench_hooks.c: c checked as calling it would check it, with the arguments
 * first..top marshalled into its kernel; what to launch in out. Raises like a launch. */
void bind_kernel_prepare(lua_State *L, cl_launch *c, int first, bind_launch_target *out) {
  cl_kernel *k = prepare_launch(L, c, first);
  *out = (bind_launch_target){k->backend, k->fn, c->grid, c->block, c->shared, k->argv,
                              c->cooperative};
}

/* The stream field of a launch configuration at cfg: NULL for none, else checked and pushed
 * (so the launch object can keep it alive); nothing is pushed for NULL. */
static cl_lstream *config_stream(lua_State *L, int cfg) {
  if (lua_getfield(L, cfg, "stream") == LUA_TNIL) {
    lua_pop(L, 1);
    return NULL;
  }
  return stream_check(L, lua_gettop(L), "the launch's stream");
}

/* The cooperative field of a launch configuration at cfg: 1 for true, 0 for none or false.
 * Raises where it cannot be: a value not a boolean, a backend with no cooperative launches, a
 * stream (cudalab launches them on the default stream only); and for a kernel that syncs its
 * grid without it, which would trap inside cooperative_groups.h on any device. */
static int config_cooperative(lua_State *L, cl_kernel *k, int cfg) {
  int t = lua_getfield(L, cfg, "cooperative");
  int coop = lua_toboolean(L, -1);
  lua_pop(L, 1);
  if (t != LUA_TNIL && t != LUA_TBOOLEAN)
    luaL_error(L, "cooperative must be true or false, got %s", lua_typename(L, t));
  if (!coop) {
    if (k->grid_sync)
      luaL_error(L, "%s syncs its whole grid (cg::this_grid().sync()), which needs a "
                 "cooperative launch: %s[{grid, block, cooperative = true}](...), with no more "
                 "blocks than the device holds at once", k->sig.name, k->sig.name);
    return 0;
  }
  if (!k->backend->launch_cooperative)
    luaL_error(L, "the %s backend has no cooperative launches: run it with --backend sim or on "
               "a GPU", k->backend->name);
  if (lua_getfield(L, cfg, "stream") != LUA_TNIL)
    luaL_error(L, "a cooperative launch runs on the default stream: leave out stream =");
  lua_pop(L, 1);
  return 1;
}

/* k[{grid, block [, shared]}] or k[{grid, block, shared = bytes, stream = s}], with
 * cooperative = true for a cooperative launch: a launch object to call. */
static int make_launch(lua_State *L, cl_kernel *k, int kidx, int cfg) {
  if (lua_geti(L, cfg, 1) == LUA_TNIL || lua_geti(L, cfg, 2) == LUA_TNIL)
    luaL_error(L, "a launch configuration is {grid, block}: k[{blocks, threads}](args...)");
  cl_dim3 grid = check_dim(L, -2, "grid"), block = check_dim(L, -1, "block");
  size_t shared = 0;
  int has_shared = lua_geti(L, cfg, 3) != LUA_TNIL;
  if (!has_shared) { /* shared = bytes in place of the third item */
    lua_pop(L, 1);
    has_shared = lua_getfield(L, cfg, "shared") != LUA_TNIL;
  }
  if (has_shared) {
    int ok = 0;
    lua_Integer s = lua_tointegerx(L, -1, &ok);
    if (!ok || s < 0)
      luaL_error(L, "shared memory must be a whole number of bytes, got %s",
                 luaL_tolstring(L, -1, NULL));
    shared = (size_t)s;
  }
  lua_pop(L, 3);
  int coop = config_cooperative(L, k, cfg);
  cl_lstream *stream = config_stream(L, cfg); /* pushed when not NULL */
  int sidx = lua_gettop(L);
  /* k[{g, b}](...) in a loop asks for the same configuration every time: the kernel keeps its
   * last launch object (uservalue 2) and hands it out again, already checked. What is found
   * there is verified, since the debug library can replace it. */
  if (lua_getiuservalue(L, kidx, 2) == LUA_TFUNCTION && lua_tocfunction(L, -1) == launch_call &&
      lua_getupvalue(L, -1, 1)) {
    cl_launch *last = to_launch(L, -1);
    lua_pop(L, 1);
    if (last && last->k == k && last->shared == shared && last->stream == stream &&
        last->cooperative == coop &&
        memcmp(&last->grid, &grid, sizeof grid) == 0 &&
        memcmp(&last->block, &block, sizeof block) == 0)
      return 1;
  }
  lua_pop(L, 1);
  cl_launch *c = lua_newuserdatauv(L, sizeof *c, 2);
  memset(c, 0, sizeof *c);
  c->k = k;
  c->stream = stream;
  if (stream) {
    lua_pushvalue(L, sidx);
    lua_setiuservalue(L, -2, 2);
  }
  c->grid = grid;
  c->block = block;
  c->shared = shared;
  c->cooperative = coop;
  c->tag = udata_tag(c, UDATA_LAUNCH); /* complete: only now may a launch use it */
  lua_pushvalue(L, kidx);
  lua_setiuservalue(L, -2, 1);
  lua_pushcclosure(L, launch_call, 1);
  lua_pushvalue(L, -1);
  lua_setiuservalue(L, kidx, 2);
  return 1;
}

/* ---- kernel methods ------------------------------------------------------------------------ */

static cl_mod *kernel_module(lua_State *L, int kidx) {
  lua_getiuservalue(L, kidx, 1);
  cl_mod *m = luaL_checkudata(L, -1, MODULE_MT);
  lua_pop(L, 1); /* the kernel at kidx keeps the module alive */
  return m;
}

static int kern_ptx(lua_State *L) {
  check_kernel(L, 1);
  lua_pushstring(L, kernel_module(L, 1)->out.ptx);
  return 1;
}

/* Most threads per block the kernel's registers allow: what cudaFuncGetAttributes reports. */
static int max_threads_for(const cl_device *d, int regs) {
  if (regs <= 0) return d->max_threads_per_block;
  int per_warp = (regs + 7) / 8 * 8 * 32;
  int warps = d->regs_per_block / per_warp;
  return warps * 32 < d->max_threads_per_block ? warps * 32 : d->max_threads_per_block;
}

static int kern_info(lua_State *L) {
  cl_kernel *k = check_loaded(L, check_kernel(L, 1));
  const cl_device *d = rt_device(L);
  cl_func_attrs a;
  cl_err err;
  if (k->backend->func_attrs(k->fn, &a, &err) != 0 || a.registers < 0) {
    a.registers = k->res.registers;
    a.max_threads_per_block = max_threads_for(d, k->res.registers);
    unsigned bound = lb_max_threads(&k->bounds); /* the GPU's figure counts it too */
    if (bound && (unsigned)a.max_threads_per_block > bound) a.max_threads_per_block = (int)bound;
    a.shared_static = k->res.shared_static;
    a.local_bytes = k->res.stack_bytes;
    a.const_bytes = k->res.const_bytes;
  }
  lua_createtable(L, 0, 11);
  bind_set_str(L, "name", k->sig.name);
  bind_set_int(L, "registers", a.registers);
  bind_set_int(L, "shared_static", (lua_Integer)a.shared_static);
  bind_set_int(L, "local_bytes", (lua_Integer)a.local_bytes);
  bind_set_int(L, "const_bytes", (lua_Integer)a.const_bytes);
  /* ptxas's -v report: bytes of the instructions that store registers to local memory and load
   * them back, in the code (a store in a loop counts once); 0 when nothing spilled */
  bind_set_int(L, "spill_bytes", (lua_Integer)k->res.spill_bytes);
  bind_set_int(L, "spill_load_bytes", (lua_Integer)k->res.spill_load_bytes);
  bind_set_int(L, "max_threads_per_block", a.max_threads_per_block);
  bind_set_str(L, "arch", kernel_module(L, 1)->arch);
  lua_createtable(L, k->layout.nparams, 0);
  for (int i = 0; i < k->layout.nparams; i++) {
    if (k->sig.nparams >= 0) {
      char param[SIG_PARAM_TEXT];
      lua_pushstring(L, sig_param_text(&k->sig.params[i], param, sizeof param));
    } else {
      lua_pushfstring(L, ".%s (%I bytes)", k->layout.params[i].ptx_type,
                      (lua_Integer)k->layout.params[i].size);
    }
    lua_seti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "params");
  luaL_setmetatable(L, "cudalab.KernelInfo");
  return 1;
}

static int kern_tostring(lua_State *L) {
  cl_kernel *k = check_kernel(L, 1);
  char sig[512] = "";
  if (k->sig.nparams >= 0) sig_format(&k->sig, sig, sizeof sig);
  lua_pushfstring(L, "cuda.Kernel %s [%s, %s backend]", sig[0] ? sig : k->sig.name,
                  kernel_module(L, 1)->arch, k->backend->name);
  return 1;
}

/* k:occupancy(threads [, dynamic_shared]): active blocks per SM as the CUDA runtime computes
 * it, or nil where there is no runtime to ask (cuda.occupancy then uses its own calculation). */
static int kern_occupancy(lua_State *L) {
  cl_kernel *k = check_loaded(L, check_kernel(L, 1));
  lua_Integer threads = luaL_checkinteger(L, 2), shared = luaL_optinteger(L, 3, 0);
  luaL_argcheck(L, threads >= 1 && threads <= 1 << 20, 2, "threads per block must be at least 1");
  luaL_argcheck(L, shared >= 0 && shared <= 1 << 30, 3, "shared memory must be a byte count");
  check_shared(L, k, (size_t)shared);
  if (!k->backend->occupancy) {
    lua_pushnil(L);
    return 1;
  }
  int blocks = 0;
  cl_err err;
  if (k->backend->occupancy(k->fn, (int)threads, (size_t)shared, &blocks, &err)) rt_raise(L, &err);
  lua_pushinteger(L, blocks);
  return 1;
}

static const luaL_Reg kernel_methods[] = {
    {"ptx", kern_ptx}, {"info", kern_info}, {"occupancy", kern_occupancy}, {NULL, NULL}};

void bind_kernel_origin_of(lua_State *L, int kidx, bind_kernel_origin *out) {
  cl_kernel *k = check_loaded(L, check_kernel(L, kidx));
  cl_mod *m = kernel_module(L, kidx);
  memset(out, 0, sizeof *out);
  out->name = k->sig.name;
  out->lowered = k->lowered;
  out->file_name = m->file_name;
  out->path = m->path;
  lua_getiuservalue(L, kidx, 1);
  lua_getiuservalue(L, -1, 2); /* the module (alive through the kernel) holds it */
  lua_getfield(L, -1, "source");
  out->source = lua_tostring(L, -1);
  lua_pop(L, 1);
  for (lua_Integer i = 1; out->noptions < BIND_MAX_OPTIONS && lua_geti(L, -1, i) == LUA_TSTRING;
       i++) {
    out->options[out->noptions++] = lua_tostring(L, -1);
    lua_pop(L, 1);
  }
  lua_pop(L, 3);
}

void bind_module_of(lua_State *L, int idx, bind_module_view *out) {
  int top = lua_gettop(L), mod_idx = lua_absindex(L, idx);
  if (!luaL_testudata(L, mod_idx, MODULE_MT)) {
    check_loaded(L, check_kernel(L, mod_idx));
    lua_getiuservalue(L, mod_idx, 1); /* the kernel's module */
    mod_idx = lua_gettop(L);
  }
  cl_mod *m = luaL_checkudata(L, mod_idx, MODULE_MT);
  if (!m->mod) luaL_error(L, "this module has been released");
  lua_getiuservalue(L, mod_idx, 2);
  lua_getfield(L, -1, "source");
  *out = (bind_module_view){m->backend, m->mod, lua_tostring(L, -1), m->file_name};
  lua_settop(L, top); /* the value at idx keeps the module alive, and the module its source */
}

static int kern_index(lua_State *L) {
  cl_kernel *k = check_kernel(L, 1);
  if (lua_istable(L, 2)) return make_launch(L, k, 1, 2);
  const char *key = luaL_checkstring(L, 2);
  if (strcmp(key, "name") == 0) {
    lua_pushstring(L, k->sig.name);
    return 1;
  }
  if (strcmp(key, "module") == 0) {
    lua_getiuservalue(L, 1, 1);
    return 1;
  }
  if (strcmp(key, "entry") == 0) { /* its .entry in k:ptx(), which holds the whole module's */
    lua_pushstring(L, k->lowered);
    return 1;
  }
  lua_getmetatable(L, 1);
  lua_getfield(L, -1, "__methods");
  lua_getfield(L, -1, key);
  return 1;
}

static int kern_call(lua_State *L) {
  return luaL_error(L, "a kernel needs a launch configuration: %s[{blocks, threads}](args...)",
                    check_kernel(L, 1)->sig.name);
}

/* ---- module methods ------------------------------------------------------------------------ */

static int mod_ptx(lua_State *L) {
  lua_pushstring(L, ((cl_mod *)luaL_checkudata(L, 1, MODULE_MT))->out.ptx);
  return 1;
}

/* m:set_aside(): what cuda.module(file, {device_only = true}) left out of the compile, a list
 * of {first, last, what}; empty for a module loaded otherwise. */
static int mod_set_aside(lua_State *L) {
  luaL_checkudata(L, 1, MODULE_MT);
  lua_getiuservalue(L, 1, 2);
  if (lua_getfield(L, -1, "set_aside") == LUA_TNIL) lua_newtable(L);
  else { /* a copy: the module's own list stays as it was */
    lua_newtable(L);
    for (lua_Integer i = 1; lua_geti(L, -2, i) != LUA_TNIL; i++) {
      lua_createtable(L, 0, 3);
      for (int f = 0; f < 3; f++) {
        static const char *const fields[] = {"first", "last", "what"};
        lua_getfield(L, -2, fields[f]);
        lua_setfield(L, -2, fields[f]);
      }
      lua_seti(L, -3, i);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
  }
  return 1;
}

static int mod_kernels(lua_State *L) {
  luaL_checkudata(L, 1, MODULE_MT);
  push_kernel_names(L, 1);
  return 1;
}

static const luaL_Reg module_methods[] = {{"ptx", mod_ptx}, {"kernels", mod_kernels},
                                          {"set_aside", mod_set_aside}, {NULL, NULL}};

static int mod_index(lua_State *L) {
  luaL_checkudata(L, 1, MODULE_MT);
  const char *key = luaL_checkstring(L, 2);
  lua_getiuservalue(L, 1, 1);
  int tbl = lua_gettop(L);
  if (lua_getfield(L, tbl, key) != LUA_TNIL) return 1;
  lua_getmetatable(L, 1);
  lua_getfield(L, -1, "__methods");
  if (lua_getfield(L, -1, key) != LUA_TNIL) return 1;
  if (push_kernel(L, tbl, key)) return 1;
  push_name_hint(L, tbl, key);
  return luaL_error(L, "this module has no kernel named '%s'%s (m:kernels() lists them)", key,
                    lua_tostring(L, -1));
}

static int mod_tostring(lua_State *L) {
  cl_mod *m = luaL_checkudata(L, 1, MODULE_MT);
  lua_pushcfunction(L, mod_kernels);
  lua_pushvalue(L, 1);
  lua_call(L, 1, 1);
  lua_getglobal(L, "table");
  lua_getfield(L, -1, "concat");
  lua_pushvalue(L, -3);
  lua_pushliteral(L, ", ");
  lua_call(L, 2, 1);
  lua_pushfstring(L, "cuda.Module %s [%s]: %s", m->file_name, m->arch, lua_tostring(L, -1));
  return 1;
}

static void new_type(lua_State *L, const char *name, const luaL_Reg *meta,
                     const luaL_Reg *methods) {
  luaL_newmetatable(L, name);
  luaL_setfuncs(L, meta, 0);
  if (methods) {
    lua_newtable(L);
    luaL_setfuncs(L, methods, 0);
    lua_setfield(L, -2, "__methods");
  }
  lua_pop(L, 1);
}

int luaopen_cudalab_kernel(lua_State *L) {
  static const luaL_Reg module_meta[] = {
      {"__index", mod_index}, {"__gc", mod_gc}, {"__tostring", mod_tostring}, {NULL, NULL}};
  static const luaL_Reg kernel_meta[] = {
      {"__index", kern_index}, {"__call", kern_call}, {"__tostring", kern_tostring}, {NULL, NULL}};
  static const luaL_Reg functions[] = {
      {"kernel", cuda_kernel}, {"module", cuda_module}, {"record", cuda_record}, {NULL, NULL}};
  static const luaL_Reg sigs_meta[] = {{"__gc", sigs_gc}, {NULL, NULL}};
  udata_tag_init();
  new_type(L, SIGS_MT, sigs_meta, NULL);
  static const luaL_Reg aside_meta[] = {{"__gc", aside_gc}, {NULL, NULL}};
  new_type(L, ASIDE_MT, aside_meta, NULL);
  new_type(L, MODULE_MT, module_meta, module_methods);
  new_type(L, KERNEL_MT, kernel_meta, kernel_methods);
  luaL_newlib(L, functions);
  return 1;
}
