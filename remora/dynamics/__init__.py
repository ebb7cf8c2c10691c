"""The dynamics: run-time values (``values``), what both engines share (``runtime``), the
step-by-step reference engine of Fig. 12 (``reference``) and the whole-frame engine
(``engine``, with ``batched`` for values inside a batch, ``layouts`` for frames of boxes laid
out flat and ``ragged`` for an unbox body over boxes of different lengths)."""
