"""Indexing run files into the store: `files` (which files to read, one transaction each),
`samples` (change-aware batch writes of a run's samples and scores), `rows` (records → row
tuples), `worker` (a second process that decodes a large file while this one writes), `bulk_indexes` (a big
first file's secondary indexes built after its rows)."""

from evtui.moved import forwarding_getattr

__getattr__ = forwarding_getattr(__name__, "evtui.store.ingest.files")  # evtui.store.ingest was files.py
