"""Schema upgrades: the ordered registry of pure migrations (`registry`), reading files at any version
(`read`) and the durable, resumable apply (`apply`)."""
