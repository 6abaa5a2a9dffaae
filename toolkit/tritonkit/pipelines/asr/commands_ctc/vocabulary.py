"""The shipped model's closed vocabulary: its letter tokens, lexicon and grammar are all spelled from WORDS."""

DIGITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
COMMANDS = ["go", "stop", "left", "right", "up", "down", "yes", "no", "on", "off", "start", "pause", "play", "next",
            "back", "open", "close", "call", "cancel", "home", "menu", "music", "volume", "lights", "turn", "repeat",
            "louder", "quieter"]
WORDS = DIGITS + COMMANDS
