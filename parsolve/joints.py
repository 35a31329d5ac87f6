"""The model's joints at run time: every step, one row of U = B + W R per joint (its law and
frame from parsolve.model.joints' table), next to the contacts detection finds.

The joints are replicated on every rank (a few numbers each), like the obstacles. A rank builds
the rows of the joints whose bodies it holds (owned or ghost); the row belongs, as a contact
does, to the rank that owns its point, A's point at the half step. The row's bodies lie within
its `reach` of that point; the cells of the partition and the colouring are at least twice the
largest reach (Stepper), so the owner holds both bodies and rows of one colour never share a
body: the trajectory does not depend on the ranks. A spring that stretches beyond the reach it
had is refused by name (never silently wrong).

Drift: the velocity-level rows let positions drift; each bilateral row's free term carries
e / h, e the constraint's violation at the half step (as a contact's carries gap / h), so a
violation decays instead of growing. The prescribed motions add -velo(t + h) (for a
displacement, the velocity that ends the step on it).
"""
import numpy as np

from .dynamics.rotation import quat_to_matrix
from .errors import InputError, everywhere
from .interactions import Interactions
from .laws import bilateral, spring

POSITIONAL = ("fix_point", "fix_direction", "rigid_link")   # position constraints (projection)
REACH_SLACK = 1.5     # the cells hold rows whose bodies move to 1.5 times their first reach


