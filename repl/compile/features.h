/* features.h: CUDA features cudalab does not run, recognised in what the compiler or the
 * simulator says of them, with what to do instead. Used by nvrtc.c (compile logs) and
 * backend_sim.c (a module the simulator refuses); plain C, no Lua. */
#ifndef CUDALAB_FEATURES_H
#define CUDALAB_FEATURES_H

/* The note for the unsupported feature msg (a compile log or a load error) speaks of: a line
 * that names the feature and what to use instead, or NULL when it speaks of none. Static. */
const char *feature_note(const char *msg);

#endif
