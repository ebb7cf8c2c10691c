"""The dynamics: run-time values (``values``), what both engines share (``runtime``), the
step-by-step reference engine of Fig. 12 (``reference``) and the whole-frame engine
(``engine``, with ``ragged`` for frames whose cells differ in shape)."""
