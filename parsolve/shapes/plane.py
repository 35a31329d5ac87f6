"""The half-space {y : (y - point) . normal >= 0}: an obstacle only (infinite, no mass); the
normal points into the region where bodies live."""
KIND = 2
NAME = "plane"
TEMPLATE = None          # a plane is its point and normal (obstacle columns)
CELLS = None             # infinite: not drawn
POLYGONS = None


def distance(obstacles, k, x):
    """Signed distance of points x (n, 3) from plane obstacle k (> 0 on the bodies' side)."""
    return (x - obstacles.point[k]) @ obstacles.normal[k]
