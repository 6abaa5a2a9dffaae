"""IPA from espeak-ng's own library (libespeak-ng.so.1 from Debian's espeak-ng) in process, through ctypes.

A subprocess per sentence costs about 9 ms here; the library call costs well under a millisecond, which keeps
phonemization out of the way of streaming. espeak-ng keeps its state in globals, so every call holds one lock.
`espeak_TextToPhonemes` returns one clause per call and drops punctuation: callers pass clauses without it.
"""
import ctypes
import threading

from .errors import FrontendError

LIBRARY = "libespeak-ng.so.1"
TIE = "\u0361"  # joins the letters of one phoneme: "a͡ɪ", "t͡ʃ"
_AUDIO_OUTPUT_SYNCHRONOUS = 2
_INITIALIZE_DONT_EXIT = 0x8000
_CHARS_UTF8 = 1
_PHONEMES_IPA = 0x02
_PHONEMES_TIE = 0x80

_lock = threading.Lock()
_lib: ctypes.CDLL | None = None
_voice: str | None = None


def _library() -> ctypes.CDLL:
    """Loads and initializes libespeak-ng once per process (call with the lock held)."""
    global _lib
    if _lib is None:
        try:
            lib = ctypes.CDLL(LIBRARY)
        except OSError:
            raise FrontendError(f"{LIBRARY} not found; install Debian's espeak-ng: apt-get install espeak-ng") from None
        lib.espeak_Initialize.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        lib.espeak_SetVoiceByName.argtypes = [ctypes.c_char_p]
        lib.espeak_TextToPhonemes.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.c_int]
        lib.espeak_TextToPhonemes.restype = ctypes.c_char_p
        if lib.espeak_Initialize(_AUDIO_OUTPUT_SYNCHRONOUS, 0, None, _INITIALIZE_DONT_EXIT) < 0:
            raise FrontendError("espeak-ng failed to initialize (its data folder is missing?); "
                                "reinstall: apt-get install --reinstall espeak-ng")
        _lib = lib
    return _lib


class Espeak:
    """espeak-ng phonemizer for one voice ("en-us", "en-gb", ...)."""

    def __init__(self, voice: str = "en-us") -> None:
        self.voice = voice
        with _lock:
            self._select(_library())

    def _select(self, lib: ctypes.CDLL) -> None:
        global _voice
        if _voice != self.voice:
            if lib.espeak_SetVoiceByName(self.voice.encode()) != 0:
                raise FrontendError(f"espeak-ng has no voice {self.voice!r}; list them with `espeak-ng --voices`")
            _voice = self.voice

    def ipa(self, clause: str) -> str:
        """IPA with stress marks and tie bars; espeak-ng's own clauses (if it finds several) joined by a space."""
        data = ctypes.create_string_buffer(clause.encode("utf-8"))
        pointer = ctypes.c_void_p(ctypes.addressof(data))
        mode = _PHONEMES_IPA | _PHONEMES_TIE | (ord(TIE) << 8)
        pieces = []
        with _lock:
            lib = _library()
            self._select(lib)
            while pointer.value:
                out = lib.espeak_TextToPhonemes(ctypes.byref(pointer), _CHARS_UTF8, mode)
                if out:
                    pieces.append(out.decode("utf-8").strip())
        return " ".join(p for p in pieces if p)
