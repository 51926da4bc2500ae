/* test_gpu_slots.c: the session slots of repl/backend/gpu_slots.c, which need no GPU: the lowest free
 * slot is taken, a full set says so, a slot given back is taken again, counts see every holder,
 * keys and devices keep their slots apart, another process sees this one's slots, and a process
 * killed with SIGKILL gives its slot back. Keys carry this process's id, so that two runs at
 * once (make -j, two checkouts) do not meet. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu_slots.h"
#include "check.h"

#define DEV "0000:65:00.0"

/* A child that takes a slot of (key, DEV, max), tells the parent which through a pipe, and
 * waits to be killed (at most 30 s). Returns its pid, with the slot in *slot (-3 when the child failed). */
static pid_t holder(const char *key, int max, int *slot) {
  int p[2];
  *slot = -3;
  if (pipe(p) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    int fd;
    char err[256];
    int got = gpu_slot_take(key, DEV, max, &fd, err, sizeof err);
    if (write(p[1], &got, sizeof got) != (ssize_t)sizeof got) _exit(1);
    alarm(30); /* ends it should this test die before killing it */
    for (;;) pause();
  }
  close(p[1]);
  if (pid > 0 && read(p[0], slot, sizeof *slot) != (ssize_t)sizeof *slot) *slot = -3;
  close(p[0]);
  return pid;
}

