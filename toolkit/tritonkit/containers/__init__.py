"""Running the generated deployment in containers: compose engines, `tritonkit up/down`, a stand-in Triton image."""
