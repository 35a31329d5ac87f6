"""Contacts of blocks (convex polyhedra, boxes) with a triangle mesh, compiled: the twin of
parsolve/contact/mesh_poly.py's poly_mesh (same name, arguments and results; read that
module's docstring)."""
from libc.math cimport sqrt, fabs, INFINITY
from libc.stdlib cimport malloc, realloc, free
from libc.stdint cimport uint64_t
from linalg cimport cross3, dot3 as dot, sub3
from mesh_grid cimport cell_span
from splitmix cimport mix
from typedefs cimport index_t

cdef enum:
    PATCH = 0                      # contact/mesh.py's kinds of feature
    SHIFT = 60
    MAXP = 16                      # contact/polyhedra.py's points per pair at most
    MAXC = 256                     # corners of a clipped polygon at most
    BLOCK_FACE = 1

cdef double SAME = 1e-9            # contact/mesh.py's SAME
cdef double EDGE_BIAS = 1e-3       # contact/polyhedra.py's EDGE_BIAS
cdef uint64_t MASK = (<uint64_t>1 << 63) - 1


cdef struct Pt:
    uint64_t key
    uint64_t id
    double p[3]
    double h
    double n[3]


cdef struct Pts:
    Pt* data
    index_t n
    index_t room


cdef inline uint64_t corner_id(uint64_t side, uint64_t i0, uint64_t i1) noexcept nogil:
    cdef uint64_t lo = i0 if i0 < i1 else i1
    cdef uint64_t hi = i1 if i0 < i1 else i0
    return mix(mix(lo) + hi * 31 + (side + 1) * 0x10000)


cdef bint push(Pts* s, uint64_t key, uint64_t pid, const double* p, double h,
               const double* n) noexcept nogil:
    cdef Pt* grown
    cdef int m
    if s.n == s.room:
        grown = <Pt*>realloc(s.data, 2 * s.room * sizeof(Pt))
        if grown == NULL:
            return False
        s.data = grown
        s.room *= 2
    s.data[s.n].key = key
    s.data[s.n].id = pid
    for m in range(3):
        s.data[s.n].p[m] = p[m]
        s.data[s.n].n[m] = n[m]
    s.data[s.n].h = h
    s.n += 1
    return True


cdef int clip(double* A, uint64_t* Aid, int nA, const double* ref, int nref, const double* m,
              const uint64_t* side_ids, double* B, uint64_t* Bid) noexcept nogil:
    """Sutherland-Hodgman, as contact/mesh_poly.py's _clip: A (nA corners, ids Aid) clipped
    in place by the side planes of the polygon ref (nref x 3, counter-clockwise about m)."""
    cdef double scale = 0.0, tol, off, s0, s1, tt, ln
    cdef double side[3]
    cdef double e[3]
    cdef int k, idx, prev, nB, c
    for k in range(3 * nref):
        if fabs(ref[k]) > scale:
            scale = fabs(ref[k])
    tol = 1e-9 * (scale if scale > 0 else 1e-300)
    for k in range(nref):
        if nA == 0:
            return 0
        sub3(&ref[3 * ((k + 1) % nref)], &ref[3 * k], e)
        cross3(e, m, side)
        ln = sqrt(dot(side, side))
        side[0], side[1], side[2] = side[0] / ln, side[1] / ln, side[2] / ln
        off = dot(side, &ref[3 * k])
        nB = 0
        for idx in range(nA):
            prev = idx - 1 if idx > 0 else nA - 1
            s0 = dot(side, &A[3 * prev]) - off
            s1 = dot(side, &A[3 * idx]) - off
            if s1 <= tol:
                if s0 > tol and s1 < 0 and nB < MAXC:
                    tt = s0 / (s0 - s1)
                    for c in range(3):
                        B[3 * nB + c] = A[3 * prev + c] + tt * (A[3 * idx + c] - A[3 * prev + c])
                    Bid[nB] = corner_id(side_ids[k], Aid[prev], Aid[idx])
                    nB += 1
                if nB < MAXC:
                    for c in range(3):
                        B[3 * nB + c] = A[3 * idx + c]
                    Bid[nB] = Aid[idx]
                    nB += 1
            elif s0 < 0 and nB < MAXC:
                tt = s0 / (s0 - s1)
                for c in range(3):
                    B[3 * nB + c] = A[3 * prev + c] + tt * (A[3 * idx + c] - A[3 * prev + c])
                Bid[nB] = corner_id(side_ids[k], Aid[prev], Aid[idx])
                nB += 1
        for idx in range(3 * nB):
            A[idx] = B[idx]
        for idx in range(nB):
            Aid[idx] = Bid[idx]
        nA = nB
    return nA


