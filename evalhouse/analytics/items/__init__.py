"""Item-level analyses (paper 003): the benchmark-item audit, welfare, optimal weights, IRT.

``simulate`` makes panels with known truth; ``engine`` runs the SQL primitives on DuckDB or
Spark; ``audit`` fits improvability / cost / noise with bootstraps; ``welfare`` scores items by
the work they stand for; ``compare`` has the audit's tests and ranking agreement; ``optimal``
solves for the aggregation weights v*; ``irt`` fits a 2PL model and picks anchor subsets;
``report`` draws the HTML section.
"""
