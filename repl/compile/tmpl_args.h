/* tmpl_args.h: the template arguments of a kernel template's instantiation, read from the
 * mangled name NVRTC lowers it to ("_Z7combineIdEvPT_PKS0_i" holds <double>), as C++ text
 * ("double", "3", "float4", "ns::Vec<float>"). The mangled name is the compiler's own record
 * of what it instantiated, defaults and the learner's spelling ("3" for an unsigned) already
 * resolved, so launch checks of an instantiation read it rather than the name typed. Used by
 * kernel_sig.c; plain C, no I/O. */
#ifndef CUDALAB_TMPL_ARGS_H
#define CUDALAB_TMPL_ARGS_H

#define TMPL_MAX_ARGS 16  /* template arguments read, at most */
#define TMPL_ARG_CAP 128  /* room for one argument's text */

/* Writes the template arguments of the function named by the Itanium-mangled `mangled` into
 * args (at most max), each as C++ text: a type as C spells it ("unsigned int", "const float *"),
 * an integer as its value ("3", "-1", "true"). Returns how many; -1 when the name is no
 * template's instantiation or holds what this reader does not decode (a parameter pack, an
 * expression, a function or array type, a type too long), so that the caller checks nothing
 * rather than guess. Reads at most the name's own characters. */
int tmpl_args_decode(const char *mangled, char args[][TMPL_ARG_CAP], int max);

#endif
