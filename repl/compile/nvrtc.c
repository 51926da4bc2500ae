/* nvrtc.c: one NVRTC compile per call. The learner's source is compiled exactly as given (no
 * prelude is pasted in front), so NVRTC's own line numbers are the learner's; the program is
 * named after the learner's file ("kernel.cu" for a string), so no temporary name ever shows.
 *
 * Options always added: -arch, -lineinfo (the simulator and compute-sanitizer map faults to
 * source lines with it, at no run-time cost), --ptxas-options=-v (register and shared-memory use
 * for k:info() without a GPU), and after the learner's own options (so that their -I folders are
 * searched first) an -I for each folder of includes.c: the toolkit's headers (<cuda_fp16.h>,
 * <cooperative_groups.h>, <cuda/atomic>) and cudalab's kernels folder, on every backend.
 *
 * NVRTC is not linked: its functions are looked up after nvrtc_lib.c loads the library, in the
 * process that compiles (see nvrtc_lib.c for why), and a library that cannot be loaded fails
 * the compile with a message that says which file was tried. nvrtc.h's declarations are kept
 * as the functions' types, so a call that does not match the header still fails to build. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <nvrtc.h>

#include "dl_sym.h"
#include "features.h"
#include "includes.h"
#include "nvrtc.h"
#include "nvrtc_headers.h"
#include "nvrtc_lib.h"
#include "src_guard.h"

#define MAX_OPTIONS 64


/* The NVRTC functions this file calls, looked up in the loaded library by name; each field
 * has the type nvrtc.h declares for the function it is named after. */
#define NVRTC_FUNCTIONS(X)                                                                    \
  X(nvrtcGetErrorString) X(nvrtcCreateProgram) X(nvrtcDestroyProgram)                         \
  X(nvrtcAddNameExpression) X(nvrtcCompileProgram) X(nvrtcGetProgramLogSize)                  \
  X(nvrtcGetProgramLog) X(nvrtcGetPTXSize) X(nvrtcGetPTX) X(nvrtcGetCUBINSize)               \
  X(nvrtcGetCUBIN) X(nvrtcGetLoweredName)
#define NV_FIELD(f) __typeof__(f) *f;
static struct {
  int loaded; /* every field is set: the library was loaded in this process */
  NVRTC_FUNCTIONS(NV_FIELD)
} nv;

/* The check macro of this file: calls nv.fn with args (in parentheses) and records which NVRTC
 * call failed and why, as "nvrtcGetPTX(prog, out->ptx) failed: ...". */
