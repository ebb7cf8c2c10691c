"""What users touch: one ``session`` (load, check, erase and run forms) serves the command line
(``cli``), the REPL (``repl``) and the Python API (``api``); ``streams`` reads sources and writes
results, ``show`` prints values."""
