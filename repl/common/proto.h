/* proto.h: the messages between the console and the engine process, over a pair of pipes.
 * A message is one type byte, a 4-byte length and the payload. Used by console.c and the
 * engine (engine.c, interp.c), and for the engine's exit statuses by the bindings' runtime
 * (runtime.c); nvrtc_child.c frames its pipe with the same calls. */
#ifndef CUDALAB_PROTO_H
#define CUDALAB_PROTO_H

#include <stddef.h>
#include <stdint.h>

enum {
  /* console -> engine */
  MSG_EVAL = 'E',     /* REPL input: try as an expression, then as a statement */
  MSG_EXEC = 'X',     /* a chunk run as is (-e) */
  MSG_SCRIPT = 'S',   /* run a file: payload is NUL-separated argv, script first */
  MSG_COMPLETE = 'C', /* completion candidates: payload the word, NUL, then what the line holds
                         before the word, NUL (where the word stands decides what fits) */
  MSG_ARGS = 'A',     /* set the global arg from NUL-separated argv, script first (as lua does,
                         before any -e chunk runs) */
  MSG_LINE = 'l',     /* the line MSG_READLINE asked for, without its newline */
  MSG_NOLINE = 'n',   /* no line for MSG_READLINE: payload one byte, LINE_EOF or
                         LINE_INTERRUPTED */
  MSG_FINISH = 'F',   /* the session is over: wait for the kernels still running (their
                         printf, their errors), answered by MSG_DONE */
  /* engine -> console */
  MSG_DONE = 'D',       /* payload: one status byte (EVAL_*) */
  MSG_CANDIDATES = 'c', /* payload: NUL-terminated candidates, one after another */
  MSG_EXIT = 'x',       /* os.exit() was called: payload one byte, the exit status */
  MSG_READY = 'R',      /* the engine has started (and printed its banner, if asked) */
  MSG_READLINE = 'L',   /* while a request runs: read one line with the prompt in the payload
                           (the debugger's), answered by MSG_LINE or MSG_NOLINE; meanwhile the
                           engine still answers MSG_COMPLETE */
};

enum { LINE_EOF = 0, LINE_INTERRUPTED = 1 };

enum { EVAL_OK = 0, EVAL_ERROR = 1, EVAL_INCOMPLETE = 2, EVAL_POISONED = 3 };

/* The engine's exit status after it answered EVAL_POISONED: the console knows why it left and
 * starts a fresh one without reporting the exit as a crash. */
enum { ENGINE_EXIT_POISONED = 3 };

/* Blocking I/O of exactly n bytes on a pipe, retried after EINTR; 0, or -1 when the other side
 * has gone (EOF, EPIPE) or on an error. The engine's NVRTC child speaks over them too. */
int proto_write_all(int fd, const void *buf, size_t n);
int proto_read_all(int fd, void *buf, size_t n);

/* Both return 0, or -1 when the other side has gone (EOF, EPIPE) or on a read error; a read
 * interrupted by a signal is retried. */
int proto_send(int fd, char type, const void *data, size_t len);
/* *data is malloc'd (NUL-terminated for convenience), to be freed by the caller. */
int proto_recv(int fd, char *type, char **data, size_t *len);

#endif
