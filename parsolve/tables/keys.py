"""What a row of U = B + W R is, said in columns: its key, its origin and its geometry.

Key. Every row has a key (k1, k2) made of global ids alone, so it does not depend on the
partition and a row that persists keeps it (its reaction warm-starts the next solve; the sweep
orders rows by it). k1 is the gid of body A. k2 lies in the namespace of the row's origin:

  contact     k2 = code(B) * FEATURES + feature >= 0, code(B) = B's obstacle index, or B's
              gid + OBSTACLE_CODES for a body; the feature tells apart several points of one
              pair (a box's vertices, a contact polygon's corners)
  joint       k2 = -1 - index                          (the joint's index in the model)
  connector   k2 = -2**40 - index
  stop        k2 = -2**41 - 2 index - side             (a connector's rigid limit stops)
  bond        k2 = -2**42 - index                      (the bond's index in the model)
  rolling     k2 = ROLLING_BASE + k2 of its contact    (a contact's companion row of rolling
              and spinning resistance: its key follows the contact's, so it persists and
              warm-starts with it, and sorts after every contact key of its body A; contact
              keys stay below ROLLING_BASE while gids stay below 2**48)

An element declares its namespace here, once; nothing else decodes a key's range (a format-1
checkpoint, written before rows had an origin column, is read through `origin_of`).

Origin: which maker made the row (ORIGINS). Geometry: how the row's velocity is taken from its
bodies' (assembly/geometry.py makes H per geometry): "point", the velocity of A's point relative
to B's in the row's local frame (contacts, joints, bonds); "coordinate", a combination of body
coordinates whose axes the row's frame holds (connectors and their stops); "rotation", A's
angular velocity relative to B's in the row's local frame (rolling rows: spin about the normal
first, then the two rolling components).
"""
import numpy as np

ORIGINS = ("contact", "joint", "connector", "stop", "rolling", "bond")
CONTACT, JOINT, CONNECTOR, STOP, ROLLING, BOND = range(len(ORIGINS))
GEOMETRIES = ("point", "coordinate", "rotation")
POINT, COORDINATE, ROTATION = range(len(GEOMETRIES))

OBSTACLE_CODES = 2 ** 20          # a body's code is its gid + OBSTACLE_CODES
FEATURES = 64                     # points per pair of bodies, at most


class Namespace:
    """An element's keys: k2 = base - stride * index - sub, 0 <= sub < stride."""

    def __init__(self, origin, base, stride=1):
        self.origin, self.base, self.stride = origin, base, stride

    def key(self, index, sub=0):
        return self.base - self.stride * np.asarray(index, np.int64) - sub

    def index(self, k2):
        return (self.base - np.asarray(k2, np.int64)) // self.stride

    def sub(self, k2):
        return (self.base - np.asarray(k2, np.int64)) % self.stride


NAMESPACES = {JOINT: Namespace(JOINT, -1), CONNECTOR: Namespace(CONNECTOR, -(2 ** 40)),
              STOP: Namespace(STOP, -(2 ** 41), 2), BOND: Namespace(BOND, -(2 ** 42))}
LEGACY = (JOINT, CONNECTOR, STOP)      # the namespaces rows of format-1 checkpoints may have

ROLLING_BASE = 2 ** 55            # rolling keys: their contact's plus this


def rolling_key(contact_k2):
    """k2 of the rolling rows of contacts with keys contact_k2."""
    return np.asarray(contact_k2, np.int64) + ROLLING_BASE


def contact_of(rolling_k2):
    """k2 of the contacts whose rolling rows have keys rolling_k2."""
    return np.asarray(rolling_k2, np.int64) - ROLLING_BASE


def contact_key(b_gid, obstacle, feature):
    """k2 of contact rows: B's code (its obstacle index, or gid + OBSTACLE_CODES) and the
    feature."""
    code = np.where(obstacle >= 0, obstacle, b_gid + OBSTACLE_CODES)
    return code * FEATURES + feature


def pair_code(k2):
    """B's code of contact keys k2 (with k1, it names the pair of bodies)."""
    return np.asarray(k2) // FEATURES


GOLDEN = np.uint64(0x9E3779B97F4A7C15)       # 2**64 / golden ratio: splitmix64's increment
_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)


def mix(x):
    """splitmix64's finaliser on uint64 (arrays or scalars, wrapping arithmetic): the one
    hash of ids and keys (shuffles, generators, checksums, polygon corners), a bijection."""
    x = np.asarray(x, np.uint64)
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * _M1
        x = (x ^ (x >> np.uint64(27))) * _M2
    return x ^ (x >> np.uint64(31))


def origin_of(k2):
    """The origin of rows from their keys' ranges: only for rows stored before rows had an
    origin column (format-1 checkpoints)."""
    k2 = np.asarray(k2, np.int64)
    origin = np.full(len(k2), CONTACT, np.int8)
    for code in sorted(LEGACY, key=lambda c: -NAMESPACES[c].base):
        origin[k2 <= NAMESPACES[code].base] = code
    return origin
