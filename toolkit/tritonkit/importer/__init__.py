"""`tritonkit import`: an existing Triton model repository -> a tritonkit.yaml whose build reproduces its configs."""
