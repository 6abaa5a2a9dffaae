"""Kubernetes and KServe manifests for Triton serving a published s3:// repository: sized, rendered, schema-checked."""
