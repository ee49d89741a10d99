"""Score frames for equating: wide or long frames, and the long CSV of ``evalhouse analyze equate``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from evalhouse.errors import InputError

LONG_COLUMNS: tuple[str, str, str] = ("model", "benchmark", "score")
_MISSING_TOKENS = frozenset({"", "NA", "NAN", "N/A", "NULL"})  # long-CSV score cells read as "not observed"


class EquatingInputError(InputError):
    """The score matrix cannot be equated (empty, constant, malformed)."""


def as_wide(X: pd.DataFrame) -> pd.DataFrame:
    """Return ``X`` as a wide float frame (rows = models, columns = benchmarks, NaN = missing).

    A frame whose columns include ``model``, ``benchmark`` and ``score`` is taken as long and
    pivoted; any other frame is taken as already wide. Zero is an observed value.

    Raises
    ------
    EquatingInputError
        Duplicate (model, benchmark) rows in a long frame, non-numeric or infinite scores.
    """
    if not isinstance(X, pd.DataFrame):
        raise EquatingInputError(f"expected a pandas DataFrame, got {type(X).__name__}")
    if set(LONG_COLUMNS) <= set(X.columns):
        dup = X.duplicated(subset=["model", "benchmark"], keep=False)
        if dup.any():
            first = X.loc[dup, ["model", "benchmark"]].iloc[0].tolist()
            raise EquatingInputError(
                f"{int(dup.sum())} duplicate (model, benchmark) rows in the long frame, "
                f"e.g. {first}; resolve conflicts before equating"
            )
        scores = pd.to_numeric(X["score"], errors="coerce")
        wide = X.assign(score=scores).dropna(subset=["score"]).pivot(index="model", columns="benchmark", values="score")
        wide.index = wide.index.astype(str)
        wide.columns = wide.columns.astype(str)
        wide.index.name, wide.columns.name = "model", "benchmark"
    else:
        wide = X.apply(pd.to_numeric, errors="coerce")
        bad = X.notna() & wide.isna()
        if bad.to_numpy().any():
            col = bad.any().idxmax()
            raise EquatingInputError(f"non-numeric score in benchmark column {col!r}")
    values = wide.to_numpy(dtype=float, na_value=np.nan)
    if np.isinf(values).any():
        raise EquatingInputError("infinite scores in the input")
    return pd.DataFrame(values, index=wide.index, columns=wide.columns)


def read_long_csv(path: str | Path) -> pd.DataFrame:
    """A long CSV (``model, benchmark, score``; higher-is-better) as a frame of observed scores.

    A blank (or ``NA``, ``NaN``, ``N/A``, ``null``) ``score`` means "not observed" and the row is
    skipped; a score that is not a number, a blank ``model`` or ``benchmark``, or a file with no
    rows raises :class:`EquatingInputError` naming the CSV line.
    """
    try:
        frame = pd.read_csv(path, dtype={"model": str, "benchmark": str, "score": str}, keep_default_na=False)
    except pd.errors.EmptyDataError as exc:
        raise EquatingInputError(f"{path}: empty file; need a header {','.join(LONG_COLUMNS)} and rows") from exc
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:  # a ragged row, bytes that are not text
        raise EquatingInputError(f"{path}: not a readable CSV: {exc}") from exc
    missing = [c for c in LONG_COLUMNS if c not in frame.columns]
    if missing:
        raise EquatingInputError(f"{path}: long CSV lacks columns {missing}; need {list(LONG_COLUMNS)}")
    for col in ("model", "benchmark"):
        blank = frame[col].str.strip() == ""
        if blank.any():
            line = int(np.flatnonzero(blank.to_numpy())[0]) + 2  # header is line 1
            raise EquatingInputError(f"{path}: blank {col} on line {line} ({int(blank.sum())} such rows)")
    text = frame["score"].str.strip()
    absent = text.str.upper().isin(_MISSING_TOKENS)
    scores = pd.to_numeric(text.where(~absent), errors="coerce")
    bad = ~absent & scores.isna()
    if bad.any():
        first = int(np.flatnonzero(bad.to_numpy())[0])
        raise EquatingInputError(
            f"{path}: non-numeric score {frame['score'].iloc[first]!r} on line {first + 2} "
            f"({int(bad.sum())} such rows); scores must be numbers (blank or NA = not observed)"
        )
    frame = frame.assign(score=scores).dropna(subset=["score"])
    if frame.empty:
        raise EquatingInputError(f"{path}: no observed scores")
    return frame
