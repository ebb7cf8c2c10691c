"""Front doors for people: notebooks, editors, the terminal — beside the command line and the API.

Each module here is imported only by the front door that needs it (``%load_ext remora``,
``remora lsp``, ``remora repl`` at a terminal, Pygments asking for the ``remora`` lexer), so
``import remora`` and the command line stay light.
"""
