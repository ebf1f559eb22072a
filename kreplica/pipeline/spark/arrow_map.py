"""Arrow record batches in and out of Python tasks without pandas.

``DataFrame.mapInArrow`` hands each task a DataFrame's rows as Arrow record batches and takes
batches back, column by column; but PySpark insists on pandas before it builds the function,
although the Python workers never import it for this. pandas is not among the fleet extra's
dependencies, so :func:`map_in_arrow` builds the same function without that check.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pyarrow as pa


#: The Arrow type a column of each unsigned type takes in a table Spark writes.
SPARK_UNSIGNED = {pa.uint64(): pa.decimal128(20, 0)}


def map_in_arrow(df, func: Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]], schema):
    """``df.mapInArrow(func, schema)``, pandas or not (``schema``: a Spark ``StructType``)."""
    from pyspark.sql import DataFrame
    from pyspark.sql.udf import UserDefinedFunction
    from pyspark.util import PythonEvalType

    udf = UserDefinedFunction(func, returnType=schema, evalType=PythonEvalType.SQL_MAP_ARROW_ITER_UDF)
    column = udf(*[df[name] for name in df.columns])
    return DataFrame(df._jdf.mapInArrow(column._jc, False, None), df.sparkSession)


def spark_schema(schema: pa.Schema):
    """A Spark ``StructType`` for an Arrow schema; a ``uint64`` column, which Spark has no type
    for, as ``decimal(20,0)`` (:data:`SPARK_UNSIGNED`): what Spark reads a Parquet ``UINT_64``
    column as."""
    from pyspark.sql.pandas.types import from_arrow_type
    from pyspark.sql.types import DecimalType, StructField, StructType

    def spark_type(arrow_type: pa.DataType):
        return DecimalType(20, 0) if arrow_type in SPARK_UNSIGNED else from_arrow_type(arrow_type)
    return StructType([StructField(f.name, spark_type(f.type)) for f in schema])


def for_spark(table: pa.Table) -> pa.Table:
    """``table`` with its ``uint64`` columns as ``decimal128(20, 0)`` (:func:`spark_schema`)."""
    for i, field in enumerate(table.schema):
        target = SPARK_UNSIGNED.get(field.type)
        if target is not None:
            table = table.set_column(i, field.name, table.column(i).cast(target))
    return table
