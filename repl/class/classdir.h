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
  char path[4096];  /* DIR as it was given, without trailing slashes, for messages */
} classdir;

/* One file of a folder read by classdir_lessons or classdir_records: its text, or why not. */
typedef struct classdir_file {
  char name[256];    /* its name in the folder */
  uid_t uid;         /* its owner, from the kernel (never from its name) */
  char *text;        /* its content, NUL-terminated (malloc'd); NULL when refused */
  size_t len;        /* bytes in text */
  char problem[640]; /* why it was refused; "" when text is set */
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

/* Writes the caller's record (len bytes) atomically into records/<uid>.json, or the first of
 * <uid>.1.json, <uid>.2.json ... that is the caller's or free when others squat that name. */
int classdir_write_record(const classdir *cd, const char *text, size_t len, char *msg,
                          size_t msglen);

/* The caller's record: 1 with *text (malloc'd) and *len, 0 when there is none yet, or -1. */
int classdir_read_own_record(const classdir *cd, char **text, size_t *len, char *msg,
                             size_t msglen);

/* Every entry of records/ (temporaries aside), sorted by owner then name, into out: records
 * with their text, anything else (a link, a forged name, too large ...) with its problem (a
 * short phrase). -1 when records/ cannot be listed by the caller (only the instructor can).
 * Also removes temporaries that saves killed half-way left behind. */
int classdir_records(const classdir *cd, classdir_list *out, char *msg, size_t msglen);

#endif
