"""The offline method behind the extractive model: no language model, deterministic.

- `terms`: words and identifiers (`__import__`, `csv.DictReader`, `self` kept whole), weights.
- `analysis`: what a question asks (answer type, subject, compared entities, parts, names).
- `evidence`: tool results turned into passages, sentences and code blocks with their sources,
  search ranks fused per passage and per page (index entries count as one more ranked list).
- `reading`: which passages to read in full (breadth first, then precision).
- `selection`: sentences ranked by how well they answer the question's type; relevance floor;
  "not found" when the best evidence is below the threshold or the question is about something the
  documents do not cover (a missing name or package, names mentioned only in passing, a version no
  release notes title, words a large corpus never uses).
- `planning`: the lead's delegations (distinct queries, boundaries) and its gap rounds.
- `writing`: the lead's report: the answer first, comparison tables, "possibly related".
`subagents.models.extractive.ExtractiveModel` drives the agent loops with them.
"""
