"""``kreplica fleet scan`` and ``kreplica fleet analyze``: the single-partition analyses run
fleet-wide on Apache Spark (embedded local mode by default, a cluster with ``--master``)."""

from __future__ import annotations

import json
from functools import partial
from importlib.util import find_spec
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from kreplica.cli.exit_codes import ExitCode
from kreplica.cli.options.common import DebugOption, FormatOption, KafkaVersionOption, require_paths
from kreplica.cli.options.protocols import AUTO, ProtocolOption
from kreplica.cli.options.sources import ChrootOption
from kreplica.cli.options.usage import UsageCommand, command
from kreplica.cli.runner import error_line, runs_command, show
from kreplica.formats.usage import UsageError

if TYPE_CHECKING:
    from kreplica.pipeline.fleet import ScanJob
    from kreplica.pipeline.scan.run import ScanPlan

#: What the fleet commands need beyond kreplica's own dependencies (about 500 MB, so an extra:
#: no other command imports them), and how to install it.
FLEET_MODULES = ("pyspark", "pyarrow")
FLEET_INSTALL = "pip install 'kreplica[fleet]'"

app = typer.Typer(help="Fleet-scale forensics on Apache Spark: scan many brokers' copies into Parquet tables, "
                       f"then analyse every partition across its replicas. Needs the fleet extra ({FLEET_INSTALL}) "
                       "and Java 17.", no_args_is_help=True)


def require_fleet_extra() -> None:
    """Exit 2 with the install line when PySpark or pyarrow is not installed."""
    missing = [name for name in FLEET_MODULES if find_spec(name) is None]
    if missing:
        error_line(f"kreplica: error: fleet runs on PySpark and pyarrow, installed with the fleet extra "
                   f"({' and '.join(missing)} missing): {FLEET_INSTALL}")
        raise typer.Exit(ExitCode.USAGE)


class FleetCommand(UsageCommand):
    """A fleet command: without the fleet extra it says how to install it before parsing its
    arguments (``kreplica fleet scan`` alone gets the install line, not "missing ROOT"), while
    ``--help`` still works."""

    def parse_args(self, ctx, args: list[str]) -> list[str]:
        if not ctx.resilient_parsing and not set(args) & set(ctx.help_option_names):
            require_fleet_extra()
        return super().parse_args(ctx, args)


MasterOption = Annotated[Optional[str], typer.Option(
    "--master", metavar="URL", show_default=False,
    help="Spark master: local[*] (embedded, every core; the default unless spark-submit gave one), local[N], "
         "or a cluster URL (spark://host:7077, yarn, k8s://...).")]
ConfOption = Annotated[Optional[list[str]], typer.Option(
    "--conf", metavar="KEY=VALUE", show_default=False,
    help="Spark configuration, as spark-submit --conf takes it (repeatable), e.g. "
         "spark.hadoop.fs.s3a.endpoint=http://minio:9000.")]
SparkLogOption = Annotated[Optional[str], typer.Option(
    "--spark-log", metavar="LEVEL", show_default=False,
    help="Show Spark's own log at this log4j level (OFF, FATAL, ERROR, WARN, INFO, DEBUG, TRACE, ALL), with the "
         "JVM's and the Python workers' other output; by default none of it (--debug: WARN).")]


def _spark_log(level: str | None, debug: bool):
    """How much of Spark's output to show (:class:`~kreplica.pipeline.spark.session.SparkLog`)."""
    from kreplica.cli.options.names import require_choice
    from kreplica.cli.runner import debug_enabled
    from kreplica.pipeline.spark.session import SPARK_LOG_LEVELS, SparkLog

    if level is not None:
        require_choice("--spark-log", level.upper(), SPARK_LOG_LEVELS)
    return SparkLog.choose(level, debug_enabled(debug))


def _conf(pairs: list[str] | None) -> dict[str, str]:
    conf = {}
    for pair in pairs or ():
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"expected KEY=VALUE, got {pair!r}", option="--conf")
        conf[key.strip()] = value
    return conf


#: what the scan's options need and are renamed from, and which of the analysis's exclude each other
_SCAN_RULES = dict(needs={"--record-bytes": "--records"}, renamed=("--out", "--payloads"))
_ANALYZE_RULES = dict(exclusive=[("SOURCE", "--leaders"), ("--at-zxid", "--at-offset")],
                      needs={"--at-zxid": "SOURCE", "--at-offset": "SOURCE", "--chroot": "SOURCE"})
