"""Pipeline specs shipped with tritonkit; a project includes one as `include: [tritonkit:ensembles/<name>.yaml]`."""
