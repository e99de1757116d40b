"""The thread viewer's model: rows, lanes, heads, depths and clock contradictions, without a browser."""

from __future__ import annotations

import random

import pytest

from ssblab.tangles.thread import Tangle, causal_sort, heads, lamport_depths
from ssblab.widgets.thread_viewer import ThreadViewer, ViewerError, layout, render_html, render_text


def thread(links: dict[str, tuple[str, ...]], times: dict[str, float], root: str = "%r") -> Tangle:
    return Tangle("thread", root, links, times)


def random_thread(rng: random.Random, size: int) -> Tangle:
    """Replies that link one or two current heads, or (a concurrent writer) one older message."""
    times, links, tips = {"%r": 0.0}, {}, ["%r"]
    for i in range(1, size):
        m = f"%m{i}"
        if rng.random() < 0.3:
            parents = [rng.choice(list(times))]
        else:
            parents = rng.sample(tips, min(len(tips), rng.randint(1, 2)))
        links[m], times[m] = tuple(parents), float(i)
        tips = [t for t in tips if t not in parents] + [m]
    return thread(links, times)


@pytest.mark.parametrize("seed", range(30))
def test_layout_invariants_on_random_threads(seed: int) -> None:
    tangle = random_thread(random.Random(seed), 40)
    view = layout(tangle)
    ids = [row.id for row in view.rows]
    assert ids == causal_sort(tangle)
    assert sorted(ids) == sorted(tangle.timestamps)
    place = {m: i for i, m in enumerate(ids)}
    depths = lamport_depths(tangle)
    placed: set[str] = set()
    for row in view.rows:
        assert all(place[p] < place[row.id] for p in row.parents)
        assert row.depth == depths[row.id]
        assert row.lane in row.alive and 0 <= row.lane < view.lanes
        if row.branches_from is not None:  # a branch opens only on a parent that already has a reply
            assert row.branches_from in row.parents
            assert any(row.branches_from in other.parents for other in view.rows if other.id in placed)
        placed.add(row.id)
    assert list(view.heads) == [m for m in ids if m in set(heads(tangle))]
    assert not view.contradictions  # claimed times grow with the index here


def test_two_replies_to_the_root_are_concurrent_heads_in_a_branch() -> None:
    view = layout(thread({"%a": ("%r",), "%b": ("%r",)}, {"%r": 1.0, "%a": 3.0, "%b": 2.0}))
    assert [(r.id, r.is_head, r.branches_from) for r in view.rows] == [
        ("%r", False, None), ("%b", True, None), ("%a", True, "%r")]
    assert view.heads == ("%b", "%a")


def test_a_merge_closes_the_branch_lanes() -> None:
    tangle = thread({"%a": ("%r",), "%b": ("%r",), "%c": ("%r",), "%m": ("%a", "%b")},
                    {"%r": 1.0, "%a": 2.0, "%b": 3.0, "%c": 5.0, "%m": 4.0})
    rows = {r.id: r for r in layout(tangle).rows}
    # %a continues the root's lane; %b branches into lane 1 while the root still waits for %c (lane 0 open);
    # the merge %m continues %a's lane and closes %b's.
    assert (rows["%a"].lane, rows["%b"].lane, rows["%m"].lane) == (0, 1, 0)
    assert rows["%m"].alive == {0, 1}
    assert rows["%c"].branches_from == "%r" and 1 not in rows["%c"].alive


def test_a_claimed_time_older_than_an_ancestor_is_flagged() -> None:
    tangle = thread({"%a": ("%r",), "%b": ("%a",), "%c": ("%b",)},
                    {"%r": 10.0, "%a": 30.0, "%b": 20.0, "%c": 25.0})
    view = layout(tangle)
    flagged = {r.id: r.contradicts for r in view.contradictions}
    assert flagged == {"%b": "%a", "%c": "%a"}  # %c is later than its parent %b but not than %a
    assert [r.id for r in view.ordered("claimed")] == ["%r", "%b", "%c", "%a"]
    assert [r.id for r in view.ordered("causal")] == ["%r", "%a", "%b", "%c"]
    assert "claims to be older than its ancestor %a…" in render_text(view)


def test_a_missing_parent_is_reported_not_guessed() -> None:
    tangle = thread({"%a": ("%r",), "%b": ("%gone",), "%c": ("%b",)}, {"%r": 1.0, "%a": 2.0, "%b": 3.0, "%c": 4.0})
    view = layout(tangle)
    rows = {r.id: r for r in view.rows}
    assert rows["%b"].missing == ("%gone",) and rows["%b"].depth is None and rows["%c"].depth is None
    assert rows["%a"].depth == 1
    viewer = ThreadViewer([tangle])
    assert viewer.summary()["missing"] == 1 and not viewer.summary()["is_trdag"]
    assert "links 1 missing" in viewer.text()


def test_an_unknown_order_is_refused() -> None:
    view = layout(thread({"%a": ("%r",)}, {"%r": 1.0, "%a": 2.0}))
    with pytest.raises(ViewerError, match="unknown order 'random'"):
        view.ordered("random")


