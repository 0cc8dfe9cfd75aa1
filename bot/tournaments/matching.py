"""Maximum-weight matching for the Dutch engine of caissify-pairings, fast enough for big Swiss fields.

caissify-pairings pairs a round as bbpPairings does: one graph of the whole field and, bracket by
bracket, dozens of maximum-weight matchings (``networkx.max_weight_matching``, maxcardinality) in
which a few vertices' edge weights change between one run and the next. Run from scratch each time
in pure Python on weights of 200-400 bits, that costs O(n^3) a run: 45 s a round at 200 players.

``Matcher`` gives the same maximum: it keeps the last run's optimal dual solution (vertex duals,
blossoms and their duals, the matching) and starts the next run from it, repaired where the weights
changed (the blossoms holding a changed vertex are dissolved into their vertices' duals, matched
edges that changed are unmatched, duals are raised until every edge is feasible again), so a run
grows only the few augmenting paths the change opened. Every warm-started result is checked with
the LP certificate of optimality (every edge feasible, matched edges tight, a perfect matching,
blossom duals non-negative); one that does not pass is computed again from scratch, so the weight
returned is always the maximum. With an odd number of vertices a dummy vertex joined to all by
weight-0 edges makes the maximum-cardinality matching perfect (the vertex it takes is the one left
out), which is what lets the certificate hold.

``_blossom_run`` is networkx 3.6.1's ``max_weight_matching`` (networkx/algorithms/matching.py,
BSD-3-Clause, (c) 2004-2025 NetworkX Developers; after Joris van Rantwijk's mwmatching.py, itself
after Galil, "Efficient Algorithms for Finding Maximum Matching in Graphs", 1986), with the graph
as a dict of dicts of integer weights instead of a networkx Graph, the comment lines and the final
self-check dropped, and its state passed in and out. Run from scratch it makes the same steps in
the same order as networkx, so it returns the same matching.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from operator import sub
from typing import Any

# A graph: adj[v][w] == adj[w][v] == the weight of edge vw; vertices are ints.
Adj = dict[int, dict[int, int]]


class NoNode:
    """Dummy value which is different from any node."""


class Blossom:
    """A non-trivial blossom: ``childs`` its sub-blossoms from the base round the cycle, ``edges``
    the edges joining consecutive ones, ``mybestedges`` least-slack edges to S-blossoms."""

    __slots__ = ["childs", "edges", "mybestedges"]

    def __init__(self) -> None:
        self.childs: list[Any] = []
        self.edges: list[tuple[int, int]] = []
        self.mybestedges: list[tuple[int, int]] | None = None

    def leaves(self) -> Iterator[int]:
        stack = [*self.childs]
        while stack:
            t = stack.pop()
            if isinstance(t, Blossom):
                stack.extend(t.childs)
            else:
                yield t


@dataclass
class State:
    """The primal-dual state: the matching and the (doubled) dual solution with its blossoms."""

    mate: dict[int, int] = field(default_factory=dict)
    inblossom: dict[int, Any] = field(default_factory=dict)
    blossomparent: dict[Any, Any] = field(default_factory=dict)
    blossombase: dict[Any, int] = field(default_factory=dict)
    dualvar: dict[int, int] = field(default_factory=dict)
    blossomdual: dict[Blossom, int] = field(default_factory=dict)


def fresh_state(adj: Adj) -> State:
    """networkx's starting point: nothing matched, every vertex dual the largest weight."""
    maxweight = 0
    for i, nbrs in adj.items():
        for j, wt in nbrs.items():
            if i != j and wt > maxweight:
                maxweight = wt
    nodes = list(adj)
    return State(mate={}, inblossom={v: v for v in nodes}, blossomparent=dict.fromkeys(nodes),
                 blossombase={v: v for v in nodes}, dualvar=dict.fromkeys(nodes, maxweight), blossomdual={})


