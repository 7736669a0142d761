"""Device-free plans: what an op does to a row, computed from its spec, the input's shape and the row RNG.

Every device's kernel executes the same plan, so a crop box or a box update is decided in one place.
"""
