"""The package version, in one place (``pyproject.toml`` says the same; a test checks).

>>> VERSION.count(".")
2
"""

VERSION = "0.1.0"