def max_weight_matching(adj: Adj, maxcardinality: bool = False) -> set[tuple[int, int]]:
    """The matching networkx's ``max_weight_matching(G, maxcardinality)`` returns for the same graph."""
    if not adj:
        return set()
    st = fresh_state(adj)
    _blossom_run(adj, maxcardinality, st)
    return {(v, w) for v, w in st.mate.items() if v < w}


def _blossom_run(adj: Adj, maxcardinality: bool, st: State, moved: set[int] | None = None) -> None:
    """networkx 3.6.1's ``max_weight_matching`` main loop (see the module docstring), on ``adj``
    and from the state ``st``, which it updates in place; ``moved`` gets the vertices whose dual
    it changed (a blossom's dual changes only with the duals of the vertices inside)."""
    if moved is None:
        moved = set()
    gnodes: list[Any] = list(adj)
    mate = st.mate
    inblossom = st.inblossom
    blossomparent = st.blossomparent
    blossombase = st.blossombase
    dualvar = st.dualvar
    blossomdual = st.blossomdual
    label: dict[Any, Any] = {}
    labeledge: dict[Any, Any] = {}
    bestedge: dict[Any, Any] = {}
    allowedge: dict[Any, Any] = {}
    queue: list[Any] = []

    def slack(v: Any, w: Any) -> Any:
        return dualvar[v] + dualvar[w] - 2 * adj[v][w]

    def assignLabel(w: Any, t: int, v: Any) -> None:
        b = inblossom[w]
        assert label.get(w) is None and label.get(b) is None
        label[w] = label[b] = t
        if v is not None:
            labeledge[w] = labeledge[b] = (v, w)
        else:
            labeledge[w] = labeledge[b] = None
        bestedge[w] = bestedge[b] = None
        if t == 1:
            if isinstance(b, Blossom):
                queue.extend(b.leaves())
            else:
                queue.append(b)
        elif t == 2:
            base = blossombase[b]
            assignLabel(mate[base], 1, base)

    def scanBlossom(v: Any, w: Any) -> Any:
        path = []
        base: Any = NoNode
        while v is not NoNode:
            b = inblossom[v]
            if label[b] & 4:
                base = blossombase[b]
                break
            assert label[b] == 1
            path.append(b)
            label[b] = 5
            if labeledge[b] is None:
                assert blossombase[b] not in mate
                v = NoNode
            else:
                assert labeledge[b][0] == mate[blossombase[b]]
                v = labeledge[b][0]
                b = inblossom[v]
                assert label[b] == 2
                v = labeledge[b][0]
            if w is not NoNode:
                v, w = w, v
        for b in path:
            label[b] = 1
        return base

    def addBlossom(base: Any, v: Any, w: Any) -> None:
        bb = inblossom[base]
        bv = inblossom[v]
        bw = inblossom[w]
        b = Blossom()
        blossombase[b] = base
        blossomparent[b] = None
        blossomparent[bb] = b
        b.childs = path = []
        b.edges = edgs = [(v, w)]
        while bv != bb:
            blossomparent[bv] = b
            path.append(bv)
            edgs.append(labeledge[bv])
            assert label[bv] == 2 or (
                label[bv] == 1 and labeledge[bv][0] == mate[blossombase[bv]]
            )
            v = labeledge[bv][0]
            bv = inblossom[v]
        path.append(bb)
        path.reverse()
        edgs.reverse()
        while bw != bb:
            blossomparent[bw] = b
            path.append(bw)
            edgs.append((labeledge[bw][1], labeledge[bw][0]))
            assert label[bw] == 2 or (
                label[bw] == 1 and labeledge[bw][0] == mate[blossombase[bw]]
            )
            w = labeledge[bw][0]
            bw = inblossom[w]
        assert label[bb] == 1
        label[b] = 1
        labeledge[b] = labeledge[bb]
        blossomdual[b] = 0
        for v in b.leaves():
            if label[inblossom[v]] == 2:
                queue.append(v)
            inblossom[v] = b
        bestedgeto: dict[Any, Any] = {}
        for bv in path:
            if isinstance(bv, Blossom):
                if bv.mybestedges is not None:
                    nblist = bv.mybestedges
                    bv.mybestedges = None
                else:
                    nblist = [
                        (v, w) for v in bv.leaves() for w in adj[v] if v != w
                    ]
            else:
                nblist = [(bv, w) for w in adj[bv] if bv != w]
            for k in nblist:
                (i, j) = k
                if inblossom[j] == b:
                    i, j = j, i
                bj = inblossom[j]
                if (
                    bj != b
                    and label.get(bj) == 1
                    and ((bj not in bestedgeto) or slack(i, j) < slack(*bestedgeto[bj]))
                ):
                    bestedgeto[bj] = k
            bestedge[bv] = None
        b.mybestedges = list(bestedgeto.values())
        mybestedge = None
        mybestslack: Any = None
        bestedge[b] = None
        for k in b.mybestedges:
            kslack = slack(*k)
            if mybestedge is None or kslack < mybestslack:
                mybestedge = k
                mybestslack = kslack
        bestedge[b] = mybestedge

    def expandBlossom(b: Any, endstage: bool) -> None:

        def _recurse(b: Any, endstage: bool) -> Iterator[Any]:
            for s in b.childs:
                blossomparent[s] = None
                if isinstance(s, Blossom):
                    if endstage and blossomdual[s] == 0:
                        yield s
                    else:
                        for v in s.leaves():
                            inblossom[v] = s
                else:
                    inblossom[s] = s
            if (not endstage) and label.get(b) == 2:
                entrychild = inblossom[labeledge[b][1]]
                j = b.childs.index(entrychild)
                if j & 1:
                    j -= len(b.childs)
                    jstep = 1
                else:
                    jstep = -1
                v, w = labeledge[b]
                while j != 0:
                    if jstep == 1:
                        p, q = b.edges[j]
                    else:
                        q, p = b.edges[j - 1]
                    label[w] = None
                    label[q] = None
                    assignLabel(w, 2, v)
                    allowedge[(p, q)] = allowedge[(q, p)] = True
                    j += jstep
                    if jstep == 1:
                        v, w = b.edges[j]
                    else:
                        w, v = b.edges[j - 1]
                    allowedge[(v, w)] = allowedge[(w, v)] = True
                    j += jstep
                bw = b.childs[j]
                label[w] = label[bw] = 2
                labeledge[w] = labeledge[bw] = (v, w)
                bestedge[bw] = None
                j += jstep
                while b.childs[j] != entrychild:
                    bv = b.childs[j]
                    if label.get(bv) == 1:
                        j += jstep
                        continue
                    if isinstance(bv, Blossom):
                        for v in bv.leaves():
                            if label.get(v):
                                break
                    else:
                        v = bv
                    if label.get(v):
                        assert label[v] == 2
                        assert inblossom[v] == bv
                        label[v] = None
                        label[mate[blossombase[bv]]] = None
                        assignLabel(v, 2, labeledge[v][0])
                    j += jstep
            label.pop(b, None)
            labeledge.pop(b, None)
            bestedge.pop(b, None)
            del blossomparent[b]
            del blossombase[b]
            del blossomdual[b]

        stack = [_recurse(b, endstage)]
        while stack:
            top = stack[-1]
            for s in top:
                stack.append(_recurse(s, endstage))
                break
            else:
                stack.pop()

    def augmentBlossom(b: Any, v: Any) -> None:

        def _recurse(b: Any, v: Any) -> Iterator[Any]:
            t = v
            while blossomparent[t] != b:
                t = blossomparent[t]
            if isinstance(t, Blossom):
                yield (t, v)
            i = j = b.childs.index(t)
            if i & 1:
                j -= len(b.childs)
                jstep = 1
            else:
                jstep = -1
            while j != 0:
                j += jstep
                t = b.childs[j]
                if jstep == 1:
                    w, x = b.edges[j]
                else:
                    x, w = b.edges[j - 1]
                if isinstance(t, Blossom):
                    yield (t, w)
                j += jstep
                t = b.childs[j]
                if isinstance(t, Blossom):
                    yield (t, x)
                mate[w] = x
                mate[x] = w
            b.childs = b.childs[i:] + b.childs[:i]
            b.edges = b.edges[i:] + b.edges[:i]
            blossombase[b] = blossombase[b.childs[0]]
            assert blossombase[b] == v

        stack = [_recurse(b, v)]
        while stack:
            top = stack[-1]
            for args in top:
                stack.append(_recurse(*args))
                break
            else:
                stack.pop()

    def augmentMatching(v: Any, w: Any) -> None:
        for s, j in ((v, w), (w, v)):
            while 1:
                bs = inblossom[s]
                assert label[bs] == 1
                assert (labeledge[bs] is None and blossombase[bs] not in mate) or (
                    labeledge[bs][0] == mate[blossombase[bs]]
                )
                if isinstance(bs, Blossom):
                    augmentBlossom(bs, s)
                mate[s] = j
                if labeledge[bs] is None:
                    break
                t = labeledge[bs][0]
                bt = inblossom[t]
                assert label[bt] == 2
                s, j = labeledge[bt]
                assert blossombase[bt] == t
                if isinstance(bt, Blossom):
                    augmentBlossom(bt, j)
                mate[j] = s

    while 1:

        label.clear()
        labeledge.clear()

        bestedge.clear()
        for b in blossomdual:
            b.mybestedges = None

        allowedge.clear()

        queue[:] = []

        for v in gnodes:
            if (v not in mate) and label.get(inblossom[v]) is None:
                assignLabel(v, 1, None)

        augmented = 0
        while 1:

            while queue and not augmented:
                v = queue.pop()
                assert label[inblossom[v]] == 1

                for w in adj[v]:
                    if w == v:
                        continue  # ignore self-loops
                    bv = inblossom[v]
                    bw = inblossom[w]
                    if bv == bw:
                        continue
                    if (v, w) not in allowedge:
                        kslack = slack(v, w)
                        if kslack <= 0:
                            allowedge[(v, w)] = allowedge[(w, v)] = True
                    if (v, w) in allowedge:
                        if label.get(bw) is None:
                            assignLabel(w, 2, v)
                        elif label.get(bw) == 1:
                            base = scanBlossom(v, w)
                            if base is not NoNode:
                                addBlossom(base, v, w)
                            else:
                                augmentMatching(v, w)
                                augmented = 1
                                break
                        elif label.get(w) is None:
                            assert label[bw] == 2
                            label[w] = 2
                            labeledge[w] = (v, w)
                    elif label.get(bw) == 1:
                        if bestedge.get(bv) is None or kslack < slack(*bestedge[bv]):
                            bestedge[bv] = (v, w)
                    elif label.get(w) is None:
                        if bestedge.get(w) is None or kslack < slack(*bestedge[w]):
                            bestedge[w] = (v, w)

            if augmented:
                break

            deltatype = -1
            delta: Any = None
            deltaedge: Any = None
            deltablossom: Any = None

            if not maxcardinality:
                deltatype = 1
                delta = min(dualvar.values())

            for v in gnodes:
                if label.get(inblossom[v]) is None and bestedge.get(v) is not None:
                    d = slack(*bestedge[v])
                    if deltatype == -1 or d < delta:
                        delta = d
                        deltatype = 2
                        deltaedge = bestedge[v]

            for b in blossomparent:
                if (
                    blossomparent[b] is None
                    and label.get(b) == 1
                    and bestedge.get(b) is not None
                ):
                    kslack = slack(*bestedge[b])
                    assert (kslack % 2) == 0
                    d = kslack // 2
                    if deltatype == -1 or d < delta:
                        delta = d
                        deltatype = 3
                        deltaedge = bestedge[b]

            for b in blossomdual:
                if (
                    blossomparent[b] is None
                    and label.get(b) == 2
                    and (deltatype == -1 or blossomdual[b] < delta)
                ):
                    delta = blossomdual[b]
                    deltatype = 4
                    deltablossom = b

            if deltatype == -1:
                assert maxcardinality
                deltatype = 1
                delta = max(0, min(dualvar.values()))

            for v in gnodes:
                if label.get(inblossom[v]) == 1:
                    dualvar[v] -= delta
                    if delta:
                        moved.add(v)
                elif label.get(inblossom[v]) == 2:
                    dualvar[v] += delta
                    if delta:
                        moved.add(v)
            for b in blossomdual:
                if blossomparent[b] is None:
                    if label.get(b) == 1:
                        blossomdual[b] += delta
                    elif label.get(b) == 2:
                        blossomdual[b] -= delta

            if deltatype == 1:
                break
            elif deltatype == 2:
                (v, w) = deltaedge
                assert label[inblossom[v]] == 1
                allowedge[(v, w)] = allowedge[(w, v)] = True
                queue.append(v)
            elif deltatype == 3:
                (v, w) = deltaedge
                allowedge[(v, w)] = allowedge[(w, v)] = True
                assert label[inblossom[v]] == 1
                queue.append(v)
            elif deltatype == 4:
                expandBlossom(deltablossom, False)


        for v in mate:
            assert mate[mate[v]] == v

        if not augmented:
            break

        for b in list(blossomdual.keys()):
            if b not in blossomdual:
                continue  # already expanded
            if blossomparent[b] is None and label.get(b) == 1 and blossomdual[b] == 0:
                expandBlossom(b, True)




