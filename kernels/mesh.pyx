"""Contacts of spheres with a triangle mesh, compiled: the twin of parsolve/contact/mesh.py's
sphere_mesh (same name, arguments and results; read that module's docstring for the rule of
one contact per touching feature set)."""
from libc.math cimport sqrt
from libc.stdlib cimport malloc, realloc, free
from libc.stdint cimport uint64_t
from splitmix cimport mix
from linalg cimport dot3 as dot
from mesh_grid cimport cell_span
from typedefs cimport index_t

cdef enum:
    PATCH = 0
    EDGE = 1
    VERTEX = 2
    SHIFT = 60

cdef double SAME = 1e-9
cdef double CLOSER = 1e-10


cdef struct Found:
    index_t raw
    double d2
    index_t t
    double n[3]
    double gap


cdef int closest(const double* c, const double[:, ::1] V, const index_t[:, ::1] T, index_t t,
                 double* p) noexcept nogil:
    """Ericson's closest point of triangle t to c; returns the region (0 face, 1 + k corner
    k, 4 + k side k)."""
    cdef const double* a = &V[T[t, 0], 0]
    cdef const double* b = &V[T[t, 1], 0]
    cdef const double* cc = &V[T[t, 2], 0]
    cdef double ab[3]
    cdef double ac[3]
    cdef double ap[3]
    cdef double bp[3]
    cdef double cp[3]
    cdef double d1, d2, d3, d4, d5, d6, va, vb, vc, v, w, den
    cdef int m
    for m in range(3):
        ab[m] = b[m] - a[m]
        ac[m] = cc[m] - a[m]
        ap[m] = c[m] - a[m]
    d1 = dot(ab, ap)
    d2 = dot(ac, ap)
    if d1 <= 0.0 and d2 <= 0.0:
        p[0], p[1], p[2] = a[0], a[1], a[2]
        return 1
    for m in range(3):
        bp[m] = c[m] - b[m]
    d3 = dot(ab, bp)
    d4 = dot(ac, bp)
    if d3 >= 0.0 and d4 <= d3:
        p[0], p[1], p[2] = b[0], b[1], b[2]
        return 2
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        v = d1 / (d1 - d3)
        for m in range(3):
            p[m] = a[m] + v * ab[m]
        return 4
    for m in range(3):
        cp[m] = c[m] - cc[m]
    d5 = dot(ab, cp)
    d6 = dot(ac, cp)
    if d6 >= 0.0 and d5 <= d6:
        p[0], p[1], p[2] = cc[0], cc[1], cc[2]
        return 3
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        w = d2 / (d2 - d6)
        for m in range(3):
            p[m] = a[m] + w * ac[m]
        return 6
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and d4 - d3 >= 0.0 and d5 - d6 >= 0.0:
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        for m in range(3):
            p[m] = b[m] + w * (cc[m] - b[m])
        return 5
    den = 1.0 / (va + vb + vc)
    v = vb * den
    w = vc * den
    for m in range(3):
        p[m] = a[m] + ab[m] * v + ac[m] * w
    return 0


cdef inline double dist2(const double* c, const double[:, ::1] V, const index_t[:, ::1] T,
                         index_t t) noexcept nogil:
    cdef double p[3]
    cdef double d[3]
    closest(c, V, T, t, p)
    d[0], d[1], d[2] = c[0] - p[0], c[1] - p[1], c[2] - p[2]
    return dot(d, d)


