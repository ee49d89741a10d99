"""Snapshots: the warehouse frozen into content-hashed Parquet files that verify and reopen.

:mod:`.freeze` creates one (its Parquet written in bounded memory by :mod:`.write`);
:mod:`.format` is the manifest's form and the hashes a snapshot is named and checked by;
:mod:`.manifest` what a manifest read back may say; :mod:`.verify` re-hashes a snapshot against
it; :mod:`.reader` opens one read-only; :mod:`.diff` compares two; :mod:`.pin` freezes the live
warehouse for a command that must name its snapshot.
"""
