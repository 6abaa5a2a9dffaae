"""TTS text frontend: normalize (English) -> split sentences -> espeak-ng IPA -> Kokoro symbols -> token ids."""
from .errors import FrontendError
from .pipeline import MAX_TOKENS, Frontend, FrontendResult, Segment, sentences_of
from .symbols import SymbolTable

__all__ = ["MAX_TOKENS", "Frontend", "FrontendError", "FrontendResult", "Segment", "SymbolTable", "sentences_of"]
