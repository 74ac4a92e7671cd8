"""Sphinx configuration of bankproof's documentation (Markdown pages through MyST).

python -m sphinx -W -b html docs build/docs
"""

project = "bankproof"
extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["generate.py"]
myst_heading_anchors = 3
html_theme = "alabaster"
