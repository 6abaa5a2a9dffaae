"""The image starter's classifier: shapes drawn for the classes of a labels file, and a small CNN trained on them."""
