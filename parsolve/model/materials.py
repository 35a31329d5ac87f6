"""Surface materials: Coulomb friction mu and Newton restitution e per pair of material labels."""
import numpy as np

from ..errors import InputError
from ..tables.checks import finite, in_range


class SurfaceMaterials:
    def __init__(self):
        self.labels = []          # label index -> name
        self._pairs = {}          # (i, j) with i <= j -> (mu, e)

    def index(self, label):
        if not isinstance(label, str) or not label:
            raise InputError(f"material label must be a non-empty string, got {label!r}")
        if label not in self.labels:
            self.labels.append(label)
        return self.labels.index(label)

    def define(self, a, b, friction, restitution=0.0):
        mu = float(finite(f"surface ({a!r}, {b!r}): friction", friction))
        if mu < 0:
            raise InputError(f"surface ({a!r}, {b!r}): friction mu must be >= 0, got {mu}")
        e = in_range(f"surface ({a!r}, {b!r}): restitution", restitution, 0.0, 1.0)
        i, j = sorted((self.index(a), self.index(b)))
        self._pairs[i, j] = (mu, e)

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

    def state(self):
        return {"labels": list(self.labels), "pairs": sorted((k, v) for k, v in self._pairs.items())}
