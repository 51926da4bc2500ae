/* gpu_slots.h: counting the sessions of a class on one GPU across processes, with slots that
 * the kernel gives back when a process ends. Used by backend_cuda.c (cuda.gpu_admit) and
 * tests/unit/test_gpu_slots.c. Plain C: no CUDA, no Lua. */
#ifndef CUDALAB_GPU_SLOTS_H
#define CUDALAB_GPU_SLOTS_H

#include <stddef.h>

/* The longest key a slot's name holds as it is; a longer one is hashed. */
#define GPU_SLOT_KEY_MAX 64

/* 1 when key goes into a slot's name as it is: 1 to GPU_SLOT_KEY_MAX printable ASCII
 * characters, no spaces; else 0. Any other non-empty key (a path with spaces, a long one) is
 * replaced in the name by its hash, so that every non-empty string can name a class. Device
 * names must pass this check. */
int gpu_slot_key_ok(const char *key);

/* Takes the lowest free slot of 0 .. max-1 for (key, device), device being the GPU's PCI bus id
 * or any other name of it without spaces. Returns the slot, with *fd the descriptor that holds
 * it: the slot is this process's until gpu_slot_release(*fd) or until the process ends, however
 * it ends. Returns -1 when every slot is taken, -2 on another failure (an empty key, a bad
 * device name, no sockets), with err saying why; *fd is then -1. */
int gpu_slot_take(const char *key, const char *device, int max, int *fd, char *err,
                  size_t errlen);

/* How many of the slots 0 .. max-1 of (key, device) are held now, by any process (this one
 * included); -1 when that cannot be told (no sockets). Takes nothing. */
int gpu_slot_count(const char *key, const char *device, int max);

/* A GPU's slots when the class gives no number: as many sessions as its memory holds, each a
 * context (context_bytes) and the class's memory per learner (memory_needed), and never more
 * than GPU_SLOTS_CONTEXTS_MAX, the contexts one GPU was measured to make. total 0 (unknown):
 * GPU_SLOTS_CONTEXTS_MAX. At least 1. */
#define GPU_SLOTS_CONTEXTS_MAX 60
int gpu_slots_default(size_t total, size_t context_bytes, size_t memory_needed);

/* Takes one of the per_learner slots of learner uid in the class key (on any GPU), so that one
 * learner's many sessions cannot take the room's GPU: 0 and *fd as gpu_slot_take, -1 when all
 * of them are held (err says so), -2 on another failure. */
#define GPU_SLOTS_PER_LEARNER 2
int gpu_slot_take_learner(const char *key, unsigned uid, int per_learner, int *fd, char *err,
                          size_t errlen);

/* Gives back the slot fd holds; -1 is ignored. */
void gpu_slot_release(int fd);

#endif
