"""The results file of a run: one HDF5 file, readable with plain h5py, that survives a crash.

Layout of NAME.h5 as a reader sees it (SI units; vectors in the world frame; quaternions
(w, x, y, z)):
  /                      attrs: format="parsolve-results", version, model_fingerprint, step_size,
                         ranks, complete (True once the run closed it), parts, summary_* (at
                         the end: the run summary, reduced over all ranks)
  /model/bodies/         gid, shape (0 sphere, 1 box), material, radius, template (its key in
                         shapes.LIBRARY), half (a box's half extents, zero for a sphere),
                         mass, inertia
  /model/materials       attrs: labels (index -> label)
  /model/obstacles/      point, normal, material, shape, q, radius, half (one row per
                         obstacle: a half-space's point and normal into the free side; a fixed
                         box's centre, orientation and half extents; a fixed sphere's centre
                         and radius), attrs names; per shape kind drawn as cells (boxes/:
                         vertices, connectivity) or polygons (polyhedra/, meshes/: vertices,
                         topology), with obstacle, material per cell, at their initial place;
                         still/ the same of the obstacles that never move (with moving ones)
  /history/<name>        one row per step, names in HISTORY (time, kinetic_energy, ...) and
                         event_<name> per solver event (e.g. a linear-solve fallback);
                         petsc_residual: the residual from W assembled in PETSc (NaN on
                         steps without that check); newton_iterations, ksp_iterations:
                         the Newton steps and inner KSP iterations of the step's solve
                         (0 for Gauss-Seidel; iterations counts sweeps and Newton steps);
                         the energy balance E(0) + work_loads = kinetic + potential +
                         dissipated + energy_error: work_loads, the work of the constant
                         loads (force . dx + torque . h (w(t) + w(t+h)) / 2) and dissipated,
                         minus the reactions' work R . (U(t) + U(t+h)) / 2, both summed since
                         t = 0 (the scheme's discrete balance: energy_error stays at round-off
                         and the solver's tolerance for spheres)
  /sensors/NAME/         step, time, <quantity> (samples, rows, k): see parsolve/io/sensors.py
  /frames/time, /frames/step          one entry per frame
  /frames/NNNNNN/bodies/ gid, x, q, v, w, radius, shape, material, rotation (the matrix of q,
                         float32, for ParaView)   (rows in no particular order: sort by gid)
  /frames/NNNNNN/boxes/  vertices (8 per box), connectivity (hexahedra, VTK vertex order),
                         gid, q, v, w, material, rotation (one row per box: cell data)
  /frames/NNNNNN/contacts/  k1, k2 (row keys), origin (what made the row: tables/keys.py's
                         ORIGINS, 0 contact), point, frame (rows n, t1, t2), R (impulse
                         on A in the local frame, normal first), gap, normal and force (the
                         mean force on A over the step, world frame: frame^T R / step),
                         status (laws.codes.STATUS: 0 open, 1 sticking, 2 sliding, ...)
  /frames/NNNNNN/compounds/, clumps/  compound bodies by their parts: their blocks' faces
                         as polyhedra/ has them; their spheres as points x, radius, gid,
                         material, v (the sphere's centre's velocity)
  /frames/NNNNNN/obstacles/ the moving obstacles (model.move) at their pose: index, point,
                         normal, q, and their cells or polygons as /model/obstacles has them
  /frames/NNNNNN/polygons/  one cell per contact pair (models with polyhedral bodies):
                         vertices (the pair's points ordered around their centre),
                         topology (XDMF Mixed: 3 polygon, 2 line, 1 vertex; count; point ids),
                         per pair k1, b (A's id, B's code: tables/keys.py), force (total on A, world
                         frame), normal, normal_force (force . normal), tangential_force,
                         points (their number); see contact_polygons
An XDMF index (NAME.xdmf, io/xdmf.py) beside the file opens the frames in ParaView.

How it survives a crash. A file open for writing when a rank is killed is unreadable, so the
heavy data go to segment files in NAME.parts/, each written collectively (MPI-IO, every rank
its rows at offsets from an exclusive scan, rank 0 the history) as SEG.tmp and renamed when
closed. A segment is closed at every checkpoint, every `flush_seconds` of wall time and at the
end. NAME.h5 itself is a small index that rank 0 alone rewrites (as NAME.h5.tmp, then renamed)
after each segment closes: /model and /frames/NNNNNN are external links into the parts,
/history/<name> virtual datasets spanning them. So after SIGKILL of any rank, NAME.h5 holds
everything up to the last closed segment. A checkpoint records the segments up to its step,
and a restarted leg's index (NAME.restart-STEP.h5) starts from those: its history has no gap
and no step twice. HDF5's SWMR mode, the other way to read a file being written, does not
work with the MPI-IO driver.

When a write fails (a full disk), the unit being written (a frame, the history's rows, a
segment's closing, the index) fails on every rank alike (io/storage.py): the open segment is
given up (SEG.tmp removed) and NAME.h5 still indexes every segment closed before, up to the
step `kept` says.
"""
import glob
import json
import os

