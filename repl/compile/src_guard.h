/* src_guard.h: what may reach NVRTC. A kernel source may when graded only if it reads no file
 * but the toolkit's headers and the submission's own (bind_sandbox.c, for
 * lua/class/grade_sandbox.lua); a kernel's name and a compiler option must always be what they
 * claim to be (bind_kernel.c, nvrtc.c). Plain C, no I/O, no Lua. */
#ifndef CUDALAB_SRC_GUARD_H
#define CUDALAB_SRC_GUARD_H

#include <stddef.h>

#define SRC_GUARD_WHY 1024      /* room enough for any reason below */
#define SRC_GUARD_NAME_MAX 1024 /* the longest kernel name a learner may give */

/* May the len bytes of src be compiled when grading? 0 if so; -1 if not, with why (cap bytes,
 * NUL-terminated) naming the source line, what is refused and what is allowed. Allowed: an
 * include of a toolkit header, <header> (relative, [A-Za-z0-9_.+/-], no ".." part), or of a
 * file of the submission, "file" (a plain name, [A-Za-z0-9_.-]), and __has_include of either.
 * Refused: any other include, #include_next, #import, #embed, an include or __has_include
 * through a macro, _Pragma, a #pragma line with a literal or include_alias, the ## operator
 * (pasting could build _Pragma unseen), a trigraph, a NUL or other control character, a
 * carriage return that ends no line, and a comment or raw string that never ends. The text is
 * read every way NVRTC might read it under the options grading allows (inc_scan.h's flags),
 * and refused if any reading finds one of these. */
int src_guard_source(const char *src, size_t len, char *why, size_t cap);

/* Is s (len bytes) a kernel's name as a learner writes it: a C++ name expression, an
 * identifier, ::-qualified, with template arguments in balanced <...> made of names, numbers,
 * spaces, commas, '*', '&' and '::', or an overload's parameter types in (...)? At most
 * SRC_GUARD_NAME_MAX bytes, no control character, none of # " ' / \ ; { }. 0 if so; -1 with
 * why saying what is wrong ("it holds a newline"). */
int src_guard_name(const char *s, size_t len, char *why, size_t cap);

/* Is s safe to hand NVRTC as a name expression, which it pastes into the source it compiles:
 * no control character and none of # " ' / \ ; { } % ? @ `, whatever its form (the scanner's
 * "(void(*)(float *))k" for an overload passes). 0 if so; -1 with why. */
int src_guard_expr(const char *s, size_t len, char *why, size_t cap);

/* Is s (len bytes) one compiler option: no NUL, newline or other control character? 0 if so;
 * -1 with why ("it holds a newline"). */
int src_guard_option(const char *s, size_t len, char *why, size_t cap);

/* s (len bytes) for a message: in double quotes, with \n, \r, \t, \0, \", \\ and any other
 * control or non-ASCII byte escaped (\x01), cut after max bytes of s with "..." added. Always
 * NUL-terminates out (cap > 0). */
void src_guard_quote(const char *s, size_t len, size_t max, char *out, size_t cap);

#endif
