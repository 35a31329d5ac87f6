"""Checkpoint write and read bandwidth (MB/s) and bytes per body per frame of the results.

    mpirun -n P python bench/bench_checkpoint.py --bodies 1000000 [--repeat 3] [--dir DIR]

A settled-looking simple-cubic lattice of touching spheres on a floor (about 3 contacts per
sphere), made by a generator so no rank holds every body, is advanced one step (so the
checkpoint carries a real contact set with reactions), then:
  write  checkpoint.write (collective MPI-IO, temp name + rename) `repeat` times;
  read   checkpoint.read (every rank its slice, all checks) and Simulation.restore (bodies and
         contacts sent to their owners) `repeat` times;
  frame  one results frame (bodies, contacts, box hexahedra) through ResultsWriter: bytes on
         disk per body, and per contact.
Bandwidth is file size over the slowest rank's wall time (median and best of `repeat`); the file system is whatever DIR is
on (here a local disk and its page cache: read figures are cache-hot). One JSON record.
"""
import argparse
import os
import shutil
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import parsolve as ps  # noqa: E402
from parsolve.io import checkpoint  # noqa: E402
from parsolve.io.results import ResultsWriter  # noqa: E402
from parsolve.run import Simulation  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import metadata, write  # noqa: E402


def lattice_model(n, r=0.005):
    """n spheres of radius r on a cubic lattice of spacing 2r (touching), resting on z = 0."""
    side = int(np.ceil(np.sqrt(n / 10)))             # a slab 10 layers high
    model = ps.Model(gravity=(0.0, 0.0, -9.81))
    model.surface("g", "g", friction=0.5, restitution=0.0)
    model.surface("g", "floor", friction=0.5, restitution=0.0)
    model.half_space((0, 0, 0), (0, 0, 1), "floor")

    def make(ids):
        i = ids % side
        j = (ids // side) % side
        k = ids // (side * side)
        return {"centers": np.stack([r + 2 * r * i, r + 2 * r * j, r + 2 * r * k], axis=1),
                "radii": r}
    model.sphere_generator(n, make, "g", density=2500)
    return model


def timed(comm, fn):
    comm.mpi.Barrier()
    t0 = time.perf_counter()
    out = fn()
    comm.mpi.Barrier()
    return comm.max(time.perf_counter() - t0), out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bodies", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dir", default=None, help="where to write (default: a temporary folder)")
    args = ap.parse_args()

    model = lattice_model(args.bodies)
    t0 = time.perf_counter()
    sim = Simulation(model, 1e-4, solver=ps.GaussSeidel(sweeps=5), output=None,
                        quiet=True, verify_every=0)
    comm = sim.comm
    t_setup = comm.max(time.perf_counter() - t0)
    t_step, _ = timed(comm, sim.step)
    base = comm.mpi.bcast(tempfile.mkdtemp(prefix="parsolve-ckpt-", dir=args.dir)
                          if comm.root else None)
    path = os.path.join(base, "bench.ckpt.h5")
    writes, reads, restores = [], [], []
    for _ in range(args.repeat):
        writes.append(timed(comm, lambda: checkpoint.write(path, sim))[0])
    size = os.path.getsize(path)
    n_contacts = comm.sum(len(sim.contacts))
    for _ in range(args.repeat):
        dt, got = timed(comm, lambda: checkpoint.read(path, comm, model.fingerprint()))
        reads.append(dt)
        bodies, contacts, step, now, _ = got
        restores.append(timed(comm, lambda: sim.restore(bodies, contacts, step, now))[0])

    results = os.path.join(base, "frames.h5")
    writer = ResultsWriter(results, comm, model, sim.owned, sim.h)
    writer.f.flush()
    comm.mpi.Barrier()
    before = os.path.getsize(results)
    t_frame, _ = timed(comm, lambda: writer.frame(sim.step_count, sim.time, sim.owned,
                                                  sim.contacts))
    writer.f.flush()
    comm.mpi.Barrier()
    frame_bytes = os.path.getsize(results) - before
    writer.close()
    comm.mpi.Barrier()
    if comm.root:
        import h5py

        with h5py.File(results, "r") as f:            # the frame's bytes, group by group
            per_group = {k: sum(d.id.get_storage_size() for d in f[f"frames/000000/{k}"]
                                .values()) for k in ("bodies", "contacts", "boxes")}
        shutil.rmtree(base, ignore_errors=True)
        mb = size / 1e6
        record = metadata(ranks=comm.size, bench="checkpoint", bodies=args.bodies,
                          contacts=n_contacts, step_seconds=t_step, setup_seconds=t_setup,
                          checkpoint_bytes=size,
                          checkpoint_bytes_per_body=size / args.bodies,
                          write_seconds=writes, read_seconds=reads, restore_seconds=restores,
                          write_MBps=mb / float(np.median(writes)),
                          read_MBps=mb / float(np.median(reads)),
                          write_MBps_best=mb / min(writes), read_MBps_best=mb / min(reads),
                          frame_seconds=t_frame, frame_bytes=frame_bytes,
                          frame_bytes_per_body=frame_bytes / args.bodies,
                          frame_body_bytes_per_body=per_group["bodies"] / args.bodies,
                          frame_contact_bytes_per_contact=n_contacts and
                          per_group["contacts"] / n_contacts,
                          frame_group_bytes=per_group)
        write("checkpoint", record)


if __name__ == "__main__":
    main()
