/* console.c: the process the learner talks to. It owns the terminal (line editing, history,
 * completion, Ctrl-C) and supervises the engine process that owns Lua and CUDA.
 *
 * The console never touches CUDA, so it can fork a fresh engine at any time. It replaces the
 * engine when a sticky CUDA error poisons it, when it dies, or when it does not answer a second
 * Ctrl-C (a kernel that never ends), and tells the learner what was lost and what was kept.
 *
 * Ctrl-C from a terminal reaches both processes (one process group), so the engine interrupts
 * itself; a SIGINT sent to the console alone by another program (kill, a test) is forwarded. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chunk.h"
#include "console.h"
#include "engine.h"
#include "lineedit.h"
#include "paths.h"
#include "proto.h"

static struct {
  pid_t pid;                         /* the engine */
  int to_engine, from_engine;        /* request and reply pipes */
  engine_config cfg;                 /* how to start the next engine */
  volatile sig_atomic_t sigints;     /* Ctrl-C count, ever increasing */
  volatile sig_atomic_t forward;     /* SIGINTs sent by a program, not the terminal */
  int status;                        /* exit status of the last engine that ended */
} con = {.pid = -1, .to_engine = -1, .from_engine = -1};

static void on_sigint(int sig, siginfo_t *info, void *ctx) {
  (void)sig;
  (void)ctx;
  con.sigints++;
  if (info && info->si_code <= 0) con.forward++; /* SI_USER, SI_QUEUE...: not the terminal */
}

static void install_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigint;
  sa.sa_flags = SA_SIGINFO; /* no SA_RESTART: waits must wake up */
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  signal(SIGPIPE, SIG_IGN); /* an engine that died shows as EPIPE, not a dead console */
}

/* ---- the engine process ---------------------------------------------------------------------- */

static int engine_reap(void);

/* In the engine, right after fork: the kernel kills it when the console dies, however it dies.
 * A console killed by SIGKILL or SIGTERM runs no code, and an engine busy in a loop never reads
 * the closed pipe, so without this it would spin on as an orphan. The console may already have
 * died between fork and prctl; then the engine has a new parent and leaves at once. */
static void engine_bind_to(pid_t console) {
  prctl(PR_SET_PDEATHSIG, SIGKILL); /* cannot fail: the signal is valid */
  if (getppid() != console) _exit(1);
}

static int engine_start(void) {
  int req[2], rep[2];
  if (pipe(req) != 0) return -1;
  if (pipe(rep) != 0) {
    close(req[0]);
    close(req[1]);
    return -1;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t console = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    close(req[0]);
    close(req[1]);
    close(rep[0]);
    close(rep[1]);
    return -1;
  }
  if (pid == 0) {
    engine_bind_to(console);
    close(req[1]);
    close(rep[0]);
    signal(SIGPIPE, SIG_DFL); /* output to a closed pipe (| head) ends the engine quietly */
    engine_main(req[0], rep[1], &con.cfg);
  }
  close(req[0]);
  close(rep[1]);
  con.pid = pid;
  con.to_engine = req[1];
  con.from_engine = rep[0];
  con.cfg.banner = 0; /* only the first engine of a session greets */
  /* Wait until it is ready, so that its banner or start-up warnings come before our prompt. */
  char type;
  char *data = NULL;
  size_t len;
  int ok = proto_recv(con.from_engine, &type, &data, &len) == 0 && type == MSG_READY;
  free(data);
  if (!ok) {
    engine_reap();
    errno = ECHILD;
    return -1;
  }
  return 0;
}

/* Reaps the engine; returns its wait status. */
static int engine_reap(void) {
  int st = 0;
  if (con.pid > 0) {
    while (waitpid(con.pid, &st, 0) < 0 && errno == EINTR) {}
  }
  if (con.to_engine >= 0) close(con.to_engine);
  if (con.from_engine >= 0) close(con.from_engine);
  con.pid = -1;
  con.to_engine = con.from_engine = -1;
  return st;
}

static void engine_kill(void) {
  if (con.pid > 0) kill(con.pid, SIGKILL);
  engine_reap();
}

typedef enum call_result { CALL_OK, CALL_DIED, CALL_KILLED, CALL_UNSENT } call_result;

