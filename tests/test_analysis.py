"""Constraint analysis (seed 003): Blanding's exact-constraint cases, analytically."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from mpi4py import MPI

import parsolve as ps
from parsolve.analysis import lines as L
from parsolve.analysis.cli import parse_check
from parsolve.analysis.from_model import analyse_model
from parsolve.analysis.mobility import analyse_body, analyse_system
from parsolve.analysis.screws import operator, user_twist
from parsolve.errors import InputError
from parsolve.parallel import Comm

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def body(points, directions, name="line", check=None, reference=None):
    """Body 0 held to the ground by the lines."""
    return analyse_body(L.ConstraintLines.between(0, L.GROUND, points, directions, name), 0,
                        reference, check)


def distance_to_line(x, point, direction):
    d = np.asarray(direction) / np.linalg.norm(direction)
    r = np.asarray(x) - point
    return np.linalg.norm(r - (r @ d) * d)


def parallel(u, v):
    return np.linalg.norm(np.cross(u, v)) < 1e-12 and abs(np.linalg.norm(v) - 1) < 1e-12


def test_operator_rows_are_the_lines_pluecker_coordinates():
    c, d = np.array([[1.0, 2.0, 3.0]]), np.array([[0.0, 0.0, 1.0]])
    assert np.allclose(operator(c, d), [[2.0, -1.0, 0.0, 0.0, 0.0, 1.0]])
    # a rotation about the line's own axis or a translation across it leaves its length
    assert abs(operator(c, d) @ user_twist({"axis": [0, 0, 1], "point": [1, 2, 0]}, None)) \
        < 1e-15


def test_three_lines_through_a_point_leave_three_rotations_about_it():
    p = np.array([0.3, -1.2, 2.5])
    a = body(np.tile(p, (3, 1)), [(1, 0, 0), (0.3, 1, 0), (1, 1, 1)])
    assert a.rank == 3 and a.redundant == []
    assert [m.kind for m in a.free] == ["rotation"] * 3
    for m in a.free:
        assert np.linalg.norm(m.point - p) < 1e-12
    assert np.allclose(np.array([m.direction for m in a.free]), np.eye(3), atol=1e-12)
    assert [m.kind for m in a.restrained] == ["translation"] * 3


@pytest.mark.parametrize("p, axis", [((1.0, 2.0, 3.0), (1.0, 1.0, 0.0)),
                                     ((1e3, -2e3, 5e2), (0.2, -0.4, 1.0)),
                                     ((1e-3, 0.0, 2e-3), (0.0, 0.0, 1.0))])
def test_a_hinge_leaves_one_rotation_about_its_axis(p, axis):
    span = 0.1 * (np.linalg.norm(p) + 1e-3)
    a = body(*L.hinge(p, axis, span))
    assert a.rank == 5 and len(a.free) == 1
    m = a.free[0]
    assert m.kind == "rotation" and m.pitch == 0.0
    assert parallel(axis, m.direction)
    assert len(a.restrained) == 5 and a.restrained_by_contacts == []
    assert distance_to_line(m.point, p, axis) < 1e-12 * max(1.0, np.linalg.norm(p))


@pytest.mark.parametrize("pitch", [0.004, -0.02])
def test_a_lead_screw_leaves_one_screw_of_its_pitch(pitch):
    p, axis = np.array([0.5, -0.2, 1.0]), np.array([0.0, 1.0, 1.0])
    a = body(*L.lead_screw(p, axis, pitch, radius=0.03))
    assert a.rank == 5 and len(a.free) == 1
    m = a.free[0]
    assert m.kind == "screw"
    assert abs(m.pitch - pitch) < 1e-12
    assert parallel(axis, m.direction) and distance_to_line(m.point, p, axis) < 1e-12


@pytest.mark.parametrize("pitch, kind", [(0.01, "screw"), (1e12, "translation")])
def test_a_screw_with_a_tiny_rotation_part_is_a_translation(pitch, kind):
    """A cylindrical joint on the z axis and one line through (r, 0, 0) across the helix
    (0, r, pitch): a screw, unless its rotation is negligible beside its translation."""
    r = 0.03
    pts, dirs = L.cylinder((0, 0, 0), (0, 0, 1), span=0.05)
    a = body(np.vstack([pts, [(r, 0, 0)]]), np.vstack([dirs, [(0, pitch, -r)]]))
    assert [m.kind for m in a.free] == [kind]
    assert np.allclose(a.free[0].direction, (0, 0, 1), atol=1e-12)
    if kind == "screw":
        assert a.free[0].pitch == pytest.approx(pitch, rel=1e-12)


def test_six_independent_lines_hold_rigidly_and_a_seventh_is_named_redundant():
    pts, dirs = L.fixed((0.1, 0.2, 0.3), (1, 0, 0), span=0.5)
    a = body(pts, dirs)
    assert a.rank == 6 and a.free == [] and a.redundant == []
    a = body(np.vstack([pts, [(0.7, 0.1, -0.4)]]), np.vstack([dirs, [(0.3, 0.5, 0.8)]]))
    assert a.rank == 6 and a.free == [] and a.redundant == ["line.6"]


def test_two_parallel_lines_leave_two_translations_and_two_rotations():
    """Lines along z through (0,0,0) and (1,0,0): translations along x and y, rotations
    about z (through the lines' centroid) and about the x axis, the line through both."""
    a = body([(0, 0, 0), (1, 0, 0)], [(0, 0, 1), (0, 0, 1)])
    assert len(a.free) == 4
    t = [m for m in a.free if m.kind == "translation"]
    r = {tuple(np.round(m.direction, 12)): m for m in a.free if m.kind == "rotation"}
    assert np.allclose([m.direction for m in t], [(1, 0, 0), (0, 1, 0)], atol=1e-12)
    assert set(r) == {(1.0, 0.0, 0.0), (0.0, 0.0, 1.0)}
    assert distance_to_line(r[(1.0, 0.0, 0.0)].point, (0, 0, 0), (1, 0, 0)) < 1e-12
    assert np.allclose(r[(0.0, 0.0, 1.0)].point, (0.5, 0, 0), atol=1e-12)


@pytest.mark.parametrize("pattern, expected", [
    (L.ball((1, 2, 3)), ["rotation"] * 3),
    (L.slider((0, 1, 0), (1, 2, 3)), ["translation"]),
    (L.cylinder((0, 1, 0), (0, 0, 1)), ["translation", "rotation"]),
])
def test_joint_line_sets_leave_their_motions(pattern, expected):
    assert [m.kind for m in body(*pattern).free] == expected


def test_the_hinge_rotation_is_allowed_and_a_slide_along_it_refused():
    p, axis = (1.0, 2.0, 3.0), (1.0, 1.0, 0.0)
    pts, dirs = L.hinge(p, axis)
    turn = body(pts, dirs, "hinge", check=user_twist({"axis": axis, "point": p}, None)).check
    assert turn["allowed"] and turn["refused_by"] == []
    assert max(abs(v) for _, v in turn["length_changes"]) < 1e-12
    slide = body(pts, dirs, "hinge", check=user_twist({"translation": axis}, None)).check
    assert not slide["allowed"] and slide["refused_by"] == ["hinge.4"]   # the line along it
    assert dict(slide["length_changes"])["hinge.4"] == pytest.approx(1.0)
    off = body(pts, dirs, "hinge", check=user_twist(
        {"axis": axis, "point": (1.0, 2.0, 3.01)}, None)).check  # parallel axis, 1 cm off
    assert not off["allowed"]


def test_contacts_that_add_nothing_restrain_nothing_more():
    """A door on a vertical hinge standing on the floor by 4 contacts: they are redundant
    (the hinge holds it already), so they restrain nothing beyond it."""
    hinge = L.ConstraintLines.between(0, L.GROUND, *L.hinge((0.5, 0, 0), (0, 0, 1), 1.0), "h")
    feet = L.ConstraintLines([0] * 4, L.GROUND, [(x, y, 0) for x in (-0.5, 0.5)
                                                 for y in (-0.02, 0.02)], [(0, 0, 1)] * 4,
                             [f"foot {k}" for k in range(4)], unilateral=True,
                             key=[(L.CONTACT, 0, k) for k in range(4)])
    a = analyse_body(L.ConstraintLines.concat([hinge, feet]), 0, (0, 0, 1.0))
    assert (a.joints, a.contacts, a.rank) == (5, 4, 5)
    assert a.restrained_by_contacts == [] and a.redundant == [f"foot {k}" for k in range(4)]


def test_bad_lines_are_named():
    with pytest.raises(InputError, match=r"constraint line 'j.1': direction: the zero vector"):
        L.ConstraintLines.between(0, L.GROUND, [(0, 0, 0)] * 2, [(0, 0, 1), (0, 0, 0)], "j")
    with pytest.raises(InputError, match=r"constraint line 'j.0': point: not a finite number"):
        L.ConstraintLines.between(0, L.GROUND, [(0, np.nan, 0)], [(0, 0, 1)], "j")
    with pytest.raises(InputError, match="hinge: point: not a finite number"):
        L.hinge((0, 0, np.inf), (0, 0, 1))
    with pytest.raises(InputError, match="motion check: axis: the zero vector"):
        user_twist({"axis": (0, 0, 0)}, (0, 0, 0))
    with pytest.raises(InputError, match="give either axis= .* or translation="):
        user_twist({"point": (0, 0, 0)}, (0, 0, 0))
    with pytest.raises(InputError, match="unknown key 'spin'"):
        parse_check("spin=1,0,0")
    assert parse_check("axis=0,0,1, point=(1, 2, 3),pitch=0.5") == {
        "axis": [0, 0, 1], "point": [1, 2, 3], "pitch": 0.5}


def test_a_double_pendulum_has_mobility_two_as_combined_screws():
    lines = L.ConstraintLines.concat([
        L.ConstraintLines.between(1, L.GROUND, *L.hinge((0, 0, 0), (0, 1, 0), 0.1), "pivot"),
        L.ConstraintLines.between(1, 2, *L.hinge((1, 0, 0), (0, 1, 0), 0.1), "knee")])
    s = analyse_system(lines, [1, 2], {1: np.array([0.5, 0, 0]), 2: np.array([1.5, 0, 0])})
    assert s.mobility == 2 and s.redundant == []
    swing, bend = s.free
    for m in swing.values():            # the whole pendulum about the pivot, rigidly
        assert m.kind == "rotation" and np.allclose(m.point, 0, atol=1e-12)
        assert np.allclose(m.direction, (0, 1, 0)) and m.amount == pytest.approx(1.0)
    assert list(bend) == [2] and np.allclose(bend[2].point, (1, 0, 0), atol=1e-12)


# -- from a model ------------------------------------------------------------------------------
def floor_model(blocks=((0.0, 0.0, 0.1),), half=(0.2, 0.15, 0.1)):
    m = ps.Model()
    m.surface("stone", "floor", friction=0.6)
    m.surface("stone", "stone", friction=0.6)
    m.half_space((0, 0, 0), (0, 0, 1), "floor", name="floor")
    for c in blocks:
        m.box(center=c, half_extents=half, material="stone", density=2500)
    return m


def serial(model, **kw):
    comm = Comm(MPI.COMM_SELF)
    try:
        return analyse_model(model, 1e-3, comm=comm, **kw)
    finally:
        comm.free()


def test_a_block_on_the_floor_keeps_three_motions_and_its_contacts_restrain_three():
    check = {"translation": (0, 0, 1)}
    a = serial(floor_model(), contacts=True, check=check).bodies[0]
    assert (a.contacts, a.joints, a.rank) == (4, 0, 3)
    assert [m.kind for m in a.free] == ["translation", "translation", "rotation"]
    assert np.allclose([m.direction for m in a.free], np.eye(3), atol=1e-12)
    assert np.allclose(a.free[2].point, (0, 0, 0.1), atol=1e-12)
    assert a.restrained == []
    held = a.restrained_by_contacts
    assert [m.kind for m in held] == ["translation", "rotation", "rotation"]
    assert np.allclose([m.direction for m in held], [(0, 0, 1), (1, 0, 0), (0, 1, 0)],
                       atol=1e-12)
    assert a.redundant == ["contact 0|floor#6"]          # the fourth corner over-constrains
    assert a.check["allowed"] and len(a.check["separates"]) == 4      # lifting off is free
    down = serial(floor_model(), contacts=True, check={"translation": (0, 0, -1)}).bodies[0]
    assert not down.check["allowed"]
    assert len(down.check["refused_by"]) == 4


def test_without_lines_a_body_asked_for_is_free_and_an_unknown_one_is_named():
    a = serial(floor_model(), bodies=[0]).bodies[0]
    assert a.mobility == 6 and a.contacts == 0
    with pytest.raises(InputError, match="unknown body 7: the model has no body with this id"):
        serial(floor_model(), bodies=[0, 7])


def test_a_pendulum_fed_by_a_line_source_turns_about_its_pivot():
    """Joints give their lines through lines.line_source; this source stands for a hinge
    joint pinning body 0 to the world at (0, 0, 1)."""
    def pivot(model, held):
        return L.ConstraintLines.between(0, L.GROUND, *L.hinge((0, 0, 1.0), (1, 0, 0), 0.05),
                                         "pivot", key=[(L.JOINT, 0, i) for i in range(5)])

    m = ps.Model()
    m.surface("bob", "bob", friction=0.1)
    m.sphere((0, 0, 0.5), 0.05, "bob", density=1000)
    a = serial(m, sources=[pivot]).bodies[0]
    assert a.joints == 5 and len(a.free) == 1
    assert a.free[0].kind == "rotation" and np.allclose(a.free[0].direction, (1, 0, 0))
    assert np.allclose(a.free[0].point, (0, 0, 1.0), atol=1e-12)


def test_a_pendulum_of_the_joints_commands_turns_about_its_pivot():
    """The joints' own lines (analysis.joint_lines): a bob hung by fix_point at its pivot and
    held in the y-z plane by fix_direction (x) at its centre turns about x through the pivot
    only; a rigid link leaves it 5 motions; a spring restrains nothing."""
    def model(*joints):
        m = ps.Model()
        m.surface("bob", "bob", friction=0.1)
        m.sphere((0, 0, 0.5), 0.05, "bob", density=1000)
        for make in joints:
            make(m)
        return m

    pin = lambda m: m.fix_point(0, (0, 0, 0.55), name="pin")                 # noqa: E731
    def plane(m):                        # two lines along x: no turning about y or z
        m.fix_direction(0, (0, 0, 0.5), (1, 0, 0), name="plane")
        m.fix_direction(0, (0, 0.05, 0.5), (1, 0, 0), name="plane2")

    a = serial(model(pin, plane)).bodies[0]
    assert a.joints == 5 and len(a.free) == 1 and not a.redundant
    assert a.free[0].kind == "rotation" and np.allclose(abs(a.free[0].direction[0]), 1.0)
    assert abs(a.free[0].point[1]) < 1e-12 and abs(a.free[0].point[2] - 0.55) < 1e-12
    ok = serial(model(pin, plane), check={"axis": (1, 0, 0), "point": (0, 0, 0.55)}).bodies[0]
    no = serial(model(pin, plane), check={"translation": (1, 0, 0)}).bodies[0]
    assert ok.check["allowed"] and not no.check["allowed"]
    link = lambda m: m.rigid_link(0, (0, 0, 0.55), None, (0, 0, 1.0), name="link")  # noqa: E731
    assert serial(model(link)).bodies[0].mobility == 5
    spring = lambda m: m.spring(0, (0, 0, 0.5), None, (0, 0, 1.0),           # noqa: E731
                                lambda d, v: -10 * d, name="spring")
    assert serial(model(spring), bodies=[0]).bodies[0].mobility == 6


def test_lines_through_a_centre_equal_up_to_round_off_leave_three_rotations():
    """A ball joint at the body's centre, given as a point that equals the centre up to
    round-off (0.1 * 3 against 0.3): the lines' RMS distance from the centre is 1e-16 m, and
    as the chart's length it made the rows' round-off read as levers (rotations both free
    and restrained, amounts of 1e15). The body's radius is the chart's least length."""
    m = ps.Model()
    m.surface("bob", "bob", friction=0.1)
    m.sphere(np.array([0.1, 0.2, 0.7]) * 3, 0.05, "bob", density=1000)
    m.fix_point(0, (0.3, 0.6, 2.1), name="ball")
    a = serial(m).bodies[0]
    assert [x.kind for x in a.free] == ["rotation"] * 3
    assert np.allclose([x.direction for x in a.free], np.eye(3), atol=1e-12)
    assert [x.kind for x in a.restrained] == ["translation"] * 3
    assert all(x.amount == pytest.approx(1 / 0.05) for x in a.free)     # 1 / L
    assert a.redundant == []


def test_a_double_pendulum_of_joints_is_a_two_hinge_mechanism():
    """Two bobs, each pinned (fix_point) and kept in the x-z plane (two fix_direction y):
    the mechanism's mobility is 2; a kinematic body is rigid."""
    m = ps.Model()
    m.surface("bob", "bob", friction=0.1)
    m.sphere((0, 0, 0.5), 0.05, "bob", density=1000)
    m.sphere((0, 0, 0.2), 0.05, "bob", density=1000)
    m.sphere((1, 0, 0.2), 0.05, "bob", density=1000)
    m.fix_point(0, (0, 0, 0.55))
    m.fix_direction(0, (0, 0, 0.5), (0, 1, 0))
    m.fix_direction(0, (0.05, 0, 0.5), (0, 1, 0))
    m.fix_point(1, (0, 0, 0.25), other=0)
    m.fix_direction(1, (0, 0, 0.2), (0, 1, 0), other=0)
    m.fix_direction(1, (0.05, 0, 0.2), (0, 1, 0), other=0)
    m.kinematic(2, velocity=(1.0, 0, 0))
    r = serial(m)
    assert r.system.mobility == 2
    assert [b.mobility for b in r.bodies if b.gid == 2] == [0]


def test_stacked_blocks_are_one_mechanism():
    r = serial(floor_model([(0, 0, 0.1), (0, 0, 0.3)], half=(0.1, 0.1, 0.1)), contacts=True)
    assert [b.mobility for b in r.bodies] == [3, 3]
    s = r.system
    assert (s.mobility, s.mobility_joints) == (6, 12)
    first = s.free[0]                                      # both slide along x together
    assert set(first) == {0, 1} and all(m.kind == "translation" for m in first.values())


# -- the command line --------------------------------------------------------------------------
MODEL = """
import parsolve as ps
m = ps.Model()
m.surface("stone", "floor", friction=0.6)
m.half_space((0, 0, 0), (0, 0, 1), "floor", name="floor")
m.box(center=(0, 0, 0.1), half_extents=(0.2, 0.15, 0.1), material="stone", density=2500)
m.run(1.0, 1e-3, output="never.h5")
"""


def dofs(tmp_path, *args, text=MODEL, mpi=0):
    (tmp_path / "model.py").write_text(textwrap.dedent(text))
    env = dict(os.environ, PYTHONPATH=ROOT, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    cmd = [sys.executable, "-m", "parsolve.cli", "dofs", "model.py", *args]
    if mpi:
        cmd = ["mpirun", "--oversubscribe", "-n", str(mpi)] + cmd
    return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=120)


def test_cli_tables_json_and_errors(tmp_path):
    p = dofs(tmp_path, "--contacts", "--check", "axis=0,0,1,point=0.3,0,0")
    assert p.returncode == 0, p.stderr
    assert "body 0  centre (0, 0, 0.1)  lines: 0 joint, 4 contact  ->  3 free motion(s)" \
        in p.stdout
    assert "rotation     axis (0, 0, 1) through (0, 0, 0.1)" in p.stdout
    assert "check                   allowed" in p.stdout
    assert not (tmp_path / "never.h5").exists()
    p = dofs(tmp_path, "--contacts", "--json")
    out = json.loads(p.stdout)
    assert out["bodies"][0]["mobility"] == 3 and out["bodies"][0]["redundant"] == [
        "contact 0|floor#6"]
    p = dofs(tmp_path, "--body", "5")
    assert p.returncode == 2 and "unknown body 5" in p.stderr
    p = dofs(tmp_path, "--check", "axis=0,0,0")
    assert p.returncode == 2 and "motion check: axis: the zero vector" in p.stderr
    p = dofs(tmp_path, text=MODEL.replace("m.run(", "(lambda *a, **k: None)("))
    assert p.returncode == 2 and "never calls model.run" in p.stderr


def test_cli_under_mpirun_prints_what_a_serial_run_prints(tmp_path):
    text = MODEL.replace("m.run(", "m.box(center=(0.4, 0, 0.1), half_extents=(0.2, 0.15, 0.1),"
                                   " material='stone', density=2500)\nm.run(")
    text = text.replace('name="floor")', 'name="floor")\nm.surface("stone", "stone", '
                                          'friction=0.6)')
    one = dofs(tmp_path, "--contacts", text=text)
    two = dofs(tmp_path, "--contacts", text=text, mpi=2)
    assert one.returncode == 0 and two.returncode == 0, two.stderr
    assert "mechanism of bodies 0, 1" in one.stdout and one.stdout == two.stdout
