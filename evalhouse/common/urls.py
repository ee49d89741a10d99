"""Which URLs may become a link: an allow-list of schemes, checked the way a browser reads the URL.

Stored URLs come from sources (an EEE record's ``source_data.url``, a model card's ``source.url``)
and are shown on pages a person clicks. HTML autoescaping keeps them from breaking out of the
``href`` attribute, but not from being ``javascript:`` or ``data:`` URLs, which run or render
whatever they hold when clicked. A URL becomes a link only when its scheme, read as a browser
reads it, is in :data:`LINK_SCHEMES` and it names a host; anything else is shown as text.

A browser first drops leading and trailing C0 controls and spaces and every tab and newline
inside the URL, and compares the scheme without regard to case, so ``" \\tJaVa\\nScRiPt:…"`` is a
``javascript:`` URL to it: :func:`link_target` normalises the same way before it looks.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

#: The schemes a stored URL may be linked with.
LINK_SCHEMES = frozenset({"http", "https"})
_EDGES = "".join(chr(c) for c in range(0x21))  # C0 controls and space, stripped at both ends
_INSIDE = re.compile(r"[\t\n\r]")  # removed anywhere (the WHATWG URL parser does)
#: A host a browser accepts: none of the WHATWG URL standard's forbidden host code points.
_HOST = re.compile(r"[^\x00-\x20\x7f#%/<>?@\\^|\[\]]+")


def link_target(url: object) -> str | None:
    """The URL to put in an ``href`` (normalised as a browser reads it), or ``None`` when it must
    be shown as text: not a string, another scheme than http(s), no host or one a browser
    refuses, or unparseable."""
    if not isinstance(url, str):
        return None
    cleaned = _INSIDE.sub("", url.strip(_EDGES))
    try:
        parts = urlsplit(cleaned)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in range
    except ValueError:  # e.g. an unbalanced '[' in the host, or a port out of range
        return None
    if parts.scheme.lower() not in LINK_SCHEMES or not parts.hostname or not _HOST.fullmatch(parts.hostname):
        return None
    return cleaned
