"""The core (readers, store, scoring, grading, watch) must import without Textual."""

import ast
import subprocess
import sys
from pathlib import Path

CORE_MODULES = [
    "evtui.records",
    "evtui.safe_text",
    "evtui.readers",
    "evtui.store",
    "evtui.writers",
    "evtui.scoring",
    "evtui.grading",
    "evtui.watch",
    "evtui.cli",
]


def test_core_imports_without_textual():
    code = (
        "import sys, importlib, pkgutil\n"
        "import evtui\n"
        f"for name in {CORE_MODULES!r}:\n"
        "    module = importlib.import_module(name)\n"
        "    if hasattr(module, '__path__'):\n"
        "        for info in pkgutil.walk_packages(module.__path__, name + '.'):\n"
        "            importlib.import_module(info.name)\n"
        "leaked = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
        "print(','.join(leaked))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "", f"core modules imported Textual: {result.stdout.strip()}"


# The layers, lowest first: a module may import its own layer and the ones below, never above.
# scoring and watch are siblings (neither imports the other); sample_view builds the sample
# screen's view from the index for the app.
LAYERS = [
    {"evtui", "records", "score_values", "sample_state", "gc_pause", "safe_text", "moved", "number_text"},
    {"readers"},
    {"store"},
    {"grading"},
    {"scoring", "watch", "sample_view"},
    {"writers"},  # files written for the user: an Inspect log copy re-computes its metrics
    {"app"},
    {"commands"},
    {"cli", "__main__"},
]
SIBLINGS = [("scoring", "watch"), ("watch", "scoring")]
PACKAGE = Path(__file__).resolve().parent.parent / "evtui"


def _modules() -> dict[str, Path]:
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    return modules


def _imports(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Every evtui module each module imports, at the top or inside a function (lazy imports too)."""
    edges: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = edges.setdefault(name, set())
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("evtui"):
                for alias in node.names:
                    submodule = f"{node.module}.{alias.name}"
                    targets.add(submodule if submodule in modules else node.module)
            elif isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names if alias.name.startswith("evtui"))
    return edges


def _layer_of(module: str) -> tuple[int, str]:
    top = module.split(".")[1] if "." in module else "evtui"
    for rank, layer in enumerate(LAYERS):
        if top in layer:
            return rank, top
    raise AssertionError(f"{module}: top-level name {top!r} is in no layer; add it to LAYERS")


def test_imports_point_down_the_layers():
    modules = _modules()
    upward = []
    for source, targets in _imports(modules).items():
        source_rank, source_top = _layer_of(source)
        for target in targets:
            target_rank, target_top = _layer_of(target)
            if target_rank > source_rank or (source_top, target_top) in SIBLINGS:
                upward.append(f"{source} imports {target}")
    assert upward == []


def test_no_two_modules_import_each_other():
    """No import cycle of any length between evtui's modules (lazy imports count too)."""
    modules = _modules()
    edges = _imports(modules)
    cycles = []
    for start in modules:  # a depth-first walk from each module back to itself
        stack = [(start, [start])]
        seen = set()
        while stack:
            node, path = stack.pop()
            for target in edges.get(node, ()):
                if target == start:
                    cycles.append(" -> ".join([*path, start]))
                elif target in modules and target not in seen:
                    seen.add(target)
                    stack.append((target, [*path, target]))
    assert cycles == []


def test_re_scoring_with_match_loads_no_grading_code():
    """`evtui score --scorer match` resolves its scorer without the model-graded modules (issue 14)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from evtui.scoring.jobs.config import ScoringJobConfig\n"
        "from evtui.scoring.jobs import runner\n"
        "ScoringJobConfig(scorers=['match', 'includes']).validate_specs()\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(('httpx', 'evtui.grading.client', 'evtui.scoring.inspect.scorers.model_graded')))\n"
        "print(loaded)\n"
        "ScoringJobConfig(scorers=['model_graded_qa']).validate_specs()\n"
        "print('evtui.scoring.inspect.scorers.model_graded' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["[]", "True"]



# A folder with more modules than this, or three modules sharing a prefix, is a package in hiding
# (DESIGN.md, issue 25): a newcomer should find "the review part" by its folder, not by scanning.
MAX_MODULES_PER_FOLDER = 14


def _folders() -> dict[Path, list[str]]:
    folders: dict[Path, list[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        if "__pycache__" not in path.parts and path.name != "__init__.py":
            folders.setdefault(path.parent, []).append(path.stem)
    return folders


def test_no_folder_holds_more_than_fourteen_modules():
    crowded = {str(folder.relative_to(PACKAGE.parent)): len(names)
               for folder, names in _folders().items() if len(names) > MAX_MODULES_PER_FOLDER}
    assert crowded == {}


def test_no_three_modules_share_a_prefix():
    hiding = {}
    for folder, names in _folders().items():
        prefixes: dict[str, list[str]] = {}
        for name in names:
            if "_" in name:
                prefixes.setdefault(name.split("_", 1)[0], []).append(name)
        for prefix, members in prefixes.items():
            # a module named for the prefix itself (jobs.py beside jobs_x.py) counts too
            members = sorted({*members, *(n for n in names if n == prefix)})
            if len(members) >= 3:
                hiding[f"{folder.relative_to(PACKAGE.parent)}/{prefix}_*"] = members
    assert hiding == {}


def test_old_module_paths_still_import_with_a_warning():
    """Plugins written against the paths before the re-lays keep loading (issue 25)."""
    code = (
        "import warnings\n"
        "warnings.simplefilter('always')\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    import evtui.scoring.engine.runner as old_runner\n"
        "    import evtui.scoring.jobs.runner as new_runner\n"
        "    from evtui.store.review_writes import reviewer_name\n"
        "    from evtui.store.ingest import ingest_paths\n"
        "    from evtui.store.ingest.files import ingest_paths as new_ingest_paths\n"
        "    from evtui.readers.inspect_eval import read as old_read\n"
        "print(old_runner is new_runner, ingest_paths is new_ingest_paths)\n"
        "print(sorted({str(w.message).split(' moved')[0] for w in caught if w.category is DeprecationWarning}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    same, warned = done.stdout.splitlines()
    assert same == "True True"
    assert warned == str(sorted(["evtui.scoring.engine", "evtui.scoring.engine.runner", "evtui.store.review_writes",
                                 "evtui.store.ingest.ingest_paths", "evtui.readers.inspect_eval"]))