cdef bint in_cone(const double[:, ::1] V, const index_t[:, ::1] T, const double[:, ::1] N,
                  const index_t[:, ::1] TE, const index_t[:, ::1] ET, const double[::1] dih,
                  const index_t[::1] eflat, const index_t[::1] vptr, const index_t[::1] vtris,
                  const double[:, ::1] TC, double scale, index_t t, bint flipped,
                  const double* nu, const double* p) noexcept nogil:
    """contact/mesh_poly.py's _in_cone."""
    cdef double sgn = -1.0 if flipped else 1.0
    cdef double tol, s, ln
    cdef double d[3]
    cdef double e[3]
    cdef double w[3]
    cdef double nu_u[3]
    cdef double outv[3]
    cdef const double* a
    cdef const double* b
    cdef index_t kk, v, q, c, wv, edge, u, side
    if nu[0] * N[t, 0] * sgn + nu[1] * N[t, 1] * sgn + nu[2] * N[t, 2] * sgn >= 1.0 - SAME:
        return True
    tol = 1e-9 * scale
    for kk in range(3):
        sub3(p, &V[T[t, kk], 0], d)
        if sqrt(dot(d, d)) <= tol:
            v = T[t, kk]
            for q in range(vptr[v], vptr[v + 1]):
                for c in range(3):
                    wv = T[vtris[q], c]
                    if wv == v:
                        continue
                    sub3(&V[wv, 0], &V[v, 0], d)
                    ln = sqrt(dot(d, d))
                    if dot(d, nu) > 1e-9 * ln:
                        return False
            return True
    for kk in range(3):
        a = &V[T[t, kk], 0]
        b = &V[T[t, (kk + 1) % 3], 0]
        sub3(b, a, e)
        sub3(p, a, w)
        s = dot(w, e) / dot(e, e)
        for c in range(3):
            d[c] = w[c] - s * e[c]
        if sqrt(dot(d, d)) <= tol:
            edge = TE[t, kk]
            if eflat[edge] or (ET[edge, 1] >= 0 and dih[edge] * sgn <= 0):
                return False
            for side in range(2):
                u = ET[edge, side]
                if u < 0:
                    continue
                for c in range(3):
                    nu_u[c] = N[u, c] * sgn
                cross3(e, nu_u, outv)
                sub3(a, &TC[u, 0], w)
                if dot(outv, w) < 0:
                    for c in range(3):
                        outv[c] = -outv[c]
                if dot(nu, outv) < -1e-9 * sqrt(dot(outv, outv)):
                    return False
            return True
    return False


