"""Loading: how parsed records and item batches become warehouse rows, inside one run.

:mod:`.ledger` is the run (its source, fetch and ``ingest_run`` rows, and the one transaction
every load goes through); :mod:`.records` loads EEE records, building their rows with
:mod:`.rows` and their scores as a :mod:`.score_batch`; :mod:`.items` loads item-level batches;
:mod:`.report` is what a load counted and :mod:`.quarantine` reads back what loads refused.
"""
