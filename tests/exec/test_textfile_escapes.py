"""TEXTFILE tables with LazySimpleSerDe's ESCAPED BY, COLLECTION ITEMS TERMINATED BY and MAP KEYS
TERMINATED BY (or the SerDe properties escape.delim, colelction.delim / collection.delim and
mapkey.delim), checked against Hive's own LazySimpleSerDe (hive-serde in pyspark's jars, called
through the test session's JVM): the bytes hivepark writes are the bytes Hive's SerDe writes for
the same rows, lines written by Hive's SerDe read back as Hive reads them, and query rows equal
plain Spark SQL's over the same values."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hivepark.errors import UnsupportedError

COLS = ["a", "n", "arr", "m", "s"]
TYPES = ["string", "int", "array<string>", "map<string,string>", "struct<x:string,y:int>"]
DDL = "a STRING, n INT, arr ARRAY<STRING>, m MAP<STRING,STRING>, s STRUCT<x:STRING,y:INT>"

#: values holding each separator, the escape, the bytes Hive escapes besides (\004 ... \010), a tab
#: (not escaped), the NULL text, empty strings and NULLs at every level
ROWS = [
    ["plain", 1, ["x", "y"], {"k": "v"}, ["sx", 2]],
    ["a,b|c:d\\e", -5, ["i,1", "i|2", "i:3", "i\\4", None, ""], {"k,1": "v|1", "k:2": None, "k\\3": ""},
     ["x,|:\\", None]],
    ["ctl\x04\x05\x06\x07\x08\tend\x0b", None, [], {}, [None, 7]],
    ["", 0, ["", "x"], {"": "e"}, ["", 0]],
    [None, None, None, None, None],
    ["\\N", 3, ["\\N"], {"\\N": "\\N"}, ["\\N", 3]],
    ["trailing\\", 4, ["last\\"], {"kk\\": "vv\\"}, ["\\", 4]],
]


def _java(jvm, v):
    if isinstance(v, list):
        out = jvm.java.util.ArrayList()
        for x in v:
            out.add(_java(jvm, x))
        return out
    if isinstance(v, dict):
        m = jvm.java.util.LinkedHashMap()
        for k, x in v.items():
            m.put(_java(jvm, k), _java(jvm, x))
        return m
    return v


def _python(v, typ: str):
    """A value Hive's SerDe read (copyToStandardJavaObject) as Spark's row gives it."""
    if v is None:
        return None
    if typ.startswith("array<"):
        return [_python(x, typ[6:-1]) for x in v]
    if typ.startswith("map<"):
        return {_python(k, "string"): _python(x, typ[4:-1].split(",", 1)[1]) for k, x in v.items()}
    if typ.startswith("struct<"):
        types = [f.split(":", 1)[1] for f in typ[7:-1].split(",")]
        return tuple(_python(x, t) for x, t in zip(v, types))
    return str(v) if typ == "string" else v


class HiveSerDe:
    """Hive's LazySimpleSerDe with the given properties (field.delim, colelction.delim, ...)."""

    def __init__(self, spark, cols=COLS, types=TYPES, **props):
        self.jvm = spark._jvm
        self.cols, self.types = cols, types
        p = self.jvm.java.util.Properties()
        p.setProperty("columns", ",".join(cols))
        p.setProperty("columns.types", ":".join(types))
        for k, v in props.items():
            p.setProperty(k, v)
        self.serde = self.jvm.org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe()
        self.serde.initialize(None, p)
        utils = self.jvm.org.apache.hadoop.hive.serde2.typeinfo.TypeInfoUtils
        row_type = utils.getTypeInfoFromTypeString("struct<" + ",".join(f"{c}:{t}" for c, t in zip(cols, types)) + ">")
        self.inspector = utils.getStandardJavaObjectInspectorFromTypeInfo(row_type)

    def line(self, row) -> bytes:
        return bytes(self.serde.serialize(_java(self.jvm, row), self.inspector).copyBytes())

    def file(self, rows) -> bytes:
        return b"".join(self.line(r) + b"\n" for r in rows)

    def read(self, line: bytes) -> tuple:
        lazy = self.serde.deserialize(self.jvm.org.apache.hadoop.io.Text(bytearray(line)))
        std = self.jvm.org.apache.hadoop.hive.serde2.objectinspector.ObjectInspectorUtils.copyToStandardJavaObject(
            lazy, self.serde.getObjectInspector())
        return tuple(_python(v, t) for v, t in zip(std, self.types))


