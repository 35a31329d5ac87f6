"""Detection and local dynamics against brute-force and dense references."""
import numpy as np
import pytest
from mpi4py import MPI

import parsolve as ps
from parsolve.assembly import LocalDynamics
from parsolve.contact import detect
from parsolve.contact.broadphase import candidate_pairs
from parsolve.dynamics import free_velocity
from parsolve.dynamics.rotation import axis_angle
from parsolve.parallel import Comm
from parsolve.parallel.operators import delassus_matrix
from parsolve.platform.petsc import PETSc
from parsolve.run import Simulation


def scene(n=60, seed=3):
    rng = np.random.default_rng(seed)
    m = ps.Model()
    m.surface("g", "g", friction=0.4, restitution=0.3)
    m.surface("g", "w", friction=0.2)
    m.box_walls((0, 0, 0), (0.3, 0.3, 0.3), "w")
    x = rng.uniform(0.03, 0.27, (n, 3))
    m.spheres(x, rng.uniform(0.02, 0.04, n), "g", density=1000,
              velocities=rng.normal(0, 1, (n, 3)), angular_velocities=rng.normal(0, 3, (n, 3)))
    for k in range(3):
        m.box(rng.uniform(0.05, 0.25, 3), (0.03, 0.02, 0.04), "g", density=800,
              orientation=axis_angle(rng.normal(size=3), rng.uniform(0, 3)),
              velocity=rng.normal(0, 1, 3), angular_velocity=rng.normal(0, 3, 3))
    return m


def make_step(n=60):
    m = scene(n)
    sim = Simulation(m, step=1e-3, progress=0, quiet=True, comm=Comm(MPI.COMM_SELF))
    b = sim.bodies
    c = detect(b, m.obstacles, sim.mu_table, sim.e_table, sim.margin)
    vf, wf, Jinv, _ = free_velocity(b, 1e-3, m.gravity)
    return m, sim, b, c, LocalDynamics(c, b, vf, wf, Jinv, 1e-3), (vf, wf, Jinv)



@pytest.mark.parametrize("case", ["step", "capped", "zero", "nan", "warm"])
def test_one_ranks_compiled_body_loop_is_the_python_loop_bit_for_bit(case):
    """On one rank GaussSeidel's loop through the bodies is one compiled call
    (kernels.body_gauss_seidel_rows, the exact sums in C): the same sweeps, iterates, du,
    counts and residual as the loop of single sweeps and exact_sums it replaces, bit for bit,
    and its twin's to round-off; a residual that is not finite stops it at once, as it stops
    the loop. "warm": from a warm start R with a stale du, synced first (sync=True: du =
    M^-1 H^T R inside the same call)."""
    from parsolve.laws.codes import OUTCOMES
    from parsolve.parallel.colouring import ColourSchedule
    from parsolve.solvers import kernels, twins
    from parsolve.solvers.problem import Problem

    *_, ld, _ = make_step()
    B = ld.B.copy()
    if case == "zero":
        B[:] = 0.0
    if case == "nan":
        B[1, 2] = np.nan
    ld.B = B
    cap = 4 if case == "capped" else 5000
    out = []
    warm = case == "warm"
    for impl in ("compiled", "loop", "twin"):
        du = np.full((ld.nbodies, 6), 7.0 if warm else 0.0)   # stale: sync must remake it
        R, counts = np.zeros((ld.n, 3)), np.zeros(len(OUTCOMES), np.int64)
        if warm:                                    # a warm start in the cone
            R[:, 0] = np.linspace(0.5, 2.0, ld.n)
            R[:, 1] = 0.1 * ld.mu * R[:, 0]
        p = Problem.coupled(ld, du, ColourSchedule.single(ld.n))
        if impl == "compiled":
            it, err = p.gauss_seidel(R, counts, 1.3, 0, 1e-10, cap, sync=warm)
        elif impl == "loop":
            it, err = Problem.gauss_seidel(p, R, counts, 1.3, 0, 1e-10, cap, sync=warm)
        else:
            it, err = twins.body_gauss_seidel_rows(
                ld.inc_ptr, ld.inc_body, ld.H, ld.K, ld.Wdiag, B, ld.kind, ld.param, R, du,
                np.empty((ld.n, 3)), np.empty((ld.n, 4)), np.arange(ld.n), 1.3, counts, 0,
                1e-10, cap, sync=warm)
        out.append((it, err, R, du, counts))
    (it, err, R, du, counts), loop, twin = out
    assert kernels.COMPILED
    assert it == loop[0] and (err == loop[1] or (np.isnan(err) and np.isnan(loop[1])))
    for a, b in zip((R, du, counts), loop[2:]):
        assert a.tobytes() == b.tobytes()
    assert it == twin[0]
    np.testing.assert_allclose(R, twin[2], rtol=0, atol=1e-9 * max(np.abs(R).max(), 1e-300))
    if case in ("step", "warm"):
        assert 2 < it < 5000 and err <= 1e-10
    elif case == "capped":
        assert it == 4 and err > 1e-10
    elif case == "zero":
        assert it == 0 and err == 0.0
    else:
        assert it == 0 and np.isnan(err)

