# Convex polyhedra in contact: the compiled twin of parsolve/contact/polyhedra.py (same names,
# arguments and results; read that module's docstring for the method). poly_contacts runs each
# pair through named stages: world, face_query (face axes), edge_query (edge axes, pruned on
# the Gauss map), then edge_contact or face_contact (incident_face, clip_incident,
# merge_corners, contact_corners, deepest, corner_features), and pack writes the points out.
from libc.math cimport sqrt, fabs, INFINITY
from libc.stdlib cimport malloc, free
from libc.stdint cimport uint64_t
from linalg cimport dot3, cross3
from typedefs cimport index_t

cdef enum:
    MAXP = 16           # contact points per pair at most: the twin's MAXP (LIMITS, tested)
    MAXC = 256          # corners of a clipped polygon at most (incident corners + 2 per side)

LIMITS = {"MAXP": MAXP, "MAXC": MAXC}
cdef double EDGE_BIAS = 1e-3    # an edge axis must beat the faces by this times the smaller radius


cdef inline uint64_t mix(uint64_t z) noexcept nogil:
    """splitmix64's finaliser on uint64 (the twin's mix on Python ints)."""
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline uint64_t corner_id(index_t side, uint64_t i0, uint64_t i1) noexcept nogil:
    """The id of the corner where the segment between corners i0, i1 crosses side plane
    `side` of the reference face."""
    cdef uint64_t lo = i0 if i0 < i1 else i1
    cdef uint64_t hi = i1 if i0 < i1 else i0
    return mix(mix(lo) + hi * 31 + <uint64_t>(side + 1) * 0x10000)


cdef void world(const double[:, ::1] V, const index_t[::1] vptr, const double[:, ::1] N,
                const double[::1] D, const index_t[::1] fptr, index_t t, const double* x,
                const double* R, double* v, double* n, double* d) noexcept nogil:
    """Template t placed at (x, R): its vertices v, face normals n and offsets d (n . y = d)."""
    cdef index_t k, m, nv = vptr[t + 1] - vptr[t], nf = fptr[t + 1] - fptr[t]
    cdef double a, b, c
    for k in range(nv):
        a, b, c = V[vptr[t] + k, 0], V[vptr[t] + k, 1], V[vptr[t] + k, 2]
        for m in range(3):
            v[3 * k + m] = R[3 * m] * a + R[3 * m + 1] * b + R[3 * m + 2] * c + x[m]
    for k in range(nf):
        a, b, c = N[fptr[t] + k, 0], N[fptr[t] + k, 1], N[fptr[t] + k, 2]
        for m in range(3):
            n[3 * k + m] = R[3 * m] * a + R[3 * m + 1] * b + R[3 * m + 2] * c
        d[k] = D[fptr[t] + k] + dot3(&n[3 * k], x)


# -- the separating axes -------------------------------------------------------------------
cdef double face_query(const double* n, const double* d, index_t nf, const double* v,
                       index_t nv, index_t* face) noexcept nogil:
    """Face axes: the largest separation of the other body's vertices v below these faces,
    and its face."""
    cdef double best = -INFINITY, s, e
    cdef index_t f, k
    face[0] = -1
    for f in range(nf):
        s = INFINITY
        for k in range(nv):
            e = dot3(&n[3 * f], &v[3 * k]) - d[f]
            if e < s:
                s = e
        if s > best:
            best = s
            face[0] = f
    return best


cdef inline bint gauss_arcs_cross(const double* a, const double* b, const double* bxa,
                                  const double* c, const double* d,
                                  const double* dxc) noexcept nogil:
    """Whether the arc a-b of A's Gauss map (an edge's two face normals) crosses the arc c-d
    of -B's: only then the edges make a face of the Minkowski difference (Gregorius)."""
    cdef double cba = dot3(c, bxa), dba = dot3(d, bxa), adc = dot3(a, dxc), bdc = dot3(b, dxc)
    return cba * dba < 0 and adc * bdc < 0 and cba * bdc > 0


