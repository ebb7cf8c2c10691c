"""What users touch: one ``session`` (load, check, erase and run forms) serves the command line
(``cli``, with ``check_command`` for ``remora check``), the REPL (``repl``, with ``terminal``
input at a terminal) and the Python API (``api``, with ``api_register`` and ``api_results``);
``streams`` reads sources and writes results, ``show`` prints values as they read back and
``layout`` decides how every front door prints them (for people or exactly), ``progress`` shows
long work at a terminal, and ``backend_switch`` keeps one interactive session on several
backends.  ``analysis`` checks a program form by form for every error, as ``remora check`` and
the language server report them.  The notebook magics (``notebook``), the Pygments lexer
(``lexer``) and the language server (``lsp``, over ``document``, ``scopes``, ``typed_index``,
``signatures`` and ``docs``) are front doors for notebooks and editors.

Each module here is imported only by the front door that needs it (``%load_ext remora``,
``remora lsp``, ``remora repl`` at a terminal, Pygments asking for the ``remora`` lexer), so
``import remora`` and the command line stay light.
"""