int main(void) {
  PLAN(19);
  char key[64], other[64], err[256];
  snprintf(key, sizeof key, "unit-%ld", (long)getpid());
  snprintf(other, sizeof other, "unit-other-%ld", (long)getpid());

  CHECK("keys: printable, no spaces, 1 to 64 characters",
        gpu_slot_key_ok("class-2024_a.b") && !gpu_slot_key_ok("") && !gpu_slot_key_ok("a b") &&
            !gpu_slot_key_ok("tab\there") && !gpu_slot_key_ok(NULL) &&
            gpu_slot_key_ok("0123456789012345678901234567890123456789012345678901234567890123") &&
            !gpu_slot_key_ok("01234567890123456789012345678901234567890123456789012345678901234"));

  int fd[4] = {-1, -1, -1, -1};
  int s0 = gpu_slot_take(key, DEV, 3, &fd[0], err, sizeof err);
  int s1 = gpu_slot_take(key, DEV, 3, &fd[1], err, sizeof err);
  int s2 = gpu_slot_take(key, DEV, 3, &fd[2], err, sizeof err);
  CHECK("slots are taken lowest first", s0 == 0 && s1 == 1 && s2 == 2);
  CHECK("a count sees the three held", gpu_slot_count(key, DEV, 3) == 3);
  int full = gpu_slot_take(key, DEV, 3, &fd[3], err, sizeof err);
  CHECK("a full set refuses, says so, and leaves no descriptor",
        full == -1 && fd[3] == -1 && strstr(err, "all 3 slots are taken") != NULL);

  gpu_slot_release(fd[1]);
  CHECK("a slot given back is free again", gpu_slot_count(key, DEV, 3) == 2);
  CHECK("and the next session takes that one",
        gpu_slot_take(key, DEV, 3, &fd[1], err, sizeof err) == 1);

  int ofd = -1;
  CHECK("another key has slots of its own",
        gpu_slot_take(other, DEV, 3, &ofd, err, sizeof err) == 0);
  int dfd = -1;
  CHECK("so has another GPU", gpu_slot_take(key, "0000:66:00.0", 3, &dfd, err, sizeof err) == 0 &&
                                  gpu_slot_count(key, "0000:66:00.0", 3) == 1);
  int bfd = 0;
  CHECK("an empty key or a bad device is an error, not a full set",
        gpu_slot_take("", DEV, 3, &bfd, err, sizeof err) == -2 && bfd == -1 &&
            gpu_slot_take(key, "a b", 3, &bfd, err, sizeof err) == -2 && bfd == -1 &&
            gpu_slot_count("", DEV, 3) == -1);
  /* a class folder's path with a space, longer than a name holds: hashed, and still its own */
  char path[200], path2[210];
  snprintf(path, sizeof path, "/home/teacher/my classes/2024 spring/cuda-%ld/%0100d",
           (long)getpid(), 0);
  snprintf(path2, sizeof path2, "%s1", path);
  int p1 = -1, p2 = -1, p3 = -1;
  CHECK("any key names slots: a long path with spaces is hashed, and keys stay apart",
        gpu_slot_take(path, DEV, 2, &p1, err, sizeof err) == 0 &&
            gpu_slot_take(path, DEV, 2, &p2, err, sizeof err) == 1 &&
            gpu_slot_take(path2, DEV, 2, &p3, err, sizeof err) == 0 &&
            gpu_slot_count(path, DEV, 2) == 2 && gpu_slot_count(path2, DEV, 2) == 1);
  gpu_slot_release(p1);
  gpu_slot_release(p2);
  gpu_slot_release(p3);

  /* the GPU's own count, where the class gives none: its memory, up to the contexts it makes */
  size_t gib = (size_t)1 << 30, ctx = (size_t)600 << 20;
  CHECK("an H200's 141 GiB hold 60 sessions of 1 GiB each (the most one GPU makes)",
        gpu_slots_default(141 * gib, ctx, gib) == GPU_SLOTS_CONTEXTS_MAX);
  CHECK("a 24 GiB GPU holds 15 of them, 8 GiB learners fit 2 on it; unknown memory: the most",
        gpu_slots_default(24 * gib, ctx, gib) == 15 && gpu_slots_default(24 * gib, ctx, 8 * gib) == 2 &&
            gpu_slots_default(0, ctx, gib) == GPU_SLOTS_CONTEXTS_MAX &&
            gpu_slots_default(gib, ctx, 8 * gib) == 1);
  /* one learner's sessions take at most their own few slots, whatever the room has */
  int l1 = -1, l2 = -1, l3 = -1;
  int t1 = gpu_slot_take_learner(key, 4242, GPU_SLOTS_PER_LEARNER, &l1, err, sizeof err);
  int t2 = gpu_slot_take_learner(key, 4242, GPU_SLOTS_PER_LEARNER, &l2, err, sizeof err);
  int t3 = gpu_slot_take_learner(key, 4242, GPU_SLOTS_PER_LEARNER, &l3, err, sizeof err);
  CHECK("a learner's third session is refused a GPU slot, and told why",
        t1 == 0 && t2 == 0 && t3 == -1 && l3 == -1 &&
            strcmp(err, "you have 2 GPU sessions of this class open already (the most one "
                        "learner may hold)") == 0);
  int lo = -1;
  CHECK("another learner is not held back by it",
        gpu_slot_take_learner(key, 4243, GPU_SLOTS_PER_LEARNER, &lo, err, sizeof err) == 0);
  gpu_slot_release(l2);
  CHECK("a session that ends gives the learner's slot back",
        gpu_slot_take_learner(key, 4242, GPU_SLOTS_PER_LEARNER, &l3, err, sizeof err) == 0);
  gpu_slot_release(l1);
  gpu_slot_release(l3);
  gpu_slot_release(lo);

  /* across processes: the child sees this process's three slots of four and takes the last */
  int slot;
  pid_t pid = holder(key, 4, &slot);
  CHECK("another process sees the slots held here and takes the free one", pid > 0 && slot == 3);
  CHECK("a count here sees the other process's slot", gpu_slot_count(key, DEV, 4) == 4);
  if (pid > 0) {
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
  }
  CHECK("a process killed with SIGKILL gives its slot back", gpu_slot_count(key, DEV, 4) == 3);

  for (int i = 0; i < 3; i++) gpu_slot_release(fd[i]);
  gpu_slot_release(dfd);
  gpu_slot_release(ofd);
  CHECK("every slot released, none held", gpu_slot_count(key, DEV, 4) == 0 &&
                                              gpu_slot_count(key, "0000:66:00.0", 3) == 0);
  return failures != 0;
}
