/* backend_none.c: the backend for a machine with no GPU and no simulator to run on. Kernels
 * compile and launches are checked against a modelled H200 (device_default.c), and arrays live
 * in host memory so that everything up to the launch itself can be used and tested; running a
 * kernel or timing with events fails with a message that says why. */
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "h200.h"

struct cl_module { int unused; };
struct cl_function { int unused; };

static int no_gpu(cl_err *err, const char *what) {
  cl_err_set(err, "no GPU",
             "cannot %s: no GPU found on this machine. Start cudalab with --sim (or call "
             "cuda.use(\"sim\")) to run kernels on the simulator.", what);
  return -1;
}

static int none_device(cl_device *d, cl_err *err) {
  (void)err;
  device_default_h200(d);
  strcpy(d->backend, "none");
  return 0;
}

static const char *none_target_arch(void) { return CL_H200_ARCH; }

/* Host memory stands in for device memory, zero-filled and 256-byte aligned as cudaMalloc's. */
static int none_alloc(void **p, size_t bytes, const char *label, cl_err *err) {
  (void)label;
  return host_mem_alloc(p, bytes, err);
}

static void none_release(void *p) { free(p); }
static int none_meminfo(size_t *free_bytes, size_t *total, cl_err *err) {
  (void)free_bytes;
  (void)total;
  return no_gpu(err, "report device memory");
}
static int none_module_load(const cl_image *img, cl_module **out, cl_err *err) {
  (void)img;
  *out = calloc(1, sizeof **out);
  return *out ? 0 : no_gpu(err, "load a module");
}
static void none_module_unload(cl_module *m) { free(m); }
static cl_function the_function;
static int none_function(cl_module *m, const char *name, cl_function **out, cl_err *err) {
  (void)m;
  (void)name;
  (void)err;
  *out = &the_function;
  return 0;
}
static int none_func_attrs(cl_function *f, cl_func_attrs *out, cl_err *err) {
  (void)f;
  (void)err;
  out->registers = -1;
  out->max_threads_per_block = -1;
  out->shared_static = 0;
  out->local_bytes = 0;
  out->const_bytes = 0;
  return 0;
}
static int none_launch(cl_function *f, cl_dim3 g, cl_dim3 b, size_t shared, void **args,
                       cl_err *err) {
  (void)f;
  (void)g;
  (void)b;
  (void)shared;
  (void)args;
  return no_gpu(err, "run a kernel");
}
static int none_event_create(cl_event **out, cl_err *err) {
  (void)out;
  return no_gpu(err, "time with GPU events");
}
static void none_event_destroy(cl_event *e) { (void)e; }
static int none_event_record(cl_event *e, cl_err *err) {
  (void)e;
  return no_gpu(err, "record an event");
}
static int none_event_elapsed(cl_event *a, cl_event *b, float *ms, cl_err *err) {
  (void)a;
  (void)b;
  (void)ms;
  return no_gpu(err, "time with GPU events");
}
static int none_texture_create(const void *src, const cl_texture_desc *d, uint64_t *handle,
                               cl_err *err) {
  (void)src;
  (void)d;
  (void)handle;
  return no_gpu(err, "make a texture");
}
static void none_texture_destroy(uint64_t handle) { (void)handle; }
static int none_synchronize(volatile sig_atomic_t *interrupt, cl_err *err) {
  (void)interrupt;
  (void)err;
  return 0;
}

const cl_backend cl_backend_none = {
    .name = "none",
    .alloc_zeroes = 1,
    .device = none_device,
    .target_arch = none_target_arch,
    .alloc = none_alloc,
    .release = none_release,
    .host_alloc_pinned = host_mem_alloc,
    .host_release_pinned = none_release,
    .htod = host_mem_copy,
    .dtoh = host_mem_copy,
    .dtod = host_mem_copy,
    .memset = host_mem_set,
    .meminfo = none_meminfo,
    .module_load = none_module_load,
    .module_unload = none_module_unload,
    .function = none_function,
    .func_attrs = none_func_attrs,
    .launch = none_launch,
    .event_create = none_event_create,
    .event_destroy = none_event_destroy,
    .event_record = none_event_record,
    .event_elapsed_ms = none_event_elapsed,
    .synchronize = none_synchronize,
    .texture_create = none_texture_create,
    .texture_destroy = none_texture_destroy,
};
