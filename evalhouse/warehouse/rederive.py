"""Re-deriving identities in place: every stored score's configuration, canonical group and cell
under the rules evalhouse ships now, each change a recorded decision.

A score's identity is derived when it loads: the model's configuration from the name rules, the
benchmark, subset, metric and unit from the registries and their links, the cell from the setup
policy. When those rules change, a warehouse loaded under the old ones would keep the old
identities until every source was fetched again; this derives them again from what the warehouse
already holds (each evaluation's whole record, each score's raw value, its stored setup and
generation config), exactly as a load of the same records would now, and moves what changed:

* an evaluation whose model now resolves to another configuration moves there (with its identity
  rows, the facts its source stated about the model and the release-date evidence of its name);
  one ``configuration_rederived`` decision per source model id;
* a score whose result now canonicalises into another group (another benchmark, subset, metric or
  unit) moves there, its canonical value scaled again from its raw value; one
  ``benchmark_rederived`` decision per source and old and new group; a result the rules would now
  refuse is left as it is and counted (``evalhouse reparse`` quarantines it with its reason);
* a score whose setup now has another cell key (the setup policy) or another whole setup moves;
  one ``cell_rederived`` decision per source and old and new key.

Source row keys are derived again as a load derives them (the macro ``source_row_key``), so the
next fetch of a source supersedes the moved rows as it would have superseded fresh ones. Conflict
resolutions of the moved cells are recorded by the next load (they read the views, which a
migration has not recreated yet). Nothing is fetched and nothing is deleted but the groups and
setups no score names any more.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from typing import Any

import duckdb

from evalhouse.common.resources import read_sql
from evalhouse.curation.canonicalise import CanonicalGroup, Canonicaliser
from evalhouse.curation.cells import cell_of
from evalhouse.curation.identity import ResolvedModel, resolve_model
from evalhouse.curation.registry import Registry
from evalhouse.curation.setup_policy import SetupPolicy
from evalhouse.warehouse.insert import insert_rows
from evalhouse.warehouse.load.rows import RecordContext, dump, identity_rows, provisional_row, release_evidence
from evalhouse.warehouse.registry_sync import sync_registry

TEMPORARY = ("_rederive_score", "_rederive_eval", "_rederive_group", "_rederive_value", "_rederive_stay",
             "_rederive_setup", "_rederive_move")  # fmt: skip


@dataclass
class Rederived:
    """What a re-derivation moved (counts) and the decisions it recorded."""

    evaluations: int = 0  # evaluations read
    scores_read: int = 0
    configurations: int = 0  # evaluations moved to another configuration
    groups: int = 0  # (group, source) pairs whose benchmark, subset, metric or unit changed
    setups: int = 0  # setups whose cell key or whole setup changed
    scores_moved: int = 0  # scores whose cell changed
    refused: int = 0  # scores the current rules would refuse: left as they are
    decisions: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


def _sql(name: str) -> str:
    return read_sql("evalhouse.warehouse", name)


def rederive(con: duckdb.DuckDBPyConnection, registry: Registry, *, cause: str) -> Rederived:
    """Derive every stored score's identities again under ``registry`` and move what changed
    (inside the caller's transaction); ``cause`` is written into every decision."""
    sync_registry(con, registry)
    policy = registry.setup_policy
    assert policy is not None
    report = Rederived()
    con.execute(_sql("rederive_results.sql"))
    try:
        models = _models(con, registry, report)
        _groups(con, registry, report)
        _setups(con, policy, models, report)
        con.execute(_sql("rederive_apply.sql"))
        report.scores_moved = con.execute("SELECT count(*) FROM _rederive_move").fetchone()[0]
        _identities(con, registry, models)
        report.decisions = _decisions(con, cause, models)
    finally:
        for table in TEMPORARY:
            con.execute(f"DROP TABLE IF EXISTS {table}")
    return report


# -- configurations ---------------------------------------------------------------------------


@dataclass
class _Model:
    source_key: str
    old_config: str
    model: ResolvedModel
    run_id: str
    raw_sha256: str

    @property
    def changed(self) -> bool:
        return self.model.config_id != self.old_config


def _models(con: duckdb.DuckDBPyConnection, registry: Registry, report: Rederived) -> dict[str, _Model]:
    """Each evaluation's model resolved again; the temporary table ``_rederive_eval`` holds the
    result (with the setup the model's name states, which is part of its scores' setups)."""
    out: dict[str, _Model] = {}
    for eval_id, source_key, config_id, run_id, sha, self_describing, info in con.execute(
        _sql("rederive_models.sql")
    ).fetchall():
        model = resolve_model(
            json.loads(info) or {}, source_key, registry, identity_from="id" if self_describing else "name"
        )
        out[eval_id] = _Model(source_key, config_id, model, run_id, sha)
    report.evaluations = len(out)
    report.configurations = sum(m.changed for m in out.values())
    rows = [
        {
            "evaluation_id": eid,
            "old_config": m.old_config,
            "new_config": m.model.config_id,
            "changed": m.changed,
            "name_setup": dump(dict(sorted(m.model.setup.items())), sort_keys=True),
        }
        for eid, m in out.items()
    ]
    con.execute(
        "CREATE OR REPLACE TEMPORARY TABLE _rederive_eval (evaluation_id TEXT, old_config TEXT, new_config TEXT,"
        " changed BOOLEAN, name_setup TEXT)"
    )
    insert_rows(con, "_rederive_eval", rows)  # (executemany is a statement per row)
    report.scores_read = con.execute("SELECT count(*) FROM _rederive_score").fetchone()[0]
    return out


# -- canonical groups -------------------------------------------------------------------------

_GROUP_COLUMNS = ("benchmark_raw", "benchmark_id", "subset", "metric_raw", "metric_id", "raw_unit", "unit",
                  "lower_is_better", "steps")  # fmt: skip


def _group_row(g: CanonicalGroup) -> tuple[Any, ...]:
    return (g.benchmark_raw, g.benchmark_id, g.subset, g.metric_raw, g.metric_id, g.raw_unit, g.unit,
            g.lower_is_better, list(g.steps))  # fmt: skip


def _groups(con: duckdb.DuckDBPyConnection, registry: Registry, report: Rederived) -> None:
    """Each distinct result group canonicalised again; groups that changed go to ``_rederive_group``
    (with their new rows in ``score_group``) and their scores' new values to ``_rederive_value``."""
    canonicalisers = {flag: Canonicaliser(registry, allow_provisional=flag) for flag in (False, True)}
    found = con.execute(
        "SELECT s.group_id, s.source_key, s.collection, s.group_key, s.self_describing,"
        " CAST(arg_min(s.result, s.score_id) AS VARCHAR), "
        + ", ".join(f"any_value(g.{c})" for c in _GROUP_COLUMNS)
        + " FROM _rederive_score s JOIN score_group g USING (group_id) GROUP BY ALL"
    ).fetchall()
    con.execute(
        "CREATE OR REPLACE TEMPORARY TABLE _rederive_group (group_id BIGINT, source_key TEXT, collection TEXT,"
        " group_key TEXT, new_group_id BIGINT, benchmark_raw TEXT, benchmark_id TEXT, subset TEXT, metric_raw TEXT,"
        " metric_id TEXT, raw_unit TEXT, unit TEXT, lower_is_better BOOLEAN, steps TEXT[], was JSON)"
    )
    con.execute("CREATE OR REPLACE TEMPORARY TABLE _rederive_value (score_id BIGINT, value DOUBLE)")
    con.execute("CREATE OR REPLACE TEMPORARY TABLE _rederive_stay (score_id BIGINT)")
    moved, provisional, refused, protocols = [], {"benchmark": {}, "metric": {}}, [], []
    for group_id, source_key, collection, key, self_describing, result, *old in found:
        new = canonicalisers[bool(self_describing)].group(
            json.loads(result), source_key=source_key, collection=collection
        )
        if new.rejection is not None:
            refused.append((group_id, source_key, collection, key))
            continue
        if new.protocol:
            protocols.append(
                {"group_id": group_id, "source_key": source_key, "collection": collection, "group_key": key,
                 "protocol": dump([list(p) for p in new.protocol])}
            )  # fmt: skip
        row = _group_row(new)
        if list(row) == [*old[:-1], list(old[-1])]:
            continue
        was = dict(zip(("benchmark_id", "subset", "metric_id", "unit"), (old[1], old[2], old[4], old[6]), strict=True))
        moved.append((group_id, source_key, collection, key, new, dump(was)))
        for prov, table in ((new.provisional_benchmark, "benchmark"), (new.provisional_metric, "metric")):
            if prov is not None:
                provisional[table].setdefault(prov.id, (source_key, prov.model_dump()))
    for table, rows in provisional.items():
        insert_rows(con, table, [provisional_row(table, r, src) for src, r in rows.values()], or_ignore=True)
    _protocols(con, protocols)
    report.groups = len(moved)
    report.refused = _count_scores(con, refused)
    if not moved:
        return
    insert_rows(
        con,
        "_rederive_group",
        [
            {"group_id": gid, "source_key": src, "collection": coll, "group_key": key,
             **dict(zip(_GROUP_COLUMNS, _group_row(new), strict=True)), "was": was}
            for gid, src, coll, key, new, was in moved
        ],
    )  # fmt: skip
    con.execute(
        "UPDATE _rederive_group SET new_group_id = score_group_id(benchmark_raw, benchmark_id, subset, metric_raw,"
        " metric_id, raw_unit, unit, lower_is_better, steps)"
    )
    con.execute(
        "INSERT OR IGNORE INTO score_group SELECT DISTINCT new_group_id, benchmark_raw, benchmark_id, subset,"
        " metric_raw, metric_id, raw_unit, unit, lower_is_better, steps FROM _rederive_group"
    )
    _revalue(con, moved, report)


def _protocols(con: duckdb.DuckDBPyConnection, protocols: list[dict[str, Any]]) -> None:
    """Each score's protocol (the setup its benchmark fixes, under the current rules), in
    ``_rederive_score.protocol``: its cell is derived with it."""
    con.execute("ALTER TABLE _rederive_score ADD COLUMN protocol TEXT DEFAULT '[]'")
    if not protocols:
        return
    con.execute(
        "CREATE OR REPLACE TEMPORARY TABLE _rederive_protocol (group_id BIGINT, source_key TEXT, collection TEXT,"
        " group_key TEXT, protocol TEXT)"
    )
    insert_rows(con, "_rederive_protocol", protocols)
    con.execute(
        "UPDATE _rederive_score SET protocol = p.protocol FROM _rederive_protocol p"
        " WHERE p.group_id = _rederive_score.group_id AND p.source_key = _rederive_score.source_key"
        " AND p.collection IS NOT DISTINCT FROM _rederive_score.collection AND p.group_key = _rederive_score.group_key"
    )
    con.execute("DROP TABLE _rederive_protocol")


def _revalue(con: duckdb.DuckDBPyConnection, moved: list[tuple[Any, ...]], report: Rederived) -> None:
    """The canonical value of every score of a moved group, from its raw value under the new group;
    a value the new group refuses leaves its score where it was (counted as refused)."""
    by_key = {(gid, src, coll, key): new for gid, src, coll, key, new, _ in moved}
    values, stay = [], []
    for score_id, gid, src, coll, key, raw in con.execute(
        "SELECT s.score_id, s.group_id, s.source_key, s.collection, s.group_key, s.raw_value FROM _rederive_score s"
        " JOIN _rederive_group g ON g.group_id = s.group_id AND g.source_key = s.source_key"
        " AND g.collection = s.collection AND g.group_key = s.group_key"
    ).fetchall():
        value = by_key[(gid, src, coll, key)].value(raw)
        if value is None:
            stay.append(score_id)
        else:
            values.append((score_id, value))
    insert_rows(con, "_rederive_value", [{"score_id": s, "value": v} for s, v in values])
    if stay:  # refused under the new group: the score keeps its old group (and counts as refused)
        con.execute("INSERT INTO _rederive_stay SELECT unnest(?::BIGINT[])", [stay])
        report.refused += len(stay)


def _count_scores(con: duckdb.DuckDBPyConnection, keys: list[tuple[Any, ...]]) -> int:
    if not keys:
        return 0
    counts = Counter(
        (g, s, c, k)
        for g, s, c, k in con.execute(
            "SELECT group_id, source_key, collection, group_key FROM _rederive_score"
        ).fetchall()
    )
    return sum(counts[k] for k in keys)


# -- setups and cells -------------------------------------------------------------------------


def _setups(con: duckdb.DuckDBPyConnection, policy: SetupPolicy, models: dict[str, _Model], report: Rederived) -> None:
    """Each distinct (stored setup, harness, setup the model's name states, its benchmark's protocol)
    derived again: its whole setup and its cell key under the policy; those that changed go to
    ``_rederive_setup`` (with their new rows in ``score_setup``)."""
    found = con.execute(
        "SELECT DISTINCT s.setup_id, s.eval_library, e.name_setup, s.protocol, CAST(u.generation_config AS VARCHAR),"
        " CAST(u.metric_params AS VARCHAR), u.setup_key, CAST(u.setup AS VARCHAR)"
        " FROM _rederive_score s JOIN _rederive_eval e USING (evaluation_id) JOIN score_setup u USING (setup_id)"
    ).fetchall()
    changed = []
    for setup_id, harness, name_setup, protocol, generation, params, old_key, old_setup in found:
        result = {
            "generation_config": json.loads(generation) if generation else None,
            "metric_config": {"metric_parameters": json.loads(params) if params else None},
        }
        fixed = [(k, v) for k, v in json.loads(protocol)]
        cell = cell_of(result, None, harness, policy, json.loads(name_setup), protocol=fixed)
        setup_text = dump(cell.setup, sort_keys=True)
        if cell.setup_key != old_key or setup_text != old_setup:
            changed.append((setup_id, harness, name_setup, protocol, cell.setup_key, setup_text, old_key))
    con.execute(
        "CREATE OR REPLACE TEMPORARY TABLE _rederive_setup (setup_id BIGINT, eval_library TEXT, name_setup TEXT,"
        " protocol TEXT, setup_key TEXT, setup TEXT, old_key TEXT, new_setup_id BIGINT)"
    )
    report.setups = len(changed)
    if not changed:
        return
    names = ("setup_id", "eval_library", "name_setup", "protocol", "setup_key", "setup", "old_key")
    insert_rows(con, "_rederive_setup", [dict(zip(names, row, strict=True)) for row in changed])
    con.execute(
        "UPDATE _rederive_setup SET new_setup_id = score_setup_id(u.metric_params, u.metric_params_key,"
        " _rederive_setup.setup_key, _rederive_setup.setup, u.generation_config)"
        " FROM score_setup u WHERE u.setup_id = _rederive_setup.setup_id"
    )
    con.execute(
        "INSERT OR IGNORE INTO score_setup SELECT DISTINCT r.new_setup_id, u.metric_params, u.metric_params_key,"
        " r.setup_key, r.setup, u.generation_config FROM _rederive_setup r JOIN score_setup u USING (setup_id)"
    )


# -- identity rows ----------------------------------------------------------------------------


def _identities(con: duckdb.DuckDBPyConnection, registry: Registry, models: dict[str, _Model]) -> None:
    """The identity rows of every configuration an evaluation moved to, and the release-date
    evidence of the moved evaluations' records (and of their payload's other records of the same
    old configuration, whose loader evidence shared the rows removed)."""
    moved = {eid: m for eid, m in models.items() if m.changed}
    if not moved:
        return
    tables: dict[str, dict[Any, dict[str, Any]]] = defaultdict(dict)
    for m in moved.values():
        for table, row in identity_rows(m.model, m.source_key, m.run_id).items():
            key = (
                (row["source_key"], row["source_model_id"], row["config_id"])
                if table == "model_alias"
                else (next(iter(row.values())))
            )
            tables[table].setdefault(key, row)
    for table in ("developer", "model_family", "base_model", "model_config", "model_alias"):
        insert_rows(con, table, list(tables[table].values()), or_ignore=True)
    groups = {(m.source_key, m.raw_sha256, m.old_config) for m in moved.values()}
    affected = [eid for eid, m in models.items() if (m.source_key, m.raw_sha256, m.old_config) in groups]
    con.execute(
        "DELETE FROM release_date_evidence WHERE recorded_by = 'loader' AND list_contains(?, "
        "[source_key, raw_sha256, config_id])",
        [[list(g) for g in groups]],
    )
    lower = frozenset(k for k, v in registry.evidence_kinds.items() if v.lower_bound)
    evidence = []
    for eid, record in con.execute(
        "SELECT evaluation_id, CAST(record AS VARCHAR) FROM evaluation WHERE list_contains(?, evaluation_id)",
        [affected],
    ).fetchall():
        m = models[eid]
        ctx = RecordContext(
            source_key=m.source_key, run_id=m.run_id, eval_id=eid, fingerprint="", model=m.model, evaluated_by="",
            details={}, harness=None, raw_sha256=m.raw_sha256, observed_at=None, lower_bound_kinds=lower,
        )  # fmt: skip
        evidence += release_evidence(ctx, json.loads(record))
    insert_rows(con, "release_date_evidence", evidence, or_ignore=True)


# -- decisions --------------------------------------------------------------------------------


def _decisions(con: duckdb.DuckDBPyConnection, cause: str, models: dict[str, _Model]) -> int:
    """One decision per changed configuration (source model id), per changed group (source, old and
    new benchmark/metric) and per changed cell key (source, old and new setup key)."""
    rows: list[dict[str, Any]] = []
    per_model: Counter[tuple[str, str, str, str]] = Counter()
    for m in models.values():
        if m.changed:
            per_model[(m.source_key, m.model.source_model_id, m.old_config, m.model.config_id)] += 1
    for (source, model_id, old, new), n in sorted(per_model.items()):
        rows.append(
            {
                "kind": "configuration_rederived",
                "rule": f"{cause}: the name rules now resolve {model_id!r} to {new} (was {old})",
                "subject": dump({"source_key": source, "source_model_id": model_id, "from": old, "to": new}),
                "detail": dump({"evaluations": n, "cause": cause}),
            }
        )
    for source, old, new, n in con.execute(
        "SELECT s.source_key, CAST(r.was AS VARCHAR),"
        " to_json(struct_pack(benchmark_id := r.benchmark_id, subset := r.subset, metric_id := r.metric_id,"
        " unit := r.unit))::VARCHAR, count(*)"
        " FROM _rederive_score s JOIN _rederive_value x USING (score_id)"
        " JOIN _rederive_group r ON r.group_id = s.group_id AND r.source_key = s.source_key"
        " AND r.collection = s.collection AND r.group_key = s.group_key"
        " GROUP BY ALL ORDER BY 1, 2, 3"
    ).fetchall():
        was, now = json.loads(old), json.loads(new)
        if was == now:
            continue  # the group's chain or raw names changed, not where its scores stand
        rows.append(
            {
                "kind": "benchmark_rederived",
                "rule": f"{cause}: the registries now canonicalise these results as {now['benchmark_id']} / "
                f"{now['metric_id']} (was {was['benchmark_id']} / {was['metric_id']})",
                "subject": dump({"source_key": source, "from": was, "to": now}),
                "detail": dump({"scores": n, "cause": cause}),
            }
        )
    for source, old, new, n in con.execute(
        "SELECT s.source_key, u.old_key, u.setup_key, count(*) FROM _rederive_score s"
        " JOIN _rederive_eval e USING (evaluation_id)"
        " JOIN _rederive_setup u ON u.setup_id = s.setup_id AND u.eval_library IS NOT DISTINCT FROM s.eval_library"
        " AND u.name_setup = e.name_setup AND u.protocol = s.protocol"
        " WHERE u.old_key IS DISTINCT FROM u.setup_key GROUP BY ALL ORDER BY 1, 2, 3"
    ).fetchall():
        rows.append(
            {
                "kind": "cell_rederived",
                "rule": f"{cause}: the setup policy now keys these cells [{new}] (was [{old}])",
                "subject": dump({"source_key": source, "from_setup_key": old, "to_setup_key": new}),
                "detail": dump({"scores": n, "cause": cause}),
            }
        )
    insert_rows(con, "curation_decision", rows)
    return len(rows)
