# Types the kernels share, declared once. index_t: row and body indices (numpy int64);
# kind_t: an interaction's law (numpy int8, parsolve.laws.codes.KINDS).
ctypedef long long index_t
ctypedef signed char kind_t
