# Convex polyhedra in contact: the compiled twin of parsolve/contact/polyhedra.py's
# poly_contacts (same name, arguments and results; read that module's docstring).
from libc.math cimport sqrt, fabs, INFINITY
from libc.stdlib cimport malloc, free
from libc.stdint cimport uint64_t
from linalg cimport dot3, cross3
from typedefs cimport index_t

cdef enum:
    MAXP = 16           # contact points per pair at most: the twin's MAXP (LIMITS, tested)
    MAXC = 256          # corners of a clipped polygon at most (incident corners + 2 per side)

LIMITS = {"MAXP": MAXP, "MAXC": MAXC}


cdef inline uint64_t mix(uint64_t z) noexcept nogil:
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline uint64_t corner_id(index_t side, uint64_t i0, uint64_t i1) noexcept nogil:
    cdef uint64_t lo = i0 if i0 < i1 else i1
    cdef uint64_t hi = i1 if i0 < i1 else i0
    return mix(mix(lo) + hi * 31 + <uint64_t>(side + 1) * 0x10000)


cdef void to_world(const double[:, ::1] V, const index_t[::1] vptr, const double[:, ::1] N,
                   const double[::1] D, const index_t[::1] fptr, index_t t, const double* x,
                   const double* R, double* v, double* n, double* d) noexcept nogil:
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


cdef double face_query(const double* n, const double* d, index_t nf, const double* v,
                       index_t nv, index_t* face) noexcept nogil:
    cdef double best = -INFINITY, s, e
    cdef index_t f, k
    face[0] = -1
    for f in range(nf):
        s = INFINITY
        for k in range(nv):
            e = n[3 * f] * v[3 * k] + n[3 * f + 1] * v[3 * k + 1] + n[3 * f + 2] * v[3 * k + 2] \
                - d[f]
            if e < s:
                s = e
        if s > best:
            best = s
            face[0] = f
    return best


