"""The support layer: what the formulas, figures and widgets all lean on (argument checks,
device choice, seeding, check_close, timing and memory measurement). It imports nothing
else from nbhelpers."""
