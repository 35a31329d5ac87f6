"""Readable tables of a ModelAnalysis (`parsolve dofs`); `--json` prints its as_dict()."""
from .screws import fmt_vector


def _row(role, motion, amount=False):
    where = (f"along {fmt_vector(motion.direction)}" if motion.kind == "translation" else
             f"axis {fmt_vector(motion.direction)} through {fmt_vector(motion.point)}")
    pitch = f"  pitch {motion.pitch:.6g} m/rad" if motion.kind == "screw" else ""
    rate = f"  x {motion.amount:.6g}" if amount else ""
    return f"  {role:<24}{motion.kind:<13}{where}{pitch}{rate}"


def body_table(b):
    lines = [f"body {b.gid}  centre {fmt_vector(b.reference)}  lines: {b.joints} joint, "
             f"{b.contacts} contact  ->  {b.mobility} free motion(s)"]
    lines += [_row("free", m) for m in b.free]
    lines += [_row("restrained", m) for m in b.restrained]
    lines += [_row("restrained by contacts", m) for m in b.restrained_by_contacts]
    if b.restrained_by_contacts:
        lines.append("  (a contact allows separation: those motions stay free one way)")
    lines += [f"  {'redundant':<24}{name}" for name in b.redundant]
    if b.check is not None:
        c = b.check
        verdict = "allowed" if c["allowed"] else "refused by " + ", ".join(c["refused_by"])
        if c["allowed"] and c["separates"]:
            verdict += ", separating " + ", ".join(c["separates"])
        lines.append(f"  {'check':<24}{verdict}")
        lines += [f"  {'':<24}  {name:<32}dl {dl:+.3e}"
                  for name, dl in c["length_changes"]]
    return "\n".join(lines)


def system_table(s):
    out = [f"mechanism of bodies {', '.join(map(str, s.bodies))}: mobility {s.mobility} "
           f"(6 x {len(s.bodies)} - rank {s.rank})"
           + (f", {s.mobility_joints} with the joints alone" if s.rank_joints != s.rank
              else "")]
    for k, motion in enumerate(s.free):
        out.append(f"  free motion {k + 1}:" + ("" if motion else " none"))
        out += [_row(f"  body {g}", m, amount=True) for g, m in motion.items()]
    out += [f"  {'redundant':<24}{name}" for name in s.redundant]
    return "\n".join(out)


def format_text(analysis):
    parts = [body_table(b) for b in analysis.bodies]
    if analysis.system is not None:
        parts.append(system_table(analysis.system))
    n = analysis.unconstrained
    if n:
        parts.append(f"{n} other bod{'y' if n == 1 else 'ies'} without constraint lines: "
                     "6 free motions each")
    if not analysis.bodies:
        parts.append("no constraint lines" + ("" if analysis.contacts else
                                              " (contacts count with --contacts)"))
    if analysis.note:
        parts.append(analysis.note)
    return "\n\n".join(parts)