import numpy as np

from .. import laws, shapes
from ..dynamics.rotation import quat_to_matrix
from ..platform import faults, libm
from ..tables.keys import CONTACT, pair_code
from ..errors import StorageError
from .hdf5 import h5py_module
from .storage import Writes, discard, finish

FORMAT = "parsolve-results"
BODY_FIELDS = ("gid", "x", "q", "v", "w", "radius", "shape", "material")
CELL_FIELDS = ("gid", "q", "v", "w", "material")
HISTORY = ("step", "time", "kinetic_energy", "potential_energy", "contacts", "iterations",
           "residual", "converged", "t_integrate", "t_detect", "t_assemble", "t_solve",
           "t_update", "t_output", "t_migrate", "t_communication", "petsc_residual",
           "newton_iterations", "ksp_iterations", "work_loads", "dissipated", "energy_error",
           "projection_sweeps", "projection_violation")
_INT = {"step", "contacts", "iterations", "converged", "newton_iterations", "ksp_iterations",
        "projection_sweeps"}

# shapes drawn by their faces (variable cells: a polyhedron's)
POLYGONAL = [k for k, s in shapes.KINDS.items() if s.POLYGONS is not None]
# shapes with parts drawn as points with a radius (a compound's spheres)
POINTED = [k for k, s in shapes.KINDS.items() if getattr(s, "POINTS", None) is not None]


def history_names(event_names=()):
    """The history columns of a run whose solver reports `event_names`."""
    return HISTORY + tuple(f"event_{e}" for e in event_names)


def _dtype(name):
    return np.int64 if name in _INT or name.startswith("event_") else float


def parts_dir(output):
    """Where the segments of the results NAME.h5 (and of its restarted legs) live."""
    return os.path.splitext(output)[0] + ".parts"


