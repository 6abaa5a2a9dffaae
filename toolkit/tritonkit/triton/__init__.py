"""The ground floor: facts about Triton 2.51 (its ModelConfig, how it reads a repository, its data types, its command
line) that every stage above uses; nothing here imports a tritonkit module outside this folder except `errors`."""
