"""spec layer: workload, client profile and sweep specs (pydantic, loaded from YAML).

Each name lives in its own module (`tuner.spec.loader`, `tuner.spec.sweep`, `tuner.spec.workload`,
`tuner.spec.clients`): reading one spec module (the thresholds, a constant) does not build every
model of the layer.
"""
