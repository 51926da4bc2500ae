/* backend.c: picks the backend at start-up (the helpers every backend shares are in
 * backend_util.c, so that a backend need not depend on the file that picks it). Picking must not
 * touch CUDA: the presence of the NVIDIA driver's device nodes decides, and the cuda backend
 * creates its context (0.4 s, and some 500 MiB of the GPU's memory) only when a learner first uses
 * the GPU, so a session that never does holds none of it. */
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
