"""Checkpoints: one HDF5 file for all ranks, written collectively (MPI-IO), that lets a run
continue exactly on any number of ranks.

Layout (rows carry their body id or contact key, so any rank can read any slice):
  /                  attrs: format="parsolve-checkpoint", format_version (FORMAT_VERSION),
                     version (parsolve's), model_fingerprint, step, time, step_size, bodies,
                     contacts, ranks (that wrote it)
  /bodies/<field>    BodySet.PERSISTENT: every field of every body (gid, shape, material,
                     radius, template, mass, inertia, x, q, v, w, force, torque)
  /contacts/<field>  Interactions.PERSISTENT: k1, k2, origin, point, R, state (keys and
                     origin, the point that decides the owner, the warm start, the laws'
                     state), the elements' rows too
  every dataset: attr checksum (io/checksum.py: any rank count writes and verifies it);
  /: attrs header_checksum (of the attributes in HEADER), results_parts (JSON: the complete
     results segments that hold the history up to this step, for a restart to continue it),
     energy (JSON: the energy balance's initial energy, work of loads, dissipated energy)
Gauss-Seidel keeps no other state. A checkpoint is written as NAME.tmp and renamed to NAME
only when complete and closed, so a crash never leaves a half-written file under NAME; a
flipped byte in any dataset is refused by its checksum on restart. A write that fails (a full
disk) fails on every rank alike (io/storage.py): NAME.tmp is removed and the older
checkpoints stay.

Formats (FORMATS: the release that writes each). A restart reads the formats in READABLE and
continues their runs exactly; format 1 (parsolve 0.1.0: no format_version attribute, rows
without an origin column) gets its rows' origins from their keys. Any other format is refused
with a message naming it and the release that reads it.
"""
import glob
import json
import os
import re
import time

import numpy as np

from ..errors import FileFormatError, StorageError
from ..platform import faults
from ..tables.bodies import BodySet
from ..tables.interactions import Interactions
from ..tables.keys import origin_of
from . import checksum
from .hdf5 import h5py_module
from .storage import Writes, discard, finish

FORMAT = "parsolve-checkpoint"
FORMAT_VERSION = 2
FORMATS = {0: "parsolve 0.1.0 before its checkpoints carried the energy balance",
           1: "parsolve 0.1.0", 2: "parsolve 0.2.0"}
READABLE = (1, 2)


class CorruptCheckpoint(FileFormatError):
    """A checkpoint damaged after it was written (unreadable, truncated, failing a checksum),
    as opposed to one of another model: `--restart auto` falls back to an older one."""

# what is saved: each table's PERSISTENT columns, declared once with the table
GROUPS = {"bodies": BodySet.PERSISTENT, "contacts": Interactions.PERSISTENT}
HEADER_1 = ("format", "version", "model_fingerprint", "step", "time", "step_size", "bodies",
            "contacts", "results_parts", "energy")
HEADER = HEADER_1 + ("format_version",)


def _groups(version):
    """The datasets of a checkpoint of format `version`."""
    if version == 1:
        return {"bodies": GROUPS["bodies"],
                "contacts": tuple(c for c in GROUPS["contacts"] if c != "origin")}
    return GROUPS


def write(path, sim, results_parts=()):
    """Write sim's state to `path` (collective over sim.comm). `results_parts`: the complete
    results segments up to this step (equal on every rank)."""
    from ..version import __version__

    h5py = h5py_module()
    comm = sim.comm
    snap = sim.snapshot()
    tmp = path + ".tmp"
    writes = Writes(comm)
    with comm.collective():             # rank 0's file work may fail: every rank hears of it
        if comm.root:
            writes.attempt(path, os.makedirs, os.path.dirname(os.path.abspath(path)),
                           exist_ok=True)
    writes.settle("checkpoint")
    with writes.unit("checkpoint", path):
        f = h5py.File(tmp, "w", driver="mpio", comm=comm.mpi)
    try:
        with writes.unit("checkpoint", path):
            _write_open(f, path, sim, snap, results_parts, writes, __version__)
    except StorageError as exc:
        if getattr(exc, "collective", False):
            discard(f, tmp, comm)
        raise
    finish(writes, "checkpoint", path, f, tmp, comm)
    comm.barrier()
    with comm.collective():
        if comm.root:
            writes.attempt(path, os.replace, tmp, path)
    writes.settle("checkpoint")


