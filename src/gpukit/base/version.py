"""The version of gpukit (also in pyproject.toml)."""

VERSION = "0.1.0"
