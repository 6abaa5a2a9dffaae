"""English number words: cardinals, ordinals, years, decimals and digit strings (what the normalizer says aloud)."""
_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
         "seventeen eighteen nineteen").split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_SCALES = ((10**12, "trillion"), (10**9, "billion"), (10**6, "million"), (1000, "thousand"))
_ORDINAL_IRREGULAR = {"one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth",
                      "nine": "ninth", "twelve": "twelfth"}


def _below_thousand(n: int) -> str:
    words = []
    if n >= 100:
        words.append(f"{_ONES[n // 100]} hundred")
        n %= 100
    if n >= 20:
        words.append(_TENS[n // 10] + (f"-{_ONES[n % 10]}" if n % 10 else ""))
    elif n or not words:
        words.append(_ONES[n])
    return " ".join(words)


def cardinal(n: int) -> str:
    """1234 -> 'one thousand two hundred thirty-four'; negatives get 'minus'."""
    if n < 0:
        return f"minus {cardinal(-n)}"
    if n >= 10**15:
        return digits(str(n))
    words = []
    for scale, name in _SCALES:
        if n >= scale:
            words.append(f"{cardinal(n // scale)} {name}")
            n %= scale
    if n or not words:
        words.append(_below_thousand(n))
    return " ".join(words)


def ordinal(n: int) -> str:
    """21 -> 'twenty-first': the last word of the cardinal becomes ordinal."""
    words = cardinal(n)
    head, sep, last = words.rpartition(" ")
    hyphen_head, hsep, last = last.rpartition("-")
    if last in _ORDINAL_IRREGULAR:
        last = _ORDINAL_IRREGULAR[last]
    elif last.endswith("y"):
        last = last[:-1] + "ieth"
    else:
        last += "th"
    return f"{head}{sep}{hyphen_head}{hsep}{last}"


def year(n: int) -> str:
    """Years as people say them: 1999 -> 'nineteen ninety-nine', 2005 -> 'two thousand five',
    2024 -> 'twenty twenty-four'."""
    if not 1000 <= n <= 9999 or n % 1000 < 10:  # 2000..2009 read as cardinals: 'two thousand five'
        return cardinal(n)
    high, low = divmod(n, 100)
    if low == 0:
        return f"{cardinal(high)} hundred"
    return f"{cardinal(high)} {cardinal(low) if low >= 10 else 'oh ' + cardinal(low)}"


def plural(words: str) -> str:
    """The plural of a number's last word, as decades and centuries are said: 'nineteen eighty' -> 'nineteen eighties',
    'nineteen hundred' -> 'nineteen hundreds'."""
    head, sep, last = words.rpartition(" ")
    last = last[:-1] + "ies" if last.endswith("y") else last + ("es" if last.endswith("x") else "s")
    return f"{head}{sep}{last}"


def digits(text: str) -> str:
    """'0042' -> 'zero zero four two' (fractions after a decimal point, long numbers)."""
    return " ".join(_ONES[int(d)] for d in text if d.isdigit())


def decimal(text: str) -> str:
    """'3.14' -> 'three point one four'; '1,000.5' -> 'one thousand point five'."""
    whole, _, frac = text.replace(",", "").partition(".")
    words = cardinal(int(whole or "0"))
    return f"{words} point {digits(frac)}" if frac else words
