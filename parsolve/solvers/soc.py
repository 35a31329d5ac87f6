"""The algebra of the second-order (Lorentz) cone L = {x_0 >= |x_T|} in R^3, row by row, and
the friction cone's complementarity form (De Saxce's bipotential), which the interior point and
Newton's Fischer-Burmeister merit share.

Per contact, normal first, with S = diag(mu, 1, 1) and u = W r + q:

    x = S r  in L,   y = S^-1 (u + mu |u_T| e_N)  in L,   x . y = 0

is Signorini-Coulomb's law. The Jordan product is x o y = (x . y, x_0 y_T + y_0 x_T); L is
self-dual, and for x, y in L, x . y = 0 iff x o y = 0.
"""
import numpy as np

_J = np.array([1.0, -1.0, -1.0])


def desaxce(r, u, mu, rho):
    """The complementarity pair (x, y) of contact rows (r, u) (n, 3) of friction mu (n,),
    y scaled by rho (n,) (W's inverse diagonal: x and y then share the units of r)."""
    x = r * np.stack([mu, np.ones_like(mu), np.ones_like(mu)], axis=1)
    y = u * rho[:, None]
    y[:, 0] = rho * (u[:, 0] / mu + np.hypot(u[:, 1], u[:, 2]))
    return x, y


def fischer_burmeister(x, y):
    """phi = x + y - (x o x + y o y)^(1/2) of each row (Fukushima, Luo and Tseng 2002): zero
    iff x and y lie in L with x o y = 0, and |phi|^2 / 2 is continuously differentiable
    (where Alart and Curnier's |Phi|^2 / 2 is not)."""
    return x + y - jordan_sqrt(jordan(x, x) + jordan(y, y))


def jordan_sqrt(w):
    """The square root in L of each row w of L, by its spectral values w_0 -+ |w_T|."""
    t = np.hypot(w[:, 1], w[:, 2])
    lo, hi = np.sqrt(np.maximum(w[:, 0] - t, 0.0)), np.sqrt(w[:, 0] + t)
    h = np.zeros((len(w), 2))
    np.divide(w[:, 1:], t[:, None], out=h, where=t[:, None] > 0.0)
    out = np.empty_like(w)
    out[:, 0] = 0.5 * (lo + hi)
    out[:, 1:] = (0.5 * (hi - lo))[:, None] * h
    return out


def inside(x, floor):
    """Keep each row strictly inside L: rounding can put a point that a step left short of
    the edge onto it, where its scaling is singular; x_0 becomes at least (1 + 1e-12) |x_T| +
    floor (the interior point's floor: EDGE times its start's scale, the same on every
    rank)."""
    t = np.hypot(x[:, 1], x[:, 2])
    np.maximum(x[:, 0], (1.0 + 1e-12) * t + floor, out=x[:, 0])


def _jnorm(x):
    """sqrt(x^T J x) of each row, x in the cone (J = diag(1, -1, -1)): the factored form
    loses nothing near the boundary."""
    t = np.hypot(x[:, 1], x[:, 2])
    return np.sqrt(np.maximum((x[:, 0] - t) * (x[:, 0] + t), 1e-300 * x[:, 0] ** 2))


def nesterov_todd(x, y):
    """Nesterov and Todd's scaling of each pair of interior points x, y of L: (T, T^-1),
    symmetric, with T y = T^-1 x (CVXOPT's closed form: T = beta (2 v v^T - J))."""
    nx, ny = _jnorm(x), _jnorm(y)
    xb, yb = x / nx[:, None], y / ny[:, None]
    gamma = np.sqrt(np.maximum(0.5 * (1.0 + np.sum(xb * yb, axis=1)), 0.0))
    w = (xb + _J * yb) / (2.0 * gamma)[:, None]           # the scaling point, w^T J w = 1
    v = w.copy()
    v[:, 0] += 1.0
    v /= np.sqrt(2.0 * v[:, :1])
    beta = np.sqrt(nx / ny)
    T = beta[:, None, None] * (2.0 * np.einsum("ki,kj->kij", v, v) - np.diag(_J))
    Jv = _J * v
    Ti = (1.0 / beta)[:, None, None] * (2.0 * np.einsum("ki,kj->kij", Jv, Jv) - np.diag(_J))
    return T, Ti


def jordan(a, b):
    """The Jordan product a o b = (a . b, a_0 b_T + b_0 a_T) of each row."""
    out = np.empty_like(a)
    out[:, 0] = np.sum(a * b, axis=1)
    out[:, 1:] = a[:, :1] * b[:, 1:] + b[:, :1] * a[:, 1:]
    return out


def jordan_solve(a, c):
    """v with a o v = c in each row (a interior)."""
    det = a[:, 0] ** 2 - np.sum(a[:, 1:] ** 2, axis=1)
    v = np.empty_like(c)
    v[:, 0] = (a[:, 0] * c[:, 0] - np.sum(a[:, 1:] * c[:, 1:], axis=1)) / det
    v[:, 1:] = (c[:, 1:] - v[:, :1] * a[:, 1:]) / a[:, :1]
    return v


def cone_step(x, d):
    """Per row the largest a >= 0 with x + a d in L (inf when the ray stays inside), x
    interior: the smallest positive root of (x_0 + a d_0)^2 - |x_T + a d_T|^2, and of
    x_0 + a d_0."""
    qa = d[:, 0] ** 2 - d[:, 1] ** 2 - d[:, 2] ** 2
    qb = 2.0 * (x[:, 0] * d[:, 0] - x[:, 1] * d[:, 1] - x[:, 2] * d[:, 2])
    qc = _jnorm(x) ** 2
    out = np.full(len(x), np.inf)
    with np.errstate(all="ignore"):
        disc = qb * qb - 4.0 * qa * qc
        root = np.sqrt(np.maximum(disc, 0.0))
        half = -0.5 * (qb + np.copysign(root, qb))
        for cand in (half / qa, qc / half):
            ok = (disc >= 0.0) & np.isfinite(cand) & (cand > 0.0)
            out = np.where(ok, np.minimum(out, cand), out)
        down = d[:, 0] < 0.0
        out = np.where(down, np.minimum(out, -x[:, 0] / d[:, 0]), out)
    return out