/* Waits for the engine's next message, watching Ctrl-C: the first is the engine's to handle, a
 * second while it still has not answered means it cannot, and it is killed. */
static call_result engine_reply(char *rtype, char **rdata, size_t *rlen) {
  sig_atomic_t start = con.sigints, forwarded = con.forward;
  for (;;) {
    struct pollfd p = {con.from_engine, POLLIN, 0};
    int r = poll(&p, 1, -1);
    if (r > 0) break;
    if (r < 0 && errno != EINTR) return CALL_DIED;
    if (con.forward != forwarded) {
      forwarded = con.forward;
      kill(con.pid, SIGINT);
    }
    if (con.sigints - start >= 2) {
      engine_kill();
      return CALL_KILLED;
    }
  }
  return proto_recv(con.from_engine, rtype, rdata, rlen) == 0 ? CALL_OK : CALL_DIED;
}

/* The engine asks for a line in the middle of a request (the debugger's prompt): it is read as
 * the REPL's lines are, with completion and history, and sent back; Ctrl-C there only drops
 * the line, and Ctrl-D or the end of input says there will be none. */
static void answer_readline(const char *prompt) {
  int interrupted = 0;
  char *line = lineedit_read(prompt, &interrupted);
  if (line) {
    lineedit_save(line);
    proto_send(con.to_engine, MSG_LINE, line, strlen(line));
    lineedit_free(line);
    return;
  }
  unsigned char why = interrupted ? LINE_INTERRUPTED : LINE_EOF;
  proto_send(con.to_engine, MSG_NOLINE, &why, 1);
}

/* Sends one request and waits for its reply, reading the lines it asks for meanwhile; Ctrl-C
 * counts afresh after each, since a learner at a prompt is not waiting for a stuck engine.
 * CALL_UNSENT: the engine was gone before it read the request, so the request never ran. */
static call_result engine_call(char type, const char *data, size_t len, char *rtype, char **rdata,
                               size_t *rlen) {
  if (proto_send(con.to_engine, type, data, len) != 0) return CALL_UNSENT;
  for (;;) {
    call_result r = engine_reply(rtype, rdata, rlen);
    if (r != CALL_OK || *rtype != MSG_READLINE) return r;
    answer_readline(*rdata);
    free(*rdata);
    *rdata = NULL;
  }
}

static void explain_death(int st) {
  if (WIFSIGNALED(st))
    fprintf(stderr, "cudalab: the engine stopped (%s).\n", strsignal(WTERMSIG(st)));
  else if (WIFEXITED(st) && WEXITSTATUS(st) != ENGINE_EXIT_POISONED)
    fprintf(stderr, "cudalab: the engine stopped (exit status %d).\n", WEXITSTATUS(st));
}

/* What to try next is the engine's to say (it knows the error); the console says what the
 * restart cost. */
static void say_restarted(void) {
  fprintf(stderr,
          "cudalab: started a fresh engine. Lost: device arrays, kernels and Lua variables.\n"
          "         Kept: your history and lesson progress.\n");
  fflush(stderr);
}

/* An engine that died while the console waited for the learner (killed by another program, or
 * by the kernel for memory) is found here, before the next request is sent, and replaced: the
 * learner hears what was lost, and the line they typed goes to the new engine instead of being
 * dropped with the old one. Returns 0 when an engine is ready, -1 when none could be started. */
static int engine_ensure(void) {
  if (con.pid > 0) {
    int st = 0;
    pid_t r = waitpid(con.pid, &st, WNOHANG);
    if (r == 0 || (r < 0 && errno != ECHILD)) return 0; /* alive (or not ours to judge) */
    con.pid = -1; /* reaped: engine_reap only closes the pipes */
    engine_reap();
    explain_death(st);
  }
  if (engine_start() != 0) {
    fprintf(stderr, "cudalab: cannot start a new engine: %s\n", strerror(errno));
    return -1;
  }
  say_restarted();
  return 0;
}

/* What request() returns when the request has no EVAL_* status (proto.h); negative, so that
 * the two never meet. */
