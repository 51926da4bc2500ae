/* npy.c: the .npy header, written and read (npy.h).
 *
 * Stance: the header is a Python dict literal, and a file to load may come from anywhere, so it
 * is read by a small parser of exactly what NumPy writes (a dict of 'descr', 'fortran_order' and
 * 'shape', strings, True/False, a tuple of whole numbers), never by searching the text for keys:
 * a key inside a string or a repeated key cannot fool it. Every number is checked for overflow,
 * and the shape's product against what any array may hold. What NumPy can write but cudalab
 * holds no array of (objects, strings, booleans, structures, complex numbers, big-endian data)
 * is refused with its name and what to do in NumPy instead. */
#include <stdio.h>
#include <string.h>

#include "npy.h"

static const char MAGIC[] = "\x93NUMPY";
#define MAGIC_LEN 6
#define MAX_ELEMS ((size_t)1 << 48) /* more than any device's memory, far below SIZE_MAX */

/* NumPy's name for dtype t, from its kind and size in dtypes.def (a new row needs nothing here):
 * "<f4", "|u1" (one byte has no byte order); NULL for a 16-bit float other than IEEE half
 * (bf16), which NumPy does not have. */
const char *npy_descr(cl_dtype t) {
  static char names[DT_COUNT][8];
  if ((unsigned)t >= DT_COUNT) return NULL;
  const cl_dtype_info *d = &dtype_table[t];
  char letter = d->kind == DK_SINT ? 'i' : d->kind == DK_UINT ? 'u' : 'f';
  if (d->kind == DK_HALF && !(d->mbits == 10 && d->bias == 15)) return NULL;
  if (!names[t][0])
    snprintf(names[t], sizeof names[t], "%c%c%zu", d->size == 1 ? '|' : '<', letter, d->size);
  return names[t];
}

size_t npy_write_header(char *buf, size_t cap, const char *descr, const size_t *shape, int ndim) {
  char dict[64 + NPY_MAX_DIMS * 24];
  int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  /* as Python writes a tuple: (5,) for one size, (2, 3) for more */
  for (int i = 0; i < ndim && n > 0 && (size_t)n < sizeof dict; i++)
    n += snprintf(dict + n, sizeof dict - (size_t)n, "%s%zu%s", i ? ", " : "", shape[i],
                  ndim == 1 ? "," : "");
  if (n > 0 && (size_t)n < sizeof dict) n += snprintf(dict + n, sizeof dict - (size_t)n, "), }");
  if (n <= 0 || (size_t)n >= sizeof dict) return 0;
  /* magic, version, 2-byte length, the dict, spaces, '\n': a multiple of 64 in all */
  size_t total = (10 + (size_t)n + 1 + 63) / 64 * 64;
  if (total > cap || total - 10 > 65535) return 0;
  memcpy(buf, MAGIC, MAGIC_LEN);
  buf[6] = 1;
  buf[7] = 0;
  buf[8] = (char)((total - 10) & 0xff);
  buf[9] = (char)((total - 10) >> 8);
  memcpy(buf + 10, dict, (size_t)n);
  memset(buf + 10 + n, ' ', total - 10 - (size_t)n - 1);
  buf[total - 1] = '\n';
  return total;
}

static int fail(char *err, size_t errlen, const char *msg) {
  snprintf(err, errlen, "%s", msg);
  return -1;
}

int npy_header_size(const unsigned char *data, size_t len, size_t *need, char *err,
                    size_t errlen) {
  if (len < MAGIC_LEN || memcmp(data, MAGIC, MAGIC_LEN) != 0)
    return fail(err, errlen, "not a .npy file: it does not start with NumPy's magic "
                             "\\x93NUMPY");
  if (len < 12)
    return fail(err, errlen, "truncated: the file ends inside the .npy header");
  int major = data[6];
  size_t hlen, start;
  if (major == 1) {
    hlen = (size_t)data[8] | (size_t)data[9] << 8;
    start = 10;
  } else if (major == 2 || major == 3) {
    hlen = (size_t)data[8] | (size_t)data[9] << 8 | (size_t)data[10] << 16 |
           (size_t)data[11] << 24;
    start = 12;
  } else {
    snprintf(err, errlen, "a .npy file of format version %d.%d, which cudalab does not read "
             "(1.0 to 3.0 are NumPy's)", major, data[7]);
    return -1;
  }
  if (hlen > NPY_MAX_HEADER) {
    snprintf(err, errlen, "the .npy header says it is %zu bytes long, more than the %d any "
             "array's header needs", hlen, NPY_MAX_HEADER);
    return -1;
  }
  *need = start + hlen;
  return 0;
}

/* ---- the dict ------------------------------------------------------------------------------ */

typedef struct cursor {
  const char *p, *end;
} cursor;

static void skip_space(cursor *c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
    c->p++;
}

static int take(cursor *c, char ch) {
  skip_space(c);
  if (c->p < c->end && *c->p == ch) {
    c->p++;
    return 1;
  }
  return 0;
}

/* A quoted string ('...' or "...", no escapes: NumPy writes none) into out (cap bytes). */
static int read_string(cursor *c, char *out, size_t cap) {
  skip_space(c);
  if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return -1;
  char q = *c->p++;
  size_t n = 0;
  while (c->p < c->end && *c->p != q) {
    if (*c->p == '\\' || n + 1 >= cap) return -1;
    out[n++] = *c->p++;
  }
  if (c->p >= c->end) return -1;
  c->p++;
  out[n] = '\0';
  return 0;
}

static int read_word(cursor *c, const char *word) {
  skip_space(c);
  size_t n = strlen(word);
  if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0) return 0;
  c->p += n;
  return 1;
}