cdef bint triangle(const double[:, ::1] V, const index_t[:, ::1] T, const index_t[::1] patch,
                   const double[:, ::1] PN, const double[:, ::1] N, const index_t[:, ::1] TE,
                   const index_t[:, ::1] ET, const double[::1] dih, const index_t[::1] eflat,
                   const index_t[::1] vptr, const index_t[::1] vtris,
                   const double[:, ::1] TC, int sides, double scale, const double* pv,
                   index_t nv, const double* pn, const double* pd, index_t nf,
                   const index_t[::1] FV, const index_t[::1] fvptr, index_t f0,
                   const index_t[:, ::1] BE, index_t e0, index_t ne, const double* xk,
                   double rad, double margin, index_t t, Pts* pts, double* A, uint64_t* Aid,
                   double* B, uint64_t* Bid) noexcept nogil:
    """contact/mesh_poly.py's _triangle; False when out of memory."""
    cdef index_t tri[3]
    cdef index_t side_e[3]
    cdef double P[9]
    cdef double ref[3 * MAXC]
    cdef uint64_t sids[MAXC]
    cdef double n[3]
    cdef double ub[3]
    cdef double ua[3]
    cdef double L[3]
    cdef double Lb[3]
    cdef double w[3]
    cdef double pa[3]
    cdef double pb[3]
    cdef double on_mesh[3]
    cdef double pt[3]
    cdef double nrm[3]
    cdef double dt, st, hmax, h, sf, s, sgn, ln, smin, tmax, se, bias, best, cc
    cdef double A_, B_, C_, D_, E_, den, ta, tb
    cdef index_t i, f, fbest = -1, kk, j, kbest = -1, jbest = -1, e, finc = -1, c, nA, tmp
    cdef bint flipped, convex
    cdef uint64_t key
    for i in range(3):
        tri[i] = T[t, i]
        side_e[i] = TE[t, i]
    for c in range(3):
        n[c] = PN[patch[t], c]
    dt = n[0] * V[tri[0], 0] + n[1] * V[tri[0], 1] + n[2] * V[tri[0], 2]
    flipped = sides == 2 and dot(n, xk) < dt
    if flipped:
        for c in range(3):
            n[c] = -n[c]
        dt = -dt
        tmp = tri[0]
        tri[0] = tri[2]
        tri[2] = tmp
        tmp = side_e[0]
        side_e[0] = side_e[1]
        side_e[1] = tmp
    for i in range(3):
        for c in range(3):
            P[3 * i + c] = V[tri[i], c]
    sgn = -1.0 if flipped else 1.0
    st = INFINITY
    hmax = -INFINITY
    for i in range(nv):
        h = dot(n, &pv[3 * i]) - dt
        if h < st:
            st = h
        if h > hmax:
            hmax = h
    if st > margin or (sides == 1 and hmax < -rad):
        return True
    sf = -INFINITY
    for f in range(nf):
        s = INFINITY
        for i in range(3):
            h = dot(&pn[3 * f], &P[3 * i]) - pd[f]
            if h < s:
                s = h
        if s > sf:
            sf = s
            fbest = f
    if sf > margin:
        return True
    se = -INFINITY
    for kk in range(3):
        sub3(&P[3 * ((kk + 1) % 3)], &P[3 * kk], ub)
        e = side_e[kk]
        convex = ET[e, 1] < 0 or dih[e] * sgn > 0
        for j in range(ne):
            sub3(&pv[3 * BE[e0 + j, 1]], &pv[3 * BE[e0 + j, 0]], ua)
            cross3(ua, ub, L)
            ln = sqrt(dot(L, L))
            if ln <= 1e-9 * sqrt(dot(ua, ua) * dot(ub, ub)):
                continue
            for c in range(3):
                L[c] = L[c] / ln
            sub3(xk, &P[3 * kk], w)
            if dot(L, w) < 0:
                for c in range(3):
                    L[c] = -L[c]
            smin = INFINITY
            tmax = -INFINITY
            for i in range(nv):
                h = dot(L, &pv[3 * i])
                if h < smin:
                    smin = h
            for i in range(3):
                h = dot(L, &P[3 * i])
                if h > tmax:
                    tmax = h
            s = smin - tmax
            if s > margin:
                return True
            if convex and s > se:
                se = s
                kbest = kk
                jbest = j
                Lb[0], Lb[1], Lb[2] = L[0], L[1], L[2]
    bias = EDGE_BIAS * rad
    if kbest >= 0 and se > (st if st > sf else sf) + bias:
        for c in range(3):
            pa[c] = pv[3 * BE[e0 + jbest, 0] + c]
            ua[c] = pv[3 * BE[e0 + jbest, 1] + c] - pa[c]
            pb[c] = P[3 * kbest + c]
            ub[c] = P[3 * ((kbest + 1) % 3) + c] - pb[c]
        sub3(pa, pb, w)
        A_, B_, C_ = dot(ua, ua), dot(ua, ub), dot(ub, ub)
        D_, E_ = dot(ua, w), dot(ub, w)
        den = A_ * C_ - B_ * B_
        ta = (B_ * E_ - C_ * D_) / den
        ta = 0.0 if ta < 0.0 else (1.0 if ta > 1.0 else ta)
        tb = (A_ * E_ - B_ * D_) / den
        tb = 0.0 if tb < 0.0 else (1.0 if tb > 1.0 else tb)
        for c in range(3):
            on_mesh[c] = pb[c] + tb * ub[c]
        if in_cone(V, T, N, TE, ET, dih, eflat, vptr, vtris, TC, scale, t, flipped, Lb,
                   on_mesh):
            for c in range(3):
                pt[c] = 0.5 * (pa[c] + ta * ua[c] + on_mesh[c])
            key = (<uint64_t>2 << SHIFT) | (<uint64_t>side_e[kbest] << 20) | <uint64_t>jbest
            return push(pts, key, 0, pt, se, Lb)
        return True
    if sf > st + bias:
        nA = fvptr[f0 + fbest + 1] - fvptr[f0 + fbest]
        if nA > MAXC:
            nA = MAXC
        for i in range(nA):
            for c in range(3):
                ref[3 * i + c] = pv[3 * FV[fvptr[f0 + fbest] + i] + c]
            sids[i] = <uint64_t>i
        for i in range(3):
            for c in range(3):
                A[3 * i + c] = P[3 * i + c]
            Aid[i] = <uint64_t>(tri[i] + 1)
        nA = clip(A, Aid, 3, ref, <int>nA, &pn[3 * fbest], sids, B, Bid)
        for c in range(3):
            nrm[c] = -pn[3 * fbest + c]
        for i in range(nA):
            h = dot(&pn[3 * fbest], &A[3 * i]) - pd[fbest]
            if h <= margin and in_cone(V, T, N, TE, ET, dih, eflat, vptr, vtris, TC, scale,
                                       t, flipped, nrm, &A[3 * i]):
                for c in range(3):
                    pt[c] = A[3 * i + c] - 0.5 * h * pn[3 * fbest + c]
                if not push(pts, (<uint64_t>BLOCK_FACE << SHIFT) | <uint64_t>fbest, Aid[i],
                            pt, h, nrm):
                    return False
        return True
    best = INFINITY
    for f in range(nf):
        cc = dot(&pn[3 * f], n)
        if cc < best:
            best = cc
            finc = f
    nA = fvptr[f0 + finc + 1] - fvptr[f0 + finc]
    if nA > MAXC:
        nA = MAXC
    for i in range(nA):
        j = FV[fvptr[f0 + finc] + i]
        for c in range(3):
            A[3 * i + c] = pv[3 * j + c]
        Aid[i] = <uint64_t>(j + 1)
    for i in range(3):
        sids[i] = (<uint64_t>1 << 40) + <uint64_t>side_e[i]
    nA = clip(A, Aid, <int>nA, P, 3, n, sids, B, Bid)
    key = (<uint64_t>PATCH << SHIFT) | <uint64_t>patch[t] | (<uint64_t>flipped << 59)
    for i in range(nA):
        h = dot(n, &A[3 * i]) - dt
        if h <= margin:
            for c in range(3):
                pt[c] = A[3 * i + c] - 0.5 * h * n[c]
            if not push(pts, key, Aid[i], pt, h, n):
                return False
    return True


