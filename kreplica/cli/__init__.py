"""Thin typer commands: parse options, call analysis, hand results to report, return an exit code."""
