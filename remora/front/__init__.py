"""The front end: text → S-expressions with spans (``reader``) → the syntax tree of Fig. 1 plus
sugar (``syntax``, ``parse``)."""
