/* nvrtc_lib.h: finding libnvrtc and loading it. cudalab does not link NVRTC: only the process
 * that compiles loads it (nvrtc.c, in the child nvrtc_child.c forks for each compile). Used by
 * nvrtc.c (loading), includes.c (the toolkit's headers beside it), blas_cublas.c (cuBLAS beside
 * it) and nvrtc_version_string (the banner, the kernel cache's key). */
#ifndef CUDALAB_NVRTC_LIB_H
#define CUDALAB_NVRTC_LIB_H

/* The path of the library a compile loads, found without loading it in this process; NULL when
 * there is none. */
const char *nvrtc_lib_path(void);
/* Its version, "13.0", likewise; NULL when there is no NVRTC. */
const char *nvrtc_lib_version(void);
/* Loads the library in this process (once; later calls return the same handle), for dlsym.
 * NULL when it cannot be loaded, with in *why (malloc'd, the caller frees; NULL out of memory)
 * a message for the learner that names each file tried and what the loader said. */
void *nvrtc_lib_open(char **why);

#endif
