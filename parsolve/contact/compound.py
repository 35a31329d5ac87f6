"""Contacts of compound bodies (shapes/compound.py): the parts' own contacts.

A compound (A) against any shape (B: a body of any kind, a compound too, or an obstacle)
expands into its parts (spheres and convex blocks placed with the body: shapes.compound's
Parts), and B into its parts when it is a compound; the part pairs whose bounding spheres
come within the margin (a plane's or a mesh's own distance for those obstacles) go to the
registered pair functions of their kinds (contact/narrow.py), and their points come back as
the bodies' points: a, b the rows of A and B, the normal from B to A. Parts of one body never
meet (only pairs of different bodies and obstacles reach here).

Features: each point's raw id mixes its parts' numbers with the feature its pair function
gave it (which persists while the point does); the points of one pair of bodies get distinct
features in [0, 64) by probing in raw order (as contact/polyhedra.py does within a pair), so
the warm start follows each point. Past 64 points between two bodies, the 64 deepest are
kept (a contact key has 64 features per pair of bodies: tables/keys.py).
"""
import numpy as np

from ..shapes import COMPOUND, MESH, PLANE, KINDS
from ..shapes.compound import Parts
from ..tables.keys import FEATURES, mix
from .polyhedra import features


def compound_pairs(A, i, B, j, margin):
    """Contacts of compounds i (rows of A) with the shapes j (rows of B, all of one kind),
    as a pair function of contact/narrow.py returns them."""
    from .narrow import lookup

    i, j = np.asarray(i, np.int64), np.asarray(j, np.int64)
    if not len(i):
        return None
    PA = Parts(A, i)
    kb = int(B.shape[j[0]])
    if kb == COMPOUND:
        PB = Parts(B, j)
        # every part of A's body against every part of B's body, pair by pair
        na = np.bincount(PA.owner, minlength=len(i))
        nb = np.bincount(PB.owner, minlength=len(j))
        first_a = np.concatenate([[0], np.cumsum(na)[:-1]])
        first_b = np.concatenate([[0], np.cumsum(nb)[:-1]])
        pair = np.repeat(np.arange(len(i)), na * nb)
        k = np.arange(len(pair)) - np.repeat(np.cumsum(na * nb) - na * nb, na * nb)
        ia = first_a[pair] + k // nb[pair]
        jb = first_b[pair] + k % nb[pair]
        d = PA.x[ia] - PB.x[jb]
        near = np.einsum("ij,ij->i", d, d) <= (PA.radius[ia] + PB.radius[jb] + margin) ** 2
        ia, jb = ia[near], jb[near]
        other = PB
    else:
        ia = np.arange(len(PA))
        jb = j[PA.owner]
        if kb in (PLANE, MESH):                        # unbounded, or too large for a sphere
            near = np.zeros(len(ia), bool)
            for k in np.unique(jb):
                at = np.flatnonzero(jb == k)
                near[at] = KINDS[kb].distance(B, k, PA.x[ia[at]]) - PA.radius[ia[at]] <= margin
        else:
            d = PA.x[ia] - B.x[jb]
            near = np.einsum("ij,ij->i", d, d) <= (PA.radius[ia] + B.radius[jb] + margin) ** 2
        ia, jb = ia[near], jb[near]
        other = B
    got = []
    kinds_b = other.shape[jb]
    for ka in np.unique(PA.shape[ia]):
        for kk in np.unique(kinds_b):
            at = np.flatnonzero((PA.shape[ia] == ka) & (kinds_b == kk))
            if not len(at):
                continue
            f, swapped = lookup(ka, kk)
            if swapped:
                c = f(other, jb[at], PA, ia[at], margin)
                if c is not None:
                    c["a"], c["b"], c["normal"] = c["b"], c["a"], -c["normal"]
            else:
                c = f(PA, ia[at], other, jb[at], margin)
            if c is None or not len(c["a"]):
                continue
            # A's parts are expanded pair by pair: a part row names its pair
            c["pair"], c["part_a"] = PA.owner[c["a"]], PA.part[c["a"]]
            c["part_b"] = other.part[c["b"]] if kb == COMPOUND else np.zeros(len(c["a"]),
                                                                              np.int64)
            got.append(c)
    if not got:
        return None
    c = {f: np.concatenate([g[f] for g in got]) for f in ("pair", "part_a", "part_b",
                                                          "feature", "normal", "point", "gap")}
    c["gap"] = np.where(c["gap"] <= margin, c["gap"], np.inf)
    keep = np.flatnonzero(np.isfinite(c["gap"]))
    c = {f: v[keep] for f, v in c.items()}
    raw = mix(mix((c["part_a"].astype(np.uint64) << np.uint64(32)) |
                  c["part_b"].astype(np.uint64)) ^ c["feature"].astype(np.uint64))
    raw = (raw >> np.uint64(1)).astype(np.int64)       # 63 bits: ordered as integers
    order = np.lexsort((c["feature"], c["part_b"], c["part_a"], raw, c["pair"]))
    pair, raw = c["pair"][order], raw[order]
    keep, feat = _features(pair, raw, c["gap"][order])
    order = order[keep]
    return {"a": i[c["pair"][order]], "b": j[c["pair"][order]], "feature": feat,
            "normal": c["normal"][order], "point": c["point"][order], "gap": c["gap"][order]}


def _features(pair, raw, gap):
    """(kept points, features): per pair of bodies (runs of `pair`, raw ascending) at most
    FEATURES points, the deepest, with distinct features probed in raw order."""
    keep = np.ones(len(pair), bool)
    feat = raw % FEATURES                    # probing changes nothing where no two collide
    start = np.flatnonzero(np.r_[True, pair[1:] != pair[:-1]])
    end = np.r_[start[1:], len(pair)]
    o = np.lexsort((feat, pair))
    clash = np.zeros(len(pair), bool)
    clash[o[1:]] = (pair[o[1:]] == pair[o[:-1]]) & (feat[o[1:]] == feat[o[:-1]])
    run = np.cumsum(np.r_[True, pair[1:] != pair[:-1]]) - 1
    redo = np.unique(np.r_[run[clash], np.flatnonzero(end - start > FEATURES)])
    for s, e in zip(start[redo], end[redo]):
        if e - s > FEATURES:                            # the deepest 64, in raw order
            deep = np.lexsort((raw[s:e], gap[s:e]))[:FEATURES]
            keep[s:e] = False
            keep[s + np.sort(deep)] = True
        at = s + np.flatnonzero(keep[s:e])
        feat[at] = features([int(r) for r in raw[at]], len(at))
    return keep, feat[keep]
