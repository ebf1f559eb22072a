"""The exceptions of the formats layer: "I cannot go on with this input".

They are rare on purpose. A reader that meets damage it can describe and step over yields a
:class:`~kreplica.formats.findings.Finding` instead; an exception means the bytes cannot be
read at all (a file that is not what it claims to be, a structure cut short). Every exception
carries the file, the absolute byte position and the field being read, so the one-line message
the CLI prints can point a user at the exact byte. Messages never include payload bytes.
"""

from __future__ import annotations


class FormatError(Exception):
    """The bytes at ``path``:``position`` are not a valid instance of the expected format.

    Likely cause: a damaged or truncated copy, or a file of another kind given by mistake.
    Try ``kreplica inspect-log`` on the file to see what is readable around that position.
    """

    def __init__(
        self,
        reason: str,
        *,
        path: str | None = None,
        position: int | None = None,
        field: str | None = None,
        expected: object = None,
        actual: object = None,
    ) -> None:
        self.reason = reason
        self.path = path
        self.position = position
        self.field = field
        self.expected = expected
        self.actual = actual
        super().__init__(self.one_line())

    def one_line(self) -> str:
        """``path: byte N: field: reason (expected X, got Y)`` with absent parts left out."""
        parts = []
        if self.path is not None:
            parts.append(str(self.path))
        if self.position is not None:
            parts.append(f"byte {self.position}")
        if self.field is not None:
            parts.append(self.field)
        text = self.reason
        if self.expected is not None or self.actual is not None:
            text += f" (expected {self.expected}, got {self.actual})"
        parts.append(text)
        return ": ".join(parts)

    def at(self, *, path: str | None = None, offset: int = 0) -> "FormatError":
        """A copy placed in a file: ``offset`` is added to the position (for nested buffers)."""
        err = type(self)(
            self.reason,
            path=path if path is not None else self.path,
            position=None if self.position is None else self.position + offset,
            field=self.field,
            expected=self.expected,
            actual=self.actual,
        )
        return err


class Truncated(FormatError):
    """The structure needs more bytes than the file (or buffer) holds.

    Likely cause: the copy was taken while the broker was writing, or the file was cut short
    by a crash or a full disk. The bytes before this position are usually intact.
    """


class Malformed(FormatError):
    """The bytes are present but cannot be what the format says (a negative length, a bad
    magic value, a checksum that does not match, data that does not decompress).

    Likely cause: corruption on disk or in the copy, or a file of a different kind.
    """


class DecompressionError(Malformed):
    """The compressed records of a batch (or the value of a legacy wrapper message) do not
    inflate: the codec's data is damaged, or it would inflate past kreplica's limit for a batch
    of its size (a decompression bomb).

    Likely cause: when the batch's CRC is valid the compressed bytes are as the producer wrote
    them (the CRC covers them), so a producer or codec-library bug; otherwise damage on disk or
    in the copy. The records inflated before the damage are still listed by
    ``kreplica inspect-log --records``; the finding names the codec library's own words.
    """


class UnsupportedVersion(FormatError):
    """The file declares a format version kreplica does not know.

    Likely cause: a file written by a newer Kafka or ZooKeeper than kreplica knows; please
    report the version so support can be added.
    """
