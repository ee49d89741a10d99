"""Snapshots: the warehouse frozen into content-hashed Parquet files that verify and reopen.

:mod:`.freeze` creates, verifies and opens a snapshot, writing its Parquet through
:mod:`.write` and checking a manifest read back with :mod:`.manifest`; :mod:`.diff` compares two
snapshots and :mod:`.pin` freezes the live warehouse for a command that must name one.
"""
