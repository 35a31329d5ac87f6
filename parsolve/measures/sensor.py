"""Measure sensors: a region's measures as a time series in the results file.

    model.sensor("bed", region=slabs(lo, hi, "z", 10),     # parsolve.measures.slabs
                 quantities=("packing", "coordination", "stress"), every=100)

The quantities are those of parsolve.measures.region (packing, packing_error, coordination,
coordination_mechanical, rattlers, stress, stress_contact, stress_kinetic, pressure, fabric,
contacts, mean_force, force_std, force_histogram, density, velocity, bodies, mass); on a
grid, the coarse-grained fields of parsolve.measures.coarse at the cells' centres
(field_density, field_momentum, field_velocity, field_stress, field_stress_contact,
field_stress_kinetic; options kernel and width); and joints: the number of masonry joints
(parsolve.measures.masonry) whose centre lies in the cell, closed, hinged, open and sliding
(option open_force). One row per cell of the region (x fastest), /sensors/NAME/<quantity>
(samples, cells, k). Options: contact_gap, contact_force, min_contacts, kinetic (see
parsolve.measures.region). Each rank sends its owned bodies and its contacts' ends to their
meeting ranks (all the rows of a pair go with its first body), and the terms are summed
exactly: every sample is the same on any number of ranks, bit for bit.
"""
import json

import numpy as np

from ..errors import InputError
from . import coarse, masonry, regions, tables
from .region import measure

REGION = ("packing", "packing_error", "coordination", "coordination_mechanical", "rattlers",
          "stress", "stress_contact", "stress_kinetic", "pressure", "fabric", "contacts",
          "mean_force", "force_std", "force_histogram", "density", "velocity", "bodies", "mass")
FIELDS = ("field_density", "field_momentum", "field_velocity", "field_stress",
          "field_stress_contact", "field_stress_kinetic")
QUANTITIES = REGION + FIELDS + ("joints",)
DEFAULT = ("packing", "coordination", "stress", "fabric", "mean_force")
OPTIONS = ("contact_gap", "contact_force", "min_contacts", "kinetic", "kernel", "width",
           "open_force")


class MeasureSensor:
    bodies = pairs = joints = None

    def __init__(self, name, region, quantities=None, every=1, **options):
        if not isinstance(name, str) or not name.strip() or "/" in name:
            raise InputError(f"sensor {name!r}: a name is a non-empty string without '/'")
        self.name, self.every = name, int(every)
        if self.every < 1:
            raise InputError(f"sensor {name!r}: every must be >= 1, got {every}")
        self.region = regions.parse(region)
        if not hasattr(self.region, "locate"):
            raise InputError(f"sensor {name!r}: region must be a Box, Ball, Grid (or its "
                             f"text form), got {region!r}")
        quantities = tuple(quantities or DEFAULT)
        for q in quantities:
            if q not in QUANTITIES:
                raise InputError(f"sensor {name!r}: unknown quantity {q!r}: choose from "
                                 f"{', '.join(QUANTITIES)}")
        self.quantities = dict.fromkeys(quantities)
        for key in options:
            if key not in OPTIONS:
                raise InputError(f"sensor {name!r}: unknown option {key!r} (a region sensor "
                                 f"takes {', '.join(OPTIONS)})")
        self.options = options
        if any(q in FIELDS for q in quantities) and not isinstance(self.region, regions.Grid):
            raise InputError(f"sensor {name!r}: coarse-grained fields need a grid region")

    @property
    def rows(self):
        return self.region.ncells

    def attrs(self):
        return {"region": json.dumps({k: np.asarray(v).tolist() if not isinstance(v, str) else v
                                      for k, v in self.region.describe().items()})}

    def resolve(self, obstacle_names, joint_names=()):
        pass

    def sample(self, owned, contacts, h, meeting):
        """This sample on every rank: the owned bodies' and the contacts' terms, met and summed
        through `meeting` (parallel.measures.Meeting)."""
        bodies = tables.bodies_table(owned)
        ends = tables.ends_table(contacts, h)
        bodies, ends = meeting.route(bodies, ends)
        ends = tables.attach(ends, bodies)
        opt = self.options
        out = {}
        if any(q in REGION for q in self.quantities):
            out.update(measure(self.region, bodies, ends, meeting.sums,
                               histogram="force_histogram" in self.quantities,
                               **{k: v for k, v in opt.items() if k in OPTIONS[:4]}))
        if any(q in FIELDS for q in self.quantities):
            fields = coarse.fields(self.region, bodies, ends, meeting.sums,
                                   opt.get("kernel", "gaussian"), opt.get("width"))
            out.update({f"field_{k}": v for k, v in fields.items()})
        if "joints" in self.quantities:     # a pair's rows meet with their first body
            j = masonry.joints(ends, opt.get("open_force", 0.0))
            t = np.zeros((len(j["state"]), 4))
            t[np.arange(len(t)), j["state"]] = 1.0
            t[:, 3] = j["sliding_points"] > 0
            out["joints"] = meeting.sums(t, self.region.locate(j["centre"]), self.rows)
        return {q: np.asarray(out[q], float).reshape(self.rows, -1) for q in self.quantities}

    def columns(self, probe):
        return [("step", np.int64, ()), ("time", float, ())] + \
            [(q, float, probe[q].shape) for q in self.quantities]