def _chain(st: State, v: int) -> list[Blossom]:
    """The blossoms round vertex v, innermost first."""
    out: list[Blossom] = []
    t = st.blossomparent[v]
    while t is not None:
        out.append(t)
        t = st.blossomparent[t]
    return out


def _dissolve(st: State, top: Blossom) -> None:
    """Take away a top-level blossom, its sub-blossoms becoming top-level. Its dual goes to each
    vertex inside, so an edge inside keeps its slack and an edge leaving only gains slack: the
    base leaves its mate outside unless the blossom's dual was 0."""
    z, base = st.blossomdual[top], st.blossombase[top]
    for v in top.leaves():
        st.dualvar[v] += z
    for child in top.childs:
        st.blossomparent[child] = None
        if isinstance(child, Blossom):
            for v in child.leaves():
                st.inblossom[v] = child
        else:
            st.inblossom[child] = child
    del st.blossomparent[top], st.blossombase[top], st.blossomdual[top]
    if z:
        _unmatch(st, base)


def _unmatch(st: State, v: int) -> None:
    w = st.mate.pop(v, None)
    if w is not None:
        del st.mate[w]


def _single(st: State, v: int) -> None:
    """Dissolve the blossoms round v, outermost first, until v is a top-level vertex."""
    while isinstance(st.inblossom[v], Blossom):
        _dissolve(st, st.inblossom[v])


