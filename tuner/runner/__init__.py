"""Runs sweeps: expands a sweep into named runs and drives, measures and stores each."""
