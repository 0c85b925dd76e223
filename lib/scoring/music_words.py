"""Music prompt words -> what taggers can hear: so a prompt's genre, instrument and mood words can be
checked against musicnn's tags ("mtt:piano", "msd:electronic") and YAMNet's AudioSet classes
("Piano", "Happy music") without CLAP. Pure data and lookups (no models).

A concept is one idea a prompt can ask for; its `words` are the regular expressions that name it
(the genres of lib/prompts/data/music_descriptions.txt, the instruments and moods of
music_slots.json, and the usual synonyms); `tags` and `classes` are the labels that hear it. A
concept with an `opposite` (acoustic/electronic, calm/energetic, happy/sad, slow/fast) can also be
judged by contrast: how much more the clip sounds like it than like its opposite, which cancels a
tagger's liking for one label over all music.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Concept:
    name: str
    words: str  # a regular expression (whole words, case-insensitive)
    tags: tuple[str, ...] = ()  # musicnn labels, "mtt:..." or "msd:..."
    classes: tuple[str, ...] = ()  # YAMNet (AudioSet) display names
    opposite: str = ""


def _c(name, words, tags="", classes="", opposite=""):
    """A concept from `|`-separated strings (shorter to read than tuples)."""
    split = lambda text: tuple(part for part in text.split("|") if part)  # noqa: E731
    return Concept(name, words, split(tags), split(classes), opposite)


CONCEPTS = (
    # timbre, mood and tempo: the words that have opposites
    _c(
        "acoustic",
        r"acoustic|unplugged",
        "msd:acoustic|msd:folk",
        "Acoustic guitar|Piano|Bowed string instrument",
        "electronic",
    ),
    _c(
        "electronic",
        r"electronic|electronica|edm|synthwave|synth[- ]?pop|chiptune",
        "msd:electronic|mtt:electronic|mtt:techno|mtt:synth|msd:electronica|msd:electro",
        "Electronic music|Synthesizer|Electronica|Electronic dance music",
        "acoustic",
    ),
    _c(
        "calm",
        r"calm|peaceful|relaxed|relaxing|gentle|serene|soothing|chill|mellow|soft|quiet|meditative|sleepy|still",
        "mtt:soft|mtt:quiet|msd:chillout|msd:Mellow|msd:chill|msd:easy listening",
        "Tender music|Ambient music|New-age music",
        "energetic",
    ),
    _c(
        "energetic",
        r"energetic|upbeat|driving|intense|powerful|exciting|triumphant|party|aggressive",
        "mtt:loud|mtt:fast|msd:party|msd:dance",
        "Exciting music|Dance music",
        "calm",
    ),
    _c(
        "tender",
        r"tender|romantic|warm|intimate|loving",
        "msd:Mellow|msd:beautiful|mtt:soft",
        "Tender music",
        "energetic",
    ),
    _c(
        "happy",
        r"happy|joyful|cheerful|uplifting|playful|hopeful|bright|sunny",
        "msd:happy|msd:catchy",
        "Happy music",
        "sad",
    ),
    _c(
        "sad",
        r"sad|melancholic|melancholy|nostalgic|wistful|bittersweet|somber|sombre|lonely|moody|brooding",
        "msd:sad|msd:Mellow",
        "Sad music",
        "happy",
    ),
    _c("dark", r"dark|tense|eerie|mysterious|ominous|horror|scary|haunting", "mtt:weird", "Scary music"),
    _c(
        "distorted",
        r"gritty|distorted|raw|heavy",
        "mtt:rock|mtt:metal|msd:hard rock",
        "Rock music|Heavy metal|Distortion",
    ),
    _c("dreamy", r"dreamy|floating|ethereal|hazy", "mtt:ambient|msd:chillout|msd:ambient", "Ambient music"),
    _c("slow", r"slow|ballad|largo", "mtt:slow", "", "fast"),
    _c("fast", r"fast|very fast|frantic|rapid", "mtt:fast", "", "slow"),
    # genres
    _c("ambient", r"ambient|drone|soundscape", "mtt:ambient|msd:ambient|msd:chillout", "Ambient music"),
    _c("hip hop", r"hip[- ]?hop|lo-?fi|trap|boom bap", "msd:Hip-Hop", "Hip hop music"),
    _c("jazz", r"jazz|bebop|swing", "msd:jazz", "Jazz|Swing music"),
    _c("classical", r"classical|baroque|waltz|chamber|symphon\w*", "mtt:classical|mtt:classic", "Classical music"),
    _c(
        "orchestral",
        r"orchestral|orchestra|cinematic|epic|film score|soundtrack",
        "mtt:strings|mtt:classical",
        "Orchestra|Soundtrack music",
    ),
    _c("folk", r"folk|celtic|bluegrass", "msd:folk|msd:acoustic", "Folk music|Traditional music|Bluegrass"),
    _c(
        "rock",
        r"rock|shoegaze|grunge|punk",
        "mtt:rock|msd:rock|msd:alternative|msd:indie rock",
        "Rock music|Punk rock|Grunge",
    ),
    _c("metal", r"metal|industrial", "mtt:metal|msd:metal|msd:heavy metal|msd:hard rock", "Heavy metal"),
    _c("blues", r"blues", "msd:blues", "Blues"),
    _c("funk", r"funk|funky|disco", "msd:funk|msd:dance", "Funk|Disco"),
    _c(
        "house",
        r"house|techno|trance|dubstep|drum and bass|dnb",
        "mtt:techno|mtt:dance|msd:House|msd:dance",
        "House music|Techno|Trance music|Dubstep|Drum and bass",
    ),
    _c("soul", r"soul|r&b|rnb|gospel", "msd:soul|msd:rnb", "Soul music|Rhythm and blues|Gospel music"),
    _c("reggae", r"reggae|dub|ska", "", "Reggae|Ska"),
    _c("latin", r"latin|salsa|samba|flamenco|bossa nova|tango", "", "Music of Latin America|Salsa music|Flamenco"),
    _c("african", r"afrobeat|highlife|african", "", "Afrobeat|Music of Africa"),
    _c(
        "world",
        r"world music|traditional|indian|middle eastern",
        "mtt:indian",
        "Traditional music|Music of Asia|Middle Eastern music",
    ),
    _c("lounge", r"lounge|easy listening|elevator", "msd:easy listening|msd:chillout", "Background music|Jazz"),
    _c("chiptune", r"chiptune|8-bit|video game", "mtt:electronic", "Video game music"),
    _c("country", r"country|americana", "mtt:country|msd:country", "Country"),
    _c("pop", r"pop", "mtt:pop|msd:pop", "Pop music"),
    _c("new age", r"new age|new-age|meditation", "mtt:new age", "New-age music"),
    _c("children", r"children's|lullaby|nursery", "", "Music for children|Lullaby"),
    # instruments
    _c("piano", r"piano|keys|rhodes|keyboard", "mtt:piano", "Piano|Electric piano"),
    _c("guitar", r"guitars?", "mtt:guitar|msd:guitar", "Guitar|Acoustic guitar|Electric guitar"),
    _c(
        "strings",
        r"strings|string section|violins?|cellos?|viola|fiddle",
        "mtt:strings|mtt:violin|mtt:cello",
        "Bowed string instrument|String section|Violin, fiddle|Cello",
    ),
    _c("drums", r"drums?|percussion|beat", "mtt:drums|mtt:beat|mtt:beats", "Drum kit|Drum|Percussion|Drum machine"),
    _c("synth", r"synths?|synthesi[sz]er|pads?|arpeggi\w*", "mtt:synth|mtt:electronic", "Synthesizer"),
    _c("flute", r"flutes?|woodwinds?", "mtt:flute", "Flute|Wind instrument, woodwind instrument"),
    _c("harp", r"harp", "mtt:harp", "Harp"),
    _c(
        "brass",
        r"trumpets?|horns?|trombone|brass|tuba|marching band",
        "",
        "Brass instrument|Trumpet|French horn|Trombone",
    ),
    _c("saxophone", r"sax|saxophone", "msd:jazz", "Saxophone"),
    _c("clarinet", r"clarinet|oboe", "", "Clarinet|Wind instrument, woodwind instrument"),
    _c(
        "mallets",
        r"marimba|xylophone|vibraphone|glockenspiel|celesta|music box|bells|chimes",
        "",
        "Mallet percussion|Marimba, xylophone|Vibraphone|Glockenspiel|Bell|Chime",
    ),
    _c(
        "plucked",
        r"banjo|mandolin|ukulele|sitar|harp|kalimba",
        "mtt:sitar",
        "Plucked string instrument|Banjo|Mandolin|Ukulele|Sitar",
    ),
    _c("organ", r"organ|hammond", "", "Organ|Hammond organ|Electronic organ"),
    _c("accordion", r"accordion|harmonica", "", "Accordion|Harmonica"),
    _c("harpsichord", r"harpsichord", "mtt:harpsichord", "Harpsichord"),
    _c("choir", r"choir|choral|chant", "mtt:choir|mtt:choral", "Choir"),
    _c("vocals", r"vocals?|singing|singer|voice", "mtt:vocal|mtt:vocals|mtt:singing|mtt:voice", "Singing|Vocal music"),
    _c("instrumental", r"instrumental|no vocals", "mtt:no vocals|mtt:no vocal|mtt:no voice|msd:instrumental", ""),
)
BY_NAME = {concept.name: concept for concept in CONCEPTS}
_PATTERNS = [(concept, re.compile(rf"\b(?:{concept.words})\b", re.IGNORECASE)) for concept in CONCEPTS]
_NEGATED = re.compile(r"\bno (?:vocals?|voice|singing)\b", re.IGNORECASE)


def concepts_in(text: str) -> list[Concept]:
    """The concepts a prompt names, in vocabulary order ("no vocals" asks for instrumental, not vocals)."""
    plain = _NEGATED.sub(" instrumental ", text)
    return [concept for concept, pattern in _PATTERNS if pattern.search(plain)]


def support(concept: Concept, scores: Mapping[str, float]) -> float | None:
    """How strongly the labels that hear `concept` fire (their max, 0..1); None when none was scored."""
    heard = [scores[label] for label in (*concept.tags, *concept.classes) if label in scores]
    return max(heard) if heard else None


def contrast(concept: Concept, scores: Mapping[str, float]) -> float | None:
    """0..1: 0.5 + half of (support of the concept - support of its opposite); plain support for a
    concept without one; None when neither was scored."""
    own = support(concept, scores)
    other = support(BY_NAME[concept.opposite], scores) if concept.opposite else None
    if own is None or other is None:
        return own
    return 0.5 + 0.5 * (own - other)


def adherence(text: str, scores: Mapping[str, float], *, by_contrast: bool = True) -> float | None:
    """Mean over the prompt's concepts of `contrast` (or plain `support`); None when the prompt names
    no concept the scores can hear."""
    judge = contrast if by_contrast else support
    values = [v for v in (judge(c, scores) for c in concepts_in(text)) if v is not None]
    return sum(values) / len(values) if values else None
