"""Model names: identity (developer-scoped base models and configurations), settings, loose keys.

- :func:`resolve` — a source's identifier (and what it says beside it) to developer, base model,
  configuration and family, with the :class:`Link` s that dated it;
- :func:`read_settings` — what a name says about how the model was run;
- :func:`collapse_standard`, :func:`collapse_aggressive`, :func:`strip_variant_suffixes` — loose
  keys (papers 002 and 000) used for candidate links and the papers' analyses, never as ids;
- :class:`NameRules` — the token lists of ``registries/model_tokens.yaml``, compiled.
"""

from evalhouse.curation.name_rules import NameRules, NameRulesError, rules_from
from evalhouse.curation.names.collapse import (
    collapse_aggressive,
    collapse_standard,
    is_generic_name,
    strip_variant_suffixes,
)
from evalhouse.curation.names.identity import (
    UNKNOWN_DEVELOPER,
    Link,
    ModelIdentity,
    NameHints,
    identity_key,
    resolve,
)
from evalhouse.curation.names.settings import Settings, read_settings

__all__ = [
    "UNKNOWN_DEVELOPER",
    "Link",
    "ModelIdentity",
    "NameHints",
    "NameRules",
    "NameRulesError",
    "Settings",
    "collapse_aggressive",
    "collapse_standard",
    "identity_key",
    "is_generic_name",
    "read_settings",
    "resolve",
    "rules_from",
    "strip_variant_suffixes",
]
