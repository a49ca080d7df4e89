"""The workbench operations a command runs, as library functions: create a workbench (`init`), check and
repair it (`doctor`), status, validation, replay and acceptance runs, and the demo (`demo`). Each takes its
inputs and returns a result; none prints."""
