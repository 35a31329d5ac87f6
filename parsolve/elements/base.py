"""The element interface: what the stepper asks of every maker of rows besides contact detection
(joints, connectors, moving obstacles, kinematic bodies, time loads), in the order of a step.
As Exudyn's solver calls its objects' virtual functions, the stepper and the run loop iterate
over a list of elements and never name one. Every hook has a default that does nothing, so an
element writes only the stages it takes part in.

An element is replicated on every rank (a few numbers per joint, connector or signal) and acts
on whatever bodies and rows a rank holds. It calls no collective: the run gathers the bodies'
initial state for all elements at once (`bodies` -> `set_up`), the contacts touching at the
start for those that ask (`touching` -> `touched`), checks every element's rows against the
cells in one reduction a step (`rows`' stretch), gathers `outputs` for the results file and
`events` for every rank (`occurred`: a replicated state follows them; `resumed` after a
restart), and makes an error raised in `prepare` collective where `calls_user` says that user
code runs there.
"""
import numpy as np

from ..tables.interactions import Interactions


class Element:
    """One kind of element at run time, made from the model's list of its specs.

    NAME: the kind's name (the results' series of its outputs; the model's specs list);
    RHEONOMIC: its rows may have a moving side (the energy balance counts the driver's work);
    OUTPUTS: its per-step outputs' names; EVENTS: the columns of its events (numbers), the
    first an index that orders them."""
    NAME = "element"
    RHEONOMIC = False
    OUTPUTS = ()
    EVENTS = ()

    def __init__(self, specs):
        self.specs = list(specs)
        self.names = [s.get("name", f"{self.NAME} {k}") for k, s in enumerate(self.specs)]
        self.reach = 0.0          # the cells hold rows whose bodies lie within this of a point

    @classmethod
    def from_model(cls, model):
        return cls(model.elements.get(cls.NAME, ()))

    def __len__(self):
        return len(self.specs)

    # -- set-up --------------------------------------------------------------------------------
    def bodies(self):
        """The gids of the bodies it refers to (each must exist)."""
        return np.zeros(0, np.int64)

    def set_up(self, found):
        """Its geometry from the initial state of its bodies: found.x, .q, .radius by gid
        (`Found`), the same on every rank. Sets `reach`."""

    def linked(self):
        """The gids of the bodies its rows couple (the ghost layer reaches them)."""
        return np.zeros(0, np.int64)

    def touching(self):
        """The gap [m] within which it wants the contacts that touch at the start (`touched`),
        or None (it wants none)."""
        return None

    def touched(self, contacts):
        """The contacts touching at the start, the same on every rank (the run detects them
        once the domain exists, each on its owner, and gathers them in key order): a dict of
        arrays k1, k2, b (B's gid, -1 for an obstacle), obstacle, point, normal, gap, mu,
        material_a, material_b, x_a, q_a, x_b, q_b (B's zero for an obstacle), and "margin"
        (the contact margin)."""

    @property
    def calls_user(self):
        """Whether `prepare` runs user code (which may fail on one rank only)."""
        return False

    # -- a step ----------------------------------------------------------------------------------
    def start(self, held, t):
        """Before the half step: the velocities at t of the bodies it drives."""

    def obstacles(self, obstacles, t):
        """The obstacles as detection sees them at time t."""
        return obstacles

    def rows(self, held, t, h):
        """Its rows (Interactions) of the bodies `held` holds at the half step, for the step
        [t, t + h]; and (d, name): the largest distance from a row's point to its bodies and
        the name of that row's element (checked against half a cell by the run)."""
        return Interactions.empty(), (0.0, "")

    def keep(self, rows, held):
        """Which of `rows` to keep (a row between two driven sides has nothing to move)."""
        return None

    def prepare(self, rows, held, t, h):
        """After the warm start, on this rank's rows in sweep order: the laws' parameters of
        its rows that depend on their state (in place)."""

    def drive(self, held, t, h, v_free, w_free, Jinv, inv_mass):
        """The free velocities, inverse masses and inertias of the bodies it drives or loads
        over the step (in place)."""

    def wall(self, rows, t):
        """(n, 3): each row's moving side's velocity at t in the row's frame, or None."""
        return None

    def update(self, rows, U0, U1, h, converged=True):
        """After the step: its rows' state from their rates U0 (start) and U1 (end);
        converged: whether the step's solve reached its tolerance (on every rank alike)."""

    def work(self, owned, x0, w0, t_mid, h):
        """Per owned body, the work of its loads over the step, or None."""
        return None

    def outputs(self):
        """This rank's outputs of the last step: (element indices, values (n, OUTPUTS))."""
        return np.zeros(0, np.int64), np.zeros((0, len(self.OUTPUTS)))

    # -- events ------------------------------------------------------------------------------------
    def events(self):
        """This rank's events of the last step (after `update`): (n, len(EVENTS)) numbers."""
        return np.zeros((0, len(self.EVENTS)))

    def occurred(self, events):
        """Every rank's events of the last step, in the order of their first column, the same
        on every rank: a replicated state follows them."""

    def resumed(self, rows):
        """After a restart, on this rank's restored rows: the events that made the state they
        record (gathered into `occurred`)."""
        return np.zeros((0, len(self.EVENTS)))

    def describe(self, event):
        """One event as a line of the run's progress."""
        return " ".join(f"{k}={v:g}" for k, v in zip(self.EVENTS, event))

    # -- projection on constraints ---------------------------------------------------------------
    def constraints(self, held, t, h):
        """Its positional constraints' rows at the held positions (projection.py): bilateral
        rows whose shift times h is the violation."""
        return Interactions.empty()


class Found:
    """The initial state (x, q, radius) and material of the bodies the elements refer to, by
    gid: the same on every rank (the run gathers it once)."""

    def __init__(self, gid, x, q, radius, material=None):
        self.gid, self.x, self.q, self.radius = gid, x, q, radius
        self.material = np.zeros(len(gid), np.int64) if material is None else material
        self._at = {int(g): k for k, g in enumerate(gid)}

    def __contains__(self, gid):
        return int(gid) in self._at

    def at(self, gid):
        return self._at[int(gid)]


def lookup(gid, wanted):
    """Index in `gid` of each of `wanted` (-1 where absent or negative)."""
    order = np.argsort(gid, kind="stable")
    pos = np.minimum(np.searchsorted(gid[order], wanted), max(len(gid) - 1, 0))
    found = (len(gid) > 0) & (wanted >= 0)
    found = found & (gid[order][pos] == wanted) if len(gid) else np.zeros(len(wanted), bool)
    return np.where(found, order[pos] if len(gid) else -1, -1)


# the hooks of a step the stepper calls on the elements that write them
STAGES = ("start", "obstacles", "keep", "prepare", "drive", "wall", "update", "work")


def stages(elements):
    """{hook: the elements, in order, whose class writes that hook of STAGES}: the others'
    default does nothing, so a step calls only these (a mechanism's joints take part in
    none of them)."""
    return {hook: [e for e in elements if getattr(type(e), hook) is not getattr(Element, hook)]
            for hook in STAGES}
