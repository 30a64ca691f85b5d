"""What each page of the report says, per test family (iops, throughput, latency +
latency_qos, wsat, dirth_cbw: DIRTH/CBW, recovery: HIR/XSR), the pages every round-based test
shares (steady, convergence, fob, counters, histogram, plot3d), the run's own pages
(summary + warnings, toc, readings, qualification) and the SNIA header block on each page.
registry.py: which pages a test gets. Pages read the stored run (pts.stored) and build
their flowables and charts with pts.report.renderers."""
