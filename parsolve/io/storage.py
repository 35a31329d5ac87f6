"""Writes that can fail for want of room (a full disk, a quota, an I/O error), made collective
where they can be.

HDF5's raw data writes under MPI-IO are independent: when the disk fills, one rank's write
fails while the others carry on into the next collective call, and a rank that raised there
would leave them waiting (the job then ends by MPI_ABORT with h5py's traceback). So a unit of
writing (a frame, the history's rows, a segment's closing, a checkpoint) goes through Writes:
`attempt` runs one raw write and keeps this rank's first failure instead of raising it (later
writes of the unit are skipped, the collective calls between them still made), and `settle`,
collective, raises a StorageError naming the file and the reason on every rank if any rank
failed. The run then says what it kept (run/simulation.py) and every rank exits with 2.

HDF5's own metadata writes happen inside its collective calls (extending a dataset, closing
a file), on rank 0, while the other ranks may wait inside HDF5 for it: no rank can be told
there. `unit` turns such a failure into a StorageError of this rank alone, with the same
message; `parsolve run` then prints it and ends the job with 2 (parsolve/cli.py).
"""
import contextlib
import errno
import os
import re

from ..errors import StorageError, everywhere


FAILURES = (OSError, RuntimeError)     # h5py raises either for a failed write of HDF5's


def reason(exc, path=None):
    """A short reason for a failed write of the OS or of HDF5 ('No space left on device'),
    with the room left on `path`'s file system where HDF5 does not say why."""
    code = getattr(exc, "errno", None)
    if not code:                      # HDF5's messages carry the errno inside their text
        found = re.search(r"errno = (\d+)", str(exc))
        code = int(found.group(1)) if found else None
    if code:
        return f"{os.strerror(code)} ({errno.errorcode.get(code, code)})"
    text = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
    free = _free_bytes(path)
    return text if free is None else f"{text}; {free} bytes free on its file system"


def _free_bytes(path):
    try:
        st = os.statvfs(os.path.dirname(os.path.abspath(path)) or ".")
    except (OSError, TypeError):
        return None
    return st.f_bavail * st.f_frsize


class Writes:
    """This rank's first failed write of a unit (see the module's docstring)."""

    def __init__(self, comm):
        self.comm = comm
        self.failed = None            # (path, reason) of this rank's first failed write

    def attempt(self, path, fn, *args, **kwargs):
        """fn(*args, **kwargs), unless a write of this unit failed already; a failure is
        kept (for `path`) instead of raised."""
        if self.failed is not None:
            return None
        try:
            return fn(*args, **kwargs)
        except FAILURES as exc:
            self.failed = (str(path), reason(exc, path))
            return None

    @contextlib.contextmanager
    def unit(self, what, path):
        """A failure inside (of HDF5's collective calls) as a StorageError of this rank (of
        every rank on one)."""
        try:
            yield
        except StorageError:
            raise
        except FAILURES as exc:
            error = StorageError(f"cannot write the {what} {str(path)!r}: {reason(exc, path)}",
                                 path=str(path))
            raise (everywhere(error) if self.comm.size == 1 else error) from None

    def settle(self, what):
        """Collective: raise StorageError on every rank if any rank's write failed; `what`
        says what was being written ('results segment', 'checkpoint')."""
        failed = [f for f in self.comm.allgather(self.failed) if f is not None]
        self.failed = None
        if failed:
            path, why = failed[0]
            raise everywhere(StorageError(f"cannot write the {what} {path!r}: {why}",
                                          path=path))


def finish(writes, what, path, f, tmp, comm):
    """Close the HDF5 file f being written as tmp (collective): HDF5's flush (a unit), the
    unit's raw writes settled, then its close (a unit: nothing is left to write). A failure
    every rank knows of discards tmp; a rank's own is raised as `unit` says."""
    try:
        with writes.unit(what, path):
            f.flush()
        writes.settle(what)
    except StorageError as exc:
        if getattr(exc, "collective", False):
            discard(f, tmp, comm)
        raise
    with writes.unit(what, path):
        f.close()


def discard(f, tmp, comm=None):
    """Give up a file being written as `tmp` after a failed write (collectively for an MPI-IO
    file on `comm`), and remove it. Never raises. After a failed write HDF5 can close a file
    only once its last writes succeed (a close that fails leaves it half-closed, and HDF5
    crashes on it later), so this process's descriptors of it are first pointed at an
    anonymous file in memory (Linux's memfd): those writes go there and are dropped."""
    root = comm is None or comm.root
    _to_memory(tmp)
    if comm is not None:
        comm.barrier()
    if f is not None:
        _quietly(f.close)
    if comm is not None:
        comm.barrier()
    if root:
        _quietly(os.remove, tmp)


def _to_memory(path):
    """Point this process's open descriptors of `path` at one anonymous file in memory."""
    target = os.path.realpath(path)
    try:
        names = os.listdir("/proc/self/fd")
        scratch = os.memfd_create("parsolve-discarded")
    except (OSError, AttributeError):
        return
    try:
        size = os.path.getsize(path)
        os.ftruncate(scratch, size)          # sparse: no memory until written
        for name in names:
            try:
                if os.readlink(f"/proc/self/fd/{name}") == target:
                    os.dup2(scratch, int(name))
            except (OSError, ValueError):
                continue
    except OSError:
        pass
    finally:
        os.close(scratch)


def _quietly(fn, *args):
    try:
        fn(*args)
    except (*FAILURES, ValueError):
        pass
