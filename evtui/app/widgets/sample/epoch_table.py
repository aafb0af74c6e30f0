"""A sample's epochs side by side: one row per epoch, one column per scorer (the score that counts)."""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.strip import Strip
from textual.widgets import DataTable

from evtui.app import formatting as fmt
from evtui.app.widgets.bounded_table import edge_marked_line
from evtui.app.widgets.sample.score_card import value_text
from evtui.safe_text import safe_line
from evtui.store.queries.samples import EpochRow


class EpochTable(DataTable[Content]):
    """Bounded by the run's epoch count; the row of the epoch on show carries a ▶ marker."""

    DEFAULT_CSS = """
    EpochTable {
        height: auto;
        max-height: 12;
        margin-bottom: 1;
    }
    """

    def __init__(self, epochs: Sequence[EpochRow], scorers: Sequence[str], current_epoch: int, *, id: str | None = None) -> None:
        super().__init__(cursor_type="row", zebra_stripes=True, id=id)
        self.epochs = list(epochs)
        self.scorers = [name for name in scorers if any(name in row.scores for row in self.epochs)]
        self.current_epoch = current_epoch

    def on_mount(self) -> None:
        labels = ["", "Epoch", *self.scorers, "Error"]
        rows = []
        for row in self.epochs:
            cells = [Content("▶" if row.epoch == self.current_epoch else ""), Content(str(row.epoch))]
            for scorer in self.scorers:
                cell = row.scores.get(scorer)
                cells.append(Content("–") if cell is None else fmt.score_content(cell.value_num, value_text(cell.value)))
            error = (row.error or "").strip().splitlines()
            cells.append(Content.styled(safe_line(error[0], 60), "$error") if error else Content(""))
            rows.append(cells)
        for index, label in enumerate(labels):
            width = max([len(label), *(rows[i][index].cell_length for i in range(len(rows)))])
            self.add_column(Content(safe_line(label, 40)), width=max(1, min(width, 40)))  # scorer names are not markup
        for row, cells in zip(self.epochs, rows, strict=True):
            self.add_row(*cells, key=str(row.rowid))
        current = next((i for i, row in enumerate(self.epochs) if row.epoch == self.current_epoch), 0)
        self.move_cursor(row=current)

    def render_line(self, y: int) -> Strip:
        return edge_marked_line(self, y, super().render_line(y))  # `tool_called[get_w…` at 80 columns

    def rowid_at(self, index: int) -> int | None:
        return self.epochs[index].rowid if 0 <= index < len(self.epochs) else None
