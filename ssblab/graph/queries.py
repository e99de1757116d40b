"""The follow graph's relational questions, as SQL that Spark and DuckDB both run word for word.

Strategy: what a join says (edges from the ``follows`` table, degrees, mutual follows, trusted peers, adopted
blocks, log sizes, the about directory and each viewer's names) is one query here, in the SQL the two engines
share; the few differences are behind `ssblab.pipeline.tables.Dialect`. Inputs are ``{placeholders}``: Spark binds
DataFrames to them, the local engine Arrow tables. Iterative algorithms (hops, PageRank, components) run on the
packed graph instead (`ssblab.graph.packed`).

Conventions follow ssb-friends 4.4: ``weight`` is 1 for a follow, -1 for a block, -2 for a pair whose state was
cleared; a self-contact never changes a hop value, so the edges leave it out (the feeds keep it).
"""

from __future__ import annotations

from ssblab.friends.contacts import BLOCK, FOLLOW, UNFOLLOW
from ssblab.graph.errors import GraphError
from ssblab.pipeline.tables import Dialect

__all__ = [
    "about_directory_sql",
    "adopted_blocks_sql",
    "degrees_sql",
    "edges_sql",
    "feed_activity_sql",
    "feeds_sql",
    "mutual_follows_sql",
    "self_and_given_sql",
    "sql_literal",
    "subjective_view_sql",
    "trusted_peers_sql",
]

ATTRIBUTES = ("name", "image", "description")


def edges_sql() -> str:
    """``src, dst, weight`` of the ``follows`` table, without self-contacts."""
    weight = (f"CASE state WHEN 'following' THEN {FOLLOW} WHEN 'blocking' THEN {BLOCK} ELSE {UNFOLLOW} END")
    return f"SELECT author AS src, contact AS dst, {weight} AS weight FROM {{follows}} WHERE author <> contact"


def feeds_sql() -> str:
    """``id`` of every feed a contact names, as its author or as its contact."""
    return "SELECT author AS id FROM {follows} UNION SELECT contact AS id FROM {follows}"


def degrees_sql() -> str:
    """``id, in_degree, out_degree`` over the follow edges, for every feed (0 when none)."""
    return (f"WITH f AS (SELECT src, dst FROM {{edges}} WHERE weight = {FOLLOW}), "
            "i AS (SELECT dst AS id, count(*) AS n FROM f GROUP BY dst), "
            "o AS (SELECT src AS id, count(*) AS n FROM f GROUP BY src) "
            "SELECT v.id AS id, coalesce(i.n, 0) AS in_degree, coalesce(o.n, 0) AS out_degree "
            "FROM {feeds} v LEFT JOIN i ON v.id = i.id LEFT JOIN o ON v.id = o.id")


def mutual_follows_sql() -> str:
    """``a, b`` with ``a < b`` for each pair of feeds that follow each other."""
    return (f"WITH f AS (SELECT src, dst FROM {{edges}} WHERE weight = {FOLLOW}) "
            "SELECT x.src AS a, x.dst AS b FROM f x JOIN f y ON x.src = y.dst AND x.dst = y.src WHERE x.src < x.dst")


def trusted_peers_sql(root: str, min_friends: int) -> str:
    """``peer``: feeds the root follows that at least ``min_friends`` of the root's other friends follow (§6.3)."""
    return (f"WITH f AS (SELECT src, dst FROM {{edges}} WHERE weight = {FOLLOW}), "
            f"friends AS (SELECT dst AS friend FROM f WHERE src = {sql_literal(root)}) "
            "SELECT p.friend AS peer FROM f JOIN friends v ON f.src = v.friend JOIN friends p ON f.dst = p.friend "
            f"WHERE f.src <> f.dst GROUP BY p.friend HAVING count(*) >= {int(min_friends)}")


def adopted_blocks_sql(root: str) -> str:
    """``src, dst``: blocks by the ``{trusted}`` peers of feeds other than the root that the root has made no
    decision about itself."""
    return (f"SELECT e.src AS src, e.dst AS dst FROM {{edges}} e JOIN {{trusted}} t ON e.src = t.peer "
            f"WHERE e.weight = {BLOCK} AND e.dst <> {sql_literal(root)} "
            f"AND e.dst NOT IN (SELECT dst FROM {{edges}} WHERE src = {sql_literal(root)})")


def feed_activity_sql() -> str:
    """``author, messages, first_seen``: each feed's log size and first claimed time (§8.6)."""
    return "SELECT author, count(*) AS messages, min(timestamp) AS first_seen FROM {messages} GROUP BY author"


def about_directory_sql() -> str:
    """``about, author, attribute, value, sequence, timestamp, is_self``: per target, author and attribute, the
    value of the author's latest about message that sets it (paper §3.1, Figure 3). Latest is the log order: the
    largest sequence; a message that leaves an attribute out does not unset it."""
    values = " UNION ALL ".join(
        f"SELECT about, author, '{a}' AS attribute, {a} AS value, sequence, timestamp FROM {{abouts}} "
        f"WHERE {a} IS NOT NULL" for a in ATTRIBUTES)
    latest = ("SELECT *, row_number() OVER (PARTITION BY about, author, attribute ORDER BY sequence DESC) AS n "
              f"FROM ({values}) v")
    return ("SELECT about, author, attribute, value, sequence, timestamp, about = author AS is_self "
            f"FROM ({latest}) t WHERE n = 1")


def self_and_given_sql(dialect: Dialect, attribute: str = "name") -> str:
    """``about, self_chosen, given``: a target's own latest value and the sorted distinct values others gave it."""
    given = dialect.sorted_distinct("CASE WHEN NOT is_self THEN value END")
    return (f"SELECT about, max(CASE WHEN is_self THEN value END) AS self_chosen, {given} AS given "
            f"FROM {{directory}} WHERE attribute = {sql_literal(attribute)} GROUP BY about")


def subjective_view_sql(max_hops: int, attribute: str = "name") -> str:
    """``viewer, about, value, author, rule``: what each viewer (a ``root`` of ``{hops}``) shows for each target.

    A viewer reads only the feeds it replicates (hops ``0..max_hops``) and picks the value it gave itself
    (``own``), else the target's self-chosen one (``self``), else the one given by the closest feed (``given``;
    the latest on a tie, then the smallest author id).
    """
    rule = "CASE WHEN d.author = h.root THEN 'own' WHEN d.is_self THEN 'self' ELSE 'given' END"
    rank = "CASE WHEN d.author = h.root THEN 0 WHEN d.is_self THEN 1 ELSE 2 END"
    ranked = (f"SELECT h.root AS viewer, d.about AS about, d.value AS value, d.author AS author, {rule} AS rule, "
              f"row_number() OVER (PARTITION BY h.root, d.about ORDER BY {rank}, h.hops, d.timestamp DESC, "
              "d.author) AS n "
              "FROM {directory} d JOIN {hops} h ON d.author = h.feed "
              f"WHERE d.attribute = {sql_literal(attribute)} AND h.hops >= 0 AND h.hops <= {int(max_hops)}")
    return f"SELECT viewer, about, value, author, rule FROM ({ranked}) t WHERE n = 1"


def sql_literal(text: str) -> str:
    """A SQL string literal. Ids and attribute names hold no quote or backslash; the two engines escape them
    differently, so text that holds one is refused rather than escaped.

    Raises:
        GraphError: the text holds a quote or a backslash.
    """
    if "'" in text or "\\" in text:
        raise GraphError(f"not an id: {text!r} holds a quote or a backslash")
    return f"'{text}'"