cdef bint candidate(const double[:, ::1] V, const index_t[:, ::1] T,
                    const index_t[::1] patch, const double[:, ::1] PN,
                    const index_t[:, ::1] TE, const index_t[:, ::1] ET,
                    const double[:, ::1] EN, const index_t[::1] eflat,
                    const index_t[::1] vptr, const index_t[::1] vtris,
                    const double[:, ::1] VN, const index_t[::1] vflat, int sides,
                    const double* ck, double r, double reach, index_t t,
                    Found* out) noexcept nogil:
    """The contact triangle t offers the sphere (ck, r) into out; False when none."""
    cdef double p[3]
    cdef double dv[3]
    cdef const double* n
    cdef double d2, h, d, s
    cdef int region, m
    cdef index_t e, u, v, q, kind, idx
    region = closest(ck, V, T, t, p)
    for m in range(3):
        dv[m] = ck[m] - p[m]
    d2 = dot(dv, dv)
    if d2 > reach * reach:
        return False
    if region == 0:
        kind = PATCH
        idx = patch[t]
    elif region >= 4:
        e = TE[t, region - 4]
        u = ET[e, 0] if ET[e, 0] != t else ET[e, 1]
        if u >= 0 and dist2(ck, V, T, u) < d2 * (1.0 - CLOSER):
            return False
        if eflat[e]:
            kind = PATCH
            idx = patch[t]
        else:
            kind = EDGE
            idx = e
    else:
        v = T[t, region - 1]
        for q in range(vptr[v], vptr[v + 1]):
            u = vtris[q]
            if u != t and dist2(ck, V, T, u) < d2 * (1.0 - CLOSER):
                return False
        if vflat[v]:
            kind = PATCH
            idx = patch[t]
        else:
            kind = VERTEX
            idx = v
    out.raw = (kind << SHIFT) | idx
    out.d2 = d2
    out.t = t
    if kind == PATCH:
        n = &PN[idx, 0]
        h = dot(dv, n)
        if sides == 1:
            if h < -r:
                return False
            out.n[0], out.n[1], out.n[2] = n[0], n[1], n[2]
        elif h >= 0.0:
            out.n[0], out.n[1], out.n[2] = n[0], n[1], n[2]
        else:
            out.n[0], out.n[1], out.n[2] = -n[0], -n[1], -n[2]
            h = -h
        out.gap = h - r
        return True
    n = &EN[idx, 0] if kind == EDGE else &VN[idx, 0]
    d = sqrt(d2)
    s = dot(dv, n)
    if sides == 1 and s < 0.0:
        if s < -r:
            return False
        out.n[0], out.n[1], out.n[2] = n[0], n[1], n[2]
        out.gap = s - r
        return True
    if d > 0.0:
        out.n[0], out.n[1], out.n[2] = dv[0] / d, dv[1] / d, dv[2] / d
        out.gap = d - r
        return True
    out.n[0], out.n[1], out.n[2] = n[0], n[1], n[2]
    out.gap = -r
    return True


cdef inline bint before_feature(const Found* a, const Found* b) noexcept nogil:
    if a.raw != b.raw:
        return a.raw < b.raw
    if a.d2 != b.d2:
        return a.d2 < b.d2
    return a.t < b.t


cdef inline bint before_depth(const Found* a, const Found* b) noexcept nogil:
    if a.gap != b.gap:
        return a.gap < b.gap
    return a.raw < b.raw


cdef void sort(Found* f, index_t n, int by) noexcept nogil:
    """Insertion sort (a sphere meets few triangles): by 0 feature order, 1 depth, 2 raw."""
    cdef index_t k, j
    cdef Found x
    cdef bint earlier
    for k in range(1, n):
        x = f[k]
        j = k
        while j > 0:
            if by == 0:
                earlier = before_feature(&x, &f[j - 1])
            elif by == 1:
                earlier = before_depth(&x, &f[j - 1])
            else:
                earlier = x.raw < f[j - 1].raw
            if not earlier:
                break
            f[j] = f[j - 1]
            j -= 1
        f[j] = x


cdef index_t merge(Found* f, index_t n) noexcept nogil:
    """One contact per feature, then one per normal; f[:returned] in raw order."""
    cdef index_t k, j, m = 0, kept = 0
    cdef bint alone
    sort(f, n, 0)
    for k in range(n):
        if k == 0 or f[k - 1].raw != f[k].raw:
            f[m] = f[k]
            m += 1
    sort(f, m, 1)
    for k in range(m):
        alone = True
        for j in range(kept):
            if not dot(f[k].n, f[j].n) < 1.0 - SAME:
                alone = False
                break
        if alone:
            f[kept] = f[k]
            kept += 1
    sort(f, kept, 2)
    return kept


