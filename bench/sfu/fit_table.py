#!/usr/bin/env python3
"""fit_table.py: derives the tables of the H200's special-function unit from the GPU's results.

    make sfu-check SFU_DUMP=DIR          (on a GPU: the results of whole binades, into DIR)
    python3 bench/sfu/fit_table.py DIR > sim/sim_sfu_tables.h

DIR holds, for one or two ranges of inputs per function, the GPU's result minus the correctly
rounded one in ulps (a difference of ordered bits: for a negative result, of magnitudes the
other way round), one int8 per input, clipped at +-127 (bench/sfu/exhaustive.cu names the files
<instruction>.<first input in hex>.i8). Needs numpy and scipy (Debian: python3-numpy
python3-scipy); only regenerating the tables does.

The unit splits a fixed-point argument into a segment s (its top bits) and an offset u (the
rest) and computes V = a[s] + b[s]*u + c[s]*S(u) in integers. S(u) is u squared by a folded
array (bit i times bit j at column i+j+1 for i < j, bit i at column 2i) whose columns below
`drop` are left out, shifted right by `drop`. rcp and ex2 keep V >> 15, rsqrt V >> 16 and sqrt
V >> 17; sin turns V * 2^-37 into an f32, truncating, lg2 V * 2^-38 cut to 36 fraction bits,
and tanh V * 2^-P with P per binade (TANH_BINADES). Either way each GPU result bounds V to a window. For each segment a
linear program finds the real quadratic with the widest margin inside the windows; integer b
and c near it are searched, which leaves an interval of a that reproduces every result of the
segment (its middle is kept, on a's grid). Each row is checked against every input of its
segment before it is written; a segment the dumps do not cover, or that no row reproduces, is
an error.
"""
import os
import sys

import numpy as np
from scipy.optimize import linprog



def load(dump_dir, ptx, first, count):
    path = os.path.join(dump_dir, "%s.%08x.i8" % (ptx, first))
    d = np.fromfile(path, dtype=np.int8).astype(np.int64)
    if len(d) != count:
        sys.exit("%s: %d results, want %d" % (path, len(d), count))
    return d


def rn_div(num, den):
    q, r = np.divmod(np.int64(num), den)
    return q + (2 * r >= den)


def shifted(g, shift=15):
    """The window of V whose bits from `shift` up are g."""
    return g << shift, (g + 1) << shift


def rcp_samples(dump_dir):
    """1/x for x = 1 + m/2^23 in [1, 2): g/2^24, the correctly rounded value plus the GPU's
    difference (g = 2^24 at x = 1); segment m >> 16, offset m & 0xffff."""
    m = np.arange(1 << 23, dtype=np.int64)
    g = rn_div(1 << 47, (1 << 23) + m) + load(dump_dir, "rcp.approx.ftz.f32", 0x3f800000, 1 << 23)
    return (m >> 16, m & 0xFFFF) + shifted(g)


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
    return (np.concatenate(ss), np.concatenate(us)) + shifted(np.concatenate(gs))


def root_samples(dump_dir, name, fn, shift):
    """rsqrt or sqrt of x in [1, 4): the row is picked by the exponent's parity and the
    significand's top 6 bits, the offset is its other 17; the result's 24-bit significand is V's
    bits from `shift` up. rsqrt(1) is exact, outside the datapath, and left out."""
    i = np.arange(1 << 24, dtype=np.int64)
    x = (0x3F800000 + i).astype(np.uint32).view(np.float32).astype(np.float64)
    ref = fn(x).astype(np.float32).view(np.uint32).astype(np.int64)
    g = ((ref + load(dump_dir, name + ".approx.ftz.f32", 0x3F800000, 1 << 24)) & 0x7FFFFF) | 0x800000
    m, keep = i & 0x7FFFFF, i != 0
    seg = (i >> 23) << 6 | m >> 17
    return (seg[keep], (m & 0x1FFFF)[keep]) + shifted(g[keep], shift)