enum {
  REQ_GONE = -1,        /* no engine answered it (it died, or none could be started) */
  REQ_EXITED = -2,      /* the learner's code called os.exit: con.status is the exit status */
  REQ_OUTPUT_GONE = -3, /* our output went to a pipe that closed: nothing more to say */
};

/* A process killed by SIGPIPE exits, as a shell reports it, with this status. */
#define STATUS_SIGPIPE (128 + SIGPIPE)

/* Outcome of one request, after any restart: an EVAL_* status or a REQ_* one. With restart, a
 * request the engine never read (it died just before) is sent again to the new engine. */
static int request(char type, const char *data, size_t len, int restart) {
  char rtype;
  char *rdata = NULL;
  size_t rlen = 0;
  if (restart && engine_ensure() != 0) return REQ_GONE;
  call_result cr = engine_call(type, data, len, &rtype, &rdata, &rlen);
  if (cr == CALL_UNSENT && restart) {
    if (engine_ensure() != 0) return REQ_GONE;
    cr = engine_call(type, data, len, &rtype, &rdata, &rlen);
  }
  int status = REQ_GONE;
  if (cr == CALL_OK && rtype == MSG_DONE && rlen == 1) {
    status = (unsigned char)rdata[0];
    if (status == EVAL_POISONED) engine_reap();
  } else if (cr == CALL_OK && rtype == MSG_EXIT && rlen == 1) {
    con.status = (unsigned char)rdata[0];
    free(rdata);
    engine_reap();
    return REQ_EXITED;
  } else if (cr == CALL_KILLED) {
    fprintf(stderr, "\ncudalab: the engine did not answer Ctrl-C (a kernel that never ends?); "
                    "stopped it.\n");
  } else {
    int st = engine_reap();
    if (WIFSIGNALED(st) && WTERMSIG(st) == SIGPIPE) {
      free(rdata);
      return REQ_OUTPUT_GONE;
    }
    explain_death(st);
  }
  free(rdata);
  if (status != REQ_GONE && status != EVAL_POISONED) return status;
  if (!restart) return status == EVAL_POISONED ? EVAL_POISONED : REQ_GONE;
  if (engine_start() != 0) {
    fprintf(stderr, "cudalab: cannot start a new engine: %s\n", strerror(errno));
    return REQ_GONE;
  }
  say_restarted();
  return EVAL_ERROR;
}

static char *complete_via_engine(const char *word, const char *before, size_t *len) {
  char rtype;
  char *rdata = NULL;
  *len = 0;
  if (con.pid < 0) return NULL;
  size_t wlen = strlen(word) + 1, blen = strlen(before) + 1;
  char *payload = malloc(wlen + blen);
  if (!payload) return NULL;
  memcpy(payload, word, wlen);
  memcpy(payload + wlen, before, blen);
  call_result r = engine_call(MSG_COMPLETE, payload, wlen + blen, &rtype, &rdata, len);
  free(payload);
  if (r != CALL_OK) return NULL;
  if (rtype != MSG_CANDIDATES) {
    free(rdata);
    *len = 0;
    return NULL;
  }
  return rdata;
}

/* ---- the loops ------------------------------------------------------------------------------ */

/* The chunk being entered: its text, grown geometrically, and what the scanner saw of it. */
typedef struct pending {
  char *buf;       /* the lines so far, joined by newlines; NULL between chunks */
  size_t len, cap; /* bytes used and allocated */
  size_t tried;    /* len when the engine last parsed it; 0 before */
  chunk_scan scan; /* what is still open in it */
} pending;

#define EAGER_BYTES ((size_t)16 << 10) /* below this a chunk is parsed after every line */

static void pending_clear(pending *p) {
  free(p->buf);
  p->buf = NULL;
  p->len = p->cap = p->tried = 0;
  chunk_reset(&p->scan);
}

/* Appends a line; -1 when out of memory (the chunk is kept as it was). */
static int pending_add(pending *p, const char *line) {
  size_t llen = strlen(line), need = p->len + llen + 2;
  if (need > p->cap) {
    size_t cap = p->cap ? p->cap : 256;
    while (cap < need) cap *= 2;
    char *nb = realloc(p->buf, cap);
    if (!nb) return -1;
    p->buf = nb;
    p->cap = cap;
  }
  if (p->buf && p->len) p->buf[p->len++] = '\n';
  memcpy(p->buf + p->len, line, llen + 1);
  p->len += llen;
  chunk_feed(&p->scan, line, llen);
  return 0;
}

