"""Type erasure (Fig. 13): the typed tree (``statics.typed``) → the erased tree (``erased``)
that carries only the shapes the dynamic semantics needs (``erase``)."""
