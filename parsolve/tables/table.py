"""Structure-of-arrays tables: bodies and interactions as columns, no Python object per row.

A table class declares its columns once, in FIELDS {name: (trailing shape, dtype)}, and the
columns a run cannot continue without in PERSISTENT (checkpointed, and carried when rows change
rank). Checkpoint, migration, results and the memory count iterate over these declarations,
so that adding a column is one line in one place.
"""
import numpy as np


class Table:
    FIELDS = {}
    PERSISTENT = ()

    def __init__(self, n=None, **arrays):
        if n is None:
            n = len(next(iter(arrays.values()))) if arrays else 0
        for name, (shape, dtype) in self.FIELDS.items():
            arr = arrays.get(name)
            setattr(self, name, np.zeros((n,) + shape, dtype) if arr is None
                    else np.ascontiguousarray(arr, dtype=dtype))

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._FIRST = next(iter(cls.FIELDS), None)     # the column __len__ reads

    def __len__(self):
        return len(getattr(self, self._FIRST))

    def columns(self, names=None):
        """{name: array} of the columns `names` (default: all)."""
        return {f: getattr(self, f) for f in (self.FIELDS if names is None else names)}

    def take(self, index):
        """A new table of the rows `index` (integers: copies, rows_of; a slice: views)."""
        if isinstance(index, np.ndarray) and index.dtype.kind in "iu":
            return self._of({f: rows_of(getattr(self, f), index) for f in self.FIELDS})
        return self._of({f: getattr(self, f)[index] for f in self.FIELDS})

    @classmethod
    def of(cls, columns):
        """A table of `columns`, every one of its FIELDS, already of their dtypes and
        contiguous, taken as they are (a maker that builds its rows' columns itself: a
        mechanism's joints, every step)."""
        return cls._blank()[0]._of(columns)

    def _of(self, columns):
        """A table of this one's type (and its other attributes' defaults) from `columns`,
        every one of its FIELDS, already of their dtypes and contiguous: the rows taken or
        concatenated from tables, without the constructor's conversions (every step makes
        several)."""
        out = object.__new__(type(self))
        out.__dict__.update(columns)
        out._adopt(self)
        return out

    def _adopt(self, source):
        """Attributes besides the columns that a table made by _of takes from `source`."""

    @classmethod
    def empty(cls):
        """A table of no rows (its zero-length columns shared between such tables: nothing
        can be written into them)."""
        blank, columns = cls._blank()
        return blank._of(dict(columns))

    @classmethod
    def _blank(cls):
        """(a table of no rows, its columns), made once per table type."""
        made = _EMPTY.get(cls)
        if made is None:
            blank = cls(0)
            made = _EMPTY[cls] = (blank, blank.columns())
        return made

    @classmethod
    def concat(cls, tables):
        tables = list(tables)
        if not tables:
            return cls.empty()
        return tables[0]._of({f: np.concatenate([getattr(t, f) for t in tables])
                              for f in cls.FIELDS})

    @classmethod
    def row_bytes(cls, names=None):
        """Bytes of one row of the columns `names` (default: all)."""
        key = (cls, None if names is None else tuple(names))
        if key not in _ROW_BYTES:
            _ROW_BYTES[key] = sum(int(np.prod(cls.FIELDS[f][0])) * np.dtype(cls.FIELDS[f][1])
                                  .itemsize for f in (cls.FIELDS if names is None else names))
        return _ROW_BYTES[key]


# up to this many rows (a mechanism's, every step) a column is read as a Python list: a tenth
# of numpy's cost per call where the call, not the data, is the cost
FEW_ROWS = 64


def smallest(a):
    """The least value of the non-empty 1-D array a (a.min(); for FEW_ROWS values or fewer by
    their list)."""
    return min(a.tolist()) if len(a) <= FEW_ROWS else a.min()


def same(a, b):
    """Whether the 1-D arrays a and b hold the same values (np.array_equal; for FEW_ROWS
    rows or fewer by their lists)."""
    if len(a) != len(b):
        return False
    if len(a) <= FEW_ROWS:
        return a.tolist() == b.tolist()
    return bool((a == b).all())


def in_order(permutation):
    """Whether a permutation of 0..n-1 is the identity (rows already in the order it would
    put them in: a mechanism's, whose rows come in their key order, every step)."""
    n = len(permutation)
    if n <= FEW_ROWS:
        return permutation.tolist() == list(range(n))
    return bool((permutation == np.arange(n)).all())


def rows_of(column, index):
    """column[index] for an integer index: by np.take for a column of several dimensions (a
    row copied at once, 4 to 5 times faster than fancy indexing), by fancy indexing for one
    of one dimension (np.take's call costs more there)."""
    return np.take(column, index, axis=0) if column.ndim > 1 else column[index]


_EMPTY = {}              # table class -> a table of no rows and its columns (Table.empty)
_ROW_BYTES = {}           # (table class, columns) -> bytes of a row: asked for every step
