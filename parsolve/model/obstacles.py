"""Fixed obstacles: half-spaces {y : (y - point) . normal >= 0}; the normal points into the
region where bodies live. Box walls are a set of such half-spaces facing inwards."""
import numpy as np

from .checks import finite, unit


class Obstacles:
    def __init__(self):
        self.point = np.zeros((0, 3))
        self.normal = np.zeros((0, 3))
        self.material = np.zeros(0, np.int32)
        self.names = []

    def __len__(self):
        return len(self.point)

    def add_half_space(self, point, normal, material, name):
        p = finite(f"half-space {name!r}: point", point, (3,))
        n = unit(f"half-space {name!r}: normal", normal)
        self.point = np.vstack([self.point, p])
        self.normal = np.vstack([self.normal, n])
        self.material = np.append(self.material, np.int32(material))
        self.names.append(name)