#define NV_CHECK(fn, args)                                                               \
  do {                                                                                   \
    nvrtcResult r_ = nv.fn args;                                                         \
    if (r_ != NVRTC_SUCCESS) {                                                           \
      fail_msg(errmsg, "%s%s failed: %s", #fn, #args, nv.nvrtcGetErrorString(r_));      \
      goto cleanup;                                                                      \
    }                                                                                    \
  } while (0)

/* The message fmt and its arguments make, in a new *errmsg (NULL out of memory). */
static void fail_msg(char **errmsg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail_msg(char **errmsg, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  *errmsg = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (*errmsg) {
    va_start(ap, fmt);
    vsnprintf(*errmsg, (size_t)n + 1, fmt, ap);
    va_end(ap);
  }
}

const char *nvrtc_version_string(void) {
  const char *v = nvrtc_lib_version();
  return v ? v : "unavailable";
}

/* Loads NVRTC and looks up its functions, once per process; 0, or -1 with the learner's
 * message in a new *errmsg. */
static int load_nvrtc(char **errmsg) {
  if (nv.loaded) return 0;
  char *why = NULL;
  void *lib = nvrtc_lib_open(&why);
  if (!lib) {
    *errmsg = why;
    if (!why) fail_msg(errmsg, "NVRTC, the CUDA compiler, could not be loaded");
    return -1;
  }
#define NV_SLOT(f) {#f, &nv.f},
  static const struct {
    const char *name; /* "nvrtcGetPTX" */
    void *slot;       /* &nv.nvrtcGetPTX */
  } fns[] = {NVRTC_FUNCTIONS(NV_SLOT)};
  for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) {
    if (dl_sym(lib, fns[i].name, fns[i].slot)) continue;
    const char *path = nvrtc_lib_path();
    fail_msg(errmsg, "NVRTC, the CUDA compiler, could not be used: %s has no function %s "
             "(it is not NVRTC, or one older than CUDA 12). Set CUDALAB_NVRTC to the path of "
             "the CUDA Toolkit's libnvrtc.so.13", path ? path : "libnvrtc.so", fns[i].name);
    return -1;
  }
  nv.loaded = 1;
  return 0;
}

/* A log that quotes a 10 MB line, or holds thousands of errors, would flood the terminal:
 * lines are cut at LOG_LINE_MAX characters and the log after LOG_LINES_MAX lines, each cut
 * said. Takes and returns a malloc'd string (the same one when nothing is cut). */
#define LOG_LINE_MAX 400
#define LOG_LINES_MAX 200
static char *clip_log(char *log) {
  size_t n = strlen(log), lines = 0;
  char *out = malloc(n + 64), *o = out;
  if (!out) return log;
  const char *p = log;
  for (; *p && lines < LOG_LINES_MAX; lines++) {
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    size_t keep = len > LOG_LINE_MAX ? LOG_LINE_MAX : len;
    memcpy(o, p, keep);
    o += keep;
    if (keep < len) {
      memcpy(o, " ...", 4);
      o += 4;
    }
    p += len;
    if (*p == '\n') *o++ = *p++;
  }
  size_t more = 0;
  for (const char *q = p; *q; q++) more += *q == '\n';
  if (*p) o += sprintf(o, "(%zu more lines of compiler output not shown)", more + 1);
  *o = '\0';
  free(log);
  return out;
}

/* NVRTC writes "file.cu(12): error: ..."; learners and editors read "file.cu:12: error: ...".
 * The quoted source line and caret that follow are kept. The closing "N errors detected in the
 * compilation of ..." line is dropped: the errors above say it. Returns a malloc'd string. */
static char *rewrite_log(const char *log, const char *file_name) {
  size_t flen = strlen(file_name), cap = strlen(log) + 1;
  char *out = malloc(cap), *o = out;
  if (!out) return NULL;
  for (const char *p = log; *p;) {
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) + 1 : strlen(p);
    if (memmem(p, len, "detected in the compilation of", 30)) {
      p += len;
      continue;
    }
    const char *paren = (strncmp(p, file_name, flen) == 0 && p[flen] == '(') ? p + flen : NULL;
    const char *close = paren ? strchr(paren, ')') : NULL;
    if (close && close < p + len && close[1] == ':') {
      memcpy(o, p, flen);
      o += flen;
      *o++ = ':';
      memcpy(o, paren + 1, (size_t)(close - paren - 1));
      o += close - paren - 1;
      size_t rest = len - (size_t)(close + 1 - p);
      memcpy(o, close + 1, rest);
      o += rest;
    } else {
      memcpy(o, p, len);
      o += len;
    }
    p += len;
  }
  while (o > out && (o[-1] == '\n' || o[-1] == ' ')) o--;
  *o = '\0';
  return clip_log(out);
}

/* True when the log line at p (len bytes) opens a diagnostic: "name(12): kind ...", or a line
 * of ptxas or NVRTC's closing remark, either of which ends the diagnostic before it. */
static int opens_diagnostic(const char *p, size_t len) {
  const char *paren = memchr(p, '(', len);
  if (paren && paren > p && paren + 1 < p + len && paren[1] >= '0' && paren[1] <= '9') {
    const char *close = memchr(paren, ')', (size_t)(p + len - paren));
    if (close && close + 1 < p + len && close[1] == ':') return 1;
  }
  return (len >= 5 && memcmp(p, "ptxas", 5) == 0) || (len >= 6 && memcmp(p, "Remark", 6) == 0);
}

char *nvrtc_warnings(const char *log, const char *file_name) {
  size_t flen = strlen(file_name);
  char *keep = malloc(strlen(log) + 1), *o = keep;
  if (!keep) return NULL;
  int in = 0; /* inside a warning about the learner's file: its quoted line and caret follow */
  for (const char *p = log; *p;) {
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) + 1 : strlen(p);
    if (opens_diagnostic(p, len))
      in = strncmp(p, file_name, flen) == 0 && p[flen] == '(' && memmem(p, len, ": warning", 9);
    else if (len <= 1 || (len == 2 && p[0] == '\r'))
      in = 0;
    if (in) {
      memcpy(o, p, len);
      o += len;
    }
    p += len;
  }
  *o = '\0';
  if (o == keep) {
    free(keep);
    return NULL;
  }
  char *out = rewrite_log(keep, file_name);
  free(keep);
  return out;
}

