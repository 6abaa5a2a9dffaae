"""English text normalization: numbers, ordinals, dates, times, currency, units and abbreviations become words.

espeak-ng would read some of these itself, but differently from what a listener expects ("3/4/2024", "$5.50",
"Dr."), and the model's symbol table only knows what the words sound like; so everything written with digits
or symbols is spelled out here first. Rules apply in a fixed order (abbreviations, currency, dates, telephone
numbers, times, decades, years, versions, feet and inches, leading zeros, ordinals, minus signs, fractions and splits,
dimensions, magnitudes, units, rates, plain numbers, symbols), each one a regular expression with a small function.
"""
import re
from collections.abc import Callable

from .numbers import cardinal, decimal, digits, ordinal, plural, year

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
               "€": ("euro", "euros", "cent", "cents"), "¥": ("yen", "yen", "sen", "sen"),
               "₹": ("rupee", "rupees", "paisa", "paise")}
# "$3.2M", "4.5B", "10k": the letter after an amount is its scale (lower-case m only after a currency sign, where
# it cannot be metres)
_SCALE_LETTERS = {"K": "thousand", "k": "thousand", "M": "million", "m": "million", "B": "billion", "bn": "billion",
                  "T": "trillion"}
_UNITS = {"kHz": "kilohertz", "Hz": "hertz", "MHz": "megahertz", "GHz": "gigahertz", "km": "kilometers",
          "kg": "kilograms", "cm": "centimeters", "mm": "millimeters", "ms": "milliseconds", "GB": "gigabytes",
          "MB": "megabytes", "KB": "kilobytes", "mph": "miles per hour", "km/h": "kilometers per hour",
          "m/s": "meters per second", "°C": "degrees Celsius",
          "°F": "degrees Fahrenheit"}
_SYMBOLS = {"&": "and", "+": "plus", "=": "equals", "@": "at", "%": "percent"}
# "$20/hour", "60 words/min": the slash before one of these reads "per"
_PER = {"hour": "hour", "hr": "hour", "day": "day", "night": "night", "week": "week", "wk": "week", "month": "month",
        "mo": "month", "year": "year", "yr": "year", "minute": "minute", "min": "minute", "second": "second",
        "sec": "second", "person": "person", "head": "head", "unit": "unit", "item": "item"}

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
    amount, scale = match["amount"].replace(",", ""), match["scale"] or _SCALE_LETTERS.get(match["letter"] or "")
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
    "5/8" five eighths); a split of a hundred in fives is its two parts ("50/50" fifty-fifty, "60/40"); any other
    x/y (24/7, 3/2, 1/50) is "x over y"."""
    num, den = int(match["num"]), int(match["den"])
    if num + den == 100 and num % 5 == 0:
        return f"{cardinal(num)}-{cardinal(den)}"
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


def _magnitude(match: re.Match[str]) -> str:
    """'4.5B' four point five billion, '10k' ten thousand; not a designator ('Apartment 4B', 'Gate 12B')."""
    designator = r"\b(?:[Aa]partment|[Aa]pt\.?|[Ff]lat|[Uu]nit|[Rr]oom|[Ss]uite|[Gg]ate|[Ss]eat|[Pp]latform)\s$"
    if re.search(designator, match.string[:match.start()]):
        return match.group(0)
    return f"{_number(match['num'])} {_SCALE_LETTERS[match['letter']]}"


def _phone(match: re.Match[str]) -> str:
    """A telephone number digit by digit, a pause between groups ("0800 123 456", "+44 20 7946 0958",
    "(555) 123-4567", "555-123-4567"); a shape that is as likely two numbers ("1990-2000", "10 200") is left."""
    text = match.group(0)
    groups = re.findall(r"\d+", text)
    if not (text[0] in "+(" or text.startswith("0") or len(groups) >= 3 or re.fullmatch(r"\d{3}-\d{4}", text)):
        return text
    return ("plus " if text.startswith("+") else "") + ", ".join(digits(g) for g in groups)


def _decade(match: re.Match[str]) -> str:
    """'1980s' nineteen eighties, '1900s' nineteen hundreds, "'70s" and '70s' seventies."""
    century = match["century"]
    return plural(year(int(century + match["tens"])) if century else cardinal(int(match["tens"])))


def _closes_quote(match: re.Match[str], mark: str) -> bool:
    """Whether the mark after the match's number closes a quotation ('said "take 5"', "said 'take 5'"): the last
    mark before it that opens one (after a space or at the start, before a word) has no mark after it."""
    before = match.string[:match.start()]
    opened = [m.end() for m in re.finditer(rf"(?:^|[\s(]){mark}(?=\w)", before)]
    return bool(opened) and mark not in before[opened[-1]:]


def _feet_inches(match: re.Match[str]) -> str:
    """5'11" five feet eleven inches, 6' six feet; a single quote that closes a quotation is left."""
    if match["mark"] == "'" and not match["inch"] and _closes_quote(match, "'"):
        return match.group(0)
    feet = int(match["ft"])
    spoken = f"{cardinal(feet)} {'foot' if feet == 1 else 'feet'}"
    if match["inch"]:
        spoken += f" {_number(match['inch'])} {'inch' if match['inch'] == '1' else 'inches'}"
    return spoken


def _inches(match: re.Match[str]) -> str:
    """12" twelve inches, unless the mark closes a quotation."""
    if match["mark"] == '"' and _closes_quote(match, '"'):
        return match.group(0)
    return f"{_number(match['inch'])} {'inch' if match['inch'] == '1' else 'inches'}"


