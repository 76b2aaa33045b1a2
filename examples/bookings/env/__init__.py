"""The example's tool environment (`[run] environment` in casework.toml)."""
