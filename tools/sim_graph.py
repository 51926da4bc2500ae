#!/usr/bin/env python3
"""tools/sim_graph.py [FOLDER]: the file graph of a C folder (default sim/), for ARCHITECTURE.md's
figures of the simulator's stages: files, arrows, circles and the arrows that run back up.

A file is a .c with the .h of the same name (ptx_parse.c and ptx_parse.h are one file); a header
with no .c, or a .def table, is a file of its own. There is an arrow from A to B when A uses a
name B defines: a function or global variable defined in B.c, or a type, macro, enum constant or
inline function of B.h. A header's prototypes are not uses (declaring is not calling), nor are
its `struct X *` forward references. Names defined in two files are left out.

A circle is a set of files each reachable from every other (a strongly connected component of
two or more). The files are put on floors (a file above everything it uses, circles broken by
a greedy order, Eades, Lin and Smyth 1993); an arrow that runs back up is one from a file to a
file on a higher floor, which only a circle can make.

Needs Universal Ctags (`ctags --output-format=json`). Example: python3 tools/sim_graph.py sim
"""
import json
import os
import re
import subprocess
import sys
from collections import defaultdict


def room(f):
    return f if f.endswith('.def') else f.rsplit('.', 1)[0]


def strip(text):
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    text = re.sub(r'//[^\n]*', ' ', text)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)


def graph(folder):
    files = sorted(f for f in os.listdir(folder) if f.endswith(('.c', '.h', '.def')))
    try:
        out = subprocess.run(['ctags', '--output-format=json', '--fields=+{file}',
                              '--c-kinds=fdgmstuve', '-f', '-'] +
                             [os.path.join(folder, f) for f in files],
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit('sim_graph: Universal Ctags is needed (ctags --output-format=json): %s' % e)
    defs, funcs = defaultdict(set), set()
    for line in out.splitlines():
        t = json.loads(line)
        f, kind = os.path.basename(t['path']), t['kind']
        if kind == 'member':
            continue
        if f.endswith('.c') and (t.get('file') or kind not in ('function', 'variable')):
            continue  # file-scope names of a .c are its own
        defs[t['name']].add(room(f))
        if f.endswith('.c'):
            funcs.add(t['name'])
    uses = defaultdict(lambda: defaultdict(set))
    for f in files:
        text = strip(open(os.path.join(folder, f), encoding='utf-8', errors='replace').read())
        if f.endswith('.h'):
            text = re.sub(r'struct\s+\w+\s*\*', ' ', text)
        for w in set(re.findall(r'[A-Za-z_]\w*', text)):
            if f.endswith('.h') and w in funcs:
                continue
            if len(defs.get(w, ())) == 1:
                (b,) = defs[w]
                if b != room(f):
                    uses[room(f)][b].add(w)
    return sorted(set(room(f) for f in files)), uses


def circles(nodes, uses):
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in uses[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            c = []
            while True:
                w = stack.pop()
                on.discard(w)
                c.append(w)
                if w == v:
                    break
            out.append(sorted(c))

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in index:
            visit(v)
    return out


def greedy_order(c, uses):
    """Eades-Lin-Smyth: an order of circle c's files with few arrows against it (users first)."""
    left, head, tail = set(c), [], []
    while left:
        moved = True
        while moved:
            moved = False
            for v in sorted(left):
                if not any(w in left for w in uses[v]):  # uses nothing left: to the bottom
                    tail.insert(0, v)
                    left.discard(v)
                    moved = True
                elif not any(v in uses[u] for u in left if u != v):  # used by nothing left
                    head.append(v)
                    left.discard(v)
                    moved = True
        if left:
            v = max(sorted(left), key=lambda x: sum(w in left for w in uses[x]) -
                    sum(x in uses[u] for u in left))
            head.append(v)
            left.discard(v)
    return head + tail


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else 'sim'
    nodes, uses = graph(folder)
    cs = circles(nodes, uses)
    # floors: within a circle, by the greedy order; between them, a file above all it uses
    rank = {}
    for c in cs:
        for i, v in enumerate(reversed(greedy_order(c, uses))):
            rank[v] = i
    floor = {}
    for c in cs:  # Tarjan's output is in reverse topological order: what is used comes first
        base = max([floor[w] + 1 for v in c for w in uses[v] if w not in c and w in floor] or [0])
        for v in c:
            floor[v] = base + rank[v]
        # a file of the circle sits above the circle's files it uses in the greedy order
    arrows = [(a, b) for a in nodes for b in uses[a]]
    back = [(a, b) for a, b in arrows if floor[b] > floor[a]]
    big = [c for c in cs if len(c) > 1]
    print('files %d, arrows %d, arrows that run back up %d, circles %d%s' %
          (len(nodes), len(arrows), len(back), len(big),
           ''.join(' [%d: %s]' % (len(c), ' '.join(c)) for c in big)))
    for a, b in back:
        print('  back up: %s -> %s (%s)' % (a, b, ' '.join(sorted(uses[a][b])[:6])))


if __name__ == '__main__':
    main()
