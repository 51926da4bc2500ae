/* ptx_parse.h: the parser's entry (ptx_parse.c), for the loader (sim_load.c). The parser's files
 * share ptx_state.h and ptx_emit.h; nothing outside them includes those. */
#ifndef CUDALAB_PTX_PARSE_H
#define CUDALAB_PTX_PARSE_H

#include "sim_int.h"

/* The module decoded and laid out, its debug information read; or NULL with err filled. Never
 * keeps a pointer into ptx. The load-time passes are the loader's to run (sim_load.c). */
sim_module *ptx_parse(const char *ptx, size_t len, char *err, size_t errlen);

#endif