def test_broad_phase_finds_exactly_the_brute_force_pairs():
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, (400, 3))
    r = rng.uniform(0.01, 0.05, 400)
    got = candidate_pairs(x, r, 1e-3)
    d = np.linalg.norm(x[:, None] - x[None], axis=2)
    i, j = np.nonzero(np.triu(d <= r[:, None] + r[None] + 1e-3, 1))
    np.testing.assert_array_equal(got, np.stack([i, j], 1))



@pytest.mark.parametrize("spread", [0.05, 0.5, 50.0])
def test_the_compiled_grid_candidates_equal_their_twin_and_the_brute_force_pairs(spread):
    """grid_candidates, compiled (a dense cell list where the cells' box is small, a hash
    table of the occupied cells where the bodies are spread far apart) and its twin give the
    same candidates, and the broad phase the brute-force pairs: clusters, bodies in one
    place, negative coordinates."""
    from parsolve.contact import broadphase
    from parsolve.solvers.kernels import COMPILED

    assert COMPILED
    rng = np.random.default_rng(11)
    for n in (150, 700, 2500):
        x = rng.uniform(-spread, spread, (n, 3))
        x[: n // 4] = x[0] + rng.normal(0, 0.01, (n // 4, 3))     # a cluster
        x[-1] = x[-2]                                            # two bodies in one place
        r = rng.uniform(0.005, 0.02, n)
        cells = np.floor(x / (2 * r.max() + 1e-3)).astype(np.int64)
        got = broadphase._kernel.grid_candidates(cells, x, r, 1e-3)
        want = broadphase.grid_candidates(cells, x, r, 1e-3)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)
        pairs = candidate_pairs(x, r, 1e-3)
        d = np.linalg.norm(x[:, None] - x[None], axis=2)
        i, j = np.nonzero(np.triu(d <= r[:, None] + r[None] + 1e-3, 1))
        np.testing.assert_array_equal(pairs, np.stack([i, j], 1))

def test_the_compiled_exact_test_equals_its_twin_at_the_margin():
    """near_pairs, compiled and twin, keep the same pairs in the same order: pairs placed on
    the margin and one ulp either side (where another order of the square's sum would keep
    others), and pairs at random."""
    from parsolve.contact import broadphase

    rng = np.random.default_rng(4)
    m = 30000
    x = rng.uniform(-1, 1, (2 * m, 3))
    r = rng.uniform(0.01, 0.02, 2 * m)
    a, b = np.arange(m), m + np.arange(m)
    u = rng.normal(size=(m, 3))
    u /= np.linalg.norm(u, axis=1)[:, None]
    ulp = np.array([np.nextafter(1.0, 2.0), 1.0, np.nextafter(1.0, 0.0)])
    x[b] = x[a] + u * ((r[a] + r[b] + 1e-3) * ulp[np.arange(m) % 3])[:, None]
    a = np.concatenate([a, rng.integers(0, 2 * m, m)])
    b = np.concatenate([b, rng.integers(0, 2 * m, m)])
    got = broadphase._kernel.near_pairs(x, r, 1e-3, a, b)
    want = broadphase.near_pairs(x, r, 1e-3, a, b)
    assert got.dtype == want.dtype and m / 3 < len(got) < m
    np.testing.assert_array_equal(got, want)


