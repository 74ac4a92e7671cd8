"""The package version, in one place (``pyproject.toml`` says the same; a test checks).

>>> VERSION.count(".")
2
"""

VERSION = "0.1.0"
HOME = "https://github.com/bankproof/bankproof"  # the project's page (the wheel's URLs, SARIF's driver)
DOCS = f"{HOME}/blob/main/docs"  # the documentation's pages, as a link from --help and SARIF
