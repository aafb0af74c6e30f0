"""The read queries the UI and the scoring engine use, one module per thing asked about.

runs.py (runs and their recorded results), samples.py (one sample, its epochs, value counts),
paging.py (the paged, filtered, sorted sample list), filters.py (the filter language compiled to
parameterised SQL), effective_scores.py (which of a sample's scores counts), groups.py (per-group scores and sizes), compare.py (runs side by side) and
ui.py (small look-ups the screens need). `from evtui.store import queries as q` gives the runs
and samples queries under one name.
"""

from evtui.store.queries.runs import *  # noqa: F401,F403
from evtui.store.queries.runs import __all__ as _runs
from evtui.store.queries.samples import *  # noqa: F401,F403
from evtui.store.queries.samples import __all__ as _samples

__all__ = [*_runs, *_samples]
