"""What users touch: one ``session`` (load, check, erase and run forms) serves the command line
(``cli``), the REPL (``repl``, with ``terminal`` input at a terminal) and the Python API (``api``);
``streams`` reads sources and writes results, ``show`` prints values and ``layout`` lays them out
for people; the notebook magics (``notebook``), the Pygments lexer (``lexer``) and the language
server (``lsp``, over ``document``, ``scopes`` and ``typed_index``) are front doors for notebooks
and editors.

Each module here is imported only by the front door that needs it (``%load_ext remora``,
``remora lsp``, ``remora repl`` at a terminal, Pygments asking for the ``remora`` lexer), so
``import remora`` and the command line stay light.
"""
