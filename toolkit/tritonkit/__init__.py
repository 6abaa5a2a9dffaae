"""tritonkit: one spec file -> a validated NVIDIA Triton model repository and its deployment."""

__version__ = "0.1.0"

#: The Triton release the project validates against (shipped by nvidia-pytriton 0.7.0).
TRITON_VERSION = "2.51.0"
#: The official container of that release.
TRITON_IMAGE = "nvcr.io/nvidia/tritonserver:24.10-py3"