def test_the_skin_keeps_the_broad_phases_pairs_to_the_bit():
    """Bodies moving at random for many steps, some faster than the skin, the set of bodies
    changed once: Skin.pairs equals candidate_pairs every step, and keeps its pairs over
    the steps where nothing moved far."""
    from parsolve.contact.broadphase import Skin

    rng = np.random.default_rng(8)
    n = 800
    x = rng.uniform(0, 0.3, (n, 3))
    r = rng.uniform(0.008, 0.01, n)
    gid = np.arange(n) * 3
    skin = Skin(1e-4, 0.004)
    for step in range(60):
        x = x + rng.normal(0, 0.0004 if step % 20 else 0.003, x.shape)
        if step == 30:                        # a body leaves: the ids are not the same
            x, r, gid = x[1:], r[1:], gid[1:]
        np.testing.assert_array_equal(skin.pairs(x, r, gid, 1e-4),
                                      candidate_pairs(x, r, 1e-4))
        np.testing.assert_array_equal(skin.pairs(x, r, gid, 2e-4),   # another margin
                                      candidate_pairs(x, r, 2e-4))
    assert skin.reuses > 20 and skin.builds > 3 and skin.plain > 0
    skin = Skin(1e-4, 0.004)                   # never kept: the plain broad phase, backing off
    for step in range(40):
        x = x + rng.normal(0, 0.003, x.shape)
        np.testing.assert_array_equal(skin.pairs(x, r, gid, 1e-4), candidate_pairs(x, r, 1e-4))
    assert skin.reuses == 0 and skin.builds < 8 and skin.plain > 30


def test_one_ranks_delassus_rows_are_petscs_sums_bit_for_bit():
    """block_rows sums repeated blocks as MatSetValuesBlocked with ADD_VALUES does (the first
    set, the others added in order, a -0.0 kept): the same block CSR as PETSc's assembly."""
    from parsolve.parallel.operators import block_rows
    from parsolve.solvers.problem import block_csr

    rng = np.random.default_rng(7)
    n, m = 9, 60
    rows, cols = rng.integers(0, n, m), rng.integers(0, n, m)
    rows[:n], cols[:n] = np.arange(n), np.arange(n)       # every diagonal block
    blocks = rng.normal(size=(m, 9)) * 10.0 ** rng.integers(-8, 8, (m, 1))
    blocks[n, 0] = -0.0
    W = PETSc.Mat().createBAIJ(size=(3 * n, 3 * n), bsize=3, nnz=(24, 24), comm=PETSc.COMM_SELF)
    W.setOption(PETSc.Mat.Option.NEW_NONZERO_ALLOCATION_ERR, False)
    W.setValuesBlockedRCV(rows.astype(PETSc.IntType)[:, None],
                          cols.astype(PETSc.IntType)[:, None], blocks,
                          addv=PETSc.InsertMode.ADD_VALUES)
    W.assemble()
    from parsolve._kernels import compiled

    makers = [block_rows] + [mod.block_rows for mod in compiled("operators") or []]
    for make in makers:                     # the twin and the compiled kernel
        for got, want in zip(make(rows, cols, blocks, n), block_csr(W)):
            assert got.shape == want.shape and got.dtype == want.dtype
            assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes()
    W.destroy()


def test_the_compiled_delassus_rows_equal_their_twin():
    """kernels/operators.pyx's block_rows against operators.block_rows, bit for bit: many
    repeats of an entry, columns beyond n, empty rows, no blocks at all."""
    import pytest
    from parsolve._kernels import compiled
    from parsolve.parallel.operators import block_rows

    modules = compiled("operators")
    if modules is None:
        pytest.skip("kernels not built (or PARSOLVE_KERNELS=python)")
    rng = np.random.default_rng(3)
    for n, m, width in ((1, 40, 1), (50, 3000, 50), (20, 500, 80), (30, 0, 30), (5, 7, 5)):
        rows = rng.integers(0, n, m).astype(np.int64)
        cols = rng.integers(0, width, m).astype(np.int64)
        blocks = rng.normal(size=(m, 9)) * 10.0 ** rng.integers(-8, 8, (m, 1))
        got, twin = modules[0].block_rows(rows, cols, blocks, n), block_rows(rows, cols,
                                                                           blocks, n)
        for a, b in zip(got, twin):
            assert a.shape == b.shape and a.dtype == b.dtype
            assert np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()

