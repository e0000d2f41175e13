"""The command line: one parser (`main`), one module per command group (run, algorithms, store, security,
crossover, completion). Every `SshbenchError` becomes one `sshbench: error:` line and its exit code."""

from __future__ import annotations

from sshbench.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
