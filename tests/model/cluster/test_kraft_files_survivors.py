"""The cluster id of a KRaft metadata history (``kraft_files._meta_cluster_id``), read from the
``meta.properties`` beside ``__cluster_metadata-0`` or above it as Kafka reads it:
``MetaProperties`` takes ``cluster.id`` from ``PropertiesUtils.readPropertiesFile``, which is
``java.util.Properties.load(InputStream)`` (kafka-formats spec §8.5): ISO-8859-1 bytes,
``\\uXXXX`` escapes, ``#``/``!`` comments, ``key=value``/``key:value``/``key value``, the last
occurrence of a key wins and the value keeps its trailing blanks."""

from __future__ import annotations

from pathlib import Path

import pytest

from kreplica.model.cluster.kraft_files import find_kraft_files

SEG = "00000000000000000000.log"


def _meta_dir(root: Path, content: bytes, *, where: str = "above") -> Path:
    d = root / "logs" / "__cluster_metadata-0"
    d.mkdir(parents=True)
    (d / SEG).write_bytes(b"")
    (d.parent if where == "above" else d).joinpath("meta.properties").write_bytes(content)
    return d


def test_a_byte_that_is_not_utf8_in_a_comment_does_not_hide_the_cluster_id(tmp_path: Path) -> None:
    """``Properties.load(InputStream)`` reads ISO-8859-1, where every byte is a character: a
    comment ``Properties.store`` never writes but an operator might (``#\\xe9t\\xe9``, Latin-1
    "été") is a comment like any other, and the ``cluster.id`` after it is read."""
    d = _meta_dir(tmp_path, b"#\xe9t\xe9\nversion=1\nnode.id=1\ncluster.id=abc-DEF\n")
    assert find_kraft_files([d]).cluster_id == "abc-DEF"
    assert find_kraft_files([d / SEG]).cluster_id == "abc-DEF"


@pytest.mark.parametrize("content, cluster_id", [
    pytest.param(b"version=1\ncluster.id:abc-DEF\n", "abc-DEF", id="colon-separator"),
    pytest.param(b"version=1\ncluster.id abc-DEF\n", "abc-DEF", id="blank-separator"),
    pytest.param(b"cluster.id=old\nversion=1\ncluster.id=new\n", "new", id="the-last-occurrence-wins"),
    pytest.param(b"cluster.id=abc-DEF  \n", "abc-DEF  ", id="trailing-blanks-kept"),
    pytest.param(b"cluster.id=caf\xe9\n", "caf\u00e9", id="iso-8859-1-value"),
    pytest.param(b"cluster.id=\\u0041bc\n", "Abc", id="unicode-escape"),
    pytest.param(b"cluster.id=abc-\\\n    DEF\n", "abc-DEF", id="continued-line"),
    pytest.param(b"#cluster.id=commented\n!cluster.id=also\nversion=0\n", None, id="comments-only"),
    pytest.param(b"cluster.id=\\u00zz\n", None, id="bad-escape-load-fails"),
])
def test_the_cluster_id_is_what_properties_load_gives(tmp_path: Path, content: bytes, cluster_id) -> None:
    """``MetaProperties.Builder(Properties)``: ``clusterId = props.getProperty("cluster.id")``
    (no trimming), after ``Properties.load``; a file ``load`` refuses ("Malformed \\uxxxx
    encoding.") gives no cluster id."""
    d = _meta_dir(tmp_path, content)
    assert find_kraft_files([d]).cluster_id == cluster_id


def test_the_directory_s_own_meta_properties_comes_before_its_parent_s(tmp_path: Path) -> None:
    """The first ``meta.properties`` found is the one read, the metadata directory's own before
    the log directory's above it; one without ``cluster.id`` gives none (no fallback upwards)."""
    d = _meta_dir(tmp_path, b"cluster.id=above\n")
    (d / "meta.properties").write_bytes(b"cluster.id=beside\n")
    assert find_kraft_files([d]).cluster_id == "beside"
    (d / "meta.properties").write_bytes(b"version=0\nbroker.id=1\n")
    assert find_kraft_files([d]).cluster_id is None
