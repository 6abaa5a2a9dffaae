"""Publishing a built repository to a folder or S3 as new model versions, and rolling them out to servers."""