def _spark_rows(spark, rows, types=TYPES):
    """The rows as plain Spark's DataFrame."""
    from pyspark.sql.types import _parse_datatype_string

    schema = _parse_datatype_string("struct<" + ",".join(f"{c}:{t}" for c, t in zip(COLS, types)) + ">")
    return spark.createDataFrame([tuple(tuple(v) if t.startswith("struct") and v is not None else v
                                        for v, t in zip(r, types)) for r in rows], schema)


def _sorted(rows) -> list[tuple]:
    return sorted((tuple(r) for r in rows), key=repr)


def _collect(df) -> list[tuple]:
    return _sorted(tuple(tuple(v) if hasattr(v, "__fields__") else v for v in r) for r in df.collect())


def _lines(directory: str | Path) -> list[bytes]:
    """The lines of a directory's data files (recursively), sorted."""
    out: list[bytes] = []
    for root, _, files in os.walk(directory):
        for f in files:
            if not f.startswith((".", "_")):
                out += Path(root, f).read_bytes().split(b"\n")[:-1]
    return sorted(out)


DELIMITED = ("ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' ESCAPED BY '\\\\' COLLECTION ITEMS TERMINATED BY '|' "
             "MAP KEYS TERMINATED BY ':'")
SERDE_PROPS = {"field.delim": ",", "escape.delim": "\\", "colelction.delim": "|", "mapkey.delim": ":"}


@pytest.mark.parametrize("row_format", [
    DELIMITED,
    "ROW FORMAT SERDE 'org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe' WITH SERDEPROPERTIES ("
    "'field.delim'=',', 'escape.delim'='\\\\', 'colelction.delim'='|', 'mapkey.delim'=':')",
    "ROW FORMAT SERDE 'org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe' WITH SERDEPROPERTIES ("
    "'field.delim'=',', 'escape.delim'='\\\\', 'collection.delim'='|', 'mapkey.delim'=':')",
])
def test_escaped_textfile_writes_hives_bytes_and_reads_them_back(wh, spark, row_format):
    hive = HiveSerDe(spark, **SERDE_PROPS)
    _spark_rows(spark, ROWS).createOrReplaceTempView("given")
    wh.sql(f"CREATE TABLE t ({DDL}) {row_format} STORED AS TEXTFILE")
    wh.sql("INSERT INTO t SELECT * FROM given")
    assert _lines(os.path.join(wh.location, "t")) == sorted(hive.line(r) for r in ROWS)
    expected = _collect(spark.sql("SELECT * FROM given"))
    assert _collect(wh.sql("SELECT * FROM t")) == expected == _sorted(hive.read(hive.line(r)) for r in ROWS)
    # a query over the escaped values: filters and nested access read the unescaped values
    query = "SELECT a, arr[0], m['k,1'], s.x, size(arr) FROM {} WHERE a LIKE '%,%' OR array_contains(arr, 'i|2')"
    assert _collect(wh.sql(query.format("t"))) == _collect(spark.sql(query.format("given")))


def test_files_written_by_hive_read_as_hive_reads_them(wh, spark, tmp_path):
    """LOAD DATA of a file Hive's SerDe wrote, and of lines hand-written with escapes Hive never
    writes (an escaped ordinary character, a trailing escape, \\r and \\n as escape + r / n)."""
    hive = HiveSerDe(spark, **SERDE_PROPS)
    extra = [b"e\\xs\\\\,7,\\a|b\\|c,k\\:1:v:2|kk,\\r\\n\\q|8",
             b"cr\\r\\nlf\\,x,1,|,:,\\",
             b"\\", b"only,notanint\\,,,"]
    data = hive.file(ROWS) + b"".join(line + b"\n" for line in extra)
    src = tmp_path / "hive.txt"
    src.write_bytes(data)
    wh.sql(f"CREATE TABLE t ({DDL}) {DELIMITED} STORED AS TEXTFILE")
    wh.sql(f"LOAD DATA LOCAL INPATH '{src}' INTO TABLE t")
    expected = _sorted(hive.read(line) for line in data.split(b"\n")[:-1])
    assert _collect(wh.sql("SELECT * FROM t")) == expected
    assert ("exs\\", 7, ["a", "b|c"], {"k:1": "v:2", "kk": None}, ("\r\nq", 8)) in expected


