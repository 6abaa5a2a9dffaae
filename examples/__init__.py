"""Example projects for tritonkit: tiny models and specs that build without downloads."""
