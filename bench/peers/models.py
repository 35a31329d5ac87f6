"""The five models of the peer bench, each defined once in words and numbers (SI units), and
the physics every code's run is measured by.

Every code builds its model from MODELS[name] (and, for the pours, from pour_spheres(), the
same sphere list for all): nothing about a model is repeated in the codes' runners. Each
runner returns a dict with "seconds" (the stepping alone, not the build), "steps",
"simulated" (s) and the model's physics samples, which the functions below reduce to the
figures the bench compares.
"""
import numpy as np

G = 9.81


def hertz_secant(young, poisson, radius, density, weights=5.0):
    """The secant stiffness F / delta [N/m] of the DEM codes' Hertz contact between two
    spheres of `radius` (E* = E / (2 (1 - nu^2)), R* = radius / 2: F = 4/3 E* sqrt(R*)
    delta^3/2) at F = `weights` times a sphere's weight (about the load half-way down a bed of
    ten layers): the linear spring parsolve's compliant contacts take for the same glass."""
    e_star = young / (2.0 * (1.0 - poisson ** 2))
    force = weights * density * 4.0 / 3.0 * np.pi * radius ** 3 * G
    delta = (3.0 * force / (4.0 * e_star * np.sqrt(radius / 2.0))) ** (2.0 / 3.0)
    return float(force / delta)


GLASS = hertz_secant(5e7, 0.3, 1.9e-3, 2500.0)     # 1.64e3 N/m

MODELS = {
    "ball": dict(
        words="a ball dropped on a floor, bouncing vertically (frictionless, Newton's "
              "restitution e = 0.8)",
        radius=0.05, mass=1.0, height=0.5, restitution=0.8, friction=0.0,
        step=1e-3, duration=2.0, sample=1,
        # a penalty code cannot resolve the impact at 1 ms: its own step and contact spring
        penalty_step=1e-4, penalty_stiffness=1e6),
    "chain": dict(
        words="a chain of 10 spheres (r = 3 cm, 0.1 kg), each joined to the next by a "
              "spherical joint midway between their centres (links of 0.1 m), the top one "
              "to a fixed pivot; released at rest, straight, 0.2 rad from the vertical",
        links=10, radius=0.03, mass=0.1, length=0.1, angle=0.2,
        step=1e-3, duration=1.0, sample=1),
    "spring": dict(
        words="a 1 kg body on a linear spring-damper to a fixed point (k = 1000 N/m, "
              "c = 2 N s/m), no gravity, released at rest 1 cm from equilibrium",
        mass=1.0, radius=0.05, stiffness=1000.0, damping=2.0, x0=0.01, rest=0.1,
        step=1e-3, duration=2.0, sample=1),
    "pour2k": dict(
        words="2,000 glass spheres (r uniform in 1.8-2.0 mm, 2500 kg/m^3) on a jittered "
              "lattice above the floor of an open box 50 mm x 50 mm, poured under gravity "
              "for 0.5 s (mu = 0.4, e = 0.2 sphere-sphere and sphere-wall)",
        spheres=2000, side=0.05, rmin=1.8e-3, rmax=2.0e-3, density=2500.0,
        friction=0.4, restitution=0.2, duration=0.5, seed=7,
        step=5e-4, tol=1e-4, max_iter=10000, omega=1.5,     # parsolve's Moreau-Jean step
        stiffness=GLASS,                  # parsolve's contacts "springs": the same glass
        check=5,                          # its residual taken every 5 sweeps
        young=5e7, poisson=0.3, dem_step=7e-6),              # the DEM codes' Hertz-Mindlin
    "pour20k": dict(
        words="20,000 spheres as in pour2k in a box of ten times the floor (158 mm x 158 mm), "
              "the first 0.05 s",
        spheres=20000, side=0.158, rmin=1.8e-3, rmax=2.0e-3, density=2500.0,
        friction=0.4, restitution=0.2, duration=0.05, seed=7,
        step=5e-4, tol=1e-4, max_iter=10000, omega=1.5,
        stiffness=GLASS, check=5,
        young=5e7, poisson=0.3, dem_step=7e-6),
}
SMALL = ("ball", "chain", "spring")
POURS = ("pour2k", "pour20k")