def test_booleans_of_a_text_file_read_as_hives_lazyboolean(wh, spark, tmp_path):
    """Found by a hunt for bugs: a BOOLEAN field read as Spark's cast reads it ('t', 'yes', '1',
    ' true' were true, 'n' and '0' false), where Hive's LazyBoolean reads true and false, in any
    case, and nothing else (NULL), nested values too."""
    src = tmp_path / "flags.txt"
    texts = ["true", "TRUE", "False", "t", "yes", "1", "0", "n", " true", "", "\\N"]
    src.write_text("".join(f"{i}\x01{t}\x01{t}\x02false\n" for i, t in enumerate(texts)))
    wh.sql("CREATE TABLE flags (i INT, b BOOLEAN, a ARRAY<BOOLEAN>) STORED AS TEXTFILE")
    wh.sql(f"LOAD DATA LOCAL INPATH '{src}' INTO TABLE flags")
    hive = {"true": True, "false": False}
    assert _collect(wh.sql("SELECT i, b, a FROM flags")) == \
        _sorted((i, hive.get(t.lower()), [hive.get(t.lower()), False]) for i, t in enumerate(texts))
    assert _collect(wh.sql("SELECT i FROM flags WHERE b")) == [(0,), (1,)]


def test_escape_crlf_writes_line_ends_escaped(wh, spark):
    """LazySimpleSerDe's serialization.escape.crlf: with it, a string's \\r and \\n are written as
    the escape then r / n (one line per row); without it, as they are (as Hive writes them)."""
    cols, types = ["a", "b"], ["string", "array<string>"]
    rows = [["line1\r\nline2\n", ["x\ry", "z"]], ["plain", ["\n"]]]
    spark.createDataFrame(rows, "a string, b array<string>").createOrReplaceTempView("given")
    for name, props, prop_sql in (
            ("crlf", {"serialization.escape.crlf": "true"}, "TBLPROPERTIES ('serialization.escape.crlf'='true')"),
            ("plain_lf", {}, "")):
        hive = HiveSerDe(spark, cols, types, **{"field.delim": ",", "escape.delim": "\\", **props})
        wh.sql(f"CREATE TABLE {name} (a STRING, b ARRAY<STRING>) ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' "
               f"ESCAPED BY '\\\\' STORED AS TEXTFILE {prop_sql}")
        wh.sql(f"INSERT INTO {name} SELECT * FROM given")
        data = b"".join(Path(r, f).read_bytes() for r, _, fs in os.walk(os.path.join(wh.location, name))
                        for f in fs if not f.startswith((".", "_")))
        assert sorted(data.split(b"\n")) == sorted(hive.file(rows).split(b"\n"))
    assert _collect(wh.sql("SELECT * FROM crlf")) == _collect(spark.sql("SELECT * FROM given"))


