/* kernel_sig.h: what the learner's source says about each __global__ function: its name and its
 * parameters' C types. NVRTC's PTX gives sizes but not meaning (a float* and a long are both
 * .u64), so launch checks read the source too. Used by bind_kernel.c. */
#ifndef CUDALAB_KERNEL_SIG_H
#define CUDALAB_KERNEL_SIG_H

#define SIG_MAX_PARAMS 32
#define SIG_NAME_LEN 128

typedef enum sig_kind { SIG_UNKNOWN, SIG_POINTER, SIG_INT, SIG_FLOAT, SIG_BOOL } sig_kind;

typedef struct sig_param {
  char name[64];   /* "a", or "" when unnamed */
  char type[96];   /* as written, whitespace tidied: "const float *" */
  sig_kind kind;
  int dtype;       /* pointee dtype for pointers, value dtype for scalars; -1 when none fits */
  int is_const;    /* pointer to const */
} sig_param;

typedef struct sig_kernel {
  char name[SIG_NAME_LEN];
  int is_template;         /* needs an explicit instantiation to be launched */
  int nparams;             /* -1 when the parameter list could not be read */
  sig_param params[SIG_MAX_PARAMS];
} sig_kernel;

/* Finds up to max __global__ functions in src (comments and strings skipped); returns how many. */
int sig_find_kernels(const char *src, sig_kernel *out, int max);
/* "inc(float *a, int n)" into buf, for messages. */
void sig_format(const sig_kernel *k, char *buf, unsigned len);

#endif
