/* backend_sim.h: what the simulator backend offers beyond the common interface: the counters
 * of the last launch, for cuda.stats(), and the Ctrl-C flag its launches poll. */
#ifndef CUDALAB_BACKEND_SIM_H
#define CUDALAB_BACKEND_SIM_H

#include <signal.h>

#include "sim.h"

/* The flag a running simulated launch polls; set once by the engine at start-up. */
void backend_sim_attach(volatile sig_atomic_t *interrupt);
/* Launch options a learner can change (cuda.simopts): race checking and host threads. */
sim_launch_opts *backend_sim_options(void);
/* Counters of the last completed launch, or NULL before the first. */
const sim_stats *backend_sim_last_stats(void);
/* The timing model's figures for the latest modelled launch (NULL before the first), and in
 * *launch (may be NULL) how many launches have been modelled, which tells a caller whether a
 * launch happened since it last looked. */
const sim_model_result *backend_sim_last_model(unsigned long long *launch);
unsigned long long backend_sim_launches(void);
/* The modelled device's description, starting the simulator if need be (NULL if it cannot). */
const sim_device_desc *backend_sim_desc(void);
/* Replaces the timing model's parameters (cuda.simopts{perf = ...}); -1 if the simulator
 * cannot start. */
int backend_sim_set_perf(const sim_perf *perf);
/* The latest launch priced again with other parameters (what-if, fitting); -1 before a launch.
 * Parameters that shape the profile itself (cache sizes, atomic costs) keep their old effect. */
int backend_sim_remodel(const sim_perf *perf, sim_model_result *out);

#endif