/* (d0, d1, ...) or () into out; -1 for anything else, or a number past MAX_ELEMS. */
static int read_shape(cursor *c, npy_header *out, char *err, size_t errlen) {
  if (!take(c, '(')) return fail(err, errlen, "the .npy header's shape is not a tuple");
  out->ndim = 0;
  out->n = 1;
  while (!take(c, ')')) {
    skip_space(c);
    if (c->p >= c->end || *c->p < '0' || *c->p > '9')
      return fail(err, errlen, "the .npy header's shape is not a tuple of whole numbers");
    size_t v = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
      v = v * 10 + (size_t)(*c->p++ - '0');
      if (v > MAX_ELEMS) return fail(err, errlen, "the .npy header's shape is too large");
    }
    if (out->ndim == NPY_MAX_DIMS)
      return fail(err, errlen, "the .npy header's shape has more than 32 dimensions");
    out->shape[out->ndim++] = v;
    if (v && out->n > MAX_ELEMS / v)
      return fail(err, errlen, "the .npy header's shape is too large");
    out->n *= v;
    if (!take(c, ',') && !(skip_space(c), c->p < c->end && *c->p == ')'))
      return fail(err, errlen, "the .npy header's shape is not a tuple of whole numbers");
  }
  return 0;
}

/* The dtype descr names, or -1 with a reason in err. */
static int descr_dtype(const char *descr, char *err, size_t errlen) {
  for (int t = 0; t < DT_COUNT; t++) {
    const char *d = npy_descr((cl_dtype)t);
    if (!d) continue;
    /* NumPy writes '|' for one-byte types, and a reader may meet '<' or '=' there too */
    if (strcmp(descr, d) == 0 || (d[0] == '|' && (descr[0] == '<' || descr[0] == '=') &&
                                  strcmp(descr + 1, d + 1) == 0))
      return t;
  }
  char kind = descr[0] == '<' || descr[0] == '>' || descr[0] == '|' || descr[0] == '='
                  ? descr[1] : descr[0];
  if (descr[0] == '>' && strchr("fiuc", kind) && strcmp(descr + 1, "i1") && strcmp(descr + 1, "u1"))
    snprintf(err, errlen, "the .npy file holds big-endian data ('%s'); cudalab reads "
             "little-endian only: in NumPy, save a.astype(a.dtype.newbyteorder('<'))", descr);
  else if (kind == 'O')
    snprintf(err, errlen, "the .npy file holds Python objects ('%s'), not numbers: cudalab "
             "arrays hold numbers of one type (%s)", descr, dtype_names());
  else if (kind == 'b' || kind == '?')
    snprintf(err, errlen, "the .npy file holds booleans ('%s'): in NumPy, save "
             "a.astype(np.uint8) for a u8 array", descr);
  else
    snprintf(err, errlen, "the .npy file's dtype '%s' is not one cudalab arrays hold; "
             "they hold %s", descr, dtype_names());
  return -1;
}

int npy_read_header(const unsigned char *data, size_t len, npy_header *out, char *err,
                    size_t errlen) {
  size_t need;
  if (npy_header_size(data, len, &need, err, errlen)) return -1;
  if (len < need) return fail(err, errlen, "truncated: the file ends inside the .npy header");
  memset(out, 0, sizeof *out);
  out->dtype = -1;
  out->data_offset = need;
  cursor c = {(const char *)data + (data[6] == 1 ? 10 : 12), (const char *)data + need};
  int have_descr = 0, have_shape = 0, fortran = 0;
  if (!take(&c, '{')) return fail(err, errlen, "the .npy header is not a dict");
  while (!take(&c, '}')) {
    char key[32];
    if (read_string(&c, key, sizeof key) || !take(&c, ':'))
      return fail(err, errlen, "the .npy header is not a dict of 'descr', 'fortran_order' "
                               "and 'shape'");
    if (strcmp(key, "descr") == 0 && !have_descr) {
      char descr[32];
      skip_space(&c);
      if (c.p < c.end && *c.p == '[')
        return fail(err, errlen, "the .npy file holds structured records (a list of fields), "
                                 "not numbers of one type: save one field at a time");
      if (read_string(&c, descr, sizeof descr))
        return fail(err, errlen, "the .npy header's descr is not a string");
      if ((out->dtype = descr_dtype(descr, err, errlen)) < 0) return -1;
      have_descr = 1;
    } else if (strcmp(key, "fortran_order") == 0) {
      if (read_word(&c, "True")) fortran = 1;
      else if (!read_word(&c, "False"))
        return fail(err, errlen, "the .npy header's fortran_order is not True or False");
    } else if (strcmp(key, "shape") == 0 && !have_shape) {
      if (read_shape(&c, out, err, errlen)) return -1;
      have_shape = 1;
    } else {
      snprintf(err, errlen, "the .npy header has a key '%s' that NumPy does not write, or "
               "one twice", key);
      return -1;
    }
    if (!take(&c, ',') && !(skip_space(&c), c.p < c.end && *c.p == '}'))
      return fail(err, errlen, "the .npy header is not a dict");
  }
  if (!have_descr || !have_shape)
    return fail(err, errlen, "the .npy header lacks its descr or its shape");
  int dims_over_one = 0;
  for (int i = 0; i < out->ndim; i++) dims_over_one += out->shape[i] > 1;
  if (fortran && dims_over_one > 1)
    return fail(err, errlen, "the .npy file is in Fortran order (column by column); cudalab "
                             "reads C order: in NumPy, save np.ascontiguousarray(a)");
  return 0;
}
