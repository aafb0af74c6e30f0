"""Module paths from before evtui's folders were laid out in packages, kept importable for plugins.

A plugin written against `evtui.scoring.values`, `evtui.scoring.engine.runner`, … still loads: the
old name is answered with the new module (the same module object, so registrations and
isinstance checks agree) and a DeprecationWarning naming the new path. The package itself,
`evtui.scoring`, is the documented import and needs none of this.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from typing import Any

MOVED: dict[str, str] = {
    # the first re-lay (scoring/ in packages)
    "evtui.scoring.values": "evtui.score_values",
    "evtui.scoring.state": "evtui.sample_state",
    "evtui.scoring.registry": "evtui.scoring.specs.registry",
    "evtui.scoring.plugins": "evtui.scoring.specs.plugins",
    "evtui.scoring.metrics": "evtui.scoring.inspect.metrics.basic",
    "evtui.scoring.metrics_ci": "evtui.scoring.inspect.metrics.ci",
    "evtui.scoring.metrics_grouped": "evtui.scoring.inspect.metrics.grouped",
    "evtui.scoring.reducers": "evtui.scoring.inspect.reducers",
    "evtui.scoring.text": "evtui.scoring.inspect.text",
    "evtui.scoring.ag2_inputs": "evtui.scoring.ag2.inputs",
    # the second re-lay (issue 25: store/, readers/, app/widgets/, scoring/engine/ by idea)
    "evtui.store.review_io": "evtui.store.review.io",
    "evtui.store.review_ledger": "evtui.store.review.ledger",
    "evtui.store.review_policy": "evtui.store.review.policy",
    "evtui.store.review_queues": "evtui.store.review.queues",
    "evtui.store.review_raters": "evtui.store.review.raters",
    "evtui.store.review_scale": "evtui.store.review.scale",
    "evtui.store.review_schema": "evtui.store.review.schema",
    "evtui.store.review_writes": "evtui.store.review.writes",
    "evtui.store.ingest_samples": "evtui.store.ingest.samples",
    "evtui.store.ingest_worker": "evtui.store.ingest.worker",
    "evtui.store.rows": "evtui.store.ingest.rows",
    "evtui.store.export_view": "evtui.store.export.view",
    "evtui.store.jobs_export": "evtui.store.export.scores",
    "evtui.store.parquet_export": "evtui.store.export.parquet",
    "evtui.store.parquet_rows": "evtui.store.export.parquet_rows",
    "evtui.store.export_svg": "evtui.writers.svg",
    "evtui.scoring.inspect.review_apply": "evtui.writers.inspect_log",
    "evtui.readers.inspect_common": "evtui.readers.inspect.common",
    "evtui.readers.inspect_eval": "evtui.readers.inspect.eval_log",
    "evtui.readers.inspect_io": "evtui.readers.inspect.sample_json",
    "evtui.readers.inspect_json": "evtui.readers.inspect.json_log",
    "evtui.readers.inspect_legacy": "evtui.readers.inspect.legacy",
    "evtui.readers.inspect_shape": "evtui.readers.inspect.shape",
    "evtui.readers.lm_eval_legacy": "evtui.readers.lm_eval.legacy",
    "evtui.readers.lm_eval_samples": "evtui.readers.lm_eval.samples",
    "evtui.readers.verifiers_traces": "evtui.readers.verifiers.traces",
    "evtui.readers.verifiers_values": "evtui.readers.verifiers.values",
    "evtui.readers.harbor_trials": "evtui.readers.harbor.trials",
    "evtui.readers.ag2_tasks": "evtui.readers.ag2.tasks",
    "evtui.app.widgets.plot_bars": "evtui.app.widgets.plots.bars",
    "evtui.app.widgets.plot_chart": "evtui.app.widgets.plots.chart",
    "evtui.app.widgets.plot_heatmap": "evtui.app.widgets.plots.heatmap",
    "evtui.app.widgets.plot_intervals": "evtui.app.widgets.plots.intervals",
    "evtui.app.widgets.plot_lines": "evtui.app.widgets.plots.lines",
    "evtui.app.widgets.plot_marks": "evtui.app.widgets.plots.marks",
    "evtui.app.widgets.plot_panel": "evtui.app.widgets.plots.panel",
    "evtui.app.widgets.live_metric_chart": "evtui.app.widgets.plots.live_metric",
    "evtui.app.widgets.sql_table_draw": "evtui.app.widgets.sql_table.draw",
    "evtui.app.widgets.sql_table_pages": "evtui.app.widgets.sql_table.pages",
    "evtui.app.widgets.sql_table_parts": "evtui.app.widgets.sql_table.parts",
    "evtui.app.widgets.sample_columns": "evtui.app.widgets.sample.columns",
    "evtui.app.widgets.sample_comparison": "evtui.app.widgets.sample.comparison",
    "evtui.app.widgets.sample_overview": "evtui.app.widgets.sample.overview",
    "evtui.app.widgets.epoch_table": "evtui.app.widgets.sample.epoch_table",
    "evtui.app.widgets.score_card": "evtui.app.widgets.sample.score_card",
    "evtui.app.widgets.transcript": "evtui.app.widgets.sample.transcript",
    "evtui.app.widgets.event_log": "evtui.app.widgets.sample.event_log",
    "evtui.app.screens.agreement": "evtui.app.screens.review.agreement",
    "evtui.app.screens.compare_forest": "evtui.app.screens.compare.forest",
    "evtui.app.screens.matrix": "evtui.app.screens.compare.matrix",
    "evtui.scoring.intervals": "evtui.scoring.stats.intervals",
    "evtui.scoring.inspect.metrics_ci": "evtui.scoring.inspect.metrics.ci",
    "evtui.scoring.inspect.metrics_grouped": "evtui.scoring.inspect.metrics.grouped",
    "evtui.scoring.engine": "evtui.scoring.jobs",  # its modules are served one by one below
    "evtui.scoring.engine.runner": "evtui.scoring.jobs.runner",
    "evtui.scoring.engine.units": "evtui.scoring.jobs.units",
    "evtui.scoring.engine.inputs": "evtui.scoring.jobs.inputs",
    "evtui.scoring.engine.batch_requests": "evtui.scoring.jobs.batch_requests",
    "evtui.scoring.engine.config": "evtui.scoring.jobs.config",
    "evtui.scoring.engine.job_columns": "evtui.scoring.jobs.job_columns",
    "evtui.scoring.engine.text_scoring": "evtui.scoring.jobs.text_scoring",
    "evtui.scoring.engine.template_fields": "evtui.scoring.jobs.template_fields",
    "evtui.scoring.engine.unscored": "evtui.scoring.jobs.unscored",
    "evtui.scoring.engine.pipeline": "evtui.scoring.results.pipeline",
    "evtui.scoring.engine.computed": "evtui.scoring.results.computed",
    "evtui.scoring.engine.recorded": "evtui.scoring.results.recorded",
    "evtui.scoring.engine.recorded_checks": "evtui.scoring.results.recorded_checks",
    "evtui.scoring.engine.reviewed": "evtui.scoring.results.reviewed",
    "evtui.scoring.engine.groups": "evtui.scoring.results.groups",
    "evtui.scoring.engine.group_columns": "evtui.scoring.results.group_columns",
    "evtui.scoring.engine.group_intervals": "evtui.scoring.stats.intervals",
    # issue 29: group intervals folded into the one interval policy
    "evtui.scoring.results.group_intervals": "evtui.scoring.stats.intervals",
    "evtui.scoring.engine.columns": "evtui.scoring.results.columns",
    "evtui.scoring.engine.default_metrics": "evtui.scoring.results.default_metrics",
    "evtui.scoring.engine.reproduction": "evtui.scoring.results.reproduction",
    "evtui.scoring.engine.run_notes": "evtui.scoring.results.run_notes",
    "evtui.scoring.engine.results": "evtui.scoring.results.types",
    # issue 30: commands/ made room for `evtui runs`
    "evtui.commands.stdout": "evtui.writers.stdout",
}


# Plain classes, as the import system only calls their methods: importlib.abc pulls in
# importlib.resources (15 ms) on every evtui start, ingest's decoding process included.
class _Alias:
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: Any) -> Any:
        warnings.warn(f"{spec.name} moved to {self.target}; import it from there ",
                      DeprecationWarning, stacklevel=3)
        module = importlib.import_module(self.target)
        sys.modules[spec.name] = module
        return module

    def exec_module(self, module: Any) -> None:  # the target module is already executed
        pass


class MovedModuleFinder:
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in MOVED:
            return None
        import importlib.util

        return importlib.util.spec_from_loader(fullname, _Alias(MOVED[fullname]))


def install() -> None:
    if not any(isinstance(finder, MovedModuleFinder) for finder in sys.meta_path):
        # first, so an old name is answered by its module, never by a second copy found on a path
        sys.meta_path.insert(0, MovedModuleFinder())


def forwarding_getattr(package: str, target: str) -> Any:
    """A package's `__getattr__` for an old module path that is now the package itself
    (`evtui.store.ingest` was a module, is now a folder): names the old module had are served
    from `target` with a DeprecationWarning. Submodules of the package import as usual."""

    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        value = getattr(importlib.import_module(target), name, _MISSING)
        if value is _MISSING:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        warnings.warn(f"{package}.{name} moved to {target}.{name}; import it from there",
                      DeprecationWarning, stacklevel=2)
        return value

    return __getattr__


_MISSING = object()
