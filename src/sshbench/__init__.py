"""sshbench: measure SSH transfer speed per algorithm, with CPU cost, and trust the numbers."""

__version__ = "0.1.0"
