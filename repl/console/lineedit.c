/* lineedit.c: readline's callback interface driven by our own select() loop, rather than the
 * blocking readline(): a Ctrl-C at the prompt then arrives as EINTR here, where the line can be
 * cleared and a fresh prompt drawn, instead of inside readline's signal handling. On a pipe the
 * same calls read with getline and print no prompt, so transcripts hold only output.
 *
 * Readline is loaded only here, on a terminal (readline_lib.c says why it is not linked). A
 * terminal whose readline cannot be loaded gets the plain reads with a prompt, and one line
 * that says history and completion are off and how to have them.
 *
 * History is appended after every entry (a crash loses nothing) and trimmed at start and exit,
 * one entry a line however many lines it has (histfile.c). A history file that cannot be written
 * is reported once, then ignored. Readline opens the file by name
 * and follows links, so each of its calls is preceded by our own check: a symbolic link, a FIFO
 * or someone else's file in its place is left untouched, and the learner is told why.
 *
 * Ctrl-Z at the prompt is ours to handle, because readline's own signal handling is off (see
 * above): left to the default action the process stops with the terminal in readline's raw
 * mode, the shell puts its own cooked mode back, and after fg the learner's keys waited for
 * Enter with no line editing. So SIGTSTP, only while a line is being read, gives the terminal
 * back (rl_cleanup_after_signal), stops for real, and on SIGCONT takes the terminal again and
 * redraws the prompt and the line (rl_reset_after_signal, rl_forced_update_display). Outside
 * the prompt (a kernel running) Ctrl-Z keeps its default action. The two signals stay blocked
 * except inside pselect, so one that arrives while a key is handled is not missed. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <unistd.h>

#include "histfile.h"
#include "line_read.h"
#include "lineedit.h"
#include "readline_lib.h"

#define HISTORY_MAX 1000
#define HISTORY_FILE_MAX ((off_t)16 << 20) /* a file kept to HISTORY_MAX entries is far smaller */

static struct {
  int tty;                         /* a terminal: a prompt is printed */
  const readline_lib *rl;          /* readline, when on a terminal and it could be loaded */
  const char *history;             /* file, or NULL */
  int history_broken;              /* could not write it: said so once */
  lineedit_completer complete;     /* asks the engine */
  volatile sig_atomic_t *sigint;   /* console's Ctrl-C count */
  char *got;                       /* the line readline handed us */
  int done;                        /* the handler ran (got may be NULL: EOF) */
  volatile sig_atomic_t stop;      /* SIGTSTP arrived at the prompt */
  volatile sig_atomic_t cont;      /* SIGCONT arrived at the prompt */
} le;

static char **candidates_for(const char *text, const char *before) {
  size_t len = 0;
  char *buf = le.complete ? le.complete(text, before, &len) : NULL;
  if (!buf || !len) {
    free(buf);
    return NULL;
  }
  size_t n = 0;
  for (size_t off = 0; off < len; off += strlen(buf + off) + 1) n++;
  /* readline wants [common prefix, match1, ..., NULL]. */
  char **m = calloc(n + 2, sizeof *m);
  if (!m) {
    free(buf);
    return NULL;
  }
  size_t i = 1;
  for (size_t off = 0; off < len; off += strlen(buf + off) + 1) m[i++] = strdup(buf + off);
  size_t common = strlen(m[1]);
  for (size_t k = 2; k <= n; k++)
    for (size_t c = 0; c < common; c++)
      if (m[k][c] != m[1][c]) {
        common = c;
        break;
      }
  m[0] = strndup(m[1], common);
  if (n == 1) {
    free(m[0]);
    m[0] = m[1];
    m[1] = NULL;
  }
  free(buf);
  return m;
}

/* The word's place on the line goes with it: after "print(" an array's name is a value, and
 * forcing the ":" of a method call there would be wrong. */
static char **attempt_completion(const char *text, int start, int end) {
  (void)end;
  *le.rl->rl_attempted_completion_over = 1; /* never fall back to file names */
  *le.rl->rl_completion_suppress_append = 1; /* candidates carry their own suffix: ( . : */
  const char *line = *le.rl->rl_line_buffer;
  char *before = strndup(line ? line : "", start > 0 ? (size_t)start : 0);
  char **m = before ? candidates_for(text, before) : NULL;
  free(before);
  return m;
}

