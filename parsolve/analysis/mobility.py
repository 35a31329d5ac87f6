"""The free motions of bodies held by constraint lines: one body, or a mechanism of several.

One body: its lines (the others' bodies held still) give the rows of A in its chart; the
null space is its free motions, the row space what is restrained, split into what the
bilateral lines (joints) restrain and what only contacts do (unilateral: a contact allows
separation, so those motions stay free one way). Lines in the span of the lines before them
(joints first, then contacts, in key order) are named redundant: they over-constrain.

Several bodies: the system matrix has a 6-column block per body (a line coupling a and b has
+row in a's block and -row in b's); its mobility is 6k - rank and its free motions are
combined screws, one twist per moving body (the rule: _combined_screws).
"""
from dataclasses import dataclass, field

import numpy as np

from .screws import RTOL, Chart, interpret, operator, redundant_rows, screw_of, svd_split


def _span(M, rtol):
    """Orthonormal columns spanning the columns of M, whose scale is 1 (made from orthonormal
    bases): singular values below rtol, absolute, are noise."""
    u, s, _ = np.linalg.svd(M, full_matrices=False)
    return u[:, s > rtol]


@dataclass
class BodyAnalysis:
    gid: int
    reference: np.ndarray
    joints: int                      # bilateral lines on the body
    contacts: int                    # unilateral lines on the body
    rank: int
    free: list                       # Motions keeping every line (screws.interpret's rule)
    restrained: list                 # Motions the bilateral lines restrain: a basis of the
                                     # complement of their free motions in the chart's metric
    restrained_by_contacts: list     # Motions only contacts restrain (may separate)
    redundant: list                  # labels of over-constraining lines
    check: dict = None

    @property
    def mobility(self):
        return 6 - self.rank

    def as_dict(self):
        return {"body": self.gid, "reference": self.reference.tolist(),
                "joint_lines": self.joints, "contact_lines": self.contacts,
                "rank": self.rank, "mobility": self.mobility,
                "free": [m.as_dict() for m in self.free],
                "restrained": [m.as_dict() for m in self.restrained],
                "restrained_by_contacts": [m.as_dict() for m in self.restrained_by_contacts],
                "redundant": list(self.redundant), "check": self.check}


@dataclass
class SystemAnalysis:
    bodies: list                     # gids, one 6-column block each
    rank: int
    rank_joints: int                 # rank of the bilateral lines alone
    redundant: list
    free: list = field(default_factory=list)   # {gid: Motion} per free motion (see below)

    @property
    def mobility(self):
        return 6 * len(self.bodies) - self.rank

    @property
    def mobility_joints(self):
        return 6 * len(self.bodies) - self.rank_joints

    def as_dict(self):
        return {"bodies": list(self.bodies), "rank": self.rank, "mobility": self.mobility,
                "mobility_joints_only": self.mobility_joints, "redundant": list(self.redundant),
                "free": [{str(g): m.as_dict() for g, m in f.items()} for f in self.free]}


def analyse_body(lines, gid, reference=None, check=None, rtol=RTOL, size=None):
    """The BodyAnalysis of body `gid` under `lines` (ConstraintLines, canonical order), in
    the chart of `reference` (default: the lines' centroid) and of the body's `size` (its
    radius, the chart's least length; default: the lines' alone). check: a world twist (see
    screws.user_twist) to test against the lines."""
    index, dirs = lines.of_body(gid)
    points, uni = lines.point[index], lines.unilateral[index]
    order = np.argsort(uni, kind="stable")          # joints first, then contacts
    index, dirs, points, uni = index[order], dirs[order], points[order], uni[order]
    chart = Chart.of(points, reference, size)
    rows = chart.rows(points, dirs)
    rank, restrained_all, free = svd_split(rows, rtol)
    _, restrained_joint, free_joint = svd_split(rows[~uni], rtol)
    by_contacts = _span(free_joint @ (free_joint.T @ restrained_all), rtol)
    result = BodyAnalysis(
        int(gid), chart.origin, int(np.sum(~uni)), int(np.sum(uni)), rank,
        interpret(free, chart, rtol), interpret(restrained_joint, chart, rtol),
        interpret(by_contacts, chart, rtol),
        [str(lines.label[index[i]]) for i in redundant_rows(rows, rtol)])
    if check is not None:
        result.check = check_motion(check, points, dirs, uni, lines.label[index], chart, rtol)
    return result


