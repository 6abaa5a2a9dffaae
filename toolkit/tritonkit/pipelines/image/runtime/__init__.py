"""Plain-Python image runtime copied into model folders (as `image_runtime`): decoding and pixels, top-k labels."""