def _lowest(st: State, adj: Adj, v: int) -> int:
    """The least dual v can take with every edge of v still feasible."""
    dual = st.dualvar
    return max((2 * wt - dual[w] for w, wt in adj[v].items()), default=dual[v])


def _repair(st: State, adj: Adj, changed: list[tuple[int, int]]) -> None:
    """Make the last optimal state a valid start for the graph whose edges ``changed`` got another
    weight (or appeared, or went): every edge feasible, matched edges tight, blossoms intact.

    An edge inside a blossom dissolves it. An edge made infeasible raises the dual of one end, the
    end with more changed edges (a changed vertex is usually the centre of a star of them), which
    then leaves its mate. A matched edge whose weight fell stays matched if lowering one end's dual
    makes it tight again with the end's other edges feasible, else it is unmatched.

    The algorithm halves the slack of an edge between two S-vertices, which is even when every free
    vertex's dual has the same parity (tight edges pass a root's parity along its tree), so at the
    end the odd duals of free vertices are raised by one."""
    dual, mate, inblossom = st.dualvar, st.mate, st.inblossom
    count: dict[int, int] = {}
    for u, v in changed:
        count[u] = count.get(u, 0) + 1
        count[v] = count.get(v, 0) + 1
        if inblossom[u] is inblossom[v]:
            _single(st, u)
    raise_: set[int] = set()
    tighten: list[tuple[int, int]] = []
    for u, v in changed:
        wt = adj[u].get(v)
        if wt is not None and dual[u] + dual[v] < 2 * wt:
            raise_.add(u if (-count[u], u) < (-count[v], v) else v)
        elif mate.get(u) == v:
            tighten.append((u, v))
    for v in raise_:
        _single(st, v)
        dual[v] = max(dual[v], _lowest(st, adj, v))
        w = mate.get(v)
        if w is not None and dual[v] + dual[w] != 2 * adj[v].get(w, -dual[v] - dual[w]):
            _unmatch(st, v)
    for u, v in tighten:
        if mate.get(u) != v:
            continue
        wt = adj[u].get(v)
        if wt is not None and dual[u] + dual[v] != 2 * wt:
            for x, y in ((u, v), (v, u)):
                _single(st, x)
                if _lowest(st, adj, x) == 2 * wt - dual[y]:
                    dual[x] = 2 * wt - dual[y]
                    break
        if wt is None or dual[u] + dual[v] != 2 * wt:
            _single(st, u)
            _unmatch(st, u)
    for v in adj:
        if v not in mate and dual[v] % 2:
            _single(st, v)  # which may change v's dual
            dual[v] += dual[v] % 2


