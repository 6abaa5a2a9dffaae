"""Text normalization: what is written with digits, symbols or abbreviations is spelled out as a listener expects."""
from __future__ import annotations

import pytest

from tritonkit.pipelines.tts.frontend.normalize import normalize
from tritonkit.pipelines.tts.frontend.numbers import cardinal, ordinal, year


@pytest.mark.parametrize("n, words", [
    (0, "zero"), (13, "thirteen"), (21, "twenty-one"), (105, "one hundred five"),
    (1234, "one thousand two hundred thirty-four"), (2_024_001, "two million twenty-four thousand one"),
    (-7, "minus seven"),
])
def test_cardinal(n: int, words: str) -> None:
    assert cardinal(n) == words


@pytest.mark.parametrize("n, words", [
    (1, "first"), (2, "second"), (3, "third"), (5, "fifth"), (12, "twelfth"), (20, "twentieth"),
    (21, "twenty-first"), (40, "fortieth"), (101, "one hundred first"),
])
def test_ordinal(n: int, words: str) -> None:
    assert ordinal(n) == words


@pytest.mark.parametrize("n, words", [
    (1999, "nineteen ninety-nine"), (2005, "two thousand five"), (2024, "twenty twenty-four"),
    (1905, "nineteen oh five"), (1900, "nineteen hundred"),
])
def test_year(n: int, words: str) -> None:
    assert year(n) == words


@pytest.mark.parametrize("text, spoken", [
    # numbers
    ("I have 3 cats and 1,000,000 ants.", "I have three cats and one million ants."),
    ("Pi is 3.14 and it is -5 outside.", "Pi is three point one four and it is minus five outside."),
    ("It is 50% off.", "It is fifty percent off."),
    ("Triton serves speech at 24 kHz.", "Triton serves speech at twenty-four kilohertz."),
    ("It weighs 1 kg.", "It weighs one kilogram."),
    # ordinals
    ("The 21st and 2nd place.", "The twenty-first and second place."),
    # dates
    ("Due on March 15, 2024.", "Due on March fifteenth, twenty twenty-four."),
    ("Due 2024-03-05.", "Due March fifth, twenty twenty-four."),
    ("Due 7/4/1999.", "Due July fourth, nineteen ninety-nine."),
    ("On 4th July 1999.", "On the fourth of July, nineteen ninety-nine."),
    ("The 5th of May.", "The fifth of May."),
    ("In May 2020 we met.", "In May twenty twenty we met."),
    ("Born in 1999.", "Born in nineteen ninety-nine."),
    # times
    ("At 10:30 am.", "At ten thirty a m."),
    ("At 9:05 and 12:00.", "At nine oh five and twelve o'clock."),
    ("Call at 7:45 PM.", "Call at seven forty-five p m."),
    ("Wake at 6:00 a.m. Then eat at 7 p.m. on time.", "Wake at six a m. Then eat at seven p m on time."),
    # currency
    ("It costs $12.50.", "It costs twelve dollars and fifty cents."),
    ("Pay £1 or €3.05.", "Pay one pound or three euros and five cents."),
    ("A $1.5 million deal.", "A one point five million dollars deal."),
    ("Only $0.99.", "Only ninety-nine cents."),
    # abbreviations
    ("Dr. Smith met Mr. Jones.", "Doctor Smith met Mister Jones."),
    ("St. Louis is on Main St. now.", "Saint Louis is on Main Street now."),
    ("Fruit, e.g. apples, etc. are fine.", "Fruit, for example apples, et cetera are fine."),
    ("Apples, pears, etc. The end.", "Apples, pears, et cetera. The end."),
    ("No. 5 & No. 6.", "number five and number six."),
])
def test_normalize(text: str, spoken: str) -> None:
    assert normalize(text) == spoken


def test_normalize_leaves_impossible_times_to_the_number_rules() -> None:
    assert normalize("Score 25:99 now.") == "Score twenty-five:ninety-nine now."


@pytest.mark.parametrize("text, spoken", [
    ("Due 2024-13-01.", "Due two thousand twenty-four, thirteen, one."),   # was "...twenty-four-thirteen-one"
    ("Due 13/45/2020.", "Due thirteen, forty-five, two thousand twenty."),  # was "thirteen/forty-five/..."
])
def test_an_impossible_date_is_read_as_its_numbers_with_pauses(text: str, spoken: str) -> None:
    assert normalize(text) == spoken


@pytest.mark.parametrize("text, spoken", [
    ("It costs $.50.", "It costs fifty cents."),   # was "$.fifty"
    ("Only €.05 or £.01 each.", "Only five cents or one penny each."),
])
def test_cents_written_without_a_leading_zero(text: str, spoken: str) -> None:
    assert normalize(text) == spoken


@pytest.mark.parametrize("text, spoken", [
    ("Add 1/2 cup.", "Add one half cup."),   # was "one/two"
    ("Use 3/4 of it.", "Use three quarters of it."),
    ("About 2/3 and 5/8 and 1/10 and 7/16.", "About two thirds and five eighths and one tenth and seven sixteenths."),
    ("It fell to -1/2.", "It fell to minus one half."),
    ("Open 24/7, 3/2 odds, 1/50 chance.", "Open twenty-four over seven, three over two odds, one over fifty chance."),
    ("Version 1/2/3.", "Version one/two/three."),   # not a fraction, not a date: the numbers only
])
def test_a_simple_fraction_is_read_as_one_and_other_ratios_as_over(text: str, spoken: str) -> None:
    assert normalize(text) == spoken


