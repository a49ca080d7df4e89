"""Git, as wb uses it: finding the repository (worktrees included), reading and writing objects, and moving
refs with compare-and-swap (`repo`). The one place that runs `git` plumbing; imports only the model."""