class ResultsWriter:
    """Writes a run's results (collective over `comm`; rank 0 keeps the index).

    path: the index file; parts: the folder of the segments (parts_dir of the run's first
    results name, shared by its restarted legs); leg: the step this leg starts from (names
    its parts); inherited: names of complete segments of earlier legs (from the checkpoint
    restarted from) or None for a fresh run, which clears the folder; names: history columns.
    """

    def __init__(self, path, comm, model, bodies, step_size, parts=None, leg=0, inherited=None,
                 names=HISTORY, flush_every=200, moving=()):
        self.path, self.comm, self.h = path, comm, step_size
        self.parts = parts or parts_dir(path)
        self.leg, self.flush_every = int(leg), flush_every
        # the tables of one row per step or sample: group -> [(column, dtype, trailing shape)]
        self.series = {"history": [(n, _dtype(n), ()) for n in names]}
        self.series_attrs = {"history": {}}
        self.rows = {"history": []}
        self.segments, self.missing, self.current = [], [], None
        self.summary, self.opened = None, 0
        self.writes = Writes(comm)
        self.step, self._point = self.leg, None     # the step being written (fault points)
        self.kept = None          # (last step, last segment) that NAME.h5 indexes, or None
        self.header = {"format": FORMAT, "model_fingerprint": model.fingerprint(),
                       "step_size": step_size, "ranks": comm.size}
        with comm.collective():          # rank 0's file work may fail: every rank hears of it
            if comm.root:
                self.writes.attempt(self.parts, os.makedirs, self.parts, exist_ok=True)
                if inherited is None and self.writes.failed is None:
                    for old in glob.glob(os.path.join(self.parts, "*.h5*")):
                        os.remove(old)            # a fresh run: no part of an old one stays
                self.segments, self.missing = _describe_parts(self.parts, inherited or ())
        self.writes.settle("results folder")
        self.moving = np.asarray(moving, np.int64)       # obstacles drawn in every frame
        self.model_part = f"model-{self.leg:09d}.h5"
        self._model(self._collective_file(self.model_part), model, bodies)
        self._point = "segment-write"
        self._index()

    # -- what the run calls --------------------------------------------------------------
    def add_series(self, group, columns, attrs=None):
        """A further table (e.g. a sensor's, "sensors/NAME"): collective, equal arguments."""
        self.series[group] = list(columns)
        self.series_attrs[group] = dict(attrs or {})
        self.rows[group] = []

    def record(self, row, group="history"):
        """One row of `group` (every rank calls it; rank 0's values are written)."""
        self.step = int(row.get("step", self.step))
        self.rows[group].append(row)
        if len(self.rows[group]) >= self.flush_every:
            self._flush()

    def frame(self, step, time, bodies, contacts, obstacles=None):
        """A frame (collective): the bodies, the contacts and (`obstacles`, the placed table
        at `time`) the moving obstacles at their pose."""
        self.step = int(step)
        seg = self._segment()
        with self.writes.unit("results segment", self._name(seg["name"])):
            self._frame(seg, step, time, bodies, contacts, obstacles)
        self.writes.settle("results segment")

    def _frame(self, seg, step, time, bodies, contacts, obstacles=None):
        f = seg["file"]
        g = f.create_group(f"frames/{len(seg['frames']):06d}")
        n = bodies.n_owned
        gb = g.create_group("bodies")
        for name in BODY_FIELDS:
            self._rows(gb, name, getattr(bodies, name)[:n])
        R = quat_to_matrix(bodies.q[:n])
        rotation = R.astype(np.float32)                          # for ParaView's tensors
        self._rows(gb, "rotation", rotation)
        for kind, shape in shapes.KINDS.items():   # shapes drawn as cells: boxes/, ...
            if shape.CELLS is None:
                continue
            rows = np.flatnonzero(bodies.shape[:n] == kind)
            gx = self._cells(g, shape, shape.cell_points(bodies, rows, R[rows]))
            for name in CELL_FIELDS:               # one row per cell: the cells' data
                self._rows(gx, name, getattr(bodies, name)[rows])
            self._rows(gx, "rotation", rotation[rows])
        for kind in self.polygonal:                # variable cells: faces as polygons
            shape = shapes.KINDS[kind]
            rows = np.flatnonzero(bodies.shape[:n] == kind)
            self._polygons(g.create_group(shape.POLYGONS["group"]), shape, bodies, rows,
                           R[rows], ("gid", "material", "v", "w"))
        for kind in self.pointed:                  # parts drawn as points with a radius
            shape = shapes.KINDS[kind]
            rows = np.flatnonzero(bodies.shape[:n] == kind)
            x, radius, owner = shape.points(bodies, rows, R[rows])
            gp = g.create_group(shape.POINTS["group"])
            b = rows[owner]
            for name, data in (("x", x), ("radius", radius), ("gid", bodies.gid[b]),
                               ("material", bodies.material[b]),
                               ("v", bodies.v[b] + np.cross(bodies.w[b], x - bodies.x[b]))):
                self._rows(gp, name, data)
        gc = g.create_group("contacts")
        for name in ("k1", "k2", "origin", "point", "frame", "R", "gap"):
            self._rows(gc, name, getattr(contacts, name))
        self._rows(gc, "normal", contacts.frame[:, 0, :])
        self._rows(gc, "force", np.einsum("kji,kj->ki", contacts.frame, contacts.R) / self.h)
        self._rows(gc, "status", laws.status(contacts.kind, contacts.param, contacts.R))
        if self.contact_polygons:
            self._contact_polygons(g.create_group("polygons"), contacts)
        if len(self.moving) and obstacles is not None:    # replicated: equal on every rank
            go = g.create_group("obstacles")
            self._same(go, "index", self.moving)
            for name in ("point", "normal", "q"):
                self._same(go, name, getattr(obstacles, name)[self.moving])
            self._obstacle_cells(go, obstacles, self.moving)
        g.attrs.update(time=float(time), step=int(step))
        seg["frames"].append((int(step), float(time)))
        seg["last"] = int(step)
        faults.point("frame", int(step), self.comm.rank)

    def close_segment(self):
        """Close the open segment (collective), so that everything so far survives a crash;
        returns the names of the complete segments, oldest first (equal on every rank)."""
        self._flush()
        seg = self.current
        if seg is not None:
            faults.point("segment", None, self.comm.rank)
            with self.writes.unit("results segment", self._name(seg["name"])):
                seg["file"].attrs.update(rows=json.dumps(seg["rows"]),
                                         frames=json.dumps(seg["frames"]))
            self.current = None
            finish(self.writes, "results segment", self._name(seg["name"]), seg["file"],
                   os.path.join(self.parts, seg["name"] + ".tmp"), self.comm)
            self._publish(seg["name"], {k: seg[k] for k in ("name", "rows", "frames",
                                                            "columns", "last")})
        return self.comm.bcast([s["name"] for s in self.segments] if self.comm.root else None)

    def close(self, summary=None):
        """Close the last segment and write the index with the run summary (rank 0's: the
        summary is reduced over the ranks before it comes here) and the XDMF."""
        self.summary = summary
        self.close_segment()
        self._index(complete=True)

    def abandon(self):
        """After a failed write (collective): give up the open segment; the index keeps the
        segments closed before (see `kept`)."""
        seg, self.current = self.current, None
        for group in self.rows:
            self.rows[group] = []
        if seg is not None:
            discard(seg["file"], os.path.join(self.parts, seg["name"] + ".tmp"), self.comm)

    # -- files -------------------------------------------------------------------------------
    def _collective_file(self, name):
        """A part's file, created as NAME.tmp by every rank (MPI-IO)."""
        h5py = h5py_module()
        tmp = os.path.join(self.parts, name + ".tmp")
        with self.writes.unit("results segment", self._name(name)):
            return h5py.File(tmp, "w", driver="mpio", comm=self.comm.mpi)

    def _name(self, name):
        """A part's path, as a message names it."""
        return os.path.join(self.parts, name)

    def _segment(self):
        if self.current is None:
            name = f"seg-{self.leg:09d}-{self.opened:04d}.h5"
            self.opened += 1
            f = self._collective_file(name)
            f.create_group("frames")
            self.current = {"name": name, "file": f, "rows": {}, "frames": [], "columns": {},
                            "last": self.step}
        return self.current

    def _table(self, seg, group):
        """The datasets of `group` in the open segment, created on first use (collective)."""
        if group not in seg["rows"]:
            g = seg["file"].require_group(group)
            for col, dtype, tail in self.series[group]:
                tail = tuple(tail)
                rows = max(1, 1024 // max(1, int(np.prod(tail))))     # chunks of ~8 KiB
                g.create_dataset(col, shape=(0,) + tail, maxshape=(None,) + tail,
                                 chunks=(rows,) + tail, dtype=dtype)
            seg["rows"][group] = 0
            seg["columns"][group] = [c for c, _, _ in self.series[group]]
        return seg["file"][group]

    def _model(self, f, model, bodies):
        what, path = "results' model part", self._name(self.model_part)
        tmp = os.path.join(self.parts, self.model_part + ".tmp")
        try:
            with self.writes.unit(what, path):
                self._model_part(f, model, bodies)
        except StorageError as exc:
            if getattr(exc, "collective", False):
                discard(f, tmp, self.comm)
            raise
        finish(self.writes, what, path, f, tmp, self.comm)
        self._publish(self.model_part)

    def _model_part(self, f, model, bodies):
        g = f.create_group("model/bodies")
        n = bodies.n_owned
        for name in ("gid", "shape", "material", "radius", "template", "mass", "inertia"):
            self._rows(g, name, getattr(bodies, name)[:n])
        self._rows(g, "half", _box_half(bodies, n))
        f["model"].create_group("materials").attrs["labels"] = model.materials.labels
        o = f.create_group("model/obstacles")
        self._same(o, "point", model.obstacles.point)
        self._same(o, "normal", model.obstacles.normal)
        self._same(o, "material", model.obstacles.material)
        o.attrs["names"] = model.obstacles.names
        obst = model.obstacles
        for name in ("shape", "q", "radius"):
            self._same(o, name, getattr(obst, name))
        self._same(o, "half", _box_half(obst, len(obst)))
        self._obstacle_cells(o, obst, np.arange(len(obst)))
        if len(self.moving):                       # the still ones apart: XDMF's static part
            self._obstacle_cells(o.create_group("still"), obst,
                                 np.setdiff1d(np.arange(len(obst)), self.moving))
        # the bodies' shapes drawn as polygons, where any rank has some
        self.polygonal = [kind for kind in POLYGONAL
                          if self.comm.sum(int(np.sum(bodies.shape[:n] == kind))) > 0]
        self.contact_polygons = bool(self.polygonal)   # multi-point pairs: polygons per pair
        self.pointed = [kind for kind in POINTED       # and as points of their parts
                        if self.comm.sum(int(np.sum(bodies.shape[:n] == kind))) > 0]

    def _polygons(self, group, shape, placed, rows, R, fields):
        """This rank's `rows` of a polygonal shape as polygon faces (every rank writes its
        slice): vertices, topology (XDMF Mixed, point ids global) and per face the rows'
        `fields`."""
        first, _ = self.comm.offset(shape.polygon_points(placed, rows))
        pts, topo, owner = shape.polygons(placed, rows, R, first)
        self._rows(group, "vertices", pts)
        self._rows(group, "topology", topo)
        for name in fields:
            self._rows(group, name, getattr(placed, name)[rows][owner])

    def _contact_polygons(self, group, contacts):
        """One cell per contact pair (its contact rows, grouped by k1 and B's code):
        the pair's points ordered around their centre in the plane of the pair's normal, with
        the pair's total force on A and its parts (see contact_polygons). On several ranks the
        rows of each pair travel to the rank its key hashes to, which writes the pair (one
        all-to-all a frame; no rank holds more than its share of the pairs)."""
        rows = np.flatnonzero(contacts.origin == CONTACT)
        pair = np.stack([contacts.k1[rows], pair_code(contacts.k2[rows])], axis=1)
        point, normal = contacts.point[rows], contacts.frame[rows, 0, :]
        force = np.einsum("kji,kj->ki", contacts.frame[rows], contacts.R[rows]) / self.h
        k2 = contacts.k2[rows]
        if self.comm.size > 1:           # all the rows of a pair to one rank, by its key
            code = (pair[:, 0].astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
                    ^ pair[:, 1].astype(np.uint64))
            dest = (code % np.uint64(self.comm.size)).astype(np.int64)
            pair, k2, point, normal, force = self.comm.route(dest, (pair, k2, point, normal,
                                                                   force))
        cells = contact_polygons(pair, k2, point, normal, force)
        first, _ = self.comm.offset(len(cells["vertices"]))
        topo = cells["topology"].copy()
        topo[cells["ids"]] += first
        self._rows(group, "vertices", cells["vertices"])
        self._rows(group, "topology", topo)
        for name in ("k1", "b", "force", "normal", "normal_force", "tangential_force",
                     "points"):
            self._rows(group, name, cells[name])

    def _cells(self, group, shape, vertices):
        """A group of this rank's cells of `shape` (every rank writes its rows): vertices
        (points per cell, shapes' order) and connectivity (the XDMF/VTK order)."""
        per = shape.CELLS["points"]
        first, _ = self.comm.offset(per * len(vertices))
        gx = group.create_group(shape.CELLS["group"])
        self._rows(gx, "vertices", vertices.reshape(-1, 3))
        self._rows(gx, "connectivity", _connectivity(shape, first, len(vertices)))
        return gx

    def _publish(self, name, segment=None):
        """Collective, after a part's file is closed on every rank: rank 0 renames it from
        NAME.tmp to NAME (complete from now on) and rewrites the index."""
        self.comm.barrier()
        with self.comm.collective():
            if self.comm.root:
                self.writes.attempt(self._name(name), os.replace,
                                    os.path.join(self.parts, name + ".tmp"),
                                    os.path.join(self.parts, name))
        self.writes.settle("results segment")
        if segment is not None:
            self.segments.append(segment)
            self._index()

    def _index(self, complete=False):
        """Collective: rank 0 rewrites the index, then the XDMF; `kept` follows the index."""
        from .xdmf import write_xdmf

        with self.comm.collective():
            if self.comm.root:
                self.writes.attempt(self.path, self._write_index, complete)
        self.writes.settle("results index")
        if self.segments:
            self.kept = (self.segments[-1].get("last", self.leg), self.segments[-1]["name"])
        with self.comm.collective():
            if self.comm.root:
                xdmf = os.path.splitext(self.path)[0] + ".xdmf"
                self.writes.attempt(xdmf, write_xdmf, self.path, xdmf)
        self.writes.settle("XDMF index")

    def _flush(self):
        for group, rows in self.rows.items():
            if not rows:
                continue
            seg = self._segment()
            with self.writes.unit("results segment", self._name(seg["name"])):
                self._flush_rows(seg, group, rows)
        self.writes.settle("results segment")

    def _flush_rows(self, seg, group, rows):
        """The rows of `group` kept since the last flush, appended to the segment's table."""
        g = self._table(seg, group)
        n0, n1 = seg["rows"][group], seg["rows"][group] + len(rows)
        for col, dtype, tail in self.series[group]:
            ds = g[col]
            ds.resize((n1,) + tuple(tail))
            if self.comm.root:
                self.writes.attempt(self._name(seg["name"]), self._put, ds, n0, np.array(
                    [r.get(col, 0) for r in rows], dtype=dtype).reshape((n1 - n0,) +
                                                                          tuple(tail)))
        seg["rows"][group] = n1
        seg["last"] = max(seg["last"], self.step)
        self.rows[group] = []

    def _put(self, ds, offset, data):
        """Write `data` at row `offset` of `ds` (a segment's write: its fault point)."""
        if len(data):
            ds[offset:offset + len(data)] = data
        if self._point:
            faults.point(self._point, self.step, self.comm.rank)

    def _same(self, group, name, data):
        """A dataset every rank holds alike (the model's obstacles): rank 0 writes it."""
        ds = group.create_dataset(name, shape=data.shape, dtype=data.dtype)
        if self.comm.root:
            self.writes.attempt(_final(group.file.filename), self._put, ds, 0, data)

    def _obstacle_cells(self, group, obst, rows):
        """The obstacles `rows` drawn under `group`: cells per kind (boxes/: vertices,
        connectivity) and polygons per kind (polyhedra/, meshes/: vertices, topology), each
        with obstacle (index) and material per cell. Replicated data: rank 0 writes it."""
        for kind, shape in shapes.KINDS.items():
            at = rows[obst.shape[rows] == kind]
            if not len(at):
                continue
            R = quat_to_matrix(obst.q[at])
            if shape.CELLS is not None:
                gx = group.create_group(shape.CELLS["group"])
                self._same(gx, "vertices", shape.cell_points(obst, at, R).reshape(-1, 3))
                self._same(gx, "connectivity", _connectivity(shape, 0, len(at)))
                self._same(gx, "obstacle", at)
                self._same(gx, "material", obst.material[at])
            elif shape.POLYGONS is not None:
                pts, topo, owner = shape.polygons(obst, at, R)
                gx = group.create_group(shape.POLYGONS["group"])
                for name, data in (("vertices", pts), ("topology", topo), ("obstacle", at[owner]),
                                   ("material", obst.material[at][owner])):
                    self._same(gx, name, data)

    def _rows(self, group, name, local):
        """A dataset of every rank's rows of `local`, each rank writing its own slice."""
        offset, total = self.comm.offset(len(local))
        ds = group.create_dataset(name, shape=(total,) + local.shape[1:], dtype=local.dtype)
        self.writes.attempt(_final(group.file.filename), self._put, ds, offset, local)

    def _write_index(self, complete=False):
        """Rank 0: NAME.h5 as links to the complete parts, made in memory (HDF5's core
        driver) and written as NAME.h5.tmp, then renamed: a failed write (a full disk) is an
        OSError of Python's and leaves the previous index."""
        from ..version import __version__

        h5py = h5py_module()
        rel = os.path.relpath(self.parts, os.path.dirname(os.path.abspath(self.path)))
        tmp = self.path + ".tmp"
        with h5py.File(self.path, "w", driver="core", backing_store=False) as f:
            f.attrs.update(self.header, version=__version__, complete=complete,
                           parts=json.dumps([s["name"] for s in self.segments]))
            if self.missing:
                f.attrs["missing_parts"] = json.dumps(self.missing)
            if complete and self.summary:
                f.attrs.update({f"summary_{k}": v for k, v in self.summary.items()
                                if isinstance(v, (int, float, str, bool))})
            f["model"] = h5py.ExternalLink(os.path.join(rel, self.model_part), "/model")
            for group, columns in self.series.items():
                g = f.create_group(group)
                g.attrs.update(self.series_attrs[group])
                _series_index(g, group, columns, self.segments, rel, h5py)
            frames = _frame_index(self.segments)
            fr = f.create_group("frames")
            fr["time"] = np.array([t for _, t, _, _ in frames], float)
            fr["step"] = np.array([s for s, _, _, _ in frames], np.int64)
            for k, (_, _, name, local) in enumerate(frames):
                fr[f"{k:06d}"] = h5py.ExternalLink(os.path.join(rel, name),
                                                   f"/frames/{local:06d}")
            f.flush()
            image = f.id.get_file_image()
        try:
            faults.point("index", self.step, self.comm.rank)
            with open(tmp, "wb") as out:
                out.write(image)
        except OSError:
            if os.path.exists(tmp):
                os.remove(tmp)
            raise
        os.replace(tmp, self.path)


def contact_polygons(pair, k2, point, normal, force):
    """The contact pairs of contact rows as cells: rows grouped by `pair` (k1, B's code),
    each pair's points (in order of k2 within the pair) ordered by their angle about their
    centre in the plane normal to the pair's normal n (the sum of its rows' normals, made
    unit). A pair of 3 points or more is a polygon, of 2 a line, of 1 a vertex (XDMF Mixed
    types 3, 2 and 1: [type, count, point ids...]). Per pair: force (the total force on A,
    world frame), normal n, normal_force (force . n, > 0 pushing A off B), tangential_force
    (force minus its normal part) and points (their number); k1 and b (B's code) name it.
    The same rows give the same cells bit for bit, in any order and on any rank count."""
    o = np.lexsort((k2, pair[:, 1], pair[:, 0]))
    pair, point, normal, force = pair[o], point[o], normal[o], force[o]
    n_rows = len(pair)
    new = np.ones(n_rows, bool)
    new[1:] = (pair[1:] != pair[:-1]).any(axis=1)
    start = np.flatnonzero(new)
    count = np.diff(np.append(start, n_rows))
    pid = np.cumsum(new) - 1
    npairs = len(start)
    total = np.zeros((npairs, 3))
    nsum = np.zeros((npairs, 3))
    centre = np.zeros((npairs, 3))
    for k in range(3):              # sums in row order: the same on every rank count
        total[:, k] = np.add.reduceat(force[:, k], start) if npairs else 0.0
        nsum[:, k] = np.add.reduceat(normal[:, k], start) if npairs else 0.0
        centre[:, k] = np.add.reduceat(point[:, k], start) / count if npairs else 0.0
    n = nsum / np.maximum(np.linalg.norm(nsum, axis=1), 1e-300)[:, None]
    # a plane basis per pair: t1 across the normal's smallest component
    e = np.zeros((npairs, 3))
    e[np.arange(npairs), np.argmin(np.abs(n), axis=1)] = 1.0
    t1 = np.cross(n, e)
    t1 /= np.maximum(np.linalg.norm(t1, axis=1), 1e-300)[:, None]
    t2 = np.cross(n, t1)
    d = point - centre[pid]
    angle = libm.arctan2(np.einsum("ij,ij->i", d, t2[pid]), np.einsum("ij,ij->i", d, t1[pid]))
    order = np.lexsort((np.arange(n_rows), angle, pid))
    vertices = point[order]
    types = np.where(count >= 3, 3, count)
    head = np.concatenate([[0], np.cumsum(count + 2)[:-1]]) if npairs else np.zeros(0, int)
    topology = np.zeros(int((count + 2).sum()), np.int64)
    topology[head] = types
    topology[head + 1] = count
    ids = np.ones(len(topology), bool)
    ids[head] = ids[head + 1] = False
    topology[ids] = np.arange(n_rows)
    normal_force = np.einsum("ij,ij->i", total, n)
    return {"vertices": vertices, "topology": topology, "ids": ids,
            "k1": pair[start, 0] if npairs else np.zeros(0, np.int64),
            "b": pair[start, 1] if npairs else np.zeros(0, np.int64),
            "force": total, "normal": n, "normal_force": normal_force,
            "tangential_force": total - normal_force[:, None] * n,
            "points": count.astype(np.int64)}


def _final(filename):
    """The name a part written as NAME.tmp will have."""
    return filename[:-4] if filename.endswith(".tmp") else filename


def _box_half(placed, n):
    """The half extents of the boxes among the first n rows of a placed-shape table (zero for
    other shapes), for readers of /model."""
    half = np.zeros((n, 3))
    rows = np.flatnonzero(placed.shape[:n] == shapes.BOX)
    half[rows] = shapes.box.half_extents(placed, rows)
    return half


def _connectivity(shape, first, count):
    """Cell rows of `count` cells of `shape` whose points start at point `first`."""
    per = shape.CELLS["points"]
    return (first + per * np.arange(count)[:, None] + np.array(shape.CELLS["order"])) \
        .astype(np.int64)


def _describe_parts(folder, names):
    """Rows, frames and columns of complete segments read from their files (rank 0); names
    whose file is gone are returned apart, so that the index can say what is missing."""
    h5py = h5py_module()
    found, missing = [], []
    for name in names:
        try:
            with h5py.File(os.path.join(folder, name), "r") as f:
                groups = list(json.loads(f.attrs["rows"]))
                found.append({"name": name, "rows": json.loads(f.attrs["rows"]),
                              "frames": [tuple(x) for x in json.loads(f.attrs["frames"])],
                              "columns": {g: list(f[g]) for g in groups}})
        except (OSError, KeyError):
            missing.append(name)
    return found, missing


def _series_index(group, name, columns, segments, rel, h5py):
    """One virtual dataset per column over the segments' rows of table `name` (a column a
    segment lacks reads as its fill value: 0, or NaN for floats)."""
    total = sum(s["rows"].get(name, 0) for s in segments)
    for col, dtype, tail in columns:
        tail = tuple(tail)
        if total == 0:
            group.create_dataset(col, shape=(0,) + tail, dtype=dtype)
            continue
        layout = h5py.VirtualLayout(shape=(total,) + tail, dtype=dtype)
        first = 0
        for s in segments:
            n = s["rows"].get(name, 0)
            if n and col in s["columns"].get(name, ()):
                layout[first:first + n] = h5py.VirtualSource(
                    os.path.join(rel, s["name"]), f"{name}/{col}", shape=(n,) + tail)
            first += n
        group.create_virtual_dataset(col, layout, fillvalue=0 if dtype is np.int64 else np.nan)


def _frame_index(segments):
    """(step, time, segment, index in it) of every frame, each step once (a restarted leg
    begins with the frame its predecessor ended on)."""
    frames, last = [], -1
    for s in segments:
        for local, (step, t) in enumerate(s["frames"]):
            if step > last:
                frames.append((step, t, s["name"], local))
                last = step
    return frames


def read_history(path):
    """The history of a results file as a dict of numpy arrays (serial, plain h5py)."""
    h5py = h5py_module()
    with h5py.File(path, "r") as f:
        return {name: f["history"][name][()] for name in f["history"]}
