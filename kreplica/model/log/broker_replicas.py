"""Each broker's copy of its log directory, as ``--log-dirs BROKER=DIR`` names them
(``plan-elect``, ``timeline``): the partitions they hold, and their replicas read once into
:class:`~kreplica.model.log.partition_log.PartitionLog` values labelled ``broker-N``.

``timeline`` lists every partition of each log directory (:meth:`BrokerLogDirs.partitions`)
before its walk and reads the replicas of the partitions its events name afterwards
(:meth:`BrokerPartitions.read`); ``plan-elect`` reads the elected partitions' replicas
(:meth:`BrokerLogDirs.read_partitions`), where a broker's DIR may also be that partition's
directory itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from kreplica.model.log.partition_log import PartitionLog, read_partition_log
from kreplica.model.logdir.log_dir import LogDir, PartitionDir, find_log_dirs, scan_log_dir

#: a broker's replica before it is read: its partition directory and the log directory holding it
Located = tuple[PartitionDir, LogDir]


def broker_label(broker: int) -> str:
    return f"broker-{broker}"


@dataclass(frozen=True)
class BrokerLogDirs:
    """``dirs``: broker id -> its copied log directory (or partition directory), as given."""

    dirs: Mapping[int, str]

    def __bool__(self) -> bool:
        return bool(self.dirs)

    def partitions(self) -> BrokerPartitions:
        """Every partition directory of every log directory given, listed (not read)."""
        out: dict[str, dict[int, Located]] = {}
        for broker, path in sorted(self.dirs.items()):
            log_dir = scan_log_dir(path)
            for pdir in log_dir.partitions:
                if pdir.key is not None:
                    out.setdefault(pdir.name, {})[broker] = (pdir, log_dir)
        return BrokerPartitions(out)

    def read_partitions(self, names: Mapping[object, str]) -> dict[object, dict[int, PartitionLog]]:
        """For each key of ``names`` (a partition's name as its directory is named), each broker's
        replica read once: from the partition directory of that name in the broker's log
        directory, or from the broker's DIR when it is that partition directory."""
        out: dict = {}
        for broker, directory in sorted(self.dirs.items()):
            base = Path(directory)
            for key, name in names.items():
                if (base / name).is_dir():
                    log_dir = scan_log_dir(base)
                    pdir = next(pd for pd in log_dir.partitions if pd.name == name)
                elif base.name == name:
                    log_dir = find_log_dirs([directory])[0]
                    pdir = log_dir.partitions[0]
                else:
                    continue
                out.setdefault(key, {})[broker] = read_partition_log(pdir, log_dir).relabelled(broker_label(broker))
        return out


@dataclass(frozen=True)
class BrokerPartitions:
    """The partitions the brokers' log directories hold (:meth:`BrokerLogDirs.partitions`):
    ``located`` maps a partition's name to each broker's replica, not yet read."""

    located: Mapping[str, Mapping[int, Located]]

    def __bool__(self) -> bool:
        return bool(self.located)

    def __contains__(self, name: object) -> bool:
        return name in self.located

    def read(self, name: str) -> dict[int, PartitionLog]:
        """Each broker's replica of partition ``name``, read once (in broker order)."""
        return {b: read_partition_log(pdir, log_dir, label=broker_label(b))
                for b, (pdir, log_dir) in sorted(self.located[name].items())}
