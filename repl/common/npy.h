/* npy.h: NumPy's .npy format: the header a:save writes (version 1.0, little-endian, C order) and
 * the header cuda.load reads back (versions 1.0 to 3.0). Plain C, no Lua; used by bind_save.c.
 * The data after the header is the elements' bytes as a little-endian host holds them. */
#ifndef CUDALAB_NPY_H
#define CUDALAB_NPY_H

#include <stddef.h>

#include "dtype.h"

#define NPY_MAX_DIMS 32         /* NumPy's own limit (NPY_MAXDIMS) */
#define NPY_MAX_HEADER 65536    /* bytes of header text read at most: NumPy writes < 200 */

typedef struct npy_header {
  int dtype;                    /* the cl_dtype the data holds */
  int ndim;                     /* 0 for a scalar (one element) */
  size_t shape[NPY_MAX_DIMS];
  size_t n;                     /* elements: the product of shape */
  size_t data_offset;           /* bytes from the start of the file to the data */
} npy_header;

/* The descr NumPy spells dtype t with ("<f4", "|u1"), or NULL for a type NumPy has no name for
 * (bf16: bind_save.c writes it widened to "<f4", which holds every bf16 value exactly). */
const char *npy_descr(cl_dtype t);

/* Writes the whole header (magic, version 1.0, length, the dict, padding to a multiple of 64 and
 * its newline) for data of descr and shape into buf. Returns the header's length, or 0 when it
 * does not fit in cap bytes. */
size_t npy_write_header(char *buf, size_t cap, const char *descr, const size_t *shape, int ndim);

/* How many bytes of the file npy_read_header needs to see: at least 12 (magic, version,
 * length); then, from those, the whole header (*need is set to it). 0 when the first `len` bytes
 * are enough, -1 when they are not a .npy file's start (err says why). */
int npy_header_size(const unsigned char *data, size_t len, size_t *need, char *err, size_t errlen);

/* Reads the header at the start of data (len bytes, at least what npy_header_size asked for)
 * into out. Returns 0, or -1 with a sentence in err that names what is wrong: not a .npy file, a
 * type cudalab holds no array of (objects, strings, structures, booleans), big-endian data,
 * Fortran order of more than one dimension, a shape that is not whole numbers or is too big. */
int npy_read_header(const unsigned char *data, size_t len, npy_header *out, char *err,
                    size_t errlen);

#endif
