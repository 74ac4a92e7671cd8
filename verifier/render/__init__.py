"""Renderers: results in, text / HTML / SVG / SARIF out. Pure functions; they compute nothing
that the API did not already return."""