class Joints:
    def __init__(self, specs, local, comm):
        """specs: Model.joints; local: this rank's BodySet (any slice); comm: the run's."""
        self.specs = list(specs)
        n = len(self.specs)
        self.names = [s["name"] for s in self.specs]
        self.type = np.array([s["type"] for s in self.specs], dtype=object)
        self.a = np.array([s["body"] for s in self.specs], np.int64)
        self.b = np.array([s["other"] for s in self.specs], np.int64)
        want = np.unique(np.concatenate([self.a, self.b[self.b >= 0]]))
        mine = np.isin(local.gid, want)
        parts = comm.allgather({"gid": local.gid[mine], "x": local.x[mine], "q": local.q[mine],
                                "radius": local.radius[mine]})
        found = {f: np.concatenate([p[f] for p in parts]) for f in parts[0]} if parts else {}
        where = {int(g): k for k, g in enumerate(found.get("gid", []))}
        for j, s in enumerate(self.specs):
            for g in (s["body"], s["other"]):
                if g >= 0 and g not in where:
                    raise everywhere(InputError(f"joint {s['name']!r}: unknown body {g}"))
        self.pa = np.zeros((n, 3))          # A's point, A's body frame
        self.pb = np.zeros((n, 3))          # B's point in B's body frame, or a world point
        self.direction = np.zeros((n, 3))
        self.L0 = np.zeros(n)
        self.c0 = np.zeros(n)               # fix_direction: the initial offset along it
        self.reach = np.zeros(n)
        for j, s in enumerate(self.specs):
            ka = where[s["body"]]
            xa, Ra = found["x"][ka], quat_to_matrix(found["q"][ka][None])[0]
            pa = s["point"]
            pb = pa if s["other_point"] is None else s["other_point"]
            if np.linalg.norm(pa - xa) > 2.0 * found["radius"][ka]:
                raise everywhere(InputError(
                    f"joint {s['name']!r}: point {pa.tolist()} lies far outside body "
                    f"{s['body']} (centre {xa.tolist()}, radius {found['radius'][ka]:g})"))
            self.pa[j] = Ra.T @ (pa - xa)
            self.reach[j] = np.linalg.norm(pa - xa)
            if s["other"] >= 0:
                kb = where[s["other"]]
                xb, Rb = found["x"][kb], quat_to_matrix(found["q"][kb][None])[0]
                self.pb[j] = Rb.T @ (pb - xb)
                self.reach[j] = max(self.reach[j], np.linalg.norm(pa - xb))
            else:
                self.pb[j] = pb
            if "direction" in s:
                self.direction[j] = s["direction"]
                self.c0[j] = (pa - pb) @ s["direction"]
            self.L0[j] = np.linalg.norm(pa - pb)
            if s["type"] in ("rigid_link", "spring") and self.L0[j] == 0.0:
                raise everywhere(InputError(f"joint {s['name']!r}: its two points coincide: "
                                            "no direction (use fix_point)"))
        self.max_reach = REACH_SLACK * float(self.reach.max()) if n else 0.0

    def __len__(self):
        return len(self.specs)

    def rows(self, held, t, h, types=None, drift=True):
        """The rows (Interactions) of the joints whose bodies `held` holds, at the half step
        (held's positions) and the step [t, t + h]; and (d, name): the largest distance from
        a row's point to one of its bodies, and that joint's name. types: only joints of
        these types (default all); drift: the free term corrects the positional joints'
        violation e by e / h (off when positions are projected: the correction is then the
        projection's, and a velocity that also corrects would pump energy into the motion)."""
        if not len(self):
            return Interactions.empty(), (0.0, "")
        # every rank evaluates every prescribed signal, rows or not: a callable that fails
        # stops all ranks with one named error
        signal = {j: self.specs[j]["value"](t + h) if self.specs[j]["signal"] != "acceleration"
                  else self.specs[j]["value"].integral(t + h)
                  for j in np.flatnonzero(self.type == "prescribe")
                  if types is None or "prescribe" in types}
        index = {int(g): k for k, g in enumerate(held.gid)}
        ia = np.array([index.get(int(g), -1) for g in self.a])
        ib = np.array([index.get(int(g), -1) if g >= 0 else -1 for g in self.b])
        wanted = np.ones(len(self), bool) if types is None else np.isin(self.type, types)
        use = np.flatnonzero((ia >= 0) & ((self.b < 0) | (ib >= 0)) & wanted)
        n = len(use)
        if n == 0:
            return Interactions.empty(), (0.0, "")
        a, b = ia[use], ib[use]
        two = self.b[use] >= 0
        Ra = quat_to_matrix(held.q[a])
        pa = held.x[a] + np.einsum("nij,nj->ni", Ra, self.pa[use])
        pb = self.pb[use].copy()
        if two.any():
            Rb = quat_to_matrix(held.q[b[two]])
            pb[two] = held.x[b[two]] + np.einsum("nij,nj->ni", Rb, self.pb[use][two])
        # the points' velocities at the step's start (springs' rates)
        va = held.v[a] + np.cross(held.w[a], pa - held.x[a])
        vb = np.zeros((n, 3))
        if two.any():
            vb[two] = held.v[b[two]] + np.cross(held.w[b[two]], pb[two] - held.x[b[two]])
        frame = np.tile(np.eye(3), (n, 1, 1))
        shift = np.zeros((n, 3))
        kind = np.full(n, bilateral.KIND, np.int8)
        param = np.zeros((n, Interactions.FIELDS["param"][0][0]))
        param[:, 0] = 1.0
        types = self.type[use]
        e = pa - pb
        dist = np.linalg.norm(e, axis=1)
        for k, j in enumerate(use):
            kind_j = types[k]
            if kind_j == "fix_point":
                param[k, 0] = 3.0
                shift[k] = e[k] / h
                continue
            if kind_j in ("rigid_link", "spring"):
                normal = e[k] / dist[k]
            else:
                normal = self.direction[j]
            frame[k] = _frame(normal)
            if kind_j == "fix_direction":
                shift[k, 0] = (e[k] @ normal - self.c0[j]) / h
            elif kind_j == "rigid_link":
                shift[k, 0] = (dist[k] - self.L0[j]) / h
            elif kind_j == "prescribe":
                shift[k, 0] = -self._velocity(j, signal[j], h,
                                              (pa[k] - self.specs[j]["point"]) @ normal)
        if not drift:
            shift[np.isin(types, POSITIONAL)] = 0.0
        param[:, 1:4] = shift
        springs = np.flatnonzero(types == "spring")
        if len(springs):
            sj = use[springs]
            rate = np.einsum("ni,ni->n", va[springs] - vb[springs], frame[springs, 0])
            ga, gg = spring.linearise([self.specs[j]["force"] for j in sj],
                                      dist[springs] - self.L0[sj], rate, h,
                                      [f"joint {self.names[j]!r}" for j in sj])
            kind[springs] = spring.KIND
            param[springs] = 0.0
            param[springs, 0], param[springs, 1] = ga, gg
        # how far the rows' bodies are from their points (the cells hold them within half one)
        far = np.linalg.norm(pa - held.x[a], axis=1)
        if two.any():
            far[two] = np.maximum(far[two], np.linalg.norm(pa[two] - held.x[b[two]], axis=1))
        worst = int(np.argmax(far))
        stretch = (float(far[worst]), self.names[use[worst]])
        rows = Interactions(n, a=a, b=b, obstacle=np.full(n, -1), k1=self.a[use],
                            k2=-1 - use.astype(np.int64), point=pa, offset=pb - pa,
                            frame=frame, kind=kind, param=param)
        return rows, stretch

    def _velocity(self, j, value, h, moved):
        """The prescribed velocity of joint j at the step's end from its signal's `value` at
        t + h: the velocity spline's; the displacement's, that ends the step at disp(t + h)
        from the point's displacement `moved` at the half step (x(t+h) = x(t+h/2) + h/2 U:
        no lag, no drift); or the acceleration's integral from 0."""
        if self.specs[j]["signal"] == "displacement":
            return 2.0 * (value - moved) / h
        return value

    def check_reach(self, stretch, half_cell, comm):
        """Collective: a joint whose bodies moved farther than half a cell from its row's
        point (a spring stretched, say, to 1.5 times its first reach) would break the ghost
        layer and the colouring: refused by name on every rank."""
        if comm.max(stretch[0]) <= half_cell:
            return
        d, name = max(comm.allgather(stretch))
        raise everywhere(InputError(
            f"joint {name!r}: a body moved {d:.6g} m from its point, beyond the reach "
            f"{half_cell:.6g} m the cells were built for (1.5 times the joints' longest at the "
            "start); shorten the joint or start it nearer to its rest length"))


def _frame(normal):
    """Rows (n, t1, t2) of an orthonormal frame with the given first axis."""
    from .contact.frames import frames_from_normals

    return frames_from_normals(normal[None])[0]
