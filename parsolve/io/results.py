"""The results file of a run: one HDF5 file, readable with plain h5py.

Layout (SI units; vectors in the world frame; quaternions (w, x, y, z)):
  /                      attrs: format="parsolve-results", version, model_fingerprint, step_size
  /model/bodies/         gid, shape (0 sphere, 1 box), material, radius, half, mass, inertia
  /model/materials       attrs: labels (index -> label)
  /model/obstacles/      point, normal, material (half-spaces; normal into the free side)
  /history/<name>        one row per step, names in HISTORY (time, kinetic_energy, ...);
                         petsc_residual: the residual from W assembled in PETSc (NaN on
                         steps without that check); newton_iterations, ksp_iterations:
                         the Newton steps and inner KSP iterations of the step's solve
                         (0 for Gauss-Seidel; iterations counts sweeps and Newton steps)
  /frames/time, /frames/step          one entry per frame
  /frames/NNNNNN/bodies/ gid, x, q, v, w, radius, shape   (rows in no particular order: sort
                         by gid)
  /frames/NNNNNN/boxes/  vertices (8 per box), connectivity (hexahedra, VTK vertex order)
  /frames/NNNNNN/contacts/  k1, k2 (contact keys), point, frame (rows n, t1, t2), R (impulse
                         on A in the local frame, normal first), gap, normal and force (the
                         mean force on A over the step, world frame: frame^T R / step)
An XDMF index (NAME.xdmf, io/xdmf.py) beside the file opens the frames in ParaView.
The file is opened with the MPI-IO driver on the run's communicator; each rank writes the rows
of the bodies and contacts it owns (at offsets from an exclusive scan), rank 0 the history.
"""
import os

import numpy as np

from ..contact.detect import box_vertices
from ..model.bodies import BOX
from .xdmf import HEX_ORDER

HISTORY = ("step", "time", "kinetic_energy", "potential_energy", "contacts", "iterations",
           "residual", "converged", "t_integrate", "t_detect", "t_assemble", "t_solve",
           "t_update", "t_output", "t_migrate", "t_communication", "petsc_residual",
           "newton_iterations", "ksp_iterations")
_INT = {"step", "contacts", "iterations", "converged", "newton_iterations", "ksp_iterations"}


def _h5py():
    from .. import _env

    _env.configure()
    import h5py

    return h5py


class ResultsWriter:
    def __init__(self, path, comm, model, bodies, step_size, flush_every=200):
        h5py = _h5py()
        self.path = path
        self.comm = comm
        d = os.path.dirname(os.path.abspath(path))
        os.makedirs(d, exist_ok=True)
        self.f = h5py.File(path, "w", driver="mpio", comm=comm.mpi)
        from .. import __version__

        self.f.attrs.update(format="parsolve-results", version=__version__,
                            model_fingerprint=model.fingerprint(), step_size=step_size,
                            ranks=comm.size)
        g = self.f.create_group("model/bodies")
        n = bodies.n_owned
        for name in ("gid", "shape", "material", "radius", "half", "mass", "inertia"):
            self._rows(g, name, getattr(bodies, name)[:n])
        self.f["model"].create_group("materials").attrs["labels"] = model.materials.labels
        o = self.f.create_group("model/obstacles")
        o.create_dataset("point", data=model.obstacles.point)
        o.create_dataset("normal", data=model.obstacles.normal)
        o.create_dataset("material", data=model.obstacles.material)
        o.attrs["names"] = model.obstacles.names
        h = self.f.create_group("history")
        for name in HISTORY:
            h.create_dataset(name, shape=(0,), maxshape=(None,), chunks=(1024,),
                             dtype=np.int64 if name in _INT else float)
        fr = self.f.create_group("frames")
        fr.create_dataset("time", shape=(0,), maxshape=(None,), chunks=(256,), dtype=float)
        fr.create_dataset("step", shape=(0,), maxshape=(None,), chunks=(256,), dtype=np.int64)
        self.rows = []
        self.h = step_size
        self.flush_every = flush_every
        self.nframes = 0

    def record(self, row):
        self.rows.append(row)
        if len(self.rows) >= self.flush_every:
            self.flush()

    def flush(self):
        if not self.rows:
            return
        h = self.f["history"]
        n0 = h["step"].shape[0]
        n1 = n0 + len(self.rows)
        for name in HISTORY:
            ds = h[name]
            ds.resize((n1,))
            if self.comm.root:
                ds[n0:n1] = np.array([r[name] for r in self.rows])
        self.rows = []
        self.f.flush()

    def frame(self, step, time, bodies, contacts):
        g = self.f.create_group(f"frames/{self.nframes:06d}")
        n = bodies.n_owned
        gb = g.create_group("bodies")
        for name in ("gid", "x", "q", "v", "w", "radius", "shape"):
            self._rows(gb, name, getattr(bodies, name)[:n])
        boxes = np.flatnonzero(bodies.shape[:n] == BOX)
        verts = box_vertices(bodies, boxes)
        hexa = (self.comm.mpi.exscan(8 * len(boxes)) or 0) + 8 * np.arange(len(boxes))
        gx = g.create_group("boxes")
        self._rows(gx, "vertices", verts.reshape(-1, 3))
        self._rows(gx, "connectivity", (hexa[:, None] + np.array(HEX_ORDER)).astype(np.int64))
        gc = g.create_group("contacts")
        for name in ("k1", "k2", "point", "frame", "R", "gap"):
            self._rows(gc, name, getattr(contacts, name))
        self._rows(gc, "normal", contacts.frame[:, 0, :])
        self._rows(gc, "force", np.einsum("kji,kj->ki", contacts.frame, contacts.R) / self.h)
        for name, value in (("time", time), ("step", step)):
            ds = self.f["frames"][name]
            ds.resize((self.nframes + 1,))
            if self.comm.root:
                ds[self.nframes] = value
        g.attrs.update(time=time, step=step)
        self.nframes += 1

    def _rows(self, group, name, local):
        """A dataset of every rank's rows of `local`, each rank writing its own slice."""
        from mpi4py import MPI

        n = len(local)
        mpi = self.comm.mpi
        total = mpi.allreduce(n, op=MPI.SUM)
        offset = mpi.exscan(n, op=MPI.SUM) or 0
        ds = group.create_dataset(name, shape=(total,) + local.shape[1:], dtype=local.dtype)
        if n:
            ds[offset:offset + n] = local

    def close(self, summary=None):
        self.flush()
        if summary is not None:
            self.f.attrs.update({f"summary_{k}": v for k, v in summary.items()
                                 if isinstance(v, (int, float, str, bool))})
        self.f.close()
        self.comm.mpi.Barrier()
        if self.comm.root:
            from .xdmf import write_xdmf

            write_xdmf(self.path)


def read_history(path):
    """The history of a results file as a dict of numpy arrays (serial, plain h5py)."""
    h5py = _h5py()
    with h5py.File(path, "r") as f:
        return {name: f["history"][name][()] for name in f["history"]}