def _write_open(f, path, sim, snap, results_parts, writes, version):
    """The header and datasets of a checkpoint into the open file f (collective)."""
    comm = sim.comm
    header = dict(format=FORMAT, format_version=FORMAT_VERSION, version=version,
                  model_fingerprint=sim.model.fingerprint(), step=snap["step"],
                  time=snap["time"], step_size=sim.h,
                  bodies=comm.sum(len(snap["bodies"]["gid"])),
                  contacts=comm.sum(len(snap["contacts"]["k1"])),
                  results_parts=json.dumps(list(results_parts)),
                  energy=json.dumps(snap["energy"]))
    # attributes are collective metadata: rank 0's values, equal everywhere by construction
    header = comm.bcast(header)
    f.attrs.update(header, ranks=comm.size,
                   header_checksum=np.uint64(checksum.of_attributes(header, HEADER)))
    for group, data in (("bodies", snap["bodies"]), ("contacts", snap["contacts"])):
        g = f.create_group(group)
        offset, total = comm.offset(len(next(iter(data.values()))))
        for name, arr in data.items():
            ds = g.create_dataset(name, shape=(total,) + arr.shape[1:], dtype=arr.dtype)
            writes.attempt(path, _put, ds, offset, arr, snap["step"], comm.rank)
            digest = checksum.combine(comm.allgather(checksum.partial(arr, offset)))
            ds.attrs["checksum"] = np.uint64(digest)


def _put(ds, offset, arr, step, rank):
    """This rank's rows of a dataset (its fault point: checkpoint-dataset)."""
    if len(arr):
        ds[offset:offset + len(arr)] = arr
    faults.point("checkpoint-dataset", step, rank)


def read(path, comm, fingerprint=None):
    """This rank's slice of a checkpoint: (bodies dict, contacts dict, step, time, attrs).

    Checks it collectively: a missing, truncated, corrupt or foreign file, a checkpoint of
    another model (fingerprint), missing datasets, inconsistent lengths or non-finite values
    raise FileFormatError naming the file and the problem, on every rank."""
    path = os.fspath(path)                        # a str: quoted as one in messages
    h5py = h5py_module()
    out = None
    with comm.collective():
        if not os.path.isfile(path):
            raise FileFormatError(f"{path!r}: no such checkpoint file")
        try:
            f = h5py.File(path, "r", driver="mpio", comm=comm.mpi)
        except OSError as exc:
            raise CorruptCheckpoint(f"{path!r}: not a readable HDF5 file (truncated or corrupt?): "
                                  f"{exc}") from None
        with f:
            out = _read_open(f, path, comm, fingerprint)
    return out


def format_version(attrs):
    """The checkpoint format of a file's attributes (FORMATS)."""
    if "format_version" in attrs:
        return int(attrs["format_version"])
    return 1 if all(name in attrs for name in HEADER_1) else 0


