"""Triangle-mesh obstacles (issue 35), one record each in bench/results/mesh.json.

    python bench/bench_mesh.py [all]                       # each of the below, in turn
    python bench/bench_mesh.py contacts [--spheres 100000 --triangles 10000]
    python bench/bench_mesh.py hopper [--spheres 100000 --triangles 10000 --rounds 5]
    python bench/bench_mesh.py blocks [--blocks 2000 --triangles 10000]
    python bench/bench_mesh.py hull [--cloud 10000]
    python bench/bench_mesh.py memory [--triangles 1000000]
    python bench/bench_mesh.py read [--triangles 1000000]   # + meshio, numpy-stl if importable

contacts: spheres of radius about a triangle's size thrown on a wavy terrain (two-sided),
sphere-mesh contacts per second of the compiled kernel and of its Python twin (on a slice).
hopper: a square hopper (a frustum under a vertical box, closed by a floor: a convex cavity,
so exactly nine half-spaces too), its walls cut into about `triangles` triangles and written
to a binary STL, read back, spheres at random inside; the geometry calls of detection (the
mesh's: sphere_contacts; the half-spaces': distance, the near rows, narrow.sphere_plane, as
contact/detect.py makes them per obstacle), alternately (A, B, A, B: a shared machine's load
falls on both alike), the median ratio and its spread.
blocks: bricks resting on a floor of `triangles` triangles, blocks per second of the
block-mesh contacts (contact/mesh_poly.py: compiled, and its twin on a slice), against the
same bricks on one half-space (contact/polyhedra.py's poly_plane).
hull: parsolve's own convex hull (every plane through three points) against Qhull's
(shapes/qhull.py) on random clouds on a sphere, and on nearly coplanar clouds: faces,
volume error, seconds.
memory: a terrain of `triangles` triangles: bytes per triangle on each rank, set-up seconds.
read: a binary STL of `triangles` triangles read by parsolve's reader, meshio and numpy-stl.
"""
import argparse
import os
import sys
import tempfile
import time
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

from parsolve.contact import mesh as cm  # noqa: E402
from parsolve.contact import mesh_poly as mp  # noqa: E402
from parsolve.contact import narrow  # noqa: E402
from parsolve.io import meshfile  # noqa: E402
from parsolve.shapes import polyhedron, qhull  # noqa: E402
from parsolve.shapes.mesh import TriangleMesh, grid_surface  # noqa: E402


def terrain(triangles, size=1.0):
    n = max(int(np.sqrt(triangles / 2)), 1)
    return TriangleMesh(*grid_surface((0, 0), (size, size), n,
                                      lambda x, y: 0.05 * np.sin(7 * x) * np.cos(5 * y)))


def contacts(args):
    m = terrain(args.triangles)
    rng = np.random.default_rng(1)
    n = args.spheres
    side = 1.0 / np.sqrt(args.triangles / 2)
    r = rng.uniform(0.5, 1.0, n) * side
    x = np.column_stack([rng.uniform(0, 1, (n, 2)),
                         0.05 * np.sin(7 * 0) + rng.uniform(-0.06, 0.06, n)])
    from parsolve._kernels import mesh as km
    rec = {}
    for name, f, k in (("compiled", km.sphere_mesh, n), ("twin", cm.sphere_mesh, min(n, 2000))):
        best = np.inf
        for _ in range(3 if name == "compiled" else 1):
            t = time.perf_counter()
            c = cm.sphere_contacts(m, x[:k], r[:k], 0.1 * side, kernel=f)
            best = min(best, time.perf_counter() - t)
        rec[name] = {"spheres": k, "contacts": len(c["gap"]), "seconds": best,
                     "contacts_per_s": len(c["gap"]) / best, "spheres_per_s": k / best}
    rec["speedup"] = rec["compiled"]["spheres_per_s"] / rec["twin"]["spheres_per_s"]
    common.write("mesh", {"bench": "contacts", "triangles": len(m.triangles), **rec,
                          **common.metadata()})


