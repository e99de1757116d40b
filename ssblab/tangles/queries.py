"""Tangles' relational questions, as SQL that Spark and DuckDB both run word for word.

Strategy: what a join says (a tangle's links, its heads, links and references to absent messages, each message's
references and its place in its feed) is one query here, in the SQL the two engines share; the few differences
are behind `ssblab.pipeline.tables.Dialect`. Inputs are ``{placeholders}``: Spark binds DataFrames to them, the
local engine Arrow tables. The iterative questions (longest paths) run on each engine's own terms
(`ssblab.tangles.local`, `ssblab.tangles.spark`) over what these queries give.

Conventions: ``{edges}`` is the ``tangle_edges`` table, ``{content_links}`` the ``links`` table, ``{present}``
the valid messages (`present_sql`): an invalid message is not held, so links to it dangle. A message never
references itself (such a link is left out: it says nothing about order).
"""

from __future__ import annotations

from ssblab.graph.queries import sql_literal
from ssblab.pipeline.tables import Dialect

__all__ = [
    "dangling_links_sql",
    "dangling_references_sql",
    "heads_sql",
    "links_sql",
    "positions_sql",
    "present_references_sql",
    "present_sql",
    "reference_pairs_sql",
    "references_sql",
    "thread_edges_sql",
    "thread_messages_sql",
]


def present_sql() -> str:
    """``id, author, sequence, timestamp, received`` of the valid messages."""
    return "SELECT id, author, sequence, timestamp, received FROM {messages} WHERE valid"


def links_sql() -> str:
    """``tangle, root, id, parent``: one row per link, the root standing in for a null ``parent``."""
    return "SELECT DISTINCT tangle, root, id, coalesce(parent, root) AS parent FROM {edges}"


def heads_sql(dialect: Dialect) -> str:
    """``tangle, root, heads, concurrent``: per tangle, its members (the root and every linking message) that
    nothing links to, sorted, and whether there are two or more. A tangle whose members all are linked to (a
    cycle through its root: forged data) has no row."""
    return ("WITH members AS (SELECT tangle, root, id FROM {links} "
            "UNION SELECT tangle, root, root AS id FROM {links}), "
            "linked AS (SELECT DISTINCT tangle, root, parent AS id FROM {links}) "
            f"SELECT m.tangle AS tangle, m.root AS root, {dialect.sorted_distinct('m.id')} AS heads, "
            "count(*) > 1 AS concurrent FROM members m LEFT JOIN linked l "
            "ON m.tangle = l.tangle AND m.root = l.root AND m.id = l.id WHERE l.id IS NULL GROUP BY m.tangle, m.root")


def dangling_links_sql() -> str:
    """``tangle, root, id, parent``: the ``{links}`` whose target (a parent, or the root) is not present."""
    return "SELECT tangle, root, id, parent FROM {links} WHERE parent NOT IN (SELECT id FROM {present})"


def reference_pairs_sql() -> str:
    """``id, ref``: every message id each present message names (content links and tangle links), once."""
    named = ("SELECT id, target AS ref FROM {content_links} WHERE kind = 'message' "
             "UNION SELECT id, parent AS ref FROM {links}")
    return f"SELECT DISTINCT id, ref FROM ({named}) r WHERE id <> ref AND id IN (SELECT id FROM {{present}})"


def dangling_references_sql() -> str:
    """``id, ref``: the ``{pairs}`` (`reference_pairs_sql`) that name a message that is not present."""
    return "SELECT id, ref FROM {pairs} WHERE ref NOT IN (SELECT id FROM {present})"


def present_references_sql() -> str:
    """``id, ref``: the ``{pairs}`` whose both ends are present."""
    return "SELECT id, ref FROM {pairs} WHERE ref IN (SELECT id FROM {present})"


def positions_sql() -> str:
    """``id, author, sequence, run, pos, prev, lost``: each present message's place in its run of consecutive
    sequences (a run restarts after a gap in the feed), the message before it in its run (null at a run's
    start), and whether its own ancestry is known to be incomplete: a run's first message after a gap (sequence
    above 1), or a message naming an absent one (``{dangling}``, `dangling_references_sql`)."""
    starts = ("SELECT id, author, sequence, coalesce(sequence <> lag(sequence) OVER (PARTITION BY author "
              "ORDER BY sequence) + 1, true) AS start FROM {present}")
    runs = ("SELECT *, sum(CASE WHEN start THEN 1 ELSE 0 END) OVER (PARTITION BY author ORDER BY sequence) AS run "
            f"FROM ({starts}) s")
    in_run = "OVER (PARTITION BY author, run ORDER BY sequence)"
    return (f"SELECT id, author, sequence, run, row_number() {in_run} - 1 AS pos, lag(id) {in_run} AS prev, "
            "(start AND sequence > 1) OR id IN (SELECT id FROM {dangling}) AS lost "
            f"FROM ({runs}) r")


def references_sql(dialect: Dialect) -> str:
    """``id, author, sequence, timestamp, refs``: each present message with the sorted ids it names (present
    or not), what the causal index is fed."""
    return (f"SELECT p.id AS id, p.author AS author, p.sequence AS sequence, p.timestamp AS timestamp, "
            f"{dialect.sorted_distinct('r.ref')} AS refs FROM {{present}} p LEFT JOIN {{pairs}} r ON p.id = r.id "
            "GROUP BY p.id, p.author, p.sequence, p.timestamp")


def _in_tangle(name: str, root: str | None) -> str:
    where = f"tangle = {sql_literal(name)}"
    return where if root is None else f"{where} AND root = {sql_literal(root)}"


def thread_edges_sql(name: str, root: str | None = None) -> str:
    """The ``{edges}`` rows of the tangles called ``name`` (of the one of ``root`` only, if given)."""
    return f"SELECT id, author, timestamp, tangle, root, parent FROM {{edges}} WHERE {_in_tangle(name, root)}"


def thread_messages_sql(name: str, root: str | None = None) -> str:
    """``id, author, timestamp, received`` of the present members of those tangles, their roots included."""
    where = _in_tangle(name, root)
    members = f"SELECT id FROM {{edges}} WHERE {where} UNION ALL SELECT root AS id FROM {{edges}} WHERE {where}"
    if root is not None:
        members += f" UNION ALL SELECT {sql_literal(root)} AS id"
    return f"SELECT id, author, timestamp, received FROM {{present}} WHERE id IN ({members})"