def sphere_mesh(const double[:, ::1] V, const index_t[:, ::1] T, const double[:, ::1] TC,
                const double[::1] TR, const index_t[::1] patch, const double[:, ::1] PN,
                const index_t[:, ::1] TE, const index_t[:, ::1] ET, const double[:, ::1] EN,
                const index_t[::1] eflat, const index_t[::1] vptr, const index_t[::1] vtris,
                const double[:, ::1] VN, const index_t[::1] vflat, const double[::1] lower,
                const index_t[::1] dims, double cell, const index_t[::1] cptr,
                const index_t[::1] ctris, int sides, const double[:, ::1] c,
                const double[::1] radius, double margin, index_t[::1] sphere, index_t[::1] raw,
                index_t[::1] feature, double[:, ::1] normal, double[:, ::1] point,
                double[::1] gap):
    """The compiled twin of contact/mesh.py's sphere_mesh (read its docstring)."""
    cdef index_t n = c.shape[0], nt = T.shape[0], cap = sphere.shape[0], count = 0
    cdef index_t k, i, j, e, f, t, q, room = 64, nf, got, last = -1
    cdef index_t lo[3]
    cdef index_t hi[3]
    cdef double ck[3]
    cdef double box_lo[3]
    cdef double box_hi[3]
    cdef double q3[3]
    cdef double r, reach, s
    cdef int m
    cdef uint64_t used = 0, fid
    cdef index_t* stamp = <index_t*>malloc(nt * sizeof(index_t))
    cdef Found* found = <Found*>malloc(room * sizeof(Found))
    cdef Found* grown
    if stamp == NULL or found == NULL:
        free(stamp)
        free(found)
        raise MemoryError()
    try:
        with nogil:
            for t in range(nt):
                stamp[t] = -1
            for k in range(n):
                ck[0], ck[1], ck[2] = c[k, 0], c[k, 1], c[k, 2]
                r = radius[k]
                reach = r + margin
                for m in range(3):
                    box_lo[m] = ck[m] - reach
                    box_hi[m] = ck[m] + reach
                if cell_span(box_lo, box_hi, &lower[0], cell, &dims[0], lo, hi):
                    continue
                nf = 0
                for i in range(lo[0], hi[0] + 1):
                    for j in range(lo[1], hi[1] + 1):
                        f = (i * dims[1] + j) * dims[2]
                        for e in range(cptr[f + lo[2]], cptr[f + hi[2] + 1]):
                            t = ctris[e]
                            if stamp[t] == k:
                                continue
                            stamp[t] = k
                            for m in range(3):
                                q3[m] = ck[m] - TC[t, m]
                            if dot(q3, q3) > (reach + TR[t]) * (reach + TR[t]):
                                continue
                            if nf == room:
                                grown = <Found*>realloc(found, 2 * room * sizeof(Found))
                                if grown == NULL:
                                    with gil:
                                        raise MemoryError()
                                found = grown
                                room *= 2
                            if candidate(V, T, patch, PN, TE, ET, EN, eflat, vptr, vtris, VN,
                                         vflat, sides, ck, r, reach, t, &found[nf]):
                                nf += 1
                got = merge(found, nf)
                for q in range(got):
                    if count < cap:
                        sphere[count] = k
                        raw[count] = found[q].raw
                        gap[count] = found[q].gap
                        s = r + 0.5 * found[q].gap
                        for m in range(3):
                            normal[count, m] = found[q].n[m]
                            point[count, m] = ck[m] - found[q].n[m] * s
                        if k != last:
                            used = 0
                            last = k
                        fid = mix(<uint64_t>found[q].raw) % 64
                        while (used >> fid) & 1:
                            fid = (fid + 1) % 64
                        used |= (<uint64_t>1) << fid
                        feature[count] = <index_t>fid
                    count += 1
    finally:
        free(stamp)
        free(found)
    return count
