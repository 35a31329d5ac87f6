"""What the MPI tests compare with a serial run: every rank's owned bodies and rows, gathered."""
import numpy as np
from mpi4py import MPI


def gathered(sim):
    """(gid-sorted gid, state (x, q, v, w), key-sorted keys (k1, k2), reactions) of all ranks
    (small test problems only)."""
    o, c = sim.owned, sim.contacts
    n = o.n_owned
    parts = MPI.COMM_WORLD.allgather((o.gid[:n], np.hstack([o.x, o.q, o.v, o.w])[:n],
                                      np.stack([c.k1, c.k2], 1), c.R))
    gid, state, keys, R = (np.concatenate([p[k] for p in parts]) for k in range(4))
    o1, o2 = np.argsort(gid), np.lexsort((keys[:, 1], keys[:, 0]))
    return gid[o1], state[o1], keys[o2], R[o2]


def assert_equals_serial(par, serial, history=True):
    """par (a run on every rank) equals serial (the same run on one rank) bit for bit: the
    bodies' state, the rows' keys and reactions and, with history, each step's iterations
    and residual. Returns the gathered keys (k1, k2), sorted."""
    gid, state, keys, R = gathered(par)
    s, c = serial.owned, serial.contacts
    np.testing.assert_array_equal(state, np.hstack([s.x, s.q, s.v, s.w]))
    o = np.lexsort((c.k2, c.k1))
    np.testing.assert_array_equal(keys, np.stack([c.k1, c.k2], 1)[o])
    np.testing.assert_array_equal(R, c.R[o])
    if history:
        assert [r["iterations"] for r in par.history] == \
            [r["iterations"] for r in serial.history]
        assert [r["residual"] for r in par.history] == [r["residual"] for r in serial.history]
    return keys