static void on_line(char *line) {
  le.got = line;
  le.done = 1;
  le.rl->rl_callback_handler_remove();
}

/* Opens the history file with flags (O_CREAT makes it 0600) without following a link or waiting
 * on a FIFO, and checks that it is a regular file of ours. Returns the descriptor (the caller
 * closes it); -1 with errno set when it cannot be opened (ENOENT: there is none yet); -2 when
 * it is there but not ours to touch, with the reason in *why. */
static int history_open(int flags, const char **why) {
  int fd = open(le.history, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == ELOOP) {
      *why = "is a symbolic link";
      return -2;
    }
    if (errno == ENXIO) { /* a FIFO nobody reads */
      *why = "is not a regular file";
      return -2;
    }
    return -1;
  }
  struct stat st;
  *why = NULL;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) *why = "is not a regular file";
  else if (st.st_uid != geteuid()) *why = "is not owned by you";
  else if (st.st_mode & 022) *why = "can be written by others (chmod 600 would fix that)";
  if (!*why) return fd;
  close(fd);
  return -2;
}

/* Stops using the history file, saying once why and what to do about it. */
static void history_refuse(const char *why) {
  fprintf(stderr, "cudalab: history is not saved because %s %s; remove it and cudalab will start "
                  "a new one\n", le.history, why);
  le.history = NULL;
}

/* The entries read from the history file: strdup'd, in the file's order. */
typedef struct entries {
  char **v;        /* the entries */
  size_t n, cap;   /* used and allocated */
  int failed;      /* out of memory: some are missing */
} entries;

static void entries_add(const char *entry, void *ud) {
  entries *e = ud;
  if (e->n == e->cap) {
    size_t cap = e->cap ? 2 * e->cap : 256;
    char **v = realloc(e->v, cap * sizeof *v);
    if (!v) {
      e->failed = 1;
      return;
    }
    e->v = v;
    e->cap = cap;
  }
  if (!(e->v[e->n] = strdup(entry))) e->failed = 1;
  else e->n++;
}

/* Reads the whole history file into a malloc'd buffer; -2 (refused, *why says why) when it is
 * not ours or too large, -1 when it cannot be read (ENOENT: none yet). */
static int history_slurp(char **text, size_t *len, const char **why) {
  int fd = history_open(O_RDONLY, why);
  if (fd < 0) return fd;
  struct stat st;
  int rc = -1;
  *text = NULL;
  if (fstat(fd, &st) != 0) {
    rc = -1;
  } else if (st.st_size > HISTORY_FILE_MAX) {
    *why = "is over 16 MiB";
    rc = -2;
  } else if ((*text = malloc((size_t)st.st_size + 1))) {
    ssize_t got = 0, r = 0;
    while (got < st.st_size && (r = read(fd, *text + got, (size_t)(st.st_size - got))) > 0)
      got += r;
    *len = (size_t)got;
    rc = r < 0 ? -1 : 0;
  }
  close(fd);
  if (rc != 0) {
    free(*text);
    *text = NULL;
  }
  return rc;
}

/* Replaces the history file with entries, atomically (a temporary file beside it, then rename),
 * so that a session that dies half-way leaves the old file. 0, or -1 with errno set. */
static int history_replace(const char *const *v, size_t n) {
  size_t plen = strlen(le.history);
  char *tmp = malloc(plen + 8);
  if (!tmp) return -1;
  memcpy(tmp, le.history, plen);
  memcpy(tmp + plen, ".XXXXXX", 8);
  int fd = mkstemp(tmp), rc = -1;
  if (fd >= 0) {
    rc = fchmod(fd, 0600) == 0 && histfile_write(fd, v, n) == 0 ? 0 : -1;
    if (close(fd) != 0) rc = -1;
    if (rc == 0) rc = rename(tmp, le.history);
    if (rc != 0) unlink(tmp);
  }
  free(tmp);
  return rc;
}

/* Reads the history file, giving readline its last HISTORY_MAX entries when load is set, and
 * writes the file again when it holds more than that or is in readline's old format. */
