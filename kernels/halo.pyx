"""The parallel layer's compiled colour loop: a Gauss-Seidel sweep colour by colour with the
halo's exchanges (parsolve/parallel/halo.py) posted and completed in C, no Python per colour
or per message.

For each colour c: relax the boundary rows, wait for the last sweep's sends of c, pack the
du rows they changed and start the persistent receives and sends of c, relax the interior
rows (the transfer overlaps them), wait for the receives and unpack. The same operations in
the same order as ColourSchedule.visit with Halo.begin / Halo.end, its pure-Python twin, so
the iterates are equal bit for bit (tests/mpi/test_parallel.py). The requests are mpi4py's
persistent requests, created, started from Python at set-up and freed by the Halo; this
object only holds copies of their handles (a persistent request keeps its handle).
"""
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy
from mpi4py cimport MPI
from mpi4py.libmpi cimport (MPI_Request, MPI_Startall, MPI_Waitall, MPI_STATUSES_IGNORE,
                            MPI_Wtime)
from body_sweep cimport body_sweep_rows
from codes cimport LOCAL_NCODES, METHOD_COUNT
from typedefs cimport index_t, kind_t


cdef class ColourLoop:
    """recvs, sends: per colour, the Halo's persistent requests; send_ptr, send_idx (CSR by
    colour) the du rows packed into sbuf (rows in the same order); recv_ptr, recv_idx and rbuf
    likewise for the rows received; colour_ptr, boundary, order: colour c's rows are
    order[colour_ptr[c]:colour_ptr[c+1]], its boundary part the first boundary[c].
    `seconds` and `nbytes` add up the time spent in the exchanges and the bytes sent,
    `post_seconds` the part not spent waiting (packing, starting, unpacking)."""
    cdef MPI_Request* req
    cdef index_t[::1] req_ptr, send_start, send_ptr, send_idx, recv_ptr, recv_idx
    cdef index_t[::1] colour_ptr, boundary, order
    cdef double[:, ::1] sbuf, rbuf
    cdef Py_ssize_t ncolours
    cdef public double seconds, post_seconds
    cdef public long long nbytes

    def __cinit__(self, recvs, sends, index_t[::1] send_ptr, index_t[::1] send_idx,
                  double[:, ::1] sbuf, index_t[::1] recv_ptr, index_t[::1] recv_idx,
                  double[:, ::1] rbuf, index_t[::1] colour_ptr, index_t[::1] boundary,
                  index_t[::1] order):
        import numpy as np
        cdef Py_ssize_t c, k = 0
        self.ncolours = len(recvs)
        assert len(sends) == self.ncolours == colour_ptr.shape[0] - 1 == boundary.shape[0]
        assert send_ptr.shape[0] == recv_ptr.shape[0] == self.ncolours + 1
        total = sum(len(r) + len(s) for r, s in zip(recvs, sends))
        self.req = <MPI_Request*> malloc(max(total, 1) * sizeof(MPI_Request))
        if self.req == NULL:
            raise MemoryError()
        self.req_ptr = np.zeros(self.ncolours + 1, np.int64)
        self.send_start = np.zeros(self.ncolours, np.int64)
        for c in range(self.ncolours):
            self.req_ptr[c] = k
            for r in recvs[c]:
                self.req[k] = (<MPI.Request> r).ob_mpi
                k += 1
            self.send_start[c] = k
            for r in sends[c]:
                self.req[k] = (<MPI.Request> r).ob_mpi
                k += 1
        self.req_ptr[self.ncolours] = k
        self.send_ptr, self.send_idx, self.sbuf = send_ptr, send_idx, sbuf
        self.recv_ptr, self.recv_idx, self.rbuf = recv_ptr, recv_idx, rbuf
        self.colour_ptr, self.boundary, self.order = colour_ptr, boundary, order
        self.seconds = 0.0
        self.post_seconds = 0.0
        self.nbytes = 0

    def __dealloc__(self):
        free(self.req)

    cdef void begin(self, Py_ssize_t c, double* du) noexcept nogil:
        cdef double t = MPI_Wtime()
        cdef Py_ssize_t i, lo = self.send_ptr[c], hi = self.send_ptr[c + 1]
        cdef int n = <int> (self.req_ptr[c + 1] - self.send_start[c])
        if n:
            MPI_Waitall(n, self.req + self.send_start[c], MPI_STATUSES_IGNORE)
        cdef double t1 = MPI_Wtime()
        for i in range(lo, hi):
            memcpy(&self.sbuf[i, 0], du + 6 * self.send_idx[i], 6 * sizeof(double))
        n = <int> (self.req_ptr[c + 1] - self.req_ptr[c])
        if n:
            MPI_Startall(n, self.req + self.req_ptr[c])
        self.nbytes += 48 * (hi - lo)
        t = MPI_Wtime() - t
        self.seconds += t
        self.post_seconds += MPI_Wtime() - t1

    cdef void end(self, Py_ssize_t c, double* du) noexcept nogil:
        cdef double t = MPI_Wtime()
        cdef Py_ssize_t i
        cdef int n = <int> (self.send_start[c] - self.req_ptr[c])
        if n:
            MPI_Waitall(n, self.req + self.req_ptr[c], MPI_STATUSES_IGNORE)
        cdef double t1 = MPI_Wtime()
        for i in range(self.recv_ptr[c], self.recv_ptr[c + 1]):
            memcpy(du + 6 * self.recv_idx[i], &self.rbuf[i, 0], 6 * sizeof(double))
        cdef double t2 = MPI_Wtime()
        self.seconds += t2 - t
        self.post_seconds += t2 - t1

    def sweep(self, const index_t[::1] inc_ptr, const index_t[::1] inc_body,
              const double[:, :, ::1] H, const double[:, :, ::1] K,
              const double[:, :, ::1] Wdiag, const double[:, ::1] B,
              const kind_t[::1] kind, const double[:, ::1] param, double[:, ::1] R,
              double[:, ::1] du, double omega, index_t[::1] counts, int method=0):
        """One sweep over every colour with its exchanges (sweep.body_gauss_seidel_sweep's
        arguments, without the order). Returns max |dR| / max |R| on this rank."""
        assert counts.shape[0] >= LOCAL_NCODES and 0 <= method < METHOD_COUNT
        assert kind.shape[0] == param.shape[0] == B.shape[0] == R.shape[0]
        assert self.order.shape[0] == self.colour_ptr[self.ncolours] <= R.shape[0]
        cdef Py_ssize_t c, lo, k, hi, width = param.shape[1]
        cdef double dmax = 0.0, rmax = 0.0
        cdef const index_t* ip = &inc_ptr[0]
        cdef const index_t* ib = &inc_body[0] if inc_body.shape[0] else NULL
        cdef const double* Hp = &H[0, 0, 0] if H.shape[0] else NULL
        cdef const double* Kp = &K[0, 0, 0] if K.shape[0] else NULL
        cdef const double* Wp = &Wdiag[0, 0, 0] if Wdiag.shape[0] else NULL
        cdef const double* Bp = &B[0, 0] if B.shape[0] else NULL
        cdef const kind_t* kp = &kind[0] if kind.shape[0] else NULL
        cdef const double* pp = &param[0, 0] if param.shape[0] else NULL
        cdef double* Rp = &R[0, 0] if R.shape[0] else NULL
        cdef double* dup = &du[0, 0] if du.shape[0] else NULL
        cdef const index_t* op = &self.order[0] if self.order.shape[0] else NULL
        cdef index_t* cp = &counts[0]
        with nogil:
            for c in range(self.ncolours):
                lo, k, hi = self.colour_ptr[c], self.boundary[c], self.colour_ptr[c + 1]
                if k:
                    body_sweep_rows(ip, ib, Hp, Kp, Wp, Bp, kp, pp, width, Rp, dup, op + lo,
                                    k, omega, cp, method, &dmax, &rmax)
                self.begin(c, dup)
                if lo + k < hi:
                    body_sweep_rows(ip, ib, Hp, Kp, Wp, Bp, kp, pp, width, Rp, dup,
                                    op + lo + k, hi - lo - k, omega, cp, method, &dmax, &rmax)
                self.end(c, dup)
        return dmax / rmax if rmax > 0.0 else 0.0
