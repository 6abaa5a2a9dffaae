"""Image classification pipeline: encoded image (PNG, JPEG, ...) -> `preprocess` -> `classifier` (ONNX) ->
`postprocess` (top-k labels and scores from a labels file), served as the ensemble `image`."""
