/* gpu_slots.c: a class's sessions on one GPU, counted with slots. Slot i of (key, device) is
 * the Unix socket named "\0cudalab-gpu-<key>-<device>-<i>" in Linux's abstract namespace: a
 * process holds the slot by having a socket bound to that name, and nobody else can bind it
 * meanwhile. The name belongs to the socket, not to a file, so the kernel frees it when the
 * last descriptor closes: a session that crashes or is killed with SIGKILL gives its slot back
 * at once, where a lock file or a counter in shared memory would keep it until someone cleaned
 * up. Turned down: flock on files in /tmp (a stale file per slot, and a directory every user
 * must be able to write), and asking nvidia-smi how many processes use the GPU (it counts other
 * programs too, and cannot tell one class from another).
 *
 * A key that is not a short plain name (a class folder's path, say) is named by its SipHash
 * under a fixed key ("k" and 16 hex digits): a hash to tell names apart, not to keep a secret.
 *
 * The namespace is the network namespace's: sessions in one container, or on one host, see
 * each other's slots; sessions in two containers with their own network do not.
 *
 * Datagram sockets, because nothing is ever sent: a count asks whether a name is bound by
 * connecting to it, which for a datagram socket succeeds exactly when one is bound and
 * disturbs no one, where probing by binding would hold the slot for a moment and could make a
 * session starting at that moment see its last free slot taken.
 *
 * What a learner can and cannot do: every session of theirs first takes one of a few slots of
 * their own uid (gpu_slot_take_learner), so opening thirty terminals takes at most
 * GPU_SLOTS_PER_LEARNER of the room's slots, and a session that ends or crashes gives both back.
 * An abstract name has no owner or mode: a learner who writes a program of their own to bind the
 * names can squat slots while it runs, as such a program could also hold the GPU's memory
 * directly; the slots order cudalab's sessions, they do not police the GPU. Turned down for
 * that: slot files in the class folder under flock, which a learner's program can lock as well. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "gpu_slots.h"
#include "siphash.h"

int gpu_slot_key_ok(const char *key) {
  size_t n = key ? strlen(key) : 0;
  if (n == 0 || n > GPU_SLOT_KEY_MAX) return 0;
  for (size_t i = 0; i < n; i++)
    if (key[i] <= ' ' || key[i] > '~') return 0;
  return 1;
}

/* The address of slot i; its length (the abstract name has no terminating NUL) in *len, or -1
 * when the key is empty or the device is not a name. */
static int slot_address(const char *key, const char *device, int i, struct sockaddr_un *a,
                        socklen_t *len) {
  static const unsigned char hash_key[SIPHASH_KEY_BYTES] = "cudalab-gpu-key";
  if (!key || !key[0] || !gpu_slot_key_ok(device) || i < 0) return -1;
  char hashed[24];
  if (!gpu_slot_key_ok(key)) {
    snprintf(hashed, sizeof hashed, "k%016llx",
             (unsigned long long)siphash24(hash_key, key, strlen(key)));
    key = hashed;
  }
  memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  int n = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "cudalab-gpu-%s-%s-%d", key,
                   device, i);
  if (n < 0 || (size_t)n >= sizeof a->sun_path - 1) return -1;
  *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
  return 0;
}

/* Close-on-exec, so that a program the learner starts (os.execute) never holds a slot; a child
 * forked without exec (a compile) holds it no longer than it lives. */
static int new_socket(void) { return socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0); }

int gpu_slot_take(const char *key, const char *device, int max, int *fd, char *err,
                  size_t errlen) {
  *fd = -1;
  struct sockaddr_un a;
  socklen_t len;
  if (slot_address(key, device, 0, &a, &len) != 0) {
    snprintf(err, errlen, "cannot name a GPU slot after %s and device '%s'",
             key && key[0] ? "that key" : "an empty key", device ? device : "(none)");
    return -2;
  }
  int s = new_socket();
  if (s < 0) {
    snprintf(err, errlen, "cannot count GPU sessions: socket: %s", strerror(errno));
    return -2;
  }
  for (int i = 0; i < max; i++) {
    slot_address(key, device, i, &a, &len);
    if (bind(s, (struct sockaddr *)&a, len) == 0) {
      *fd = s;
      return i;
    }
    if (errno != EADDRINUSE) {
      snprintf(err, errlen, "cannot take a GPU slot: bind: %s", strerror(errno));
      close(s);
      return -2;
    }
  }
  close(s);
  snprintf(err, errlen, "all %d slots are taken", max);
  return -1;
}

int gpu_slot_count(const char *key, const char *device, int max) {
  struct sockaddr_un a;
  socklen_t len;
  if (slot_address(key, device, 0, &a, &len) != 0) return -1;
  int s = new_socket();
  if (s < 0) return -1;
  int held = 0;
  for (int i = 0; i < max; i++) {
    slot_address(key, device, i, &a, &len);
    if (connect(s, (struct sockaddr *)&a, len) == 0) held++;
  }
  close(s);
  return held;
}

int gpu_slots_default(size_t total, size_t context_bytes, size_t memory_needed) {
  size_t each = context_bytes + memory_needed;
  if (total == 0 || each == 0) return GPU_SLOTS_CONTEXTS_MAX;
  size_t fit = total / each;
  if (fit > GPU_SLOTS_CONTEXTS_MAX) return GPU_SLOTS_CONTEXTS_MAX;
  return fit < 1 ? 1 : (int)fit;
}

int gpu_slot_take_learner(const char *key, unsigned uid, int per_learner, int *fd, char *err,
                          size_t errlen) {
  char who[32];
  snprintf(who, sizeof who, "learner-%u", uid);
  int got = gpu_slot_take(key, who, per_learner, fd, err, errlen);
  if (got == -1)
    snprintf(err, errlen, "you have %d GPU sessions of this class open already (the most one "
             "learner may hold)", per_learner);
  return got < 0 ? got : 0;
}

void gpu_slot_release(int fd) {
  if (fd >= 0) close(fd);
}
