"""driver layer."""
