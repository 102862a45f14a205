"""Regression harness for PULP training libraries: targets, build cache,
wire protocol, comparison, reports and the pytest plugin."""
