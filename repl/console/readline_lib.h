/* readline_lib.h: GNU Readline, loaded with dlopen only when the console reads from a terminal.
 * Used by lineedit.c, its one user.
 *
 * The table's fields are named after readline's own functions and variables and have their
 * types from readline's headers (a function's field points to the function, a variable's field
 * to the variable), so a call that does not match the header still fails to build. */
#ifndef CUDALAB_READLINE_LIB_H
#define CUDALAB_READLINE_LIB_H

#include <stdio.h> /* readline.h uses FILE without including stdio.h */

/* Some readline headers declare K&R-style prototypes; they are not ours to fix. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <readline/history.h>
#include <readline/readline.h>
#pragma GCC diagnostic pop

/* What lineedit.c uses of readline and of its history library. */
#define READLINE_FUNCTIONS(X)                                                                 \
  X(rl_callback_handler_install) X(rl_callback_handler_remove) X(rl_callback_read_char)       \
  X(rl_callback_sigcleanup) X(rl_cleanup_after_signal) X(rl_reset_after_signal)               \
  X(rl_forced_update_display) X(rl_free_line_state) X(rl_replace_line) X(rl_resize_terminal)  \
  X(using_history) X(stifle_history) X(history_get) X(add_history)
#define READLINE_VARIABLES(X)                                                                 \
  X(rl_readline_name) X(rl_catch_signals) X(rl_attempted_completion_function)                 \
  X(rl_completer_word_break_characters) X(rl_completion_append_character)                     \
  X(rl_attempted_completion_over) X(rl_completion_suppress_append) X(history_length)          \
  X(history_base) X(rl_line_buffer)

#define READLINE_FIELD(name) __typeof__(name) *name;
typedef struct {
  READLINE_FUNCTIONS(READLINE_FIELD) /* rl->add_history(line) */
  READLINE_VARIABLES(READLINE_FIELD) /* *rl->history_length */
} readline_lib;
#undef READLINE_FIELD

/* Loads the library (once; later calls return the same table) and looks up every name above.
 * NULL when it cannot be loaded or lacks one of them, with in *why (static, the caller does
 * not free it) what the loader said or which name is missing. */
const readline_lib *readline_lib_load(const char **why);

#endif
