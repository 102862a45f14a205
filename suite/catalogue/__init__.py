"""Case catalogues: one module per primitive family, each a list of OpEntry."""
