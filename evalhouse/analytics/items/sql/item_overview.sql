-- Per item: its benchmark and domain, how many responses it has, the mean probability of
-- correctness over every response, and the gold-vs-runner-up margin per character over the
-- responses that were correct: its median (paper 003's m_i, Appendix E) and, for reference, its mean.
SELECT i.item_id, i.benchmark, i.domain,
       COUNT(r.item_id) AS n_responses,
       AVG(r.p_correct) AS p_mean,
       AVG(CASE WHEN r.acc = 1 THEN r.margin END) AS margin_mean,
       MEDIAN(CASE WHEN r.acc = 1 THEN r.margin END) AS margin_median
FROM item i
JOIN item_response r ON r.item_id = i.item_id
GROUP BY i.item_id, i.benchmark, i.domain
