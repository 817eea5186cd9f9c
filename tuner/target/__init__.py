"""Targets: where load goes and where broker metrics come from, behind one interface.

    target = resolve_target(lab_dir=None, target_file=None)   # the embedded lab by default

The interface is `tuner.target.base` (Target and what it is built from), `resolve_target` is in
`tuner.target.registry`. A target kind is one module here (`lab`: kbt's own lab; `file`: any
cluster named by a target file, or by Kafka-tool flags: `ClusterFlags`). Runners take a `Target`
and never read the lab's state file.
"""
