"""Reproductions of the policy-optimisation papers (``optzoo reproduce <slug>``)."""
