"""`python -m pts conformance`: print docs/conformance.md (the conformance matrix generated
from pts/config/conformance.py), or write it with --write."""

from __future__ import annotations

import argparse
from pathlib import Path

from pts.config import conformance

DOC = Path(__file__).resolve().parents[2] / "docs" / "conformance.md"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--write", action="store_true",
                        help=f"write the matrix to {DOC} instead of printing it")


def run(args: argparse.Namespace) -> int:
    text = conformance.render()
    if args.write:
        DOC.write_text(text, encoding="utf-8")
        print(DOC)
    else:
        print(text, end="")
    return 0