def dense_H(c, b):
    H = np.zeros((3 * len(c), 6 * len(b)))
    for k in range(len(c)):
        E = c.frame[k]
        for body, s in ((c.a[k], 1.0), (c.b[k], -1.0)):
            if body < 0:
                continue
            r = c.point[k] - b.x[body]
            rx = np.array([[0, -r[2], r[1]], [r[2], 0, -r[0]], [-r[1], r[0], 0]])
            H[3 * k:3 * k + 3, 6 * body:6 * body + 3] = s * E
            H[3 * k:3 * k + 3, 6 * body + 3:6 * body + 6] = -s * E @ rx
    return H


def test_delassus_equals_dense_H_Minv_Ht_and_the_pattern_is_the_linked_map():
    m, sim, b, c, ld, (vf, wf, Jinv) = make_step()
    assert len(c) > 20 and (c.b < 0).any() and (c.b >= 0).any()
    H = dense_H(c, b)
    Minv = np.zeros((6 * len(b), 6 * len(b)))
    for i in range(len(b)):
        Minv[6 * i:6 * i + 3, 6 * i:6 * i + 3] = np.eye(3) / b.mass[i]
        Minv[6 * i + 3:6 * i + 6, 6 * i + 3:6 * i + 6] = Jinv[i]
    W = H @ Minv @ H.T
    Wb = np.zeros_like(W)
    for row in range(len(c)):
        for k in range(ld.indptr[row], ld.indptr[row + 1]):
            col = ld.indices[k]
            Wb[3 * row:3 * row + 3, 3 * col:3 * col + 3] = ld.blocks[k]
    np.testing.assert_allclose(Wb, W, rtol=1e-12, atol=1e-12 * np.abs(W).max())
    # pattern: blocks exactly where two contacts share a body
    share = np.zeros((len(c), len(c)), bool)
    for i in range(len(c)):
        for j in range(len(c)):
            share[i, j] = bool({c.a[i], c.b[i]} & {c.a[j], c.b[j]} - {-1})
    pattern = np.zeros_like(share)
    for row in range(len(c)):
        pattern[row, ld.indices[ld.indptr[row]:ld.indptr[row + 1]]] = True
    np.testing.assert_array_equal(pattern, share)
    u = np.concatenate([np.concatenate([vf[i], wf[i]]) for i in range(len(b))])
    np.testing.assert_allclose(ld.B_free.reshape(-1), H @ u, atol=1e-12)
    # the PETSc matrix applies the same operator
    R = np.random.default_rng(1).normal(size=(len(c), 3))
    Wp = delassus_matrix(ld.indptr, ld.indices, ld.blocks, PETSc.COMM_SELF)
    x, y = Wp.createVecs()
    x.setArray(R.reshape(-1))
    Wp.mult(x, y)
    np.testing.assert_allclose(y.getArray(), W @ R.reshape(-1), rtol=1e-12, atol=1e-12)
    assert Wp.getBlockSize() == 3
    Wp.destroy()


def test_velocity_update_is_consistent_with_W():
    """u+ = u_free + M^-1 H^T R must give H u+ = B_free + W R."""
    m, sim, b, c, ld, (vf, wf, Jinv) = make_step()
    R = np.random.default_rng(2).normal(size=(len(c), 3))
    imp, ang = ld.impulses(R)
    v = vf + imp / b.mass[:, None]
    w = wf + np.einsum("nij,nj->ni", Jinv, ang)
    du = ld.velocity_change(R)
    np.testing.assert_allclose(du, np.concatenate([v - vf, w - wf], axis=1), atol=1e-12)
    from parsolve.assembly.operators import apply_H

    np.testing.assert_allclose(apply_H(ld.con, ld.body, ld.H, v, w, len(c)), ld.velocity(R),
                               rtol=1e-10, atol=1e-10)


