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

#endif