def lg2_samples(dump_dir):
    """lg2 of x = 1.m in [1, 2): segment m >> 17, offset m & 0x1ffff; V is in units of 2^-38
    and the result is V >> 2 (36 fraction bits) truncated to an f32, so each result bounds V.
    lg2(1) = 0 is exact, outside the datapath, and left out with the clipped differences."""
    m = np.arange(1 << 23, dtype=np.int64)
    x = (0x3F800000 + m).astype(np.uint32).view(np.float32).astype(np.float64)
    d = load(dump_dir, "lg2.approx.ftz.f32", 0x3F800000, 1 << 23)
    g = np.log2(x).astype(np.float32).view(np.uint32).astype(np.int64) + d
    e = (g >> 23) - 127
    sig = (g & 0x7FFFFF) | 0x800000
    place = e - 23 + 36  # where the result's last bit sits in the 36-bit fixed point
    lo = np.where(place >= 0, sig << np.maximum(place, 0), sig >> np.maximum(-place, 0))
    hi = np.where(place >= 0, (sig + 1) << np.maximum(place, 0), lo + 1)
    keep = (m != 0) & (np.abs(d) < 127)
    return m[keep] >> 17, m[keep] & 0x1FFFF, lo[keep] << 2, hi[keep] << 2


# tanh, per binade k of |x| = 1.m * 2^k: the low bits of m the unit ignores, and V's last bit
# (2^-P); segments are the 6 - ignored bits above u's 17.
TANH_BINADES = {-8: (6, 38), -7: (6, 38), -6: (6, 37), -5: (5, 38), -4: (5, 37), -3: (4, 38),
                -2: (4, 37), -1: (4, 36), 0: (3, 37), 1: (2, 39), 2: (3, 37)}


def tanh_samples(dump_dir):
    """tanh of x in [2^-8, 8): segments numbered across the binades (binade k's first row is
    the count of the segments below it); V * 2^-P truncated to an f32 is the result, so each
    result bounds V. Below 2^-8 the unit returns x, from 8 up 1, outside the datapath."""
    n = 11 << 23
    i = np.arange(n, dtype=np.int64)
    bits = 0x3B800000 + i
    x = bits.astype(np.uint32).view(np.float32).astype(np.float64)
    d = load(dump_dir, "tanh.approx.f32", 0x3B800000, n)
    g = np.tanh(x).astype(np.float32).view(np.uint32).astype(np.int64) + d
    k = (bits >> 23) - 127
    first, ignored, place = 0, np.zeros(n, np.int64), np.zeros(n, np.int64)
    start = np.zeros(n, np.int64)
    for kk in range(-8, 3):
        q, P = TANH_BINADES[kk]
        sel = k == kk
        ignored[sel], place[sel], start[sel] = q, P, first
        first += 1 << (6 - q)
    M = (bits & 0x7FFFFF) >> ignored
    sig = (g & 0x7FFFFF) | 0x800000
    shift = (g >> 23) - 127 - 23 + place  # the result's last bit, in V's units
    keep = np.abs(d) < 127
    lo, hi = sig << shift, (sig + 1) << shift
    return (start + (M >> 17))[keep], (M & 0x1FFFF)[keep], lo[keep], hi[keep]


def gpu_bits(reference, d):
    """The GPU's f32 bits from the reference's and the dump's difference of ordered bits."""
    ref = reference.astype(np.float32).view(np.uint32).astype(np.int64)
    ordered = np.where(ref >> 31 == 1, -(ref & 0x7FFFFFFF), ref) + d
    return np.where(ordered < 0, (-ordered) | (1 << 31), ordered)


