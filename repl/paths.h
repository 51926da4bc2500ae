/* paths.h: where cudalab keeps its files: the Lua library and kernels it ships (data), history
 * and lesson progress (state, $XDG_STATE_HOME/cudalab) and the kernel cache ($XDG_CACHE_HOME).
 * User directories are created private (0700) on first use. */
#ifndef CUDALAB_PATHS_H
#define CUDALAB_PATHS_H

#include <stddef.h>

/* The folder holding lua/ and kernels/: $CUDALAB_HOME, else found next to the executable
 * (a build tree's root, or PREFIX/share/cudalab). 0 on success, -1 if none is found. */
int paths_data_dir(char *out, size_t len);
/* $XDG_STATE_HOME/cudalab (default ~/.local/state/cudalab), created 0700. -1 if unusable. */
int paths_state_dir(char *out, size_t len);
/* $XDG_CACHE_HOME/cudalab (default ~/.cache/cudalab), created 0700. -1 if unusable. */
int paths_cache_dir(char *out, size_t len);
/* mkdir -p with mode 0700 for what it creates; 0 or -1 with errno. */
int paths_mkdirs(const char *path);

#endif
