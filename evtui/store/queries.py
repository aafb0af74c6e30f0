"""The read queries the UI and the scoring engine use; one import for both halves.

Run-level queries live in queries_runs.py, the paged sample list in queries_paging.py, and
one sample, its epochs, value counts and groups in queries_samples.py.
"""

from evtui.store.queries_runs import *  # noqa: F401,F403
from evtui.store.queries_runs import __all__ as _runs
from evtui.store.queries_samples import *  # noqa: F401,F403
from evtui.store.queries_samples import __all__ as _samples

__all__ = [*_runs, *_samples]
