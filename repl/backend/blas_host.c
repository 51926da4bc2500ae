/* blas_host.c: the host's BLAS, for cuda.blas on the simulator (whose device memory is host
 * memory). Loaded with dlopen on first use, OpenBLAS first, then the reference BLAS that Debian's
 * libblas3 provides; both export the CBLAS interface, which takes row-major matrices as cudalab's
 * arrays are. (Turned down: linking -lblas, which would make every cudalab need the package; and
 * a hand-written loop, which would not be "a library" and takes minutes at n = 4096.) */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "blas.h"
#include "dl_sym.h"

enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 }; /* CBLAS's enumerators */

typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *,
                         int, float, float *, int);
typedef void (*dgemm_fn)(int, int, int, int, int, int, double, const double *, int,
                         const double *, int, double, double *, int);

static struct {
  int tried;       /* dlopen was attempted */
  sgemm_fn sgemm;  /* NULL when no library was found */
  dgemm_fn dgemm;
  const char *lib; /* the library's file name */
} H;

static const char *const LIBS[] = {"libopenblas.so.0", "libblas.so.3", "libcblas.so.3", NULL};

static void load(void) {
  if (H.tried) return;
  H.tried = 1;
  for (int i = 0; LIBS[i]; i++) {
    void *h = dlopen(LIBS[i], RTLD_NOW | RTLD_LOCAL);
    if (!h) continue;
    dl_sym(h, "cblas_sgemm", &H.sgemm);
    dl_sym(h, "cblas_dgemm", &H.dgemm);
    if (H.sgemm && H.dgemm) {
      H.lib = LIBS[i];
      return;
    }
    H.sgemm = NULL;
    H.dgemm = NULL;
    dlclose(h);
  }
}

const char *blas_host_name(void) {
  load();
  return H.lib;
}

int blas_host_gemm(const cl_gemm *g, cl_err *err) {
  load();
  if (!H.lib) {
    cl_err_set(err, "no host BLAS",
               "cuda.blas on the simulator computes with the host's BLAS library, and none was "
               "found (tried libopenblas.so.0, libblas.so.3): install Debian's libopenblas0 or "
               "libblas3 package");
    return -1;
  }
  int ta = g->trans_a ? TRANS : NO_TRANS, tb = g->trans_b ? TRANS : NO_TRANS;
  int lda = g->trans_a ? g->m : g->k, ldb = g->trans_b ? g->k : g->n;
  if (g->f64)
    H.dgemm(ROW_MAJOR, ta, tb, g->m, g->n, g->k, g->alpha, g->a, lda, g->b, ldb, g->beta, g->c,
            g->n);
  else
    H.sgemm(ROW_MAJOR, ta, tb, g->m, g->n, g->k, (float)g->alpha, g->a, lda, g->b, ldb,
            (float)g->beta, g->c, g->n);
  return 0;
}