_RULES: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]] = [
    (re.compile("|".join(re.escape(a) for a in sorted({**_TITLES, **_ABBREVIATIONS}, key=len, reverse=True))
                .replace(r"No\.", r"No\.(?=\s*\d)")), _abbreviation),
    (re.compile(rf"(?P<cur>[{''.join(_CURRENCIES)}])\s?(?P<amount>{_NUMBER}|\.\d+)"
                rf"(?:\s(?P<scale>thousand|million|billion|trillion)\b|(?P<letter>[KkMmBT]|bn)\b)?"), _money),
    (re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})\b"), _numeric_date),
    (re.compile(r"\b(?P<m>\d{1,2})/(?P<d>\d{1,2})/(?P<y>\d{4})\b"), _numeric_date),
    (re.compile(r"(?<![\w.,+])(?<!\d\s)(?:\+\d{1,3}[ .-]?(?:\d{1,4}[ .-])?|\(\d{2,5}\)\s?)?"
                r"\d{3,5}(?:[ .-]\d{3,5}){1,3}(?![\w]|[.,]\d)"), _phone),
    (re.compile(rf"\b{_MONTH}\s(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s(?P<year>\d{{4}})\b)?"), _month_day),
    (re.compile(rf"\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)?\s(?:of\s)?{_MONTH}(?:,?\s(?P<year>\d{{4}})\b)?"), _day_month),
    (re.compile(rf"\b{_MONTH}\s(?P<year>\d{{4}})\b"), lambda m: f"{_month_name(m['month'])} {year(int(m['year']))}"),
    (re.compile(r"\b(?P<h>\d{1,2}):(?P<m>\d{2})\b(?:\s?(?P<half>[AaPp](?:\.[Mm]\.|[Mm]))(?!\w))?"), _time),
    (re.compile(r"\b(?P<h>\d{1,2})\s?(?P<half>[AaPp](?:\.[Mm]\.|[Mm]))(?!\w)"), _time),  # "7 pm"
    (re.compile(r"(?<![\w.])(?:(?P<century>1\d|20)|['’](?=\d))?(?P<tens>(?(century)\d|[1-9])0)'?s\b"), _decade),
    (re.compile(r"\b(?P<pre>[Ii]n|[Ss]ince|[Bb]y|[Ff]rom|[Uu]ntil|[Yy]ear)\s(?P<y>1\d\d\d|20\d\d)\b"),
     lambda m: f"{m['pre']} {year(int(m['y']))}"),
    (re.compile(r"\bv(?P<v>\d+(?:\.\d+)*)\b"),
     lambda m: "version " + " point ".join(cardinal(int(p)) for p in m["v"].split("."))),
    (re.compile(r"\b(?P<ft>\d+)(?P<mark>['′])(?:\s?(?P<inch>\d+(?:\.\d+)?)[\"″])?(?![\w'])"), _feet_inches),
    (re.compile(r"\b(?P<inch>\d+(?:\.\d+)?)(?P<mark>[\"″])(?=\s\w)"), _inches),
    (re.compile(r"(?<![\w.,])(?<!\d\s)0\d+(?![\w]|[.,]\d)"), lambda m: digits(m.group(0))),  # "007": digit by digit
    (re.compile(r"#\s?(?=\d)"), lambda m: "number "),
    (re.compile(r"\b(\d+)(st|nd|rd|th)\b"), lambda m: ordinal(int(m.group(1)))),
    (re.compile(rf"(?<![\w.])-(?={_NUMBER})"), lambda m: "minus "),  # before units, which would take the number
    # not "1/2/3" or "3/4.5"; before units, which would take the denominator
    (re.compile(r"(?<![\w/.])(?P<num>\d+)/(?P<den>\d+)(?![\w/]|\.\d)"), _fraction),
    (re.compile(r"(?<![\w.])(?P<a>\d+)\s?[x×]\s?(?P<b>\d+)(?!\w|\.\d)"),
     lambda m: f"{cardinal(int(m['a']))} by {cardinal(int(m['b']))}"),
    (re.compile(rf"(?<![\w.])(?P<num>{_NUMBER})(?P<letter>[KkMB]|bn)\b"), _magnitude),
    (re.compile(rf"(?P<num>{_NUMBER})\s?(?P<unit>{'|'.join(sorted(_UNITS, key=len, reverse=True))})(?!\w)"), _unit),
    (re.compile(rf"(?<=[\w%])/(?P<per>{'|'.join(_PER)})\b"), lambda m: f" per {_PER[m['per']]}"),
    (re.compile(_NUMBER), lambda m: _number(m.group(0))),
    (re.compile("|".join(re.escape(s) for s in _SYMBOLS)), lambda m: f" {_SYMBOLS[m.group(0)]} "),
]


def normalize(text: str) -> str:
    """Text as words, whitespace collapsed; what cannot be read aloud (emoji, stray symbols) stays for espeak-ng."""
    for pattern, spell in _RULES:
        text = pattern.sub(spell, text)
    return re.sub(r"\s+", " ", text).strip()