def hopper_surface(triangles):
    """(vertices, triangles, planes) of a square hopper: outlet 0.2 wide at z = 0 (closed
    by a floor), walls at 45 degrees up to 1.0 wide at z = 0.4, vertical to z = 1.0; planes
    (point, inward normal) of the same cavity."""
    a0, a1, z1, z2 = 0.1, 0.5, 0.4, 1.0
    per = max(int(np.sqrt(triangles / 66)), 1)       # 8 panels of (2 per)^2 squares, a floor
    parts = []

    def panel(p00, p10, p01, p11, n):
        u = np.linspace(0, 1, n + 1)
        U, W = np.meshgrid(u, u, indexing="ij")
        P = (p00[None, None] * ((1 - U) * (1 - W))[..., None] + p10 * (U * (1 - W))[..., None]
             + p01 * ((1 - U) * W)[..., None] + p11 * (U * W)[..., None])
        i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
        a = (i * (n + 1) + j).ravel()
        tri = np.concatenate([np.stack([a, a + n + 1, a + n + 2], 1),
                              np.stack([a, a + n + 2, a + 1], 1)])
        parts.append(P.reshape(-1, 3)[tri])

    for k in range(4):                                   # four sides, turned by 90 degrees
        c, s = np.cos(k * np.pi / 2), np.sin(k * np.pi / 2)
        rot = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
        q = lambda x, y, z: rot @ np.array([x, y, z])    # noqa: E731
        panel(q(a0, -a0, 0), q(a0, a0, 0), q(a1, -a1, z1), q(a1, a1, z1), 2 * per)
        panel(q(a1, -a1, z1), q(a1, a1, z1), q(a1, -a1, z2), q(a1, a1, z2), 2 * per)
    panel(np.array([-a0, -a0, 0.0]), np.array([a0, -a0, 0.0]), np.array([-a0, a0, 0.0]),
          np.array([a0, a0, 0.0]), per)
    V, T = meshfile.weld(np.concatenate(parts))
    k = 1 / np.sqrt(2)
    planes = [((0, 0, 0), (0, 0, 1))]
    for d in ((1, 0), (0, 1), (-1, 0), (0, -1)):
        planes.append(((a0 * d[0], a0 * d[1], 0), (-k * d[0], -k * d[1], k)))
        planes.append(((a1 * d[0], a1 * d[1], z1), (-d[0], -d[1], 0)))
    return V, T, planes


def hopper(args):
    V, T, planes = hopper_surface(args.triangles)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "hopper.stl")
        meshfile.write_stl(path, V, T)
        m = TriangleMesh.read(path, repair="orientation", sides=1)
    inward = np.einsum("ij,ij->", m.normals, (0.0, 0.0, 0.5) - m.centroids)
    if inward < 0:                                       # the cavity in front of the walls
        m = TriangleMesh(m.vertices, m.triangles[:, ::-1], sides=1)
    rng = np.random.default_rng(3)
    n = args.spheres
    r = np.full(n, 0.5 * (0.75 / n) ** (1 / 3))          # a loose bed's size
    x = np.empty((0, 3))
    P = np.array([p for p, _ in planes], float)
    Nn = np.array([q for _, q in planes], float)
    while len(x) < n:                                    # inside the cavity, within a radius
        y = rng.uniform((-0.5, -0.5, 0.0), (0.5, 0.5, 1.0), (2 * n, 3))
        h = np.einsum("kj,nj->nk", Nn, y) - np.einsum("kj,kj->k", Nn, P)
        x = np.concatenate([x, y[(h >= -0.5 * r[0]).all(axis=1)]])
    x = x[:n]
    margin = 0.1 * r[0]
    A = SimpleNamespace(x=x, radius=r)
    B = SimpleNamespace(point=P, normal=Nn)

    def planes_call():
        count = 0
        for k in range(len(P)):
            dist = (x - P[k]) @ Nn[k] - r
            near = np.flatnonzero(dist <= margin)
            c = narrow.sphere_plane(A, near, B, np.full(len(near), k), margin)
            count += int((c["gap"] <= margin).sum()) if c is not None else 0
        return count

    def mesh_call():
        c = cm.sphere_contacts(m, x, r, margin)
        return len(c["gap"])

    counts = (mesh_call(), planes_call())                # warm-up, and the contacts of each
    times = {"mesh": [], "planes": []}
    for _ in range(args.rounds):
        for name, f in (("mesh", mesh_call), ("planes", planes_call)):
            t = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - t)
    ratio = np.array(times["mesh"]) / np.array(times["planes"])
    common.write("mesh", {"bench": "hopper", "spheres": n, "triangles": len(m.triangles),
                          "contacts_mesh": counts[0], "contacts_planes": counts[1],
                          "mesh_s": float(np.median(times["mesh"])),
                          "planes_s": float(np.median(times["planes"])),
                          "ratio_median": float(np.median(ratio)),
                          "ratio_min": float(ratio.min()), "ratio_max": float(ratio.max()),
                          "rounds": args.rounds, **common.metadata()})


