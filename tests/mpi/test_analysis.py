"""Under mpirun at 2 and 3 ranks: the constraint analysis of a distributed model equals the
serial one (each rank makes its lines, rank 0 gathers those asked for)."""
import pytest
from mpi4py import MPI

import parsolve as ps
from parsolve.analysis import lines as L
from parsolve.shapes import BOX
from parsolve.analysis.from_model import analyse_model
from parsolve.errors import ParsolveError
from parsolve.parallel import Comm

pytestmark = pytest.mark.mpi(min_size=2)


def wall(n=8, joints=False):
    """A row of n touching blocks on the floor along x, across the slabs of the ranks, and a
    row of pebbles beside it (one chunk of bodies: every rank starts with some, see the
    report on SlabPartition.balance)."""
    m = ps.Model()
    m.surface("stone", "floor", friction=0.6)
    m.surface("stone", "stone", friction=0.6)
    m.half_space((0, 0, 0), (0, 0, 1), "floor", name="floor")
    m.spheres([(0.2 * k, 1.0, 0.05) for k in range(n)], 0.05, "stone", density=2500)
    for k in range(n):
        m.box(center=(0.2 * k, 0, 0.1), half_extents=(0.1, 0.1, 0.1), material="stone",
              density=2500)
    if joints:              # the joints' own lines (analysis.joint_lines), across the ranks
        for k in range(n - 1):                                 # hinged at the top edges
            m.fix_point(n + k, (0.2 * k + 0.1, 0, 0.2), other=n + k + 1)
        m.rigid_link(n, (0, 0, 0.1), None, (0, 0, 1.0))
        m.fix_direction(2 * n - 1, (0.2 * (n - 1), 0, 0.1), (1, 0, 0))
    return m


def pins(model, held):
    """A hinge pinning every other block (owned here) to the world, axis y at its base."""
    own = held.gid[:held.n_owned]
    parts = [L.ConstraintLines.between(g, L.GROUND, *L.hinge(held.x[i] - (0, 0, 0.1),
                                                              (0, 1, 0), 0.1), f"pin {g}",
                                       key=[(L.JOINT, g, j) for j in range(5)])
             for i, g in enumerate(own) if g % 2 == 0 and held.shape[i] == BOX]
    return L.ConstraintLines.concat(parts)


def both(joints=False, **kw):
    comm = Comm()
    mine = analyse_model(wall(joints=joints), 1e-3, comm=comm, **kw)
    one = None
    if comm.root:
        alone = Comm(MPI.COMM_SELF)
        one = analyse_model(wall(joints=joints), 1e-3, comm=alone, **kw)
        alone.free()
    comm.free()
    return mine, one


@pytest.mark.parametrize("kw", [
    dict(contacts=True), dict(contacts=True, bodies=[11, 12], check={"translation": (0, 0, 1)}),
    dict(sources=[pins], contacts=True), dict(sources=[pins], bodies=[10, 13]),
    dict(joints=True), dict(joints=True, contacts=True, bodies=[8, 12])])
def test_distributed_analysis_equals_the_serial_one(kw):
    mine, one = both(**kw)
    if MPI.COMM_WORLD.Get_rank() != 0:
        assert mine is None
        return
    assert mine.as_dict() == one.as_dict()
    if kw.get("joints") and not kw.get("contacts"):
        # 8 blocks hinged in a chain by ball joints, one link to space, one fixed direction:
        # 48 - 21 (balls) - 2 = 25 free motions, the system coupled through every block
        assert mine.system.mobility == 48 - 21 - 2
    if kw.get("contacts") and "bodies" not in kw and "sources" not in kw:
        assert mine.system is not None and len(mine.bodies) == 16
        assert [b.contacts for b in mine.bodies] == [1] * 8 + [8] + [12] * 6 + [8]
        assert [b.mobility for b in mine.bodies] == [5] * 8 + [1] * 8


def test_an_unknown_body_fails_on_every_rank():
    comm = Comm()
    with pytest.raises(ParsolveError, match="unknown body 99"):
        analyse_model(wall(), 1e-3, comm=comm, bodies=[9, 99])
    comm.free()