_SCAN = command(**_SCAN_RULES, base=FleetCommand)
_ANALYZE = command(**_ANALYZE_RULES, base=FleetCommand)
_RUN = command(exclusive=_ANALYZE_RULES["exclusive"], needs={**_SCAN_RULES["needs"], **_ANALYZE_RULES["needs"]},
               renamed=_SCAN_RULES["renamed"], base=FleetCommand)

RootArgument = Annotated[str, typer.Argument(
    metavar="ROOT", show_default=False,
    help="The fleet: ROOT/<broker>/<logdir>/<topic>-<partition>/ (a path or file:// URI every executor can read, "
         "or any URI Spark reads: hdfs://, s3a://, gs://, abfs://, viewfs://...).")]
OutOption = Annotated[str, typer.Option("--output-dir", metavar="DIR", help="Where the tables go: a new or empty directory, a "
                                                                   "path every executor shares or any URI Spark writes "
                                                                   "(hdfs://, s3a://, gs://, abfs://...).")]
RecordsOption = Annotated[bool, typer.Option("--records", help="Also write a records table: offset, timestamp, key "
                                                               "and value sizes and their XXH64.")]
PayloadsOption = Annotated[bool, typer.Option("--record-bytes", help="With --records, keep key and value bytes too.")]
SourcesArgument = Annotated[Optional[list[str]], typer.Argument(
    metavar="[SOURCE]...", show_default=False,
    help="A cluster state (anything cluster-state reads) naming each partition's leader.")]
LeadersOption = Annotated[Optional[str], typer.Option(
    "--leaders", metavar="FILE", help='Leaders as JSON: {"partitions":[{"topic":"t","partition":0,"leader":3},...]}.')]
AtZxidOption = Annotated[Optional[str], typer.Option("--at-zxid", metavar="ZXID",
                                                     help="ZooKeeper SOURCE: replay up to this zxid.")]
AtOffsetOption = Annotated[Optional[str], typer.Option("--at-offset", metavar="OFFSET",
                                                       help="KRaft SOURCE: replay up to this offset.")]


def _scan_job(root: str, out: str, records: bool, payloads: bool, conf: list[str] | None, spark_log: str | None,
              debug: bool) -> ScanJob:
    """Options checked, Java found and the fleet found before Spark starts (bad input fails fast)."""
    from kreplica.pipeline.fleet import ScanJob
    from kreplica.pipeline.scan.run import plan_scan
    from kreplica.pipeline.spark.session import require_java

    spark_conf = _conf(conf)
    log = _spark_log(spark_log, debug)
    _require_local(root)
    require_java()
    return ScanJob(plan_scan(root, out), spark_conf, log, records, payloads)


def _note_break_even(plan: ScanPlan, master: str | None) -> None:
    """One line on stderr when local evidence is small enough that the single-partition
    commands answer sooner than the fleet (:mod:`~kreplica.pipeline.break_even`)."""
    from kreplica.pipeline import break_even
    from kreplica.pipeline.spark.session import DEFAULT_MASTER, local_cores
    from kreplica.report.text.numbers import count

    cores = local_cores(master or DEFAULT_MASTER)
    if plan.remote or cores is None:
        return
    size = break_even.measure((d.path for d in plan.log_dirs), enough=break_even.break_even_partitions())
    if size.below_break_even(cores):
        error_line(f"kreplica: note: {count(size.partitions, 'partition')}, {count(size.bytes, 'byte')}: "
                   f"{', '.join(break_even.COMMANDS)} answer this sooner than Spark starts (on "
                   f"{count(cores, 'core')} the fleet pays from about {break_even.break_even_partitions()} "
                   f"partitions or {break_even.break_even_bytes(cores) / 1e9:.0f} GB)")


