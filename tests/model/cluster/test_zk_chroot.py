"""Where Kafka's znodes are in a ZooKeeper tree (``kreplica/model/cluster/zk_chroot.py``): the
root, the one chroot holding them, or a one-line error saying what the tree holds."""

from __future__ import annotations

import pytest

from kreplica.formats.errors import FormatError
from kreplica.formats.usage import UsageError
from kreplica.model.cluster.zk_chroot import describe_tree, kafka_roots, normalize_chroot, resolve_chroot

ZK = ["/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config"]
AT_ROOT = ZK + ["/brokers", "/brokers/ids", "/brokers/topics"]
CHROOTED = ZK + ["/kafka", "/kafka/brokers", "/kafka/brokers/ids", "/kafka/brokers/topics", "/kafka/controller"]
TOPICS_ONLY = ZK + ["/a/b", "/a/b/brokers", "/a/b/brokers/topics"]


def _nodes(paths):
    return dict.fromkeys(paths)


@pytest.mark.parametrize(("text", "root"), [
    pytest.param("/", "", id="root"), pytest.param("/kafka", "/kafka", id="chroot"),
    pytest.param(" /a/b/ ", "/a/b", id="trailing-slash"),
    # only trailing slashes go (the docstring: ``/a/b/`` -> ``/a/b``); the letters of the chroot stay
    pytest.param("/X/", "/X", id="only-slashes-stripped"), pytest.param("/KX", "/KX", id="letters-kept"),
])
def test_normalize(text, root) -> None:
    assert normalize_chroot(text) == root


def test_a_chroot_is_a_znode_path() -> None:
    with pytest.raises(UsageError, match="znode path"):
        normalize_chroot("kafka")


@pytest.mark.parametrize(("paths", "roots"), [
    pytest.param(AT_ROOT, ("",), id="root"), pytest.param(CHROOTED, ("/kafka",), id="chroot"),
    pytest.param(TOPICS_ONLY, ("/a/b",), id="topics-only"), pytest.param(ZK, (), id="none"),
    pytest.param(AT_ROOT + CHROOTED, ("", "/kafka"), id="two"),
])
def test_kafka_roots(paths, roots) -> None:
    assert kafka_roots(paths) == roots


def test_found_alone_or_as_given() -> None:
    assert resolve_chroot(_nodes(CHROOTED), None, where="zxid 0x5") == "/kafka"
    assert resolve_chroot(_nodes(AT_ROOT + CHROOTED), "", where="zxid 0x5") == ""


def test_several_places_ask_for_chroot() -> None:
    with pytest.raises(UsageError, match=r"in 2 places \(/, /kafka\): choose one with --chroot"):
        resolve_chroot(_nodes(AT_ROOT + CHROOTED), None, where="zxid 0x5")


def test_a_chroot_given_without_kafka_says_where_kafka_is() -> None:
    with pytest.raises(UsageError, match="under --chroot /other at zxid 0x5; Kafka's znodes are under /kafka"):
        resolve_chroot(_nodes(CHROOTED), "/other", where="zxid 0x5")


def test_no_kafka_says_what_the_tree_holds() -> None:
    with pytest.raises(FormatError, match=r"no Kafka metadata .* \(6 znodes, top-level /hbase, /zookeeper\)"):
        resolve_chroot(_nodes(ZK + ["/hbase", "/hbase/rs"]), None, where="zxid 0x0")
    assert resolve_chroot(_nodes(ZK), None, where="zxid 0x0", required=False) is None


def test_describe_names_a_few_top_level_znodes() -> None:
    many = [f"/n{i:02}" for i in range(12)]
    assert describe_tree(many) == "12 znodes, top-level /n00, /n01, /n02, /n03, /n04, /n05, /n06, /n07 and 4 more"


@pytest.mark.parametrize(("paths", "text"), [
    pytest.param([f"/n{i}" for i in range(8)], "8 znodes, top-level /n0, /n1, /n2, /n3, /n4, /n5, /n6, /n7",
                 id="eight-named-none-more"),
    pytest.param([f"/n{i}" for i in range(9)], "9 znodes, top-level /n0, /n1, /n2, /n3, /n4, /n5, /n6, /n7 and 1 more",
                 id="nine-one-more"),
    pytest.param(["/"], "1 znodes", id="root-only-no-top-level"),
    pytest.param([], "0 znodes", id="empty"),
])
def test_describe_tree_exact_text(paths, text) -> None:
    """The text the "no Kafka metadata" error prints (user-visible): at most 8 top-level znodes
    named, "and N more" only when more than 8, no "top-level" part when there is none."""
    assert describe_tree(paths) == text


def test_each_refusal_is_one_line_naming_its_option_or_source() -> None:
    with pytest.raises(UsageError) as given:
        resolve_chroot(_nodes(CHROOTED), "/other", where="zxid 0x5", source="snap.5")
    assert (given.value.option, given.value.path) == ("--chroot", None)
    assert given.value.reason == ("no Kafka znodes (/brokers/ids) under --chroot /other at zxid 0x5; Kafka's znodes "
                                  "are under /kafka")
    with pytest.raises(UsageError) as several:
        resolve_chroot(_nodes(AT_ROOT + CHROOTED), None, where="zxid 0x5", source="snap.5")
    assert (several.value.option, several.value.path) == (None, "snap.5")
    assert several.value.reason == ("the ZooKeeper tree at zxid 0x5 holds Kafka's znodes in 2 places (/, /kafka): "
                                    "choose one with --chroot")
    with pytest.raises(FormatError) as nowhere:
        resolve_chroot(_nodes(ZK), None, where="zxid 0x0", source="snap.0")
    assert nowhere.value.path == "snap.0"
    assert str(nowhere.value).startswith("snap.0")
    assert ("no Kafka metadata in the ZooKeeper tree at zxid 0x0: no /brokers/ids or /brokers/topics at / or under "
            "any chroot (4 znodes, top-level /zookeeper)") in str(nowhere.value)


def test_a_chroot_given_on_a_tree_without_kafka_says_so() -> None:
    with pytest.raises(UsageError) as given:
        resolve_chroot(_nodes(ZK), "/kafka", where="zxid 0x5")
    assert given.value.reason == ("no Kafka znodes (/brokers/ids) under --chroot /kafka at zxid 0x5; the tree holds "
                                  "no Kafka znodes at all (4 znodes, top-level /zookeeper)")


def test_a_chroot_not_yet_created_is_kept_when_not_required() -> None:
    # a history may create Kafka's znodes under the chroot later: the chroot given stands
    assert resolve_chroot(_nodes(ZK), "/kafka", where="zxid 0x0", required=False) == "/kafka"
    # and when required it must hold them (counter-case above); the root given stands the same way
    assert resolve_chroot(_nodes(CHROOTED), "", where="zxid 0x0", required=False) == ""


def test_a_chroot_given_without_kafka_names_every_place_kafka_is() -> None:
    with pytest.raises(UsageError) as given:
        resolve_chroot(_nodes(AT_ROOT + CHROOTED), "/other", where="zxid 0x5")
    assert given.value.reason == ("no Kafka znodes (/brokers/ids) under --chroot /other at zxid 0x5; Kafka's znodes "
                                  "are under /, /kafka")