/* NVRTC's message for a header it cannot find names no folder ("no directories in search list"
 * when there were none): a note listing where it looked is added, so a learner can tell a typo
 * from a missing toolkit. The first folder is the source's own (its program name's folder, the
 * current one for a source given as a string). Takes and returns a malloc'd string. */
static char *explain_missing_header(char *msg, const char *file_name) {
  if (!msg ||
      !(strstr(msg, "cannot open source file") || strstr(msg, "could not open source file")))
    return msg;
  int n = 0;
  const char *const *dirs = inc_dirs(&n);
  char dir[4096], cwd[4096];
  if (inc_source_dir(file_name, dir, sizeof dir) != 0 || !realpath(dir, cwd))
    snprintf(cwd, sizeof cwd, "the source's folder");
  size_t len = strlen(msg) + strlen(cwd) + 256;
  for (int i = 0; i < n; i++) len += strlen(dirs[i]) + 8;
  char *out = malloc(len);
  if (!out) return msg;
  int w = snprintf(out, len,
                   "%s\nnote: searched %s (for #include \"...\" only), the folders given with "
                   "-I, then ", msg, cwd);
  for (int i = 0; i < n; i++)
    w += snprintf(out + w, len - (size_t)w, "%s%s", i ? ", " : "", dirs[i]);
  if (!n) snprintf(out + w, len - (size_t)w, "no CUDA Toolkit include folder (none was found)");
  free(msg);
  return out;
}

/* A compile that ptxas rejects can leave only its "info" lines in the log, with no reason
 * (NVRTC 13 does this for over 48 KiB of static shared memory, 64 KiB of constant memory or
 * 32,764 bytes of kernel parameters).
 * Such a log is replaced by a message that says what the limit is. Takes and returns a
 * malloc'd string; returns it unchanged when it already says "error" (or on out of memory). */
static char *explain_silent_failure(char *msg, const char *file_name) {
  if (!msg || strstr(msg, "error")) return msg;
  const char *smem = strstr(msg, " bytes smem");
  long bytes = 0;
  if (smem) {
    const char *p = smem;
    while (p > msg && p[-1] >= '0' && p[-1] <= '9') p--;
    bytes = strtol(p, NULL, 10);
  }
  char buf[512];
  if (bytes > 48 * 1024)
    snprintf(buf, sizeof buf,
             "%s: error: the kernel uses %ld bytes of static shared memory (__shared__ arrays), "
             "over the limit of 49152 bytes (48 KiB) per block. Make the arrays smaller.",
             file_name, bytes);
  else
    snprintf(buf, sizeof buf,
             "%s: error: the PTX assembler (ptxas) rejected the kernel without giving a reason. "
             "The usual causes are over 48 KiB of static __shared__ memory, over 64 KiB of "
             "__constant__ memory, or over 32,764 bytes of kernel parameters (pass large data "
             "in an array).", file_name);
  char *out = strdup(buf);
  if (!out) return msg;
  free(msg);
  return out;
}

/* A log that speaks of a feature cudalab does not run (features.c) gets the note that names
 * it and what to do instead. Takes and returns a malloc'd string. */
static char *explain_feature(char *msg) {
  const char *note = feature_note(msg);
  if (!note) return msg;
  size_t len = strlen(msg) + strlen(note) + 2;
  char *out = malloc(len);
  if (!out) return msg;
  snprintf(out, len, "%s\n%s", msg, note);
  free(msg);
  return out;
}

static char *program_log(nvrtcProgram prog) {
  size_t n = 0;
  if (nv.nvrtcGetProgramLogSize(prog, &n) != NVRTC_SUCCESS) return NULL;
  char *log = malloc(n + 1);
  if (!log) return NULL;
  if (nv.nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS) log[0] = '\0';
  log[n] = '\0';
  return log;
}

static int build_options(const char *arch, const char *const *options, int noptions,
                         const char **opts, char *arch_opt, size_t arch_len, char **errmsg) {
  int ninc = 0;
  const char *const *inc = inc_options(&ninc);
  if (noptions > MAX_OPTIONS - 4 - ninc) {
    fail_msg(errmsg, "too many compiler options");
    return -1;
  }
  int n = 0;
  snprintf(arch_opt, arch_len, "-arch=%s", arch);
  opts[n++] = arch_opt;
  opts[n++] = "-lineinfo";
  if (strncmp(arch, "sm_", 3) == 0) opts[n++] = "--ptxas-options=-v";
  for (int i = 0; i < noptions; i++)
    if (strcmp(options[i], NVRTC_STAND_INS) != 0) opts[n++] = options[i]; /* cudalab's own */
  for (int i = 0; i < ninc; i++) opts[n++] = inc[i];
  return n;
}