cdef double edge_query(const index_t[:, ::1] E, index_t ea0, index_t nea, index_t eb0,
                       index_t neb, const double* va, const double* na, const double* vb,
                       const double* nb, const double* xa, double margin, index_t* ea,
                       index_t* eb, double* L) noexcept nogil:
    """Edge axes: the largest separation along the cross products of the edge pairs whose
    Gauss arcs cross, its edges ea, eb (of A's nea from ea0, B's neb from eb0) and its unit
    axis L out of A; the first separation beyond the margin ends the search (no contact)."""
    cdef index_t ei, ej, i, j, c, ebest_a = -1, ebest_b = -1
    cdef double se = -INFINITY, s, ln
    cdef double Lb[3]
    cdef double bxa[3]
    cdef double dxc[3]
    cdef double cvec[3]
    cdef double dvec[3]
    cdef double ua[3]
    cdef double ub[3]
    cdef double Lk[3]
    cdef double w[3]
    Lb[0] = Lb[1] = Lb[2] = 0.0
    for ei in range(nea):
        i = ea0 + ei
        cross3(&na[3 * E[i, 3]], &na[3 * E[i, 2]], bxa)
        for c in range(3):
            ua[c] = va[3 * E[i, 1] + c] - va[3 * E[i, 0] + c]
        for ej in range(neb):
            j = eb0 + ej
            for c in range(3):
                cvec[c] = -nb[3 * E[j, 2] + c]
                dvec[c] = -nb[3 * E[j, 3] + c]
            cross3(dvec, cvec, dxc)
            if not gauss_arcs_cross(&na[3 * E[i, 2]], &na[3 * E[i, 3]], bxa, cvec, dvec, dxc):
                continue
            for c in range(3):
                ub[c] = vb[3 * E[j, 1] + c] - vb[3 * E[j, 0] + c]
            cross3(ua, ub, Lk)
            ln = sqrt(dot3(Lk, Lk))
            if ln <= 1e-9 * sqrt(dot3(ua, ua) * dot3(ub, ub)):
                continue                                 # parallel edges: a face axis
            for c in range(3):
                Lk[c] /= ln
                w[c] = va[3 * E[i, 0] + c] - xa[c]
            if dot3(Lk, w) < 0:
                for c in range(3):
                    Lk[c] = -Lk[c]                       # out of A
            for c in range(3):
                w[c] = vb[3 * E[j, 0] + c] - va[3 * E[i, 0] + c]
            s = dot3(Lk, w)
            if s > margin:
                return s
            if s > se:
                se = s
                ebest_a = ei
                ebest_b = ej
                Lb[0], Lb[1], Lb[2] = Lk[0], Lk[1], Lk[2]
    ea[0] = ebest_a
    eb[0] = ebest_b
    L[0], L[1], L[2] = Lb[0], Lb[1], Lb[2]
    return se


# -- an edge axis: one point ---------------------------------------------------------------
cdef void closest_on_edges(const double* pa, const double* ua, const double* pb,
                           const double* ub, double* ta, double* tb) noexcept nogil:
    """The parameters in [0, 1] of the closest points of the lines pa + ta ua, pb + tb ub,
    each clamped (the twin's closest_on_edges with its default ranges)."""
    cdef double w[3]
    cdef double A, Bc, C, Dd, Ee, den, t
    cdef index_t c
    for c in range(3):
        w[c] = pa[c] - pb[c]
    A, Bc, C = dot3(ua, ua), dot3(ua, ub), dot3(ub, ub)
    Dd, Ee = dot3(ua, w), dot3(ub, w)
    den = A * C - Bc * Bc
    t = (Bc * Ee - C * Dd) / den
    ta[0] = 0.0 if t < 0 else (1.0 if t > 1 else t)
    t = (A * Ee - Bc * Dd) / den
    tb[0] = 0.0 if t < 0 else (1.0 if t > 1 else t)


cdef index_t edge_contact(const double* va, const double* vb, const index_t* ea,
                          const index_t* eb, const double* L, double s, index_t i, index_t j,
                          index_t* feat, double* nrm, double* pts,
                          double* gaps) noexcept nogil:
    """The point of an edge axis: midway between the closest points of edge ea (its two
    vertices) of A and eb of B, the normal -L (from B to A), the gap s; feature from the
    edges' indices i, j. Returns 1."""
    cdef double ua[3]
    cdef double ub[3]
    cdef double ta, tb
    cdef index_t c
    for c in range(3):
        ua[c] = va[3 * ea[1] + c] - va[3 * ea[0] + c]
        ub[c] = vb[3 * eb[1] + c] - vb[3 * eb[0] + c]
    closest_on_edges(&va[3 * ea[0]], ua, &vb[3 * eb[0]], ub, &ta, &tb)
    feat[0] = <index_t>(mix((<uint64_t>1 << 50) + <uint64_t>i * 65536 + <uint64_t>j) % 64)
    for c in range(3):
        nrm[c] = -L[c]
        pts[c] = 0.5 * (va[3 * ea[0] + c] + ta * ua[c] + vb[3 * eb[0] + c] + tb * ub[c])
    gaps[0] = s
    return 1


