"""The renderers and charts: reportlab flowables and page geometry (layout), the PDF's page
template and layout pass (pdf), and the charts as PNG bytes (matplotlib: charts, charts_3d,
histogram_chart, dirth_cbw_charts). They draw what they are given and know no page content: the
pages (pts.report.pages) import them, never the other way round."""
