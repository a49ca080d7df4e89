"""Tests of the command line, one module per command (workbench/cli/<command>.py)."""