def _common(within: dict[Blossom, int], same_top: bool, chain: Callable[[int], list[Blossom]], j: int) -> int:
    """What the blossoms holding both ends add to the slack of an edge to j (see certified)."""
    if not same_top or not within:
        return 0
    return next((within[b] for b in chain(j) if b in within), 0)


def certified(st: State, adj: Adj, only: set[int] | None = None, perfect: bool = True) -> bool:
    """Whether the state proves its matching a maximum-weight perfect matching (Edmonds' LP for
    perfect matchings): every vertex matched; every edge's slack, with the duals of the blossoms
    holding both ends, non-negative; matched edges tight; blossom duals non-negative, and a blossom
    with a positive dual has exactly one vertex matched outside it.

    With ``only``, the edges checked are those at these vertices: enough when the state was
    certified before and only these vertices' duals, mates or edge weights have changed since.
    With ``perfect`` false, only the edges are checked: a valid state to start the algorithm from."""
    mate = st.mate
    if not perfect:
        return _feasible(st, adj, only)
    if len(mate) != len(adj) or any(z < 0 for z in st.blossomdual.values()):
        return False
    for b, z in st.blossomdual.items():
        if z:
            inside = set(b.leaves())
            if len(inside) % 2 == 0 or sum(mate[v] not in inside for v in inside) != 1:
                return False
    return _feasible(st, adj, only)


