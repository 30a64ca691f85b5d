"""The test_start parameters every round-based test records the same way: its TC/QD, the
ActiveRange, write cache, data pattern, point length, round limit and the steady-state rule
(docs/results-format.md). Each test adds its own (matrix, tracking, WIPC) to these."""

from __future__ import annotations

from pts.config.settings import Settings


def common(settings: Settings, thread_count: int, queue_depth: int, ar_bytes: int) -> dict:
    spec = settings.spec
    return {
        "thread_count": thread_count, "queue_depth": queue_depth,
        "active_range_pct": spec.common.active_range_pct, "active_range_bytes": ar_bytes,
        "write_cache": spec.common.write_cache, "data_pattern": spec.common.data_pattern,
        "access": "RND",      # Throughput overrides it (SEQ)
        "point_seconds": settings.point_seconds, "max_rounds": settings.max_rounds,
        "window_rounds": spec.steady_state.window_rounds,
        "max_data_excursion": spec.steady_state.max_data_excursion,
        "max_slope_excursion": spec.steady_state.max_slope_excursion,
    }
