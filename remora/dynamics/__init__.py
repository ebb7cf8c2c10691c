"""The dynamics: run-time values (``values``), what both engines share (``runtime``), the
step-by-step reference engine of Fig. 12 (``reference``) and the whole-frame engine: evaluation
and dispatch (``engine``), values in a batch and lifting (``batched``), closures moved between
batches (``rebatch``), ``unbox`` as an ordered list of strategies (``unboxing``), and frames of
boxes laid out flat (``layouts``, evaluated over by ``ragged``).  Array work goes through a
backend (:mod:`remora.backends`)."""