@app.command("scan", cls=_SCAN, short_help="Walk every segment of a fleet once into Parquet tables.")
@runs_command
def scan(
    root: RootArgument,
    out: OutOption,
    master: MasterOption = None,
    records: RecordsOption = False,
    payloads: PayloadsOption = False,
    conf: ConfOption = None,
    spark_log: SparkLogOption = None,
    output_format: FormatOption = None,
    debug: DebugOption = False,
) -> int:
    """Walk every segment of every replica under ROOT once, in Spark tasks running kreplica's own
    readers, and write Parquet tables under DIR: replicas (checkpoint values, leader-epoch-checkpoint
    entries, clean-shutdown marker), segments, batches (one row per batch header), markers, findings
    (the inspect-log findings, with broker and partition), group_offsets and transactions (the
    committed offsets of each __consumer_offsets replica as groups loads it, and the transactional ids
    of each __transaction_state replica as transactions loads it; local evidence only) and, with
    --records, records. Work is
    distributed per segment file, balanced by size (a segment big enough to keep the other cores
    waiting is split at batch boundaries); no row passes through the driver. ROOT may be any URI
    Spark reads (hdfs://, s3a://, gs://, ... with the connector on Spark's classpath; settings by
    --conf): Spark then lists and fetches the files; a segment up to 128 MiB is walked from
    memory, a larger one from the ranges Spark reads of it, written into a sparse file on the
    executor's disk (never held whole in memory, whatever its size; walked by one task, not
    split), and in local mode the JVM gets 1 GiB plus 512 MiB per core unless --conf
    spark.driver.memory says otherwise. DIR is a path every executor shares (any local
    path in local mode), where the tasks write the tables themselves, or any URI Spark writes
    (hdfs://, s3a://, gs://, abfs://, viewfs://... with its connector), where Spark's own
    writer does (there the XXH64 columns of records are decimal(20,0), as Spark reads the
    uint64 of a local table). Tables are written into DIR/_temporary and moved into place when
    all are complete, each then marked with a _SUCCESS file; an interrupted scan leaves none
    that is.

    Exit status: 0 no findings of error severity, 1 damage found, 2 bad usage or unreadable input
    (no java on PATH or no fleet extra included), 3 internal error.
    """
    from kreplica.pipeline.fleet import scan_fleet
    from kreplica.report.results.fleet import FleetScanReport

    job = _scan_job(root, out, records, payloads, conf, spark_log, debug)
    _note_break_even(job.plan, master)
    return show(FleetScanReport(out, scan_fleet(job, master, _progress(job.log))), output_format)


def _progress(log):
    """The display of Spark's jobs on stderr (:func:`~kreplica.cli.progress.fleet_progress`),
    unless Spark's own log is shown there."""
    from kreplica.cli.progress import fleet_progress

    return partial(fleet_progress, not log.shown)


def _analysis(sources, leaders, at_zxid, at_offset, chroot, protocol: str, kafka_version):
    """The leaders' facts and the :class:`~kreplica.pipeline.analyze.run.AnalysisSettings` of an
    analysis, read and checked before Spark starts."""
    from kreplica.analysis.replication.truncation import resolve_protocol
    from kreplica.pipeline.analyze.run import AnalysisSettings
    from kreplica.report.schemas import fleet as report

    proto, version = resolve_protocol(protocol, kafka_version)
    facts, facts_source = _facts(sources, leaders, at_zxid, at_offset, chroot)
    return facts, AnalysisSettings(facts_source, proto, version,
                                   partial(report.partition_objects, kafka_version=version))


@app.command("analyze", cls=_ANALYZE,
             short_help="Per partition across its replicas: epochs, truncation, divergence, loss at risk.")
@runs_command
def analyze(
    scan_dir: Annotated[str, typer.Argument(metavar="DIR", show_default=False,
                                            help="The output of fleet scan (a path or a URI Spark reads).")],
    sources: SourcesArgument = None,
    leaders: LeadersOption = None,
    at_zxid: AtZxidOption = None,
    at_offset: AtOffsetOption = None,
    chroot: ChrootOption = None,
    protocol: ProtocolOption = AUTO,
    kafka_version: KafkaVersionOption = None,
    master: MasterOption = None,
    conf: ConfOption = None,
    spark_log: SparkLogOption = None,
    output_format: FormatOption = None,
    debug: DebugOption = False,
) -> int:
    """For every partition in the scan's tables, across all its replicas (in broker-id order): each
    replica's epoch lineage and its disagreements with leader-epoch-checkpoint (as epochs prints them),
    the truncation each follower would do against the leader (as truncate-plan prints it), pairwise
    divergence (as diverge prints it), the consumer_impact of each truncation that loses records on
    every group the scan's group_offsets table has an offset for in the partition (as truncate-plan
    prints it), and a fleet_partition object with the committed data at risk.
    The leader comes from a cluster state SOURCE, from --leaders, or else is the first replica of
    KIP-966's recovery order (the highest last epoch, then log end offset, of each log as its broker
    loads it: plan-elect's rank 1), and each result says which. Results also go to DIR/analysis
    as Parquet; text output ranks the worst partitions. Local tables of less than 8 MiB (a scan of
    some 8 GB) are analysed in this process, without starting Spark (--master, --conf and
    --spark-log then have nothing to act on); larger ones in one Spark job; tables at a URI are
    read, and the analysis written, by Spark. A scan whose tables are not marked complete
    (_SUCCESS: an interrupted scan) is refused.

    Exit status: 0 no committed data at risk, no divergence and no damage, 1 some partition would
    lose committed data, has divergent replicas or an error finding in a replica's log, 2 bad usage or unreadable input (no java on PATH or no fleet
    extra included), 3 internal error.
    """
    from kreplica.pipeline.analyze.partitions import check_scan_dir
    from kreplica.pipeline.evidence.remote import is_remote
    from kreplica.pipeline.fleet import analyze_fleet
    from kreplica.report.results.fleet import FleetAnalysisReport

    log = _spark_log(spark_log, debug)
    spark_conf = _conf(conf)
    _require_local(scan_dir)
    if not is_remote(scan_dir):
        scan_dir = _local(scan_dir)
        check_scan_dir(scan_dir)
    facts, settings = _analysis(sources, leaders, at_zxid, at_offset, chroot, protocol, kafka_version)
    partitions = analyze_fleet(scan_dir, facts, settings, master=master, conf=spark_conf, log=log,
                               progress=_progress(log))
    return show(FleetAnalysisReport(partitions), output_format)