def _read_open(f, path, comm, fingerprint):
    from ..version import __version__

    if f.attrs.get("format") != FORMAT:
        raise FileFormatError(f"{path!r}: not a parsolve checkpoint (format attribute "
                              f"{f.attrs.get('format')!r})")
    version = format_version(f.attrs)
    if version not in READABLE:
        reader = FORMATS.get(version, f"a parsolve newer than {__version__}")
        raise FileFormatError(
            f"{path!r}: checkpoint format {version}, written by {f.attrs.get('version', '?')}; "
            f"parsolve {__version__} reads formats {', '.join(map(str, READABLE))}: restart "
            f"it with {reader}")
    stored = f.attrs.get("header_checksum")
    header = HEADER_1 if version == 1 else HEADER
    if stored is None or int(stored) != checksum.of_attributes(f.attrs, header):
        raise CorruptCheckpoint(f"{path!r}: the header attributes fail their checksum (corrupt "
                              "or written by an older version)")
    if fingerprint is not None and f.attrs.get("model_fingerprint") != fingerprint:
        raise FileFormatError(f"{path!r}: a checkpoint of another model (its fingerprint "
                              f"{str(f.attrs.get('model_fingerprint'))[:12]}... differs from "
                              f"this model's {fingerprint[:12]}...)")
    result = []
    for group, fields in _groups(version).items():
        if group not in f:
            raise CorruptCheckpoint(f"{path!r}: dataset group /{group} is missing")
        lengths = set()
        for name in fields:
            if name not in f[group]:
                raise CorruptCheckpoint(f"{path!r}: dataset /{group}/{name} is missing")
            lengths.add(f[group][name].shape[0])
        if len(lengths) != 1:
            raise CorruptCheckpoint(f"{path!r}: datasets of /{group} have different lengths "
                                  f"{sorted(lengths)}")
        n = lengths.pop()
        expected = int(f.attrs.get(group, -1))
        if expected != n:
            raise CorruptCheckpoint(f"{path!r}: /{group} holds {n} rows, the header says "
                                  f"{expected}")
        lo, hi = n * comm.rank // comm.size, n * (comm.rank + 1) // comm.size
        data = {}
        for name in fields:
            with comm.collective():           # a slice may fail on one rank: agree first
                try:
                    arr = f[group][name][lo:hi]
                except (OSError, ValueError) as exc:
                    raise CorruptCheckpoint(f"{path!r}: /{group}/{name} cannot be read ({exc})") \
                        from None
            digest = checksum.combine(comm.allgather(checksum.partial(arr, lo)))
            if "checksum" not in f[group][name].attrs or \
                    digest != int(f[group][name].attrs["checksum"]):
                raise CorruptCheckpoint(f"{path!r}: dataset /{group}/{name} fails its checksum "
                                      "(the file is corrupt)")
            with comm.collective():
                if arr.dtype.kind == "f" and not np.isfinite(arr).all():
                    raise CorruptCheckpoint(f"{path!r}: /{group}/{name} holds NaN or infinite "
                                          "values")
            data[name] = arr
        result.append(data)
    if version == 1:                  # rows before they had an origin: from their keys
        result[1]["origin"] = origin_of(result[1]["k2"])
    attrs = dict(f.attrs)
    attrs["results_parts"] = json.loads(attrs.get("results_parts", "[]"))
    attrs["energy"] = json.loads(attrs.get("energy", "{}"))
    return result[0], result[1], int(f.attrs["step"]), float(f.attrs["time"]), attrs


class CheckpointPolicy:
    """When to write checkpoints and which to keep.

    every: steps between checkpoints; seconds: wall-clock seconds between them (either or
    both); keep: how many of the newest to keep. Files are DIR/NAME-STEP.h5."""

    def __init__(self, directory="checkpoints", name="checkpoint", every=None, seconds=None,
                 keep=3):
        self.directory, self.name = directory, name
        self.every = None if every is None else int(every)
        self.seconds = None if seconds is None else float(seconds)
        self.keep = max(1, int(keep))
        self.last_time = time.time()
        self.last = None          # (path, step) of the last checkpoint this run wrote

    def due_by_step(self, step):
        return self.every is not None and step % self.every == 0

    def due_by_time(self):
        """Whether the wall-clock interval has passed: read on rank 0 and shared by the run
        (clocks differ between ranks)."""
        return self.seconds is not None and time.time() - self.last_time >= self.seconds

    def path(self, step):
        return os.path.join(self.directory, f"{self.name}-{step:09d}.h5")

    def write(self, sim, results_parts=()):
        path = self.path(sim.step_count)
        faults.point("checkpoint", sim.step_count, sim.comm.rank)
        write(path, sim, results_parts)
        self.last_time = time.time()
        self.last = (path, sim.step_count)
        with sim.comm.collective():
            if sim.comm.root:                 # rotate: only after the new one is complete
                for old in existing(self.directory, self.name)[:-self.keep]:
                    os.remove(old)
        return path


def existing(directory, name="checkpoint"):
    """Complete checkpoints in `directory`, oldest first."""
    pat = re.compile(re.escape(name) + r"-(\d+)\.h5$")
    found = [p for p in glob.glob(os.path.join(directory, f"{name}-*.h5")) if
             pat.search(os.path.basename(p))]
    return sorted(found, key=lambda p: int(pat.search(os.path.basename(p)).group(1)))


def newest(directory, name="checkpoint"):
    found = existing(directory, name)
    return found[-1] if found else None
