"""The CPU target's default schedules: the `#loop.schedule` each structured op
runs with on this CPU (`tensor-default-schedule`) and the machine model and
blocking heuristics it reads."""