@app.command("run", cls=_RUN, short_help="fleet scan, then fleet analyze of its tables, in one Spark session.")
@runs_command
def run(
    root: RootArgument,
    sources: SourcesArgument = None,
    out: OutOption = ...,
    master: MasterOption = None,
    records: RecordsOption = False,
    payloads: PayloadsOption = False,
    leaders: LeadersOption = None,
    at_zxid: AtZxidOption = None,
    at_offset: AtOffsetOption = None,
    chroot: ChrootOption = None,
    protocol: ProtocolOption = AUTO,
    kafka_version: KafkaVersionOption = None,
    conf: ConfOption = None,
    spark_log: SparkLogOption = None,
    output_format: FormatOption = None,
    debug: DebugOption = False,
) -> int:
    """fleet scan ROOT --output-dir DIR, then fleet analyze DIR [SOURCE]..., with Spark started once for
    both: the fleet_scan object, then every object fleet analyze prints (text: the scan's line,
    then the ranking). The tables, the options and the meaning of each object are those of the two
    commands (see them); so is the choice to analyse small tables in this process.

    Exit status: 0 no damage found, no committed data at risk and no divergence, 1 any of them, 2
    bad usage or unreadable input (no java on PATH or no fleet extra included), 3 internal error.
    """
    from kreplica.pipeline.fleet import run_fleet
    from kreplica.report.results.fleet import FleetAnalysisReport

    job = _scan_job(root, out, records, payloads, conf, spark_log, debug)
    facts, settings = _analysis(sources, leaders, at_zxid, at_offset, chroot, protocol, kafka_version)
    _note_break_even(job.plan, master)
    partitions = run_fleet(job, facts, settings, master=master, progress=_progress(job.log))
    return show(FleetAnalysisReport(partitions, out), output_format)


def _local(path: str) -> str:
    """A local path given as a path or a ``file://`` URI, as a path."""
    from kreplica.pipeline.evidence.layout import local_path

    return str(local_path(path))


def _require_local(root: str) -> None:
    """A local ROOT or DIR (a path or ``file://`` URI) must exist; a remote one is Spark's to list."""
    from kreplica.pipeline.evidence.layout import local_path
    from kreplica.pipeline.evidence.remote import is_remote

    if not is_remote(root):
        require_paths([str(local_path(root))])


def _facts(sources, leaders, at_zxid, at_offset, chroot):
    from kreplica.formats.errors import FormatError
    from kreplica.pipeline.analyze import partitions as pipeline

    if leaders:
        require_paths([leaders], "--leaders")
        try:
            with open(leaders, encoding="utf-8") as fh:
                document = json.load(fh)
            return pipeline.facts_from_leaders(document), pipeline.LEADER_FROM_LEADERS_FILE
        except OSError as exc:
            raise FormatError(exc.strerror or "cannot be read", path=leaders) from None
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise FormatError(f'not a leaders document {{"partitions":[{{"topic","partition","leader"}}]}}: {exc}',
                              path=leaders) from None
    if sources:
        from kreplica.cli.options.sources import load_source

        state = load_source(sources, at_zxid=at_zxid, at_offset=at_offset, chroot=chroot)
        return pipeline.facts_from_cluster_state(state), pipeline.LEADER_FROM_CLUSTER_STATE
    return {}, None
