"""Shared foundations: exit codes, errors, paths. Imports nothing else from tuner."""
