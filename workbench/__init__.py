"""wb: an agent's durable state inside the git repository it works on."""

__version__ = "0.1.0"