@pytest.mark.parametrize("text, spoken", [
    ("Wait 0:30 more.", "Wait zero thirty more."),   # a duration or 24-hour time, as many TTS systems read it
    ("Built in 1005.", "Built in one thousand five."),
])
def test_readings_that_stay_as_they_are(text: str, spoken: str) -> None:
    assert normalize(text) == spoken


def test_a_negative_number_with_a_unit_keeps_its_minus() -> None:
    assert normalize("It was -5 km and -1 kg.") == "It was minus five kilometers and minus one kilogram."


@pytest.mark.parametrize("text, spoken", [
    ("Music of the 1980s.", "Music of the nineteen eighties."),
    ("Back in the '70s and ’60s.", "Back in the seventies and sixties."),
    ("In her 20s, the 90's.", "In her twenties, the nineties."),
    ("The 1900s and the 2010s.", "The nineteen hundreds and the twenty tens."),
])
def test_decades(text: str, spoken: str) -> None:
    assert normalize(text) == spoken


@pytest.mark.parametrize("text, spoken", [
    ("A $3.2M round.", "A three point two million dollars round."),
    ("It has 4.5B users.", "It has four point five billion users."),
    ("A 70B model, 10k steps, £2bn, €5K.",
     "A seventy billion model, ten thousand steps, two billion pounds, five thousand euros."),
    ("Apartment 4B.", "Apartment fourB."),   # a designator, not a magnitude: the letter is left to espeak-ng
])
def test_magnitudes(text: str, spoken: str) -> None:
    assert normalize(text) == spoken


@pytest.mark.parametrize("text, spoken", [
    ("Drive 80 km/h.", "Drive eighty kilometers per hour."),
    ("Earn $20/hour.", "Earn twenty dollars per hour."),
    ("Type 60 words/min at 1 km/h or 3 m/s.",
     "Type sixty words per minute at one kilometer per hour or three meters per second."),
])
def test_rates(text: str, spoken: str) -> None:
    assert normalize(text) == spoken


@pytest.mark.parametrize("text, spoken", [
    ("Call 0800 123 456.", "Call zero eight zero zero, one two three, four five six."),
    ("Call +44 20 7946 0958.", "Call plus four four, two zero, seven nine four six, zero nine five eight."),
    ("Call (555) 123-4567 or 555-1234.",
     "Call five five five, one two three, four five six seven or five five five, one two three four."),
    ("Agent 007 at 0800.", "Agent zero zero seven at zero eight zero zero."),
    ("Between 1990-2000 and 10 200.",
     "Between one thousand nine hundred ninety-two thousand and ten two hundred."),  # two numbers, as before
])
def test_telephone_numbers_and_leading_zeros_are_read_digit_by_digit(text: str, spoken: str) -> None:
    assert normalize(text) == spoken


@pytest.mark.parametrize("text, spoken", [
    ("Conquered in 1066.", "Conquered in ten sixty-six."),
    ("In the year 1000.", "In the year one thousand."),
    ("Since 1099, by 1050.", "Since ten ninety-nine, by ten fifty."),
])
def test_years_before_1100(text: str, spoken: str) -> None:
    assert normalize(text) == spoken


@pytest.mark.parametrize("text, spoken", [
    ("It costs ¥1,500.", "It costs one thousand five hundred yen."),
    ("Pay ₹250.50 or ₹1.", "Pay two hundred fifty rupees and fifty paise or one rupee."),
])
def test_yen_and_rupees(text: str, spoken: str) -> None:
    assert normalize(text) == spoken


def test_a_hash_before_a_number_is_number() -> None:
    assert normalize("The #3 hit.") == "The number three hit."


@pytest.mark.parametrize("text, spoken", [
    ("A 50/50 chance.", "A fifty-fifty chance."),
    ("A 60/40 split, 1/50 odds.", "A sixty-forty split, one over fifty odds."),
])
def test_splits_of_a_hundred(text: str, spoken: str) -> None:
    assert normalize(text) == spoken


@pytest.mark.parametrize("text, spoken", [
    ("A 2x2 grid.", "A two by two grid."),
    ("At 1920×1080, a 2 x 4.", "At one thousand nine hundred twenty by one thousand eighty, a two by four."),
])
def test_dimensions(text: str, spoken: str) -> None:
    assert normalize(text) == spoken


@pytest.mark.parametrize("text, spoken", [
    ("Use v3.1 now.", "Use version three point one now."),
    ("From v2 to v1.10.2.", "From version two to version one point ten point two."),
])
def test_versions(text: str, spoken: str) -> None:
    assert normalize(text) == spoken


@pytest.mark.parametrize("text, spoken", [
    ("He is 5'11\" tall.", "He is five feet eleven inches tall."),
    ("She is 6' tall, with a gap of 1' 1\".", "She is six feet tall, with a gap of one foot one inch."),
    ("A 12\" pizza.", "A twelve inches pizza."),
    # closing quotes, not inches or feet
    ("He said \"take 5\" and 'give 6' back.", "He said \"take five\" and 'give six' back."),
])
def test_feet_and_inches(text: str, spoken: str) -> None:
    assert normalize(text) == spoken
