"""Does the model use it: behaviour on minimal pairs, erasure and interventions inside a forward pass, kept LM scores."""