cdef index_t face_contact(const double* vr, const double* nr, const double* dr,
                          const index_t[::1] FV, const index_t[::1] fvptr, index_t f0r,
                          index_t fr, index_t nvr, const double* vi, const double* ni,
                          index_t nfi, index_t f0i, double margin, index_t ref_b, double sign,
                          double rad, index_t* feat, double* nrm, double* pts,
                          double* gaps) noexcept nogil:
    cdef double m[3]
    cdef double p[3]
    cdef double q[3]
    cdef double e[3]
    cdef double side[3]
    cdef double A[3 * MAXC]
    cdef double Bq[3 * MAXC]
    cdef uint64_t Aid[MAXC]
    cdef uint64_t Bid[MAXC]
    cdef double keep[3 * MAXC]
    cdef double keeph[MAXC]
    cdef uint64_t keepid[MAXC]
    cdef index_t order[MAXC]
    cdef index_t fi = -1, f, k, idx, nA, nB, nref, c, j, prev, nk, used_count
    cdef double best = INFINITY, cc, off, s0, s1, tt, ln, scale = 0.0, tol, h, dref, eps
    cdef uint64_t base, fid, used
    cdef int dup
    m[0], m[1], m[2] = nr[3 * fr], nr[3 * fr + 1], nr[3 * fr + 2]
    for f in range(nfi):
        cc = ni[3 * f] * m[0] + ni[3 * f + 1] * m[1] + ni[3 * f + 2] * m[2]
        if cc < best:
            best = cc
            fi = f
    nA = fvptr[f0i + fi + 1] - fvptr[f0i + fi]
    if nA > MAXC:
        nA = MAXC
    for k in range(nA):
        j = FV[fvptr[f0i + fi] + k]
        A[3 * k], A[3 * k + 1], A[3 * k + 2] = vi[3 * j], vi[3 * j + 1], vi[3 * j + 2]
        Aid[k] = <uint64_t>(j + 1)
    for k in range(3 * nvr):
        if fabs(vr[k]) > scale:
            scale = fabs(vr[k])
    if scale == 0.0:
        scale = 1e-300
    tol = 1e-9 * scale
    nref = fvptr[f0r + fr + 1] - fvptr[f0r + fr]
    for k in range(nref):
        if nA == 0:
            return 0
        j = FV[fvptr[f0r + fr] + k]
        p[0], p[1], p[2] = vr[3 * j], vr[3 * j + 1], vr[3 * j + 2]
        j = FV[fvptr[f0r + fr] + (k + 1) % nref]
        q[0], q[1], q[2] = vr[3 * j] - p[0], vr[3 * j + 1] - p[1], vr[3 * j + 2] - p[2]
        cross3(q, m, side)
        ln = sqrt(dot3(side, side))
        side[0] /= ln
        side[1] /= ln
        side[2] /= ln
        off = dot3(side, p)
        nB = 0
        for idx in range(nA):
            prev = idx - 1 if idx > 0 else nA - 1
            s0 = dot3(side, &A[3 * prev]) - off
            s1 = dot3(side, &A[3 * idx]) - off
            if s1 <= tol:
                if s0 > tol and s1 < 0 and nB < MAXC:
                    tt = s0 / (s0 - s1)
                    for c in range(3):
                        Bq[3 * nB + c] = A[3 * prev + c] + tt * (A[3 * idx + c] - A[3 * prev + c])
                    Bid[nB] = corner_id(k, Aid[prev], Aid[idx])
                    nB += 1
                if nB < MAXC:
                    for c in range(3):
                        Bq[3 * nB + c] = A[3 * idx + c]
                    Bid[nB] = Aid[idx]
                    nB += 1
            elif s0 < 0 and nB < MAXC:
                tt = s0 / (s0 - s1)
                for c in range(3):
                    Bq[3 * nB + c] = A[3 * prev + c] + tt * (A[3 * idx + c] - A[3 * prev + c])
                Bid[nB] = corner_id(k, Aid[prev], Aid[idx])
                nB += 1
        for idx in range(3 * nB):
            A[idx] = Bq[idx]
        for idx in range(nB):
            Aid[idx] = Bid[idx]
        nA = nB
    # merge corners within eps, drop corners on a straight side, keep those within margin
    eps = 1e-6 * rad
    nB = 0
    for idx in range(nA):
        dup = 0
        for j in range(nB):
            if fabs(A[3 * idx] - Bq[3 * j]) <= eps and \
                    fabs(A[3 * idx + 1] - Bq[3 * j + 1]) <= eps and \
                    fabs(A[3 * idx + 2] - Bq[3 * j + 2]) <= eps:
                dup = 1
                break
        if dup:
            continue
        for c in range(3):
            Bq[3 * nB + c] = A[3 * idx + c]
        Bid[nB] = Aid[idx]
        nB += 1
    dref = dr[fr]
    nk = 0
    for idx in range(nB):
        if nB >= 3:
            prev = idx - 1 if idx > 0 else nB - 1
            j = (idx + 1) % nB
            for c in range(3):
                e[c] = Bq[3 * j + c] - Bq[3 * prev + c]
                p[c] = Bq[3 * idx + c] - Bq[3 * prev + c]
            tt = dot3(p, e) / dot3(e, e)
            for c in range(3):
                q[c] = p[c] - tt * e[c]
            if 0 < tt < 1 and sqrt(dot3(q, q)) <= eps:
                continue
        h = dot3(m, &Bq[3 * idx]) - dref
        if h <= margin:
            keep[3 * nk], keep[3 * nk + 1], keep[3 * nk + 2] = Bq[3 * idx], Bq[3 * idx + 1], \
                Bq[3 * idx + 2]
            keeph[nk] = h
            keepid[nk] = Bid[idx]
            nk += 1
    for k in range(nk):
        order[k] = k
    if nk > MAXP:
        # the MAXP deepest (ties by position), then back in polygon order
        for k in range(1, nk):            # insertion sort by (h, index)
            j = k
            while j > 0 and (keeph[order[j - 1]] > keeph[order[j]] or
                             (keeph[order[j - 1]] == keeph[order[j]] and
                              order[j - 1] > order[j])):
                order[j - 1], order[j] = order[j], order[j - 1]
                j -= 1
        nk = MAXP
        for k in range(1, nk):
            j = k
            while j > 0 and order[j - 1] > order[j]:
                order[j - 1], order[j] = order[j], order[j - 1]
                j -= 1
    base = mix((<uint64_t>ref_b << 40) + (<uint64_t>fr << 20))
    used = 0
    for k in range(nk):
        idx = order[k]
        fid = mix(base ^ keepid[idx]) % 64
        while (used >> fid) & 1:
            fid = (fid + 1) % 64
        used |= (<uint64_t>1) << fid
        feat[k] = <index_t>fid
        h = keeph[idx]
        for c in range(3):
            nrm[3 * k + c] = sign * m[c]
            pts[3 * k + c] = keep[3 * idx + c] - 0.5 * h * m[c]
        gaps[k] = h
    return nk


