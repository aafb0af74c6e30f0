"""A sample's transcript as a collapsible events tree (issue 30): spans (solvers, each solver,
scorers, subtasks, a tool's own events) holding model calls, tool calls with their result or
error, sandbox calls and scores, each with how long it took.

Only what is open is made into tree nodes: children join on first expand and the top level comes
in chunks of CHUNK, so a transcript of thousands of events opens at once. `/` searches the
titles and texts; N and P jump to the next and previous hit (opening the spans on the way);
Enter on an event shows it whole: a model call's raw request and response, a tool's arguments
and result."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.text import Text
from textual import on
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Static, Tree
from textual.widgets.tree import TreeNode

from evtui.app import formatting as fmt
from evtui.app.safe_content import plain
from evtui.safe_text import safe_line
from evtui.sample_view.transcript import EventNode, search_tree

CHUNK = 200
_STYLES = {"model": "bold magenta", "tool": "bold cyan", "error": "bold red", "limit": "bold yellow",
           "score": "bold blue", "sandbox": "bold green", "subtask": "bold", "log": "dim"}


@dataclass(frozen=True)
class Chunk:
    """Top-level events [start, stop) folded into one node (a long transcript)."""

    start: int
    stop: int


def node_label(node: EventNode) -> Text:
    """`model call · gpt-4o  0.84 s  12 in / 5 out tokens`, run text made safe, never markup."""
    label = Text(safe_line(node.title, 160), style=_STYLES.get(node.kind, "bold" if node.kind.startswith("span:") else ""))
    if node.seconds is not None:
        label.append(f"  {fmt.format_span(node.seconds)}", style="dim")
    first = node.detail.split("\n", 1)[0] if node.detail else ""
    if first:
        label.append("  " + safe_line(first, 100), style="dim")
    if node.error:
        label.append("  ✗ " + safe_line(node.error.split("\n", 1)[0], 100), style="red")
    return label


class EventTree(Vertical):
    """The tree, a search line (shown by `/`) and a line saying where the search is."""

    BINDINGS = [
        Binding("slash", "search", "Search", key_display="/", id="event_tree.search"),
        Binding("N", "hit(1)", "Next hit", id="event_tree.next_hit"),
        Binding("P", "hit(-1)", "Previous hit", show=False, id="event_tree.previous_hit"),
        Binding("escape", "clear_search", "Clear search", show=False, id="event_tree.clear_search"),
    ]
    DEFAULT_CSS = """
    EventTree { height: 1fr; }
    EventTree #event-tree { height: 1fr; }
    EventTree #event-search { display: none; height: 1; border: none; padding: 0 1; }
    EventTree #event-search.-shown { display: block; }
    EventTree #event-search-status { height: auto; color: $text-muted; padding: 0 1; }
    """

    def __init__(self, roots: list[EventNode], empty_text: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.roots = roots
        self.empty_text = empty_text
        self.hits: list[tuple[int, ...]] = []
        self.hit = -1

    def compose(self) -> ComposeResult:
        yield Input(placeholder="search the transcript (Enter: first hit, N/P: next/previous)", id="event-search")
        tree: Tree[Any] = Tree("events", id="event-tree")
        tree.show_root = False
        tree.guide_depth = 2
        yield tree
        yield Static("", id="event-search-status")

    def on_mount(self) -> None:
        tree = self.query_one("#event-tree", Tree)
        if not self.roots:
            tree.root.add_leaf(Text(self.empty_text, style="dim"))
        elif len(self.roots) <= CHUNK:
            self._add_children(tree.root, self.roots)
        else:
            for start in range(0, len(self.roots), CHUNK):
                stop = min(start + CHUNK, len(self.roots))
                tree.root.add(Text(f"events {start + 1:,}–{stop:,} of {len(self.roots):,}", style="bold"), Chunk(start, stop))
        tree.root.expand()

    def _add_children(self, parent: TreeNode[Any], nodes: list[EventNode]) -> None:
        for node in nodes:
            if node.children:
                parent.add(node_label(node), node, expand=False)
            else:
                parent.add_leaf(node_label(node), node)

    def _populate(self, tree_node: TreeNode[Any]) -> None:
        """Make a node's children the first time it opens."""
        if tree_node.children or tree_node is tree_node.tree.root:
            return
        data = tree_node.data
        if isinstance(data, Chunk):
            self._add_children(tree_node, self.roots[data.start : data.stop])
        elif isinstance(data, EventNode):
            self._add_children(tree_node, data.children)

    def open_all(self) -> None:
        """Open every span (each made into nodes now): for a short transcript, or a test."""
        todo = list(self.query_one("#event-tree", Tree).root.children)
        while todo:
            node = todo.pop()
            self._populate(node)
            if node.children:
                node.expand()
                todo.extend(node.children)

    @on(Tree.NodeExpanded, "#event-tree")
    def _on_expanded(self, event: Tree.NodeExpanded) -> None:
        self._populate(event.node)

    @on(Tree.NodeSelected, "#event-tree")
    def _on_selected(self, event: Tree.NodeSelected) -> None:
        data = event.node.data
        if isinstance(data, EventNode) and not data.children:
            from evtui.app.dialogs.event_detail import EventDetailDialog

            self.app.push_screen(EventDetailDialog(data))

    # ------------------------------------------------------------------------------- search

    def action_search(self) -> None:
        box = self.query_one("#event-search", Input)
        box.add_class("-shown")
        box.focus()

    @on(Input.Submitted, "#event-search")
    def _on_search(self, event: Input.Submitted) -> None:
        event.stop()
        self.hits = search_tree(self.roots, event.value)
        self.hit = -1
        self.query_one("#event-tree", Tree).focus()
        if not self.hits:
            self._say(f"no event holds {safe_line(event.value, 60)!r}" if event.value.strip() else "")
            return
        self.action_hit(1)

    def action_clear_search(self) -> None:
        """Esc: close the search and its hits; with no search, Esc means what it does on the screen."""
        box = self.query_one("#event-search", Input)
        if not box.has_class("-shown") and not self.hits:
            raise SkipAction()
        box.value = ""
        box.remove_class("-shown")
        self.hits, self.hit = [], -1
        self._say("")
        self.query_one("#event-tree", Tree).focus()

    def action_hit(self, step: int) -> None:
        """Jump to the next (1) or previous (-1) hit, opening the spans that hold it."""
        if not self.hits:
            return
        self.hit = (self.hit + step) % len(self.hits)
        self.show_path(self.hits[self.hit])
        self._say(f"hit {self.hit + 1} of {len(self.hits)} · N next · P previous · Esc clears")

    def show_path(self, path: tuple[int, ...]) -> TreeNode[Any]:
        """Open the way to the event at `path` (child indexes from the roots) and put the cursor on it."""
        tree = self.query_one("#event-tree", Tree)
        node: TreeNode[Any] = tree.root
        first, rest = path[0], path[1:]
        if len(self.roots) > CHUNK:
            node = node.children[first // CHUNK]
            self._populate(node)
            node.expand()
            first -= (first // CHUNK) * CHUNK
        node = node.children[first]
        for index in rest:
            self._populate(node)
            node.expand()
            node = node.children[index]
        target = node

        def land() -> None:  # once the opened spans are laid out: before, the node has no line
            tree.move_cursor(target)
            tree.scroll_to_node(target, animate=False)

        tree.call_after_refresh(land)
        return node

    def _say(self, text: str) -> None:
        self.query_one("#event-search-status", Static).update(plain(text))

