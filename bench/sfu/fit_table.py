#!/usr/bin/env python3
"""fit_table.py: derives the tables of the H200's special-function unit from the GPU's results.

    make sfu-check SFU_DUMP=DIR          (on a GPU: the results of whole binades, into DIR)
    python3 bench/sfu/fit_table.py DIR > sim/sim_sfu_tables.h

DIR holds, for one or two binades of inputs per function, the GPU's result minus the correctly
rounded one in ulps, one int8 per input (bench/sfu/exhaustive.cu names the files
<instruction>.<first input in hex>.i8). Needs numpy and scipy (Debian: python3-numpy
python3-scipy); only regenerating the tables does.

The unit splits a fixed-point significand into a segment s (its top bits) and an offset u (the
rest) and computes V = a[s] + b[s]*u + c[s]*S(u) in integers, keeping V >> 15. S(u) is u
squared by a folded array (bit i times bit j at column i+j+1 for i < j, bit i at column 2i)
whose columns below `drop` are left out, shifted right by `drop`. For each segment a linear
program finds the real quadratic with the widest margin to the GPU's results; integer b and c
near it are searched, which leaves an interval of a that reproduces every result of the segment
(its middle is kept). Each row is checked against every input of its segment before it is
written; a segment the dumps do not cover, or that no row reproduces, is an error.
"""
import os
import sys

import numpy as np
from scipy.optimize import linprog

SHIFT = 15  # V's bits from here up are the output


def load(dump_dir, ptx, first, count):
    path = os.path.join(dump_dir, "%s.%08x.i8" % (ptx, first))
    d = np.fromfile(path, dtype=np.int8).astype(np.int64)
    if len(d) != count:
        sys.exit("%s: %d results, want %d" % (path, len(d), count))
    return d


def rn_div(num, den):
    q, r = np.divmod(np.int64(num), den)
    return q + (2 * r >= den)


def rcp_samples(dump_dir):
    """1/x for x = 1 + m/2^23 in [1, 2): g/2^24, the correctly rounded value plus the GPU's
    difference (g = 2^24 at x = 1); segment m >> 16, offset m & 0xffff."""
    m = np.arange(1 << 23, dtype=np.int64)
    g = rn_div(1 << 47, (1 << 23) + m) + load(dump_dir, "rcp.approx.ftz.f32", 0x3f800000, 1 << 23)
    return m >> 16, m & 0xFFFF, g


def ex2_samples(dump_dir):
    """2^f's fraction (23 bits) for the 23-bit fixed-point fraction f of x: from x in [0.5, 1)
    (f = x's top 23 bits, the upper 32 segments) and x in (-1, -0.5] (f complemented, the lower
    32); the input's last bit is below the fixed point, so every other input is enough."""
    m = np.arange(0, 1 << 23, 2, dtype=np.int64)
    fixed = ((1 << 23) + m) >> 1  # |x| * 2^23, truncated
    ss, us, gs = [], [], []
    for first, f in ((0x3F000000, fixed), (0xBF000000, (1 << 23) - 1 - fixed)):
        x = (np.uint32(first) + m.astype(np.uint32)).view(np.float32).astype(np.float64)
        ref = np.exp2(x).astype(np.float32).view(np.uint32).astype(np.int64)
        d = load(dump_dir, "ex2.approx.ftz.f32", first, 1 << 23)[::2]
        ss.append(f >> 17)
        us.append(f & 0x1FFFF)
        gs.append((ref + d) & 0x7FFFFF)
    return np.concatenate(ss), np.concatenate(us), np.concatenate(gs)


# name: (samples, segments, bits of u, first squarer column kept)
FUNCTIONS = [
    ("rcp", rcp_samples, 128, 16, 17),
    ("ex2", ex2_samples, 64, 17, 19),
]


def folded_square(u, ubits, drop):
    bits = [(u >> i) & 1 for i in range(ubits)]
    out = np.zeros_like(u)
    for i in range(ubits):
        for j in range(i, ubits):
            col = 2 * i if i == j else i + j + 1
            if col >= drop:
                out += (bits[i] & bits[j]) << col
    return out >> drop