def test_partitions_directories_concatenate_and_show_create_table(wh, spark, tmp_path):
    """Static and dynamic partition writes, INSERT OVERWRITE LOCAL DIRECTORY with the same ROW
    FORMAT and CONCATENATE write Hive's bytes; DESCRIBE FORMATTED shows the SerDe's properties;
    SHOW CREATE TABLE's DDL makes a table that writes the same bytes."""
    hive = HiveSerDe(spark, **SERDE_PROPS)
    _spark_rows(spark, ROWS).createOrReplaceTempView("given")
    wh.sql(f"CREATE TABLE p ({DDL}) PARTITIONED BY (k STRING) {DELIMITED} STORED AS TEXTFILE")
    wh.sql("INSERT INTO p PARTITION (k='static') SELECT * FROM given")
    wh.sql("SET hive.exec.dynamic.partition.mode=nonstrict")
    wh.sql("INSERT INTO p PARTITION (k) SELECT *, CASE WHEN n > 0 THEN 'pos' ELSE 'other' END FROM given")
    wh.sql("INSERT INTO p PARTITION (k='static') SELECT * FROM given")
    expected = sorted(hive.line(r) for r in ROWS)
    assert _lines(os.path.join(wh.location, "p", "k=static")) == sorted(expected * 2)
    assert sorted(_lines(os.path.join(wh.location, "p", "k=pos")) +
                  _lines(os.path.join(wh.location, "p", "k=other"))) == expected
    wh.sql("ALTER TABLE p PARTITION (k='static') CONCATENATE")
    assert _lines(os.path.join(wh.location, "p", "k=static")) == sorted(expected * 2)
    plain = _collect(spark.sql("SELECT * FROM given"))
    assert _collect(wh.sql("SELECT a, n, arr, m, s FROM p WHERE k = 'static'")) == sorted(plain * 2, key=repr)
    assert _collect(wh.sql("SELECT a, n, arr, m, s FROM p WHERE k <> 'static'")) == plain

    out = tmp_path / "out"
    wh.sql(f"INSERT OVERWRITE LOCAL DIRECTORY '{out}' {DELIMITED} SELECT * FROM given")
    assert _lines(out) == expected
    out2 = tmp_path / "out2"
    wh.sql(f"INSERT OVERWRITE LOCAL DIRECTORY '{out2}' {DELIMITED} NULL DEFINED AS 'NIL' SELECT * FROM given")
    assert _lines(out2) == sorted(HiveSerDe(spark, **SERDE_PROPS, **{"serialization.null.format": "NIL"}).line(r)
                                  for r in ROWS)

    rows = wh.sql("DESCRIBE FORMATTED p").collect()
    described = {r[1].strip(): r[2] for r in rows if r[1]}
    assert [r[1].strip() for r in rows].count("escape.delim") == 1  # a SerDe parameter, not a table one
    assert {k: described.get(k) for k in ("field.delim", "colelction.delim", "mapkey.delim", "escape.delim")} == {
        "field.delim": ",", "colelction.delim": "|", "mapkey.delim": ":", "escape.delim": "\\"}
    ddl = "\n".join(r[0] for r in wh.sql("SHOW CREATE TABLE p").collect())
    assert ("ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' ESCAPED BY '\\\\' COLLECTION ITEMS TERMINATED BY '|' "
            "MAP KEYS TERMINATED BY ':'") in ddl
    assert "escape.delim" not in ddl  # not repeated among the TBLPROPERTIES
    lines = ddl.replace("`default`.`p`", "`default`.`p2`").split("\n")
    at = lines.index("LOCATION")
    wh.sql("\n".join(lines[:at] + lines[at + 2:]))  # the same DDL, but for the name and LOCATION
    wh.sql("INSERT INTO p2 PARTITION (k='static') SELECT * FROM given")
    assert _lines(os.path.join(wh.location, "p2", "k=static")) == expected
    wh.sql("CREATE TABLE p3 LIKE p")
    wh.sql("INSERT INTO p3 PARTITION (k='static') SELECT * FROM given")
    assert _lines(os.path.join(wh.location, "p3", "k=static")) == expected
    # a table without the escape could not read p's files: EXCHANGE PARTITION refuses to move them
    wh.sql(f"CREATE TABLE p4 ({DDL}) PARTITIONED BY (k STRING) ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' "
           "COLLECTION ITEMS TERMINATED BY '|' MAP KEYS TERMINATED BY ':' STORED AS TEXTFILE")
    with pytest.raises(Exception, match="could not read the files"):
        wh.sql("ALTER TABLE p4 EXCHANGE PARTITION (k='static') WITH TABLE p")


def test_deep_nesting_writes_and_reads_as_hive(wh, spark):
    """Separators below the map key's (Hive's fixed \\004, \\005, ...) with an escape: every level's
    separators inside a string are escaped, and read back unsplit."""
    cols, types = ["id", "d"], ["int", "array<map<string,array<struct<x:string,y:array<string>>>>>"]
    rows = [[1, [{"k\x04,|": [["x\x05\x06:", ["y\x07\x08\\", ""]], [None, []]], "e": []}, {}]],
            [2, None], [3, [None, {"n": None}]]]
    hive = HiveSerDe(spark, cols, types, **SERDE_PROPS)
    wh.sql(f"CREATE TABLE deep (id INT, d {types[1].upper()}) {DELIMITED} STORED AS TEXTFILE")
    src = Path(wh.location).parent / "deep.txt"
    src.write_bytes(hive.file(rows))
    wh.sql(f"LOAD DATA LOCAL INPATH '{src}' INTO TABLE deep")
    expected = _sorted(hive.read(hive.line(r)) for r in rows)
    assert _collect(wh.sql("SELECT * FROM deep")) == expected
    wh.sql("CREATE TABLE deep2 LIKE deep")
    wh.sql("INSERT INTO deep2 SELECT * FROM deep")
    assert _lines(os.path.join(wh.location, "deep2")) == sorted(hive.line(r) for r in rows)


