"""Cohesive bonds between bodies (masonry with mortar, bonded granular media, rock): the Model
commands (BondCommands) and, at run time (Bonds), one row of the bond law (laws/bond.py) per bond
and step, and after the step the bonds that break.

A bond holds a point of body A to a point of body B (or of the world: an obstacle, taken as
fixed) while its reaction stays in the strength domain S = {R_N >= -T h, |R_T| <= C h + mu R_N}:
T the tensile strength and C the cohesion [N] of the bond point, mu its friction coefficient
(Mohr-Coulomb with a tension cut-off). It is brittle: after a step in which the joint could not
hold (its reaction at the strength, and the reaction it would have needed farther from S than
OVERLOAD times the reaction: the joint opened or slipped), it breaks, once, in tension (at
the cut-off, or at the apex -C/mu of the Mohr-Coulomb cone, which caps the tension at C/mu when
that is below T) or in shear, and carries nothing from then on. Only a converged solve decides
(an unconverged one leaves motions that say nothing of what a joint needs): bonded walls are
rigid, hyperstatic sets on which Gauss-Seidel converges slowly; the Hybrid or Newton reach the
tolerance there. A hyperstatic
set of bonds (four corners of a block's face) may share a load unevenly without breaking: only
a joint that must move breaks, so a block hanging by n bonds of strength T falls exactly when
its weight exceeds n T.

The commands:

    model.bond(a, b, point, tension=T, cohesion=C, friction=None, normal=None)
    model.bonds(tension=T, cohesion=C, friction=None, tolerance=None, materials=None)

bond(): one bond at `point` (world, at the start) between body a and body b, an obstacle (by its
name) or None (the world); its normal from b's centre to a's unless given (needed for the world
or an obstacle). bonds(): a bond at every contact point where two bodies (or a body and an
obstacle) touch at the start within `tolerance` [m] (default: the contact margin), of the pair
of material labels `materials` or of every pair; its normal the contact's. friction None: the
pair's surface friction. Units: T and C in N per bond point.

Contacts. While every bond of a pair of bodies holds, the contacts detection finds between them
are dropped (`keep`: the bonds replace them, and no sweep relaxes them); once one has broken
they act as usual beside the others.

State. Which bonds broke is replicated on every rank (a byte per bond; the bond list itself,
a few numbers per bond, is too: O(bonds) per rank, as the joints are): the run gathers each
step's breakage events (`events` -> `occurred`). A bond's row records its mode in its state
column (0 intact, 1 broken in tension, 2 in shear, then the normal and shear force at the
break), so it migrates, checkpoints and restarts with the row: a broken bond keeps a row, inert,
at its body A's centre (where B may have gone); after a restart the rows' states rebuild the
replicated flags (`resumed`). Events (the results' series events/bonds): bond, body_a, body_b
(-1: the world or an obstacle), mode (1 tension, 2 shear), normal_force (negative: tension) and
shear_force [N] at the break.

Keys: (gid of A, -2**42 - index), tables/keys.py's bond namespace; A is the body of lower id.
"""
import numpy as np

from ..assembly.operators import diagonal_blocks, incidences, inverse_mass_HT
from ..contact.frames import frames_from_normals
from ..dynamics.rotation import quat_to_matrix
from ..errors import InputError, everywhere
from ..laws import bond
from ..tables.checks import body_id, finite, unit
from ..tables.interactions import Interactions
from ..tables.keys import BOND, CONTACT, NAMESPACES, OBSTACLE_CODES, ROLLING, contact_of, \
    pair_code
from .base import Element, lookup

OVERLOAD = 1e-6          # how far (relative) the reaction a bond needs may lie beyond S
REACH_SLACK = 1.01       # intact bonds move with their bodies: their reach barely grows
TENSION, SHEAR = 1, 2    # the modes of a break (the row's state[0])
MODES = {TENSION: "tension", SHEAR: "shear"}