# -- a face axis: the clipped polygon ------------------------------------------------------
cdef index_t incident_face(const double* ni, index_t nfi, const double* m) noexcept nogil:
    """The face of the incident body most anti-parallel to the reference normal m."""
    cdef index_t f, fi = -1
    cdef double best = INFINITY, cc
    for f in range(nfi):
        cc = dot3(&ni[3 * f], m)
        if cc < best:
            best = cc
            fi = f
    return fi


cdef inline index_t cut_edge(const double* A, const uint64_t* Aid, index_t prev, index_t idx,
                             double s0, double s1, index_t k, double* B, uint64_t* Bid,
                             index_t nB) noexcept nogil:
    """Append to B where edge prev-idx of A (heights s0, s1 over side plane k) crosses that
    plane, its id made of the edge's corners and k; returns the new count."""
    cdef double tt = s0 / (s0 - s1)
    cdef index_t c
    for c in range(3):
        B[3 * nB + c] = A[3 * prev + c] + tt * (A[3 * idx + c] - A[3 * prev + c])
    Bid[nB] = corner_id(k, Aid[prev], Aid[idx])
    return nB + 1


cdef index_t clip_side(const double* A, const uint64_t* Aid, index_t nA, const double* side,
                       double off, double tol, index_t k, double* B,
                       uint64_t* Bid) noexcept nogil:
    """One Sutherland-Hodgman step: the corners of polygon A inside side plane k (side . y <=
    off, within tol) and the cuts where its edges leave it, into B; returns their count."""
    cdef index_t idx, prev, c, nB = 0
    cdef double s0, s1
    for idx in range(nA):
        prev = idx - 1 if idx > 0 else nA - 1
        s0 = dot3(side, &A[3 * prev]) - off
        s1 = dot3(side, &A[3 * idx]) - off
        if s1 <= tol:
            if s0 > tol and s1 < 0 and nB < MAXC:
                nB = cut_edge(A, Aid, prev, idx, s0, s1, k, B, Bid, nB)
            if nB < MAXC:
                for c in range(3):
                    B[3 * nB + c] = A[3 * idx + c]
                Bid[nB] = Aid[idx]
                nB += 1
        elif s0 < 0 and nB < MAXC:
            nB = cut_edge(A, Aid, prev, idx, s0, s1, k, B, Bid, nB)
    return nB


cdef index_t clip_incident(double* A, uint64_t* Aid, index_t nA, const double* vr,
                           const index_t* ref, index_t nref, const double* m, double tol,
                           double* B, uint64_t* Bid) noexcept nogil:
    """The incident polygon A (nA corners, ids Aid) clipped in place by the side planes of
    the reference face (its corners ref of vr, normal m): the contact polygon, its corner
    count returned; B, Bid scratch."""
    cdef double q[3]
    cdef double side[3]
    cdef const double* p
    cdef double ln, off
    cdef index_t k, j, idx
    for k in range(nref):
        if nA == 0:
            return 0
        p = &vr[3 * ref[k]]
        j = ref[(k + 1) % nref]
        q[0], q[1], q[2] = vr[3 * j] - p[0], vr[3 * j + 1] - p[1], vr[3 * j + 2] - p[2]
        cross3(q, m, side)
        ln = sqrt(dot3(side, side))
        side[0] /= ln
        side[1] /= ln
        side[2] /= ln
        off = dot3(side, p)
        nA = clip_side(A, Aid, nA, side, off, tol, k, B, Bid)
        for idx in range(3 * nA):
            A[idx] = B[idx]
        for idx in range(nA):
            Aid[idx] = Bid[idx]
    return nA