/* Whether to ask the engine to parse the chunk now. Asking after every line costs time
 * quadratic in the chunk (a 1.6 MB paste took a minute), so a large chunk the scanner knows to
 * be unfinished waits; a small one is always asked, so that an error inside an open block is
 * named at once as the learner types. Asking again whenever the chunk has doubled keeps the
 * total linear even if the scanner were wrong, and bounds how late an error is named. */
static int worth_parsing(const pending *p) {
  return p->len < EAGER_BYTES || !chunk_unfinished(&p->scan) || p->len >= 2 * p->tried;
}

/* After one complete chunk was evaluated: 0 to go on, else 1 + the exit status to leave with. */
static int after_chunk(int st, int *failed) {
  if (st == REQ_EXITED) return 1 + con.status;
  if (st == REQ_OUTPUT_GONE) return 1 + STATUS_SIGPIPE;
  if (st != EVAL_OK) *failed = 1;
  if (st == REQ_GONE && con.pid < 0) return 1 + 1;
  return 0;
}

/* One line as the learner entered it: added to the chunk being entered, which is evaluated
 * once it is complete. Returns 0 to go on, 1 + the exit status to leave with (after_chunk), or
 * -1 when the line could not be kept (out of memory): input stops there. */
static int enter_line(pending *p, const char *line, int *failed) {
  if (pending_add(p, line) != 0) return -1;
  if (!worth_parsing(p)) return 0;
  p->tried = p->len;
  int st = request(MSG_EVAL, p->buf, p->len, 1);
  if (st == EVAL_INCOMPLETE) return 0;
  lineedit_save(p->buf);
  pending_clear(p);
  return after_chunk(st, failed);
}

/* What readline hands over after a paste (bracketed paste: the terminal marks pasted text, and
 * readline inserts it whole, newlines included) runs as if its lines had been typed one by one:
 * each statement or expression in turn, expressions printed, as lua.c does with pasted lines.
 * Sent as one chunk it was compiled as one block: `x = 21` and `x * 2` was a syntax error, and a
 * function and its call printed nothing. A final newline is the Enter that ends the paste, not
 * an empty line of its own. Returns as enter_line does, for the first line that stops input. */
static int enter_text(pending *p, char *text, int *failed) {
  char *line = text;
  for (;;) {
    char *nl = strchr(line, '\n');
    if (nl) *nl = '\0';
    if (nl && !nl[1]) nl = NULL; /* the final newline: nothing after it */
    int r = enter_line(p, line, failed);
    if (r != 0 || !nl) return r;
    line = nl + 1;
  }
}

/* Reads chunks (a chunk spans lines until it is complete) and evaluates them. Returns the exit
 * status: 0, or 1 when input was piped and some chunk failed (as lua does for a script). */
static int repl(int tty) {
  int failed = 0, leave = 0, st = EVAL_INCOMPLETE;
  pending p = {0};
  chunk_reset(&p.scan);
  while (!leave) {
    int interrupted = 0;
    char *line = lineedit_read(p.buf ? ">> " : "> ", &interrupted);
    if (interrupted) {
      pending_clear(&p);
      continue;
    }
    if (!line) break;
    leave = enter_text(&p, line, &failed);
    lineedit_free(line);
    if (leave < 0) {
      leave = 0;
      break;
    }
  }
  if (leave) return leave - 1;
  if (p.buf && p.tried != p.len) { /* lines the engine has not parsed yet */
    st = request(MSG_EVAL, p.buf, p.len, 1);
    if (st != EVAL_INCOMPLETE) {
      pending_clear(&p);
      if ((leave = after_chunk(st, &failed))) return leave - 1;
    }
  }
  if (p.buf) {
    fprintf(stderr, "cudalab: input ended inside an unfinished chunk "
                    "(a missing 'end' or bracket?)\n");
    failed = 1;
    pending_clear(&p);
  }
  return !tty && failed ? 1 : 0;
}

