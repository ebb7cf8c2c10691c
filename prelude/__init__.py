"""The Remora prelude, as the package ``remora.prelude`` (decisions.md D57).

Its ``.rem`` files are package data: ``pyproject.toml`` maps this folder into remora, so a wheel
carries them and :func:`remora.interfaces.prelude_cache.prelude_files` reads them with
:mod:`importlib.resources` wherever remora is installed.  Nothing here is Python but this file.
"""
