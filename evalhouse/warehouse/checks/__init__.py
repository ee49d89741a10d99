"""The integrity checks run after every load and on demand: the expectation suites.

:mod:`.suites` defines the suites and runs them as a great-expectations checkpoint
(``evalhouse validate``); :mod:`.sql` runs the same checks as set-based SQL, the checkpoint
inside every load.
"""
