"""Slugs: the one way evalhouse turns a display name into an identifier component; and names
bounded to what a file system holds in one path part (:func:`bounded_name`)."""

from __future__ import annotations

import hashlib
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


#: The longest file or folder name most file systems allow (ext4, XFS, APFS, NTFS: 255 bytes or
#: UTF-16 units; bytes are the stricter count).
NAME_MAX_BYTES = 255
#: Hex digits of the name's sha256 kept in a shortened name (64 bits: no two names meet by chance).
NAME_HASH_CHARS = 16


def bounded_name(name: str, *, reserve: int = 0) -> str:
    """``name`` as one path part that fits ``NAME_MAX_BYTES`` with ``reserve`` bytes to spare (for a
    prefix or suffix the caller adds). A name that fits is returned unchanged; a longer one keeps
    its longest prefix that fits (cut at a character, not a byte) and ends ``-`` + the first
    :data:`NAME_HASH_CHARS` hex digits of its sha256, so two long names that share a prefix stay
    apart and the same name always gets the same part."""
    room = NAME_MAX_BYTES - reserve
    encoded = name.encode("utf-8")
    if len(encoded) <= room:
        return name
    digest = hashlib.sha256(encoded).hexdigest()[:NAME_HASH_CHARS]
    head = encoded[: room - NAME_HASH_CHARS - 1].decode("utf-8", errors="ignore").rstrip(". ")
    return f"{head}-{digest}"
