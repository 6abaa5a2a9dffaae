"""English text normalization: numbers, ordinals, dates, times, currency, units and abbreviations become words.

espeak-ng would read some of these itself, but differently from what a listener expects ("3/4/2024", "$5.50",
"Dr."), and the model's symbol table only knows what the words sound like; so everything written with digits
or symbols is spelled out here first. Rules apply in a fixed order (abbreviations, currency, dates, times,
years, ordinals, minus signs, fractions, units, plain numbers, symbols), each one a regular expression with a small function.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from .numbers import cardinal, decimal, ordinal, year

MONTHS = ("January February March April May June July August September October November December").split()
_MONTH_BY_PREFIX = {m[:3].lower(): m for m in MONTHS}
# full names, or abbreviations with an optional period ("May." ends a sentence, so the full names take none)
_MONTH = rf"(?P<month>{'|'.join(MONTHS)}|(?:Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept?|Oct|Nov|Dec)\.?)"

# abbreviation -> words; titles always precede a name, so they never end a sentence
_TITLES = {"Dr.": "Doctor", "Mr.": "Mister", "Mrs.": "Missus", "Ms.": "Miz", "Prof.": "Professor",
           "Mt.": "Mount", "No.": "number"}
_ABBREVIATIONS = {"Jr.": "Junior", "Sr.": "Senior", "vs.": "versus", "etc.": "et cetera", "e.g.": "for example",
                  "i.e.": "that is", "approx.": "approximately", "Inc.": "Incorporated", "Ltd.": "Limited",
                  "Co.": "Company", "Ave.": "Avenue", "Dept.": "Department", "St.": "Street"}
_CURRENCIES = {"$": ("dollar", "dollars", "cent", "cents"), "£": ("pound", "pounds", "penny", "pence"),
               "€": ("euro", "euros", "cent", "cents")}
_UNITS = {"kHz": "kilohertz", "Hz": "hertz", "MHz": "megahertz", "GHz": "gigahertz", "km": "kilometers",
          "kg": "kilograms", "cm": "centimeters", "mm": "millimeters", "ms": "milliseconds", "GB": "gigabytes",
          "MB": "megabytes", "KB": "kilobytes", "mph": "miles per hour", "°C": "degrees Celsius",
          "°F": "degrees Fahrenheit"}
_SYMBOLS = {"&": "and", "+": "plus", "=": "equals", "@": "at", "%": "percent"}

_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"


def _number(text: str) -> str:
    """Digits with optional thousands commas and decimals -> words."""
    return decimal(text) if "." in text else cardinal(int(text.replace(",", "")))


def _abbreviation(match: re.Match[str]) -> str:
    word = match.group(0)
    if word in _TITLES:
        return _TITLES[word]
    if word == "St." and match.string[match.end():match.end() + 2][-1:].isupper():
        return "Saint"  # "St. Louis" is a saint, "Main St." a street
    return _ABBREVIATIONS[word] + _kept_period(match)


def _kept_period(match: re.Match[str]) -> str:
    """"." when the period that closed the match also ends the sentence (end of text, or a capital follows)."""
    rest = match.string[match.end():]
    ends_sentence = match.group(0).endswith(".") and (not rest.strip() or re.match(r"\s+[A-Z]", rest) is not None)
    return "." if ends_sentence else ""


def _money(match: re.Match[str]) -> str:
    one, many, sub_one, sub_many = _CURRENCIES[match["cur"]]
    amount, scale = match["amount"].replace(",", ""), match["scale"]
    if scale:  # "$1.5 million" -> "one point five million dollars"
        return f"{_number(amount)} {scale} {many}"
    whole, _, frac = amount.partition(".")
    whole = whole or "0"  # "$.50": cents only
    words = [f"{cardinal(int(whole))} {one if int(whole) == 1 else many}"] if int(whole) or not frac else []
    if frac:
        cents = int(frac.ljust(2, "0")[:2])
        if cents:
            words.append(f"{cardinal(cents)} {sub_one if cents == 1 else sub_many}")
    return " and ".join(words) or f"zero {many}"


def _day_month_year(day: int, month: str, year_: str | None) -> str:
    return f"{month} {ordinal(day)}" + (f", {year(int(year_))}" if year_ else "")


def _month_name(text: str) -> str:
    return _MONTH_BY_PREFIX[text[:3].lower()]


def _numeric_date(match: re.Match[str]) -> str:
    """ISO "2024-03-04" and US "3/4/2024" alike (named groups y, m, d); an impossible month or day is read as its
    numbers, in written order, with pauses (not hyphen-joined into one word, nor with the slashes)."""
    m, d = int(match["m"]), int(match["d"])
    if not (1 <= m <= 12 and 1 <= d <= 31):
        return ", ".join(cardinal(int(n)) for n in re.findall(r"\d+", match.group(0)))
    return _day_month_year(d, MONTHS[m - 1], match["y"])


def _month_day(match: re.Match[str]) -> str:
    return _day_month_year(int(match["day"]), _month_name(match["month"]), match["year"])


def _day_month(match: re.Match[str]) -> str:
    article = "" if match.string[:match.start()].rstrip().lower().endswith("the") else "the "
    return article + ordinal(int(match["day"])) + " of " + _month_name(match["month"]) + (
        f", {year(int(match['year']))}" if match["year"] else "")


def _time(match: re.Match[str]) -> str:
    hour, minute, half = int(match["h"]), int(match.groupdict().get("m") or 0), match["half"]
    if hour > 23 or minute > 59:
        return match.group(0)
    spoken = cardinal(hour)
    if minute:
        spoken += f" {'oh ' if minute < 10 else ''}{cardinal(minute)}"
    elif not half:
        spoken += " o'clock"
    return spoken + (f" {half[0].lower()} m{_kept_period(match)}" if half else "")


def _fraction(match: re.Match[str]) -> str:
    """A proper fraction with a small denominator as a listener says it ("1/2" one half, "3/4" three quarters,
    "5/8" five eighths); any other x/y (24/7, 3/2, 1/50) is "x over y"."""
    num, den = int(match["num"]), int(match["den"])
    if not 0 < num < den <= 16:
        return f"{cardinal(num)} over {cardinal(den)}"
    part = {2: "half", 4: "quarter"}.get(den) or ordinal(den)
    if num > 1:
        part = "halves" if part == "half" else part + "s"
    return f"{cardinal(num)} {part}"


def _unit(match: re.Match[str]) -> str:
    unit = _UNITS[match["unit"]]
    if match["num"] == "1":  # "1 km" -> "one kilometer"
        unit = re.sub(r"s\b", "", unit, count=1)
    return f"{_number(match['num'])} {unit}"


_RULES: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]] = [
    (re.compile("|".join(re.escape(a) for a in sorted({**_TITLES, **_ABBREVIATIONS}, key=len, reverse=True))
                .replace(r"No\.", r"No\.(?=\s*\d)")), _abbreviation),
    (re.compile(rf"(?P<cur>[$£€])\s?(?P<amount>{_NUMBER}|\.\d+)(?:\s(?P<scale>thousand|million|billion|trillion)\b)?"), _money),
    (re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})\b"), _numeric_date),
    (re.compile(r"\b(?P<m>\d{1,2})/(?P<d>\d{1,2})/(?P<y>\d{4})\b"), _numeric_date),
    (re.compile(rf"\b{_MONTH}\s(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s(?P<year>\d{{4}})\b)?"), _month_day),
    (re.compile(rf"\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s(?:of\s)?{_MONTH}(?:,?\s(?P<year>\d{{4}})\b)?"), _day_month),
    (re.compile(rf"\b{_MONTH}\s(?P<year>\d{{4}})\b"), lambda m: f"{_month_name(m['month'])} {year(int(m['year']))}"),
    (re.compile(r"\b(?P<h>\d{1,2}):(?P<m>\d{2})\b(?:\s?(?P<half>[AaPp](?:\.[Mm]\.|[Mm]))(?!\w))?"), _time),
    (re.compile(r"\b(?P<h>\d{1,2})\s?(?P<half>[AaPp](?:\.[Mm]\.|[Mm]))(?!\w)"), _time),  # "7 pm"
    (re.compile(r"\b(?P<pre>[Ii]n|[Ss]ince|[Bb]y|[Ff]rom|[Uu]ntil|[Yy]ear)\s(?P<y>1[1-9]\d\d|20\d\d)\b"),
     lambda m: f"{m['pre']} {year(int(m['y']))}"),
    (re.compile(r"\b(\d+)(st|nd|rd|th)\b"), lambda m: ordinal(int(m.group(1)))),
    (re.compile(rf"(?<![\w.])-(?={_NUMBER})"), lambda m: "minus "),  # before units, which would consume the number after the sign
    (re.compile(r"(?<![\w/.])(?P<num>\d+)/(?P<den>\d+)(?![\w/]|\.\d)"), _fraction),  # not "1/2/3" or "3/4.5"; before units, which would take the denominator
    (re.compile(rf"(?P<num>{_NUMBER})\s?(?P<unit>{'|'.join(sorted(_UNITS, key=len, reverse=True))})(?!\w)"), _unit),
    (re.compile(_NUMBER), lambda m: _number(m.group(0))),
    (re.compile("|".join(re.escape(s) for s in _SYMBOLS)), lambda m: f" {_SYMBOLS[m.group(0)]} "),
]


def normalize(text: str) -> str:
    """Text as words, whitespace collapsed; what cannot be read aloud (emoji, stray symbols) stays for espeak-ng."""
    for pattern, spell in _RULES:
        text = pattern.sub(spell, text)
    return re.sub(r"\s+", " ", text).strip()
