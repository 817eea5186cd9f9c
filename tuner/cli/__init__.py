"""Command line: thin typer commands that map to pipeline stages."""
