"""tritonkit: one spec file -> a validated NVIDIA Triton model repository and its deployment."""

__version__ = "0.1.0"

#: The Triton release the project validates against (shipped by nvidia-pytriton 0.7.0).
TRITON_VERSION = "2.51.0"