def quick(spec):
    """The model shortened for a smoke test: a tenth of its duration; a pour: a tenth of its
    spheres in the same box, for 20 of parsolve's steps (1,429 of a DEM code's)."""
    s = dict(spec)
    if "spheres" in s:
        s.update(spheres=s["spheres"] // 10, duration=20 * s["step"])
    else:
        s["duration"] = s["duration"] / 10.0
    return s


def rayleigh_time(radius, young, poisson, density):
    """Rayleigh wave time of a sphere (the DEM codes' critical step scale) [s]."""
    shear = young / (2.0 * (1.0 + poisson))
    return np.pi * radius * np.sqrt(density / shear) / (0.1631 * poisson + 0.8766)


# -- the initial states -------------------------------------------------------------------------

def chain_state(spec):
    """Pivot, unit direction of the straight chain, sphere centres (n, 3), joint points
    (n, 3): joint 0 is the pivot, joint i joins sphere i-1 to sphere i."""
    a = spec["angle"]
    d = np.array([np.sin(a), 0.0, -np.cos(a)])
    k = np.arange(spec["links"])[:, None]
    pivot = np.zeros(3)
    return pivot, d, pivot + (k + 0.5) * spec["length"] * d, pivot + k * spec["length"] * d


def pour_spheres(spec):
    """The pour's spheres: centres (n, 3), radii (n,), velocities (n, 3). A jittered lattice
    of spacing 2.5 r_max from 2 r_max above the floor (so that the bed is not a crystal and
    the spheres rain down), small random velocities; the same for every code (seeded)."""
    n, side, rmax = spec["spheres"], spec["side"], spec["rmax"]
    rng = np.random.default_rng(spec["seed"])
    spacing = 2.5 * rmax
    nx = int((side - 2 * rmax) // spacing)
    k = np.arange(n)
    centres = np.stack([rmax + spacing * (0.5 + k % nx), rmax + spacing * (0.5 + (k // nx) % nx),
                        2 * rmax + spacing * (k // (nx * nx))], axis=1)
    centres += rng.uniform(-0.2, 0.2, (n, 3)) * rmax
    radii = rng.uniform(spec["rmin"], rmax, n)
    velocities = rng.normal(0.0, 0.05, (n, 3))
    return centres, radii, velocities


# -- the physics compared -----------------------------------------------------------------------

def ball_physics(spec, t, z):
    """Rebound heights above the floor (of the ball's bottom) of the first three bounces,
    and the restitution each implies, sqrt(h_k / h_(k-1)) with h_0 the drop height."""
    z = np.asarray(z) - spec["radius"]
    tops = [i for i in range(1, len(z) - 1) if z[i] > z[i - 1] and z[i] >= z[i + 1]
            and z[i] > 1e-3]
    heights = [float(z[i]) for i in tops[:3]]
    drops = [spec["height"] - spec["radius"]] + heights
    e = [float(np.sqrt(drops[k + 1] / drops[k])) for k in range(len(heights))]
    return {"rebound_heights": heights, "restitution": e,
            "first_impact_time": float(np.sqrt(2 * drops[0] / G))}


def crossings(t, x):
    """Times where x changes sign (linear interpolation)."""
    t, x = np.asarray(t), np.asarray(x)
    k = np.nonzero(np.sign(x[1:]) * np.sign(x[:-1]) < 0)[0]
    return (t[k] - x[k] * (t[k + 1] - t[k]) / (x[k + 1] - x[k])).tolist()


def chain_physics(spec, t, xcom, tension):
    """The chain's centre of mass x (its swing): the times it crosses the vertical, its value
    at the end; the pivot's force (the top link's tension) at the start and at the end."""
    c = crossings(t, xcom)
    return {"xcom_crossings": [round(v, 4) for v in c[:4]], "xcom_end": float(xcom[-1]),
            "tension_start": float(tension[0]), "tension_max": float(np.max(tension)),
            "tension_end": float(tension[-1])}


def spring_analytic(spec, t):
    m, k, c, x0 = spec["mass"], spec["stiffness"], spec["damping"], spec["x0"]
    w0, zeta = np.sqrt(k / m), c / (2 * np.sqrt(k * m))
    wd = w0 * np.sqrt(1 - zeta ** 2)
    t = np.asarray(t)
    return x0 * np.exp(-zeta * w0 * t) * (np.cos(wd * t) + zeta * w0 / wd * np.sin(wd * t))


def spring_physics(spec, t, x):
    """The displacement history against the analytic damped oscillation: the largest error
    relative to x0, the times of the first four zero crossings, the amplitude at the end."""
    x = np.asarray(x)
    exact = spring_analytic(spec, t)
    return {"max_error_relative": float(np.abs(x - exact).max() / spec["x0"]),
            "zero_crossings": [round(v, 4) for v in crossings(t, x)[:4]],
            "x_end": float(x[-1]), "x_end_exact": float(exact[-1])}


def cap_volume_below(z, r, h):
    """Volume of a sphere (centre height z, radius r) below the plane at height h."""
    d = np.clip(h - (z - r), 0.0, 2 * r)
    return np.pi * d ** 2 * (3 * r - d) / 3.0


def pour_physics(spec, x, r):
    """The bed after the pour, defined alike for every code from the spheres' centres x (n, 3)
    and radii r: the bed height is the height below which 95 % of the solid volume lies
    (each sphere's volume spread over its own height); the packing fraction is the solid
    volume inside the central region (two largest diameters from each wall and from the
    floor, and from the bed's top) over that region's volume; also the centre of mass height
    and the spheres left (a code may lose spheres through a wall)."""
    x, r = np.asarray(x, float), np.asarray(r, float)
    vol = 4.0 / 3.0 * np.pi * r ** 3
    grid = np.linspace(0.0, max(float((x[:, 2] + r).max()), 1e-9), 4001)
    below = np.array([cap_volume_below(x[:, 2], r, h).sum() for h in grid])
    height = float(np.interp(0.95 * vol.sum(), below, grid))
    margin, side = 4 * spec["rmax"], spec["side"]
    z0, z1 = margin, height - margin
    central = ((x[:, 0] > margin) & (x[:, 0] < side - margin) & (x[:, 1] > margin)
               & (x[:, 1] < side - margin))
    packing = float("nan")
    if z1 > z0:
        inside = cap_volume_below(x[central, 2], r[central], z1) \
            - cap_volume_below(x[central, 2], r[central], z0)
        packing = float(inside.sum() / ((side - 2 * margin) ** 2 * (z1 - z0)))
    return {"bed_height": height, "packing": packing,
            "com_height": float((vol * x[:, 2]).sum() / vol.sum()), "spheres": int(len(r))}


def worker_main(run):
    """A peer's worker, `python PEER_models.py MODEL [--quick]`: prints run(name, spec)'s
    record as one JSON line (the small models only)."""
    import argparse
    import json

    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=SMALL)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    spec = MODELS[args.model]
    print(json.dumps(run(args.model, quick(spec) if args.quick else spec)), flush=True)
