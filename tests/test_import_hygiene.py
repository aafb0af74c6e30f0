"""The core (readers, store, scoring, grading, watch) must import without Textual."""

import subprocess
import sys

CORE_MODULES = [
    "evtui.records",
    "evtui.readers",
    "evtui.store",
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
