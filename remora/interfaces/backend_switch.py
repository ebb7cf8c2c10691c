"""One interactive session on several backends: the REPL's ``:backend NAME`` and the notebook
magic's ``--backend NAME``.

A :class:`~remora.interfaces.session.Session` runs on one array library.  Moving to another
keeps everything the session has — it is still one session:

- the checker (its names and their types) is shared, so what was defined is defined;
- the first time a backend is used, a session on it makes the session's definitions again, in
  order, from their checked forms (each is evaluated there once), and its inputs are copied
  across (an array becomes the other library's, through NumPy);
- from then on each backend's session catches up with what was defined elsewhere since it last
  ran, so moving back and forth costs only the definitions made in between.

A value that no library can take across (a function bound as ``_``, which is not a definition)
is left behind: :meth:`OnBackends.on` says which keys it left.
"""

from __future__ import annotations

from typing import Any

from ..statics import typed as T
from .session import Session


class OnBackends:
    """The sessions of one interactive session, one per backend used so far."""

    def __init__(self, session: Session):
        self.current = session
        #: per backend, its session and how much of the shared history it has made
        self.sessions: dict[str, list] = {session.backend: [session, len(session.history)]}

    def on(self, backend: str) -> tuple[Session, list[str]]:
        """The session on ``backend``, caught up with every definition and input made so far,
        and the keys of the inputs it could not take (a ValueError for an unknown backend, an
        ImportError when its extra is not installed)."""
        home = self.current
        entry = self.sessions.get(backend)
        if entry is None:
            session = Session(engine=home.engine_name if backend == home.backend else "plans", run=home.run,
                              prelude=home._prelude, backend=backend)
            session.checker = home.checker
            session.history = home.history
            entry = self.sessions[backend] = [session, 0]
        session, seen = entry
        left = self._catch_up(session, seen)
        entry[1] = len(session.history)
        self.current = session
        return session, left

    def _catch_up(self, session: Session, seen: int) -> list[str]:
        left = []
        for item in session.history[seen:]:
            if isinstance(item, str):  # an input (or `_`): its value, from a session that has it
                value = self._value(item, session)
                if value is None:
                    left.append(item)
                else:
                    session.supply(item, value)
            else:
                assert isinstance(item, T.TyDefine)
                session.replay(item)
        return left

    def _value(self, key: str, target: Session) -> Any:
        """The value of the global ``key`` as an array of ``target``'s backend, or None."""
        to = target.engine.xp
        for other, _ in self.sessions.values():
            value = other.engine.globals.get(key)
            if value is None or other is target:
                continue
            xp = other.engine.xp
            if xp.owns(value):
                return to.from_numpy(xp.to_numpy(value))
            return None
        return None
