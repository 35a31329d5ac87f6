"""Real roots of polynomials of degree <= 4: the twin of coulomb_quartic.pxd's
poly_real_roots (isolation between the roots of the derivative, then a bracketed Newton)."""
import math


def poly_real_roots(a):
    """Real roots of sum a[i] x^i, ascending."""
    a = [float(x) for x in a]
    big = max(abs(x) for x in a)
    if big == 0.0:
        return []
    deg = len(a) - 1
    while deg > 0 and abs(a[deg]) <= 1e-14 * big:
        deg -= 1
    a = a[:deg + 1]
    if deg == 0:
        return []
    if deg == 1:
        return [-a[0] / a[1]]
    if deg == 2:
        disc = a[1] * a[1] - 4.0 * a[2] * a[0]
        if disc < 0.0:
            return []
        q = -0.5 * (a[1] + (math.sqrt(disc) if a[1] >= 0.0 else -math.sqrt(disc)))
        if q == 0.0:
            return [0.0]
        return sorted([q / a[2], a[0] / q])
    crit = poly_real_roots([(i + 1) * a[i + 1] for i in range(deg)])
    bound = 1.0 + max(abs(a[i] / a[deg]) for i in range(deg))
    ends = [-bound] + [min(max(c, -bound), bound) for c in crit] + [bound]
    tol = 1e-13 * big
    roots = []
    for j in range(len(ends) - 1):
        lo, hi = ends[j], ends[j + 1]
        flo, fhi = poly_eval(a, lo), poly_eval(a, hi)
        if j > 0 and abs(flo) <= tol * (1.0 + abs(lo) ** deg):
            x = lo
        elif (flo < 0.0) != (fhi < 0.0) and hi > lo:
            x = poly_bisect(a, lo, hi)
        else:
            continue
        if not roots or x > roots[-1]:
            roots.append(x)
    return roots


def poly_eval(a, x):
    p = a[-1]
    for c in reversed(a[:-1]):
        p = p * x + c
    return p


def poly_bisect(a, lo, hi):
    """The root in [lo, hi] where a changes sign: bracketed Newton, bisection as the safeguard."""
    flo = poly_eval(a, lo)
    x = 0.5 * (lo + hi)
    for _ in range(100):
        f, df = a[-1], 0.0
        for c in reversed(a[:-1]):
            df = df * x + f
            f = f * x + c
        if f == 0.0:
            return x
        if (f < 0.0) == (flo < 0.0):
            lo, flo = x, f
        else:
            hi = x
        xn = x - f / df if df != 0.0 else 0.5 * (lo + hi)
        if not lo < xn < hi:
            xn = 0.5 * (lo + hi)
        if abs(xn - x) <= 1e-15 * abs(x) or hi - lo <= 1e-15 * (abs(lo) + abs(hi)):
            return xn
        x = xn
    return x