def poly_contacts(const double[:, ::1] V, const index_t[::1] vptr, const double[:, ::1] N,
                  const double[::1] D, const index_t[::1] fptr, const index_t[::1] FV,
                  const index_t[::1] fvptr, const index_t[:, ::1] E, const index_t[::1] eptr,
                  const double[::1] radius, const index_t[::1] ta, const double[:, ::1] xa,
                  const double[:, :, ::1] Ra, const index_t[::1] tb, const double[:, ::1] xb,
                  const double[:, :, ::1] Rb, double margin, index_t[::1] pair,
                  index_t[::1] feature, double[:, ::1] normal, double[:, ::1] point,
                  double[::1] gap):
    cdef index_t npair = ta.shape[0], k, maxv = 0, maxf = 0, t, count = 0, i, j, c
    cdef index_t nva, nvb, nfa, nfb, fa, fb, a_, b_, ei, ej, eA0, eB0, nEa, nEb
    cdef double *va
    cdef double *vb
    cdef double *na
    cdef double *nb
    cdef double *da
    cdef double *db
    cdef double sa, sb, se, s, bias, ln, cba, dba, adc, bdc, Aa, Bc, Cc, Dd, Ee, den, t1, t2
    cdef double bxa[3]
    cdef double dxc[3]
    cdef double cvec[3]
    cdef double dvec[3]
    cdef double ua[3]
    cdef double ub[3]
    cdef double L[3]
    cdef double Lb[3]
    cdef double w[3]
    cdef index_t feat[MAXP]
    cdef double nrm[3 * MAXP]
    cdef double pts[3 * MAXP]
    cdef double gaps[MAXP]
    cdef index_t got
    cdef bint separated
    cdef index_t ebest_a, ebest_b
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
        with nogil:
            for k in range(npair):
                a_, b_ = ta[k], tb[k]
                nva, nvb = vptr[a_ + 1] - vptr[a_], vptr[b_ + 1] - vptr[b_]
                nfa, nfb = fptr[a_ + 1] - fptr[a_], fptr[b_ + 1] - fptr[b_]
                to_world(V, vptr, N, D, fptr, a_, &xa[k, 0], &Ra[k, 0, 0], va, na, da)
                to_world(V, vptr, N, D, fptr, b_, &xb[k, 0], &Rb[k, 0, 0], vb, nb, db)
                sa = face_query(na, da, nfa, vb, nvb, &fa)
                if sa > margin:
                    continue
                sb = face_query(nb, db, nfb, va, nva, &fb)
                if sb > margin:
                    continue
                bias = 1e-3 * (radius[a_] if radius[a_] < radius[b_] else radius[b_])
                se = -INFINITY
                ebest_a = -1
                ebest_b = -1
                separated = 0
                eA0, eB0 = eptr[a_], eptr[b_]
                nEa, nEb = eptr[a_ + 1] - eA0, eptr[b_ + 1] - eB0
                for ei in range(nEa):
                    i = eA0 + ei
                    cross3(&na[3 * E[i, 3]], &na[3 * E[i, 2]], bxa)
                    for c in range(3):
                        ua[c] = va[3 * E[i, 1] + c] - va[3 * E[i, 0] + c]
                    for ej in range(nEb):
                        j = eB0 + ej
                        for c in range(3):
                            cvec[c] = -nb[3 * E[j, 2] + c]
                            dvec[c] = -nb[3 * E[j, 3] + c]
                        cross3(dvec, cvec, dxc)
                        cba = dot3(cvec, bxa)
                        dba = dot3(dvec, bxa)
                        adc = dot3(&na[3 * E[i, 2]], dxc)
                        bdc = dot3(&na[3 * E[i, 3]], dxc)
                        if not (cba * dba < 0 and adc * bdc < 0 and cba * bdc > 0):
                            continue
                        for c in range(3):
                            ub[c] = vb[3 * E[j, 1] + c] - vb[3 * E[j, 0] + c]
                        cross3(ua, ub, L)
                        ln = sqrt(dot3(L, L))
                        if ln <= 1e-9 * sqrt(dot3(ua, ua) * dot3(ub, ub)):
                            continue
                        for c in range(3):
                            L[c] /= ln
                            w[c] = va[3 * E[i, 0] + c] - xa[k, c]
                        if dot3(L, w) < 0:
                            for c in range(3):
                                L[c] = -L[c]
                        for c in range(3):
                            w[c] = vb[3 * E[j, 0] + c] - va[3 * E[i, 0] + c]
                        s = dot3(L, w)
                        if s > margin:
                            separated = 1
                            break
                        if s > se:
                            se = s
                            ebest_a = ei
                            ebest_b = ej
                            Lb[0], Lb[1], Lb[2] = L[0], L[1], L[2]
                    if separated:
                        break
                if separated:
                    continue
                if se > (sa if sa > sb else sb) + bias:
                    i = eA0 + ebest_a
                    j = eB0 + ebest_b
                    for c in range(3):
                        ua[c] = va[3 * E[i, 1] + c] - va[3 * E[i, 0] + c]
                        ub[c] = vb[3 * E[j, 1] + c] - vb[3 * E[j, 0] + c]
                        w[c] = va[3 * E[i, 0] + c] - vb[3 * E[j, 0] + c]
                    Aa, Bc, Cc = dot3(ua, ua), dot3(ua, ub), dot3(ub, ub)
                    Dd, Ee = dot3(ua, w), dot3(ub, w)
                    den = Aa * Cc - Bc * Bc
                    t1 = (Bc * Ee - Cc * Dd) / den
                    t1 = 0.0 if t1 < 0 else (1.0 if t1 > 1 else t1)
                    t2 = (Aa * Ee - Bc * Dd) / den
                    t2 = 0.0 if t2 < 0 else (1.0 if t2 > 1 else t2)
                    pair[count] = k
                    feature[count] = <index_t>(mix((<uint64_t>1 << 50) + <uint64_t>ebest_a * 65536
                                                + <uint64_t>ebest_b) % 64)
                    for c in range(3):
                        normal[count, c] = -Lb[c]
                        point[count, c] = 0.5 * (va[3 * E[i, 0] + c] + t1 * ua[c]
                                                 + vb[3 * E[j, 0] + c] + t2 * ub[c])
                    gap[count] = se
                    count += 1
                    continue
                if sb > sa + bias:
                    got = face_contact(vb, nb, db, FV, fvptr, fptr[b_], fb, nvb, va, na, nfa,
                                       fptr[a_], margin, 1, 1.0, radius[b_], feat, nrm, pts, gaps)
                else:
                    got = face_contact(va, na, da, FV, fvptr, fptr[a_], fa, nva, vb, nb, nfb,
                                       fptr[b_], margin, 0, -1.0, radius[a_], feat, nrm, pts, gaps)
                for i in range(got):
                    pair[count] = k
                    feature[count] = feat[i]
                    for c in range(3):
                        normal[count, c] = nrm[3 * i + c]
                        point[count, c] = pts[3 * i + c]
                    gap[count] = gaps[i]
                    count += 1
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
