"""The tables every stage reads and writes: columns declared once (table.py), the bodies
(bodies.py: BodySet, the body-side conventions), the rows of U = B + W R (interactions.py),
the rows' key namespaces and origins (keys.py), and the checks of what a user gives
(checks.py)."""