static int copy_outputs(nvrtcProgram prog, const char *arch, const char *const *names, int nnames,
                        nvrtc_output *out, char **errmsg) {
  size_t n = 0;
  NV_CHECK(nvrtcGetPTXSize, (prog, &n));
  if (!(out->ptx = malloc(n + 1))) goto oom;
  NV_CHECK(nvrtcGetPTX, (prog, out->ptx));
  out->ptx[n] = '\0';
  out->ptx_len = strlen(out->ptx);
  if (strncmp(arch, "sm_", 3) == 0) {
    NV_CHECK(nvrtcGetCUBINSize, (prog, &out->cubin_len));
    if (!(out->cubin = malloc(out->cubin_len))) goto oom;
    NV_CHECK(nvrtcGetCUBIN, (prog, out->cubin));
  }
  out->lowered = calloc((size_t)nnames + 1, sizeof *out->lowered);
  if (!out->lowered) goto oom;
  out->nnames = nnames;
  for (int i = 0; i < nnames; i++) {
    const char *low = NULL;
    NV_CHECK(nvrtcGetLoweredName, (prog, names[i], &low));
    /* NULL when the name is no kernel after all (the source scanner can be fooled, by a macro
     * say): "" tells the caller to skip it. */
    if (!(out->lowered[i] = strdup(low ? low : ""))) goto oom;
  }
  return 0;
oom:
  fail_msg(errmsg, "out of host memory while compiling");
cleanup:
  return -1;
}

static int compile_once(const char *src, const char *file_name, const char *arch,
                        const char *const *options, int noptions, const char *const *names,
                        int nnames, nvrtc_output *out, char **errmsg) {
  memset(out, 0, sizeof *out);
  *errmsg = NULL;
  nvrtcProgram prog = NULL;
  const char *opts[MAX_OPTIONS];
  char arch_opt[64];
  int nopts = build_options(arch, options, noptions, opts, arch_opt, sizeof arch_opt, errmsg);
  if (nopts < 0) return -1;
  const char *const *hnames = nvrtc_builtin_names, *const *hsources = nvrtc_builtin_sources;
  int nheaders = nvrtc_builtin_count;
  for (int i = 0; i < noptions; i++)
    if (strcmp(options[i], NVRTC_STAND_INS) == 0)
      nheaders = nvrtc_headers_with_stand_ins(&hnames, &hsources);
  NV_CHECK(nvrtcCreateProgram, (&prog, src, file_name, nheaders, hsources, hnames));
  for (int i = 0; i < nnames; i++) NV_CHECK(nvrtcAddNameExpression, (prog, names[i]));
  nvrtcResult r = nv.nvrtcCompileProgram(prog, nopts, opts);
  char *log = program_log(prog);
  if (r != NVRTC_SUCCESS) {
    *errmsg = log ? explain_feature(explain_missing_header(
                        explain_silent_failure(rewrite_log(log, file_name), file_name), file_name))
                  : NULL;
    if (!*errmsg) fail_msg(errmsg, "compilation failed: %s", nv.nvrtcGetErrorString(r));
    free(log);
    goto cleanup;
  }
  out->ptxas_log = log ? log : strdup("");
  if (copy_outputs(prog, arch, names, nnames, out, errmsg) == 0) {
    nv.nvrtcDestroyProgram(&prog);
    return 0;
  }
cleanup:
  if (prog) nv.nvrtcDestroyProgram(&prog);
  nvrtc_output_free(out);
  return -1;
}

/* Do a and the first len characters of b spell the same, spaces aside? NVRTC quotes a name
 * expression re-spaced: "k<int>" comes back as " k < int >". */
static int same_but_spaces(const char *a, const char *b, size_t len) {
  const char *end = b + len;
  for (;;) {
    while (*a == ' ') a++;
    while (b < end && *b == ' ') b++;
    if (!*a || b == end) return !*a && b == end;
    if (*a++ != *b++) return 0;
  }
}

/* A name the source scanner took for a kernel but the compiler does not see (inside #if 0, say),
 * or a name expression that is no kernel's, fails the whole compile with an error about NVRTC's
 * internal "__nv_name_map". Returns the index in names of the name the message blames, or -1
 * for any other failure. */
