/* test_npy.c: the .npy header (repl/common/npy.c) written as NumPy writes it (version 1.0, a
 * multiple of 64 bytes, Python's tuple spelling) and read back; and headers a hostile or foreign
 * file may hold, each refused with its reason rather than read past its end. */
#include <string.h>

#include "check.h"
#include "npy.h"

/* A version 1.0 header around dict, padded as NumPy pads it, into buf; its length. */
static size_t make(char *buf, const char *dict) {
  size_t n = strlen(dict), total = (10 + n + 1 + 63) / 64 * 64;
  memcpy(buf, "\x93NUMPY\1\0", 8);
  buf[8] = (char)((total - 10) & 0xff);
  buf[9] = (char)((total - 10) >> 8);
  memcpy(buf + 10, dict, n);
  memset(buf + 10 + n, ' ', total - 11 - n);
  buf[total - 1] = '\n';
  return total;
}

static int refused(const char *dict, const char *why) {
  char buf[512], err[256] = "";
  npy_header h;
  size_t len = make(buf, dict);
  return npy_read_header((const unsigned char *)buf, len, &h, err, sizeof err) == -1 &&
         strstr(err, why) != NULL;
}

int main(void) {
  PLAN(11);
  char buf[512], err[256];
  size_t shape[2] = {3, 0};
  size_t len = npy_write_header(buf, sizeof buf, "<f4", shape, 1);
  const char *want = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }";
  CHECK("written: 128 bytes, NumPy's dict, padding and newline",
        len == 128 && memcmp(buf, "\x93NUMPY\1\0\x76\0", 10) == 0 &&
            memcmp(buf + 10, want, strlen(want)) == 0 && buf[127] == '\n' && buf[126] == ' ');
  npy_header h;
  CHECK("read back: f32, one dimension of 3, data at 128",
        npy_read_header((unsigned char *)buf, len, &h, err, sizeof err) == 0 &&
            h.dtype == DT_F32 && h.ndim == 1 && h.shape[0] == 3 && h.n == 3 &&
            h.data_offset == 128);
  shape[0] = 2;
  shape[1] = 5;
  len = npy_write_header(buf, sizeof buf, npy_descr(DT_U8), shape, 2);
  CHECK("two dimensions: (2, 5), '|u1'",
        strstr(buf + 10, "'descr': '|u1', 'fortran_order': False, 'shape': (2, 5), }") &&
            npy_read_header((unsigned char *)buf, len, &h, err, sizeof err) == 0 &&
            h.n == 10 && h.ndim == 2);
  int all = 1;
  for (int t = 0; t < DT_COUNT; t++) {
    const char *d = npy_descr((cl_dtype)t);
    if (!d) continue;
    len = npy_write_header(buf, sizeof buf, d, shape, 1);
    all &= npy_read_header((unsigned char *)buf, len, &h, err, sizeof err) == 0 && h.dtype == t;
  }
  CHECK("every descr written reads back as its dtype", all);
  CHECK("no descr for bf16 (NumPy has none)", npy_descr(DT_BF16) == NULL);
  CHECK("NumPy's names, from the table's kinds and sizes",
        !strcmp(npy_descr(DT_F32), "<f4") && !strcmp(npy_descr(DT_F64), "<f8") &&
            !strcmp(npy_descr(DT_F16), "<f2") && !strcmp(npy_descr(DT_U8), "|u1") &&
            !strcmp(npy_descr(DT_I8), "|i1") && !strcmp(npy_descr(DT_I16), "<i2") &&
            !strcmp(npy_descr(DT_U64), "<u8") && !strcmp(npy_descr(DT_I32), "<i4"));
  CHECK("a key inside a string does not count",
        refused("{'descr': '<f4', 'fortran_order': False, 'x': 'shape': (3,)}",
                "a key 'x' that NumPy does not write"));
  CHECK("a header that ends inside a string is refused",
        refused("{'descr': '<f4", "the .npy header's descr is not a string"));
  CHECK("a dimension past 2^48 elements is refused",
        refused("{'descr': '<f4', 'fortran_order': False, 'shape': (65536, 65536, 65537)}",
                "shape is too large"));
  unsigned char short_[] = "\x93NUMPY\1\0\xff";
  size_t need;
  CHECK("nine bytes are not enough to know the header's length",
        npy_header_size(short_, 9, &need, err, sizeof err) == -1 && strstr(err, "truncated"));
  CHECK("a header that claims more than the file holds is refused",
        npy_read_header((unsigned char *)"\x93NUMPY\1\0\x40\0{", 11, &h, err, sizeof err) == -1 &&
            strstr(err, "truncated: the file ends inside the .npy header"));
  return failures != 0;
}