static void history_sync(int load) {
  char *text;
  size_t len;
  const char *why;
  int rc = history_slurp(&text, &len, &why);
  if (rc == -2) history_refuse(why);
  if (rc != 0) return;
  entries e = {0};
  int current;
  histfile_parse(text, len, entries_add, &e, &current);
  free(text);
  size_t first = e.n > HISTORY_MAX ? e.n - HISTORY_MAX : 0;
  for (size_t i = first; load && i < e.n; i++) le.rl->add_history(e.v[i]);
  if (!e.failed && (!current || first > 0) &&
      history_replace((const char *const *)e.v + first, e.n - first) != 0) {
    le.history_broken = 1;
    fprintf(stderr, "cudalab: cannot write history to %s (%s); history is kept for this session "
                    "only\n", le.history, strerror(errno));
  }
  for (size_t i = 0; i < e.n; i++) free(e.v[i]);
  free(e.v);
}

void lineedit_init(int tty, const char *history_file, lineedit_completer complete,
                   volatile sig_atomic_t *sigint) {
  le.tty = tty;
  le.history = history_file;
  le.complete = complete;
  le.sigint = sigint;
  if (!tty) return;
  const char *why;
  le.rl = readline_lib_load(&why);
  if (!le.rl) {
    fprintf(stderr, "cudalab: history and completion are off: GNU Readline could not be loaded "
                    "(%s); install libreadline8 to have them\n", why);
    return;
  }
  *le.rl->rl_readline_name = "cudalab";
  *le.rl->rl_catch_signals = 0;
  *le.rl->rl_attempted_completion_function = attempt_completion;
  *le.rl->rl_completer_word_break_characters = " \t\n\"\\'`@$><=;|&{(,+-*/%^~#)}[]";
  *le.rl->rl_completion_append_character = '\0';
  le.rl->using_history();
  le.rl->stifle_history(HISTORY_MAX);
  if (history_file) history_sync(1);
}

/* A line read with getline: from a pipe, or from a terminal without readline, where it acts as
 * readline's prompt does: the prompt is printed first, Ctrl-C (a read cut short by the
 * console's SIGINT handler, which does not restart it) drops the line, and Ctrl-D leaves the
 * cursor on a clean line. */
static char *read_plain(const char *prompt, int *interrupted) {
  sig_atomic_t seen = le.sigint ? *le.sigint : 0;
  if (le.tty) {
    fputs(prompt, stdout);
    fflush(stdout);
  }
  char *line = line_read(stdin);
  if (!line) {
    *interrupted = le.tty && errno == EINTR && le.sigint && *le.sigint != seen;
    if (*interrupted) clearerr(stdin);
    if (le.tty) fputc('\n', stdout);
  }
  return line;
}

static void on_stop_signal(int sig) {
  if (sig == SIGTSTP) le.stop = 1;
  else le.cont = 1;
}

/* While a line is read: catch SIGTSTP and SIGCONT, blocked but where *unblocked says (the mask
 * pselect waits with). The previous mask and actions go to *saved_mask and old[2]. */
static void stop_signals_catch(sigset_t *saved_mask, sigset_t *unblocked, struct sigaction old[2]) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTSTP, &sa, &old[0]);
  sigaction(SIGCONT, &sa, &old[1]);
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGTSTP);
  sigaddset(&block, SIGCONT);
  sigprocmask(SIG_BLOCK, &block, saved_mask);
  *unblocked = *saved_mask;
  sigdelset(unblocked, SIGTSTP);
  sigdelset(unblocked, SIGCONT);
}

static void stop_signals_restore(const sigset_t *saved_mask, const struct sigaction old[2]) {
  sigaction(SIGTSTP, &old[0], NULL);
  sigaction(SIGCONT, &old[1], NULL);
  sigprocmask(SIG_SETMASK, saved_mask, NULL);
  le.stop = le.cont = 0;
}

/* Ctrl-Z at the prompt: terminal back as it was, stop (the default action, so the shell sees a
 * stopped job), and once continued take the terminal again and redraw. A SIGCONT alone (after
 * a SIGSTOP, which cannot be caught) needs the same retaking, since the shell may have changed
 * the terminal's modes meanwhile. */