class Bonds(Element):
    """The bonds at run time (module docstring)."""
    NAME = "bonds"
    EVENTS = ("bond", "body_a", "body_b", "mode", "normal_force", "shear_force")

    def __init__(self, specs, mu_table=None, obstacles=None, moving=()):
        super().__init__(specs)
        self.mu_table = mu_table
        self.obstacle_names = [] if obstacles is None else list(obstacles.names)
        self.obstacle_material = None if obstacles is None else obstacles.material
        self.moving = set(int(k) for k in moving)
        n = 0
        self.a = np.zeros(n, np.int64)            # A's gid (the lower)
        self.b = np.zeros(n, np.int64)            # B's gid, or -1
        self.obstacle = np.zeros(n, np.int64)     # B's obstacle index, or -1
        self.pa, self.pb, self.nb = (np.zeros((n, 3)) for _ in range(3))
        self.T, self.C, self.mu = (np.zeros(n) for _ in range(3))
        self.mode = np.zeros(n, np.int8)          # 0 intact, TENSION, SHEAR
        self._pairs = (np.zeros(0, np.int64), np.zeros(0, np.int64))
        self._new = np.zeros((0, len(self.EVENTS)))
        self._check = None

    @classmethod
    def from_model(cls, model):
        return cls(model.elements.get(cls.NAME, ()), model.materials.tables()[0],
                   model.obstacles, [m["index"] for m in model.elements.get("moving", ())])

    def __len__(self):
        return len(self.a)

    def bodies(self):
        return np.unique(np.array([g for s in self.specs if s["type"] == "bond"
                                   for g in (s["body"], s["other"]) if g >= 0], np.int64))

    linked = bodies

    # -- set-up --------------------------------------------------------------------------------
    def set_up(self, found):
        """The bonds given one by one, from their bodies' initial state."""
        rows = []
        for s in self.specs:
            if s["type"] != "bond":
                continue
            what = f"bond {s['name']!r}"
            for g in (s["body"], s["other"]):
                if g >= 0 and g not in found:
                    raise everywhere(InputError(f"{what}: unknown body {g}"))
            ka = found.at(s["body"])
            xa, p = found.x[ka], s["point"]
            if np.linalg.norm(p - xa) > 2.0 * found.radius[ka]:
                raise everywhere(InputError(f"{what}: point {p.tolist()} lies far outside body "
                                            f"{s['body']}"))
            normal, mat_b = s["normal"], None
            if s["other"] >= 0:
                kb = found.at(s["other"])
                mat_b = found.material[kb]
                if normal is None:
                    normal = found.x[ka] - found.x[kb]
                    if np.linalg.norm(normal) == 0:
                        raise everywhere(InputError(f"{what}: its bodies' centres coincide: "
                                                    "give its normal"))
                    normal = normal / np.linalg.norm(normal)
                b_gid, obst, xb, qb = s["other"], -1, found.x[kb], found.q[kb]
            else:
                obst = s["obstacle"]
                if obst in self.moving:
                    raise everywhere(InputError(f"{what}: obstacle "
                                                f"{self.obstacle_names[obst]!r} moves; bonds "
                                                "hold to fixed obstacles only"))
                if obst >= 0:
                    mat_b = self.obstacle_material[obst]
                b_gid, xb, qb = -1, None, None
            mu = s["friction"]
            if mu is None:
                if mat_b is None:
                    raise everywhere(InputError(f"{what}: a bond to the world needs its "
                                                "friction"))
                mu = float(self.mu_table[found.material[ka], mat_b])
            rows.append((s["body"], b_gid, obst, p, normal, xa, found.q[ka], xb, qb,
                         s["tension"], s["cohesion"], mu))
        self._add(rows)
        reach = [np.linalg.norm(r[3] - r[5]) for r in rows] + \
            [np.linalg.norm(r[3] - r[7]) for r in rows if r[7] is not None]
        self.reach = REACH_SLACK * max(reach, default=0.0)

    def touching(self):
        wanted = [s["tolerance"] for s in self.specs if s["type"] == "touching"]
        return max(wanted) if wanted else None

    def touched(self, contacts):
        """A bond at each contact point touching at the start, per bonds() command in turn
        (a point already bonded keeps its first bond); the reach grows to hold them (a
        corner of a block lies at its bounding radius: the run makes its cells again when
        they are too small for that, once)."""
        done = set()
        for s in self.specs:
            if s["type"] != "touching":
                continue
            keep = contacts["gap"] <= (s["tolerance"] or contacts["margin"])
            if s["materials"] is not None:
                i, j = s["materials"]
                ma, mb = contacts["material_a"], contacts["material_b"]
                keep &= ((ma == i) & (mb == j)) | ((ma == j) & (mb == i))
            rows = []
            for k in np.flatnonzero(keep):
                key = (int(contacts["k1"][k]), int(contacts["k2"][k]))
                obst, b = int(contacts["obstacle"][k]), int(contacts["b"][k])
                if key in done or obst in self.moving:
                    continue
                done.add(key)
                mu = s["friction"] if s["friction"] is not None else float(contacts["mu"][k])
                rows.append((key[0], b, obst, contacts["point"][k], contacts["normal"][k],
                             contacts["x_a"][k], contacts["q_a"][k],
                             contacts["x_b"][k] if b >= 0 else None, contacts["q_b"][k],
                             s["tension"], s["cohesion"], mu))
                far = np.linalg.norm(contacts["point"][k] - contacts["x_a"][k])
                if b >= 0:
                    far = max(far, np.linalg.norm(contacts["point"][k] - contacts["x_b"][k]))
                self.reach = max(self.reach, REACH_SLACK * float(far))
            self._add(rows)

    def _add(self, rows):
        """Append bonds (a, b, obstacle, point, normal, x_a, q_a, x_b, q_b, T, C, mu) with
        the bodies' initial state (x_b None for the world): A becomes the body of lower id,
        the point and normal go into the bodies' frames (B's, or the world's)."""
        if not rows:
            return
        a, b, obst, point, normal, xa, qa, xb, qb, T, C, mu = zip(*rows)
        a, b, point, normal = (np.array(a, np.int64), np.array(b, np.int64),
                               np.array(point, float), np.array(normal, float))
        swap = (b >= 0) & (b < a)                      # A: the body of lower id
        a, b = np.where(swap, b, a), np.where(swap, a, b)
        normal = np.where(swap[:, None], -normal, normal)
        n = len(a)
        pa, pb, nb = point.copy(), point.copy(), normal.copy()
        for k in range(n):
            (x1, q1), (x2, q2) = (xa[k], qa[k]), (xb[k], qb[k])
            if swap[k]:
                (x1, q1), (x2, q2) = (x2, q2), (x1, q1)
            R1 = quat_to_matrix(np.asarray(q1, float)[None])[0]
            pa[k] = R1.T @ (point[k] - x1)
            if x2 is not None:
                R2 = quat_to_matrix(np.asarray(q2, float)[None])[0]
                pb[k], nb[k] = R2.T @ (point[k] - x2), R2.T @ normal[k]
        self.a, self.b = np.concatenate([self.a, a]), np.concatenate([self.b, b])
        self.obstacle = np.concatenate([self.obstacle, np.array(obst, np.int64)])
        self.pa, self.pb = np.concatenate([self.pa, pa]), np.concatenate([self.pb, pb])
        self.nb = np.concatenate([self.nb, nb])
        self.T = np.concatenate([self.T, np.array(T, float)])
        self.C = np.concatenate([self.C, np.array(C, float)])
        self.mu = np.concatenate([self.mu, np.array(mu, float)])
        self.mode = np.concatenate([self.mode, np.zeros(n, np.int8)])
        self._replaced()

    def _replaced(self):
        """The pairs (A's gid, B's code) whose bonds all hold: their contacts do not act."""
        pair = self.b >= 0
        bonded = pair | (self.obstacle >= 0)
        code = np.where(pair, self.b + OBSTACLE_CODES, self.obstacle)
        k1, k2 = self.a[bonded], code[bonded]
        broken = self.mode[bonded] != 0
        if not len(k1):
            self._pairs = (k1, k2)
            return
        o = np.lexsort((k2, k1))
        k1, k2, broken = k1[o], k2[o], broken[o]
        start = np.flatnonzero(np.concatenate([[True], (k1[1:] != k1[:-1]) |
                                               (k2[1:] != k2[:-1])]))
        any_broken = np.logical_or.reduceat(broken, start)
        self._pairs = (k1[start][~any_broken], k2[start][~any_broken])

    # -- a step -------------------------------------------------------------------------------
    def rows(self, held, t, h):
        """The rows of the bonds whose bodies `held` holds (intact: A's point held to B's;
        broken: inert, at A's centre), and (d, name) the largest distance from an intact
        row's point to its bodies."""
        n_bonds = len(self.a)
        if not n_bonds:
            return Interactions.empty(), (0.0, "")
        ia, ib = lookup(held.gid, self.a), lookup(held.gid, self.b)
        intact = self.mode == 0
        use = np.flatnonzero((ia >= 0) & (~intact | (self.b < 0) | (ib >= 0)))
        n = len(use)
        if n == 0:
            return Interactions.empty(), (0.0, "")
        a, b = ia[use], np.where(intact[use], ib[use], -1)
        live = intact[use]
        two = live & (self.b[use] >= 0)
        Ra = quat_to_matrix(held.q[a])
        pa = held.x[a] + np.where(live[:, None],
                                  np.einsum("nij,nj->ni", Ra, self.pa[use]), 0.0)
        pb, normal = pa.copy(), np.tile([0.0, 0.0, 1.0], (n, 1))
        world = live & ~two
        pb[world], normal[world] = self.pb[use][world], self.nb[use][world]
        if two.any():
            Rb = quat_to_matrix(held.q[b[two]])
            pb[two] = held.x[b[two]] + np.einsum("nij,nj->ni", Rb, self.pb[use][two])
            normal[two] = np.einsum("nij,nj->ni", Rb, self.nb[use][two])
        law = bond.rows(h * self.T[use], h * self.C[use], self.mu[use],
                        np.where(live, bond.INTACT, bond.BROKEN))
        rows = Interactions(n, a=a, b=b, obstacle=np.full(n, -1), k1=self.a[use],
                            k2=NAMESPACES[BOND].key(use), origin=np.full(n, BOND), point=pa,
                            offset=pb - pa, frame=frames_from_normals(normal), **law)
        far = np.linalg.norm(pa - held.x[a], axis=1)
        if two.any():
            far[two] = np.maximum(far[two], np.linalg.norm(pa[two] - held.x[b[two]], axis=1))
        worst = int(np.argmax(far))
        return rows, (float(far[worst]), f"bond {int(use[worst])}")

    def keep(self, rows, held):
        """Not the contacts (nor their rolling rows) between bodies whose bonds all hold."""
        contact = np.flatnonzero((rows.origin == CONTACT) | (rows.origin == ROLLING))
        if not len(contact) or not len(self._pairs[0]):
            return None
        k2 = np.where(rows.origin[contact] == ROLLING, contact_of(rows.k2[contact]),
                      rows.k2[contact])
        keep = np.ones(len(rows), bool)
        keep[contact[_member(rows.k1[contact], pair_code(k2), *self._pairs)]] = False
        return keep

    def prepare(self, rows, held, t, h):
        """The intact bonds' diagonal blocks W_aa, for the break test."""
        sel = np.flatnonzero((rows.origin == BOND) & (rows.param[:, 3] == bond.INTACT))
        self._check = None
        if len(sel):
            sub = rows.take(sel)
            con, body, H, _ = incidences(sub, held)
            used, local = np.unique(body, return_inverse=True)
            Rm = quat_to_matrix(held.q[used])
            Jinv = np.einsum("nij,nj,nkj->nik", Rm, 1.0 / held.inertia[used], Rm)
            K = inverse_mass_HT(local, H, 1.0 / held.mass[used], Jinv)
            self._check = (sel, diagonal_blocks(con, H, K, len(sel)))

    def update(self, rows, U0, U1, h, converged=True):
        """The intact bonds that could not hold this step break: their reaction R on the
        boundary of S, and the reaction they needed, R - W_aa^-1 U (U the joint's motion with
        its drift correction), farther from S than OVERLOAD |R|. In tension at the cut-off or
        the cone's apex, in shear elsewhere. Only after a converged solve: an unconverged
        one leaves motions that say nothing of what a joint needs."""
        self._new = np.zeros((0, len(self.EVENTS)))
        if self._check is None or not converged:
            return
        sel, W = self._check
        p, R = rows.param[sel], rows.R[sel]
        t = p[:, 0]
        tangential = np.hypot(R[:, 1], R[:, 2])
        shear = p[:, 1] + p[:, 2] * R[:, 0]
        size = np.linalg.norm(R, axis=1)
        cut = R[:, 0] <= -t + OVERLOAD * size
        apex = shear <= OVERLOAD * size
        near = np.flatnonzero(cut | (tangential >= shear - OVERLOAD * size))
        if not len(near):
            return
        k = sel[near]
        demand = R[near] - _solve3(W[near], U1[k] - np.einsum("nij,nj->ni", rows.frame[k],
                                                              rows.offset[k]) / h)
        beyond = np.linalg.norm(demand - bond.project_rows(demand, p[near]), axis=1)
        breaks = near[beyond > OVERLOAD * size[near]]
        if not len(breaks):
            return
        k = sel[breaks]
        index = NAMESPACES[BOND].index(rows.k2[k])
        mode = np.where(cut[breaks] | apex[breaks], TENSION, SHEAR)
        fn, ft = R[breaks, 0] / h, tangential[breaks] / h
        rows.state[k, 0], rows.state[k, 1], rows.state[k, 2] = mode, fn, ft
        self._new = np.stack([index, self.a[index], self.b[index], mode, fn, ft], axis=1) \
            .astype(float)

    # -- events -------------------------------------------------------------------------------
    def events(self):
        return self._new

    def occurred(self, events):
        if len(events):
            self.mode[events[:, 0].astype(np.int64)] = events[:, 3].astype(np.int8)
            self._replaced()

    def resumed(self, rows):
        """The broken bonds' events from their rows' states (state[0] the mode, then the
        normal and shear force)."""
        k = np.flatnonzero((rows.origin == BOND) & (rows.state[:, 0] > 0))
        index = NAMESPACES[BOND].index(rows.k2[k])
        return np.stack([index, self.a[index], self.b[index], rows.state[k, 0],
                         rows.state[k, 1], rows.state[k, 2]], axis=1).astype(float)

    def describe(self, event):
        j, a, b, mode, fn, ft = event
        j, obst = int(j), int(self.obstacle[int(j)])
        other = f"body {int(b)}" if b >= 0 else (f"obstacle {self.obstacle_names[obst]!r}"
                                                  if obst >= 0 else "the world")
        return (f"bond {j} (body {int(a)} and {other}) broke in {MODES[int(mode)]}: normal "
                f"force {fn:.6g} N, shear force {ft:.6g} N")


