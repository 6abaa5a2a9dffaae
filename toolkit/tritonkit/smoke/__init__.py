"""`tritonkit smoke`: proves over the network that every model of a repository answers correctly."""
