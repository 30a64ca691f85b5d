"""Datasheet qualification: a stored run judged against a datasheet's requirements
(judge.py; pts.config.datasheet reads the TOML), and `python -m pts qualify` (cli.py). The
run report's Qualification page (pts.report.pages.qualification) shows the judgements the
run recorded; it reads them from the ledger, so the report never imports this package."""