def blocks(args):
    from parsolve import shapes
    from parsolve.contact import polyhedra
    from parsolve.dynamics.rotation import matrix_to_quat

    m = TriangleMesh(*grid_surface((0, 0), (1, 1), max(int(np.sqrt(args.triangles / 2)), 1)))
    h = polyhedron.make("brick", np.array([(a, b, c) for a in (-.02, .02) for b in (-.01, .01)
                                           for c in (-.005, .005)]))[0]
    rng = np.random.default_rng(4)
    k = args.blocks
    x = np.column_stack([rng.uniform(0.05, 0.95, (k, 2)), np.full(k, 0.005 - 1e-5)])
    ang = rng.uniform(0, np.pi, k)
    R = np.zeros((k, 3, 3))
    R[:, 0, 0], R[:, 0, 1], R[:, 1, 0], R[:, 1, 1] = np.cos(ang), -np.sin(ang), np.sin(ang), \
        np.cos(ang)
    R[:, 2, 2] = 1
    key = shapes.LIBRARY.add(shapes.POLYHEDRON, h.params())
    A = SimpleNamespace(x=x, q=np.array([matrix_to_quat(r) for r in R]),
                        template=np.full(k, key, np.int64))
    B = SimpleNamespace(point=np.zeros((1, 3)), normal=np.array([[0.0, 0.0, 1.0]]))
    rows = np.arange(k)
    calls = {"compiled": lambda: mp.poly_contacts(m, [h] * k, x, R, 1e-3),
             "twin": lambda: mp.poly_contacts(m, [h] * 100, x[:100], R[:100], 1e-3,
                                              kernel=mp.poly_mesh),
             "plane": lambda: polyhedra.poly_plane(A, rows, B, np.zeros(k, np.int64), 1e-3)}
    rec = {}
    for name, f in calls.items():
        f()
        t = time.perf_counter()
        c = f()
        sec = time.perf_counter() - t
        done = 100 if name == "twin" else k
        rec[name] = {"blocks": done, "contacts": len(c["gap"]), "seconds": sec,
                     "blocks_per_s": done / sec}
    common.write("mesh", {"bench": "blocks", "triangles": len(m.triangles), **rec,
                          **common.metadata()})