def test_body_coupled_sweep_equals_row_sweep_and_python_twin():
    """The O(1) body-coupled sweep produces the row-wise sweep's iterates (round-off), and the
    compiled kernels equal their pure-Python twins."""
    from parsolve.laws.codes import OUTCOMES
    from parsolve.solvers import kernels, twins as reference
    from parsolve.solvers.residual import residual_from_parts

    m, sim, b, c, ld, _ = make_step()
    n = ld.n
    order = np.arange(n, dtype=np.int64)
    R1, R2, R3 = (np.zeros((n, 3)) for _ in range(3))
    du2, du3 = np.zeros((len(b), 6)), np.zeros((len(b), 6))
    cnt = [np.zeros(len(OUTCOMES), np.int64) for _ in range(3)]
    for _ in range(5):
        kernels.gauss_seidel_sweep(ld.indptr, ld.indices, ld.blocks, ld.diag, ld.B, ld.kind, ld.param,
                                   R1, order, 1.0, cnt[0])
        kernels.body_gauss_seidel_sweep(ld.inc_ptr, ld.inc_body, ld.H, ld.K, ld.Wdiag, ld.B,
                                        ld.kind, ld.param, R2, du2, order, 1.0, cnt[1])
        reference.body_gauss_seidel_sweep(ld.inc_ptr, ld.inc_body, ld.H, ld.K, ld.Wdiag, ld.B,
                                          ld.kind, ld.param, R3, du3, order, 1.0, cnt[2])
    scale = np.abs(R1).max()
    assert scale > 0
    np.testing.assert_allclose(R2, R1, atol=1e-10 * scale)
    np.testing.assert_allclose(R3, R2, atol=1e-12 * scale)
    np.testing.assert_allclose(du2, ld.velocity_change(R2), atol=1e-10 * np.abs(du2).max())
    U1, U2 = np.empty((n, 3)), np.empty((n, 3))
    p2, p3 = np.empty((n, 4)), np.empty((n, 4))
    e1 = kernels.delassus_residual(ld.indptr, ld.indices, ld.blocks, ld.B, ld.kind, ld.param, R2,
                                    U1)[0]
    kernels.body_residual(ld.inc_ptr, ld.inc_body, ld.H, ld.B, ld.kind, ld.param, R2, du2, U2, p2)
    reference.body_residual(ld.inc_ptr, ld.inc_body, ld.H, ld.B, ld.kind, ld.param, R2, du2, U2,
                            p3)
    e2 = residual_from_parts(p2.sum(axis=0))
    np.testing.assert_allclose(p3, p2, rtol=1e-12, atol=1e-30)
    assert abs(e1 - e2) <= 1e-9 * e1
    # warm start: du from R applied contact by contact equals M^-1 H^T R
    du4 = np.zeros_like(du2)
    kernels.body_apply(ld.inc_ptr, ld.inc_body, ld.K, R2, du4, order)
    np.testing.assert_allclose(du4, ld.velocity_change(R2), atol=1e-12 * np.abs(du4).max())


def test_the_sweeps_traffic_probe_loads_what_the_sweep_loads_and_changes_nothing():
    """body_sweep_traffic (the measured memory-traffic limit of bench/bench_gs.py) visits the
    words the sweep reads, as its twin lists them, and writes R and du back unchanged; a
    changed word of H, K, W_aa, B, mu, R or du changes its exclusive or."""
    from parsolve.solvers import kernels, twins as reference

    m, sim, b, c, ld, _ = make_step()
    rng = np.random.default_rng(3)
    R, du = rng.normal(size=(ld.n, 3)), rng.normal(size=(len(b), 6))
    order = rng.permutation(ld.n).astype(np.int64)
    args = [ld.inc_ptr, ld.inc_body, ld.H.copy(), ld.K.copy(), ld.Wdiag.copy(), ld.B.copy(),
            ld.kind, ld.param.copy(), R, du, order]
    R0, du0 = R.copy(), du.copy()
    x = kernels.body_sweep_traffic(*args)
    assert x == reference.body_sweep_traffic(*args) and x != 0
    np.testing.assert_array_equal(R, R0)
    np.testing.assert_array_equal(du, du0)
    for k in (2, 3, 4, 5, 7, 8, 9):
        a = args[k]
        flat = a.reshape(-1) if k != 7 else a[:, 0]
        i = int(ld.inc_body[0]) * 6 if k == 9 else 0
        flat[i] += 1.0
        assert kernels.body_sweep_traffic(*args) != x, k
        flat[i] -= 1.0
    assert kernels.body_sweep_traffic(*args[:-1], order[:0]) == 0


def test_frames_are_orthonormal_and_normals_point_from_B_to_A():
    m, sim, b, c, ld, _ = make_step()
    np.testing.assert_allclose(np.einsum("kij,klj->kil", c.frame, c.frame),
                               np.broadcast_to(np.eye(3), (len(c), 3, 3)), atol=1e-14)
    ss = c.b >= 0
    d = b.x[c.a[ss]] - b.x[c.b[ss]]
    assert (np.einsum("ki,ki->k", d, c.frame[ss, 0]) > 0).all()


