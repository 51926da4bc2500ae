/* ctype_attr.h: what attributes and `#pragma pack` say about the layout of a struct and of its
 * members: alignas, __align__, __attribute__((aligned, packed)) and the packing in force where a
 * struct is defined. Used by ctype_layout.c, and by kernel_sig.c, whose blanked copy of the
 * source keeps each #pragma pack as a mark (lay_pack_mark) that lay_pack_at reads. */
#ifndef CUDALAB_CTYPE_ATTR_H
#define CUDALAB_CTYPE_ATTR_H

#include <stddef.h>

#define LAY_MAX_ALIGN 4096 /* the largest alignment laid out; a larger one is refused */

/* The attributes of one declaration (a struct's, or a member's). The three kinds are apart
 * because NVRTC treats them apart: under #pragma pack(N) an aligned attribute is capped at N
 * but alignas is not, and packed lowers only the alignment the member's type brings. */
typedef struct lay_attrs {
  size_t aligned; /* the largest __attribute__((aligned(N))) or __align__(N); 0 none */
  size_t alignas; /* the largest alignas(N) or alignas(type); 0 none */
  int packed;     /* __attribute__((packed)) */
} lay_attrs;

/* The alignment of the type named in alignas(type), found by the caller (ctx is its own); 0
 * with a reason in why when the type cannot be laid out. */
typedef size_t (*lay_align_of)(void *ctx, const char *type, char *why, size_t wl);

/* If an attribute opens at p (alignas(...), __align__(...), __attribute__((...)), [[...]],
 * __declspec(...)), adds what it says to *a and returns the text just past it; returns p when
 * none opens there; NULL with a reason in why (naming `owner`, "member 'b' of 'A'") when it is
 * one this reader cannot take into account: an alignment it does not evaluate, an attribute
 * whose effect on the layout it does not know. s is the whole text (for word boundaries). */
const char *lay_attr_read(const char *s, const char *p, const char *e, lay_attrs *a,
                          lay_align_of align_of, void *ctx, const char *owner, char *why,
                          size_t wl);

/* The end of the attribute that opens at p (its extent only, nothing evaluated): p when none
 * opens there, NULL when its argument is not closed before e. */
const char *lay_attr_skip(const char *s, const char *p, const char *e);

/* Rewrites, in place, the preprocessor line [line, line + len) when it is a #pragma pack: to a
 * mark "@pack ARGS" padded with blanks to the same length, which lay_pack_at reads and which no
 * other scanner takes for C. Returns 1 when it did (then the caller keeps the line), 0 when the
 * line is no #pragma pack (then the caller blanks it). */
int lay_pack_mark(char *line, size_t len);

/* The packing in force at `at` in the blanked text s, from the marks before it: 0 for none, N
 * for pack(N), -1 with why when the marks say something this reader does not follow (a pack
 * it could not read, a named push, a pop with nothing pushed). */
int lay_pack_at(const char *s, const char *at, char *why, size_t wl);

#endif
