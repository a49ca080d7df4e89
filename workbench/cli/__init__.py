"""The command line: a thin layer that parses arguments, calls the core, and renders results."""