def test_persisting_contacts_keep_their_keys_and_warm_start():
    m, sim, b, c, ld, _ = make_step()
    c.R[:] = np.arange(3 * len(c)).reshape(-1, 3)
    again = detect(b, m.obstacles, sim.mu_table, sim.e_table, sim.margin)
    assert again.warm_start(c) == len(c)
    np.testing.assert_array_equal(again.R, c.R)
    keys = list(zip(c.k1, c.k2))
    assert keys == sorted(keys) and len(set(keys)) == len(keys)


def test_the_warm_start_of_the_same_rows_equals_the_matching_by_key():
    """Rows whose keys are the last step's, in its order (a mechanism), are copied at once;
    rows matched by key (one gone, the rest in another order) get the same reactions and
    law states."""
    m, sim, b, c, ld, _ = make_step()
    rng = np.random.default_rng(5)
    c.R[:], c.state[:] = rng.normal(size=c.R.shape), rng.normal(size=c.state.shape)
    same = c.take(np.arange(len(c)))
    same.R[:], same.state[:] = 0.0, 0.0
    assert same.warm_start(c) == len(c)
    np.testing.assert_array_equal(same.R, c.R)
    np.testing.assert_array_equal(same.state, c.state)
    order = np.arange(len(c))[::-1][:-1]            # reversed, its first row gone
    other = c.take(order)
    other.R[:], other.state[:] = 0.0, 0.0
    assert other.warm_start(c) == len(c) - 1
    np.testing.assert_array_equal(other.R, c.R[order])
    np.testing.assert_array_equal(other.state, c.state[order])


def test_the_petsc_check_of_the_residual_counts_only_steps_with_rows():
    """verify_every = 3: a ball falling onto a floor has no row until it lands; from then on
    the 1st, 4th, 7th ... step with rows is checked (W assembled in PETSc: its residual equals
    the solver's), every other step keeps NaN."""
    m = ps.Model(gravity=(0.0, 0.0, -9.81))
    m.surface("steel", "steel", friction=0.3, restitution=0.0)
    m.half_space((0, 0, 0), (0, 0, 1), "steel")
    m.sphere((0, 0, 0.0102), 0.01, "steel", mass=1.0)
    sim = Simulation(m, step=1e-3, progress=0, quiet=True, verify_every=3,
                     solver=ps.GaussSeidel(tol=1e-12, max_iter=100))
    rows = [sim.step() for _ in range(20)]
    with_rows = [r for r in rows if r["contacts"] > 0]
    assert rows[0]["contacts"] == 0 and len(with_rows) >= 10
    checked = [r["step"] for r in rows if np.isfinite(r["petsc_residual"])]
    assert checked == [r["step"] for r in with_rows[::3]]
    for r in with_rows[::3]:
        assert abs(r["petsc_residual"] - r["residual"]) <= 1e-12


