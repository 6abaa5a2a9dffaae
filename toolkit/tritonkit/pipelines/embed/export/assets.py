"""`python -m tritonkit.pipelines.embed.export.assets [PROJECT]`: the tokenizer file the starter's `tokenize`
serves, written to PROJECT/assets/tokenizer.json.

It is the model's own tokenizer.json with truncation at the model's max_seq_length (sentence_bert_config.json) and
no padding: the tokens sentence-transformers feeds the encoder, one sentence at a time.
"""
from __future__ import annotations

import sys
from pathlib import Path

from tritonkit.pipelines.embed.export.sentence import SentenceConfig

TOKENIZER = "assets/tokenizer.json"


def write_assets(root: Path, folder: str | None = None) -> list[Path]:
    """Writes the tokenizer of FOLDER (default: the starter's model) under ROOT; returns what it wrote."""
    from tokenizers import Tokenizer

    from tritonkit.pipelines.embed.export.encoder import model_dir

    folder = folder or model_dir()
    tokenizer = Tokenizer.from_file(str(Path(folder) / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=SentenceConfig.read(folder).max_seq_length)
    out = root / TOKENIZER
    out.parent.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(out))
    return [out]


if __name__ == "__main__":
    print("\n".join(str(p) for p in write_assets(Path(sys.argv[1] if len(sys.argv) > 1 else "."))))
