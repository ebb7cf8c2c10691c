"""The statics: the index theory (``indices``), types (``types``), sorting and kinding
(``kinding``), the typing judgment (``typecheck``, with ``frames`` for principal frames and
``builders`` for the nodes its rules build), the primitives' types (``primitive_types``), type
equivalence (``unknowns``; committed by ``unify``), automatic instantiation (``infer``,
``conflicts``), z3 for index questions (``smt``), and the typed tree they produce (``typed``)."""