def test_the_compiled_assembly_equals_its_twins_bit_for_bit():
    """kernels/assembly.pyx against parsolve/assembly/twins.py on random rows (contacts with a
    body B or an obstacle, offsets of joints): incidences, K, W's diagonal blocks, U = H u,
    and the four in one call (local_blocks), with the incidences of point rows (point_blocks)."""
    from parsolve._kernels import compiled
    from parsolve.assembly import twins

    modules = compiled("assembly")
    if modules is None:
        pytest.skip("kernels not built (or PARSOLVE_KERNELS=python)")
    kernel = modules[0]
    rng = np.random.default_rng(3)
    nc, nb = 3000, 2000
    a = rng.integers(0, nb, nc)
    b = np.where(rng.random(nc) < 0.7, rng.integers(0, nb, nc), -1)
    rows = (a, b, rng.normal(size=(nc, 3)), rng.normal(size=(nc, 3)) * (rng.random((nc, 1)) < 0.3),
            rng.normal(size=(nc, 3, 3)), rng.normal(size=(nb, 3)))
    got, want = kernel.point_incidences(*rows), twins.point_incidences(*rows)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    con, body, H, ptr = want
    np.testing.assert_array_equal(ptr, np.searchsorted(con, np.arange(nc + 1)))
    inv_mass, Jinv = rng.uniform(0.1, 2, nb), rng.normal(size=(nb, 3, 3))
    K = twins.inverse_mass_HT(body, H, inv_mass, Jinv)
    np.testing.assert_array_equal(kernel.inverse_mass_HT(body, H, inv_mass, Jinv), K)
    np.testing.assert_array_equal(kernel.diagonal_blocks(con, H, K, nc),
                                  twins.diagonal_blocks(con, H, K, nc))
    v, w = rng.normal(size=(nb, 3)), rng.normal(size=(nb, 3))
    np.testing.assert_array_equal(kernel.apply_H(con, body, H, v, w, nc),
                                  twins.apply_H(con, body, H, v, w, nc))
    # the four in one call: the same blocks and velocities as the calls one by one
    v0, w0 = rng.normal(size=(nb, 3)), rng.normal(size=(nb, 3))
    fused = kernel.local_blocks(con, body, H, inv_mass, Jinv, v, w, v0, w0, nc)
    for g, want in zip(fused, twins.local_blocks(con, body, H, inv_mass, Jinv, v, w, v0, w0, nc)):
        np.testing.assert_array_equal(g.view(np.int64), want.view(np.int64))
    np.testing.assert_array_equal(fused[3], kernel.apply_H(con, body, H, v0, w0, nc))
    # point rows: their incidences too in the same call
    every = kernel.point_blocks(*rows, inv_mass, Jinv, v, w, v0, w0)
    for g, want in zip(every, twins.point_blocks(*rows, inv_mass, Jinv, v, w, v0, w0)):
        np.testing.assert_array_equal(g.view(np.int64), want.view(np.int64))
    for g, want in zip(every, (con, body, H, ptr) + fused):
        np.testing.assert_array_equal(g, want)
    # the reactions' work, signed zeros included (numpy's sum starts from +0)
    for n in (0, 1, 3, nc):
        R, U0, U1 = (rng.normal(size=(n, 3)) * 10.0 ** rng.uniform(-8, 8, (n, 3))
                     for _ in range(3))
        for arr in (R, U0, U1):
            arr[rng.random(arr.shape) < 0.2] = -0.0
        np.testing.assert_array_equal(kernel.reaction_work(R, U0, U1).view(np.int64),
                                      twins.reaction_work(R, U0, U1).view(np.int64))


@pytest.mark.parametrize("walls", [False, True])
def test_no_rows_local_dynamics_are_the_assembled_ones(walls):
    """LocalDynamics without rows (a ball in flight) skips the assembly's calls: every array
    it holds has the shape, type and (empty) values the assembly makes of no rows."""
    from parsolve.tables.interactions import Interactions

    m, sim, b, c, ld, (vf, wf, Jinv) = make_step()
    none = Interactions.empty()
    wall = (np.zeros((0, 3)), np.zeros((0, 3))) if walls else (None, None)
    fast = LocalDynamics(none, b, vf, wf, Jinv, 1e-3, wall=wall)
    full = LocalDynamics.__new__(LocalDynamics)
    full._assemble(none, b, vf, wf, Jinv, 1e-3, 0.0, None, wall)
    assert vars(fast).keys() == vars(full).keys()
    for k, v in vars(full).items():
        f = vars(fast)[k]
        if isinstance(v, np.ndarray):
            assert (f.shape, f.dtype, f.flags["C_CONTIGUOUS"]) == \
                (v.shape, v.dtype, v.flags["C_CONTIGUOUS"]), k
            assert f.tobytes() == v.tobytes(), k
        else:
            assert f is v or f == v, k
    assert fast.rows[0].tolist() == full.rows[0].tolist() == [0]
    assert fast.velocity_after(b).shape == (0, 3)


def test_the_tables_few_rows_shortcuts_answer_as_numpy():
    """tables.table's same and in_order (Python lists for a few rows, numpy beyond 64) give
    np.array_equal's and the identity test's answers at every length, either side of 64."""
    from parsolve.tables.table import in_order, same

    rng = np.random.default_rng(5)
    for n in (0, 1, 2, 5, 63, 64, 65, 1000):
        a = rng.integers(-3, 3, n)
        for b in (a.copy(), a[::-1].copy(), a[:-1].copy() if n else a.copy(),
                  np.where(rng.random(n) < 0.02, a + 1, a)):
            assert same(a, b) == np.array_equal(a, b)
        for p in (np.arange(n), rng.permutation(n), np.roll(np.arange(n), 1)):
            assert in_order(p) == bool((p == np.arange(n)).all())
