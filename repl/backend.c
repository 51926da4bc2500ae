/* backend.c: picks the backend at start-up and formats backend errors. Picking must not touch
 * CUDA: the presence of the NVIDIA driver's device nodes decides, and the cuda backend creates
 * its context (0.4 s, and some 500 MiB of the GPU's memory) only when a learner first uses the
 * GPU, so a session that never does holds none of it. */
#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend_names.h"
#include "backend.h"
#include "backend_cuda.h"

void cl_err_set(cl_err *err, const char *name, const char *fmt, ...) {
  memset(err, 0, sizeof *err);
  snprintf(err->name, sizeof err->name, "%s", name);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->text, sizeof err->text, fmt, ap);
  va_end(ap);
}

const char *cl_bytes_text(char *buf, size_t cap, double n) {
  static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int i = 0;
  while (n >= 1024 && i < 5) {
    n /= 1024;
    i++;
  }
  if (n == floor(n)) snprintf(buf, cap, "%.0f %s", n, unit[i]);
  else snprintf(buf, cap, "%.*f %s", n < 10 ? 2 : n < 100 ? 1 : 0, n, unit[i]);
  return buf;
}

/* Below a second in ms, as a class writes its limits ("500 ms"); %g drops a trailing ".0". */
const char *cl_seconds_text(char *buf, size_t cap, double s) {
  if (s < 1) snprintf(buf, cap, "%.3g ms", s * 1e3);
  else snprintf(buf, cap, "%.3g s", s);
  return buf;
}

const char *cl_kernel_time_message(char *buf, size_t cap, const char *kernel, double limit_s) {
  char t[32];
  cl_seconds_text(t, sizeof t, limit_s);
  snprintf(buf, cap, "kernel %s was stopped after %s: this class limits a launch to %s "
           "(kernel_time_limit). Look for a loop that never ends, or launch less work.",
           kernel && kernel[0] ? kernel : "(unnamed)", t, t);
  return buf;
}

void *host_alloc_zeroed(size_t bytes, cl_err *err) {
  size_t rounded = bytes ? (bytes + 255) / 256 * 256 : 256;
  void *p = rounded >= bytes ? aligned_alloc(256, rounded) : NULL;
  if (!p) {
    cl_err_set(err, "out of memory", "out of host memory allocating %zu bytes", bytes);
    err->oom = 1;
    return NULL;
  }
  return memset(p, 0, rounded);
}

int host_mem_alloc(void **p, size_t bytes, cl_err *err) {
  return (*p = host_alloc_zeroed(bytes, err)) ? 0 : -1;
}

int host_mem_copy(void *dst, const void *src, size_t bytes, cl_err *err) {
  (void)err;
  if (bytes) memmove(dst, src, bytes); /* an empty buffer's pointer may be NULL */
  return 0;
}

int host_mem_set(void *dst, int byte, size_t bytes, cl_err *err) {
  (void)err;
  memset(dst, byte, bytes);
  return 0;
}

/* True when the kernel driver has a GPU to offer: /proc lists one, or the control node exists. */
static int driver_present(void) {
  DIR *d = opendir("/proc/driver/nvidia/gpus");
  if (d) {
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
      if (e->d_name[0] != '.') n++;
    closedir(d);
    if (n > 0) return 1;
  }
  return access("/dev/nvidia0", F_OK) == 0 && access("/dev/nvidiactl", F_OK) == 0;
}

const cl_backend *backend_by_name(const char *name) {
  const char *own = cl_backend_canonical(name);
  if (!own) return NULL;
  if (strcmp(own, "cuda") == 0) return &cl_backend_cuda;
  if (strcmp(own, "none") == 0) return &cl_backend_none;
#ifdef CUDALAB_HAVE_SIM
  if (strcmp(own, "sim") == 0) return &cl_backend_sim;
#endif
  return NULL;
}

static const cl_backend *fallback(void) {
#ifdef CUDALAB_HAVE_SIM
  return &cl_backend_sim;
#else
  return &cl_backend_none;
#endif
}

const cl_backend *backend_choose(const char *forced, char *why, size_t whylen) {
  why[0] = '\0';
  if (forced) return backend_by_name(forced);
  if (driver_present()) return &cl_backend_cuda;
  snprintf(why, whylen, "no GPU found (no NVIDIA driver on this machine)");
  return fallback();
}

const cl_backend *backend_fallback(void) { return fallback(); }

const cl_backend *backend_simulator(void) {
#ifdef CUDALAB_HAVE_SIM
  return &cl_backend_sim;
#else
  return NULL;
#endif
}

/* Every backend, not only the one chosen: cuda.use may switch to another later, and the flag
 * must be in place before its first launch. */
void backend_attach_interrupt(volatile sig_atomic_t *interrupt) {
  const cl_backend *all[] = {&cl_backend_cuda, &cl_backend_none, backend_simulator()};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (all[i] && all[i]->attach_interrupt) all[i]->attach_interrupt(interrupt);
}

/* Every backend, as for the interrupt flag: cuda.use may switch later, and the limit holds for
 * the session, not for one backend. */
void backend_set_kernel_time_limit(double seconds, cl_abandon_fn abandon) {
  const cl_backend *all[] = {&cl_backend_cuda, &cl_backend_none, backend_simulator()};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (all[i] && all[i]->set_kernel_time_limit) all[i]->set_kernel_time_limit(seconds, abandon);
}

void backend_gpu_admit(const cl_gpu_request *req, cl_gpu_admission *out) {
  backend_cuda_admit(req, out);
}

void backend_gpu_name(char *out, size_t len) {
  out[0] = '\0';
  DIR *d = opendir("/proc/driver/nvidia/gpus");
  if (!d) return;
  for (struct dirent *e; (e = readdir(d)) && !out[0];) {
    if (e->d_name[0] == '.') continue;
    char path[512], line[256];
    snprintf(path, sizeof path, "/proc/driver/nvidia/gpus/%s/information", e->d_name);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    while (fgets(line, sizeof line, f))
      if (strncmp(line, "Model:", 6) == 0) {
        char *v = line + 6;
        v += strspn(v, " \t");
        v[strcspn(v, "\n")] = '\0';
        snprintf(out, len, "%s", v);
        break;
      }
    fclose(f);
  }
  closedir(d);
}
