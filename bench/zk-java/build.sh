#!/usr/bin/env bash
# Compile ZkLoad.java against ZooKeeper's own jar (Debian: apt-get install -y zookeeper, 3.8.0)
# into bench/data/zk-java/ (git-ignored). bench_zookeeper.py runs this on first use.
# Needs a JDK >= 11 (tested with OpenJDK 17). The jar's manifest Class-Path names its
# dependencies under /usr/share/java, so the jar alone is the class path.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OUT="${ZK_JAVA_BENCH_DIR:-$HERE/../data/zk-java}"
JAR="${ZK_JAR:-/usr/share/java/zookeeper.jar}"
[ -f "$JAR" ] || { echo "build.sh: $JAR not found (apt-get install -y zookeeper)" >&2; exit 1; }
mkdir -p "$OUT"
javac -nowarn -encoding UTF-8 -d "$OUT" -cp "$JAR" "$HERE"/ZkLoad.java
echo "build.sh: compiled ZkLoad into $OUT" >&2