def _member(k1, k2, p1, p2):
    """Whether each (k1, k2) is one of the pairs (p1, p2)."""
    key1, key2 = np.concatenate([p1, k1]), np.concatenate([p2, k2])
    query = np.concatenate([np.zeros(len(p1), bool), np.ones(len(k1), bool)])
    at = np.concatenate([np.full(len(p1), -1), np.arange(len(k1))])
    o = np.lexsort((query, key2, key1))
    new = np.concatenate([[True], (key1[o][1:] != key1[o][:-1]) | (key2[o][1:] != key2[o][:-1])])
    start = np.flatnonzero(new)
    paired = np.logical_or.reduceat(~query[o], start)[np.cumsum(new) - 1]
    out = np.zeros(len(k1), bool)
    out[at[o][query[o] & paired]] = True
    return out


def _solve3(W, b):
    """W^-1 b row by row (n, 3, 3), (n, 3) by cofactors (plain arithmetic: the same bits on
    every machine, unlike a LAPACK call)."""
    c00 = W[:, 1, 1] * W[:, 2, 2] - W[:, 1, 2] * W[:, 2, 1]
    c01 = W[:, 1, 2] * W[:, 2, 0] - W[:, 1, 0] * W[:, 2, 2]
    c02 = W[:, 1, 0] * W[:, 2, 1] - W[:, 1, 1] * W[:, 2, 0]
    det = W[:, 0, 0] * c00 + W[:, 0, 1] * c01 + W[:, 0, 2] * c02
    inv = np.stack([
        c00, W[:, 0, 2] * W[:, 2, 1] - W[:, 0, 1] * W[:, 2, 2],
        W[:, 0, 1] * W[:, 1, 2] - W[:, 0, 2] * W[:, 1, 1],
        c01, W[:, 0, 0] * W[:, 2, 2] - W[:, 0, 2] * W[:, 2, 0],
        W[:, 0, 2] * W[:, 1, 0] - W[:, 0, 0] * W[:, 1, 2],
        c02, W[:, 0, 1] * W[:, 2, 0] - W[:, 0, 0] * W[:, 2, 1],
        W[:, 0, 0] * W[:, 1, 1] - W[:, 0, 1] * W[:, 1, 0]], axis=1).reshape(-1, 3, 3)
    return np.einsum("nij,nj->ni", inv, b) / det[:, None]


