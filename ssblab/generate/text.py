"""Readable pseudo-text for generated posts: syllable words under Zipf's law, with accents and emoji.

Strategy: a vocabulary is built once from the generator's rng (syllable words, the shorter ones ranked more
frequent, as in natural languages) and words are drawn by the Zipf-Mandelbrot law 1/(rank + 2.7). A few
words carry accented letters, a few are in other scripts, and some sentences end with an emoji (several
outside the Basic Multilingual Plane, i.e. UTF-16 surrogate pairs): any non-ASCII character makes SSB
hash the message's id over the low byte of each UTF-16 unit (the ``latin1`` quirk), so generated data
exercises it.

Sizes follow ssb-fixtures (lorem-ipsum with 4-16 words per sentence, 4-8 sentences per paragraph), capped by
a byte budget so that a message never passes the 8192-unit limit, boxed or not.
"""

from __future__ import annotations

import random
from operator import itemgetter

__all__ = ["ACCENT_SHARE", "EMOJI", "EMOJI_SHARE", "VOCABULARY_SIZE", "TextSource"]

VOCABULARY_SIZE = 3000
_TABLE_BITS = 16  # words are drawn from a 65,536-slot table where rank r fills a share ∝ 1/(r + 2.7)
_ZIPF_SHIFT = 2.7  # Mandelbrot's fit for English: the commonest word near 4%, not Zipf's 12% for 3,000 words
_ONSETS = ("b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z",
           "br", "ch", "cr", "dr", "fl", "gr", "pl", "sh", "st", "th", "tr", "")
_VOWELS = ("a", "e", "i", "o", "u", "a", "e", "o", "ai", "ea", "ou", "io")
_CODAS = ("", "", "", "n", "r", "s", "l", "t", "m", "nd", "st")
_ACCENTED = {"a": "áàâä", "e": "éèêë", "i": "íï", "o": "óôöø", "u": "úüû", "n": "ñ", "c": "ç", "s": "ß"}
_FOREIGN = ("ありがとう", "спасибо", "γεια", "شكرا", "안녕", "谢谢", "naïve", "café", "Zoë", "smörgåsbord")
EMOJI = ("🌱", "✨", "🐚", "⛵", "☕", "😀", "🎉", "🦀", "🚀", "❤️", "🙏", "🌊", "👍", "☀")
ACCENT_SHARE = 0.06
EMOJI_SHARE = 0.12


def _word(rng: random.Random) -> str:
    syllables = rng.choice((1, 1, 2, 2, 2, 3, 3, 4))
    word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS) for _ in range(syllables))
    return word if len(word) > 1 else word + rng.choice("nrst")


def _accent(rng: random.Random, word: str) -> str:
    places = [i for i, ch in enumerate(word) if ch in _ACCENTED]
    if not places:
        return word
    at = rng.choice(places)
    return word[:at] + rng.choice(_ACCENTED[word[at]]) + word[at + 1 :]


def _zipf_table(vocabulary: tuple[str, ...]) -> tuple[str, ...]:
    """Each word once, plus slots in proportion to its weight (largest remainders): 2**16 slots in all."""
    slots = 1 << _TABLE_BITS
    weights = [1 / (rank + _ZIPF_SHIFT) for rank in range(1, len(vocabulary) + 1)]
    spare = slots - len(vocabulary)
    total = sum(weights)
    shares = [spare * w / total for w in weights]
    counts = [1 + int(share) for share in shares]
    by_remainder = sorted(range(len(shares)), key=lambda i: int(shares[i]) - shares[i])
    for i in by_remainder[: slots - sum(counts)]:
        counts[i] += 1
    return tuple(word for word, n in zip(vocabulary, counts, strict=True) for _ in range(n))


class TextSource:
    """Words, sentences and paragraphs drawn from one seeded vocabulary (the rng is passed to every call)."""

    def __init__(self, rng: random.Random, size: int = VOCABULARY_SIZE) -> None:
        words = sorted((_word(rng) for _ in range(size)), key=len)  # short words are the frequent ones
        words = [_accent(rng, w) if rng.random() < ACCENT_SHARE else w for w in words]
        for foreign in _FOREIGN:
            words[rng.randrange(size // 10, size)] = foreign
        self.vocabulary: tuple[str, ...] = tuple(words)
        self._table = _zipf_table(self.vocabulary)

    def words(self, rng: random.Random, count: int) -> list[str]:
        """``count`` words, from one draw of random bits (word choice is the hot loop of text generation)."""
        slots = memoryview(rng.getrandbits(_TABLE_BITS * count).to_bytes(2 * count, "little")).cast("H")
        return [self._table[slots[0]]] if count == 1 else list(itemgetter(*slots)(self._table))

    def phrase(self, rng: random.Random, low: int = 1, high: int = 3) -> str:
        """A few words: names, channel-like labels, short posts."""
        return " ".join(self.words(rng, rng.randint(low, high)))

    def name(self, rng: random.Random) -> str:
        """A person's display name: one to three capitalized words."""
        return " ".join(w[:1].upper() + w[1:] for w in self.words(rng, rng.randint(1, 3)))

    def sentence(self, rng: random.Random) -> str:
        words = self.words(rng, rng.randint(4, 16))
        words[0] = words[0][:1].upper() + words[0][1:]
        text = " ".join(words) + rng.choice(".....!?")
        return f"{text} {rng.choice(EMOJI)}" if rng.random() < EMOJI_SHARE else text

    def sentences(self, rng: random.Random, count: int) -> str:
        return " ".join(self.sentence(rng) for _ in range(count))

    def paragraphs(self, rng: random.Random, count: int, budget: int) -> str:
        """``count`` paragraphs of 4-8 sentences, stopping before the UTF-8 size would pass ``budget``.

        The first paragraph is always kept: at most 8 sentences of 16 words of 4 syllables, under 3,500 bytes,
        which every caller's budget exceeds.
        """
        out: list[str] = []
        used = 0
        for _ in range(count):
            paragraph = self.sentences(rng, rng.randint(4, 8))
            used += len(paragraph.encode()) + 2
            if out and used > budget:
                break
            out.append(paragraph)
        return "\n\n".join(out)

    def post_text(self, rng: random.Random, size: str, budget: int) -> str:
        """A post's text of size ``short``, ``medium`` or ``long`` (see frequencies.POST_SIZES)."""
        count = rng.randint(1, 5)
        if size == "short":
            return " ".join(self.words(rng, count))
        if size == "medium":
            return self.sentences(rng, count)
        return self.paragraphs(rng, count, budget)
