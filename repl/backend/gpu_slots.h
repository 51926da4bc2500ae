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

/* Gives back the slot fd holds; -1 is ignored. */
void gpu_slot_release(int fd);

#endif