def sin_samples(dump_dir):
    """sin and cos of x in [1, 4): the 25-bit angle q of x/2pi (rounded toward zero, as the
    compiler's FMUL.RZ does), the quadrant folded away (odd quadrants complemented), segment
    r >> 17 and offset r & 0x1ffff; the result's magnitude is V * 2^-37 truncated to an f32, so
    each result bounds V. Results near 0, whose difference the dump clips, are left out."""
    i = np.arange(1 << 24, dtype=np.int64)
    bits = 0x3F800000 + i
    x = bits.astype(np.uint32).view(np.float32).astype(np.float64)
    sig = (bits & 0x7FFFFF) | 0x800000
    p = sig * 0xA2F983  # 0x3e22f983 = 0xa2f983 * 2^-26; p < 2^48
    wide = p >> 47  # 1 when p has 48 bits
    p >>= 23 + wide  # rounded toward zero to 24 bits
    # x/2pi = p * 2^(exponent - 127 - 49 + 23 + wide); its fraction to 25 bits:
    shift = (bits >> 23) - 127 - 26 + wide + 25
    q = np.where(shift >= 0, p << np.maximum(shift, 0), p >> np.maximum(-shift, 0)) & 0x1FFFFFF
    segs, us, los, his = [], [], [], []
    for name, fn, turn in (("sin", np.sin, 0), ("cos", np.cos, 1 << 23)):
        d = load(dump_dir, name + ".approx.ftz.f32", 0x3F800000, 1 << 24)
        g = gpu_bits(fn(x), d)
        qq = (q + turn) & 0x1FFFFFF
        r = np.where((qq >> 23) & 1 == 1, ~qq & 0x7FFFFF, qq & 0x7FFFFF)
        mag = g & 0x7FFFFFFF
        e = mag >> 23
        keep = (np.abs(d) < 127) & (e >= 113) & (e < 255)
        scale = np.left_shift(1, np.where(keep, e - 113, 0))
        sig = (mag & 0x7FFFFF) | 0x800000
        segs.append((r >> 17)[keep])
        us.append((r & 0x1FFFF)[keep])
        los.append((sig * scale)[keep])
        his.append(((sig + 1) * scale)[keep])
    return tuple(np.concatenate(v) for v in (segs, us, los, his))