/* Sends argv packed as NUL-separated strings in a message of the given type. */
static int request_argv(char type, int argc, char **argv) {
  size_t len = 0;
  for (int i = 0; i < argc; i++) len += strlen(argv[i]) + 1;
  char *packed = malloc(len ? len : 1), *p = packed;
  if (!packed) return REQ_GONE; /* never sent: the caller treats it as a failed step */
  for (int i = 0; i < argc; i++) p = stpcpy(p, argv[i]) + 1;
  int st = request(type, packed, len, 0);
  free(packed);
  return st;
}

static int run_step(const console_step *s) {
  if (s->kind == STEP_EXEC) return request(MSG_EXEC, s->text, strlen(s->text), 0);
  return request_argv(MSG_SCRIPT, s->argc, s->argv);
}

/* The history file's path, or NULL (said why, unless there is no home at all) when the state
 * folder cannot be used. */
static const char *history_path(char *buf, size_t len) {
  char dir[4096], why[4400];
  if (paths_state_dir(dir, sizeof dir, why, sizeof why) != 0) {
    if (getenv("HOME") || getenv("XDG_STATE_HOME"))
      fprintf(stderr, "cudalab: history is not saved: %s\n", why);
    return NULL;
  }
  snprintf(buf, len, "%s/history", dir);
  return buf;
}

/* A run with no prompt after its steps and no terminal on standard input (a pipeline, CI, a
 * grading job, a script started in a loop) has nothing for a console to keep across an engine's
 * restart: no prompt, no history, no lesson in progress, no learner to type a second Ctrl-C at.
 * So its steps run in this process (engine_run_alone), which spares a fork and a second process's
 * start and end: on a 2-core virtual machine, start-up went from 2.7 to 1.9 times an empty C
 * program's (make bench's start-up rows). What it gives up is the console's word on an engine
 * that dies (a crash shows as the shell shows one). Never returns. */
static void run_alone(const console_options *o) __attribute__((noreturn));
static void run_alone(const console_options *o) {
  engine_step *steps = calloc((size_t)o->nsteps + 1, sizeof *steps);
  if (!steps) {
    fprintf(stderr, "cudalab: out of memory for the command line's steps\n");
    exit(1);
  }
  for (int i = 0; i < o->nsteps; i++) {
    const console_step *c = &o->steps[i];
    steps[i] = c->kind == STEP_EXEC ? (engine_step){c->text, 0, NULL}
                                    : (engine_step){NULL, c->argc, c->argv};
  }
  engine_config cfg = {.backend = o->backend, .banner = 0};
  engine_run_alone(&cfg, steps, o->nsteps);
}

int console_run(const console_options *o) {
  if (!o->interactive && !o->tty) run_alone(o);
  install_signals();
  con.cfg.backend = o->backend;
  con.cfg.banner = o->interactive && o->tty;
  if (engine_start() != 0) {
    fprintf(stderr, "cudalab: cannot start the engine: %s\n", strerror(errno));
    return 1;
  }
  int status = 0;
  for (int i = 0; i < o->nsteps; i++) /* arg exists before any -e chunk runs, as in lua */
    if (o->steps[i].kind == STEP_SCRIPT) request_argv(MSG_ARGS, o->steps[i].argc, o->steps[i].argv);
  for (int i = 0; i < o->nsteps; i++) {
    int st = run_step(&o->steps[i]);
    if (st == REQ_EXITED) return con.status;
    if (st != EVAL_OK) {
      if (con.pid > 0) engine_kill();
      return st == REQ_OUTPUT_GONE ? STATUS_SIGPIPE : 1;
    }
  }
  if (o->interactive) {
    char hist[4200];
    lineedit_init(o->tty, o->tty ? history_path(hist, sizeof hist) : NULL, complete_via_engine,
                  &con.sigints);
    status = repl(o->tty);
    lineedit_close();
  }
  if (con.pid > 0) {
    /* the kernels still running are waited for: their printf and their errors are the run's */
    int st = request(MSG_FINISH, NULL, 0, 0);
    if (st == REQ_OUTPUT_GONE && status == 0) status = STATUS_SIGPIPE;
    else if (st != EVAL_OK && status == 0) status = 1;
  }
  if (con.pid > 0) {
    close(con.to_engine);
    con.to_engine = -1;
    engine_reap();
  }
  return status;
}