cdef struct XY:
    double a
    double b
    uint64_t id
    index_t q


cdef inline bint xy_before(const XY* x, const XY* y) noexcept nogil:
    if x.a != y.a:
        return x.a < y.a
    if x.b != y.b:
        return x.b < y.b
    if x.id != y.id:
        return x.id < y.id
    return x.q < y.q


cdef inline double turn(const XY* o, const XY* a, const XY* b) noexcept nogil:
    return (a.a - o.a) * (b.b - o.b) - (a.b - o.b) * (b.a - o.a)


cdef void hull2d(const Pts* pts, const index_t* group, index_t m, XY* xy, index_t* part,
                 bint* keep) noexcept nogil:
    """contact/mesh_poly.py's _hull2d: keep[q] for the group's hull corners."""
    cdef const double* nrm = pts.data[group[0]].n
    cdef double axis[3]
    cdef double u[3]
    cdef double v[3]
    cdef double ln, scale = 0.0, tol
    cdef index_t k, j, top, pass_, n
    cdef bint changed
    cdef XY x
    if fabs(nrm[0]) < 0.9:
        axis[0], axis[1], axis[2] = 1.0, 0.0, 0.0
    else:
        axis[0], axis[1], axis[2] = 0.0, 1.0, 0.0
    cross3(nrm, axis, u)
    ln = sqrt(dot(u, u))
    u[0], u[1], u[2] = u[0] / ln, u[1] / ln, u[2] / ln
    cross3(nrm, u, v)
    for k in range(m):
        xy[k].a = dot(pts.data[group[k]].p, u)
        xy[k].b = dot(pts.data[group[k]].p, v)
        xy[k].id = pts.data[group[k]].id
        xy[k].q = group[k]
    for k in range(1, m):
        x = xy[k]
        j = k
        while j > 0 and xy_before(&x, &xy[j - 1]):
            xy[j] = xy[j - 1]
            j -= 1
        xy[j] = x
    for k in range(m):
        if fabs(xy[k].a) > scale:
            scale = fabs(xy[k].a)
        if fabs(xy[k].b) > scale:
            scale = fabs(xy[k].b)
    tol = 1e-12 * scale * scale
    n = 0                                  # the cycle: part[:n], each chain's stack after it
    for pass_ in range(2):
        top = 0
        for k in range(m):
            j = k if pass_ == 0 else m - 1 - k
            while top >= 2 and turn(&xy[part[n + top - 2]], &xy[part[n + top - 1]],
                                    &xy[j]) <= tol:
                top -= 1
            part[n + top] = j
            top += 1
        n += top - 1
    changed = True                         # corners straight between their neighbours
    while changed and n > 2:
        changed = False
        for k in range(n):
            if turn(&xy[part[(k + n - 1) % n]], &xy[part[k]], &xy[part[(k + 1) % n]]) <= tol:
                for j in range(k, n - 1):
                    part[j] = part[j + 1]
                n -= 1
                changed = True
                break
    for k in range(n):
        keep[xy[part[k]].q] = True


