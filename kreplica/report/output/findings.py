"""The ``finding`` object every command's machine output writes for a
:class:`~kreplica.formats.findings.Finding`, in one shape::

    finding  {type:"finding", path, position, kind, severity, message, ...kind-specific details}

The details follow the envelope, in their own order. None can take an envelope field's name:
the :class:`~kreplica.formats.findings.Finding` refuses such details where it is made
(:data:`~kreplica.formats.findings.ENVELOPE_FIELDS`), so nothing written here is lost or
overwritten.
"""

from __future__ import annotations

from kreplica.formats.findings import Finding


def finding_object(f: Finding) -> dict:
    obj = {"type": "finding", "path": f.path, "position": f.position, "kind": f.kind,
           "severity": f.severity, "message": f.message}
    obj.update(f.details)
    return obj
