/* sim_load.c: the loader: PTX text to a module ready to run. The parser (ptx_parse.c) turns the
 * text into a decoded, laid-out module; then the load-time passes run, in this order: what ptxas
 * contracts and folds (sim_contract.c), the control-flow graph's reconvergence points
 * (sim_cfg.c), and the marks of the timing model and of the init check (sim_mark.c).
 * sim_module_load (sim_device.c) is its one caller.
 *
 * Stance: the parser only parses, and no pass knows of the parser, so each can be read and
 * tested on its own and a new pass is one line here. The order is part of the result: the
 * contraction rewrites instructions the graph and the marks then read. */
#include "sim_load.h"
#include "ptx_parse.h"

sim_module *sim_load(const char *ptx, size_t len, char *err, size_t errlen) {
  sim_module *m = ptx_parse(ptx, len, err, errlen);
  if (!m) return NULL;
  if (sim_contract(m, err, errlen) != 0 || sim_cfg_build(m, err, errlen) != 0) {
    sim_module_free(m);
    return NULL;
  }
  sim_mark_lat(m);
  sim_mark_fold(m);
  sim_mark_stores(m);
  return m;
}
