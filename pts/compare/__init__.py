"""`python -m pts compare`: several stored runs side by side — the comparison (data.py,
over the stored runs (pts.stored) and the export's cells), compare.pdf (pdf.py, with overlaid
plots: charts.py, on the report's renderers) and compare.csv; cli.py the command."""
