"""The statics: the index theory (``indices``), types (``types``), sorting and kinding
(``kinding``), the typing judgment (``typecheck``, with ``frames`` for principal frames),
automatic instantiation (``infer``, ``unknowns``, ``unify``, ``conflicts``), z3 for index
questions (``smt``), and the typed tree they produce (``typed``)."""