cdef index_t merge_corners(const double* A, const uint64_t* Aid, index_t nA, double eps,
                           double* B, uint64_t* Bid) noexcept nogil:
    """The corners of A in order into B, less those within eps (in each coordinate) of one
    kept before: clipping makes coincident corners where faces align."""
    cdef index_t idx, j, c, nB = 0
    cdef bint dup
    for idx in range(nA):
        dup = False
        for j in range(nB):
            if fabs(A[3 * idx] - B[3 * j]) <= eps and \
                    fabs(A[3 * idx + 1] - B[3 * j + 1]) <= eps and \
                    fabs(A[3 * idx + 2] - B[3 * j + 2]) <= eps:
                dup = True
                break
        if dup:
            continue
        for c in range(3):
            B[3 * nB + c] = A[3 * idx + c]
        Bid[nB] = Aid[idx]
        nB += 1
    return nB


cdef index_t contact_corners(const double* B, const uint64_t* Bid, index_t nB, double eps,
                             const double* m, double dref, double margin, double* keep,
                             double* keeph, uint64_t* keepid) noexcept nogil:
    """The corners of polygon B that are contact points: not on a straight side (within eps
    of the segment of their neighbours: two nearly aligned faces give four points, not
    eight) and within the margin over the reference plane m . y = dref (keeph, their gaps)."""
    cdef double e[3]
    cdef double p[3]
    cdef double q[3]
    cdef double tt, h
    cdef index_t idx, prev, j, c, nk = 0
    for idx in range(nB):
        if nB >= 3:
            prev = idx - 1 if idx > 0 else nB - 1
            j = (idx + 1) % nB
            for c in range(3):
                e[c] = B[3 * j + c] - B[3 * prev + c]
                p[c] = B[3 * idx + c] - B[3 * prev + c]
            tt = dot3(p, e) / dot3(e, e)
            for c in range(3):
                q[c] = p[c] - tt * e[c]
            if 0 < tt < 1 and sqrt(dot3(q, q)) <= eps:
                continue
        h = dot3(m, &B[3 * idx]) - dref
        if h <= margin:
            keep[3 * nk], keep[3 * nk + 1], keep[3 * nk + 2] = B[3 * idx], B[3 * idx + 1], \
                B[3 * idx + 2]
            keeph[nk] = h
            keepid[nk] = Bid[idx]
            nk += 1
    return nk


cdef index_t deepest(const double* h, index_t nk, index_t* order) noexcept nogil:
    """order: the points to keep, in polygon order: all nk, or the MAXP of least gap h (ties
    by position) when there are more; returns their count."""
    cdef index_t k, j
    for k in range(nk):
        order[k] = k
    if nk <= MAXP:
        return nk
    for k in range(1, nk):                  # insertion sort by (h, index)
        j = k
        while j > 0 and (h[order[j - 1]] > h[order[j]] or
                         (h[order[j - 1]] == h[order[j]] and order[j - 1] > order[j])):
            order[j - 1], order[j] = order[j], order[j - 1]
            j -= 1
    for k in range(1, MAXP):                # the first MAXP back in polygon order
        j = k
        while j > 0 and order[j - 1] > order[j]:
            order[j - 1], order[j] = order[j], order[j - 1]
            j -= 1
    return MAXP


cdef void corner_features(index_t ref_b, index_t fr, const uint64_t* ids, const index_t* order,
                          index_t nk, index_t* feat) noexcept nogil:
    """Persistent features: each kept corner's id hashed with its reference face (body ref_b,
    face fr), reduced to distinct values in [0, 64) by linear probing in order (the twin's
    features), so that a point that persists keeps its contact key."""
    cdef uint64_t base = mix((<uint64_t>ref_b << 40) + (<uint64_t>fr << 20)), fid, used = 0
    cdef index_t k
    for k in range(nk):
        fid = mix(base ^ ids[order[k]]) % 64
        while (used >> fid) & 1:
            fid = (fid + 1) % 64
        used |= (<uint64_t>1) << fid
        feat[k] = <index_t>fid


