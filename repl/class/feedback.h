/* feedback.h: a learner's published results in the class folder, DIR/feedback/<uid>.json,
 * written by the instructor (cudalab --grade --publish) and read by that learner alone (grades()).
 * Used by bind_class.c. Plain C: 0 (or 1) on success, -1 with a whole sentence in msg. */
#ifndef CUDALAB_FEEDBACK_H
#define CUDALAB_FEEDBACK_H

#include <stddef.h>
#include <sys/types.h>

#include "classdir.h"

#define FEEDBACK_MAX ((size_t)4 << 20) /* bytes of one learner's results */

/* Writes text (len bytes) as uid's results, atomically, readable by uid alone besides the
 * instructor: the caller must be the class's owner or root. feedback/ is made (mode 0711, the
 * instructor's) when missing. The file is the instructor's, mode 0640 with a POSIX ACL giving
 * uid read and the owning group nothing; where the filesystem has no ACLs, root makes it uid's
 * own, mode 0400, and anyone else is refused with what to do. */
int feedback_publish(const classdir *cd, uid_t uid, const char *text, size_t len, char *msg,
                     size_t msglen);

/* The caller's results: 1 with *text (malloc'd, NUL-terminated) and *len, 0 when none have been
 * published, or -1. Only a file the instructor (or root) keeps in the instructor's feedback/,
 * or one root made the caller's own, is read. */
int feedback_read(const classdir *cd, char **text, size_t *len, char *msg, size_t msglen);

#endif
