"""Surface materials per pair of material labels: Coulomb friction mu and Newton restitution e,
the coefficients of rolling and spinning resistance (laws/rolling.py), lengths [m]: the
largest rolling (spinning) moment a contact transmits is mu_r (mu_s) times its normal force,
and a normal contact stiffness k [N/m] (0: rigid; laws/coulomb.py's compliant contacts)."""
import numpy as np

from ..errors import InputError
from ..tables.checks import finite, in_range


class SurfaceMaterials:
    def __init__(self):
        self.labels = []          # label index -> name
        self._pairs = {}          # (i, j) with i <= j -> (mu, e)
        self._rolling = {}        # (i, j) with i <= j -> (mu_r, mu_s), where one is > 0
        self._stiffness = {}      # (i, j) with i <= j -> k > 0 (compliant contacts)

    def index(self, label):
        if not isinstance(label, str) or not label:
            raise InputError(f"material label must be a non-empty string, got {label!r}")
        if label not in self.labels:
            self.labels.append(label)
        return self.labels.index(label)

    def define(self, a, b, friction, restitution=0.0, rolling=0.0, spinning=0.0,
               stiffness=0.0):
        mu = float(finite(f"surface ({a!r}, {b!r}): friction", friction))
        if mu < 0:
            raise InputError(f"surface ({a!r}, {b!r}): friction mu must be >= 0, got {mu}")
        e = in_range(f"surface ({a!r}, {b!r}): restitution", restitution, 0.0, 1.0)
        resist = []
        for name, value in (("rolling", rolling), ("spinning", spinning)):
            v = float(finite(f"surface ({a!r}, {b!r}): {name}", value))
            if v < 0:
                raise InputError(f"surface ({a!r}, {b!r}): {name} resistance must be >= 0 "
                                 f"(a length, m), got {v}")
            resist.append(v)
        k = float(finite(f"surface ({a!r}, {b!r}): stiffness", stiffness))
        if k < 0:
            raise InputError(f"surface ({a!r}, {b!r}): stiffness must be >= 0 (N/m; 0: rigid "
                             f"contacts), got {k}")
        i, j = sorted((self.index(a), self.index(b)))
        self._pairs[i, j] = (mu, e)
        self._rolling.pop((i, j), None)
        if max(resist) > 0:
            self._rolling[i, j] = tuple(resist)
        self._stiffness.pop((i, j), None)
        if k > 0:
            self._stiffness[i, j] = k

    def require(self, i, j, why):
        key = tuple(sorted((int(i), int(j))))
        if key not in self._pairs:
            a, b = self.labels[key[0]], self.labels[key[1]]
            raise InputError(f"no surface material for the pair ({a!r}, {b!r}) ({why}): "
                             f"add model.surface({a!r}, {b!r}, friction=..., restitution=...)")

    def tables(self):
        """(mu, e) as L x L arrays indexed by label indices; NaN where undefined."""
        n = len(self.labels)
        mu = np.full((n, n), np.nan)
        e = np.full((n, n), np.nan)
        for (i, j), (m, r) in self._pairs.items():
            mu[i, j] = mu[j, i] = m
            e[i, j] = e[j, i] = r
        return mu, e

    def rolling_tables(self):
        """(mu_r, mu_s) as L x L arrays (zero where a pair has none), or None when no pair has
        rolling or spinning resistance."""
        if not self._rolling:
            return None
        n = len(self.labels)
        mu_r, mu_s = np.zeros((n, n)), np.zeros((n, n))
        for (i, j), (r, s) in self._rolling.items():
            mu_r[i, j] = mu_r[j, i] = r
            mu_s[i, j] = mu_s[j, i] = s
        return mu_r, mu_s

    def compliance_table(self, h):
        """The contacts' normal compliance c = 1 / (h^2 k) per pair of labels (L x L; 0 where
        rigid) for the step h, or None when every pair is rigid (laws/coulomb.py)."""
        if not self._stiffness:
            return None
        n = len(self.labels)
        c = np.zeros((n, n))
        for (i, j), k in self._stiffness.items():
            c[i, j] = c[j, i] = 1.0 / (h * h * k)
        return c

    def state(self):
        out = {"labels": list(self.labels), "pairs": sorted((k, v) for k, v in self._pairs.items())}
        if self._rolling:                # (a model without them keeps its fingerprint)
            out["rolling"] = sorted(self._rolling.items())
        if self._stiffness:
            out["stiffness"] = sorted(self._stiffness.items())
        return out