def widest_quadratic(g, u, S):
    """Real (c0, c1, c2) with the widest margin for floor(c0 + c1*u + c2*S) == g."""
    V = np.column_stack([np.ones(len(u)), u, S])
    mu = g.mean()
    beta = np.linalg.lstsq(V, g - mu, rcond=None)[0]  # centred first: the LP is then well scaled
    r = g - mu - V @ beta
    ones = np.ones((len(u), 1))
    A = np.vstack([np.hstack([-V, ones]), np.hstack([V, ones])])
    b = np.concatenate([-r, r + 1])
    res = linprog([0, 0, 0, -1], A_ub=A, b_ub=b, bounds=[(None, None)] * 3 + [(None, 1)],
                  method="highs")
    if res.status != 0 or res.x[3] < 0:
        return None
    c = res.x[:3] + beta
    c[0] += mu
    return c


def fit_segment(g, u, S):
    c = widest_quadratic(g.astype(np.float64), u.astype(np.float64), S.astype(np.float64))
    if c is None:
        return None
    for db in sorted(range(-3, 4), key=abs):
        for dc in sorted(range(-3, 4), key=abs):
            b = int(round(c[1] * 2 ** SHIFT)) + db
            cc = int(round(c[2] * 2 ** SHIFT)) + dc
            t = b * u + cc * S
            lo = ((g << SHIFT) - t).max()
            hi = (((g + 1) << SHIFT) - 1 - t).min()
            if lo <= hi:
                return (int(lo + hi) // 2, b, cc)
    return None


def table(name, samples, segments, ubits, drop, dump_dir):
    seg, u, g = samples(dump_dir)
    S_all = folded_square(np.arange(1 << ubits, dtype=np.int64), ubits, drop)
    rows = []
    for s in range(segments):
        sel = seg == s
        if not sel.any():
            sys.exit("%s: no results for segment %d in %s" % (name, s, dump_dir))
        us, gs = u[sel], g[sel]
        S = S_all[us]
        row = fit_segment(gs, us, S)
        if row is None:
            sys.exit("%s: no row of this form reproduces segment %d" % (name, s))
        a, b, c = row
        assert np.array_equal((a + b * us + c * S) >> SHIFT, gs)
        rows.append(row)
    print("%s: %d segments fitted" % (name, segments), file=sys.stderr)
    lines = ["static const sfu_row sfu_%s_rows[%d] = {" % (name, segments),
             "  /* %s: %d segments, u of %d bits, squarer columns from %d, V >> %d */"
             % (name, segments, ubits, drop, SHIFT)]
    lines += ["  {%dLL, %d, %d}, /* %d */" % (a, b, c, s) for s, (a, b, c) in enumerate(rows)]
    return "\n".join(lines) + "\n};\n"


HEADER = """/* sim_sfu_tables.h: the coefficient tables of the H200's special-function unit, for sim_sfu.c.
 *
 * Generated by bench/sfu/fit_table.py from the GPU's results on every input of whole binades
 * (`make sfu-check SFU_DUMP=dir`, measured on an NVIDIA H200); do not edit by hand. Row s serves
 * the segment of significands whose top bits are s: the unit computes V = a + b*u + c*S(u) for
 * the offset u below those bits (sim_sfu.c says how S is formed) and keeps V >> 15. Several
 * values of a give the same results; the generator keeps the middle of that range. */
#ifndef SIM_SFU_TABLES_H
#define SIM_SFU_TABLES_H

#include <stdint.h>

typedef struct {
  int64_t a;
  int32_t b, c;
} sfu_row;
"""


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: fit_table.py DUMP_DIR > sim/sim_sfu_tables.h")
    parts = [HEADER]
    for name, samples, segments, ubits, drop in FUNCTIONS:
        parts.append(table(name, samples, segments, ubits, drop, sys.argv[1]))
    sys.stdout.write("\n".join(parts) + "\n#endif\n")


if __name__ == "__main__":
    main()