# name: (samples, segments, bits of u, first squarer column kept, step of a)
FUNCTIONS = [
    ("rcp", rcp_samples, 128, 16, 17, 1),
    ("ex2", ex2_samples, 64, 17, 19, 1),
    ("sin", sin_samples, 64, 17, 19, 1 << 12),  # a's last bit is 2^-25 of the result
    ("rsqrt", lambda d: root_samples(d, "rsqrt", lambda x: 1 / np.sqrt(x), 16), 128, 17, 19, 1),
    ("sqrt", lambda d: root_samples(d, "sqrt", np.sqrt, 17), 128, 17, 19, 1),
    ("lg2", lg2_samples, 64, 17, 19, 1),
    ("tanh", tanh_samples, 51, 17, 19, 1 << 15),  # a's last bit is 2^-(P-15)
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


def widest_quadratic(u, S, lo, hi):
    """Real (c0, c1, c2) for which c0 + c1*u + c2*S lies in [lo, hi) for every input with the
    widest margin, as a share of each window; None if none does."""
    w = (hi - lo).astype(np.float64)
    X = np.column_stack([np.ones(len(u)), u / float(u.max() + 1), S / float(S.max() + 1)])
    mid = (lo + hi) / 2.0
    beta = np.linalg.lstsq(X, mid, rcond=None)[0]  # first the least squares, then the LP's
    base = X @ beta                                 # correction to it: well scaled
    A = np.vstack([np.hstack([-X / w[:, None], np.ones((len(u), 1))]),
                   np.hstack([X / w[:, None], np.ones((len(u), 1))])])
    b = np.concatenate([(base - lo) / w, (hi - base) / w])
    res = linprog([0, 0, 0, -1], A_ub=A, b_ub=b, bounds=[(None, None)] * 3 + [(None, 0.5)],
                  method="highs")
    if res.status != 0 or res.x[3] < 0:
        return None
    c = beta + res.x[:3]
    return c[0], c[1] / float(u.max() + 1), c[2] / float(S.max() + 1)


def fit_segment(u, S, lo, hi, step):
    """Integer (a, b, c) with a + b*u + c*S in [lo, hi) for every input, a a multiple of step."""
    c = widest_quadratic(u, S, lo, hi)
    if c is None:
        return None
    for db in sorted(range(-3, 4), key=abs):
        for dc in sorted(range(-3, 4), key=abs):
            b = int(round(c[1])) + db
            cc = int(round(c[2])) + dc
            t = b * u + cc * S
            a_lo = int((lo - t).max())
            a_hi = int((hi - 1 - t).min())
            a = (a_lo + a_hi) // 2 // step * step
            if a < a_lo:
                a += step
            if a <= a_hi:
                return (a, b, cc)
    return None


def narrowest(seg, u, lo, hi):
    """One window per (segment, offset): the intersection of all the inputs that share it."""
    key = seg << 20 | u
    order = np.argsort(key, kind="stable")
    key, lo, hi = key[order], lo[order], hi[order]
    first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    return (key[first] >> 20, key[first] & 0xFFFFF, np.maximum.reduceat(lo, first),
            np.minimum.reduceat(hi, first))


def table(name, samples, segments, ubits, drop, step, dump_dir):
    seg, u, lo, hi = narrowest(*samples(dump_dir))
    if (lo >= hi).any():
        sys.exit("%s: inputs that share a segment and offset disagree" % name)
    S_all = folded_square(np.arange(1 << ubits, dtype=np.int64), ubits, drop)
    rows = []
    for s in range(segments):
        sel = seg == s
        if not sel.any():
            sys.exit("%s: no results for segment %d in %s" % (name, s, dump_dir))
        us, S = u[sel], S_all[u[sel]]
        row = fit_segment(us, S, lo[sel], hi[sel], step)
        if row is None:
            sys.exit("%s: no row of this form reproduces segment %d" % (name, s))
        a, b, c = row
        v = a + b * us + c * S
        assert ((v >= lo[sel]) & (v < hi[sel])).all()
        rows.append(row)
    print("%s: %d segments fitted" % (name, segments), file=sys.stderr)
    lines = ["static const sfu_row sfu_%s_rows[%d] = {" % (name, segments),
             "  /* %s: %d segments, u of %d bits, squarer columns from %d */"
             % (name, segments, ubits, drop)]
    lines += ["  {%dLL, %d, %d}, /* %d */" % (a, b, c, s) for s, (a, b, c) in enumerate(rows)]
    return "\n".join(lines) + "\n};\n"


def tanh_binade_table():
    lines = ["/* tanh, per binade k = -8..2 of |x|: the significand's low bits ignored, V's last bit",
             " * (2^-place) and the binade's first row of sfu_tanh_rows */",
             "static const struct sfu_tanh_binade {",
             "  uint8_t ignored, place, first;",
             "} sfu_tanh_binades[11] = {"]
    first = 0
    for k in range(-8, 3):
        q, P = TANH_BINADES[k]
        lines.append("  {%d, %d, %d}, /* 2^%d: %d segments */" % (q, P, first, k, 1 << (6 - q)))
        first += 1 << (6 - q)
    return "\n".join(lines) + "\n};\n"


HEADER = """/* sim_sfu_tables.h: the coefficient tables of the H200's special-function unit, for sim_sfu.c.
 *
 * Generated by bench/sfu/fit_table.py from the GPU's results on every input of whole binades
 * (`make sfu-check SFU_DUMP=dir`, measured on an NVIDIA H200); do not edit by hand. Row s serves
 * the segment of arguments whose top bits are s: the unit computes V = a + b*u + c*S(u) for the
 * offset u below those bits (sim_sfu.c says how S is formed and what is kept of V). Several
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
    for name, samples, segments, ubits, drop, step in FUNCTIONS:
        parts.append(table(name, samples, segments, ubits, drop, step, sys.argv[1]))
    parts.append(tanh_binade_table())
    sys.stdout.write("\n".join(parts) + "\n#endif\n")


if __name__ == "__main__":
    main()
