/* blas_cublas.c: cuBLAS for cuda.blas on the GPU, loaded with dlopen on first use from the
 * toolkit whose NVRTC compiles use, as NVRTC itself is found, so that cudalab starts on a
 * machine without cuBLAS and says so only when a learner asks for it.
 *
 * cuBLAS is column-major and cudalab's arrays are row-major. A row-major m x n matrix is, read
 * column-major, its n x m transpose, so C = op(A) op(B) is computed as C^T = op(B)^T op(A)^T: the
 * same call with A and B swapped and m and n swapped, and no copy. The handle uses the default
 * stream, which orders the multiply after the launches before it, as a learner expects. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas.h"
#include "dl_sym.h"
#include "nvrtc_lib.h"

typedef void *cublas_handle;
typedef int (*create_fn)(cublas_handle *);
typedef int (*version_fn)(cublas_handle, int *);
typedef const char *(*status_name_fn)(int);
typedef int (*sgemm_fn)(cublas_handle, int, int, int, int, int, const float *, const float *, int,
                        const float *, int, const float *, float *, int);
typedef int (*dgemm_fn)(cublas_handle, int, int, int, int, int, const double *, const double *,
                        int, const double *, int, const double *, double *, int);

static struct {
  int tried;              /* loading was attempted (once per process) */
  cublas_handle handle;   /* NULL when cuBLAS could not be loaded or initialised */
  sgemm_fn sgemm;
  dgemm_fn dgemm;
  status_name_fn status_name; /* may be NULL (older cuBLAS) */
  char name[64];          /* "cuBLAS 13.0.2" */
  char why[512];          /* why it is missing */
} C;

/* The toolkit's lib folder: next to the libnvrtc that compiles use. */
static void *open_from_toolkit(const char *file) {
  const char *nvrtc = nvrtc_lib_path();
  if (nvrtc) {
    char path[PATH_MAX];
    const char *slash = strrchr(nvrtc, '/');
    if (slash) {
      snprintf(path, sizeof path, "%.*s/%s", (int)(slash - nvrtc), nvrtc, file);
      void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
      if (h) return h;
    }
  }
  return dlopen(file, RTLD_NOW | RTLD_LOCAL);
}

static void load(void) {
  if (C.tried) return;
  C.tried = 1;
  static const char *const files[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so", NULL};
  void *h = NULL;
  for (int i = 0; files[i] && !h; i++) h = open_from_toolkit(files[i]);
  if (!h) {
    snprintf(C.why, sizeof C.why, "cuBLAS was not found (libcublas.so.13 next to NVRTC or on the "
             "library path): it comes with the CUDA Toolkit; add its lib64 folder to "
             "LD_LIBRARY_PATH");
    return;
  }
  create_fn create;
  version_fn version;
  dl_sym(h, "cublasCreate_v2", &create);
  dl_sym(h, "cublasGetVersion_v2", &version);
  dl_sym(h, "cublasSgemm_v2", &C.sgemm);
  dl_sym(h, "cublasDgemm_v2", &C.dgemm);
  dl_sym(h, "cublasGetStatusName", &C.status_name);
  int st = create && C.sgemm && C.dgemm ? create(&C.handle) : -1;
  if (st != 0) {
    C.handle = NULL;
    snprintf(C.why, sizeof C.why, "cuBLAS could not start (%s)",
             st == -1 ? "a function is missing from the library"
                      : C.status_name ? C.status_name(st) : "cublasCreate failed");
    return;
  }
  int v = 0;
  if (version) version(C.handle, &v);
  snprintf(C.name, sizeof C.name, "cuBLAS %d.%d.%d", v / 10000, v / 100 % 100, v % 100);
}

const char *blas_cublas_name(void) {
  load();
  return C.handle ? C.name : NULL;
}

int blas_cublas_gemm(const cl_gemm *g, cl_err *err) {
  load();
  if (!C.handle) {
    cl_err_set(err, "no cuBLAS", "%s", C.why);
    return -1;
  }
  int opb = g->trans_b ? 1 : 0, opa = g->trans_a ? 1 : 0; /* CUBLAS_OP_N, CUBLAS_OP_T */
  int ldb = g->trans_b ? g->k : g->n, lda = g->trans_a ? g->m : g->k;
  int st;
  if (g->f64) {
    st = C.dgemm(C.handle, opb, opa, g->n, g->m, g->k, &g->alpha, g->b, ldb, g->a, lda, &g->beta,
                 g->c, g->n);
  } else {
    float alpha = (float)g->alpha, beta = (float)g->beta;
    st = C.sgemm(C.handle, opb, opa, g->n, g->m, g->k, &alpha, g->b, ldb, g->a, lda, &beta, g->c,
                 g->n);
  }
  if (st != 0) {
    cl_err_set(err, "cuBLAS error", "cuBLAS %s failed: %s", g->f64 ? "dgemm" : "sgemm",
               C.status_name ? C.status_name(st) : "an error status");
    return -1;
  }
  return 0;
}
