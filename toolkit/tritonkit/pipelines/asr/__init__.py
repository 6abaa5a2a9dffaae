"""ASR pipeline: fbank features -> CTC acoustic model -> WFST (TLG) decoder, offline and streaming."""