static int blamed_name(const char *msg, const char *const *names, int nnames) {
  const char *key = "Input name expression was: \"";
  const char *p = msg ? strstr(msg, key) : NULL;
  if (!p) return -1;
  p += strlen(key);
  size_t len = strcspn(p, "\"");
  for (int i = 0; i < nnames; i++)
    if (same_but_spaces(names[i], p, len)) return i;
  return -1;
}

/* The last check before NVRTC, whoever the caller: each name expression is text NVRTC may
 * paste into the source it generates, so it must hold nothing that starts a directive, a
 * comment or a literal; each option and the file name must be one line. The bindings check a
 * learner's names and options first, with messages in the learner's terms (bind_kernel.c);
 * this one keeps a name the source scanner made, or a caller's slip, from reaching NVRTC.
 * 0, or -1 with *errmsg set. */
static int check_inputs(const char *file_name, const char *const *options, int noptions,
                        const char *const *names, int nnames, char **errmsg) {
  char why[SRC_GUARD_WHY], shown[300];
  const char *what = NULL, *s = NULL;
  for (int i = 0; !what && i < nnames; i++)
    if (src_guard_expr(names[i], strlen(names[i]), why, sizeof why) != 0)
      what = "the kernel name", s = names[i];
  for (int i = 0; !what && i < noptions; i++)
    if (src_guard_option(options[i], strlen(options[i]), why, sizeof why) != 0)
      what = "the compiler option", s = options[i];
  if (!what && src_guard_option(file_name, strlen(file_name), why, sizeof why) != 0)
    what = "the file name", s = file_name;
  if (!what) return 0;
  src_guard_quote(s, strlen(s), 60, shown, sizeof shown);
  fail_msg(errmsg, "%s %s cannot be passed to NVRTC: %s", what, shown, why);
  return -1;
}

int nvrtc_compile_here(const char *src, const char *file_name, const char *arch,
                       const char *const *options, int noptions, const char *const *names,
                       int nnames, nvrtc_output *out, char **errmsg) {
  memset(out, 0, sizeof *out);
  *errmsg = NULL;
  if (check_inputs(file_name, options, noptions, names, nnames, errmsg) != 0) return -1;
  if (load_nvrtc(errmsg) != 0) return -1;
  const char **kept = malloc(sizeof *kept * (size_t)(nnames + 1));
  int *from = malloc(sizeof *from * (size_t)(nnames + 1)); /* kept[j] is names[from[j]] */
  if (!kept || !from) {
    free(kept);
    free(from);
    fail_msg(errmsg, "out of host memory while compiling");
    return -1;
  }
  int active = nnames, rc;
  for (int i = 0; i < nnames; i++) {
    kept[i] = names[i];
    from[i] = i;
  }
  while ((rc = compile_once(src, file_name, arch, options, noptions, kept, active, out, errmsg))) {
    int drop = blamed_name(*errmsg, kept, active);
    if (drop < 0) break;
    free(*errmsg);
    *errmsg = NULL;
    memmove(kept + drop, kept + drop + 1, sizeof *kept * (size_t)(active - drop - 1));
    memmove(from + drop, from + drop + 1, sizeof *from * (size_t)(active - drop - 1));
    active--;
  }
  if (rc == 0 && active < nnames) {
    /* Spread the lowered names back over all of names[], "" for the dropped ones. */
    char **all = calloc((size_t)nnames + 1, sizeof *all);
    for (int j = 0; all && j < active; j++) {
      all[from[j]] = out->lowered[j];
      out->lowered[j] = NULL;
    }
    for (int i = 0; all && i < nnames; i++)
      if (!all[i] && !(all[i] = strdup(""))) {
        for (int k = 0; k < nnames; k++) free(all[k]);
        free(all);
        all = NULL;
      }
    if (!all) {
      nvrtc_output_free(out);
      fail_msg(errmsg, "out of host memory while compiling");
      rc = -1;
    } else {
      for (int j = 0; j < out->nnames; j++) free(out->lowered[j]);
      free(out->lowered);
      out->lowered = all;
      out->nnames = nnames;
    }
  }
  free(kept);
  free(from);
  return rc;
}

void nvrtc_output_free(nvrtc_output *out) {
  free(out->ptx);
  free(out->cubin);
  free(out->ptxas_log);
  if (out->lowered)
    for (int i = 0; i < out->nnames; i++) free(out->lowered[i]);
  free(out->lowered);
  memset(out, 0, sizeof *out);
}
