"""Build time of the embed pipeline: the model's sentence-transformers configuration, the exportable encoder and
the tokenizer file its starter serves."""