def hull(args):
    rng = np.random.default_rng(0)
    rows = []

    def own(P):
        return polyhedron.convex_hull("own", P, method="own")

    def measure(name, P, exact_volume, which):
        for label, f in which:
            t = time.perf_counter()
            try:
                faces, used = f(P)
                sec = time.perf_counter() - t
                vol = polyhedron.mass_properties(P[used], faces)[0]
                out = {"faces": len(faces), "volume_error": abs(vol - exact_volume)
                       / exact_volume if exact_volume else None}
            except Exception as exc:                   # a failure is a result here
                sec = time.perf_counter() - t
                out = {"error": str(exc)[:80]}
            rows.append({"cloud": name, "points": len(P), "hull": label, "seconds": sec,
                         **out})
            print(rows[-1])

    both = (("own", own), ("qhull", lambda P: qhull.convex_hull("qhull", P)))
    qh = both[1:]
    qhull.convex_hull("warm-up", rng.normal(size=(20, 3)))
    for n in (16, 32, 64, 128):
        P = rng.normal(size=(n, 3))
        P /= np.linalg.norm(P, axis=1)[:, None]
        measure("sphere", P, None, both)
    P = rng.normal(size=(args.cloud, 3))
    P /= np.linalg.norm(P, axis=1)[:, None]
    measure("sphere", P, None, qh)
    # nearly coplanar: a unit cube's corners with points on its faces moved off by 1e-12
    for n, noise in ((100, 1e-12), (100, 1e-10), (args.cloud, 1e-12)):
        face = rng.integers(0, 6, n)
        Q = rng.uniform(-1, 1, (n, 3))
        Q[np.arange(n), face % 3] = np.where(face < 3, 1.0, -1.0) + rng.uniform(-noise, 0, n)
        C = np.array([(a, b, c) for a in (-1, 1) for b in (-1, 1) for c in (-1, 1)], float)
        P = np.concatenate([C, Q])
        measure(f"cube+faces(noise {noise:g})", P, 8.0, both if n <= 128 else qh)
    # a thin slab: a 64-gon prism 1e-6 thick, its caps' points nearly coplanar
    a = 2 * np.pi * np.arange(64) / 64
    ring = np.column_stack([np.cos(a), np.sin(a), np.zeros(64)])
    P = np.concatenate([ring, ring + (0, 0, 1e-6)])
    exact = 64 / 2 * np.sin(2 * np.pi / 64) * 1e-6
    measure("64-gon slab 1e-6 thick", P, exact, both)
    common.write("mesh", {"bench": "hull", "rows": rows, **common.metadata()}, echo=False)


def memory(args):
    t = time.perf_counter()
    m = terrain(args.triangles, size=100.0)
    sec = time.perf_counter() - t
    common.write("mesh", {"bench": "memory", "triangles": len(m.triangles),
                          "bytes_per_triangle": m.nbytes / len(m.triangles),
                          "megabytes": m.nbytes / 1e6, "setup_s": sec, **common.metadata()})


def read(args):
    n = max(int(np.sqrt(args.triangles / 2)), 1)
    V, T = grid_surface((0, 0), (1, 1), n, lambda x, y: 0.1 * np.sin(5 * x) * y)
    rec = {"bench": "read", "triangles": len(T)}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.stl")
        meshfile.write_stl(path, V, T)
        readers = [("parsolve", lambda: meshfile.read_stl(path))]
        try:
            import meshio
            readers.append(("meshio", lambda: meshio.read(path)))
        except ImportError:
            pass
        try:
            from stl import mesh as npstl
            readers.append(("numpy-stl", lambda: npstl.Mesh.from_file(path)))
        except ImportError:
            pass
        for name, f in readers:
            t = time.perf_counter()
            f()
            rec[f"{name}_s"] = time.perf_counter() - t
    common.write("mesh", {**rec, **common.metadata()})


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("what", nargs="?", default="all",
                   choices=["all", "contacts", "hopper", "blocks", "hull", "memory", "read"])
    p.add_argument("--spheres", type=int, default=100_000)
    p.add_argument("--triangles", type=int, default=None)
    p.add_argument("--blocks", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--cloud", type=int, default=10_000)
    args = p.parse_args()
    given = args.triangles
    for what in (WHAT if args.what == "all" else [args.what]):
        args.triangles = given or (1_000_000 if what in ("memory", "read") else 10_000)
        globals()[what](args)


WHAT = ["contacts", "hopper", "blocks", "hull", "memory", "read"]


if __name__ == "__main__":
    main()
