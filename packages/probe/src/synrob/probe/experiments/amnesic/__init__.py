"""``amnesic``: does a causal LM use what a probe finds? LEACE erasure, a random control of the
same rank, and counterfactual interventions, per layer, measured on agreement minimal pairs."""

from .experiment import AmnesicExperiment

__all__ = ["AmnesicExperiment"]