def _feasible(st: State, adj: Adj, only: set[int] | None) -> bool:
    """Every edge at the vertices ``only`` (default all) has a non-negative slack, and a matched one
    none (the slack counting the duals of the blossoms holding both ends)."""
    mate, dual, inblossom = st.mate, st.dualvar, st.inblossom
    chains: dict[int, list[Blossom]] = {}

    def chain(v: int) -> list[Blossom]:
        if v not in chains:
            chains[v] = _chain(st, v)
        return chains[v]

    for i in adj if only is None else only:
        nbrs = adj[i]
        di, m, top = dual[i], mate.get(i), inblossom[i]
        if m is not None and m not in nbrs:
            return False
        # Twice the duals of the blossoms round i from the outermost down to each, for the edges
        # inside them (whose slack counts the blossoms holding both ends).
        within: dict[Blossom, int] = {}
        if isinstance(top, Blossom):
            total = 0
            for b in reversed(chain(i)):
                total += 2 * st.blossomdual[b]
                within[b] = total

        # Without the blossom duals (never negative) a slack can only be smaller: check that first.
        if nbrs and min(map(sub, map(dual.__getitem__, nbrs), map((2).__mul__, nbrs.values()))) < -di:
            for j, wt in nbrs.items():
                s = di + dual[j] - 2 * wt
                if s < 0 and s + _common(within, inblossom[j] is top, chain, j) < 0:
                    return False
        if m is not None and di + dual[m] - 2 * nbrs[m] + _common(within, inblossom[m] is top, chain, m):
            return False
    return True


