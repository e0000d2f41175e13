"""This machine: processes and temp dirs started and cleaned up, its facts, where processes run, files."""
