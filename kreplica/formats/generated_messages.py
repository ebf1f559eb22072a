"""Kafka's generated message format (the classes its ``*.json`` schemas generate): one reader and
one writer for every schema kreplica decodes.

Sources (apache/kafka): ``generator/src/main/java/org/apache/kafka/message/MessageDataGenerator.java``
(what the generated ``read``/``write`` do), ``clients/src/main/resources/common/message/README.md``
(the schema language), ``clients/.../protocol/types/Type.java`` (the primitive encodings).

Every record Kafka keeps in its own topics is a generated message: the KRaft metadata records
(``metadata/*.json``), the group coordinator's ``__consumer_offsets`` keys and values
(``group-coordinator/*.json``), the transaction log (``transaction-coordinator/*.json``), the
share coordinator's ``__share_group_state`` (``share-coordinator/*.json``) and the consumer
protocol's subscription and assignment bytes (``ConsumerProtocol*.json``). A schema names its
fields with the versions that carry them; a version is *flexible* from the schema's
``flexibleVersions`` on. The two encodings differ only in lengths and tagged fields:

=========================  ===================================  =========================================
what                       non-flexible version                 flexible version
=========================  ===================================  =========================================
string (nullable)          int16 length, -1 = null              unsigned varint length + 1, 0 = null
bytes (nullable)           int32 length, -1 = null              unsigned varint length + 1, 0 = null
array (nullable)           int32 count, -1 = null               unsigned varint count + 1, 0 = null
struct (nullable)          int8 -1 = null, 1 = present          the same; tagged: unsigned varint 0 / 1
after every struct         nothing                              tagged fields: count, then (tag, size, value)
=========================  ===================================  =========================================

Fixed-width integers are big-endian, ``uuid`` is 16 bytes, ``bool`` one byte. A tagged field is
written only when it differs from its default, so an absent one takes the default; an unknown
tag is skipped by its size (kept under ``_unknown_tags``). A field outside its versions takes
its default. Schemas are declared here as :class:`Message` tables of :class:`Field` in Kafka's
order, field names in snake_case.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from kreplica.formats.errors import FormatError, Malformed, Truncated
from kreplica.formats.uuid import format_uuid, parse_uuid
from kreplica.formats.varint import build_unsigned_varint, read_unsigned_varint


class Field(NamedTuple):
    """One schema field.

    ``type`` is a primitive name, ``[]<primitive>``, ``[]`` (an array of the struct ``fields``)
    or ``struct``. ``since``/``until`` bound the versions carrying it (``until`` None: every
    later one). ``nullable`` is True for every version, or the first nullable version. A field
    with a ``tag`` is a tagged field in flexible versions; ``default`` is what an absent field
    means (None with ``nullable``: null).
    """

    name: str
    type: str
    since: int = 0
    tag: int | None = None
    nullable: bool | int = False
    default: object = None
    fields: tuple = ()
    until: int | None = None

    def present(self, version: int) -> bool:
        return self.since <= version and (self.until is None or version <= self.until)

    def nullable_at(self, version: int) -> bool:
        return self.nullable is True or (self.nullable is not False and version >= self.nullable)


def F(name, type_, since=0, tag=None, nullable=False, default=None, fields=(), until=None) -> Field:
    """A :class:`Field`, written the way the schema tables read best."""
    return Field(name, type_, since, tag, nullable, default, tuple(fields), until)


class Message(NamedTuple):
    """A schema: its name, the highest version known, the first flexible version (None: never),
    and its fields."""

    name: str
    max_version: int
    flexible_since: int | None
    fields: tuple[Field, ...]

    def flexible(self, version: int) -> bool:
        return self.flexible_since is not None and version >= self.flexible_since


_FIXED = {
    "int8": struct.Struct(">b"), "int16": struct.Struct(">h"), "int32": struct.Struct(">i"),
    "int64": struct.Struct(">q"), "uint16": struct.Struct(">H"), "uint32": struct.Struct(">I"),
    "float64": struct.Struct(">d"),
}
_INT8 = _FIXED["int8"]
_INT16 = _FIXED["int16"]
_INT32 = _FIXED["int32"]
UUID_SIZE = 16
ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"


def uuid_text(raw: bytes) -> str:
    """``Uuid.toString`` of 16 bytes."""
    return format_uuid(raw)


def uuid_bytes(text: str) -> bytes:
    """``Uuid.fromString``: the 16 bytes of a 22-character id (``ValueError`` otherwise)."""
    try:
        return parse_uuid(text)
    except FormatError as exc:
        raise ValueError(exc.reason) from None


# -- reading --------------------------------------------------------------------------------


class Cursor:
    """A position in ``buf[pos:end]`` that knows its file: ``base`` is the absolute offset of
    ``buf[0]`` in ``path``, so every error says where in the file it happened."""

    __slots__ = ("buf", "pos", "end", "base", "path", "flexible", "version")

    def __init__(self, buf, pos, end, base, path, flexible=True, version=0):
        self.buf, self.pos, self.end, self.base, self.path = buf, pos, end, base, path
        self.flexible, self.version = flexible, version

    def need(self, n, field_name):
        if n > self.end - self.pos:
            raise Truncated(f"needs {n} bytes but only {self.end - self.pos} remain", path=self.path,
                            position=self.base + self.pos, field=field_name)

    def fixed(self, st: struct.Struct, field_name):
        self.need(st.size, field_name)
        (v,) = st.unpack_from(self.buf, self.pos)
        self.pos += st.size
        return v

    def uvarint(self, field_name):
        """An unsigned varint read by :func:`~kreplica.formats.varint.read_unsigned_varint` (the
        one varint implementation), its error moved to the absolute file position."""
        try:
            v, self.pos = read_unsigned_varint(self.buf, self.pos, self.end, field_name)
        except FormatError as exc:
            raise exc.at(path=self.path, offset=self.base) from None
        return v

    def length(self, st: struct.Struct, field_name) -> int:
        """A length or count: ``-1`` for null, else the count (flexible: varint minus one)."""
        if self.flexible:
            return self.uvarint(field_name) - 1
        return self.fixed(st, field_name)


def _read_value(c: Cursor, f: Field, type_: str):
    st = _FIXED.get(type_)
    if st is not None:
        return c.fixed(st, f.name)
    if type_ == "bool":
        c.need(1, f.name)
        v = c.buf[c.pos] != 0
        c.pos += 1
        return v
    if type_ == "uuid":
        c.need(UUID_SIZE, f.name)
        v = uuid_text(bytes(c.buf[c.pos:c.pos + UUID_SIZE]))
        c.pos += UUID_SIZE
        return v
    if type_ in ("string", "bytes", "records"):
        at = c.base + c.pos
        n = c.length(_INT16 if type_ == "string" else _INT32, f.name)
        if n < 0:
            if n != -1 or not f.nullable_at(c.version):
                raise Malformed(f"length {n} for a non-nullable field" if n != -1 else
                                "null value for a non-nullable field", path=c.path, position=at, field=f.name)
            return None
        c.need(n, f.name)
        raw = bytes(c.buf[c.pos:c.pos + n])
        c.pos += n
        return raw.decode("utf-8", "replace") if type_ == "string" else raw
    if type_ == "struct":
        # a nullable struct carries a presence marker (MessageDataGenerator.generateStructReader):
        # a tagged one an unsigned varint (0: null), an untagged one a byte (negative: null)
        if f.nullable_at(c.version):
            present = c.uvarint(f.name) > 0 if f.tag is not None else c.fixed(_INT8, f.name) >= 0
            if not present:
                return None
        return _read_struct(c, f.fields)
    if type_.startswith("[]"):
        at = c.base + c.pos
        n = c.length(_INT32, f.name)
        if n < 0:
            if n != -1 or not f.nullable_at(c.version):
                raise Malformed("null array for a non-nullable field" if n == -1 else f"array count {n}",
                                path=c.path, position=at, field=f.name)
            return None
        if n > c.end - c.pos:
            raise Truncated(f"array of {n} elements cannot fit", path=c.path, position=at, field=f.name)
        inner = type_[2:]
        if inner:
            return tuple(_read_value(c, f, inner) for _ in range(n))
        return tuple(_read_struct(c, f.fields) for _ in range(n))
    raise AssertionError(f"schema type {type_}")


def default_of(f: Field):
    """What a field outside its versions, or an absent tagged field, holds."""
    if f.default is not None or f.nullable is not False:
        return f.default
    if f.type.startswith("[]"):
        return ()
    if f.type == "string":
        return ""
    if f.type == "bytes":
        return b""
    if f.type == "bool":
        return False
    if f.type == "uuid":
        return ZERO_UUID
    if f.type == "struct":
        return {g.name: default_of(g) for g in f.fields}
    return 0


def _read_struct(c: Cursor, fields: Sequence[Field]) -> dict:
    out: dict = {}
    tagged = {}
    version = c.version
    for f in fields:
        if not f.present(version):
            out[f.name] = default_of(f)
        elif f.tag is not None and c.flexible:
            tagged[f.tag] = f
            out[f.name] = default_of(f)
        elif f.tag is not None:
            out[f.name] = default_of(f)    # a tagged field does not exist in a non-flexible version
        else:
            out[f.name] = _read_value(c, f, f.type)
    if not c.flexible:
        return out
    count = c.uvarint("tagged field count")
    for _ in range(count):
        tag = c.uvarint("tag")
        size = c.uvarint("tag size")
        c.need(size, f"tag {tag}")
        f = tagged.get(tag)
        if f is None:
            out.setdefault("_unknown_tags", {})[tag] = bytes(c.buf[c.pos:c.pos + size])
            c.pos += size
            continue
        sub = Cursor(c.buf, c.pos, c.pos + size, c.base, c.path, c.flexible, version)
        out[f.name] = _read_value(sub, f, f.type)
        c.pos += size
    return out


def decode_fields(fields: Sequence[Field], version: int, buf, *, flexible: bool = True, start: int = 0,
                  end: int | None = None, base: int = 0, path: str | None = None) -> tuple[dict, int]:
    """The fields of one generated message at ``buf[start:end]`` read at ``version``:
    ``(values, position after it)``. Raises :class:`FormatError` (file and byte position)."""
    c = Cursor(buf, start, len(buf) if end is None else end, base, path, flexible, version)
    return _read_struct(c, fields), c.pos


def decode(message: Message, version: int, buf, *, start: int = 0, end: int | None = None, base: int = 0,
           path: str | None = None) -> tuple[dict, int]:
    """``message`` at ``version`` (flexible or not as its schema says): ``(values, end)``."""
    return decode_fields(message.fields, version, buf, flexible=message.flexible(version), start=start,
                         end=end, base=base, path=path)


# -- flat layouts ---------------------------------------------------------------------------

#: the fixed-width types a flat layout spells with one code
_LAYOUT_CODES = {"int8": "b", "int16": "h", "int32": "i", "int64": "q", "uuid": "u"}


def flat_layout(message: Message, version: int) -> bytes | None:
    """``message`` at ``version`` as a flat layout (:mod:`kreplica.formats.log.key_fold`): one code
    per field, ``s``/``S`` a non-null string (int16 / compact length), ``T`` the tagged-fields
    section of a flexible version. ``None`` when a field present at ``version`` is anything else
    (an array, bytes, a nullable field, a struct): such a message is read only by
    :func:`decode`. A tagged field has no code: it is in the tagged-fields section, which
    :func:`decode_flat` leaves to :func:`decode` when it holds any field. Bytes matching the
    layout are exactly those :func:`decode` reads to their end (varints up to 4 bytes long)."""
    flexible = message.flexible(version)
    codes = []
    for f in message.fields:
        if not f.present(version) or f.tag is not None:
            continue
        if f.nullable_at(version):
            return None
        if f.type == "string":
            codes.append("S" if flexible else "s")
        elif f.type in _LAYOUT_CODES:
            codes.append(_LAYOUT_CODES[f.type])
        else:
            return None
    if flexible:
        codes.append("T")
    return "".join(codes).encode("ascii")


_FLAT_PLANS: dict[tuple[str, int], tuple] = {}
_FLAT_FIXED = {"b": "b", "h": "h", "i": "i", "q": "q"}


def _flat_plan(message: Message, version: int) -> tuple:
    """How :func:`decode_flat` reads ``message`` at ``version``: steps in schema order, runs of
    fixed-width fields as one ``Struct``; whether a tagged-fields section ends it."""
    key = (message.name, version)
    plan = _FLAT_PLANS.get(key)
    if plan is not None:
        return plan
    layout = flat_layout(message, version).decode("ascii")
    codes = iter(layout)
    steps: list[tuple] = []
    for f in message.fields:
        if not f.present(version) or f.tag is not None:   # a tagged one: absent when decode_flat reads
            steps.append(("default", f.name, default_of(f)))
            continue
        code = next(codes)
        if code in _FLAT_FIXED and steps and steps[-1][0] == "fixed":
            _kind, fmt, names = steps[-1]
            steps[-1] = ("fixed", fmt + _FLAT_FIXED[code], names + (f.name,))
        elif code in _FLAT_FIXED:
            steps.append(("fixed", ">" + _FLAT_FIXED[code], (f.name,)))
        else:
            steps.append((code, f.name, None))
    steps = [("fixed", struct.Struct(s[1]), s[2]) if s[0] == "fixed" else s for s in steps]
    plan = _FLAT_PLANS[key] = (tuple(steps), layout.endswith("T"))
    return plan


def decode_flat(message: Message, version: int, buf: bytes, start: int = 0) -> dict | None:
    """:func:`decode` of bytes known to match ``flat_layout(message, version)`` (the fold's
    survivors), read without its checks: the same values. ``None`` when a tagged field is present
    (left to :func:`decode`, which keeps unknown ones)."""
    steps, tagged = _flat_plan(message, version)
    out: dict = {}
    pos = start
    for kind, name, extra in steps:
        if kind == "fixed":
            out.update(zip(extra, name.unpack_from(buf, pos)))
            pos += name.size
        elif kind == "default":
            out[name] = extra
        elif kind == "s":
            (n,) = _INT16.unpack_from(buf, pos)
            out[name] = buf[pos + 2:pos + 2 + n].decode("utf-8", "replace")
            pos += 2 + n
        elif kind == "S":
            n, pos = read_unsigned_varint(buf, pos, len(buf))
            out[name] = buf[pos:pos + n - 1].decode("utf-8", "replace")
            pos += n - 1
        else:   # "u"
            out[name] = uuid_text(bytes(buf[pos:pos + UUID_SIZE]))
            pos += UUID_SIZE
    if tagged and buf[pos] != 0:
        return None
    return out


# -- writing --------------------------------------------------------------------------------


def _length(n: int, st: struct.Struct, flexible: bool) -> bytes:
    return build_unsigned_varint(n + 1) if flexible else st.pack(n)


def _write_value(f: Field, type_: str, v, version: int, flexible: bool) -> bytes:
    st = _FIXED.get(type_)
    if st is not None:
        return st.pack(v)
    if type_ == "bool":
        return b"\x01" if v else b"\x00"
    if type_ == "uuid":
        return uuid_bytes(v)
    if type_ in ("string", "bytes", "records"):
        lst = _INT16 if type_ == "string" else _INT32
        if v is None:
            return _length(-1, lst, flexible)
        raw = v.encode("utf-8") if type_ == "string" else bytes(v)
        return _length(len(raw), lst, flexible) + raw
    if type_ == "struct":
        if f.nullable_at(version):
            tagged = f.tag is not None
            if v is None:
                return build_unsigned_varint(0) if tagged else b"\xff"
            return (build_unsigned_varint(1) if tagged else b"\x01") + _write_struct(f.fields, version, flexible, v)
        return _write_struct(f.fields, version, flexible, v)
    if type_.startswith("[]"):
        if v is None:
            return _length(-1, _INT32, flexible)
        inner = type_[2:]
        items = [(_write_value(f, inner, x, version, flexible) if inner
                  else _write_struct(f.fields, version, flexible, x)) for x in v]
        return _length(len(items), _INT32, flexible) + b"".join(items)
    raise AssertionError(type_)


def _write_struct(fields: Sequence[Field], version: int, flexible: bool, values: Mapping) -> bytes:
    out = bytearray()
    tagged = []
    for f in fields:
        if not f.present(version):
            continue
        default = default_of(f)
        v = values.get(f.name, default)
        if f.tag is not None:
            if flexible and v != default and not (isinstance(default, tuple) and v is not None
                                                  and tuple(v) == default):
                tagged.append((f.tag, _write_value(f, f.type, v, version, flexible)))
            continue
        out += _write_value(f, f.type, v, version, flexible)
    if flexible:
        out += build_unsigned_varint(len(tagged))
        for tag, raw in sorted(tagged):
            out += build_unsigned_varint(tag) + build_unsigned_varint(len(raw)) + raw
    return bytes(out)


def encode_fields(fields: Sequence[Field], version: int, values: Mapping, *, flexible: bool = True) -> bytes:
    """The encoding of ``values`` at ``version`` (missing fields take their defaults)."""
    return _write_struct(fields, version, flexible, values)


def encode(message: Message, version: int, values: Mapping) -> bytes:
    """``values`` as ``message`` at ``version``, as Kafka's generated ``write`` lays it out."""
    return encode_fields(message.fields, version, values, flexible=message.flexible(version))
