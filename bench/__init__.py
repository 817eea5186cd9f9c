"""kbt's benchmarks: one module per figure of docs/benchmarks.md, each run as `python -m bench.<name>`
(`--help` says what it measures and which section it feeds; bench/README.md lists them all, with their
time and what they need). They drive kbt as a user does (the CLI, or the runner in-process) and share
their plumbing in bench/_common.py. tuner never imports bench (the import contract in pyproject.toml)."""
