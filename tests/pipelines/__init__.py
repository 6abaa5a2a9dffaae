"""The pipeline plugins: the registry, their starters and spec sections, and the core that imports none of them."""
