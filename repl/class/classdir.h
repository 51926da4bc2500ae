/* classdir.h: the class folder of classroom mode, where an instructor's course and the records
 * of many learners (other Unix accounts) meet. Used by bind_class.c (require "cudalab.class").
 *
 * Every file in the folder is treated as an attacker's until checked. Functions return 0 (or a
 * count) on success and -1 with what is wrong and what to do in msg (CLASSDIR_MSG bytes is
 * enough); memory they hand out (texts, lists) is the caller's to free, and is NULL or empty on
 * failure. Plain C: no Lua. */
#ifndef CUDALAB_CLASSDIR_H
#define CUDALAB_CLASSDIR_H

#include <stddef.h>
#include <sys/types.h>

#define CLASSDIR_MSG 2048                  /* a message buffer that holds any message in full */
#define CLASSDIR_CONFIG_MAX ((size_t)64 << 10) /* class.lua */
#define CLASSDIR_LESSON_MAX ((size_t)1 << 20)  /* one lesson file */
#define CLASSDIR_RECORD_MAX ((size_t)8 << 20)  /* one learner's record */

/* An open class folder. Clear it with classdir_clear before classdir_open, which fills it. */
typedef struct classdir {
  int dir;          /* DIR, an O_PATH descriptor: -1 when closed */
  int records;      /* DIR/records, O_PATH (learners may enter, not list it); -1 when closed */
  uid_t owner;      /* DIR's owner, the instructor: class.lua and lessons are theirs or root's */
  gid_t gid;        /* DIR's group: the class's group when restricted */
  gid_t reader_gid; /* records/'s group, which every record inherits: the instructor's own */
  int restricted;   /* 1 when DIR gives others no access (a class made for one group) */
  dev_t records_dev; /* records/'s device and inode: which class a learner's saved record */
  ino_t records_ino; /*   name (classdir_write_record) belongs to, whatever path reached it */
  char path[4096];  /* DIR as it was given, without trailing slashes, for messages */
} classdir;

/* One file of a folder read by classdir_lessons or classdir_records: its text, or why not. */
typedef struct classdir_file {
  char name[256];    /* its name in the folder */
  uid_t uid;         /* its owner, from the kernel (never from its name) */
  char *text;        /* its content, NUL-terminated (malloc'd); NULL when refused */
  size_t len;        /* bytes in text */
  char problem[640]; /* why it was refused; "" when text is set */
  int planted;       /* classdir_records: named as uid claimed's record, but uid's file */
  uid_t claimed;     /* the uid its name claims, when planted */
} classdir_file;

/* A growing array of files; start it zeroed, end it with classdir_list_free. */
typedef struct classdir_list {
  classdir_file *v; /* the files (malloc'd) */
  size_t n;         /* how many are in v */
  size_t cap;       /* how many v has room for */
} classdir_list;

void classdir_list_free(classdir_list *l);

/* The account's name, or "uid N" when it has no passwd entry; same for groups. */
void classdir_user_name(uid_t uid, char *out, size_t len);
void classdir_group_name(gid_t gid, char *out, size_t len);

/* Makes a class folder at dir for the caller (the instructor): class.lua holding config (len
 * bytes), lessons/ and the records/ drop box, group-only when group is not NULL. dir must not
 * exist, or be an empty folder of the caller's. Refuses a primary group shared with other
 * accounts (they could read the records). On failure what it made is removed again. */
int classdir_init(const char *dir, const char *group, const char *config, size_t len, char *msg,
                  size_t msglen);

/* Opens the class at dir into cd (cleared first), after the trust checks: DIR, class.lua and
 * lessons/ writable by no one but their owner, class.lua the instructor's or root's, records/
 * the instructor's with its sticky bit. On failure cd stays closed. classdir_close is
 * idempotent; classdir_clear marks a struct closed without closing anything. */
void classdir_clear(classdir *cd);
int classdir_open(classdir *cd, const char *dir, char *msg, size_t msglen);
void classdir_close(classdir *cd);

/* class.lua's text, checked again as it is read: *text (malloc'd, NUL-terminated) and *len. */
int classdir_read_config(const classdir *cd, char **text, size_t *len, char *msg, size_t msglen);

/* The lesson files (NN-name.md) of the folder path, sorted by name, into out: a relative path
 * is resolved inside DIR one component at a time, never through a link or ".."; an absolute one
 * as given. A file that fails the checks is in out with its problem (a whole sentence naming
 * it) instead of a text. -1 when the folder itself cannot be used. */
int classdir_lessons(const classdir *cd, const char *path, classdir_list *out, char *msg,
                     size_t msglen);

/* Writes the caller's record (len bytes) atomically into records/<uid>.json. When another
 * account planted a file of that name (the sticky bit keeps it there), the record goes to the
 * caller's own <uid>.<k>.json (k = 1..63) or, those planted too, to <uid>.<random hex>.json,
 * and that name is kept in the caller's state folder so the next session finds it again: no
 * set of planted names can stop a learner being recorded. Refused while records/'s group lets
 * an account other than the instructor and the caller read records (classdir_readers). */
int classdir_write_record(const classdir *cd, const char *text, size_t len, char *msg,
                          size_t msglen);

/* The caller's record: 1 with *text (malloc'd) and *len, 0 when there is none yet, or -1. */
int classdir_read_own_record(const classdir *cd, char **text, size_t *len, char *msg,
                             size_t msglen);

/* What classdir_records passed over without opening it, counted by kind for one summary line
 * (a learner can plant a million empty files; the instructor needs to hear of them once). */
typedef struct classdir_skips {
  size_t total;     /* entries that are not records: the kinds below together */
  size_t empty;     /* empty regular files */
  size_t links;     /* symbolic links */
  size_t folders;   /* folders */
  size_t special;   /* FIFOs, sockets, devices */
  size_t names;     /* regular files not named <uid>.json or <uid>.<hex>.json */
  size_t planted;   /* planted files (see classdir_records) past the first 1000, not listed */
  size_t older;     /* a learner's older copies of their record (the newest is read) */
  uid_t owners[4];  /* the owners of the skipped entries, the first four met */
  size_t nowners;   /* how many of owners are set */
  int more_owners;  /* 1 when there were other owners besides */
} classdir_skips;

/* records/ read as the instructor: every entry is looked at (there is no cap junk can use up),
 * and judged by its name and by lstat alone before anything is opened. Into out, sorted by
 * owner then name: for each uid U, the newest regular file owned by U and named U.json or
 * U.<hex>.json, with its text or its problem (too large, writable by anyone ...); and every
 * file named as U's record (U.json, U.*) but owned by someone else, with planted set (the first
 * 1000). Anything else is counted in *skips without being opened. -1 when records/ cannot be
 * listed by the caller (only the instructor can). Also removes temporaries that saves killed
 * half-way left behind. */
int classdir_records(const classdir *cd, classdir_list *out, classdir_skips *skips, char *msg,
                     size_t msglen);

/* The accounts other than the instructor and the caller that can read the records, being in
 * records/'s group (as members, or with it as their primary group): how many, their names
 * ("ben, carl", cut to fit) in who and the commands that fix it in fix ("gpasswd -d ben prof").
 * A group gaining a member after the class was made is why this is asked again at every report,
 * grading and join. Only what NSS enumerates is seen. */
int classdir_readers(const classdir *cd, char *who, size_t wlen, char *fix, size_t flen);

#endif