static void stop_and_resume(const sigset_t *unblocked, const struct sigaction *tstp_old) {
  le.rl->rl_cleanup_after_signal();
  if (le.stop) {
    struct sigaction mine;
    sigaction(SIGTSTP, tstp_old, &mine);
    sigset_t was;
    sigprocmask(SIG_SETMASK, unblocked, &was);
    raise(SIGTSTP); /* stops here until SIGCONT */
    sigprocmask(SIG_SETMASK, &was, NULL);
    sigaction(SIGTSTP, &mine, NULL);
  }
  le.stop = le.cont = 0;
  le.rl->rl_reset_after_signal();
  le.rl->rl_forced_update_display();
}

/* Ctrl-C at the prompt: drop the line, as a shell does. */
static void drop_line(void) {
  le.rl->rl_free_line_state();
  le.rl->rl_callback_sigcleanup();
  le.rl->rl_replace_line("", 0);
  le.rl->rl_callback_handler_remove();
  fputs("^C\n", stdout);
}

/* Waits for keys and feeds them to readline until a line is complete; 1 when Ctrl-C was
 * pressed instead. */
static int read_keys(const sigset_t *unblocked, const struct sigaction *tstp_old) {
  sig_atomic_t seen = *le.sigint;
  while (!le.done) {
    fd_set fds;
    FD_ZERO(&fds);
    FD_SET(STDIN_FILENO, &fds);
    int r = pselect(STDIN_FILENO + 1, &fds, NULL, NULL, NULL, unblocked);
    if (r < 0 && errno == EINTR) {
      if (*le.sigint != seen) {
        drop_line();
        return 1;
      }
      if (le.stop || le.cont) stop_and_resume(unblocked, tstp_old);
      else le.rl->rl_resize_terminal(); /* SIGWINCH */
      continue;
    }
    if (r > 0) le.rl->rl_callback_read_char();
  }
  return 0;
}

char *lineedit_read(const char *prompt, int *interrupted) {
  *interrupted = 0;
  if (!le.rl) return read_plain(prompt, interrupted);
  le.done = 0;
  le.got = NULL;
  sigset_t saved, unblocked;
  struct sigaction old[2];
  stop_signals_catch(&saved, &unblocked, old);
  le.rl->rl_callback_handler_install(prompt, on_line);
  *interrupted = read_keys(&unblocked, &old[0]);
  stop_signals_restore(&saved, old);
  if (*interrupted) return NULL;
  if (!le.got) fputc('\n', stdout); /* Ctrl-D: leave the cursor on a clean line */
  return le.got;
}

/* Appends one entry to the open history file, the header first into a new one. 0 or -1. */
static int history_append(int fd, const char *chunk) {
  struct stat st;
  size_t len;
  if (fchmod(fd, 0600) != 0 || fstat(fd, &st) != 0) return -1;
  if (st.st_size == 0 && histfile_write(fd, NULL, 0) != 0) return -1;
  char *line = histfile_encode(chunk, &len);
  int rc = line && write(fd, line, len) == (ssize_t)len ? 0 : -1;
  free(line);
  return rc;
}

void lineedit_save(const char *chunk) {
  if (!le.rl || !chunk[strspn(chunk, " \t\n")]) return;
  int n = *le.rl->history_length;
  HIST_ENTRY *last = n > 0 ? le.rl->history_get(*le.rl->history_base + n - 1) : NULL;
  if (last && strcmp(last->line, chunk) == 0) return;
  le.rl->add_history(chunk);
  if (!le.history || le.history_broken) return;
  const char *why;
  int fd = history_open(O_WRONLY | O_APPEND | O_CREAT, &why);
  if (fd == -2) {
    history_refuse(why);
    return;
  }
  if (fd < 0 || history_append(fd, chunk) != 0) {
    le.history_broken = 1;
    fprintf(stderr, "cudalab: cannot write history to %s; history is kept for this session only\n",
            le.history);
  }
  if (fd >= 0) close(fd);
}

void lineedit_free(char *line) { free(line); }

void lineedit_close(void) {
  if (le.rl && le.history && !le.history_broken) history_sync(0);
}
