"""The exception for "what was typed cannot be run", apart from "the file is damaged".

A :class:`~kreplica.formats.errors.FormatError` says the evidence is damaged or of another kind
(its hint: "a damaged or truncated copy"); a :class:`UsageError` says the evidence may be fine and
the command line is not: an option's value outside what it allows, options that exclude each
other, a point or a name the evidence does not hold. It lives at the bottom of the layers so the
model can raise it for what it is given (``--chroot``); the CLI prints either as one line and
exits 2.
"""

from __future__ import annotations


class UsageError(Exception):
    """``option`` (and ``path``, where the option names one) cannot take what was given: ``reason``
    says what was given and what is allowed.

    Likely cause: a typo, or an option that does not fit this evidence; ``kreplica COMMAND --help``
    lists what each option takes.
    """

    def __init__(self, reason: str, *, option: str | None = None, path: str | None = None) -> None:
        self.reason = reason
        self.option = option
        self.path = path
        super().__init__(self.one_line())

    def one_line(self) -> str:
        """``path: option: reason``, absent parts left out (in the order of a FormatError's line)."""
        return ": ".join(str(p) for p in (self.path, self.option, self.reason) if p is not None)
