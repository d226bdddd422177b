"""Package data: the download manifest and the table of known data errata."""
