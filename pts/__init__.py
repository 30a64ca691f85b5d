"""snia-pts: a SNIA Solid State Storage Performance Test Specification (PTS) suite,
pytest + fio."""

__version__ = "0.1.0"