def check_motion(twist, points, directions, unilateral, labels, chart, rtol=RTOL):
    """Is the world twist allowed? Each line's length change dl = A twist (m per radian, or
    per metre of translation) is zero within rtol times the twist's size in the chart; a
    unilateral line (contact) may also lengthen: it separates. Returns allowed, the
    (label, dl) of every line, the labels of the lines refusing it and of those separating."""
    twist = np.asarray(twist, float)
    dl = operator(points, directions) @ twist
    tol = rtol * np.linalg.norm(chart.from_world(twist))
    changed = np.abs(dl) > tol
    separates = changed & unilateral & (dl > 0)
    refused = changed & ~separates
    return {"allowed": bool(not refused.any()),
            "length_changes": [(str(k), float(v)) for k, v in zip(labels, dl)],
            "refused_by": [str(k) for k in labels[refused]],
            "separates": [str(k) for k in labels[separates]]}


def analyse_system(lines, gids, references=None, rtol=RTOL, sizes=None):
    """The SystemAnalysis of bodies `gids` (one 6-column block each, in the order given)
    under `lines`; lines to other bodies or the ground hold only their analysed end.
    references, sizes: each body's chart (as analyse_body's), by gid."""
    gids = [int(g) for g in gids]
    col = {g: k for k, g in enumerate(gids)}
    references, sizes = references or {}, sizes or {}
    charts = []
    for g in gids:
        index, _ = lines.of_body(g)
        charts.append(Chart.of(lines.point[index], references.get(g), sizes.get(g)))
    sel = np.nonzero(np.isin(lines.a, gids) | np.isin(lines.b, gids))[0]
    sel = sel[np.argsort(lines.unilateral[sel], kind="stable")]
    A = np.zeros((len(sel), 6 * len(gids)))
    for r, i in enumerate(sel):
        for body, sign in ((lines.a[i], 1.0), (lines.b[i], -1.0)):
            if body in col:
                k = col[body]
                A[r, 6 * k:6 * k + 6] = sign * charts[k].rows(lines.point[i:i + 1],
                                                               lines.direction[i:i + 1])[0]
    uni = lines.unilateral[sel]
    rank, _, free = svd_split(A, rtol)
    result = SystemAnalysis(gids, rank, svd_split(A[~uni], rtol)[0],
                            [str(lines.label[sel[i]]) for i in redundant_rows(A, rtol)])
    result.free = _combined_screws(free, gids, charts, rtol)
    return result


def _combined_screws(space, gids, charts, rtol):
    """A canonical basis of a mechanism's free motions, body by body: first the motions in
    which the first body moves (its twists as `interpret` reads them, the others following
    with the least chart velocity), then, among those leaving it still, the ones moving the
    second body, and so on; in each, the later bodies move with the leading one as rigidly as
    the lines allow (least squares in their charts). Each is {gid: Motion} of the bodies that
    move, with Motion.amount the body's rate per unit of the leading body's motion."""
    out = []
    for k, gid in enumerate(gids):
        if space.shape[1] == 0:
            break
        block = space[6 * k:6 * k + 6]
        _, s, vt = np.linalg.svd(block, full_matrices=True)
        moves = int(np.sum(s > rtol))
        lead, image = space @ vt[:moves].T, block @ vt[:moves].T
        rest = space @ vt[moves:].T                       # the motions leaving k still
        after = np.arange(6 * (k + 1), 6 * len(gids))
        for m in interpret(_span(image, rtol), charts[k], rtol):
            x = lead @ np.linalg.lstsq(image, charts[k].from_world(m.twist), rcond=None)[0]
            if rest.shape[1] and len(after):                # the later bodies follow k rigidly
                rigid = np.concatenate([c.from_world(charts[k].to_world(x[6 * k:6 * k + 6]))
                                        for c in charts[k + 1:]])
                x = x + rest @ np.linalg.lstsq(rest[after], rigid - x[after], rcond=None)[0]
            out.append({g: screw_of(x[6 * j:6 * j + 6], charts[j], rtol)
                        for j, g in enumerate(gids)
                        if np.linalg.norm(x[6 * j:6 * j + 6]) > rtol * np.linalg.norm(x)})
        space = rest
    return out


def coupled(lines, gids):
    """Whether some line couples two of the bodies `gids` (a mechanism to analyse as one)."""
    return bool(np.any(np.isin(lines.a, gids) & np.isin(lines.b, gids)))
