"""Where the item primitives run: DuckDB (default) or Apache Spark, over the same tables.

The primitives are SQL files in ``sql/`` written once in DuckDB's dialect. :class:`DuckDBEngine`
runs them on the live warehouse or on Parquet files; :class:`SparkEngine` runs the sqlglot
transpilation of the same text (``sqlglot.transpile(sql, read="duckdb", write="spark")``) on
Spark temp views over the same Parquet files, so a cluster reads exactly what DuckDB read.
The Parquet layout is the snapshot's: ``<dir>/<table>/*.parquet``.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any, Protocol

import duckdb
import pandas as pd

from evalhouse.common.resources import read_sql
from evalhouse.config import duckdb_config
from evalhouse.errors import InputError

TABLES = ("item", "checkpoint", "item_response")


@cache
def primitive(name: str) -> str:
    return read_sql("evalhouse.analytics.items", name)


def literal(value: Any) -> str:
    """A SQL literal both engines read alike (strings quoted, numbers in repr)."""
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, bool) or value is None:
        raise InputError(f"no SQL literal for {value!r}")
    return repr(float(value)) if isinstance(value, float) else str(value)


def render(name: str, **params: Any) -> str:
    """A primitive with its parameters filled in (lists become ``a, b, c`` literal lists)."""
    values = {k: ", ".join(literal(x) for x in v) if isinstance(v, list | tuple) else v for k, v in params.items()}
    return primitive(name).format(**values)


class Engine(Protocol):
    name: str

    def query(self, sql: str) -> pd.DataFrame: ...


class DuckDBEngine:
    """Runs primitives on an open DuckDB connection (the warehouse, a snapshot, or Parquet views)."""

    name = "duckdb"

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con

    @classmethod
    def over_parquet(cls, root: Path) -> DuckDBEngine:
        con = duckdb.connect(config=duckdb_config())
        for table in TABLES:
            files = sorted((Path(root) / table).rglob("*.parquet"))
            if not files:
                raise InputError(f"{root}/{table}/ holds no Parquet files")
            listed = ", ".join(literal(str(f)) for f in files)
            con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet([{listed}])")
        return cls(con)

    def query(self, sql: str) -> pd.DataFrame:
        return to_frame(self.con.sql(sql).to_arrow_table())


class SparkEngine:
    """Runs the sqlglot transpilation of each primitive on Spark temp views over Parquet files."""

    name = "spark"

    def __init__(self, spark: Any, root: str | Path) -> None:
        self.spark = spark
        base = str(root).rstrip("/")
        for table in TABLES:
            path = f"{base}/{table}"
            if "://" not in base and not Path(path).exists():
                raise InputError(f"{path} does not exist: export the item tables first")
            spark.read.parquet(path).createOrReplaceTempView(table)

    def query(self, sql: str) -> pd.DataFrame:
        return self.spark.sql(to_spark(sql)).toPandas()


def to_frame(data: Any) -> pd.DataFrame:
    """An Arrow result as pandas, with the id columns dictionary-encoded (categoricals): millions of
    observation rows name a few thousand items and checkpoints."""
    import pyarrow as pa  # noqa: PLC0415 - pyarrow only for the Spark hand-off
    import pyarrow.compute as pc  # noqa: PLC0415 - pyarrow only for the Spark hand-off

    encoded = []
    for name in ("item_id", "ckpt", "checkpoint_id"):
        if name in data.column_names and pa.types.is_string(data.schema.field(name).type):
            data = data.set_column(data.schema.get_field_index(name), name, pc.dictionary_encode(data[name]))
            encoded.append(name)
    frame = data.to_pandas()
    for name in encoded:  # categories in lexical order, so sorting by the column sorts by the text
        frame[name] = frame[name].cat.reorder_categories(sorted(frame[name].cat.categories))
    return frame


def to_spark(sql: str) -> str:
    import sqlglot  # noqa: PLC0415 - sqlglot is the optional spark extra

    return sqlglot.transpile(sql, read="duckdb", write="spark")[0]


def local_spark(app: str = "evalhouse-items", cores: int = 2, conf: Mapping[str, str] | None = None) -> Any:
    """The SparkSession to use: the cluster's under ``spark-submit``, else local mode on this machine.

    ``spark-submit`` starts the JVM and tells the Python driver its port (``PYSPARK_GATEWAY_PORT``);
    then its ``--master`` and ``--conf`` settings stand. Otherwise a small local session is made
    (Arrow transfers on, few shuffle partitions, no UI), with ``conf``'s settings on top: those
    that start the JVM (``spark.driver.extraJavaOptions``, ``spark.driver.memory``) apply, since the
    session starts it.
    """
    import os  # noqa: PLC0415 - os only to set Spark's environment

    try:
        from pyspark.sql import SparkSession  # noqa: PLC0415 - pyspark is the optional spark extra
    except ImportError as exc:
        raise InputError(
            "the spark engine is the 'spark' extra, not installed: .venv/bin/pip install -e '.[spark]'"
            " (make test installs it; Spark needs Java 17+), or use --engine duckdb"
        ) from exc

    builder = SparkSession.builder.appName(app).config("spark.sql.execution.arrow.pyspark.enabled", "true")
    if "PYSPARK_GATEWAY_PORT" in os.environ:
        return builder.getOrCreate()
    builder = (
        builder.master(f"local[{cores}]")
        .config("spark.sql.shuffle.partitions", str(max(2, cores * 2)))
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "2g")
    )
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def export_parquet(con: duckdb.DuckDBPyConnection, root: Path) -> Path:
    """Write the item tables as ``<root>/<table>/data_0.parquet`` (the snapshot layout)."""
    root = Path(root)
    for table in TABLES:
        (root / table).mkdir(parents=True, exist_ok=True)
        target = root / table / "data_0.parquet"
        con.execute(f"COPY (SELECT * FROM {table}) TO {literal(str(target))} (FORMAT parquet, COMPRESSION zstd)")
    return root
