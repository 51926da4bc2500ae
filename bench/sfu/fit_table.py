#!/usr/bin/env python3
"""fit_table.py: derives the tables of the H200's special-function unit from the GPU's results.

    python3 bench/sfu/fit_table.py rcp DUMP_DIR > sim/sim_sfu_tables.h

DUMP_DIR is what `make sfu-check SFU_DUMP=DIR` wrote on a GPU: for one binade of inputs per
function, the GPU's result minus the correctly rounded one, in ulps (bench/sfu/exhaustive.cu).
Needs numpy and scipy (Debian: python3-numpy python3-scipy); only regenerating the tables does.

The unit evaluates, for a significand split into a segment s (its top bits) and an offset u
(the rest), V = A[s] + B[s]*u + C[s]*S(u) in integers, and keeps V >> F. S(u) is u squared by a
folded squarer (bit i*j at column i+j+1 for i < j, bit i at column 2i) whose columns below T
are dropped. For each segment a linear program finds the real quadratic with the widest margin
to the GPU's results; integer B and C near it are searched, which leaves an interval of A that
reproduces every result of the segment (the middle is kept). Each table is checked against
every input of its binade before it is written.
"""
import sys

import numpy as np
from scipy.optimize import linprog

# per function: dump file, bits of the offset u, squarer truncation T, final shift F, and the
# correctly rounded result's integer significand G (the table's target scale) for significand m
SPECS = {
    "rcp": {
        "dump": "rcp.approx.ftz.f32.i8", "n": 1 << 23, "ubits": 16, "T": 17, "F": 15,
        # 1/x for x = 1 + m/2^23, as G/2^24 rounded to nearest (G = 2^24 at x = 1)
        "target": lambda m: _rn_div(1 << 47, (1 << 23) + m),
    },
}


def _rn_div(num, den):
    q, r = np.divmod(np.int64(num), den)
    return q + (2 * r >= den)


def folded_square(u, ubits, T):
    """S(u): u*u from the folded partial-product array, columns below T dropped, >> T."""
    bits = [(u >> i) & 1 for i in range(ubits)]
    out = np.zeros_like(u)
    for i in range(ubits):
        for j in range(i, ubits):
            col = 2 * i if i == j else i + j + 1
            if col >= T:
                out += (bits[i] & bits[j]) << col
    return out >> T


def widest_quadratic(g, u, S):
    """Real (c0, c1, c2) with the widest margin for floor(c0 + c1*u + c2*S) == g."""
    V = np.column_stack([np.ones(len(u)), u, S])
    mu = g.mean()
    beta = np.linalg.lstsq(V, g - mu, rcond=None)[0]  # centre first: the LP is then well scaled
    r = g - mu - V @ beta
    ones = np.ones((len(u), 1))
    A = np.vstack([np.hstack([-V, ones]), np.hstack([V, ones])])
    b = np.concatenate([-r, r + 1])
    res = linprog([0, 0, 0, -1], A_ub=A, b_ub=b, bounds=[(None, None)] * 3 + [(None, 1)],
                  method="highs")
    if res.status != 0:
        return None, float("nan")
    c = res.x[:3] + beta
    c[0] += mu
    return c, res.x[3]


def fit_segment(g, u, S, F):
    c, margin = widest_quadratic(g.astype(np.float64), u.astype(np.float64), S.astype(np.float64))
    if c is None or margin < 0:
        return None
    for dB in sorted(range(-3, 4), key=abs):
        for dC in sorted(range(-3, 4), key=abs):
            B = int(round(c[1] * 2 ** F)) + dB
            C = int(round(c[2] * 2 ** F)) + dC
            t = B * u + C * S
            lo = ((g << F) - t).max()
            hi = (((g + 1) << F) - 1 - t).min()
            if lo <= hi:
                return (int(lo + hi) // 2, B, C)
    return None


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in SPECS:
        sys.exit("usage: fit_table.py {%s} DUMP_DIR" % ",".join(SPECS))
    name, spec = sys.argv[1], SPECS[sys.argv[1]]
    d = np.fromfile("%s/%s" % (sys.argv[2], spec["dump"]), dtype=np.int8).astype(np.int64)
    if len(d) != spec["n"]:
        sys.exit("%s: %d results, want %d" % (spec["dump"], len(d), spec["n"]))
    m = np.arange(spec["n"], dtype=np.int64)
    G = spec["target"](m) + d
    ub = spec["ubits"]
    u = np.arange(1 << ub, dtype=np.int64)
    S = folded_square(u, ub, spec["T"])
    rows = []
    for s in range(spec["n"] >> ub):
        g = G[s << ub:(s + 1) << ub]
        row = fit_segment(g, u, S, spec["F"])
        if row is None:
            sys.exit("%s: segment %d has no table row of this form" % (name, s))
        A, B, C = row
        if not np.array_equal((A + B * u + C * S) >> spec["F"], g):
            sys.exit("%s: segment %d does not reproduce" % (name, s))
        rows.append(row)
    print("  /* %s: %d segments, u of %d bits, squarer columns from %d, V >> %d */"
          % (name, len(rows), ub, spec["T"], spec["F"]))
    for s, (A, B, C) in enumerate(rows):
        print("  {%dLL, %d, %d}, /* %d */" % (A, B, C, s))


if __name__ == "__main__":
    main()
