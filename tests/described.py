"""Reading DESCRIBE FORMATTED output in tests: the key/value rows of one of its blocks."""

from __future__ import annotations


def parameters(wh, target: str, heading: str = "Table Parameters:") -> dict[str, str]:
    """The ``key -> value`` rows under ``heading`` in ``DESCRIBE FORMATTED <target>``
    (``t``, or ``t PARTITION (...)`` with heading ``Partition Parameters:``)."""
    rows = wh.sql(f"DESCRIBE FORMATTED {target}").collect()
    start = next(i for i, r in enumerate(rows) if (r[0] or "").startswith(heading))
    out = {}
    for r in rows[start + 1:]:
        if (r[0] or "").strip():
            break
        if r[1]:
            out[r[1].strip()] = (r[2] or "").strip()
    return out
