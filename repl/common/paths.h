/* paths.h: where cudalab keeps its files: the Lua library and kernels it ships (data), history
 * and lesson progress (state, $XDG_STATE_HOME/cudalab) and the kernel cache ($XDG_CACHE_HOME).
 * User directories are created private (0700) on first use. */
#ifndef CUDALAB_PATHS_H
#define CUDALAB_PATHS_H

#include <stddef.h>

/* The folder holding lua/ and kernels/: $CUDALAB_HOME, else found next to the executable
 * (a build tree's root, or PREFIX/share/cudalab). 0 on success, -1 if none is found. */
int paths_data_dir(char *out, size_t len);
/* $XDG_STATE_HOME/cudalab (default ~/.local/state/cudalab), created 0700. -1 if unusable or
 * not private (see paths_check_private), with why it is refused and how to fix it in why. */
int paths_state_dir(char *out, size_t len, char *why, size_t whylen);
/* $XDG_CACHE_HOME/cudalab (default ~/.cache/cudalab), the same way. */
int paths_cache_dir(char *out, size_t len, char *why, size_t whylen);
/* 0 when path (a folder or file, links followed) is the user's own and neither its group nor
 * others can write it; else -1 with what is wrong and the command that fixes it in why. */
int paths_check_private(const char *path, char *why, size_t whylen);
/* mkdir -p with mode 0700 for what it creates; 0 or -1 with errno. */
int paths_mkdirs(const char *path);

#endif