cdef index_t face_contact(const double* vr, const double* nr, const double* dr,
                          const index_t[::1] FV, const index_t[::1] fvptr, index_t f0r,
                          index_t fr, index_t nvr, const double* vi, const double* ni,
                          index_t nfi, index_t f0i, double margin, index_t ref_b, double sign,
                          double rad, index_t* feat, double* nrm, double* pts,
                          double* gaps) noexcept nogil:
    """The points of a face axis: the incident face of I clipped by reference face fr of R
    (faces from f0r, f0i in FV), corners merged and dropped within 1e-6 rad, at most MAXP,
    at mid-gap; sign turns R's outward normal into the contact normal (from B to A). Returns
    their count."""
    cdef double A[3 * MAXC]
    cdef double B[3 * MAXC]
    cdef uint64_t Aid[MAXC]
    cdef uint64_t Bid[MAXC]
    cdef double keep[3 * MAXC]
    cdef double keeph[MAXC]
    cdef uint64_t keepid[MAXC]
    cdef index_t order[MAXC]
    cdef const double* m = &nr[3 * fr]
    cdef index_t fi, k, j, c, idx, n, nk
    cdef double scale = 0.0, tol, eps, h
    fi = incident_face(ni, nfi, m)
    n = fvptr[f0i + fi + 1] - fvptr[f0i + fi]
    if n > MAXC:
        n = MAXC
    for k in range(n):
        j = FV[fvptr[f0i + fi] + k]
        A[3 * k], A[3 * k + 1], A[3 * k + 2] = vi[3 * j], vi[3 * j + 1], vi[3 * j + 2]
        Aid[k] = <uint64_t>(j + 1)
    for k in range(3 * nvr):
        if fabs(vr[k]) > scale:
            scale = fabs(vr[k])
    if scale == 0.0:
        scale = 1e-300
    tol = 1e-9 * scale
    n = clip_incident(A, Aid, n, vr, &FV[fvptr[f0r + fr]], fvptr[f0r + fr + 1] - fvptr[f0r + fr],
                      m, tol, B, Bid)
    if n == 0:
        return 0
    eps = 1e-6 * rad
    n = merge_corners(A, Aid, n, eps, B, Bid)
    nk = contact_corners(B, Bid, n, eps, m, dr[fr], margin, keep, keeph, keepid)
    nk = deepest(keeph, nk, order)
    corner_features(ref_b, fr, keepid, order, nk, feat)
    for k in range(nk):
        idx = order[k]
        h = keeph[idx]
        for c in range(3):
            nrm[3 * k + c] = sign * m[c]
            pts[3 * k + c] = keep[3 * idx + c] - 0.5 * h * m[c]
        gaps[k] = h
    return nk


# -- one pair, all pairs -------------------------------------------------------------------
cdef index_t pair_contact(const double[:, ::1] V, const index_t[::1] vptr,
                          const double[:, ::1] N, const double[::1] D, const index_t[::1] fptr,
                          const index_t[::1] FV, const index_t[::1] fvptr,
                          const index_t[:, ::1] E, const index_t[::1] eptr,
                          const double[::1] radius, index_t a_, const double* xa,
                          const double* Ra, index_t b_, const double* xb, const double* Rb,
                          double margin, double* va, double* vb, double* na, double* nb,
                          double* da, double* db, index_t* feat, double* nrm, double* pts,
                          double* gaps) noexcept nogil:
    """The points of one pair (template a_ at xa, Ra as A; b_ at xb, Rb as B; va ... db its
    scratch), into feat, nrm, pts, gaps: faces preferred unless an edge axis beats them by
    EDGE_BIAS of the smaller radius; returns their count (0 once an axis separates)."""
    cdef index_t nva = vptr[a_ + 1] - vptr[a_], nvb = vptr[b_ + 1] - vptr[b_]
    cdef index_t nfa = fptr[a_ + 1] - fptr[a_], nfb = fptr[b_ + 1] - fptr[b_]
    cdef index_t fa, fb, ea, eb
    cdef double sa, sb, se, bias
    cdef double L[3]
    world(V, vptr, N, D, fptr, a_, xa, Ra, va, na, da)
    world(V, vptr, N, D, fptr, b_, xb, Rb, vb, nb, db)
    sa = face_query(na, da, nfa, vb, nvb, &fa)
    if sa > margin:
        return 0
    sb = face_query(nb, db, nfb, va, nva, &fb)
    if sb > margin:
        return 0
    bias = EDGE_BIAS * (radius[a_] if radius[a_] < radius[b_] else radius[b_])
    se = edge_query(E, eptr[a_], eptr[a_ + 1] - eptr[a_], eptr[b_], eptr[b_ + 1] - eptr[b_],
                    va, na, vb, nb, xa, margin, &ea, &eb, L)
    if se > margin:
        return 0
    if se > (sa if sa > sb else sb) + bias:
        return edge_contact(va, vb, &E[eptr[a_] + ea, 0], &E[eptr[b_] + eb, 0], L, se, ea, eb,
                            feat, nrm, pts, gaps)
    if sb > sa + bias:                      # reference face on B: its normal from B to A
        return face_contact(vb, nb, db, FV, fvptr, fptr[b_], fb, nvb, va, na, nfa, fptr[a_],
                            margin, 1, 1.0, radius[b_], feat, nrm, pts, gaps)
    return face_contact(va, na, da, FV, fvptr, fptr[a_], fa, nva, vb, nb, nfb, fptr[b_],
                        margin, 0, -1.0, radius[a_], feat, nrm, pts, gaps)


