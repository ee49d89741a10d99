"""Slugs: the one way evalhouse turns a display name into an identifier component."""

from __future__ import annotations

import re
import unicodedata

_NON_SLUG = re.compile(r"[^a-z0-9]+")


def ascii_fold(text: str) -> str:
    """Fold accents and drop what is not ASCII: "Tülu" and "Tulu" must read alike."""
    text = str(text)
    if text.isascii():  # NFKD leaves ASCII as it is, and almost every name is ASCII
        return text
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


def slug(text: str, *, sep: str = "-", keep: str = "", default: str = "") -> str:
    """Lower-case ASCII words joined by ``sep``; characters in ``keep`` (e.g. ``"."``) survive.

    ``slug("Meta AI")`` → ``"meta-ai"``; ``slug("GPT-4.5", keep=".")`` → ``"gpt-4.5"``;
    ``slug("HELM Lite", sep="_")`` → ``"helm_lite"``. Returns ``default`` when nothing is left.
    """
    pattern = _NON_SLUG if not keep else re.compile(rf"[^a-z0-9{re.escape(keep)}]+")
    folded = ascii_fold(" ".join(str(text).split())).casefold()
    return pattern.sub(sep, folded).strip(sep + keep) or default