class Matcher:
    """Maximum-weight maximum-cardinality matchings of a sequence of graphs on the same vertices,
    each run warm-started from the last one's optimal state (see the module docstring).

    A warm start is checked before the run (every edge at a vertex whose dual, mate or edge
    weights the repair changed is feasible, and tight if matched; everything else is as in the
    last optimal state) and after it (the matching is perfect): from a valid start the primal-dual
    algorithm keeps every invariant, so a perfect matching it ends with is a maximum. With
    ``check_all`` (the tests) every result is also checked against the full LP certificate, and
    ``uncertified`` counts those that fail (then solved from scratch)."""

    def __init__(self, check_all: bool = False) -> None:
        self.check_all = check_all
        self._adj: Adj | None = None
        self._state: State | None = None
        self.runs = self.warm = self.fallbacks = self.uncertified = 0

    def solve(self, graph: Adj) -> set[tuple[int, int]]:
        self.runs += 1
        adj = graph
        if len(graph) % 2:
            # A dummy vertex joined to all by weight 0: a perfect matching of this graph is a
            # maximum-weight near-perfect matching of the given one plus the vertex left out.
            dummy = max(graph) + 1
            adj = {v: {**nbrs, dummy: 0} for v, nbrs in graph.items()}
            adj[dummy] = dict.fromkeys(graph, 0)
        st = self._warm(adj)
        if st is None:
            st = self._cold(adj)
            _blossom_run(adj, True, st)
            if not certified(st, adj):
                # No perfect matching: networkx's own answer, and no state to start from.
                self.fallbacks += 1
                self._adj = self._state = None
                return max_weight_matching(graph, True)
        self._adj, self._state = adj, st
        return {(v, w) for v, w in st.mate.items() if v < w and v in graph and w in graph}

    @staticmethod
    def _cold(adj: Adj) -> State:
        """A start with nothing matched and each vertex's dual its largest edge weight (rounded up to
        even: every vertex is free), far closer to the optimum than networkx's largest weight of all."""
        st = fresh_state(adj)
        for v, nbrs in adj.items():
            top = max(nbrs.values(), default=0)
            st.dualvar[v] = top + top % 2
        return st

    def _warm(self, adj: Adj) -> State | None:
        old, st = self._adj, self._state
        if old is None or st is None or old.keys() != adj.keys():
            return None
        changed: list[tuple[int, int]] = []
        for v, nbrs in adj.items():
            before = old[v]
            if nbrs != before:
                changed.extend((v, w) for w, wt in nbrs.items() if v < w and before.get(w) != wt)
                changed.extend((v, w) for w in before if v < w and w not in nbrs)
        if changed:
            duals, mates = dict(st.dualvar), dict(st.mate)
            _repair(st, adj, changed)
            dual, mate = st.dualvar, st.mate
            # The start must be valid: the edges that changed, and every edge at a vertex whose dual
            # or mate changed (an edge that changed is never inside a blossom after the repair).
            for u, v in changed:
                wt = adj[u].get(v)
                matched = mate.get(u) == v
                if wt is None and matched:
                    return None
                if wt is not None and (dual[u] + dual[v] < 2 * wt or matched and dual[u] + dual[v] != 2 * wt):
                    return None
            repaired = {v for v, y in dual.items() if duals[v] != y or mates.get(v) != mate.get(v)}
            if not certified(st, adj, repaired, perfect=False):
                return None
            try:
                _blossom_run(adj, True, st)
            except AssertionError:  # an odd slack to halve: the start broke the parity invariant
                return None
            if len(st.mate) != len(adj):
                return None
            if self.check_all and not certified(st, adj):
                self.uncertified += 1
                return None
        self.warm += 1
        return st
