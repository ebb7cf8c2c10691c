"""The seam where array libraries plug in.

Empty for now: the whole-frame engine (``dynamics.engine``) and the primitives' implementations
still call NumPy directly. The backend seam — one interface every array library implements, with
NumPy as the first backend — will live here, and then NumPy is imported only under this package
(and by ``interfaces.api``, whose users hand in NumPy arrays).
"""