cdef index_t merge_points(Pts* pts, index_t* order, XY* xy, index_t* part,
                          bint* keep) noexcept nogil:
    """contact/mesh_poly.py's _merge_points: the kept points moved to the front of pts, raw
    ids in their key fields, in raw order; returns their number."""
    cdef index_t k, j, start, end, m = pts.n, kept = 0, x
    cdef Pt tmp
    for k in range(m):
        order[k] = k
        keep[k] = False
    for k in range(1, m):                  # by (key, index)
        x = order[k]
        j = k
        while j > 0 and pts.data[order[j - 1]].key > pts.data[x].key:
            order[j] = order[j - 1]
            j -= 1
        order[j] = x
    start = 0
    while start < m:
        end = start
        while end < m and pts.data[order[end]].key == pts.data[order[start]].key:
            end += 1
        if end - start == 2 and pts.data[order[start]].id == pts.data[order[start + 1]].id:
            keep[order[start]] = True              # one corner met from two triangles
        elif end - start <= 2:
            for k in range(start, end):
                keep[order[k]] = True
        else:
            hull2d(pts, &order[start], end - start, xy, part, keep)
        start = end
    for k in range(m):
        if keep[k]:
            tmp = pts.data[k]
            tmp.key = (mix(tmp.key) ^ tmp.id) & MASK
            pts.data[kept] = tmp
            kept += 1
    if kept > MAXP:                        # the MAXP deepest, by (gap, raw)
        for k in range(1, kept):
            tmp = pts.data[k]
            j = k
            while j > 0 and (pts.data[j - 1].h > tmp.h or (pts.data[j - 1].h == tmp.h and
                                                           pts.data[j - 1].key > tmp.key)):
                pts.data[j] = pts.data[j - 1]
                j -= 1
            pts.data[j] = tmp
        kept = MAXP
    for k in range(1, kept):               # raw order
        tmp = pts.data[k]
        j = k
        while j > 0 and pts.data[j - 1].key > tmp.key:
            pts.data[j] = pts.data[j - 1]
            j -= 1
        pts.data[j] = tmp
    return kept


