"""Muted text in the app's own spans is drawn muted. In Textual 8.2.8 a Content span styled
`$text-muted` ("auto 60%") loses its alpha and draws in the full foreground colour, so evtui's
spans use `$foreground-muted`: the sample heading's labels are the example here."""

from __future__ import annotations

from conftest import APP_SIZE, settle
from textual.color import Color

from evtui.app.app import EvtuiApp
from evtui.app.screens.sample import SampleScreen
from evtui.store.location import default_index_path


async def test_the_sample_headings_labels_are_drawn_muted_not_in_the_foreground(run_dir):
    app = EvtuiApp(db_path=default_index_path(run_dir), ingest_paths=[run_dir])
    async with app.run_test(size=APP_SIZE) as pilot:
        await settle(app, pilot)
        row = next(i for i, run in enumerate(app.screen.runs) if run.task == "qa_match")
        app.screen.query_one("#runs-table").move_cursor(row=row)
        for _ in range(3):  # the run, its samples, the first sample
            await pilot.press("enter")
            await settle(app, pilot)
        assert isinstance(app.screen, SampleScreen)
        heading = app.screen.query_one("#sample-heading")
        label = next(segment for segment in heading.render_line(0) if segment.text.strip())
        assert label.text.startswith("sample")
        variables = app.theme_variables
        background = heading.background_colors[1]
        colour = label.style.color.triplet.hex
        assert colour == (background + Color.parse(variables["foreground-muted"])).hex.lower()
        assert colour != Color.parse(variables["foreground"]).hex.lower()
