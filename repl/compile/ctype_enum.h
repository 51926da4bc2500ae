/* ctype_enum.h: the integer type an enum of the learner's source is stored as, so that a struct
 * member or a parameter of enum type is laid out and packed as that integer. Used by
 * ctype_layout.c. */
#ifndef CUDALAB_CTYPE_ENUM_H
#define CUDALAB_CTYPE_ENUM_H

#include <stddef.h>

/* Whether `name` is an enum the blanked source src defines or declares: 1 with its underlying
 * type as written into out ("unsigned char" for `enum class Op : unsigned char`, "int" for a
 * plain enum or an enum class without one), 0 when it is no enum, -1 with a reason in why for a
 * plain enum whose size this reader cannot tell (values it does not evaluate). */
int lay_enum(const char *src, const char *name, char *out, size_t cap, char *why, size_t wl);

#endif