def test_set_serdeproperties_gives_an_escape_to_a_table(wh, spark, tmp_path):
    """ALTER TABLE ... SET SERDEPROPERTIES ('escape.delim', 'colelction.delim', 'mapkey.delim'):
    the table's files are read (and written) with them from then on, as in Hive, a query before
    it notwithstanding. CTAS with the ROW FORMAT writes Hive's bytes."""
    hive = HiveSerDe(spark, **SERDE_PROPS)
    src = tmp_path / "hive.txt"
    src.write_bytes(hive.file(ROWS))
    wh.sql(f"CREATE TABLE t ({DDL}) ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' STORED AS TEXTFILE")
    wh.sql(f"LOAD DATA LOCAL INPATH '{src}' INTO TABLE t")
    plain = _collect(_spark_rows(spark, ROWS))
    assert _collect(wh.sql("SELECT * FROM t")) != plain  # read without the escape: split in other places
    wh.sql("ALTER TABLE t SET SERDEPROPERTIES ('escape.delim'='\\\\', 'colelction.delim'='|', 'mapkey.delim'=':')")
    assert _collect(wh.sql("SELECT * FROM t")) == plain
    wh.sql("ALTER TABLE t SET TBLPROPERTIES ('mapkey.delim'='58')")  # a table property too, read as Hive: ':'
    assert _collect(wh.sql("SELECT * FROM t")) == plain
    with pytest.raises(UnsupportedError, match="Escape character ','"):
        wh.sql("ALTER TABLE t SET TBLPROPERTIES ('escape.delim'=',')")
    # a partitioned table's whole-table frame, kept between queries, is not reused after the change
    wh.sql(f"CREATE TABLE pt ({DDL}) PARTITIONED BY (k STRING) ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' "
           "STORED AS TEXTFILE")
    wh.sql(f"LOAD DATA LOCAL INPATH '{src}' INTO TABLE pt PARTITION (k='a')")
    for _ in range(2):
        assert _collect(wh.sql("SELECT a, n, arr, m, s FROM pt WHERE k = 'a'")) != plain
    wh.sql("ALTER TABLE pt SET SERDEPROPERTIES ('escape.delim'='\\\\', 'colelction.delim'='|', 'mapkey.delim'=':')")
    assert _collect(wh.sql("SELECT a, n, arr, m, s FROM pt WHERE k = 'a'")) == plain
    wh.sql(f"CREATE TABLE c {DELIMITED} STORED AS TEXTFILE AS SELECT * FROM t")  # CTAS: Hive's bytes too
    assert _lines(os.path.join(wh.location, "c")) == sorted(hive.line(r) for r in ROWS)


@pytest.mark.parametrize(("row_format", "columns", "message"), [
    ("FIELDS TERMINATED BY '|' COLLECTION ITEMS TERMINATED BY '|'", "a INT, arr ARRAY<STRING>",
     r"Field delimiter '\|' of TEXTFILE table default.c is also the separator .* arr .*Give another field delimiter"),
    ("FIELDS TERMINATED BY ',' MAP KEYS TERMINATED BY ','", "a INT, m MAP<STRING,INT>",
     r"Field delimiter ',' .* m map<string,int>"),
    ("FIELDS TERMINATED BY ',' COLLECTION ITEMS TERMINATED BY ':' MAP KEYS TERMINATED BY ':'",
     "a INT, m MAP<STRING,INT>", r"Column m map<string,int> .* ':' between the items of two nesting levels.*"
     r"Give COLLECTION ITEMS TERMINATED BY"),
    ("FIELDS TERMINATED BY ',' ESCAPED BY ','", "a STRING",
     r"Escape character ',' of TEXTFILE table default.c is also a separator.*Give another ESCAPED BY"),
    ("FIELDS TERMINATED BY ',' ESCAPED BY '|' COLLECTION ITEMS TERMINATED BY '|'", "a STRING, b ARRAY<INT>",
     r"Escape character '\|'"),
])
def test_a_separator_clash_is_refused(wh, row_format, columns, message):
    with pytest.raises(UnsupportedError, match=message):
        wh.sql(f"CREATE TABLE c ({columns}) ROW FORMAT DELIMITED {row_format} STORED AS TEXTFILE")
    assert "c" not in [r[0] for r in wh.sql("SHOW TABLES").collect()]


def test_lines_terminated_by_other_than_newline_stays_refused(wh):
    for ddl in ("ROW FORMAT DELIMITED FIELDS TERMINATED BY ',' LINES TERMINATED BY '\\r'",
                "ROW FORMAT SERDE 'org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe' WITH SERDEPROPERTIES "
                "('line.delim'='|')"):
        with pytest.raises(UnsupportedError, match="supports no other"):
            wh.sql(f"CREATE TABLE c (a STRING) {ddl} STORED AS TEXTFILE")
