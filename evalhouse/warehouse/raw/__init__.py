"""The raw store: every fetched or imported payload, kept by sha256 before anything parses it.

:mod:`.store` is the content-addressed store (loose files and its manifest); :mod:`.packs` the
append-only pack files a bulk import writes its many small payloads into.
"""
