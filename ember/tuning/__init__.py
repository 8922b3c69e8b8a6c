"""`ember tune`: schedules searched by measurement, recorded, and applied.

Here: `measure` (one schedule of one task compiled, checked and timed),
`runner` (where measurements run: here, a worker process, a Dask cluster),
`cost_model` (ranks candidates before they are measured), `search` (which
candidates of which task next) and `command` (the CLI). What a task is and
its harness (`ember.targets.cpu.schedule.tasks`), the CPU's space of
schedules (`ember.targets.cpu.schedule.space`), the records table
(`ember.targets.tuning_records`) and the pass that puts recorded schedules
into a compile (`tensor-apply-records`,
`ember.targets.cpu.schedule.apply_records`) belong to the targets, whose
pipelines use them. See docs/tuning.md.
"""
