"""Built-in perturbers, one module per family; registered by :mod:`synrob.perturb.builtins`."""
