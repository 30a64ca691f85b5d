"""What the e2e browser tests read off the dashboard's pages."""

from __future__ import annotations


def chart_shows(browser, rounds: int) -> bool:
    """The page's convergence chart is the one drawn after `rounds` rounds, and it loaded
    (an SVG the browser decoded)."""
    done, width, shown, src = browser.execute_script(
        "var i = document.getElementById('convergence'); "
        "return [i.complete, i.naturalWidth, i.getAttribute('data-rounds'), i.src];")
    return shown == str(rounds) and src.endswith(f"/convergence.svg?r={rounds}") \
        and done and width > 100


def console_errors(browser) -> list[str]:
    """What the browser's console logged as errors since the last call."""
    return [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