def edge_rows() -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """Two threads as ``tangle_edges`` rows (the big one has a merge) and the ``messages`` rows of their roots."""
    edges = [
        {"id": "%a", "author": "@alice", "timestamp": 2.0, "tangle": "thread", "root": "%r", "parent": None},
        {"id": "%b", "author": "@bob", "timestamp": 3.0, "tangle": "thread", "root": "%r", "parent": "%r"},
        {"id": "%m", "author": "@carol", "timestamp": 4.0, "tangle": "thread", "root": "%r", "parent": "%a"},
        {"id": "%m", "author": "@carol", "timestamp": 4.0, "tangle": "thread", "root": "%r", "parent": "%b"},
        {"id": "%y", "author": "@bob", "timestamp": 6.0, "tangle": "thread", "root": "%s", "parent": "%s"},
        {"id": "%z", "author": "@bob", "timestamp": 7.0, "tangle": "other", "root": "%s", "parent": "%s"},
    ]
    messages = [{"id": "%r", "author": "@alice", "timestamp": 1.0}, {"id": "%s", "author": "@dan", "timestamp": 5.0}]
    return edges, messages


def test_viewer_from_rows_and_its_state() -> None:
    edges, messages = edge_rows()
    viewer = ThreadViewer.from_rows(edges, messages, names={"@alice": "Alice"}, texts={"%r": "hello <world>"})
    assert viewer.roots == ["%r", "%s"] and viewer.root == "%r"
    assert viewer.authors["%r"] == "Alice" and viewer.authors["%b"] == "@bob"
    assert viewer.summary() == {"messages": 4, "lanes": 2, "heads": 1, "max_depth": 2, "is_trdag": False,
                                "missing": 0, "contradictions": 0}
    assert viewer.layout.report.missed_heads == {"%b": ("%a",)}  # a concurrent reply: not the strict trDAG form
    viewer.select("%a")
    assert viewer.details()["children"] == ["%m"] and viewer.details()["parents"] == ["%r"]
    assert "background:#fff6d6" in viewer.html()
    viewer.show("%s")
    assert viewer.selected is None and [r.id for r in viewer.rows()] == ["%s", "%y"]
    assert viewer.label("%s").startswith("2 messages, 1 head: ")
    with pytest.raises(ViewerError, match="no thread with root %nope"):
        viewer.show("%nope")
    with pytest.raises(ViewerError, match="%a is not in the thread %s"):
        viewer.select("%a")
    assert ThreadViewer.from_rows(edges, messages, min_messages=3).roots == ["%r"]


def test_no_tangles_is_an_error() -> None:
    with pytest.raises(ViewerError, match="no tangles"):
        ThreadViewer([])


def test_html_escapes_what_authors_wrote() -> None:
    tangle = thread({"%a": ("%r",)}, {"%r": 1.0, "%a": 2.0})
    out = render_html(layout(tangle), authors={"%a": "<b>eve</b>"}, texts={"%a": "<script>alert(1)</script>"})
    assert "<script>" not in out and "&lt;script&gt;" in out and "&lt;b&gt;eve" in out


def test_the_widget_follows_its_controls() -> None:
    pytest.importorskip("ipywidgets")
    edges, messages = edge_rows()
    viewer = ThreadViewer.from_rows(edges, messages)
    box = viewer.widget()
    pick, order, message, _pager, info, body = box.children
    assert "4 messages" in body.value
    order.value = "claimed"
    assert viewer.order == "claimed" and "Order: claimed" in body.value
    message.value = "%m"
    assert viewer.selected == "%m" and "%m" in info.value
    pick.value = "%s"
    assert viewer.root == "%s" and "2 messages" in body.value and info.value == ""


def test_a_long_thread_pages_instead_of_shipping_it_whole() -> None:
    tangle = random_thread(random.Random(7), 300)
    viewer = ThreadViewer([tangle], texts={m: "a reply " * 20 for m in tangle.timestamps})
    assert viewer.page_count == 6 and viewer.page == 0
    first = viewer.html()
    assert len(first.encode()) < 120_000, len(first)  # the whole thread used to be about 1 MB
    assert first.count('border-left:3px') == 50 and "Page 1 of 6 (messages 1-50)" in first
    last = viewer.rows()[-1].id
    viewer.select(last)
    assert viewer.page == 5 and last in viewer.html() and "Page 6 of 6 (messages 251-300)" in viewer.html()
    viewer.go(2)
    assert viewer.rows()[100].id in viewer.html() and viewer.rows()[99].id not in viewer.html()
    with pytest.raises(ViewerError, match="no page 6 \\(the thread has 6\\)"):
        viewer.go(6)
    with pytest.raises(ViewerError, match="page_size must be at least 1"):
        ThreadViewer([tangle], page_size=0)


def test_widget_errors_are_ssb_errors_with_stable_codes() -> None:
    from ssblab.core.errors import SsbError
    from ssblab.widgets import WidgetError

    assert issubclass(ViewerError, WidgetError) and issubclass(WidgetError, SsbError)
    assert (WidgetError.code, ViewerError.code) == ("widget", "thread-viewer")