cdef index_t pack(index_t k, index_t got, const index_t* feat, const double* nrm,
                  const double* pts, const double* gaps, index_t[::1] pair,
                  index_t[::1] feature, double[:, ::1] normal, double[:, ::1] point,
                  double[::1] gap, index_t count) noexcept nogil:
    """Pair k's got points appended to the output arrays from row count; the new count."""
    cdef index_t i, c
    for i in range(got):
        pair[count] = k
        feature[count] = feat[i]
        for c in range(3):
            normal[count, c] = nrm[3 * i + c]
            point[count, c] = pts[3 * i + c]
        gap[count] = gaps[i]
        count += 1
    return count


def poly_contacts(const double[:, ::1] V, const index_t[::1] vptr, const double[:, ::1] N,
                  const double[::1] D, const index_t[::1] fptr, const index_t[::1] FV,
                  const index_t[::1] fvptr, const index_t[:, ::1] E, const index_t[::1] eptr,
                  const double[::1] radius, const index_t[::1] ta, const double[:, ::1] xa,
                  const double[:, :, ::1] Ra, const index_t[::1] tb, const double[:, ::1] xb,
                  const double[:, :, ::1] Rb, double margin, index_t[::1] pair,
                  index_t[::1] feature, double[:, ::1] normal, double[:, ::1] point,
                  double[::1] gap):
    """The compiled twin of polyhedra.poly_contacts (read its docstring); ValueError when
    the out arrays hold fewer than MAXP rows per pair."""
    cdef index_t npair = ta.shape[0], k, t, got, count = 0, maxv = 0, maxf = 0
    cdef double *va
    cdef double *vb
    cdef double *na
    cdef double *nb
    cdef double *da
    cdef double *db
    cdef index_t feat[MAXP]
    cdef double nrm[3 * MAXP]
    cdef double pts[3 * MAXP]
    cdef double gaps[MAXP]
    if min(pair.shape[0], feature.shape[0], normal.shape[0], point.shape[0],
           gap.shape[0]) < MAXP * npair:
        raise ValueError(f"poly_contacts: the out arrays need {MAXP} rows per pair (MAXP)")
    for t in range(vptr.shape[0] - 1):
        if vptr[t + 1] - vptr[t] > maxv:
            maxv = vptr[t + 1] - vptr[t]
        if fptr[t + 1] - fptr[t] > maxf:
            maxf = fptr[t + 1] - fptr[t]
    va = <double*>malloc(3 * maxv * sizeof(double))
    vb = <double*>malloc(3 * maxv * sizeof(double))
    na = <double*>malloc(3 * maxf * sizeof(double))
    nb = <double*>malloc(3 * maxf * sizeof(double))
    da = <double*>malloc(maxf * sizeof(double))
    db = <double*>malloc(maxf * sizeof(double))
    try:
        if (maxv and not (va and vb)) or (maxf and not (na and nb and da and db)):
            raise MemoryError()
        with nogil:
            for k in range(npair):
                got = pair_contact(V, vptr, N, D, fptr, FV, fvptr, E, eptr, radius, ta[k],
                                   &xa[k, 0], &Ra[k, 0, 0], tb[k], &xb[k, 0], &Rb[k, 0, 0],
                                   margin, va, vb, na, nb, da, db, feat, nrm, pts, gaps)
                count = pack(k, got, feat, nrm, pts, gaps, pair, feature, normal, point, gap,
                             count)
    finally:
        free(va)
        free(vb)
        free(na)
        free(nb)
        free(da)
        free(db)
    return count