class BondCommands:
    """The bond commands of parsolve.Model (the specs in model.elements["bonds"])."""

    def bond(self, a, b, point, tension, cohesion, friction=None, normal=None, name=None):
        """A bond at `point` (world, at the start) between body a and b: a body, an obstacle
        (its name) or None (the world). tension T, cohesion C [N] >= 0; friction mu (None:
        the surface friction of their materials); normal: the bond's, from b to a (default:
        from b's centre to a's). Returns its name."""
        specs = self.elements.setdefault(Bonds.NAME, [])
        name = name or f"bond {sum(s['type'] == 'bond' for s in specs)}"
        what = f"bond {name!r}"
        spec = {"type": "bond", "name": name, "body": body_id(what, a),
                "point": finite(f"{what}: point", point, (3,)), "other": -1, "obstacle": -1,
                "normal": None if normal is None else unit(f"{what}: normal", normal),
                **_strengths(what, tension, cohesion, friction)}
        if isinstance(b, str):
            if b not in self.obstacles.names:
                raise InputError(f"{what}: no obstacle named {b!r}")
            spec["obstacle"] = self.obstacles.names.index(b)
        elif b is not None:
            spec["other"] = body_id(what, b)
            if spec["other"] == spec["body"]:
                raise InputError(f"{what}: bonds body {spec['body']} to itself")
        if spec["other"] < 0 and spec["normal"] is None:
            raise InputError(f"{what}: a bond to the world or an obstacle needs its normal")
        specs.append(spec)
        return name

    def bonds(self, tension, cohesion, friction=None, tolerance=None, materials=None):
        """A bond at every contact point where two bodies, or a body and a fixed obstacle,
        touch at the start (gap within `tolerance` [m], default the contact margin), between
        the material labels `materials` (a pair) or any; its normal the contact's. tension T,
        cohesion C [N] per bond point; friction: None for the pair's surface friction."""
        what = "bonds"
        spec = {"type": "touching", **_strengths(what, tension, cohesion, friction),
                "tolerance": 0.0 if tolerance is None else float(finite(
                    f"{what}: tolerance", tolerance)),
                "materials": None}
        if spec["tolerance"] < 0:
            raise InputError(f"{what}: tolerance must be >= 0, got {spec['tolerance']:g}")
        if materials is not None:
            if len(materials) != 2:
                raise InputError(f"{what}: materials is a pair of labels, got {materials!r}")
            spec["materials"] = tuple(self.materials.index(m) for m in materials)
        self.elements.setdefault(Bonds.NAME, []).append(spec)


def _strengths(what, tension, cohesion, friction):
    out = {}
    for key, value in (("tension", tension), ("cohesion", cohesion)):
        v = float(finite(f"{what}: {key}", value))
        if v < 0:
            raise InputError(f"{what}: {key} must be >= 0 (a force, N), got {v:g}")
        out[key] = v
    out["friction"] = None
    if friction is not None:
        mu = float(finite(f"{what}: friction", friction))
        if mu < 0:
            raise InputError(f"{what}: friction must be >= 0, got {mu:g}")
        out["friction"] = mu
    return out


def state(model):
    """What defines the bonds, for the model's fingerprint."""
    return [{k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in s.items()}
            for s in model.elements.get(Bonds.NAME, [])]
