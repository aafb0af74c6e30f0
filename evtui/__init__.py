"""evtui: a terminal workbench for LLM evaluation runs."""

__version__ = "0.1.0"