def sphere_closest(const double[:, ::1] V, const index_t[::1] vptr, const double[:, ::1] N,
                   const double[::1] D, const index_t[::1] fptr, const index_t[::1] FV,
                   const index_t[::1] fvptr, const index_t[::1] t, const double[:, ::1] c,
                   const double[::1] reach, double[:, ::1] y, double[::1] dist,
                   double[:, ::1] normal):
    """The compiled twin of polyhedra.sphere_closest (read its docstring)."""
    cdef index_t n = t.shape[0], k, f, g, m, nv, a_, b_, top
    cdef double p, best, hi, eb, dz, dc, tt, ee
    cdef double q[3]
    cdef double cand[3]
    cdef double ey[3]
    cdef double z[3]
    cdef double e[3]
    cdef double w[3]
    cdef double u[3]
    cdef bint inside
    with nogil:
        for k in range(n):
            hi = -INFINITY
            top = 0
            for f in range(fptr[t[k]], fptr[t[k] + 1]):
                p = c[k, 0] * N[f, 0] + c[k, 1] * N[f, 1] + c[k, 2] * N[f, 2] - D[f]
                if p > hi:
                    hi, top = p, f
            if hi > reach[k]:                      # a face plane farther than the reach
                dist[k] = INFINITY
                continue
            best = INFINITY
            for m in range(3):
                y[k, m] = c[k, m]
            for f in range(fptr[t[k]], fptr[t[k] + 1]):
                p = c[k, 0] * N[f, 0] + c[k, 1] * N[f, 1] + c[k, 2] * N[f, 2] - D[f]
                if not p > 0:
                    continue
                for m in range(3):
                    q[m] = c[k, m] - p * N[f, m]
                nv = fvptr[f + 1] - fvptr[f]
                inside = True
                for g in range(nv):
                    a_ = vptr[t[k]] + FV[fvptr[f] + g]
                    b_ = vptr[t[k]] + FV[fvptr[f] + (g + 1) % nv]
                    for m in range(3):
                        e[m] = V[b_, m] - V[a_, m]
                        w[m] = q[m] - V[a_, m]
                    cross3(e, w, u)
                    if not (u[0] * N[f, 0] + u[1] * N[f, 1] + u[2] * N[f, 2] >= 0):
                        inside = False
                if inside:
                    for m in range(3):
                        cand[m] = q[m]
                else:
                    eb = INFINITY
                    for m in range(3):
                        ey[m] = q[m]
                    for g in range(nv):
                        a_ = vptr[t[k]] + FV[fvptr[f] + g]
                        b_ = vptr[t[k]] + FV[fvptr[f] + (g + 1) % nv]
                        for m in range(3):
                            e[m] = V[b_, m] - V[a_, m]
                        ee = e[0] * e[0] + e[1] * e[1] + e[2] * e[2]
                        tt = ((c[k, 0] - V[a_, 0]) * e[0] + (c[k, 1] - V[a_, 1]) * e[1] +
                              (c[k, 2] - V[a_, 2]) * e[2]) / ee
                        tt = 0.0 if tt < 0.0 else (1.0 if tt > 1.0 else tt)
                        dz = 0.0
                        for m in range(3):
                            z[m] = V[a_, m] + tt * e[m]
                            dz += (c[k, m] - z[m]) * (c[k, m] - z[m])
                        if dz < eb:
                            eb = dz
                            for m in range(3):
                                ey[m] = z[m]
                    for m in range(3):
                        cand[m] = ey[m]
                dc = 0.0
                for m in range(3):
                    dc += (c[k, m] - cand[m]) * (c[k, m] - cand[m])
                if dc < best:
                    best = dc
                    for m in range(3):
                        y[k, m] = cand[m]
            if best < INFINITY:
                dist[k] = sqrt(best)
            else:
                dist[k] = hi
            for m in range(3):
                normal[k, m] = N[top, m]
            if best < INFINITY and dist[k] > 0:
                for m in range(3):
                    normal[k, m] = (c[k, m] - y[k, m]) / dist[k]