def poly_mesh(const double[:, ::1] V, const index_t[:, ::1] T, const double[:, ::1] TC,
              const double[::1] TR, const index_t[::1] patch, const double[:, ::1] PN,
              const double[:, ::1] N, const index_t[:, ::1] TE, const index_t[:, ::1] ET,
              const double[::1] dih, const index_t[::1] eflat, const index_t[::1] vptr,
              const index_t[::1] vtris, const double[::1] lower, const index_t[::1] dims,
              double cell, const index_t[::1] cptr, const index_t[::1] ctris, int sides,
              double scale, const double[:, ::1] BV, const index_t[::1] bvptr,
              const double[:, ::1] BN, const double[::1] BD, const index_t[::1] fptr,
              const index_t[::1] FV, const index_t[::1] fvptr, const index_t[:, ::1] BE,
              const index_t[::1] eptr, const double[::1] bradius, const index_t[::1] t,
              const double[:, ::1] x, const double[:, :, ::1] R, double margin,
              index_t[::1] block, index_t[::1] raw, double[:, ::1] normal,
              double[:, ::1] point, double[::1] gap):
    """The compiled twin of contact/mesh_poly.py's poly_mesh (read its docstring)."""
    cdef index_t nb = t.shape[0], nt = T.shape[0], cap = block.shape[0], count = 0
    cdef index_t k, tk, i, j, f, e, tt, m, maxv = 0, maxf = 0, nv, nf, got, q
    cdef index_t lo[3]
    cdef index_t hi[3]
    cdef double xk[3]
    cdef double qv[3]
    cdef double box_lo[3]
    cdef double box_hi[3]
    cdef double a, b, c, rad, reach, mn, mx
    cdef bint ok = True
    cdef Pts pts
    for k in range(bvptr.shape[0] - 1):
        if bvptr[k + 1] - bvptr[k] > maxv:
            maxv = bvptr[k + 1] - bvptr[k]
        if fptr[k + 1] - fptr[k] > maxf:
            maxf = fptr[k + 1] - fptr[k]
    cdef double* pv = <double*>malloc(3 * (maxv + 1) * sizeof(double))
    cdef double* pn = <double*>malloc(3 * (maxf + 1) * sizeof(double))
    cdef double* pd = <double*>malloc((maxf + 1) * sizeof(double))
    cdef index_t* stamp = <index_t*>malloc((nt + 1) * sizeof(index_t))
    cdef double* A = <double*>malloc(3 * MAXC * sizeof(double))
    cdef double* B = <double*>malloc(3 * MAXC * sizeof(double))
    cdef uint64_t* Aid = <uint64_t*>malloc(MAXC * sizeof(uint64_t))
    cdef uint64_t* Bid = <uint64_t*>malloc(MAXC * sizeof(uint64_t))
    cdef index_t room = 64
    cdef index_t* order = NULL
    cdef index_t* part = NULL
    cdef XY* xy = NULL
    cdef bint* keep = NULL
    pts.data = <Pt*>malloc(room * sizeof(Pt))
    pts.room = room
    pts.n = 0
    try:
        if not (pv and pn and pd and stamp and A and B and Aid and Bid and pts.data):
            raise MemoryError()
        with nogil:
            for tt in range(nt):
                stamp[tt] = -1
            for k in range(nb):
                tk = t[k]
                xk[0], xk[1], xk[2] = x[k, 0], x[k, 1], x[k, 2]
                nv = bvptr[tk + 1] - bvptr[tk]
                nf = fptr[tk + 1] - fptr[tk]
                for i in range(nv):
                    a, b, c = BV[bvptr[tk] + i, 0], BV[bvptr[tk] + i, 1], BV[bvptr[tk] + i, 2]
                    for m in range(3):
                        pv[3 * i + m] = R[k, m, 0] * a + R[k, m, 1] * b + R[k, m, 2] * c + xk[m]
                for f in range(nf):
                    a, b, c = BN[fptr[tk] + f, 0], BN[fptr[tk] + f, 1], BN[fptr[tk] + f, 2]
                    for m in range(3):
                        pn[3 * f + m] = R[k, m, 0] * a + R[k, m, 1] * b + R[k, m, 2] * c
                    pd[f] = BD[fptr[tk] + f] + dot(&pn[3 * f], xk)
                rad = bradius[tk]
                for m in range(3):
                    mn = INFINITY
                    mx = -INFINITY
                    for i in range(nv):
                        if pv[3 * i + m] < mn:
                            mn = pv[3 * i + m]
                        if pv[3 * i + m] > mx:
                            mx = pv[3 * i + m]
                    box_lo[m] = mn - margin
                    box_hi[m] = mx + margin
                if cell_span(box_lo, box_hi, &lower[0], cell, &dims[0], lo, hi):
                    continue
                pts.n = 0
                for i in range(lo[0], hi[0] + 1):
                    for j in range(lo[1], hi[1] + 1):
                        f = (i * dims[1] + j) * dims[2]
                        for e in range(cptr[f + lo[2]], cptr[f + hi[2] + 1]):
                            tt = ctris[e]
                            if stamp[tt] == k:
                                continue
                            stamp[tt] = k
                            for m in range(3):
                                qv[m] = xk[m] - TC[tt, m]
                            reach = TR[tt] + rad + margin
                            if dot(qv, qv) > reach * reach:
                                continue
                            if not triangle(V, T, patch, PN, N, TE, ET, dih, eflat, vptr,
                                            vtris, TC, sides, scale, pv, nv, pn, pd, nf, FV,
                                            fvptr, fptr[tk], BE, eptr[tk],
                                            eptr[tk + 1] - eptr[tk], xk, rad, margin, tt, &pts,
                                            A, Aid, B, Bid):
                                ok = False
                if not ok:
                    break
                if pts.n > room or order == NULL:
                    while room < pts.n:
                        room *= 2
                    free(order)
                    free(part)
                    free(xy)
                    free(keep)
                    order = <index_t*>malloc(room * sizeof(index_t))
                    part = <index_t*>malloc(2 * (room + 1) * sizeof(index_t))
                    xy = <XY*>malloc(room * sizeof(XY))
                    keep = <bint*>malloc(room * sizeof(bint))
                    if not (order and part and xy and keep):
                        ok = False
                        break
                got = merge_points(&pts, order, xy, part, keep)
                for q in range(got):
                    if count < cap:
                        block[count] = k
                        raw[count] = <index_t>pts.data[q].key
                        gap[count] = pts.data[q].h
                        for m in range(3):
                            normal[count, m] = pts.data[q].n[m]
                            point[count, m] = pts.data[q].p[m]
                    count += 1
        if not ok:
            raise MemoryError()
    finally:
        free(pv)
        free(pn)
        free(pd)
        free(stamp)
        free(A)
        free(B)
        free(Aid)
        free(Bid)
        free(pts.data)
        free(order)
        free(part)
        free(xy)
        free(keep)
    return count
