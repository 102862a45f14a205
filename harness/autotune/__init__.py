"""The autotuner: for each layer and step of a network, the fastest correct
(tiling, kernel, cores) under an L1 budget.

  layers.py      layer kinds and the TOML network description
  tiler.py       the tilings of a layer's step that fit the L1, largest first
  strategies/    which tilings to measure: exhaustive, greedy (one module each)
  tuner.py       measuring tilings through the results database and a Session
  outputs.py     CSV, JUnit, JSON, the C header and the heatmaps; a partial run merged
  names.py       names as C identifiers and file names
  heatmap.py     a kernel x tiling heatmap as SVG
  cli.py         python -m harness autotune / ./ptl tune
"""
