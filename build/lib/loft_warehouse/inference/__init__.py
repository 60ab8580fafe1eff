"""Calling the systems under test: systems.yaml, providers, the durable response store, flow
control (limits, retries, progress), cost estimates, and the runner behind `responses`."""
